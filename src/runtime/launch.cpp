// The run-time launch entry: every launch (launch<K>, kernels picked at run time, recorded
// programs) checks and binds its arguments here, builds its KernelId, finds or compiles the kernel
// in the device's cache and hands it to the backend.
#include "kiln/runtime/launch.h"

#include <cstring>
#include <new>
#include <string>

#include "common/log.h"
#include "kiln/error.h"
#include "runtime/client_state.h"
#include "runtime/launch_binding.h"
#include "runtime/scalar_convert.h"

namespace kiln {

namespace runtime {

namespace {

std::string dims_text(uint32_t x, uint32_t y, uint32_t z) {
  return "(" + std::to_string(x) + ", " + std::to_string(y) + ", " + std::to_string(z) + ")";
}

[[noreturn]] void bad_argument(const KernelSignature& sig, size_t i, const std::string& what) {
  throw Error("launch.bad_argument", argument_head(sig, i) + what);
}

std::string given_name(const Arg& a) {
  switch (a.kind()) {
    case Arg::Kind::Buffer: return "a Handle";
    case Arg::Kind::Tensor: return "a TensorBinding";
    case Arg::Kind::Scalar: return "a " + std::string(ir::scalar_name(a.value().type)) + " value";
    case Arg::Kind::Comptime: return "a comptime value";
  }
  return "an argument";
}

// What launch<K> refuses at compile time (decision 006): an argument of another kind.
[[noreturn]] void kind_mismatch(const KernelSignature& sig, size_t i, const Arg& a) {
  static constexpr const char* kTakes[] = {"a Handle", "a TensorBinding", "a number or a ScalarValue",
                                           "comptime(value) or Arg::comptime_value"};
  throw Error("launch.kind_mismatch", argument_head(sig, i) + given_name(a) + " was given; the parameter takes " +
                                          kTakes[size_t(sig.params[i].kind)]);
}

[[noreturn]] void type_mismatch(const KernelSignature& sig, size_t i, std::optional<ir::Scalar> held) {
  ir::Scalar wanted = sig.params[i].element;
  std::string want(cpp_element_name(wanted));
  if (!held) {
    throw Error("launch.type_mismatch",
                argument_head(sig, i) +
                    "the handle holds raw bytes (made by empty_bytes, upload_bytes, or an upload of a type " +
                    "that is no element type, such as char or a struct), the parameter takes " +
                    std::string(ir::scalar_name(wanted)) + "; make it with empty<" + want + ">(n) or upload a " +
                    "std::vector<" + want + ">, or view the bytes with handle.view_as<" + want + ">()");
  }
  throw Error("launch.type_mismatch",
              argument_head(sig, i) + "the handle holds " + std::string(ir::scalar_name(*held)) +
                  " elements, the parameter takes " + std::string(ir::scalar_name(wanted)) + "; pass " +
                  std::string(ir::scalar_name(wanted)) +
                  " data, or reinterpret the bytes explicitly with handle.view_as<" + want + ">()");
}

constexpr ParamKind kind_of(Arg::Kind k) {
  switch (k) {
    case Arg::Kind::Buffer: return ParamKind::Buffer;
    case Arg::Kind::Tensor: return ParamKind::Tensor;
    case Arg::Kind::Scalar: return ParamKind::Scalar;
    case Arg::Kind::Comptime: return ParamKind::Comptime;
  }
  return ParamKind::Scalar;
}

// A buffer or tensor argument: its handle checked against the parameter, bound, and described.
void bind_memory(const KernelSignature& sig, size_t i, const Arg& a, int vector_size, backend::ArgBinding& b,
                 ParamDesc& d) {
  const ParamSpec& s = sig.params[i];
  const Handle* handle = nullptr;
  if (s.kind == ParamKind::Buffer) {
    handle = a.handle();
    b.kind = backend::ArgBinding::Kind::Buffer;
  } else {
    const TensorBinding& t = *a.tensor();
    if (t.rank > 8) bad_argument(sig, i, "its rank " + std::to_string(t.rank) + " is over 8");
    if (s.rank && t.rank != s.rank) {
      bad_argument(
          sig, i,
          "its rank " + std::to_string(t.rank) + " differs from the parameter's rank " + std::to_string(s.rank));
    }
    handle = &t.handle;
    b.kind = backend::ArgBinding::Kind::Tensor;
    b.rank = t.rank;
    b.shape = t.shape;
    b.stride = t.stride;
    d.rank = t.rank;
  }
  if (!handle->valid()) {
    throw Error("handle.invalid", argument_head(sig, i) + "the handle is empty (default-constructed)");
  }
  if (handle->element() != s.element) type_mismatch(sig, i, handle->element());
  const int width = s.vector ? vector_size : s.width;
  const size_t elem = size_t(ir::scalar_bytes(s.element)) * size_t(width);
  const size_t bytes = handle->size_in_used();
  if (bytes % elem != 0) {
    std::string why = s.vector    ? "; the vector width " + std::to_string(vector_size) + " must divide its length"
                      : width > 1 ? "; the parameter's elements have " + std::to_string(width) + " lanes"
                                  : std::string();
    bad_argument(sig, i,
                 "its handle shows " + std::to_string(bytes) + " bytes, which is not a whole number of " +
                     std::to_string(elem) + "-byte elements" + why);
  }
  if (bytes / elem > 0xffffffffull)
    bad_argument(sig, i, "it has more than 2^32 - 1 elements, more than u32 indexing reaches");
  // Every element is accessed whole (a vector in one 16-byte load on GPUs): the view must start
  // on an element boundary, on every device, so that a kernel that runs on the CPU runs on a GPU.
  if (handle->address() % elem != 0) {
    bad_argument(sig, i,
                 "its view starts " + std::to_string(handle->offset()) + " bytes into its memory, not on a " +
                     std::to_string(elem) + "-byte element boundary; offset views by whole elements");
  }
  b.address = handle->address();
  b.bytes = bytes;
  b.len = uint32_t(bytes / elem);
  d.element = s.element;
  d.width = uint8_t(width);
  d.memory = handle->memory_id();
  d.begin = handle->offset();
  d.end = handle->offset() + bytes;
}

void bind_comptime(const KernelSignature& sig, size_t i, const Arg& a, ParamDesc& d) {
  const ParamSpec& s = sig.params[i];
  if (s.enum_type || a.enum_type()) {
    if (!s.enum_type || !a.enum_type() || *s.enum_type != *a.enum_type()) {
      bad_argument(sig, i,
                   std::string(a.enum_type() ? "a comptime value of an enum type" : "a comptime number") +
                       " was given; the parameter takes " +
                       (s.enum_type ? "a value of its own enum type" : "a number"));
    }
    d.comptime = comptime_bits_of(a.value());
    d.comptime.is_enum = true;
    return;
  }
  ScalarValue v;
  if (!convert_scalar(a.value(), s.element, v)) {
    bad_argument(sig, i, given_name(a) + " was given, and its value does not fit the parameter's type");
  }
  d.comptime = comptime_bits_of(v);
}

}  // namespace

KernelId bind_launch(const ClientState& st, const KernelRef& kernel, const LaunchConfig& config,
                     std::span<const Arg> args, Bindings& bound) {
  const KernelSignature& sig = kernel.signature();
  const int vector_size = config.vector_size;
  if (!ir::Target::valid_vector_width(int(vector_size))) {
    throw Error("launch.bad_argument", "kernel '" + std::string(sig.name) + "': vector size " +
                                           std::to_string(vector_size) + " is not one of " +
                                           ir::Target::vector_widths_text());
  }
  if (args.size() != sig.count) throw_arity(sig, args.size());
  // Made one by one, as the bindings are (launch_binding.h says why); one is 48 bytes, which GCC
  // clears with plain stores.
  alignas(ParamDesc) unsigned char desc_storage[sizeof(ParamDesc) * kMaxParams];
  ParamDesc* descs = std::launder(reinterpret_cast<ParamDesc*>(desc_storage));
  for (size_t i = 0; i < args.size(); ++i) {
    const ParamSpec& s = sig.params[i];
    const Arg& a = args[i];
    if (kind_of(a.kind()) != s.kind) kind_mismatch(sig, i, a);
    ParamDesc& d = *new (&descs[i]) ParamDesc{};
    d.kind = s.kind;
    if (s.kind == ParamKind::Comptime) {
      bind_comptime(sig, i, a, d);
      continue;
    }
    backend::ArgBinding& b = bound.make(size_t(s.ir_index));
    if (s.kind == ParamKind::Scalar) {
      b.kind = backend::ArgBinding::Kind::Scalar;
      d.element = s.element;
      if (a.value().type == s.element) {  // the common case, without the conversion's dispatch
        b.scalar = a.value().bits;
        continue;
      }
      ScalarValue v;
      if (!convert_scalar(a.value(), s.element, v)) {
        bad_argument(sig, i, given_name(a) + " was given, and it does not convert to the parameter's type");
      }
      b.scalar = v.bits;
    } else {
      bind_memory(sig, i, a, vector_size, b, d);
    }
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const Handle* h = args[i].kind() == Arg::Kind::Buffer   ? args[i].handle()
                      : args[i].kind() == Arg::Kind::Tensor ? &args[i].tensor()->handle
                                                            : nullptr;
    if (!h || h->allocation()->client_id == st.id) continue;
    throw Error("launch.foreign_handle",
                "kernel '" + std::string(sig.name) + "', argument " + std::to_string(i) +
                    ": the handle belongs to another client (client " + std::to_string(h->allocation()->client_id) +
                    "), this launch is on client " + std::to_string(st.id) + "; copy the data through the host");
  }
  const CubeDim& dim = config.dim;
  const CubeCount& count = config.count;
  const DeviceInfo& info = st.device->backend->info();
  uint64_t units = uint64_t(dim.x) * dim.y * dim.z;
  if (units == 0 || units > info.max_cube_units || dim.x > info.max_cube_dim[0] || dim.y > info.max_cube_dim[1] ||
      dim.z > info.max_cube_dim[2]) {
    throw Error("launch.bad_dims", "kernel '" + std::string(sig.name) + "': cube dim " +
                                       dims_text(dim.x, dim.y, dim.z) + " has " + std::to_string(units) + " units; " +
                                       st.device->name + " allows 1 to " + std::to_string(info.max_cube_units) +
                                       " units, at most " +
                                       dims_text(info.max_cube_dim[0], info.max_cube_dim[1], info.max_cube_dim[2]));
  }
  if (count.x > info.max_cube_count[0] || count.y > info.max_cube_count[1] || count.z > info.max_cube_count[2]) {
    throw Error("launch.bad_dims",
                "kernel '" + std::string(sig.name) + "': cube count " + dims_text(count.x, count.y, count.z) +
                    " is over " + st.device->name + "'s limit " +
                    dims_text(info.max_cube_count[0], info.max_cube_count[1], info.max_cube_count[2]));
  }
  LaunchFacts facts;
  facts.cube_dim = ir::Dim3{dim.x, dim.y, dim.z};
  facts.mode = config.mode;
  facts.vector_width = uint8_t(vector_size);
  return assemble_kernel_id(sig, facts, std::span<const ParamDesc>(descs, args.size()));
}

}  // namespace runtime

void launch(const Client& client, const KernelRef& kernel, const LaunchConfig& config, std::span<const Arg> args) {
  runtime::ClientState& st = *client.state();
  backend::Backend& backend = *st.device->backend;
  runtime::Bindings bound;
  const KernelId id = runtime::bind_launch(st, kernel, config, args, bound);
  runtime::CacheEntry& e = st.device->cache.get(id, kernel, backend);
  const CubeCount& count = config.count;
  if (uint64_t(count.x) * count.y * count.z == 0) return;  // nothing to run
  backend::LaunchDims d{ir::Dim3{count.x, count.y, count.z}, id.cube_dim};
  size_t n = id.param_count;
  if (e.error_site != 0) [[unlikely]] {
    // A kernel whose checks report on the device: the error word after its parameters, and the
    // site its report names (emit.h's ABI); the next read or sync checks the word.
    const Handle& word = client.device_error_word();
    backend::ArgBinding& b = bound.make(n++);
    b.kind = backend::ArgBinding::Kind::Buffer;
    b.address = word.address();
    b.bytes = word.size_in_used();
    b.len = uint32_t(b.bytes / 4);
    std::memcpy(b.scalar.data(), &e.error_site, sizeof e.error_site);
  }
  backend.launch(*e.exe, d, std::span<const backend::ArgBinding>(bound.data(), n), *st.stream);
  if (e.error_site != 0) [[unlikely]]
    client.expect_device_error();
  e.launches.fetch_add(1, std::memory_order_relaxed);
  if (common::log_enabled(common::LogChannel::Launch)) {
    const CubeDim& dim = config.dim;
    common::log(common::LogChannel::Launch, std::string(e.exe->entry_name()) + " on " + st.device->name + " count " +
                                                runtime::dims_text(count.x, count.y, count.z) + " dim " +
                                                runtime::dims_text(dim.x, dim.y, dim.z));
  }
}

}  // namespace kiln
