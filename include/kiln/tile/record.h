// The untyped core of tile recording. The typed front (tile.h, param.h, trace.h) is thin templates
// over these functions; they check what seed 04's recorder checks, with its messages, and record
// tile ops through the kernel tracer (dsl/trace.h). Error{record.*} names the kernel, the op's
// number and its cuda_tile name.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kiln/dsl/trace.h"
#include "kiln/element.h"
#include "kiln/tile/cells.h"

namespace kiln::tile {

enum class Role : uint8_t { In, Out, Shared };
std::string_view to_string(Role r);

// A parameter as trace() takes it: its role, element type and (for In and Out) cells.
struct ParamDecl {
  Role role = Role::In;
  ir::Scalar element = ir::Scalar::F32;
  std::optional<Cells> cells;
};

namespace detail {

using dsl::ValueRef;

// The parameter and view a Param<T> stands for. `view` is the index of its cells' view (a
// parameter has one per retile), -1 for a Shared parameter.
struct ParamRef {
  int index = 0;
  int view = -1;
};

// The recording of one tile kernel: opened by trace(), current for the body's duration.
class Recording;

// The recording this thread is in; Error{trace.no_context} outside one.
Recording& current();

// Parameters and memory.
ValueRef load_cell(ParamRef p);
ValueRef load_at(ParamRef p, std::span<const ValueRef> cell);
void store_cell(ParamRef p, const ValueRef& t);
void store_sub(ParamRef p, const ValueRef& t, std::span<const ValueRef> sub);
// At computed addresses (Shared parameters). `extent`: none, or one i32 per dimension of the tile;
// the elements at coordinates below it take part, the others are not read (a load gives `pad`)
// nor written.
ValueRef load(ParamRef p, const ValueRef& offset, std::span<const uint32_t> shape, std::span<const int64_t> strides,
              std::span<const ValueRef> extent = {}, Pad pad = Pad::zero);
void store(ParamRef p, const ValueRef& offset, const ValueRef& t, std::span<const int64_t> strides,
           std::span<const ValueRef> extent = {});
// kind: TileAtomicAdd, TileAtomicMax or TileAtomicMin.
void atomic(ir::OpKind kind, ParamRef p, const ValueRef& offset, const ValueRef& t, std::span<const int64_t> strides,
            std::span<const ValueRef> extent = {});
// kind: TileScatter, TileScatterAdd, TileScatterMax or TileScatterMin; `offsets` an i32 tile of
// the values' shape.
void scatter(ir::OpKind kind, ParamRef p, const ValueRef& offsets, const ValueRef& values,
             std::span<const ValueRef> extent = {});
// Per dimension, how many lanes of a cell of `p` lie inside its extent (at least the tile in a
// whole cell): the block's cell, or the one `cell` picks as load_at does.
std::vector<ValueRef> cell_extent(ParamRef p, std::span<const ValueRef> cell);
ParamRef retile(ParamRef p, std::vector<int64_t> extent, std::vector<int64_t> tile);
// The shape of one cell of `p`'s view.
std::vector<uint32_t> cell_shape(ParamRef p);

// Values.
ValueRef full(ir::Scalar s, std::span<const uint32_t> shape, const ir::AttrValue& v);
ValueRef elementwise(ir::OpKind kind, std::span<const ValueRef> operands);
ValueRef cast(const ValueRef& t, ir::Scalar to);
ValueRef broadcast(const ValueRef& t, std::span<const uint32_t> shape);
ValueRef reduce(ir::OpKind kind, const ValueRef& t, int dim, bool keepdims);
ValueRef transpose(const ValueRef& t);
ValueRef mma(const ValueRef& a, const ValueRef& b, const ValueRef& c);
ValueRef block_id(int axis);
ValueRef index_constant(int32_t v);

// Carried tiles (tile::Var).
ValueRef var_decl(const ValueRef& init);
ValueRef var_load(const ValueRef& var);
void var_store(const ValueRef& var, const ValueRef& t);

std::vector<uint32_t> shape_of(const ValueRef& t);

}  // namespace detail
}  // namespace kiln::tile
