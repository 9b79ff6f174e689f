// Parameters of a tile kernel. trace() takes declarations (In<T>(cells), Out<T>(cells),
// Shared<T>()) and hands the body one Param<T> each, through which the body loads and stores:
// an In is read through its cells, an Out written through its cells alone (its cells are the
// grid), a Shared read and written at addresses the kernel computes.
#pragma once

#include <initializer_list>
#include <optional>
#include <type_traits>
#include <vector>

#include "kiln/tile/tile.h"

namespace kiln::tile {

template <Element T>
struct Decl : ParamDecl {
  using element_type = T;
};

template <Element T>
Decl<T> In(const Cells& c) {
  return Decl<T>{{Role::In, scalar_of<T>(), c}};
}
template <Element T>
Decl<T> Out(const Cells& c) {
  return Decl<T>{{Role::Out, scalar_of<T>(), c}};
}
template <Element T>
Decl<T> Shared() {
  return Decl<T>{{Role::Shared, scalar_of<T>(), std::nullopt}};
}

template <Element T>
class Param {
 public:
  explicit Param(detail::ParamRef r) : ref_(r) {}
  detail::ParamRef ref() const { return ref_; }
  // The shape of one cell.
  std::vector<uint32_t> cell_shape() const { return detail::cell_shape(ref_); }

 private:
  detail::ParamRef ref_;
};

// This block's cell of `p` (the cell the grid gives it in every dimension).
template <Element T>
Tile<T> load_cell(const Param<T>& p) {
  return Tile<T>(detail::load_cell(p.ref()));
}
// The cell of `p` at `cell`: one index per dimension of the cells, or (as seed 04 writes it,
// load_at(a, {k})) one per free dimension, the others taking the block's position on their axis.
template <Element T>
Tile<T> load_at(const Param<T>& p, std::initializer_list<Index> cell) {
  std::vector<dsl::ValueRef> refs;
  for (const Index& i : cell) refs.push_back(i.ref());
  return Tile<T>(detail::load_at(p.ref(), refs));
}
template <Element T>
void store_cell(const Param<T>& p, const std::type_identity_t<Tile<T>>& t) {  // a Var<T> converts
  detail::store_cell(p.ref(), t.ref());
}
// Writes `t` as part `sub` of this block's cell: the cell is cut into tiles of t's shape.
template <Element T>
void store_sub(const Param<T>& p, const std::type_identity_t<Tile<T>>& t, std::initializer_list<Index> sub) {
  std::vector<dsl::ValueRef> refs;
  for (const Index& i : sub) refs.push_back(i.ref());
  detail::store_sub(p.ref(), t.ref(), refs);
}
// A Shared parameter's tile at element `offset`; element (i, j, ...) of the tile is at offset +
// i * strides[0] + j * strides[1] + ... (row-major over the tile's shape when strides are empty).
template <Element T>
void store(const Param<T>& p, const Index& offset, const std::type_identity_t<Tile<T>>& t,
           std::vector<int64_t> strides = {}) {
  detail::store(p.ref(), offset.ref(), t.ref(), strides);
}
template <Element T>
Tile<T> load(const Param<T>& p, const Index& offset, std::initializer_list<uint32_t> shape,
             std::vector<int64_t> strides = {}) {
  std::vector<uint32_t> s(shape);
  return Tile<T>(detail::load(p.ref(), offset.ref(), s, strides));
}
// A second view of `p` with other cells (a kernel that reads one In in two shapes).
template <Element T>
Param<T> retile(const Param<T>& p, std::vector<int64_t> extent, std::vector<int64_t> tile) {
  return Param<T>(detail::retile(p.ref(), std::move(extent), std::move(tile)));
}
// A tile of zeros shaped like one cell of `p` (an accumulator for what is stored into it).
template <Element T>
Tile<T> zeros(const Param<T>& p) {
  std::vector<uint32_t> s = p.cell_shape();
  return Tile<T>(detail::full(scalar_of<T>(), s, ir::is_float(scalar_of<T>()) ? ir::AttrValue::of_float(0.0)
                                                                               : ir::AttrValue::of_int(0)));
}

}  // namespace kiln::tile
