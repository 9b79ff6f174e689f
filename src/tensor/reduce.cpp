// Reductions. With many outputs, one unit per output element walks the reduced elements in a loop.
// With few outputs of many elements each (a whole-tensor sum), each output's elements are split
// over cubes of 256 units: every unit strides over its part, the cube combines its units' values
// in shared memory (a tree, the same order on every device), and a second launch of the same
// kernel combines the parts. The kept dims and the reduced dims are each folded where the input's
// strides allow; value reductions walk the reduced elements in memory order, position reductions
// (argmax) in logical order.
#include "kiln/tensor/reduce.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kiln/runtime/launch.h"
#include "tensor/kernels.h"
#include "tensor/layout.h"
#include "tensor/support.h"

namespace kiln {

namespace {

using dsl::Tracer;
using dsl::ValueRef;

enum class Reduction { Sum, Prod, Mean, Max, Min, ArgMax, ArgMin };

const char* name_of(Reduction r) {
  switch (r) {
    case Reduction::Sum: return "sum";
    case Reduction::Prod: return "prod";
    case Reduction::Mean: return "mean";
    case Reduction::Max: return "amax";
    case Reduction::Min: return "amin";
    case Reduction::ArgMax: return "argmax";
    case Reduction::ArgMin: return "argmin";
  }
  return "?";
}

bool is_arg(Reduction r) { return r == Reduction::ArgMax || r == Reduction::ArgMin; }

// The type a reduction accumulates in and the type of its result.
struct Types {
  DType acc, out;
};
Types types_of(Reduction r, DType in) {
  const DType compute = ir::compute_scalar(in);  // f32 for f16 and bf16
  switch (r) {
    case Reduction::Sum:
    case Reduction::Prod:
      if (ir::is_float(in)) return {compute, in};
      return {DType::I64, DType::I64};
    case Reduction::Mean: return {compute, in};
    case Reduction::Max:
    case Reduction::Min: return {compute, in};
    case Reduction::ArgMax:
    case Reduction::ArgMin: return {compute, DType::I64};
  }
  return {in, in};
}

// The first value of the accumulator: the reduction's identity, or the first element (max, min
// and their positions start from it).
double identity(Reduction r) { return r == Reduction::Prod ? 1.0 : 0.0; }

struct ReduceSpec {
  Reduction op;
  DType in;
  int kept_rank, reduced_rank;
};

// Parameters: in (a tensor of kept_rank + reduced_rank dims: the kept walk, then the reduced
// walk), out (a tensor of kept_rank dims), the output count and the reduced count (u32).
ir::Kernel record_reduce(const ReduceSpec& s) {
  const Types ty = types_of(s.op, s.in);
  ir::Kernel k;
  k.name = std::string("tensor_") + name_of(s.op);
  Tracer t(k);
  const int rank = s.kept_rank + s.reduced_rank;
  ValueRef in = t.param("in", ir::Type::tensor(ir::Type::scalar_of(s.in), rank, ir::Access::ReadOnly));
  ValueRef out =
      t.param("out", ir::Type::tensor(ir::Type::scalar_of(ty.out), std::max(s.kept_rank, 1), ir::Access::ReadWrite));
  ValueRef count = t.param("count", ir::Type::scalar_of(ir::Scalar::U32));
  ValueRef inner = t.param("inner", ir::Type::scalar_of(ir::Scalar::U32));
  auto mul = [&](const ValueRef& a, const ValueRef& b) { return t.binary(ir::OpKind::Mul, a, b); };
  auto add = [&](const ValueRef& a, const ValueRef& b) { return t.binary(ir::OpKind::Add, a, b); };

  ValueRef pos = t.builtin(ir::OpKind::AbsolutePos, -1);
  size_t in_range = t.begin_if(t.binary(ir::OpKind::Lt, pos, count));
  // The output's coordinates give both offsets.
  std::vector<ValueRef> kept = tensor::coordinates(t, pos, in, 0, s.kept_rank);
  ValueRef in_off = tensor::offset(t, in, kept, 0, ValueRef{}), out_off = tensor::offset(t, out, kept, 0, ValueRef{});
  // The reduced element j's offset from in_off.
  auto element = [&](const ValueRef& j) {
    ValueRef off = tensor::offset(t, in, tensor::coordinates(t, j, in, s.kept_rank, rank), s.kept_rank, in_off);
    ValueRef x = t.load(in, off);
    return x.type.scalar == ty.acc ? x : t.cast(x, ty.acc);
  };
  const bool from_first = s.op == Reduction::Max || s.op == Reduction::Min || is_arg(s.op);
  ValueRef zero = tensor::constant(t, DType::U32, 0), one = tensor::constant(t, DType::U32, 1);
  ValueRef acc = t.var_decl(ir::Type::scalar_of(ty.acc));
  ValueRef where = t.var_decl(ir::Type::scalar_of(DType::U32));
  t.var_store(acc, from_first ? element(zero) : tensor::constant(t, ty.acc, identity(s.op)));
  t.var_store(where, zero);
  ValueRef j = t.begin_for(from_first ? one : zero, inner, one, dsl::LoopAttrs{});
  {
    ValueRef x = element(j);
    ValueRef a = t.var_load(acc);
    switch (s.op) {
      case Reduction::Sum:
      case Reduction::Mean: t.var_store(acc, add(a, x)); break;
      case Reduction::Prod: t.var_store(acc, mul(a, x)); break;
      default: {
        // Larger (smaller), or NaN where the accumulator is not: NaN wins and stays.
        const bool larger = s.op == Reduction::Max || s.op == Reduction::ArgMax;
        ValueRef better = t.binary(larger ? ir::OpKind::Gt : ir::OpKind::Lt, x, a);
        if (ir::is_float(ty.acc)) {
          ValueRef x_nan = t.binary(ir::OpKind::Ne, x, x), a_nan = t.binary(ir::OpKind::Ne, a, a);
          better = t.binary(ir::OpKind::Or, better, t.binary(ir::OpKind::And, x_nan, t.unary(ir::OpKind::Not, a_nan)));
        }
        t.var_store(acc, t.select(better, x, a));
        if (is_arg(s.op)) t.var_store(where, t.select(better, j, t.var_load(where)));
      }
    }
  }
  t.end_for();
  ValueRef result = is_arg(s.op) ? t.var_load(where) : t.var_load(acc);
  if (s.op == Reduction::Mean) result = t.binary(ir::OpKind::Div, result, t.cast(inner, ty.acc));
  if (result.type.scalar != ty.out) result = t.cast(result, ty.out);
  t.store(out, out_off, result);
  t.end_then(in_range);
  t.finish();
  return k;
}

// `a` combined with the next value `x` (max and min: NaN wins and stays).
ValueRef combine(Tracer& t, Reduction op, const ValueRef& a, const ValueRef& x) {
  switch (op) {
    case Reduction::Sum:
    case Reduction::Mean: return t.binary(ir::OpKind::Add, a, x);
    case Reduction::Prod: return t.binary(ir::OpKind::Mul, a, x);
    default: {
      const bool larger = op == Reduction::Max;
      ValueRef better = t.binary(larger ? ir::OpKind::Gt : ir::OpKind::Lt, x, a);
      if (ir::is_float(a.type.scalar)) {
        ValueRef x_nan = t.binary(ir::OpKind::Ne, x, x), a_nan = t.binary(ir::OpKind::Ne, a, a);
        better = t.binary(ir::OpKind::Or, better, t.binary(ir::OpKind::And, x_nan, t.unary(ir::OpKind::Not, a_nan)));
      }
      return t.select(better, x, a);
    }
  }
}

constexpr uint32_t kSplitUnits = 256;
constexpr int kUnroll = 4;  // vectors loaded at once by a unit of a contiguous split reduction

// The bits of an integer type's lowest and highest values (bool: false and true).
int64_t lowest_bits(DType d) {
  return ir::visit_scalar(d, []<class T>() -> int64_t {
    if constexpr (ir::is_float_type<T>) return 0;  // not asked: float reductions start from +-inf
    else return int64_t(std::numeric_limits<T>::min());
  });
}
int64_t highest_bits(DType d) {
  return ir::visit_scalar(d, []<class T>() -> int64_t {
    if constexpr (ir::is_float_type<T>) return 0;
    else return int64_t(std::numeric_limits<T>::max());  // u64's wraps to -1, its bits
  });
}

// One stage of a split reduction (value reductions only). Cube c takes output c / parts and part
// c % parts of its `inner` elements (element j = part * 256 + unit, stepping by parts * 256).
// Parameters: in (kept walk, then reduced walk), dest (finish: the out tensor of kept_rank dims;
// else a buffer of count * parts partials in the accumulator's type), parts, inner, and for a
// finishing mean, the divisor.
struct SplitSpec {
  Reduction op;
  DType in, acc, out;
  int kept_rank, reduced_rank;
  bool finish;
  // 0: `in` is a strided tensor. 2 or 4: each output's elements are contiguous and `in` is a
  // buffer of vectors of `width` (16-byte loads); kept_rank is at most 1, the outputs `row`
  // vectors apart (a parameter before `inner`, which then counts vectors).
  int width = 0;
};

ir::Kernel record_split(const SplitSpec& s) {
  ir::Kernel k;
  // The vector kernels are named apart (tensor_sum_split_vec4): launch statistics tell them.
  k.name = std::string("tensor_") + name_of(s.op) + (s.finish ? "_parts" : "_split") +
           (s.width ? "_vec" + std::to_string(s.width) : "");
  Tracer t(k);
  const int rank = s.kept_rank + s.reduced_rank;
  ValueRef in = s.width ? t.param("in", ir::Type::buffer(ir::Type::vector_of(s.in, s.width), ir::Access::ReadOnly))
                        : t.param("in", ir::Type::tensor(ir::Type::scalar_of(s.in), rank, ir::Access::ReadOnly));
  ValueRef dest = s.finish ? t.param("out", ir::Type::tensor(ir::Type::scalar_of(s.out), std::max(s.kept_rank, 1),
                                                             ir::Access::ReadWrite))
                           : t.param("partials", ir::Type::buffer(ir::Type::scalar_of(s.acc), ir::Access::ReadWrite));
  ValueRef parts = t.param("parts", ir::Type::scalar_of(ir::Scalar::U32));
  ValueRef row;
  if (s.width) row = t.param("row", ir::Type::scalar_of(ir::Scalar::U32));
  ValueRef inner = t.param("inner", ir::Type::scalar_of(ir::Scalar::U32));
  ValueRef divisor;
  if (s.finish && s.op == Reduction::Mean) divisor = t.param("divisor", ir::Type::scalar_of(ir::Scalar::U32));
  auto u32 = [&](int64_t v) { return tensor::constant(t, DType::U32, double(v)); };
  auto mul = [&](const ValueRef& a, const ValueRef& b) { return t.binary(ir::OpKind::Mul, a, b); };
  auto add = [&](const ValueRef& a, const ValueRef& b) { return t.binary(ir::OpKind::Add, a, b); };

  ValueRef cube = t.builtin(ir::OpKind::CubePos, -1), unit = t.builtin(ir::OpKind::UnitPos, -1);
  ValueRef o = t.binary(ir::OpKind::Div, cube, parts), part = t.binary(ir::OpKind::Rem, cube, parts);
  // The output's coordinates (from the kept dims of `in`, or of `out` when `in` is a buffer).
  std::vector<ValueRef> kept =
      s.width ? (s.finish ? tensor::coordinates(t, o, dest, 0, s.kept_rank) : std::vector<ValueRef>{})
              : tensor::coordinates(t, o, in, 0, s.kept_rank);
  ValueRef in_off = s.width ? mul(o, row) : tensor::offset(t, in, kept, 0, ValueRef{});
  // Each part starts from the reduction's identity: for max and min, the type's far end.
  ValueRef acc = t.var_decl(ir::Type::scalar_of(s.acc));
  const bool extreme = s.op == Reduction::Max || s.op == Reduction::Min;
  ValueRef identity_value =
      extreme && !ir::is_float(s.acc)
          ? tensor::constant_bits(t, s.acc, s.op == Reduction::Max ? lowest_bits(s.acc) : highest_bits(s.acc))
          : tensor::constant(t, s.acc,
                             s.op == Reduction::Prod  ? 1.0
                             : s.op == Reduction::Max ? -INFINITY
                             : s.op == Reduction::Min ? INFINITY
                                                      : 0.0);
  t.var_store(acc, identity_value);
  ValueRef start = add(mul(part, u32(kSplitUnits)), unit), stride = mul(parts, u32(kSplitUnits));
  if (s.width) {
    // kUnroll vectors a step, `stride` apart, loaded before any is used: several loads in flight
    // per unit are what keeps the memory busy. Past the end a load reads the last vector and
    // counts as the identity.
    ValueRef last = t.binary(ir::OpKind::Sub, inner, u32(1));
    ValueRef j = t.begin_for(start, inner, mul(stride, u32(kUnroll)), dsl::LoopAttrs{});
    std::vector<ValueRef> vs, valid;
    for (int u = 0; u < kUnroll; ++u) {
      ValueRef jj = u == 0 ? j : add(j, mul(stride, u32(u)));
      valid.push_back(t.binary(ir::OpKind::Lt, jj, inner));
      vs.push_back(t.load(in, add(in_off, t.binary(ir::OpKind::Min, jj, last))));
    }
    for (int u = 0; u < kUnroll; ++u) {
      for (int lane = 0; lane < s.width; ++lane) {
        ValueRef x = t.vector_extract(vs[size_t(u)], lane);
        if (x.type.scalar != s.acc) x = t.cast(x, s.acc);
        if (u > 0) x = t.select(valid[size_t(u)], x, identity_value);
        t.var_store(acc, combine(t, s.op, t.var_load(acc), x));
      }
    }
    t.end_for();
  } else {
    ValueRef j = t.begin_for(start, inner, stride, dsl::LoopAttrs{});
    ValueRef off = tensor::offset(t, in, tensor::coordinates(t, j, in, s.kept_rank, rank), s.kept_rank, in_off);
    ValueRef x = t.load(in, off);
    if (x.type.scalar != s.acc) x = t.cast(x, s.acc);
    t.var_store(acc, combine(t, s.op, t.var_load(acc), x));
    t.end_for();
  }
  // The cube's values halved in shared memory: the same pairs on every device.
  ValueRef shared = t.alloc(ir::OpKind::SharedAlloc, ir::Type::scalar_of(s.acc), kSplitUnits);
  t.store(shared, unit, t.var_load(acc));
  t.sync(ir::OpKind::SyncCube);
  for (uint32_t half = kSplitUnits / 2; half >= 1; half /= 2) {
    size_t lower = t.begin_if(t.binary(ir::OpKind::Lt, unit, u32(half)));
    t.store(shared, unit, combine(t, s.op, t.load(shared, unit), t.load(shared, add(unit, u32(half)))));
    t.end_then(lower);
    t.sync(ir::OpKind::SyncCube);
  }
  size_t first = t.begin_if(t.binary(ir::OpKind::Eq, unit, u32(0)));
  ValueRef r = t.load(shared, u32(0));
  if (s.finish) {
    if (s.op == Reduction::Mean) r = t.binary(ir::OpKind::Div, r, t.cast(divisor, s.acc));
    if (r.type.scalar != s.out) r = t.cast(r, s.out);
    t.store(dest, tensor::offset(t, dest, kept, 0, ValueRef{}), r);
  } else {
    t.store(dest, cube, r);
  }
  t.end_then(first);
  t.finish();
  return k;
}

KernelRef split_kernel(const SplitSpec& s) {
  common::Key key;
  key("kernel", "tensor_split")("op", s.op)("in", s.in)("acc", s.acc)("out", s.out)("kept_rank", s.kept_rank)(
      "reduced_rank", s.reduced_rank)("finish", s.finish)("width", s.width);
  return tensor::cached_kernel(key, [&] { return record_split(s); });
}

// argmax and argmin split the same way, each unit, cube and part carrying a (value, position)
// pair; a tie goes to the lower position and NaN wins, so the answer is the one-unit kernel's.
// Parameters: in (kept walk, then reduced walk; from parts: [kept..., parts] of partial values),
// positions (from parts: the parts' positions, u32), dest (finish: the out tensor of i64; else a
// buffer of partial values), dest_positions (not finish: a u32 buffer), parts, inner.
struct ArgSplitSpec {
  Reduction op;
  DType in, acc;
  int kept_rank, reduced_rank;
  bool from_parts, finish;
};

ir::Kernel record_arg_split(const ArgSplitSpec& s) {
  ir::Kernel k;
  k.name = std::string("tensor_") + name_of(s.op) + (s.from_parts ? "_parts" : "_split");
  Tracer t(k);
  const int rank = s.kept_rank + s.reduced_rank;
  const ir::Type u32_type = ir::Type::scalar_of(ir::Scalar::U32);
  ValueRef in = t.param("in", ir::Type::tensor(ir::Type::scalar_of(s.in), rank, ir::Access::ReadOnly));
  ValueRef positions;
  if (s.from_parts) positions = t.param("positions", ir::Type::buffer(u32_type, ir::Access::ReadOnly));
  ValueRef dest = s.finish ? t.param("out", ir::Type::tensor(ir::Type::scalar_of(DType::I64), std::max(s.kept_rank, 1),
                                                             ir::Access::ReadWrite))
                           : t.param("partials", ir::Type::buffer(ir::Type::scalar_of(s.acc), ir::Access::ReadWrite));
  ValueRef dest_positions;
  if (!s.finish) dest_positions = t.param("partial_positions", ir::Type::buffer(u32_type, ir::Access::ReadWrite));
  ValueRef parts = t.param("parts", u32_type);
  ValueRef inner = t.param("inner", u32_type);
  auto u32 = [&](int64_t v) { return tensor::constant(t, DType::U32, double(v)); };
  auto mul = [&](const ValueRef& a, const ValueRef& b) { return t.binary(ir::OpKind::Mul, a, b); };
  auto add = [&](const ValueRef& a, const ValueRef& b) { return t.binary(ir::OpKind::Add, a, b); };
  auto both = [&](const ValueRef& a, const ValueRef& b) { return t.binary(ir::OpKind::And, a, b); };
  auto either = [&](const ValueRef& a, const ValueRef& b) { return t.binary(ir::OpKind::Or, a, b); };
  const ValueRef none = tensor::constant_bits(t, DType::U32, 0xffffffffll);
  const bool larger = s.op == Reduction::ArgMax;
  // Whether (vb, pb) replaces (va, pa): pa is none, or pb is not and vb is better (NaN over a
  // number) or ties at a lower position.
  auto takes = [&](const ValueRef& va, const ValueRef& pa, const ValueRef& vb, const ValueRef& pb) {
    ValueRef better = t.binary(larger ? ir::OpKind::Gt : ir::OpKind::Lt, vb, va);
    ValueRef tie = t.binary(ir::OpKind::Eq, vb, va);
    if (ir::is_float(s.acc)) {
      ValueRef a_nan = t.binary(ir::OpKind::Ne, va, va), b_nan = t.binary(ir::OpKind::Ne, vb, vb);
      better = either(better, both(b_nan, t.unary(ir::OpKind::Not, a_nan)));
      tie = either(tie, both(a_nan, b_nan));
    }
    ValueRef lower = t.binary(ir::OpKind::Lt, pb, pa);
    ValueRef b_real = t.binary(ir::OpKind::Ne, pb, none);
    return either(t.binary(ir::OpKind::Eq, pa, none), both(b_real, either(better, both(tie, lower))));
  };

  ValueRef cube = t.builtin(ir::OpKind::CubePos, -1), unit = t.builtin(ir::OpKind::UnitPos, -1);
  ValueRef o = t.binary(ir::OpKind::Div, cube, parts), part = t.binary(ir::OpKind::Rem, cube, parts);
  std::vector<ValueRef> kept = tensor::coordinates(t, o, in, 0, s.kept_rank);
  ValueRef in_off = tensor::offset(t, in, kept, 0, ValueRef{});
  ValueRef value = t.var_decl(ir::Type::scalar_of(s.acc)), where = t.var_decl(u32_type);
  t.var_store(value, tensor::constant(t, s.acc, 0));
  t.var_store(where, none);
  ValueRef j =
      t.begin_for(add(mul(part, u32(kSplitUnits)), unit), inner, mul(parts, u32(kSplitUnits)), dsl::LoopAttrs{});
  {
    ValueRef x =
        t.load(in, tensor::offset(t, in, tensor::coordinates(t, j, in, s.kept_rank, rank), s.kept_rank, in_off));
    if (x.type.scalar != s.acc) x = t.cast(x, s.acc);
    ValueRef at = s.from_parts ? t.load(positions, add(mul(o, inner), j)) : j;
    ValueRef a = t.var_load(value), pa = t.var_load(where);
    ValueRef take = takes(a, pa, x, at);
    t.var_store(value, t.select(take, x, a));
    t.var_store(where, t.select(take, at, pa));
  }
  t.end_for();
  ValueRef values = t.alloc(ir::OpKind::SharedAlloc, ir::Type::scalar_of(s.acc), kSplitUnits);
  ValueRef wheres = t.alloc(ir::OpKind::SharedAlloc, u32_type, kSplitUnits);
  t.store(values, unit, t.var_load(value));
  t.store(wheres, unit, t.var_load(where));
  t.sync(ir::OpKind::SyncCube);
  for (uint32_t half = kSplitUnits / 2; half >= 1; half /= 2) {
    size_t lower = t.begin_if(t.binary(ir::OpKind::Lt, unit, u32(half)));
    ValueRef other = add(unit, u32(half));
    ValueRef va = t.load(values, unit), pa = t.load(wheres, unit), vb = t.load(values, other),
             pb = t.load(wheres, other);
    ValueRef take = takes(va, pa, vb, pb);
    t.store(values, unit, t.select(take, vb, va));
    t.store(wheres, unit, t.select(take, pb, pa));
    t.end_then(lower);
    t.sync(ir::OpKind::SyncCube);
  }
  size_t first = t.begin_if(t.binary(ir::OpKind::Eq, unit, u32(0)));
  if (s.finish) {
    t.store(dest, tensor::offset(t, dest, kept, 0, ValueRef{}), t.cast(t.load(wheres, u32(0)), DType::I64));
  } else {
    t.store(dest, cube, t.load(values, u32(0)));
    t.store(dest_positions, cube, t.load(wheres, u32(0)));
  }
  t.end_then(first);
  t.finish();
  return k;
}

KernelRef arg_split_kernel(const ArgSplitSpec& s) {
  common::Key key;
  key("kernel", "tensor_arg_split")("op", s.op)("in", s.in)("kept_rank", s.kept_rank)("reduced_rank", s.reduced_rank)(
      "from_parts", s.from_parts)("finish", s.finish);
  return tensor::cached_kernel(key, [&] { return record_arg_split(s); });
}

// Outputs enough to fill a GPU with one unit each; fewer, of long reductions, split.
constexpr int64_t kSplitBelowOutputs = 65536;
constexpr int64_t kSplitFromElements = 1024;
constexpr int64_t kElementsPerPart = 8192;
constexpr int64_t kMaxParts = 1024;

Tensor reduce(Reduction op, const Tensor& x, std::vector<int64_t> dims, bool keepdim) {
  const char* name = name_of(op);
  if (!x.defined())
    throw Error("tensor.undefined", std::string(name) + ": the tensor is empty (moved from, or never set)");
  tensor::check_supported(name, x.dtype());
  if (op == Reduction::Mean && !ir::is_float(x.dtype())) {
    throw Error("tensor.unsupported_dtype", std::string(name) +
                                                " takes floating-point tensors (f16, bf16, f32, f64), not " +
                                                std::string(ir::scalar_name(x.dtype())) + "; cast first");
  }
  const size_t rank = size_t(x.rank());
  std::vector<bool> reduced(rank, dims.empty());
  for (int64_t d : dims) {
    int64_t i = d < 0 ? d + int64_t(rank) : d;
    if (i < 0 || i >= int64_t(rank)) {
      throw Error("tensor.bad_dim", std::string(name) + ": dim " + std::to_string(d) + " is outside a tensor of rank " +
                                        std::to_string(rank));
    }
    if (reduced[size_t(i)])
      throw Error("tensor.bad_dim", std::string(name) + ": dim " + std::to_string(d) + " appears twice");
    reduced[size_t(i)] = true;
  }
  Shape out_shape, kept_shape;
  tensor::Dims kept_in, red_shape, red_in;
  int64_t n_reduced = 1;
  for (size_t i = 0; i < rank; ++i) {
    if (reduced[i]) {
      red_shape.push_back(x.shape()[i]);
      red_in.push_back(x.strides()[i]);
      n_reduced *= x.shape()[i];
      if (keepdim) out_shape.push_back(1);
    } else {
      kept_shape.push_back(x.shape()[i]);
      kept_in.push_back(x.strides()[i]);
      out_shape.push_back(x.shape()[i]);
    }
  }
  const Types ty = types_of(op, x.dtype());
  Tensor out = tensor::allocate(x.client(), out_shape, contiguous_strides(out_shape), ty.out);
  if (out.numel() == 0) return out;
  if (n_reduced == 0) {
    if (op != Reduction::Sum && op != Reduction::Prod && op != Reduction::Mean) {
      throw Error("tensor.empty_reduction", std::string(name) + ": the reduced dims of " + to_string(x.shape()) +
                                                " hold no element; there is no " + (is_arg(op) ? "position" : "value") +
                                                " to give");
    }
  }

  // The kept dims in the output's (row-major) order, folded with the output's strides; the reduced
  // dims in memory order for values, logical order for positions, folded alone.
  const tensor::Dims kept_out(contiguous_strides(kept_shape));
  std::array<tensor::Dims, 2> kept_strides = {kept_in, kept_out};
  tensor::Walk kept = tensor::Walk::in_order(kept_shape, kept_strides, tensor::row_major_order(kept_shape.size()));
  kept.fold();
  std::array<tensor::Dims, 1> red_strides = {red_in};
  tensor::Walk red = tensor::Walk::in_order(
      red_shape, red_strides,
      is_arg(op) ? tensor::row_major_order(red_shape.size()) : tensor::memory_order(red_shape, red_in));
  red.fold();

  tensor::Dims in_shape = kept.shape, in_strides = kept.strides[0];
  for (size_t i = 0; i < red.shape.size(); ++i) {
    in_shape.push_back(red.shape[i]);
    in_strides.push_back(red.strides[0][i]);
  }
  const int kept_rank = int(kept.shape.size()), reduced_rank = int(red.shape.size());
  TensorBinding bin = tensor::binding(x.handle(), in_shape, in_strides, name);
  TensorBinding bout = tensor::binding(out.handle(), kept.shape, kept.strides[1], name);
  const uint32_t count = tensor::checked_u32(out.numel(), name, "outputs");
  const uint32_t inner = tensor::checked_u32(n_reduced, name, "reduced elements");
  const bool splits =
      out.numel() < kSplitBelowOutputs && n_reduced >= kSplitFromElements && n_reduced < (int64_t(1) << 31);
  if (splits && is_arg(op)) {
    const int64_t parts = std::clamp<int64_t>(n_reduced / kElementsPerPart, 1, kMaxParts);
    LaunchConfig config;
    config.dim = CubeDim{kSplitUnits};
    config.count = CubeCount{tensor::checked_u32(int64_t(count) * parts, name, "cubes")};
    if (parts == 1) {
      launch(x.client(), arg_split_kernel({op, x.dtype(), ty.acc, kept_rank, reduced_rank, false, true}), config,
             {bin, bout, uint32_t(1), inner});
      return out;
    }
    Tensor partials = tensor::allocate(x.client(), {int64_t(count) * parts}, {1}, ty.acc);
    Tensor positions = tensor::allocate(x.client(), {int64_t(count) * parts}, {1}, DType::U32);
    launch(x.client(), arg_split_kernel({op, x.dtype(), ty.acc, kept_rank, reduced_rank, false, false}), config,
           {bin, partials.handle(), positions.handle(), uint32_t(parts), inner});
    tensor::Dims p_shape = kept.shape, p_strides;
    p_shape.push_back(parts);
    const Strides ps = contiguous_strides(Shape(p_shape.span().begin(), p_shape.span().end()));
    for (int64_t st : ps) p_strides.push_back(st);
    TensorBinding bparts = tensor::binding(partials.handle(), p_shape, p_strides, name);
    config.count = CubeCount{count};
    launch(x.client(), arg_split_kernel({op, ty.acc, ty.acc, kept_rank, 1, true, true}), config,
           {bparts, positions.handle(), bout, uint32_t(1), uint32_t(parts)});
    return out;
  }
  if (splits) {
    const int64_t parts = std::clamp<int64_t>(n_reduced / kElementsPerPart, 1, kMaxParts);
    auto config = [&](int64_t cubes) {
      LaunchConfig c;
      c.dim = CubeDim{kSplitUnits};
      c.count = CubeCount{tensor::checked_u32(cubes, name, "cubes")};
      return c;
    };
    // Each output's elements contiguous, the rows and the start on whole vectors: 16-byte loads.
    int width = 0;
    if (red.shape.size() == 1 && red.strides[0][0] == 1 && kept.shape.size() <= 1) {
      // (A kept walk of one output, such as a whole-tensor sum's [1], has no row step to align.)
      const int64_t row = kept.shape.empty() || kept.shape[0] == 1 ? 0 : kept.strides[0][0];
      const int bytes = ir::scalar_bytes(x.dtype());
      for (int w = std::min(4, 16 / bytes); w > 1 && !width; w /= 2) {
        if (n_reduced % w == 0 && row % w == 0 && x.handle().address() % uint64_t(w * bytes) == 0) width = w;
      }
    }
    Handle vectors;
    uint32_t row_vectors = 0, inner_vectors = inner;
    if (width) {
      const size_t bytes = size_t(ir::scalar_bytes(x.dtype()));
      const size_t reach =
          size_t((kept.shape.empty() ? 0 : (kept.shape[0] - 1) * kept.strides[0][0]) + n_reduced) * bytes;
      vectors = x.handle().offset_end(x.handle().size_in_used() - reach);
      row_vectors = kept.shape.empty() || kept.shape[0] == 1 ? 0 : uint32_t(kept.strides[0][0] / width);
      inner_vectors = uint32_t(n_reduced / width);
    }
    auto first_args = [&](const Arg& dest, uint32_t n_parts) {
      if (width) return std::vector<Arg>{vectors, dest, n_parts, row_vectors, inner_vectors};
      return std::vector<Arg>{bin, dest, n_parts, inner};
    };
    if (parts == 1) {
      std::vector<Arg> args = first_args(bout, 1);
      if (op == Reduction::Mean) args.push_back(inner);
      launch(x.client(), split_kernel({op, x.dtype(), ty.acc, ty.out, kept_rank, reduced_rank, true, width}),
             config(count), args);
      return out;
    }
    // The parts, [count, parts] in the accumulator's type, then one cube per output combines them.
    Tensor partials = tensor::allocate(x.client(), {int64_t(count) * parts}, {1}, ty.acc);
    launch(x.client(), split_kernel({op, x.dtype(), ty.acc, ty.out, kept_rank, reduced_rank, false, width}),
           config(int64_t(count) * parts), first_args(partials.handle(), uint32_t(parts)));
    tensor::Dims p_shape = kept.shape, p_strides;
    p_shape.push_back(parts);
    const Strides ps = contiguous_strides(Shape(p_shape.span().begin(), p_shape.span().end()));
    for (int64_t st : ps) p_strides.push_back(st);
    TensorBinding bparts = tensor::binding(partials.handle(), p_shape, p_strides, name);
    std::vector<Arg> args = {bparts, bout, uint32_t(1), uint32_t(parts)};
    if (op == Reduction::Mean) args.push_back(inner);
    launch(x.client(), split_kernel({op, ty.acc, ty.acc, ty.out, kept_rank, 1, true}), config(count), args);
    return out;
  }
  const ReduceSpec spec{op, x.dtype(), kept_rank, reduced_rank};
  common::Key key;
  key("kernel", "tensor_reduce")("op", op)("dtype", x.dtype())("kept_rank", spec.kept_rank)("reduced_rank",
                                                                                            spec.reduced_rank);
  KernelRef kernel = tensor::cached_kernel(key, [&] { return record_reduce(spec); });
  launch(x.client(), kernel, tensor::linear_config(count), {bin, bout, count, inner});
  return out;
}

}  // namespace

Tensor sum(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim) {
  return reduce(Reduction::Sum, t, dims, keepdim);
}
Tensor prod(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim) {
  return reduce(Reduction::Prod, t, dims, keepdim);
}
Tensor mean(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim) {
  return reduce(Reduction::Mean, t, dims, keepdim);
}
Tensor amax(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim) {
  return reduce(Reduction::Max, t, dims, keepdim);
}
Tensor amin(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim) {
  return reduce(Reduction::Min, t, dims, keepdim);
}
Tensor argmax(const Tensor& t, int64_t dim, bool keepdim) { return reduce(Reduction::ArgMax, t, {dim}, keepdim); }
Tensor argmin(const Tensor& t, int64_t dim, bool keepdim) { return reduce(Reduction::ArgMin, t, {dim}, keepdim); }

}  // namespace kiln
