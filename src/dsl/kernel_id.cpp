// KernelId hashing, equality and text.
#include "kiln/kernel_id.h"

#include <cstdio>

namespace kiln {

namespace {
// 64-bit FNV-1a over the id's fields, mixed at the end: the id is small, so a simple hash is
// fast enough and distributes well after the final mix.
struct Hasher {
  uint64_t h = 1469598103934665603ull;
  void bytes(const void* p, size_t n) {
    auto* b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  }
  template <class T>
  void value(const T& v) {
    bytes(&v, sizeof v);
  }
  uint64_t done() const {
    uint64_t x = h;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
  }
};
}  // namespace

void KernelId::finalize() {
  Hasher h;
  h.value(type ? type->hash_code() : size_t{0});
  h.bytes(name.data(), name.size());
  h.value(cube_dim.x);
  h.value(cube_dim.y);
  h.value(cube_dim.z);
  h.value(mode);
  h.value(address);
  h.value(fast_math.contract);
  h.value(fast_math.approx);
  h.value(vector_width);
  h.value(param_count);
  h.bytes(element.data(), param_count * sizeof(element[0]));
  h.bytes(rank.data(), param_count);
  h.bytes(alias.data(), param_count);
  h.value(comptime_count);
  for (int i = 0; i < comptime_count; ++i) {
    h.value(comptime[static_cast<size_t>(i)].type);
    h.value(comptime[static_cast<size_t>(i)].bits);
  }
  hash = h.done();
}

bool KernelId::operator==(const KernelId& o) const {
  if (hash != o.hash) return false;
  bool same_type = type == o.type || (type && o.type && *type == *o.type);
  return same_type && name == o.name && cube_dim == o.cube_dim && mode == o.mode && address == o.address &&
         fast_math == o.fast_math && vector_width == o.vector_width && param_count == o.param_count && comptime_count == o.comptime_count &&
         element == o.element && rank == o.rank && alias == o.alias && comptime == o.comptime;
}

std::string ComptimeBits::to_string() const {
  if (type == ir::Scalar::Bool) return bits ? "true" : "false";
  if (type == ir::Scalar::F64) return std::to_string(comptime_value<double>(*this));
  if (type == ir::Scalar::U64) return std::to_string(bits);
  return std::to_string(static_cast<int64_t>(bits));
}

std::string KernelId::to_string() const {
  std::string s(name);
  s += "{mode=" + std::string(ir::to_string(mode)) + ", cube_dim=[" + std::to_string(cube_dim.x) + "," +
       std::to_string(cube_dim.y) + "," + std::to_string(cube_dim.z) + "], vector=" + std::to_string(vector_width) +
       ", address=" + std::string(ir::to_string(address));
  if (fast_math.any()) s += ", fast_math=[" + std::string(ir::to_string(fast_math)) + "]";
  for (int i = 0; i < comptime_count; ++i) s += ", comptime" + std::to_string(i) + "=" + comptime[size_t(i)].to_string();
  for (int i = 0; i < param_count; ++i) {
    if (alias[size_t(i)]) s += ", arg" + std::to_string(i) + " aliases arg" + std::to_string(alias[size_t(i)] - 1);
  }
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(hash));
  return s + ", hash=" + buf + "}";
}

}  // namespace kiln
