// Row ops: softmax, log_softmax and layer_norm, each one kernel. A cube takes one row (the op's
// dim, made the last of a view); every unit strides over the row, and a statistic (max, sum) is
// combined across the cube: plane reduction, one partial per plane in shared memory, then every
// unit folds the partials in the same order, so all units agree bit for bit. Two kinds of kernel:
// streaming (each pass over the row reads it again) and resident (a unit reads its elements of the
// row once into registers, for rows of up to 32 elements a unit); and, for strided rows whose
// neighbours lie next to each other in memory (x.transpose()'s), a tiled kernel that reads a tile
// of rows at a time (rows_tiled.cpp). Autotune picks the kind and the cube's size per row length.
#include "kiln/tensor/rows.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <mutex>
#include <optional>
#include <tuple>

#include "common/key.h"
#include "kiln/autotune.h"
#include "kiln/runtime/launch.h"
#include "tensor/kernels.h"
#include "tensor/layout.h"
#include "tensor/row_spec.h"
#include "tensor/row_stats.h"
#include "tensor/support.h"

namespace kiln {

namespace {

using dsl::Tracer;
using dsl::ValueRef;

constexpr uint32_t kPlane = ir::Target::kPlaneWidth;
constexpr int64_t kMaxResident = 32;  // elements a unit holds in registers

using tensor::name_of;
using tensor::RowOp;
using tensor::RowSpec;

ir::Kernel record_row(const RowSpec& s) {
  if (s.split) return tensor::record_split_rows(s);
  if (s.tile > 0) return tensor::record_tiled_rows(s);
  const DType acc = ir::compute_scalar(s.dtype);
  ir::Kernel k;
  k.name = std::string("tensor_") + name_of(s.op);
  Tracer t(k);
  const int rank = s.outer_rank + 1;
  const tensor::RowParams params = tensor::declare_row_params(t, s, rank);
  const ValueRef &in = params.in, &weight = params.weight, &bias = params.bias, &out = params.out, &cols = params.cols,
                 &eps = params.eps;
  auto u32 = [&](int64_t v) { return tensor::constant(t, DType::U32, double(v)); };
  auto mul = [&](const ValueRef& a, const ValueRef& b) { return t.binary(ir::OpKind::Mul, a, b); };
  auto add = [&](const ValueRef& a, const ValueRef& b) { return t.binary(ir::OpKind::Add, a, b); };
  auto sub = [&](const ValueRef& a, const ValueRef& b) { return t.binary(ir::OpKind::Sub, a, b); };
  auto meta = [&](ir::OpKind kind, const ValueRef& x, int d) { return t.tensor_meta(kind, x, d); };

  // The row's offsets in `in` and `out` from the cube's position over the outer dims.
  ValueRef row = t.builtin(ir::OpKind::CubePos, -1), unit = t.builtin(ir::OpKind::UnitPos, -1);
  std::vector<ValueRef> outer = tensor::coordinates(t, row, in, 0, s.outer_rank);
  ValueRef in_base = tensor::offset(t, in, outer, 0, ValueRef{}),
           out_base = tensor::offset(t, out, outer, 0, ValueRef{});
  ValueRef in_step = meta(ir::OpKind::TensorStride, in, s.outer_rank),
           out_step = meta(ir::OpKind::TensorStride, out, s.outer_rank);
  auto read = [&](const ValueRef& j) {
    ValueRef x = t.load(in, add(in_base, mul(j, in_step)));
    return x.type.scalar == acc ? x : t.cast(x, acc);
  };
  const uint32_t kUnits = s.units, kPlanes = s.units / kPlane;
  // Loops over the unit's elements of the row: j = unit, unit + units, ...
  auto each = [&](const std::function<void(const ValueRef&)>& body) {
    ValueRef j = t.begin_for(unit, cols, u32(kUnits), dsl::LoopAttrs{});
    body(j);
    t.end_for();
  };
  // The cube-wide combination of every unit's `v` (max or sum).
  auto combine = [&](ValueRef v, bool is_max) {
    ValueRef partial = t.plane(is_max ? ir::OpKind::PlaneMax : ir::OpKind::PlaneSum, std::array<ValueRef, 1>{v});
    ValueRef shared = t.alloc(ir::OpKind::SharedAlloc, ir::Type::scalar_of(acc), kPlanes);
    ValueRef lane = t.binary(ir::OpKind::Rem, unit, u32(kPlane));
    size_t first_lane = t.begin_if(t.binary(ir::OpKind::Eq, lane, u32(0)));
    t.store(shared, t.binary(ir::OpKind::Div, unit, u32(kPlane)), partial);
    t.end_then(first_lane);
    t.sync(ir::OpKind::SyncCube);
    ValueRef r = t.load(shared, u32(0));
    for (uint32_t p = 1; p < kPlanes; ++p)
      r = t.binary(is_max ? ir::OpKind::Max : ir::OpKind::Add, r, t.load(shared, u32(p)));
    return r;
  };
  auto accumulate = [&](double init, const std::function<ValueRef(const ValueRef&, const ValueRef&)>& step) {
    ValueRef var = t.var_decl(ir::Type::scalar_of(acc));
    t.var_store(var, tensor::constant(t, acc, init));
    each([&](const ValueRef& j) { t.var_store(var, step(t.var_load(var), j)); });
    return t.var_load(var);
  };
  auto write = [&](const ValueRef& j, ValueRef y) {
    if (y.type.scalar != s.dtype) y = t.cast(y, s.dtype);
    t.store(out, add(out_base, mul(j, out_step)), y);
  };

  if (s.resident > 0) {
    // Element r of the unit is j_r = unit + r * units; past the row's end it reads the last
    // element (a load in bounds) and counts as the statistic's identity.
    std::vector<ValueRef> js, valid, v;
    ValueRef last = sub(cols, u32(1));
    for (int r = 0; r < s.resident; ++r) {
      ValueRef j = add(unit, u32(int64_t(r) * kUnits));
      js.push_back(j);
      valid.push_back(t.binary(ir::OpKind::Lt, j, cols));
      v.push_back(read(t.binary(ir::OpKind::Min, j, last)));
    }
    auto fold = [&](double identity, bool is_max, const std::function<ValueRef(size_t)>& term) {
      ValueRef a = tensor::constant(t, acc, identity);
      for (size_t r = 0; r < v.size(); ++r) {
        ValueRef x = t.select(valid[r], term(r), tensor::constant(t, acc, identity));
        a = is_max ? t.binary(ir::OpKind::Max, a, x) : add(a, x);
      }
      return combine(a, is_max);
    };
    auto store_each = [&](const std::function<ValueRef(size_t)>& y) {
      for (size_t r = 0; r < v.size(); ++r) {
        size_t inside = t.begin_if(valid[r]);
        write(js[r], y(r));
        t.end_then(inside);
      }
    };
    if (s.op == RowOp::LayerNorm) {
      ValueRef n = t.cast(cols, acc);
      ValueRef mean = t.binary(ir::OpKind::Div, fold(0, false, [&](size_t r) { return v[r]; }), n);
      std::vector<ValueRef> d;
      for (const ValueRef& x : v) d.push_back(sub(x, mean));
      ValueRef var = t.binary(ir::OpKind::Div, fold(0, false, [&](size_t r) { return mul(d[r], d[r]); }), n);
      ValueRef inv = t.unary(ir::OpKind::Rsqrt, add(var, eps));
      store_each([&](size_t r) {
        ValueRef y = mul(d[r], inv);
        auto param_at = [&](const ValueRef& p) {
          ValueRef w = t.load(p, mul(js[r], meta(ir::OpKind::TensorStride, p, 0)));
          return w.type.scalar == acc ? w : t.cast(w, acc);
        };
        if (s.weight) y = mul(y, param_at(weight));
        if (s.bias) y = add(y, param_at(bias));
        return y;
      });
    } else {
      ValueRef m = fold(-INFINITY, true, [&](size_t r) { return v[r]; });
      std::vector<ValueRef> e;
      for (const ValueRef& x : v) e.push_back(s.op == RowOp::Softmax ? t.unary(ir::OpKind::Exp, sub(x, m)) : x);
      ValueRef total = fold(
          0, false, [&](size_t r) { return s.op == RowOp::Softmax ? e[r] : t.unary(ir::OpKind::Exp, sub(v[r], m)); });
      if (s.op == RowOp::Softmax) {
        ValueRef inv = t.binary(ir::OpKind::Div, tensor::constant(t, acc, 1.0), total);
        store_each([&](size_t r) { return mul(e[r], inv); });
      } else {
        ValueRef shift = add(m, t.unary(ir::OpKind::Log, total));
        store_each([&](size_t r) { return sub(v[r], shift); });
      }
    }
    t.finish();
    return k;
  }

  if (s.op == RowOp::LayerNorm) {
    ValueRef n = t.cast(cols, acc);
    ValueRef mean = t.binary(
        ir::OpKind::Div,
        combine(accumulate(0, [&](const ValueRef& a, const ValueRef& j) { return add(a, read(j)); }), false), n);
    ValueRef var = t.binary(ir::OpKind::Div,
                            combine(accumulate(0,
                                               [&](const ValueRef& a, const ValueRef& j) {
                                                 ValueRef d = sub(read(j), mean);
                                                 return add(a, mul(d, d));
                                               }),
                                    false),
                            n);
    ValueRef inv = t.unary(ir::OpKind::Rsqrt, add(var, eps));
    each([&](const ValueRef& j) {
      ValueRef y = mul(sub(read(j), mean), inv);
      auto param_at = [&](const ValueRef& p) {
        ValueRef v = t.load(p, mul(j, meta(ir::OpKind::TensorStride, p, 0)));
        return v.type.scalar == acc ? v : t.cast(v, acc);
      };
      if (s.weight) y = mul(y, param_at(weight));
      if (s.bias) y = add(y, param_at(bias));
      write(j, y);
    });
  } else {
    ValueRef m =
        combine(accumulate(-INFINITY,
                           [&](const ValueRef& a, const ValueRef& j) { return t.binary(ir::OpKind::Max, a, read(j)); }),
                true);
    ValueRef total = combine(
        accumulate(
            0, [&](const ValueRef& a, const ValueRef& j) { return add(a, t.unary(ir::OpKind::Exp, sub(read(j), m))); }),
        false);
    if (s.op == RowOp::Softmax) {
      ValueRef inv = t.binary(ir::OpKind::Div, tensor::constant(t, acc, 1.0), total);
      each([&](const ValueRef& j) { write(j, mul(t.unary(ir::OpKind::Exp, sub(read(j), m)), inv)); });
    } else {
      ValueRef shift = add(m, t.unary(ir::OpKind::Log, total));
      each([&](const ValueRef& j) { write(j, sub(read(j), shift)); });
    }
  }
  t.finish();
  return k;
}

// The kernel of `spec`, recorded the first time; later calls find it by its key, which is built
// without allocating.
KernelRef row_kernel(const RowSpec& spec) {
  return tensor::cached_kernel(spec.key(), [&] { return record_row(spec); });
}

// How the tiled kernel sees a call: the outer dims ordered so that the one along which rows are
// neighbours in memory (unit stride in the input) is the innermost, then folded.
struct TiledLayout {
  TensorBinding in, out;
  int outer_rank = 0;
  int64_t others = 1;      // rows picked by the outer dims but the tile's
  int64_t len = 0;         // the tile dim's length
  bool transpose = false;  // the output's rows are contiguous
};

// What every candidate of one call launches with: they run while row_op does (autotune runs them
// before it returns), so each captures a pointer to this and its own cube shape.
struct RowLaunch {
  RowSpec spec;
  TensorBinding in, out, weight, bias;
  uint32_t cols = 0, rows = 0;
  DType acc = DType::F32;
  double eps = 0;
  Client client{nullptr};
  std::optional<TiledLayout> tiled;

  // One row a cube (tile 0), a cube per `tile` rows of the tiled layout, or (chunk > 0) the split
  // kernel's items over chunks of `chunk` elements of 32 rows of it, output items `lag` groups
  // behind, or (held) a cube per chunk that keeps it.
  void run(uint32_t units, int resident, int tile, uint32_t chunk = 0, uint32_t lag = 0, int depth = 0,
           bool held = false, bool async = false) const {
    RowSpec s = spec;
    s.units = units;
    s.resident = resident;
    uint32_t cubes = rows;
    const TensorBinding* x = &in;
    const TensorBinding* y = &out;
    uint32_t chunks = 0;
    TensorBinding work, partials;
    if (tile > 0 || chunk > 0) {
      s.tile = chunk > 0 ? 0 : tile;
      s.split = chunk > 0;
      s.held = held;
      s.async = async;
      s.depth = depth;
      s.transpose = tiled->transpose;
      s.outer_rank = tiled->outer_rank;
      x = &tiled->in;
      y = &tiled->out;
    }
    if (tile > 0) cubes = tensor::checked_u32(tiled->others * ((tiled->len + tile - 1) / tile), name_of(s.op), "cubes");
    if (chunk > 0) {
      // Items take 32 rows (a plane's lanes) of the tile dim; the work counters start at zero.
      const int64_t groups = tiled->others * ((tiled->len + kPlane - 1) / kPlane);
      chunks = (cols + chunk - 1) / chunk;
      cubes = tensor::checked_u32((held ? 1 : 2) * groups * int64_t(chunks), name_of(s.op), "cubes");
      // Per row: n statistics of each chunk, and (split) n of the whole row.
      const int64_t counters = 1 + groups,
                    stats = tensor::statistics_of(s.op) * groups * (chunks + (held ? 0 : 1)) * kPlane;
      tensor::checked_u32(stats, name_of(s.op), "split statistics");  // before it allocates them
      Handle w = client.empty<uint32_t>(size_t(counters));
      client.write(w, std::vector<uint32_t>(size_t(counters), 0));
      Handle p = acc == DType::F64 ? client.empty<double>(size_t(stats)) : client.empty<float>(size_t(stats));
      work = tensor::binding(w, std::array<int64_t, 1>{counters}, std::array<int64_t, 1>{1}, name_of(s.op));
      partials = tensor::binding(p, std::array<int64_t, 1>{stats}, std::array<int64_t, 1>{1}, name_of(s.op));
    }
    KernelRef kernel = row_kernel(s);
    std::array<Arg, 11> args{Arg(in), Arg(in), Arg(in), Arg(in), Arg(in), Arg(in),
                             Arg(in), Arg(in), Arg(in), Arg(in), Arg(in)};
    size_t n = 0;
    args[n++] = Arg(*x);
    if (s.weight) args[n++] = Arg(weight);
    if (s.bias) args[n++] = Arg(bias);
    args[n++] = Arg(*y);
    args[n++] = Arg(cols);
    if (s.op == RowOp::LayerNorm) args[n++] = acc == DType::F64 ? Arg(eps) : Arg(float(eps));
    if (chunk > 0) {
      args[n++] = Arg(chunk);
      args[n++] = Arg(chunks);
      args[n++] = Arg(lag);
      args[n++] = Arg(work);
      args[n++] = Arg(partials);
    }
    LaunchConfig config;
    config.dim = CubeDim{units};
    config.count = CubeCount{cubes};
    // The held kernel's indices are in range by construction (rows_split.cpp): it runs without
    // the bounds guard, which costs it a compare and a select an element it holds; the CPU
    // backend still finds an index out of range in unchecked mode, and the tests run it there.
    if (held) config.mode = ir::ExecMode::Unchecked;
    launch(client, kernel, config, std::span<const Arg>(args.data(), n));
  }
};

// The tiled layout of rows of `cols` elements, strided in x (seen as xv, the row dim last; ov the
// output likewise), when an outer dim of more than one row steps by one element in x: rows that
// are neighbours in memory, which a tile reads together. None otherwise.
std::optional<TiledLayout> tiled_layout(const Tensor& xv, const Tensor& ov, int64_t cols, const char* name) {
  const size_t outer = xv.shape().size() - 1;
  if (xv.strides().back() == 1 || cols < 2) return std::nullopt;
  int unit_dim = -1;
  for (size_t i = 0; i < outer; ++i) {
    if (xv.shape()[i] > 1 && xv.strides()[i] == 1) unit_dim = int(i);
  }
  if (unit_dim < 0) return std::nullopt;
  tensor::DimOrder order;
  for (size_t i = 0; i < outer; ++i) {
    if (int(i) != unit_dim) order.push_back(int(i));
  }
  order.push_back(unit_dim);
  std::array<tensor::Dims, 2> strides = {tensor::Dims(std::span(xv.strides()).first(outer)),
                                         tensor::Dims(std::span(ov.strides()).first(outer))};
  tensor::Walk walk = tensor::Walk::in_order(std::span(xv.shape()).first(outer), strides, order);
  walk.fold();  // the unit dim stays innermost (merged, perhaps, with dims outside it)
  // (Folded in this order, the dims may not fold as far as the row-major walk's: past a kernel's
  // 8 dims, the other kernels serve the call.)
  if (walk.strides[0].back() != 1 || walk.shape.back() < 2 || walk.shape.size() + 1 > 8) return std::nullopt;
  TiledLayout t;
  t.outer_rank = int(walk.shape.size());
  t.len = walk.shape.back();
  for (size_t i = 0; i + 1 < walk.shape.size(); ++i) t.others *= walk.shape[i];
  tensor::Dims shape = walk.shape, in_strides = walk.strides[0], out_strides = walk.strides[1];
  shape.push_back(cols);
  in_strides.push_back(xv.strides().back());
  out_strides.push_back(ov.strides().back());
  t.in = tensor::binding(xv.handle(), shape, in_strides, name);
  t.out = tensor::binding(ov.handle(), shape, out_strides, name);
  t.transpose = ov.strides().back() == 1;
  return t;
}

Tensor row_op(RowOp op, const Tensor& x, int64_t dim, const Tensor& weight, const Tensor& bias, double eps) {
  const char* name = name_of(op);
  if (!x.defined())
    throw Error("tensor.undefined", std::string(name) + ": the tensor is empty (moved from, or never set)");
  if (!ir::is_float(x.dtype())) {
    throw Error("tensor.unsupported_dtype", std::string(name) +
                                                " takes floating-point tensors (f16, bf16, f32, f64), not " +
                                                std::string(ir::scalar_name(x.dtype())) + "; cast first");
  }
  if (x.rank() == 0) throw Error("tensor.bad_dim", std::string(name) + ": takes a tensor of rank 1 or more");
  const int64_t d = dim < 0 ? dim + x.rank() : dim;
  if (d < 0 || d >= x.rank()) {
    throw Error("tensor.bad_dim", std::string(name) + ": dim " + std::to_string(dim) + " is outside a tensor of rank " +
                                      std::to_string(x.rank()));
  }
  const int64_t cols = x.shape()[size_t(d)];
  for (const Tensor* p : {&weight, &bias}) {
    if (!p->defined()) continue;
    if (p->shape() != Shape{cols}) {
      throw Error("tensor.shape_mismatch", std::string(name) + ": weight and bias must have shape [" +
                                               std::to_string(cols) + "] (the normalized dim), one is " +
                                               to_string(p->shape()));
    }
    if (p->dtype() != x.dtype()) {
      throw Error("tensor.dtype_mismatch", std::string(name) + ": weight and bias must be " +
                                               std::string(ir::scalar_name(x.dtype())) + " as the input, one is " +
                                               std::string(ir::scalar_name(p->dtype())));
    }
    if (p->client().id() != x.client().id())
      throw Error("tensor.device_mismatch", std::string(name) + ": weight or bias lives on another device");
  }
  // The output, as x laid out row-major; both seen with dim `d` last.
  Tensor out = tensor::allocate(x.client(), x.shape(), contiguous_strides(x.shape()), x.dtype());
  if (out.numel() == 0) return out;
  std::vector<int64_t> order;
  for (int64_t i = 0; i < x.rank(); ++i) {
    if (i != d) order.push_back(i);
  }
  order.push_back(d);
  Tensor xv = x.permute(order), ov = out.permute(order);
  // The outer dims, folded where both allow.
  const size_t outer = size_t(x.rank() - 1);
  std::array<tensor::Dims, 2> outer_strides = {tensor::Dims(std::span(xv.strides()).first(outer)),
                                               tensor::Dims(std::span(ov.strides()).first(outer))};
  tensor::Walk walk =
      tensor::Walk::in_order(std::span(xv.shape()).first(outer), outer_strides, tensor::row_major_order(outer));
  walk.fold();
  tensor::Dims shape = walk.shape, in_strides = walk.strides[0], out_strides = walk.strides[1];
  shape.push_back(cols);
  in_strides.push_back(xv.strides().back());
  out_strides.push_back(ov.strides().back());
  int64_t rows = 1;
  for (int64_t v : walk.shape) rows *= v;

  RowLaunch l;
  l.spec = RowSpec{op, x.dtype(), int(walk.shape.size()), weight.defined(), bias.defined(), 256, 0};
  l.in = tensor::binding(x.handle(), shape, in_strides, name);
  l.out = tensor::binding(out.handle(), shape, out_strides, name);
  if (weight.defined())
    l.weight = tensor::binding(weight.handle(), std::array<int64_t, 1>{cols},
                               std::array<int64_t, 1>{weight.strides()[0]}, name);
  if (bias.defined())
    l.bias =
        tensor::binding(bias.handle(), std::array<int64_t, 1>{cols}, std::array<int64_t, 1>{bias.strides()[0]}, name);
  l.cols = tensor::checked_u32(cols, name, "elements in a row");
  l.rows = tensor::checked_u32(rows, name, "rows");
  l.acc = x.dtype() == DType::F64 ? DType::F64 : DType::F32;
  l.eps = eps;
  l.client = x.client();
  l.tiled = tiled_layout(xv, ov, cols, name);
  // The candidates: for strided rows that are neighbours in memory, the tiled kernel first (the
  // untuned default there), with tiles of 32 and 128 bytes along the contiguous axis (a sector, a
  // line) and cubes of 256 and 1024 units; streaming with 256 units; resident with 128 to 1024
  // units where a unit's share of the row fits its registers. The set and the names depend on the
  // row length's bucket and the layout alone (autotune's key), so that every length of a bucket
  // shares one result; the kernels are recorded per exact share, and looked up only by the
  // candidate that runs.
  std::vector<autotune::Candidate> candidates;
  candidates.reserve(13);
  auto add_candidate = [&](uint32_t units, int resident) {
    candidates.push_back({(resident ? "resident " : "streaming ") + std::to_string(units),
                          [work = &l, units, resident] { work->run(units, resident, 0); }});
  };
  if (l.tiled) {
    // (tile bytes along the contiguous axis, units): a sector's worth with many cubes resident;
    // then with one large cube an SM, half a sector (its other half read by the next cube at
    // about the same time), a sector and a line: fewer rows in flight at once leave more of what
    // pass 1 read in L2 for pass 2.
    for (auto [bytes, units] :
         {std::pair{32, 256u}, std::pair{16, 1024u}, std::pair{32, 1024u}, std::pair{128, 1024u}}) {
      const int tile = std::clamp(bytes / ir::scalar_bytes(x.dtype()), 1, int(kPlane));
      candidates.push_back({"strided " + std::to_string(tile) + "x" + std::to_string(units),
                            [work = &l, units = units, tile] { work->run(units, 0, tile); }});
    }
    // Split: cubes of 256 units, a few resident an SM, each on a chunk of 32 rows (x.transpose()'s
    // 32 columns of x: 128-byte lines of f32); (chunk, lag, loads in flight a unit) of (256, 3, 8)
    // and (512, 3, 8), the best two of eight on the H200 for 4096 rows of 32768 (decision 029).
    // It spreads a row over many cubes where the tiled kernel has few (a few long rows).
    for (auto [chunk, lag, depth] : {std::tuple{256u, 3u, 8}, std::tuple{512u, 3u, 8}}) {
      // Only rows of more than one chunk (by the length's bucket, autotune's key): a row of one
      // chunk gains nothing from a split, and its partials would outweigh it.
      if (autotune::bucket(cols) <= int64_t(chunk)) continue;
      candidates.push_back(
          {"split " + std::to_string(chunk) + " lag " + std::to_string(lag) + " depth " + std::to_string(depth),
           [work = &l, chunk = chunk, lag = lag, depth = depth] { work->run(256, 0, 0, chunk, lag, depth); }});
    }
    // Held: cubes of 256 units keeping 32 or 64 elements a unit in registers (chunks of 256 or
    // 512) and, for softmax computed in f32, 128 (1024: 64 of them in shared memory, 86 KiB a
    // cube; f64 would take 169 KiB, past what many devices give a cube), where the bucket's longest
    // row has more than one chunk and no more than the device runs cubes at once (a cube an SM, a
    // thread of the CPU backend): the chunks of a group wait for each other (decision 030). Two
    // chunks of a power-of-two bucket mean rows longer than a chunk, which the kernel's last
    // window needs.
    const int64_t at_once = l.client.device().info().multiprocessors;
    for (int depth : {32, 64, 128}) {
      if (depth > 64 && (op != RowOp::Softmax || l.acc != DType::F32)) continue;
      const uint32_t chunk = uint32_t(depth) * (256 / kPlane);
      const int64_t most = (autotune::bucket(cols) + chunk - 1) / chunk;
      if (most < 2 || most > at_once) continue;
      candidates.push_back({"held " + std::to_string(chunk),
                            [work = &l, chunk, depth] { work->run(256, 0, 0, chunk, 0, depth, true); }});
    }
    // Held with its shared part landing by copy.async beside the register loads: f32 softmax
    // (a copy moves the element as it is), 64 or 80 elements a unit in shared memory (chunks of
    // 1024 and 1152; 102 KiB a cube at 1152, two cubes an SM).
    for (int depth : {128, 144}) {
      if (op != RowOp::Softmax || x.dtype() != DType::F32) continue;
      const uint32_t chunk = uint32_t(depth) * (256 / kPlane);
      // Rows of the bucket are longer than half of it, so longer than the chunk (1152 is not a
      // power of two: a bucket of two chunks may hold rows shorter than one).
      const int64_t most = (autotune::bucket(cols) + chunk - 1) / chunk;
      if (autotune::bucket(cols) / 2 < chunk || most > at_once) continue;
      candidates.push_back({"held " + std::to_string(chunk) + " async",
                            [work = &l, chunk, depth] { work->run(256, 0, 0, chunk, 0, depth, true, true); }});
    }
  }
  const int64_t cols_bucket = autotune::bucket(cols);
  for (uint32_t units : {128u, 256u, 512u, 1024u}) {
    // The smallest cube that holds the bucket's longest row; larger ones while each unit still has 4.
    const int64_t most = (cols_bucket + units - 1) / units;
    if (most <= kMaxResident && (units == 128 || most >= 4)) add_candidate(units, int((cols + units - 1) / units));
  }
  add_candidate(256, 0);
  // Untuned: the first tiled kernel, else the first resident one, else streaming.
  const char* layout = in_strides.back() == 1 ? "contiguous"
                       : !l.tiled             ? "strided"
                       : l.tiled->transpose   ? "strided, tiled into rows"
                                              : "strided, tiled";
  const std::string facts =
      common::KeyText("")("dtype", x.dtype())("cols", autotune::bucket(cols))("rows", autotune::bucket(rows))(
          "weight", weight.defined())("bias", bias.defined())("layout", layout)
          .text();
  autotune::run(l.client, autotune::Key{name, facts}, candidates, 0);
  return out;
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim) { return row_op(RowOp::Softmax, x, dim, Tensor(), Tensor(), 0); }
Tensor log_softmax(const Tensor& x, int64_t dim) { return row_op(RowOp::LogSoftmax, x, dim, Tensor(), Tensor(), 0); }
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  return row_op(RowOp::LayerNorm, x, -1, weight, bias, eps);
}

}  // namespace kiln
