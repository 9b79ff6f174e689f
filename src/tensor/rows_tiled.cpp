// The row ops' kernel for strided rows: a row whose elements lie far apart in memory (softmax over
// the last dim of x.transpose()) is read a tile of neighbouring rows at a time, so that the units
// of a plane read consecutive memory along the axis that is contiguous (the rows' own axis), as a
// transpose kernel does. Read one element a unit across rows, each row's elements would sit one
// sector apart and a plane's load would touch 32 sectors for 32 elements.
//
// A cube takes `tile` rows r0.. of the innermost outer dim (unit stride in memory) and all their
// columns. Unit u: lane l = u % 32 reads row r0 + l % tile; its column lane, l / tile + (32 / tile)
// * plane, picks columns j, j + K, j + 2K, ... (K column lanes in the cube). So one plane load is
// `tile` consecutive elements of each of 32 / tile columns: whole sectors.
//
// Pass 1 reads each unit's columns once and keeps running statistics (softmax: the maximum and
// the sum of exp(x - max), rescaled when the maximum grows; layer_norm: Welford's count, mean and
// squared deviations); the cube then folds its units' statistics per row through shared memory,
// every unit of a row in the same order, so that they agree bit for bit. Pass 2 reads the columns
// again, the last first (what pass 1 read last is the likeliest to be in L2 still), and writes.
// When the output's rows are contiguous (softmax of x.transpose() into row-major memory), pass 2
// writes through a shared tile so that a plane's store runs along the output's row.
#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "kiln/dsl/trace.h"
#include "tensor/kernels.h"
#include "tensor/row_spec.h"
#include "tensor/row_stats.h"

namespace kiln::tensor {

namespace {

using dsl::Tracer;
using dsl::ValueRef;

constexpr uint32_t kPlane = ir::Target::kPlaneWidth;

}  // namespace

ir::Kernel record_tiled_rows(const RowSpec& s) {
  const DType acc = ir::compute_scalar(s.dtype);
  ir::Kernel k;
  k.name = std::string("tensor_") + name_of(s.op) + "_strided";
  Tracer t(k);
  const int rank = s.outer_rank + 1, tdim = s.outer_rank - 1;  // tdim: the tile's dim
  ir::Type elem = ir::Type::scalar_of(s.dtype);
  const RowParams params = declare_row_params(t, s, rank);
  const ValueRef &in = params.in, &weight = params.weight, &bias = params.bias, &out = params.out, &cols = params.cols,
                 &eps = params.eps;

  auto u32 = [&](int64_t v) { return constant(t, DType::U32, double(v)); };
  auto bin = [&](ir::OpKind kind, const ValueRef& a, const ValueRef& b) { return t.binary(kind, a, b); };
  auto add = [&](const ValueRef& a, const ValueRef& b) { return bin(ir::OpKind::Add, a, b); };
  auto sub = [&](const ValueRef& a, const ValueRef& b) { return bin(ir::OpKind::Sub, a, b); };
  auto mul = [&](const ValueRef& a, const ValueRef& b) { return bin(ir::OpKind::Mul, a, b); };
  auto div = [&](const ValueRef& a, const ValueRef& b) { return bin(ir::OpKind::Div, a, b); };
  auto meta = [&](ir::OpKind kind, const ValueRef& x, int d) { return t.tensor_meta(kind, x, d); };

  const uint32_t units = s.units, tile = uint32_t(s.tile), per_plane = kPlane / tile, planes = units / kPlane;
  const uint32_t lanes = per_plane * planes;  // K: the cube's column lanes
  ValueRef unit = t.builtin(ir::OpKind::UnitPos, -1), cube = t.builtin(ir::OpKind::CubePos, -1);
  ValueRef lane = bin(ir::OpKind::Rem, unit, u32(kPlane));
  ValueRef row_in_tile = bin(ir::OpKind::Rem, lane, u32(tile));
  ValueRef column_lane = add(div(lane, u32(tile)), mul(div(unit, u32(kPlane)), u32(per_plane)));

  // The cube's tile: group g of the tile dim, and the other outer dims from what is left.
  ValueRef len = meta(ir::OpKind::TensorShape, in, tdim);
  ValueRef groups = div(add(len, u32(tile - 1)), u32(tile));
  ValueRef group = bin(ir::OpKind::Rem, cube, groups);
  std::vector<ValueRef> outer = coordinates(t, div(cube, groups), in, 0, tdim);
  ValueRef first_row = mul(group, u32(tile));
  ValueRef row = add(first_row, row_in_tile);
  ValueRef row_valid = bin(ir::OpKind::Lt, row, len);
  // A unit past the dim's end reads the last row (in bounds) and writes nothing.
  ValueRef read_row = bin(ir::OpKind::Min, row, sub(len, u32(1)));
  ValueRef in_outer = offset(t, in, outer, 0, ValueRef{}), out_outer = offset(t, out, outer, 0, ValueRef{});
  ValueRef in_row = meta(ir::OpKind::TensorStride, in, tdim), out_row = meta(ir::OpKind::TensorStride, out, tdim);
  ValueRef in_base = add(in_outer, mul(read_row, in_row));
  ValueRef in_step = meta(ir::OpKind::TensorStride, in, rank - 1),
           out_step = meta(ir::OpKind::TensorStride, out, rank - 1);
  auto read = [&](const ValueRef& j) {
    ValueRef x = t.load(in, add(in_base, mul(j, in_step)));
    return x.type.scalar == acc ? x : t.cast(x, acc);
  };

  // Pass 1: the unit's running statistics over its columns.
  RowStats stats(t, s.op, acc);
  RowStats::Values running = stats.declare();
  {
    dsl::LoopAttrs attrs;
    attrs.unroll = 8;  // loads of several columns in flight (none depends on the statistics)
    ValueRef j = t.begin_for(column_lane, cols, u32(lanes), attrs);
    stats.add(running, read(j));
    t.end_for();
  }

  // The cube's fold of its units' statistics, per row: across the lanes of a row within a plane
  // (over the lane bits above the row's, 32 / tile lanes), then across the planes in plane order.
  // The units of a row agree bit for bit.
  ValueRef plane = div(unit, u32(kPlane));
  RowStats::Values row_stats =
      stats.fold_planes(stats.fold_lanes(stats.load(running), tile), planes, tile, plane, lane, row_in_tile);
  auto output = stats.output(row_stats, cols, eps, weight, bias);
  auto stored = [&](ValueRef y) { return y.type.scalar == s.dtype ? y : t.cast(y, s.dtype); };

  // Pass 2, from the last columns back: a step takes kChunks chunks of K columns (one a column
  // lane each), so that a unit has kChunks loads in flight before it waits. Every unit runs every
  // step (the shared tile's barriers need them all).
  constexpr uint32_t kChunks = 4;
  const uint32_t span = kChunks * lanes;  // columns a step covers
  ValueRef last_col = sub(cols, u32(1));
  ValueRef steps = div(add(cols, u32(span - 1)), u32(span));
  ValueRef tile_mem;
  // A row of the shared tile, padded so that a plane's stores (tile rows x 32 / tile columns) fall
  // in 32 different banks: the pitch is 32 / tile past a multiple of 32 (span is one).
  const uint32_t pitch = span + per_plane;
  if (s.transpose) tile_mem = t.alloc(ir::OpKind::SharedAlloc, elem, int64_t(tile) * pitch);
  ValueRef i = t.begin_for(u32(0), steps, u32(1), dsl::LoopAttrs{});
  ValueRef first_col = mul(sub(sub(steps, u32(1)), i), u32(span));
  std::vector<ValueRef> js, ys;
  for (uint32_t ch = 0; ch < kChunks; ++ch) {
    ValueRef j = add(first_col, add(u32(ch * lanes), column_lane));
    ValueRef jr = bin(ir::OpKind::Min, j, last_col);  // a lane past the row's end reads its last element
    js.push_back(j);
    ys.push_back(stored(output(read(jr), jr)));
  }
  if (s.transpose) {
    // Through the shared tile: unit (row, column lane) puts its values; then the tile's elements
    // go out row by row, consecutive units on consecutive columns of the output's row.
    for (uint32_t ch = 0; ch < kChunks; ++ch) {
      t.store(tile_mem, add(mul(row_in_tile, u32(pitch)), add(u32(ch * lanes), column_lane)), ys[ch]);
    }
    t.sync(ir::OpKind::SyncCube);
    for (uint32_t ch = 0; ch < kChunks; ++ch) {
      ValueRef e = add(unit, u32(ch * units));
      ValueRef wr = div(e, u32(span)), wc = bin(ir::OpKind::Rem, e, u32(span));
      ValueRef out_row_index = add(first_row, wr), out_col = add(first_col, wc);
      size_t inside =
          t.begin_if(bin(ir::OpKind::And, bin(ir::OpKind::Lt, out_row_index, len), bin(ir::OpKind::Lt, out_col, cols)));
      ValueRef v = t.load(tile_mem, add(mul(wr, u32(pitch)), wc));
      t.store(out, add(add(out_outer, mul(out_row_index, out_row)), mul(out_col, out_step)), v);
      t.end_then(inside);
    }
    t.sync(ir::OpKind::SyncCube);
  } else {
    for (uint32_t ch = 0; ch < kChunks; ++ch) {
      size_t inside = t.begin_if(bin(ir::OpKind::And, row_valid, bin(ir::OpKind::Lt, js[ch], cols)));
      t.store(out, add(add(out_outer, mul(row, out_row)), mul(js[ch], out_step)), ys[ch]);
      t.end_then(inside);
    }
  }
  t.end_for();
  t.finish();
  return k;
}

}  // namespace kiln::tensor
