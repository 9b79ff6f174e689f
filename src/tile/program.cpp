// trace()'s scope, the recorded Program, and the Entry that checks buffers against the cells
// before it launches the program through the run-time launch entry.
#include "kiln/tile/program.h"

#include <algorithm>
#include <cstdint>

#include "kiln/passes/passes.h"
#include "kiln/runtime/launch.h"
#include "kiln/tile/reference.h"
#include "recording.h"

namespace kiln::tile {

std::string_view to_string(Role r) {
  switch (r) {
    case Role::In: return "In";
    case Role::Out: return "Out";
    case Role::Shared: return "Shared";
  }
  return "?";
}

namespace detail {

struct TraceScope::State {
  Recording recording;
  State(std::string name, std::vector<ParamDecl> params, const Options& options)
      : recording(std::move(name), std::move(params), options) {}
};

TraceScope::TraceScope(std::string name, std::vector<ParamDecl> params, const Options& options)
    : s_(std::make_unique<State>(std::move(name), std::move(params), options)) {}
TraceScope::~TraceScope() = default;

ParamRef TraceScope::param(int i) const {
  const ParamDecl& d = s_->recording.decl(i);
  // The first views are the parameters' own, in order, one per parameter with cells.
  int view = -1;
  if (d.cells) {
    view = 0;
    for (int j = 0; j < i; ++j) view += s_->recording.decl(j).cells ? 1 : 0;
  }
  return ParamRef{i, view};
}

Traced TraceScope::close() { return s_->recording.close(); }

}  // namespace detail

// What launches need from the recorded IR, found once: every view of each parameter (a retile
// may stand inside a loop) and whether any access is at a computed address.
void Program::scan(const ir::Region& r) {
  for (const ir::Op& op : r.ops) {
    const ir::Signature sig = op.info().signature;
    if (sig == ir::Signature::TileLoad || sig == ir::Signature::TileStore || sig == ir::Signature::TileScatter) {
      uses_addresses_ = true;
    }
    if (op.kind == ir::OpKind::TileView) {
      const ir::Kernel& k = compiled_->kernel();
      for (size_t i = 0; i < k.params.size(); ++i) {
        if (k.params[i].value != op.operand(ir::ops::Array::array)) continue;
        auto ints = [](std::span<const int64_t> s) { return std::vector<int64_t>(s.begin(), s.end()); };
        views_[i].push_back(View{ints(op.get<ir::AttrKey::Extent>()), ints(op.get<ir::AttrKey::Tile>()),
                                 ints(op.get<ir::AttrKey::Along>())});
      }
    }
    for (const ir::Region& inner : op.regions) scan(inner);
  }
}

Program::Program(std::string name, std::vector<ParamDecl> params, ir::Kernel kernel, std::optional<Grid> grid)
    : name_(std::move(name)), params_(std::move(params)), grid_(grid) {
  compiled_ = std::make_shared<const kiln::Program>(std::move(kernel));
  views_.resize(params_.size());
  scan(compiled_->kernel().body);
}

uint32_t Program::units_for(const ir::Target& target) const {
  std::lock_guard lock(units_mutex_);
  for (const auto& [t, units] : units_) {
    if (t == target) return units;
  }
  units_.emplace_back(target, passes::tile_units(compiled_->kernel(), target));
  return units_.back().second;
}

namespace {

[[noreturn]] void refuse(const Program& p, const std::string& kind, const std::string& what) {
  throw Error(kind, "kernel `" + p.name() + "`: " + what);
}

std::string argument(const Program& p, size_t i) {
  return "argument " + std::to_string(i) + " (" + std::string(to_string(p.params()[i].role)) + ")";
}

// The most elements a parameter's cells may reach: one past the largest u32 index.
constexpr uint64_t kMaxReach = uint64_t(1) << 32;

// The elements of parameter i that its views reach on `grid`: the largest row-major extent.
uint64_t reach(const Program& p, size_t i, const Grid& grid) {
  uint64_t most = 0;
  for (const Program::View& v : p.views()[i]) {
    uint64_t n = 1;
    for (size_t d = 0; d < v.extent.size(); ++d) {
      uint64_t f =
          v.extent[d] == dyn_dim ? uint64_t(grid[size_t(v.along[d])]) * uint64_t(v.tile[d]) : uint64_t(v.extent[d]);
      // Saturates: a reach past 2^64 is refused as too large, never wrapped into a small one.
      n = f != 0 && n > UINT64_MAX / f ? UINT64_MAX : n * f;
    }
    most = std::max(most, n);
  }
  return most;
}

}  // namespace

Grid Entry::checked_grid(std::span<const Handle> buffers, std::optional<Grid> grid) const {
  const Program& p = *program_;
  const auto& params = p.params();
  if (buffers.size() != params.size()) {
    refuse(p, "launch.arity",
           "takes " + std::to_string(params.size()) + " buffer(s), was given " + std::to_string(buffers.size()));
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const Handle& h = buffers[i];
    if (!h.valid()) refuse(p, "handle.invalid", argument(p, i) + " is an empty handle");
    if (!h.element() || *h.element() != params[i].element) {
      refuse(
          p, "launch.type_mismatch",
          argument(p, i) + " takes " + std::string(ir::scalar_name(params[i].element)) + " and the buffer holds " +
              (h.element() ? std::string(ir::scalar_name(*h.element())) : std::string("raw bytes (view_as<T> first)")));
    }
  }
  // The grid: the Out cells', which a given grid must repeat; else the given one.
  Grid g{1, 1, 1};
  if (p.grid()) {
    g = *p.grid();
    if (grid && *grid != g) {
      refuse(p, "launch.grid_mismatch",
             "the Out cells make the grid [" + std::to_string(g[0]) + ", " + std::to_string(g[1]) + ", " +
                 std::to_string(g[2]) + "], and the launch gives [" + std::to_string((*grid)[0]) + ", " +
                 std::to_string((*grid)[1]) + ", " + std::to_string((*grid)[2]) + "]");
    }
  } else if (grid) {
    g = *grid;
  } else {
    refuse(p, "launch.grid_mismatch",
           "no Out fixes the grid (its cells are dyn_dim, or the outputs are Shared): pass one");
  }
  for (uint32_t n : g) {
    if (n == 0) refuse(p, "launch.grid_mismatch", "the grid has an axis of 0 blocks");
  }
  // Block i writes cell i of each Out: an Out with no dimension along an axis of several blocks
  // would have those blocks write the same cells.
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].role != Role::Out) continue;
    for (int a = 0; a < 3; ++a) {
      const auto& axes = params[i].cells->axes();
      if (g[size_t(a)] > 1 && std::find(axes.begin(), axes.end(), a) == axes.end()) {
        refuse(p, "launch.grid_mismatch",
               argument(p, i) + " has no dimension along grid axis " + std::to_string(a) + ", where the grid has " +
                   std::to_string(g[size_t(a)]) + " blocks: they would all write the same cells");
      }
    }
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].cells) continue;
    const Cells& c = *params[i].cells;
    for (int d = 0; d < c.rank(); ++d) {
      int a = c.axes()[size_t(d)];
      if (a == free_axis || c.extent()[size_t(d)] == dyn_dim) continue;
      if (c.count(d) != int64_t(g[size_t(a)])) {
        refuse(p, "launch.grid_mismatch",
               argument(p, i) + " has " + std::to_string(c.count(d)) + " cell(s) in dimension " + std::to_string(d) +
                   ", which follows grid axis " + std::to_string(a) + ", and the grid has " +
                   std::to_string(g[size_t(a)]) + " block(s) there");
      }
    }
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const Handle& h = buffers[i];
    uint64_t held = h.size_in_used() / uint64_t(ir::scalar_bytes(params[i].element));
    uint64_t need = reach(p, i, g);
    // Lowered tile ops index a parameter's elements with u32 (kiln's address mode for kernels).
    if (need > kMaxReach) {
      refuse(p, "launch.too_large",
             argument(p, i) + " reaches " + std::to_string(need) + " elements; a tile kernel indexes at most " +
                 std::to_string(kMaxReach) + " (2^32) elements of a parameter");
    }
    if (held < need) {
      refuse(p, "launch.short_buffer",
             argument(p, i) + " holds " + std::to_string(held) + " element(s) and its cells reach " +
                 std::to_string(need));
    }
    if (h.address() % 16 != 0) {
      refuse(p, "launch.misaligned",
             argument(p, i) +
                 " starts at an address that is not a multiple of 16 bytes; the program "
                 "assumes div_by<16> (start a view on a 16-byte boundary)");
    }
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].role != Role::Out) continue;
    for (size_t j = 0; j < params.size(); ++j) {
      if (j == i || buffers[j].memory_id() != buffers[i].memory_id()) continue;
      size_t a0 = buffers[i].offset(), a1 = a0 + buffers[i].size_in_used();
      size_t b0 = buffers[j].offset(), b1 = b0 + buffers[j].size_in_used();
      if (a0 < b1 && b0 < a1) {
        refuse(p, "launch.out_shared",
               argument(p, i) + " shares memory with " + argument(p, j) +
                   "; an Out's buffer is its own (declare a parameter written in place Shared)");
      }
    }
  }
  return g;
}

void Entry::launch(const Client& client, std::span<const Handle> buffers, std::optional<Grid> grid) const {
  Grid g = checked_grid(buffers, grid);
  if (const References* refs = FakeDevice::current()) {
    detail::run_reference(*refs, *this, client, buffers, g);
    return;
  }
  const Program& p = *program_;
  const auto& params = p.params();
  // A parameter read in vectors takes its buffer as whole vectors: a tail shorter than one lies
  // past every cell (the extent's last dimension is a multiple of the width), so it is cut off.
  std::vector<Handle> whole;
  for (size_t i = 0; i < params.size(); ++i) {
    size_t vector_bytes = size_t(p.kernel().params[i].type.element_bytes());
    whole.push_back(buffers[i].offset_end(buffers[i].size_in_used() % vector_bytes));
  }
  std::vector<Arg> args(whole.begin(), whole.end());
  // Cell accesses are masked by the extent and the launch checked the buffers cover it, so they
  // need no bounds checks; accesses at computed addresses (Shared) keep checked mode's.
  ir::ExecMode mode = p.uses_addresses() ? ir::ExecMode::Checked : ir::ExecMode::Unchecked;
  kiln::launch(client, KernelRef(p.compiled()),
               LaunchConfig{CubeCount(g[0], g[1], g[2]), CubeDim(p.units_for(client.device().info().target)), 1, mode},
               args);
}

}  // namespace kiln::tile
