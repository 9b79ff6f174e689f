// A recording: the kernel's parameters and views, the checks of the cells against the grid, and
// closing (each parameter's vector width, verification, the Program).
#include "recording.h"

#include <algorithm>

#include "names.h"

namespace kiln::tile::detail {

namespace {
thread_local Recording* g_current = nullptr;

bool power_of_two(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }
}  // namespace

Recording& current() {
  if (!g_current) throw Error("trace.no_context", "a tile op was used outside trace(): tile ops only record");
  return *g_current;
}

Recording::Recording(std::string name, std::vector<ParamDecl> params, const Options& options)
    : name_(std::move(name)), params_(std::move(params)), previous_(g_current) {
  kernel_.name = name_;
  if (options.cubes_per_processor < 0 || options.cubes_per_processor > ir::Target::kMaxCubesPerProcessor) {
    fail("record.bad_option", "Options::cubes_per_processor is " + std::to_string(options.cubes_per_processor) +
                                  "; it takes 0 (the backend's choice) to " +
                                  std::to_string(ir::Target::kMaxCubesPerProcessor));
  }
  // The program's own facts: kiln::Program keeps them when it clears the rest for each launch.
  kernel_.facts.fast_math = options.fast_math;
  kernel_.facts.cubes_per_processor = options.cubes_per_processor;
  check_cells();
  tracer_.emplace(kernel_);
  g_current = this;
  pointer_access_.assign(params_.size(), false);
  for (size_t i = 0; i < params_.size(); ++i) {
    const ParamDecl& d = params_[i];
    ir::Access access = d.role == Role::In ? ir::Access::ReadOnly : ir::Access::ReadWrite;
    std::string pname = "arg" + std::to_string(i);
    arrays_.push_back(tracer_->param(pname, ir::Type::buffer(ir::Type::scalar_of(d.element), access)));
  }
  for (size_t i = 0; i < params_.size(); ++i) {
    if (params_[i].cells) add_view(int(i), *params_[i].cells);
  }
}

Recording::~Recording() { g_current = previous_; }

std::string Recording::argument(int i) const {
  return "argument " + std::to_string(i) + " (" + std::string(to_string(decl(i).role)) + ")";
}

void Recording::fail(const std::string& kind, const std::string& op, const std::string& what) const {
  size_t n = tracer_ ? tracer_->next_op_number() : 1;
  throw Error(kind, "kernel `" + name_ + "`: op #" + std::to_string(n) + " `" + op + "`: " + what);
}

void Recording::fail(const std::string& kind, const std::string& what) const {
  throw Error(kind, "kernel `" + name_ + "`: " + what);
}

// Cells must describe tiles the lowering can split (ranks agree, power-of-two tiles) and agree
// with the grid: the Out cells give it, and every dimension that follows a grid axis has as many
// cells as the grid has blocks there.
void Recording::check_cells() {
  for (size_t i = 0; i < params_.size(); ++i) {
    const ParamDecl& d = params_[i];
    if (d.role == Role::Shared) {
      if (d.cells) fail("record.cells", argument(int(i)) + " is a Shared, which has no cells");
      continue;
    }
    if (!d.cells) fail("record.cells", argument(int(i)) + " needs cells");
    const Cells& c = *d.cells;
    if (c.rank() < 1 || c.rank() > 4 || int(c.tile().size()) != c.rank() || int(c.axes().size()) != c.rank()) {
      fail("record.cells", argument(int(i)) + " has " + c.text() + " with " + std::to_string(c.axes().size()) +
                               " axes: extent, tile and along need one entry per dimension, 1 to 4 of them");
    }
    std::vector<bool> axis_used(3, false);
    for (int dim = 0; dim < c.rank(); ++dim) {
      int64_t t = c.tile()[size_t(dim)], e = c.extent()[size_t(dim)];
      int a = c.axes()[size_t(dim)];
      if (!power_of_two(t)) {
        fail("record.tile_shape", argument(int(i)) + " has tile " + std::to_string(t) + " in dimension " +
                                      std::to_string(dim) + "; tile dimensions are powers of two");
      }
      if (e != dyn_dim && e < 1) {
        fail("record.cells", argument(int(i)) + " has extent " + std::to_string(e) + " in dimension " +
                                 std::to_string(dim) + "; an extent is at least 1, or dyn_dim");
      }
      if (a < free_axis || a > 2)
        fail("record.cells",
             argument(int(i)) + " has along " + std::to_string(a) + "; grid axes are 0, 1 and 2, or free_axis");
      if (a != free_axis) {
        if (axis_used[size_t(a)])
          fail("record.cells", argument(int(i)) + " has two dimensions along grid axis " + std::to_string(a));
        axis_used[size_t(a)] = true;
      }
      if (e == dyn_dim && a == free_axis) {
        fail("record.cells", argument(int(i)) + " has a dyn_dim extent in dimension " + std::to_string(dim) +
                                 ", which follows no grid axis; the grid gives a dyn_dim extent");
      }
      if (d.role == Role::Out && a == free_axis) {
        fail("record.cells", argument(int(i)) + " is an Out with a free dimension " + std::to_string(dim) +
                                 "; an Out's cells are the grid, so each dimension follows a grid axis");
      }
    }
  }
  // The grid: each Out dimension gives its axis; an axis no Out names has one block.
  Grid g{1, 1, 1};
  bool fixed = false, dynamic = false;
  for (size_t i = 0; i < params_.size(); ++i) {
    const ParamDecl& d = params_[i];
    if (d.role != Role::Out) continue;
    for (int dim = 0; dim < d.cells->rank(); ++dim) {
      if (d.cells->extent()[size_t(dim)] == dyn_dim) {
        dynamic = true;
        continue;
      }
      g[size_t(d.cells->axes()[size_t(dim)])] = uint32_t(d.cells->count(dim));
      fixed = true;
    }
  }
  if (fixed && !dynamic) grid_ = g;
  if (!grid_) return;
  // Block i writes cell i of each Out, so every Out follows each axis that has several blocks.
  for (size_t i = 0; i < params_.size(); ++i) {
    if (params_[i].role != Role::Out) continue;
    const auto& axes = params_[i].cells->axes();
    for (int a = 0; a < 3; ++a) {
      if ((*grid_)[size_t(a)] > 1 && std::find(axes.begin(), axes.end(), a) == axes.end()) {
        fail("record.grid_mismatch", argument(int(i)) + " has no dimension along grid axis " + std::to_string(a) +
                                         ", where the grid has " + std::to_string((*grid_)[size_t(a)]) +
                                         " blocks: they would all write the same cells");
      }
    }
  }
  for (size_t i = 0; i < params_.size(); ++i) {
    const ParamDecl& d = params_[i];
    if (!d.cells) continue;
    for (int dim = 0; dim < d.cells->rank(); ++dim) {
      int a = d.cells->axes()[size_t(dim)];
      if (a == free_axis || d.cells->extent()[size_t(dim)] == dyn_dim) continue;
      int64_t n = d.cells->count(dim);
      if (n != int64_t((*grid_)[size_t(a)])) {
        fail("record.grid_mismatch", argument(int(i)) + " has " + std::to_string(n) + " cell(s) in dimension " +
                                         std::to_string(dim) + ", which follows grid axis " + std::to_string(a) +
                                         ", and the grid has " + std::to_string((*grid_)[size_t(a)]) +
                                         " block(s) there");
      }
    }
  }
}

ParamRef Recording::add_view(int param, const Cells& c) {
  std::array<uint32_t, 4> shape{};
  for (int d = 0; d < c.rank(); ++d) shape[size_t(d)] = uint32_t(c.tile()[size_t(d)]);
  ir::Type t = ir::Type::tile(decl(param).element, c.rank(), shape, ir::MemorySpace::Global);
  std::vector<int64_t> along(c.axes().begin(), c.axes().end());
  std::vector<ir::Attr> attrs = {
      {ir::AttrKey::Extent, ir::AttrValue::of_ints(c.extent())},
      {ir::AttrKey::Tile, ir::AttrValue::of_ints(c.tile())},
      {ir::AttrKey::Along, ir::AttrValue::of_ints(along)},
      ir::attr<ir::AttrKey::Pad>(c.padding()),
  };
  ValueRef a[] = {array(param)};
  ValueRef v = tracer_->record(ir::OpKind::TileView, a, t, std::move(attrs));
  views_.push_back(View{param, c, v});
  return ParamRef{param, int(views_.size()) - 1};
}

// The widest vector (at most 16 bytes) that every view of the parameter reads whole: it divides
// the last dimension of each tile and extent, so that a vector never straddles a row or the extent.
int Recording::vector_width(int param) const {
  const ParamDecl& d = decl(param);
  if (pointer_access_[size_t(param)]) return 1;
  int w = 16 / ir::scalar_bytes(d.element);
  bool any = false;
  for (const View& v : views_) {
    if (v.param != param) continue;
    any = true;
    int64_t t = v.cells.tile().back(), e = v.cells.extent().back();
    while (w > 1 && (t % w != 0 || (e != dyn_dim && e % w != 0))) w /= 2;
  }
  for (const auto& [p, last] : part_widths_) {
    while (p == param && w > 1 && last % w != 0) w /= 2;
  }
  return any ? w : 1;
}

Traced Recording::close() {
  for (size_t i = 0; i < params_.size(); ++i) {
    int w = vector_width(int(i));
    if (w == 1) continue;
    ir::Param& p = kernel_.params[i];
    ir::Type t = ir::Type::buffer(ir::Type::vector_of(p.type.scalar, w), p.type.access);
    p.type = t;
    kernel_.value_types[p.value] = t;
  }
  tracer_->finish();
  tracer_.reset();
  g_current = previous_;
  auto program = std::make_shared<const Program>(name_, params_, std::move(kernel_), grid_);
  return Traced{program, Entry(program)};
}

}  // namespace kiln::tile::detail
