// KernelId: the one function that builds it from descriptors, its hash, equality and text.
#include "kiln/kernel_id.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "common/hash.h"
#include "common/key.h"
#include "kiln/error.h"
#include "kiln/kernel_ref.h"

namespace kiln {

namespace {

const char* kind_noun(ParamKind k) {
  switch (k) {
    case ParamKind::Buffer: return "a buffer";
    case ParamKind::Tensor: return "a tensor";
    case ParamKind::Scalar: return "a scalar";
    case ParamKind::Comptime: return "a comptime value";
  }
  return "?";
}

std::string element_text(ir::Scalar s, int width) { return ir::to_string(ir::Type::vector_of(s, width)); }

// A descriptor that disagrees with its parameter: a caller that describes a launch itself (a tool,
// a test) made a mistake the runtime's argument checks would have reported about the argument.
void check_desc(const KernelSignature& sig, const LaunchFacts& facts, size_t i, const ParamDesc& d) {
  const ParamSpec& s = sig.params[i];
  if (d.kind != s.kind) {
    throw Error("launch.kind_mismatch", argument_head(sig, i) + "described as " + kind_noun(d.kind) +
                                            ", the parameter is " + kind_noun(s.kind));
  }
  if (s.kind == ParamKind::Comptime) return;
  int width = s.kind == ParamKind::Scalar ? 1 : s.vector ? facts.vector_width : s.width;
  if (d.element != s.element || d.width != width || (s.rank && d.rank != s.rank)) {
    std::string given = element_text(d.element, d.width), wanted = element_text(s.element, width);
    if (s.rank) {
      given += ", rank " + std::to_string(d.rank);
      wanted += ", rank " + std::to_string(s.rank);
    }
    throw Error("launch.type_mismatch",
                argument_head(sig, i) + "described as " + given + ", the parameter takes " + wanted);
  }
}

}  // namespace

std::string describe_param(const KernelSignature& sig, size_t i) {
  const ParamSpec& p = sig.params[i];
  std::string name = p.name + ": ";
  if (sig.program) {
    ir::Access access = p.read_only ? ir::Access::ReadOnly : ir::Access::ReadWrite;
    ir::Type element = ir::Type::vector_of(p.element, p.width);
    switch (p.kind) {
      case ParamKind::Buffer: return name + ir::to_string(ir::Type::buffer(element, access));
      case ParamKind::Tensor: return name + ir::to_string(ir::Type::tensor(element, p.rank, access));
      default: return name + ir::to_string(element);
    }
  }
  std::string elem(ir::scalar_name(p.element));
  if (p.vector) elem = "Vector<" + elem + ">";
  switch (p.kind) {
    case ParamKind::Buffer: return name + "Slice<" + (p.read_only ? "const " : "") + elem + ">";
    case ParamKind::Tensor: return name + "TensorArg<" + (p.read_only ? "const " : "") + elem + ">";
    case ParamKind::Scalar: return name + "Scalar<" + elem + ">";
    case ParamKind::Comptime:
      if (p.enum_type) return name + "Comptime<enum>";
      if (p.integer_bits) return name + "Comptime<" + std::to_string(p.integer_bits) + "-bit integer>";
      return name + "Comptime<" + elem + ">";
  }
  return name;
}

std::string argument_head(const KernelSignature& sig, size_t i) {
  return "kernel '" + std::string(sig.name) + "', argument " + std::to_string(i) + " (" + describe_param(sig, i) +
         "): ";
}

void throw_arity(const KernelSignature& sig, size_t given) {
  std::string list;
  for (size_t i = 0; i < sig.count; ++i) list += (i ? ", " : "") + describe_param(sig, i);
  throw Error("launch.arity", "kernel '" + std::string(sig.name) + "' takes " + std::to_string(sig.count) +
                                  (sig.count == 1 ? " argument" : " arguments") + " (" + list + "), " +
                                  std::to_string(given) + (given == 1 ? " was" : " were") + " given");
}

KernelId make_kernel_id(const KernelSignature& sig, const LaunchFacts& facts, std::span<const ParamDesc> params) {
  if (params.size() != sig.count) throw_arity(sig, params.size());
  for (size_t i = 0; i < params.size(); ++i) check_desc(sig, facts, i, params[i]);
  return assemble_kernel_id(sig, facts, params);
}

KernelId assemble_kernel_id(const KernelSignature& sig, const LaunchFacts& facts, std::span<const ParamDesc> params) {
  if (params.size() != sig.count) throw_arity(sig, params.size());
  KernelId id;  // returned in place (the launch path's caller gets it without a copy)
  id.type = sig.type;
  id.program = sig.program;
  id.kernel_hash = sig.kernel_hash;
  id.name = sig.name;
  id.cube_dim = facts.cube_dim;
  id.mode = facts.mode;
  id.address = facts.address;
  id.vector_width = facts.vector_width;
  id.fast_math = sig.fast_math;
  id.cubes_per_processor = sig.cubes_per_processor;
  for (size_t i = 0; i < params.size(); ++i) {
    const ParamDesc& d = params[i];
    if (d.kind == ParamKind::Comptime) {
      id.comptime[id.comptime_count++] = d.comptime;
      continue;
    }
    size_t p = size_t(sig.params[i].ir_index);
    id.element[p] = d.element;
    id.width[p] = d.width;
    id.rank[p] = d.kind == ParamKind::Tensor ? d.rank : 0;
    // Arguments that share memory are part of the id (a backend may only assume that buffers the
    // id does not name overlap nothing): each overlapping parameter records the lowest other one.
    // Kernel parameters number the non-comptime descriptors in order, so the first overlap found
    // in signature order is the lowest.
    if (!d.memory) continue;
    for (size_t j = 0; j < params.size(); ++j) {
      const ParamDesc& o = params[j];
      if (j == i || o.kind == ParamKind::Comptime || o.memory != d.memory) continue;
      if (std::max(d.begin, o.begin) < std::min(d.end, o.end)) {
        id.alias[p] = uint8_t(sig.params[j].ir_index + 1);
        break;
      }
    }
  }
  id.param_count = sig.ir_count;
  id.finalize();
  return id;
}

std::vector<ParamDesc> default_descs(const KernelSignature& sig, int vector_width) {
  std::vector<ParamDesc> out(sig.count);
  for (size_t i = 0; i < sig.count; ++i) {
    const ParamSpec& s = sig.params[i];
    ParamDesc& d = out[i];
    d.kind = s.kind;
    if (s.kind == ParamKind::Comptime) continue;
    d.element = s.element;
    d.width = uint8_t(s.kind == ParamKind::Scalar ? 1 : s.vector ? vector_width : s.width);
    d.rank = s.rank;
  }
  return out;
}

ir::KernelFacts kernel_facts(const KernelId& id) {
  ir::KernelFacts f;
  f.cube_dim = id.cube_dim;
  f.mode = id.mode;
  f.address = id.address;
  f.vector_width = id.vector_width;
  f.fast_math = id.fast_math;
  f.cubes_per_processor = id.cubes_per_processor;
  for (size_t p = 0; p < id.param_count; ++p) {
    if (id.alias[p]) {
      f.alias.assign(id.alias.begin(), id.alias.begin() + id.param_count);
      break;
    }
  }
  return f;
}

void KernelId::finalize() {
  // This runs on every launch: KeyHash takes each field word by word. The name is not hashed (the
  // kernel hash decides it).
  common::KeyHash h;
#define KILN_X(type, field, init) h(#field, field);
  KILN_KERNEL_ID_FIELDS(KILN_X)
#undef KILN_X
  hash = h.done();
}

namespace {
// A field whose bytes are its value by its bytes, eight at a time at sizes the compiler knows
// (std::array's == walks elements, and memcmp is a call); another by its ==.
template <size_t N>
bool same_bytes(const unsigned char* a, const unsigned char* b) {
  if constexpr (N >= 8) {
    uint64_t x, y;
    std::memcpy(&x, a, 8);
    std::memcpy(&y, b, 8);
    return x == y && same_bytes<N - 8>(a + 8, b + 8);
  } else if constexpr (N > 0) {
    uint64_t x = 0, y = 0;
    std::memcpy(&x, a, N);
    std::memcpy(&y, b, N);
    return x == y;
  }
  return true;
}
template <class T>
bool same_field(const T& a, const T& b) {
  if constexpr (std::has_unique_object_representations_v<T>) {
    return same_bytes<sizeof(T)>(reinterpret_cast<const unsigned char*>(&a),
                                 reinterpret_cast<const unsigned char*>(&b));
  } else {
    return a == b;
  }
}
}  // namespace

bool KernelId::operator==(const KernelId& o) const {
  // On every launch (the cache lookup): the hash first, then the fields, then what the kernel is.
  if (hash != o.hash) return false;
#define KILN_X(type, field, init) \
  if (!same_field(field, o.field)) return false;
  KILN_KERNEL_ID_FIELDS(KILN_X)
#undef KILN_X
  if (type != o.type && !(type && o.type && *type == *o.type)) return false;
  // Programs made apart with equal text are one kernel; the content hash alone could collide.
  if (program != o.program && !(program && o.program && program->text() == o.program->text())) return false;
  // A kernel type or a program text decides the name; ids made without either compare it.
  return type || program || name == o.name;
}

std::string ComptimeBits::to_string() const {
  if (type == ir::Scalar::Bool) return bits ? "true" : "false";
  if (type == ir::Scalar::F64) return std::to_string(comptime_value<double>(*this));
  if (type == ir::Scalar::U64) return std::to_string(bits);
  return std::to_string(static_cast<int64_t>(bits));
}

std::string KernelId::to_string() const {
  // Every field; a per-parameter array up to its last entry that is set (none: left out), hashes
  // in hex.
  common::KeyText t(name);
  const KernelId initial;
  auto field_text = [&](const char* field, const auto& v, const auto& init) {
    using F = std::remove_cvref_t<decltype(v)>;
    if constexpr (common::is_sequence<F>::value) {
      size_t n = v.size();
      while (n > 0 && v[n - 1] == init[n - 1]) --n;
      if (n > 0) t(field, std::span<const typename F::value_type>(v.data(), n));
    } else if constexpr (std::is_same_v<F, uint64_t>) {
      t(field, common::hex16(v));
    } else {
      t(field, v);
    }
  };
#define KILN_X(type, field, init) field_text(#field, field, initial.field);
  KILN_KERNEL_ID_FIELDS(KILN_X)
#undef KILN_X
  t("hash", common::hex16(hash));
  return t.text();
}

}  // namespace kiln
