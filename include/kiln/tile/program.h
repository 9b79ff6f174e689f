// trace(name, decls..., body): records a tile kernel once and answers the recorded program and an
// entry that launches it. The program is kiln IR with tile ops (render() prints it as cuda_tile
// text); launching lowers it (the tile passes, src/passes/tile) and runs it on the client's device like any
// kernel, through the run-time launch entry and the compile cache.
#pragma once

#include <array>
#include <concepts>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "kiln/kernel_ref.h"
#include "kiln/runtime/client.h"
#include "kiln/tile/param.h"

namespace kiln::tile {

// The grid: blocks along axes 0, 1, 2.
using Grid = std::array<uint32_t, 3>;

// A recorded tile kernel.
class Program {
 public:
  Program(std::string name, std::vector<ParamDecl> params, ir::Kernel kernel, std::optional<Grid> grid);

  const std::string& name() const { return name_; }
  const std::vector<ParamDecl>& params() const { return params_; }
  // The recorded IR, tile ops and all (before lower_tiles).
  const ir::Kernel& kernel() const { return compiled_->kernel(); }
  // The grid the Out cells give; none when no Out has cells that fix it (dyn_dim, or only Shared).
  const std::optional<Grid>& grid() const { return grid_; }
  // The units of one block on `target` (a launch's device: DeviceInfo::target), as the lowering
  // picks them from the tile shapes (decision 019), chosen when a launch compiles, not when the
  // kernel is recorded.
  // Found once a target (a launch asks on every call: the kernel is walked only the first time).
  uint32_t units_for(const ir::Target& target) const;
  const std::shared_ptr<const kiln::Program>& compiled() const { return compiled_; }
  // The cells of each view of a parameter (its own and its retiles'), which the launch checks
  // buffers against.
  struct View {
    std::vector<int64_t> extent, tile, along;
  };
  const std::vector<std::vector<View>>& views() const { return views_; }
  // Whether the kernel reads or writes at computed addresses (load, store, atomics, scatter): such accesses keep
  // checked mode's bounds; cell accesses need none.
  bool uses_addresses() const { return uses_addresses_; }

 private:
  void scan(const ir::Region& r);

  std::string name_;
  std::vector<ParamDecl> params_;
  std::optional<Grid> grid_;
  std::shared_ptr<const kiln::Program> compiled_;
  mutable std::mutex units_mutex_;
  mutable std::vector<std::pair<ir::Target, uint32_t>> units_;  // by target, as found
  std::vector<std::vector<View>> views_;
  bool uses_addresses_ = false;
};

// Launches a recorded program. The launch checks each buffer against its parameter before anything
// runs: the element type (launch.type_mismatch), a buffer shorter than its cells reach
// (launch.short_buffer), a grid that disagrees with the cells (launch.grid_mismatch), an Out that
// shares memory with another parameter (launch.out_shared), a base address off the 16-byte
// alignment the program assumes (launch.misaligned) and cells that reach past the 2^32 elements
// lowered code indexes (launch.too_large). A refused launch changes no buffer.
class Entry {
 public:
  explicit Entry(std::shared_ptr<const Program> p) : program_(std::move(p)) {}

  // With the grid of the Out cells.
  void launch(const Client& client, std::span<const Handle> buffers) const { launch(client, buffers, std::nullopt); }
  void launch(const Client& client, std::initializer_list<Handle> buffers) const {
    launch(client, std::span<const Handle>(buffers.begin(), buffers.size()), std::nullopt);
  }
  // With a grid: needed when no Out fixes it (dyn_dim extents, Shared outputs).
  void launch(const Client& client, std::span<const Handle> buffers, std::optional<Grid> grid) const;
  void launch(const Client& client, std::initializer_list<Handle> buffers, Grid grid) const {
    launch(client, std::span<const Handle>(buffers.begin(), buffers.size()), grid);
  }

  // Every launch check above, in launch's order, with launch's refusals; answers the grid the
  // launch runs on. Fake and check mode (tile/reference.h) run it before their references.
  Grid checked_grid(std::span<const Handle> buffers, std::optional<Grid> grid) const;

  const Program& program() const { return *program_; }

 private:
  std::shared_ptr<const Program> program_;
};

struct Traced {
  std::shared_ptr<const Program> program;
  Entry entry;
};

// A program's own choices, as a C++ kernel's K::fast_math and K::cubes_per_processor are
// (kiln/dsl/kernel.h): part of what it compiles to and of its id. trace(name, Options{...},
// decls..., body) takes them before the declarations.
struct Options {
  // The math a backend may compute faster than each op's exact rounding (fast_math.approx: exp,
  // exp2, log, division... through the hardware's approximations; contract: a multiply feeding an
  // add may fuse). Flash attention's softmax is the use: Triton's exp is the approximate one. The
  // CPU backend is exact always, so a test compares such a kernel within the approximations' error.
  ir::FastMath fast_math{};
  // At least this many of the program's blocks are meant to share a processor (0: the backend's
  // choice; CUDA gives it as __launch_bounds__' second argument). 0 to Target::kMaxCubesPerProcessor.
  int cubes_per_processor = 0;
};

namespace detail {
template <class A>
inline constexpr bool is_buffer = false;
template <Element U>
inline constexpr bool is_buffer<Buffer<U>> = true;

template <class... Args>
constexpr bool last_is_grid() {
  if constexpr (sizeof...(Args) == 0) {
    return false;
  } else {
    return std::is_same_v<std::tuple_element_t<sizeof...(Args) - 1, std::tuple<Args...>>, Grid>;
  }
}

// Instantiated only for a typed launch that cannot run; the template arguments say why.
template <size_t Parameters, size_t Buffers>
struct tile_launch_buffer_count {
  static_assert(Parameters == Buffers,
                "TypedEntry::launch: the number of buffers differs from the number of the kernel's parameters (the "
                "instantiation shown with this error gives both counts)");
  static constexpr bool ok = Parameters == Buffers;
};
template <size_t Argument, class Parameter, class Given>
struct tile_launch_buffer_type {
  static_assert(
      std::is_same_v<Parameter, Given>,
      "TypedEntry::launch: a buffer's element type differs from its parameter's (the instantiation shown with "
      "this error names the buffer's position, the Buffer<T> its parameter takes and the one given)");
  static constexpr bool ok = std::is_same_v<Parameter, Given>;
};
}  // namespace detail

// What a typed launch takes: Buffer<T>s, and a Grid last.
template <class A>
concept TypedLaunchArgument = detail::is_buffer<A> || std::is_same_v<A, Grid>;

// The entry of a kernel whose parameters hold Ts...: launch(client, buffers...) takes one
// Buffer<T> per parameter, of its element type, and a wrong type or count does not compile
// (tests/compile_fail/tile_typed_launch.cpp). It is an Entry: the untyped forms (handles as a
// list, checked at run time), check() and launch_reference() take it too. The launch checks that
// do not depend on types (sizes, the grid, alignment, aliasing) run as they always do.
template <Element... Ts>
class TypedEntry : public Entry {
 public:
  explicit TypedEntry(std::shared_ptr<const Program> p) : Entry(std::move(p)) {}

  using Entry::launch;

  // On the Out cells' grid, or with a Grid after the buffers: launch(client, x, out, Grid{4, 2, 1}).
  template <TypedLaunchArgument... Args>
  void launch(const Client& client, const Args&... args) const {
    constexpr size_t n = sizeof...(Args);
    constexpr bool with_grid = detail::last_is_grid<Args...>();
    constexpr bool count_ok = detail::tile_launch_buffer_count < sizeof...(Ts), with_grid ? n - 1 : n > ::ok;
    if constexpr (count_ok) {
      constexpr bool types_ok = []<size_t... I>(std::index_sequence<I...>) {
        return (detail::tile_launch_buffer_type<I, Buffer<Ts>, std::tuple_element_t<I, std::tuple<Args...>>>::ok &&
                ...);
      }
      (std::index_sequence_for<Ts...>{});
      if constexpr (types_ok) {
        auto all = std::tie(args...);
        auto handles = [&]<size_t... I>(std::index_sequence<I...>) {
          return std::array<Handle, sizeof...(Ts)>{static_cast<const Handle&>(std::get<I>(all))...};
        }
        (std::index_sequence_for<Ts...>{});
        std::optional<Grid> grid;
        if constexpr (with_grid) grid = std::get<n - 1>(all);
        Entry::launch(client, std::span<const Handle>(handles.data(), handles.size()), grid);
      }
    }
  }
};

// What trace() answers: the program and its typed entry. It converts to Traced (an Entry that
// takes handles), so `Traced t = trace(...)` keeps its untyped entry; `auto t = trace(...)` has the
// typed one.
template <Element... Ts>
struct TypedTraced {
  std::shared_ptr<const Program> program;
  TypedEntry<Ts...> entry;

  operator Traced() const { return Traced{program, entry}; }  // NOLINT: implicit on purpose
};

namespace detail {

// Opens a recording: makes the kernel's parameters and views, checks the cells against each other
// and the grid (Error{record.grid_mismatch}); close() checks and verifies the body's IR.
class TraceScope {
 public:
  TraceScope(std::string name, std::vector<ParamDecl> params, const Options& options = {});
  ~TraceScope();
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;
  ParamRef param(int i) const;
  Traced close();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

template <class Body, class... D, size_t... I>
TypedTraced<typename D::element_type...> trace_with(std::string name, const Options& options, Body&& body,
                                                    std::index_sequence<I...>, const D&... decls) {
  TraceScope scope(std::move(name), std::vector<ParamDecl>{static_cast<const ParamDecl&>(decls)...}, options);
  body(Param<typename D::element_type>(scope.param(int(I)))...);
  Traced t = scope.close();
  return {t.program, TypedEntry<typename D::element_type...>(t.program)};
}

template <class Tuple, size_t... I>
auto trace_split(std::string name, const Options& options, Tuple&& args, std::index_sequence<I...>) {
  constexpr size_t n = sizeof...(I);
  return trace_with(std::move(name), options, std::get<n>(args), std::make_index_sequence<n>{}, std::get<I>(args)...);
}

}  // namespace detail

// trace("vadd", In<double>(g), In<double>(g), Out<double>(g), vadd): the last argument is the body,
// called once with one Param<T> per declaration. The answer's entry is typed:
// t.entry.launch(client, a, b, out) takes Buffer<double>s (runtime/buffer.h). Options, when given,
// come first: trace("attention", Options{.fast_math = {.approx = true}}, In<bf16>(g), ..., body).
template <class First, class... Args>
auto trace(std::string name, First&& first, Args&&... args) {
  if constexpr (std::is_same_v<std::remove_cvref_t<First>, Options>) {
    static_assert(sizeof...(Args) >= 1, "trace(name, options, params..., body)");
    return detail::trace_split(std::move(name), first, std::forward_as_tuple(std::forward<Args>(args)...),
                               std::make_index_sequence<sizeof...(Args) - 1>{});
  } else {
    return detail::trace_split(std::move(name), Options{},
                               std::forward_as_tuple(std::forward<First>(first), std::forward<Args>(args)...),
                               std::make_index_sequence<sizeof...(Args)>{});
  }
}

// The recorded program as cuda_tile text (seed 04's form).
std::string render(const Program& p);

}  // namespace kiln::tile
