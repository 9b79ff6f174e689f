// Parameters of a tile kernel. trace() takes declarations (In<T>(cells), Out<T>(cells),
// Shared<T>()) and hands the body one Param<T> each, through which the body loads and stores:
// an In is read through its cells, an Out written through its cells alone (its cells are the
// grid), a Shared read and written at addresses the kernel computes.
#pragma once

#include <concepts>
#include <initializer_list>
#include <optional>
#include <type_traits>
#include <vector>

#include "kiln/ir/type_rules.h"
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
// Where an access at computed addresses stops: one Index per dimension of its tile; element (i, j,
// ...) takes part when i < extent[0], j < extent[1], ... (an extent at or past the tile's size keeps
// the whole dimension, one at or below 0 none of it). Empty: every element. cell_extent(p) is the
// usual one: the part of this block's cell of p that lies inside p's extent.
using Extent = std::vector<Index>;

namespace detail {
inline std::vector<dsl::ValueRef> refs_of(const Extent& e) {
  std::vector<dsl::ValueRef> r;
  for (const Index& i : e) r.push_back(i.ref());
  return r;
}
inline Extent extent_of(const std::vector<dsl::ValueRef>& refs) {
  Extent e;
  for (const dsl::ValueRef& r : refs) e.push_back(Index(r));
  return e;
}
}  // namespace detail

// Per dimension, how many lanes of this block's cell of `p` (as load_cell reads it), or of the cell
// `cell` picks (as load_at does), lie inside p's extent: `extent - cell x tile`, which is the tile
// or more in a whole cell and less in the ragged last one.
template <Element T>
Extent cell_extent(const Param<T>& p) {
  return detail::extent_of(detail::cell_extent(p.ref(), {}));
}
template <Element T>
Extent cell_extent(const Param<T>& p, std::initializer_list<Index> cell) {
  std::vector<dsl::ValueRef> refs;
  for (const Index& i : cell) refs.push_back(i.ref());
  return detail::extent_of(detail::cell_extent(p.ref(), refs));
}

// A Shared parameter's tile at element `offset`; element (i, j, ...) of the tile is at offset +
// i * strides[0] + j * strides[1] + ... (row-major over the tile's shape when strides are empty).
// With an extent, the elements outside it are not written.
template <Element T>
void store(const Param<T>& p, const Index& offset, const std::type_identity_t<Tile<T>>& t,
           std::vector<int64_t> strides = {}, const Extent& extent = {}) {
  detail::store(p.ref(), offset.ref(), t.ref(), strides, detail::refs_of(extent));
}
// With an extent, the elements outside it are not read and hold `pad`.
template <Element T>
Tile<T> load(const Param<T>& p, const Index& offset, std::initializer_list<uint32_t> shape,
             std::vector<int64_t> strides = {}, const Extent& extent = {}, Pad pad = Pad::zero) {
  std::vector<uint32_t> s(shape);
  return Tile<T>(detail::load(p.ref(), offset.ref(), s, strides, detail::refs_of(extent), pad));
}

// Atomics on a Shared parameter: each element of the tile combined into its own slot, addressed as
// store addresses it (at an offset with strides), or, in the scatter form, at the i32 offset the
// offsets tile holds in its place: atomic_add(hist, bins, ones) counts a histogram. The element
// types are those of the IR's atomics: add takes 32- and 64-bit integers, f32 and f64; max and min
// the integers (ir::atomic_takes). Relaxed, and they give nothing back: lanes of one tile that meet
// in a slot combine in no particular order, so old values would tell nothing a kernel could use.
template <class T>
concept AtomicAddElement = Element<T> && ir::atomic_takes(ir::OpKind::TileAtomicAdd, scalar_of<T>());
template <class T>
concept AtomicMinMaxElement = Element<T> && ir::atomic_takes(ir::OpKind::TileAtomicMax, scalar_of<T>());

#define KILN_TILE_ATOMIC(fn, Concept, at_offset, scattered)                                                  \
  template <Concept T>                                                                                       \
  void fn(const Param<T>& p, const Index& offset, const std::type_identity_t<Tile<T>>& t,                    \
          std::vector<int64_t> strides = {}, const Extent& extent = {}) {                                    \
    detail::atomic(ir::OpKind::at_offset, p.ref(), offset.ref(), t.ref(), strides, detail::refs_of(extent)); \
  }                                                                                                          \
  template <Concept T, std::same_as<int32_t> I>                                                              \
  void fn(const Param<T>& p, const Tile<I>& offsets, const std::type_identity_t<Tile<T>>& values,            \
          const Extent& extent = {}) {                                                                       \
    detail::scatter(ir::OpKind::scattered, p.ref(), offsets.ref(), values.ref(), detail::refs_of(extent));   \
  }
KILN_TILE_ATOMIC(atomic_add, AtomicAddElement, TileAtomicAdd, TileScatterAdd)
KILN_TILE_ATOMIC(atomic_max, AtomicMinMaxElement, TileAtomicMax, TileScatterMax)
KILN_TILE_ATOMIC(atomic_min, AtomicMinMaxElement, TileAtomicMin, TileScatterMin)
#undef KILN_TILE_ATOMIC

// values[i, j, ...] into element offsets[i, j, ...] of a Shared parameter (offsets: i32, the
// values' shape). Where two lanes name one element, one of them is written; which is unspecified.
template <Element T, std::same_as<int32_t> I>
void scatter(const Param<T>& p, const Tile<I>& offsets, const std::type_identity_t<Tile<T>>& values,
             const Extent& extent = {}) {
  detail::scatter(ir::OpKind::TileScatter, p.ref(), offsets.ref(), values.ref(), detail::refs_of(extent));
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
  return Tile<T>(detail::full(scalar_of<T>(), s,
                              ir::is_float(scalar_of<T>()) ? ir::AttrValue::of_float(0.0) : ir::AttrValue::of_int(0)));
}

}  // namespace kiln::tile
