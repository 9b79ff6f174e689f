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
  ValueRef in = t.param("in", ir::Type::tensor(elem, rank, ir::Access::ReadOnly));
  ValueRef weight, bias;
  if (s.weight) weight = t.param("weight", ir::Type::tensor(elem, 1, ir::Access::ReadOnly));
  if (s.bias) bias = t.param("bias", ir::Type::tensor(elem, 1, ir::Access::ReadOnly));
  ValueRef out = t.param("out", ir::Type::tensor(elem, rank, ir::Access::ReadWrite));
  ValueRef cols = t.param("cols", ir::Type::scalar_of(ir::Scalar::U32));
  ValueRef eps;
  if (s.op == RowOp::LayerNorm) eps = t.param("eps", ir::Type::scalar_of(acc));

  auto u32 = [&](int64_t v) { return constant(t, DType::U32, double(v)); };
  auto c_acc = [&](double v) { return constant(t, acc, v); };
  auto bin = [&](ir::OpKind kind, const ValueRef& a, const ValueRef& b) { return t.binary(kind, a, b); };
  auto add = [&](const ValueRef& a, const ValueRef& b) { return bin(ir::OpKind::Add, a, b); };
  auto sub = [&](const ValueRef& a, const ValueRef& b) { return bin(ir::OpKind::Sub, a, b); };
  auto mul = [&](const ValueRef& a, const ValueRef& b) { return bin(ir::OpKind::Mul, a, b); };
  auto div = [&](const ValueRef& a, const ValueRef& b) { return bin(ir::OpKind::Div, a, b); };
  auto meta = [&](ir::OpKind kind, const ValueRef& x, int d) { return t.tensor_meta(kind, x, d); };
  auto var = [&](DType d, const ValueRef& init) {
    ValueRef v = t.var_decl(ir::Type::scalar_of(d));
    t.var_store(v, init);
    return v;
  };

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
  ValueRef in_step = meta(ir::OpKind::TensorStride, in, rank - 1), out_step = meta(ir::OpKind::TensorStride, out, rank - 1);
  auto read = [&](const ValueRef& j) {
    ValueRef x = t.load(in, add(in_base, mul(j, in_step)));
    return x.type.scalar == acc ? x : t.cast(x, acc);
  };

  // Pass 1: the unit's running statistics over its columns.
  const bool norm = s.op == RowOp::LayerNorm;
  const ValueRef ninf = c_acc(-INFINITY), zero = c_acc(0), one = c_acc(1);
  ValueRef a = var(acc, norm ? zero : ninf);  // softmax: max; layer_norm: count
  ValueRef b = var(acc, zero);                 // softmax: sum of exp(x - max); layer_norm: mean
  ValueRef c = norm ? var(acc, zero) : ValueRef{};  // layer_norm: sum of squared deviations
  {
    dsl::LoopAttrs attrs;
    attrs.unroll = 8;  // loads of several columns in flight (none depends on the statistics)
    ValueRef j = t.begin_for(column_lane, cols, u32(lanes), attrs);
    ValueRef x = read(j);
    if (norm) {
      ValueRef n = add(t.var_load(a), one);
      ValueRef d = sub(x, t.var_load(b));
      ValueRef mean = add(t.var_load(b), div(d, n));
      t.var_store(c, add(t.var_load(c), mul(d, sub(x, mean))));
      t.var_store(b, mean);
      t.var_store(a, n);
    } else {
      // (m, s) with x: one exp, of minus the distance between x and m. Past the maximum, the sum
      // is rescaled to x (s * e + 1) and x is the maximum; below it, s + e. Equal values (-inf
      // and -inf too, which would make NaN of exp(-inf - -inf)) add exp(0) = 1.
      ValueRef m = t.var_load(a), sum = t.var_load(b);
      ValueRef d = sub(x, m);
      ValueRef e = t.select(bin(ir::OpKind::Eq, x, m), one, t.unary(ir::OpKind::Exp, t.unary(ir::OpKind::Neg, t.unary(ir::OpKind::Abs, d))));
      ValueRef above = bin(ir::OpKind::Gt, d, zero);
      t.var_store(b, t.select(above, add(mul(sum, e), one), add(sum, e)));
      t.var_store(a, t.select(above, x, m));
    }
    t.end_for();
  }

  // The cube's fold of its units' statistics, per row. Two partials combine symmetrically (either
  // order gives the same bits: additions commute), so that the lanes of a row within a plane,
  // exchanging over the lane bits above the row's (32 / tile lanes), all end with one value; then
  // one lane of each plane puts it in shared memory, and every unit of a row folds the planes'
  // values in plane order. The units of a row agree bit for bit.
  //   softmax: (m, s) + (m', s') = (M, s * exp(m - M) + s' * exp(m' - M)), M = max(m, m'), with s
  //     itself where m is M (no exp(-inf - -inf));
  //   layer_norm: Chan's (n, mean, M2): n + n', (n mean + n' mean') / n, M2 + M2' + d^2 n n' / n,
  //     d = mean' - mean (d^2 either way), nothing from an empty partial.
  const int n_stats = norm ? 3 : 2;
  auto combine = [&](const std::vector<ValueRef>& p, const std::vector<ValueRef>& q) -> std::vector<ValueRef> {
    if (norm) {
      ValueRef n = add(p[0], q[0]);
      ValueRef safe = bin(ir::OpKind::Max, n, one);
      ValueRef delta = sub(q[1], p[1]);
      ValueRef mean = div(add(mul(p[0], p[1]), mul(q[0], q[1])), safe);
      ValueRef m2 = add(add(p[2], q[2]), div(mul(mul(delta, delta), mul(p[0], q[0])), safe));
      return {n, mean, m2};
    }
    ValueRef m = bin(ir::OpKind::Max, p[0], q[0]);
    auto rescaled = [&](const ValueRef& sum, const ValueRef& from) {
      return t.select(bin(ir::OpKind::Eq, from, m), sum, mul(sum, t.unary(ir::OpKind::Exp, sub(from, m))));
    };
    return {m, add(rescaled(p[1], p[0]), rescaled(q[1], q[0]))};
  };
  std::vector<ValueRef> mine = {t.var_load(a), t.var_load(b)};
  if (norm) mine.push_back(t.var_load(c));
  for (uint32_t bit = tile; bit < kPlane; bit *= 2) {
    std::vector<ValueRef> theirs;
    for (const ValueRef& v : mine) theirs.push_back(t.plane(ir::OpKind::PlaneShuffleXor, std::array<ValueRef, 2>{v, u32(bit)}));
    mine = combine(mine, theirs);
  }
  std::vector<ValueRef> shared;
  for (int k2 = 0; k2 < n_stats; ++k2) shared.push_back(t.alloc(ir::OpKind::SharedAlloc, ir::Type::scalar_of(acc), int64_t(planes) * tile));
  ValueRef plane = div(unit, u32(kPlane));
  size_t first_lanes = t.begin_if(bin(ir::OpKind::Lt, lane, u32(tile)));
  for (int k2 = 0; k2 < n_stats; ++k2) t.store(shared[size_t(k2)], add(mul(plane, u32(tile)), row_in_tile), mine[size_t(k2)]);
  t.end_then(first_lanes);
  t.sync(ir::OpKind::SyncCube);
  ValueRef fa = var(acc, norm ? zero : ninf), fb = var(acc, zero), fc = norm ? var(acc, zero) : ValueRef{};
  {
    ValueRef p = t.begin_for(u32(0), u32(planes), u32(1), dsl::LoopAttrs{});
    ValueRef at = add(mul(p, u32(tile)), row_in_tile);
    std::vector<ValueRef> acc_now = {t.var_load(fa), t.var_load(fb)}, part;
    if (norm) acc_now.push_back(t.var_load(fc));
    for (int k2 = 0; k2 < n_stats; ++k2) part.push_back(t.load(shared[size_t(k2)], at));
    std::vector<ValueRef> r = combine(acc_now, part);
    t.var_store(fa, r[0]);
    t.var_store(fb, r[1]);
    if (norm) t.var_store(fc, r[2]);
    t.end_for();
  }

  // What pass 2 computes from x at column j: the op's output, in the acc type.
  std::function<ValueRef(const ValueRef&, const ValueRef&)> output;
  if (norm) {
    ValueRef mean = t.var_load(fb);
    ValueRef inv = t.unary(ir::OpKind::Rsqrt, add(div(t.var_load(fc), t.cast(cols, acc)), eps));
    output = [&, mean, inv](const ValueRef& x, const ValueRef& j) {
      ValueRef y = mul(sub(x, mean), inv);
      auto param_at = [&](const ValueRef& p) {
        ValueRef w = t.load(p, mul(j, meta(ir::OpKind::TensorStride, p, 0)));
        return w.type.scalar == acc ? w : t.cast(w, acc);
      };
      if (s.weight) y = mul(y, param_at(weight));
      if (s.bias) y = add(y, param_at(bias));
      return y;
    };
  } else if (s.op == RowOp::Softmax) {
    ValueRef m = t.var_load(fa), inv = div(one, t.var_load(fb));
    output = [&, m, inv](const ValueRef& x, const ValueRef&) { return mul(t.unary(ir::OpKind::Exp, sub(x, m)), inv); };
  } else {
    ValueRef shift = add(t.var_load(fa), t.unary(ir::OpKind::Log, t.var_load(fb)));
    output = [&, shift](const ValueRef& x, const ValueRef&) { return sub(x, shift); };
  }
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
      size_t inside = t.begin_if(bin(ir::OpKind::And, bin(ir::OpKind::Lt, out_row_index, len), bin(ir::OpKind::Lt, out_col, cols)));
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
