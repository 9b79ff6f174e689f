// Reductions: one unit per output element walks the reduced elements in a loop. The kept dims and
// the reduced dims are each folded where the input's strides allow; value reductions walk the
// reduced elements in memory order, position reductions (argmax) in logical order.
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
  const bool half = in == DType::F16 || in == DType::BF16;
  switch (r) {
    case Reduction::Sum:
    case Reduction::Prod:
      if (ir::is_float(in)) return {half ? DType::F32 : in, in};
      return {DType::I64, DType::I64};
    case Reduction::Mean: return {half ? DType::F32 : in, in};
    case Reduction::Max:
    case Reduction::Min: return {half ? DType::F32 : in, in};
    case Reduction::ArgMax:
    case Reduction::ArgMin: return {half ? DType::F32 : in, DType::I64};
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
  ValueRef out = t.param("out", ir::Type::tensor(ir::Type::scalar_of(ty.out), std::max(s.kept_rank, 1), ir::Access::ReadWrite));
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

Tensor reduce(Reduction op, const Tensor& x, std::vector<int64_t> dims, bool keepdim) {
  const char* name = name_of(op);
  if (!x.defined()) throw Error("tensor.undefined", std::string(name) + ": the tensor is empty (moved from, or never set)");
  tensor::check_supported(name, x.dtype());
  if (op == Reduction::Mean && !ir::is_float(x.dtype())) {
    throw Error("tensor.unsupported_dtype", std::string(name) + " takes floating-point tensors (f16, bf16, f32, f64), not " +
                                                std::string(ir::scalar_name(x.dtype())) + "; cast first");
  }
  const size_t rank = size_t(x.rank());
  std::vector<bool> reduced(rank, dims.empty());
  for (int64_t d : dims) {
    int64_t i = d < 0 ? d + int64_t(rank) : d;
    if (i < 0 || i >= int64_t(rank)) {
      throw Error("tensor.bad_dim", std::string(name) + ": dim " + std::to_string(d) + " is outside a tensor of rank " + std::to_string(rank));
    }
    if (reduced[size_t(i)]) throw Error("tensor.bad_dim", std::string(name) + ": dim " + std::to_string(d) + " appears twice");
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
                                                " hold no element; there is no " + (is_arg(op) ? "position" : "value") + " to give");
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
      red_shape, red_strides, is_arg(op) ? tensor::row_major_order(red_shape.size()) : tensor::memory_order(red_shape, red_in));
  red.fold();

  tensor::Dims in_shape = kept.shape, in_strides = kept.strides[0];
  for (size_t i = 0; i < red.shape.size(); ++i) {
    in_shape.push_back(red.shape[i]);
    in_strides.push_back(red.strides[0][i]);
  }
  const ReduceSpec spec{op, x.dtype(), int(kept.shape.size()), int(red.shape.size())};
  KernelRef kernel = tensor::cached_kernel(std::string("tensor_") + name + "/" + std::string(ir::scalar_name(x.dtype())) + "/" +
                                               std::to_string(spec.kept_rank) + "/" + std::to_string(spec.reduced_rank),
                                           [&] { return record_reduce(spec); });
  TensorBinding bin = tensor::binding(x.handle(), in_shape, in_strides, name);
  TensorBinding bout = tensor::binding(out.handle(), kept.shape, kept.strides[1], name);
  const uint32_t count = tensor::checked_u32(out.numel(), name, "outputs");
  launch(x.client(), kernel, tensor::linear_config(count),
         {bin, bout, count, tensor::checked_u32(n_reduced, name, "reduced elements")});
  return out;
}

}  // namespace

Tensor sum(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim) { return reduce(Reduction::Sum, t, dims, keepdim); }
Tensor prod(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim) { return reduce(Reduction::Prod, t, dims, keepdim); }
Tensor mean(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim) { return reduce(Reduction::Mean, t, dims, keepdim); }
Tensor amax(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim) { return reduce(Reduction::Max, t, dims, keepdim); }
Tensor amin(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim) { return reduce(Reduction::Min, t, dims, keepdim); }
Tensor argmax(const Tensor& t, int64_t dim, bool keepdim) { return reduce(Reduction::ArgMax, t, {dim}, keepdim); }
Tensor argmin(const Tensor& t, int64_t dim, bool keepdim) { return reduce(Reduction::ArgMin, t, {dim}, keepdim); }

}  // namespace kiln
