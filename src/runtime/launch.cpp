// The non-template half of a launch: ownership and aliasing of handles, dimension limits, the
// cache lookup (which compiles on a miss) and the backend launch.
#include <chrono>
#include <cstdio>

#include "kiln/error.h"
#include "kiln/runtime/launch.h"
#include "runtime/client_state.h"
#include "common/log.h"

namespace kiln {

namespace detail {

void bad_argument(std::string_view kernel, size_t index, const std::string& param, const std::string& what) {
  throw Error("launch.bad_argument", "kernel '" + std::string(kernel) + "', argument " + std::to_string(index) +
                                         " (" + param + "): " + what);
}

void type_mismatch(std::string_view kernel, size_t index, const std::string& param, std::optional<ir::Scalar> held,
                   ir::Scalar wanted) {
  std::string want(cpp_element_name(wanted));
  std::string head = "kernel '" + std::string(kernel) + "', argument " + std::to_string(index) + " (" + param + "): ";
  if (!held) {
    throw Error("launch.type_mismatch",
                head + "the handle holds raw bytes (made by empty(bytes), upload_bytes, or an upload of a type that is " +
                    "no element type, such as char or a struct), the parameter takes " +
                    std::string(ir::scalar_name(wanted)) + "; make it with empty<" + want + ">(n) or upload a " +
                    "std::vector<" + want + ">, or view the bytes with handle.view_as<" + want + ">()");
  }
  throw Error("launch.type_mismatch", head + "the handle holds " + std::string(ir::scalar_name(*held)) +
                                          " elements, the parameter takes " + std::string(ir::scalar_name(wanted)) +
                                          "; pass " + std::string(ir::scalar_name(wanted)) +
                                          " data, or reinterpret the bytes explicitly with handle.view_as<" + want +
                                          ">()");
}

}  // namespace detail

namespace runtime {

std::string describe_param(std::string_view name, int kind, bool read_only, bool vector, ir::Scalar s) {
  std::string elem = vector ? "Vector<" + std::string(ir::scalar_name(s)) + ">" : std::string(ir::scalar_name(s));
  switch (static_cast<ParamKind>(kind)) {
    case ParamKind::Buffer: return std::string(name) + ": Slice<" + (read_only ? "const " : "") + elem + ">";
    case ParamKind::Tensor: return std::string(name) + ": TensorArg<" + (read_only ? "const " : "") + elem + ">";
    case ParamKind::Scalar: return std::string(name) + ": Scalar<" + elem + ">";
    case ParamKind::Comptime: return std::string(name) + ": Comptime<" + elem + ">";
  }
  return std::string(name);
}

namespace {

std::string dims_text(uint32_t x, uint32_t y, uint32_t z) {
  return "(" + std::to_string(x) + ", " + std::to_string(y) + ", " + std::to_string(z) + ")";
}

}  // namespace

void submit(const Client& client, KernelId& id, ir::Kernel (*define)(const KernelId&), CubeCount count, CubeDim dim,
            std::span<backend::ArgBinding> args, std::span<const Handle* const> handles) {
  ClientState& st = *client.state();
  backend::Backend& backend = *st.device->backend;
  for (size_t i = 0; i < handles.size(); ++i) {
    const Handle* h = handles[i];
    if (!h) continue;
    const Allocation& a = *h->allocation();
    if (a.client_id != st.id) {
      throw Error("launch.foreign_handle",
                  "kernel '" + std::string(id.name) + "', argument " + std::to_string(i) +
                      ": the handle belongs to another client (client " + std::to_string(a.client_id) +
                      "), this launch is on client " + std::to_string(st.id) + "; copy the data through the host");
    }
    // Arguments that share memory are part of the id (a backend may only assume that buffers the
    // id does not name overlap nothing): each overlapping argument records the lowest other one.
    for (size_t j = 0; j < handles.size(); ++j) {
      const Handle* g = handles[j];
      if (j == i || !g || g->allocation() != h->allocation()) continue;
      size_t lo = std::max(g->offset(), h->offset());
      size_t hi = std::min(g->offset() + g->size_in_used(), h->offset() + h->size_in_used());
      if (lo < hi) {
        id.alias[i] = uint8_t(j + 1);
        break;
      }
    }
  }
  const DeviceInfo& info = backend.info();
  uint64_t units = uint64_t(dim.x) * dim.y * dim.z;
  if (units == 0 || units > info.max_cube_units || dim.x > info.max_cube_dim[0] || dim.y > info.max_cube_dim[1] ||
      dim.z > info.max_cube_dim[2]) {
    throw Error("launch.bad_dims", "kernel '" + std::string(id.name) + "': cube dim " + dims_text(dim.x, dim.y, dim.z) +
                                       " has " + std::to_string(units) + " units; " + st.device->name +
                                       " allows 1 to " + std::to_string(info.max_cube_units) + " units, at most " +
                                       dims_text(info.max_cube_dim[0], info.max_cube_dim[1], info.max_cube_dim[2]));
  }
  if (count.x > info.max_cube_count[0] || count.y > info.max_cube_count[1] || count.z > info.max_cube_count[2]) {
    throw Error("launch.bad_dims", "kernel '" + std::string(id.name) + "': cube count " +
                                       dims_text(count.x, count.y, count.z) + " is over " + st.device->name +
                                       "'s limit " +
                                       dims_text(info.max_cube_count[0], info.max_cube_count[1], info.max_cube_count[2]));
  }
  id.cube_dim = ir::Dim3{dim.x, dim.y, dim.z};
  id.finalize();
  // Backends index bindings by kernel parameter: drop the comptime arguments (in place).
  size_t kept = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].kind != backend::ArgBinding::Kind::Comptime) args[kept++] = args[i];
  }
  args = args.first(kept);
  CacheEntry& e = st.device->cache.get(id, define, backend);
  if (uint64_t(count.x) * count.y * count.z == 0) return;  // nothing to run
  backend::LaunchDims d{ir::Dim3{count.x, count.y, count.z}, id.cube_dim};
  backend.launch(*e.exe, d, args, *st.stream);
  e.launches.fetch_add(1, std::memory_order_relaxed);
  if (common::log_enabled(common::LogChannel::Launch)) {
    common::log(common::LogChannel::Launch, std::string(e.exe->entry_name()) + " on " + st.device->name + " count " +
                                dims_text(count.x, count.y, count.z) + " dim " + dims_text(dim.x, dim.y, dim.z));
  }
}

}  // namespace runtime

}  // namespace kiln
