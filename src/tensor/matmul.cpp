// matmul: batched and strided. Operands are read through their strides (a transposed operand is
// no copy); batch dims broadcast; an rhs that is the same matrix for every batch turns the batch
// into rows of one larger product when the lhs's rows allow it. The kernel is autotune's choice
// among the candidates that can compute the call: the tile layer's block products and the
// one-unit-per-element kernel.
#include "kiln/tensor/matmul.h"

#include <algorithm>

#include "common/key.h"
#include "tensor/kernels.h"
#include "tensor/layout.h"
#include "tensor/matmul_plan.h"
#include "tensor/support.h"

namespace kiln {

namespace tensor {

namespace {

using dsl::Tracer;
using dsl::ValueRef;

// One unit per output element; the batch walk has `batch_rank` dims (the out tensor's leading
// ones), then rows and columns. k runs in a loop; f16 and bf16 sum in f32.
ir::Kernel record_matmul(DType dtype, int batch_rank) {
  ir::Kernel k;
  k.name = "tensor_matmul";
  Tracer t(k);
  const int rank = batch_rank + 2;
  ir::Type element = ir::Type::scalar_of(dtype);
  ValueRef a = t.param("lhs", ir::Type::tensor(element, rank, ir::Access::ReadOnly));
  ValueRef b = t.param("rhs", ir::Type::tensor(element, rank, ir::Access::ReadOnly));
  ValueRef out = t.param("out", ir::Type::tensor(element, rank, ir::Access::ReadWrite));
  ValueRef count = t.param("count", ir::Type::scalar_of(ir::Scalar::U32));
  ValueRef inner = t.param("inner", ir::Type::scalar_of(ir::Scalar::U32));
  const DType acc_type = ir::compute_scalar(dtype);

  ValueRef pos = t.builtin(ir::OpKind::AbsolutePos, -1);
  size_t in_range = t.begin_if(t.binary(ir::OpKind::Lt, pos, count));
  auto stride = [&](const ValueRef& x, int d) { return t.tensor_meta(ir::OpKind::TensorStride, x, d); };
  auto mul = [&](const ValueRef& x, const ValueRef& y) { return t.binary(ir::OpKind::Mul, x, y); };
  auto add = [&](const ValueRef& x, const ValueRef& y) { return t.binary(ir::OpKind::Add, x, y); };
  // Coordinates over the output: the batch dims, then row and column.
  std::vector<ValueRef> coord = tensor::coordinates(t, pos, out, 0, rank);
  const ValueRef row = coord[size_t(batch_rank)], col = coord[size_t(batch_rank + 1)];
  ValueRef a_base = mul(row, stride(a, batch_rank)), b_base = mul(col, stride(b, batch_rank + 1));
  ValueRef o_off = add(mul(row, stride(out, batch_rank)), mul(col, stride(out, batch_rank + 1)));
  for (int d = 0; d < batch_rank; ++d) {
    a_base = add(a_base, mul(coord[size_t(d)], stride(a, d)));
    b_base = add(b_base, mul(coord[size_t(d)], stride(b, d)));
    o_off = add(o_off, mul(coord[size_t(d)], stride(out, d)));
  }
  ValueRef a_step = stride(a, batch_rank + 1), b_step = stride(b, batch_rank);
  ValueRef acc = t.var_decl(ir::Type::scalar_of(acc_type));
  t.var_store(acc, ir::is_float(acc_type) ? t.constant(ir::Type::scalar_of(acc_type), ir::AttrValue::of_float(0))
                                          : t.constant(ir::Type::scalar_of(acc_type), ir::AttrValue::of_int(0)));
  ValueRef zero = t.constant(ir::Type::scalar_of(ir::Scalar::U32), ir::AttrValue::of_int(0));
  ValueRef one = t.constant(ir::Type::scalar_of(ir::Scalar::U32), ir::AttrValue::of_int(1));
  ValueRef kk = t.begin_for(zero, inner, one, dsl::LoopAttrs{});
  {
    ValueRef x = t.load(a, add(a_base, mul(kk, a_step)));
    ValueRef y = t.load(b, add(b_base, mul(kk, b_step)));
    if (acc_type != dtype) x = t.cast(x, acc_type), y = t.cast(y, acc_type);
    t.var_store(acc, ir::is_float(acc_type) ? t.fma(x, y, t.var_load(acc)) : add(mul(x, y), t.var_load(acc)));
  }
  t.end_for();
  ValueRef result = t.var_load(acc);
  if (acc_type != dtype) result = t.cast(result, dtype);
  t.store(out, o_off, result);
  t.end_then(in_range);
  t.finish();
  return k;
}

KernelRef matmul_kernel(DType dtype, int batch_rank) {
  return tensor::cached_kernel(common::Key()("kernel", "tensor_matmul")("dtype", dtype)("batch_rank", batch_rank),
                               [&] { return record_matmul(dtype, batch_rank); });
}

}  // namespace

int64_t MatmulPlan::products() const {
  int64_t p = 1;
  for (int64_t d : batch.span()) p *= d;
  return p;
}

MatmulPlan plan_matmul(const Tensor& lhs, const Tensor& rhs, const Shape& out_shape) {
  MatmulPlan p;
  p.dtype = lhs.dtype();
  const int64_t m = lhs.shape()[size_t(lhs.rank() - 2)];
  p.k = lhs.shape()[size_t(lhs.rank() - 1)];
  p.n = rhs.shape()[size_t(rhs.rank() - 1)];
  const Shape batch(out_shape.begin(), out_shape.end() - 2);
  // The three operands as [batch..., rows, cols] with their strides.
  auto full_strides = [&](const Tensor& t) {
    const size_t r = size_t(t.rank());
    Dims b = broadcast_strides(std::span(t.shape()).first(r - 2), std::span(t.strides()).first(r - 2), batch);
    b.push_back(t.strides()[r - 2]);
    b.push_back(t.strides()[r - 1]);
    return b;
  };
  const Dims sa = full_strides(lhs), sb = full_strides(rhs), so(contiguous_strides(out_shape));
  const size_t nb = batch.size();
  // The batch dims, folded where all three operands allow.
  const std::array<Dims, 3> batch_strides = {Dims(sa.span().first(nb)), Dims(sb.span().first(nb)),
                                             Dims(so.span().first(nb))};
  Walk walk = Walk::in_order(batch, batch_strides, row_major_order(nb));
  walk.fold();
  if (walk.shape.size() == 1 && walk.shape[0] == 1) {  // no batch at all
    walk.shape = {};
    for (Dims& st : walk.strides) st = {};
  }
  // Batch dims the rhs does not move along become rows of the lhs and the output, where their
  // strides continue the rows': one larger product.
  int64_t rows = m;
  const int64_t a_row = sa[nb], o_row = so[nb];
  while (!walk.shape.empty() && walk.strides[1].back() == 0 && walk.strides[0].back() == rows * a_row &&
         walk.strides[2].back() == rows * o_row) {
    rows *= walk.shape.back();
    walk.shape.pop_back();
    for (size_t o = 0; o < 3; ++o) walk.strides[o].pop_back();
  }
  p.rows = rows;
  p.batch = walk.shape;
  for (size_t o = 0; o < 3; ++o) p.batch_strides[o] = walk.strides[o];
  p.matrix_strides = {{{a_row, sa[nb + 1]}, {sb[nb], sb[nb + 1]}, {o_row, so[nb + 1]}}};
  return p;
}

std::vector<autotune::Candidate> matmul_candidates(const MatmulPlan& p, const Tensor& lhs, const Tensor& rhs,
                                                   const Tensor* out, size_t* fallback) {
  std::vector<autotune::Candidate> c;
  size_t preferred = SIZE_MAX;
  add_tile_candidates(p, lhs, rhs, out, c, &preferred);
  *fallback = preferred < c.size() ? preferred : c.size();
  if (!out) {
    c.push_back({"naive", nullptr});
    return c;
  }
  // The one-unit-per-element kernel: the walk is the batch dims, then rows and columns.
  const int batch_rank = int(p.batch.size());
  Dims kshape = p.batch, ka = p.batch_strides[0], kb = p.batch_strides[1], ko = p.batch_strides[2];
  kshape.push_back(p.rows);
  kshape.push_back(p.n);
  for (int i = 0; i < 2; ++i) {
    ka.push_back(p.matrix_strides[0][size_t(i)]);
    kb.push_back(p.matrix_strides[1][size_t(i)]);  // the rhs's row slot holds its k stride
    ko.push_back(p.matrix_strides[2][size_t(i)]);
  }
  const int64_t count = p.products() * p.rows * p.n;
  // In the kernel, the rhs is read at k * stride[batch_rank] + col * stride[batch_rank + 1]. Its
  // 32-bit limits are checked when it runs, so that a call past them fails this candidate alone
  // (the tile products may still take it).
  Client client = out->client();
  Handle ha = lhs.handle(), hb = rhs.handle(), ho = out->handle();
  const int64_t inner = p.k;
  const DType dtype = p.dtype;
  c.push_back({"naive", [client, dtype, batch_rank, ha, hb, ho, kshape, ka, kb, ko, count, inner] {
                 const char* op = "matmul";
                 KernelRef kernel = matmul_kernel(dtype, batch_rank);
                 TensorBinding ba = binding(ha, kshape.span(), ka.span(), op),
                               bb = binding(hb, kshape.span(), kb.span(), op),
                               bo = binding(ho, kshape.span(), ko.span(), op);
                 launch(client, kernel, linear_config(count),
                        {ba, bb, bo, checked_u32(count, op, "elements"), checked_u32(inner, op, "as the inner size")});
               }});
  return c;
}

bool naive_is_tuned(const MatmulPlan& p, size_t tiles) {
  constexpr int64_t kLargeProduct = int64_t(1) << 24;  // multiply-adds
  return tiles == 0 || p.products() * p.rows * p.n * p.k < kLargeProduct;
}

}  // namespace tensor

namespace {

Shape checked_out_shape(const Tensor& lhs, const Tensor& rhs) {
  const char* op = "matmul";
  if (!lhs.defined() || !rhs.defined()) throw Error("tensor.undefined", "matmul: an operand is an empty Tensor");
  if (lhs.rank() < 2 || rhs.rank() < 2) {
    throw Error("tensor.shape_mismatch", "matmul: takes tensors of rank 2 or more; the shapes are " +
                                             to_string(lhs.shape()) + " and " + to_string(rhs.shape()));
  }
  if (lhs.dtype() != rhs.dtype()) {
    throw Error("tensor.dtype_mismatch", "matmul: operands are " + std::string(ir::scalar_name(lhs.dtype())) + " and " +
                                             std::string(ir::scalar_name(rhs.dtype())) + "; cast one of them");
  }
  if (lhs.client().id() != rhs.client().id()) {
    throw Error("tensor.device_mismatch", "matmul: operands live on different devices; move one with to_device()");
  }
  tensor::check_supported(op, lhs.dtype());
  if (lhs.dtype() == DType::Bool) throw Error("tensor.unsupported_dtype", "matmul does not take bool tensors");
  const int64_t m = lhs.shape()[size_t(lhs.rank() - 2)], kdim = lhs.shape()[size_t(lhs.rank() - 1)];
  const int64_t k2 = rhs.shape()[size_t(rhs.rank() - 2)], n = rhs.shape()[size_t(rhs.rank() - 1)];
  if (kdim != k2) {
    throw Error("tensor.shape_mismatch", "matmul: the inner sizes differ: " + to_string(lhs.shape()) + " x " +
                                             to_string(rhs.shape()) + " (lhs has " + std::to_string(kdim) +
                                             " columns, rhs " + std::to_string(k2) + " rows)");
  }
  const Shape lhs_batch(lhs.shape().begin(), lhs.shape().end() - 2),
      rhs_batch(rhs.shape().begin(), rhs.shape().end() - 2);
  Shape out_shape = tensor::broadcast_shapes(lhs_batch, rhs_batch, op);
  out_shape.push_back(m);
  out_shape.push_back(n);
  return out_shape;
}

// Autotune's key: the element type, the sizes in buckets, and each operand's layout (which
// decides the candidates).
autotune::Key matmul_key(const tensor::MatmulPlan& p, const std::vector<autotune::Candidate>& c) {
  auto layout = [](const auto& s) { return s[1] == 1 ? "rows" : s[0] == 1 ? "columns" : "strided"; };
  const std::string facts =
      common::KeyText("")("dtype", p.dtype)("batch", autotune::bucket(p.products()))("m", autotune::bucket(p.rows))(
          "n", autotune::bucket(p.n))("k", autotune::bucket(p.k))("lhs", layout(p.matrix_strides[0]))(
          "rhs", layout(p.matrix_strides[1]))("variants", c.size())
          .text();
  return {"matmul", facts};
}

}  // namespace

Tensor matmul(const Tensor& lhs, const Tensor& rhs) { return matmul(lhs, rhs, ""); }

Tensor matmul(const Tensor& lhs, const Tensor& rhs, std::string_view variant) {
  Shape out_shape = checked_out_shape(lhs, rhs);
  Tensor out = tensor::allocate(lhs.client(), out_shape, contiguous_strides(out_shape), lhs.dtype());
  auto refuse = [&](const std::string& names) {
    return Error("tensor.bad_variant", "matmul: no variant '" + std::string(variant) + "' for " +
                                           to_string(lhs.shape()) + " x " + to_string(rhs.shape()) + " " +
                                           std::string(ir::scalar_name(lhs.dtype())) + "; this call has " + names);
  };
  if (out.numel() == 0) {
    if (!variant.empty() && variant != "naive") throw refuse("naive");
    return out;
  }
  tensor::MatmulPlan p = tensor::plan_matmul(lhs, rhs, out_shape);
  size_t fallback = 0;
  std::vector<autotune::Candidate> c = tensor::matmul_candidates(p, lhs, rhs, &out, &fallback);
  size_t chosen = c.size();
  if (!variant.empty()) {
    for (size_t i = 0; i < c.size(); ++i) {
      if (c[i].name == variant) chosen = i;
    }
    if (chosen == c.size()) {
      std::string names;
      for (const autotune::Candidate& cand : c) names += (names.empty() ? "" : ", ") + cand.name;
      throw refuse(names);
    }
  }
  if (p.k == 0) {  // no products: zeros, which the naive kernel writes
    c.back().run();
  } else if (variant.empty()) {
    if (!tensor::naive_is_tuned(p, c.size() - 1)) c.pop_back();  // naive is last; the fallback is then a tile product
    autotune::run(lhs.client(), matmul_key(p, c), c, fallback);
  } else {
    c[chosen].run();
  }
  return out;
}

std::vector<std::string> matmul_variants(const Tensor& lhs, const Tensor& rhs) {
  Shape out_shape = checked_out_shape(lhs, rhs);
  int64_t numel = 1;
  for (int64_t d : out_shape) numel *= d;
  if (numel == 0) return {"naive"};
  tensor::MatmulPlan p = tensor::plan_matmul(lhs, rhs, out_shape);
  size_t fallback = 0;
  std::vector<std::string> names;
  for (const autotune::Candidate& cand : tensor::matmul_candidates(p, lhs, rhs, nullptr, &fallback))
    names.push_back(cand.name);
  return names;
}

}  // namespace kiln
