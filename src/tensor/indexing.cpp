// gather, scatter, select (index_select) and select_assign. Two kernels do the work: a gather
// (each output element reads the source at the position its index names) and an additive scatter
// (each output element adds every value whose index names it: deterministic, no atomics). select
// and select_assign are the same kernels with the 1-D index tensor seen at every other position
// through stride 0. Before either runs, a validation kernel checks every index against the size
// of its dim and records the first bad one in the client's device error word, and marks the word
// with the op's ticket (a number each validated op draws); the op's kernel reads the mark first and
// writes nothing when its own validation failed. Ops after a failed one, good or bad, are judged
// by their own tickets: a good one runs, a bad one writes nothing and is counted in the report.
#include "kiln/tensor/indexing.h"

#include <array>
#include <atomic>
#include <map>
#include <mutex>

#include "kiln/runtime/launch.h"
#include "kiln/tensor/ops.h"
#include "tensor/kernels.h"
#include "tensor/layout.h"
#include "tensor/support.h"

namespace kiln {

namespace {

using dsl::Tracer;
using dsl::ValueRef;

ValueRef u32c(Tracer& t, int64_t v) { return tensor::constant_bits(t, DType::U32, v); }

// The device error site of an op: "select_assign: index 2 is out of range for dim 1 of size 2".
uint32_t site_of(const char* op) {
  static std::mutex mutex;
  static auto* sites = new std::map<std::string, uint32_t>();
  std::lock_guard<std::mutex> lock(mutex);
  auto it = sites->find(op);
  if (it != sites->end()) return it->second;
  std::string name = op;
  uint32_t code = Client::register_device_error_site(
      {"tensor.index_out_of_range", [name](const std::array<uint32_t, Client::kDeviceErrorValues>& v) {
         const int64_t index = int64_t(uint64_t(v[1]) | uint64_t(v[2]) << 32),
                       size = int64_t(uint64_t(v[3]) | uint64_t(v[4]) << 32);
         std::string more = v[5] > 1 ? " (and " + std::to_string(v[5] - 1) +
                                           " later index op(s) since the last check found bad " +
                                           "indices too; none of them wrote anything)"
                                     : "";
         return name + ": index " + std::to_string(index) + " is out of range for dim " + std::to_string(v[0]) +
                " of size " + std::to_string(size) + "; nothing was written" + more;
       }});
  return (*sites)[name] = code;
}

// Validation: unit i checks indices[i] (a contiguous buffer) against [0, size). The first bad index
// of all goes into the word: [site, dim, index lo, index hi, size lo, size hi]; word[6] counts the
// ops that found one, word[7] holds the ticket of the last of them.
ir::Kernel record_validate(DType index_type) {
  ir::Kernel k;
  k.name = "tensor_check_indices";
  Tracer t(k);
  ValueRef idx = t.param("indices", ir::Type::buffer(ir::Type::scalar_of(index_type), ir::Access::ReadOnly));
  ValueRef word = t.param("word", ir::Type::buffer(ir::Type::scalar_of(ir::Scalar::U32), ir::Access::ReadWrite));
  ValueRef count = t.param("count", ir::Type::scalar_of(ir::Scalar::U32));
  ValueRef size = t.param("size", ir::Type::scalar_of(ir::Scalar::I64));
  ValueRef dim = t.param("dim", ir::Type::scalar_of(ir::Scalar::U32));
  ValueRef site = t.param("site", ir::Type::scalar_of(ir::Scalar::U32));
  ValueRef ticket = t.param("ticket", ir::Type::scalar_of(ir::Scalar::U32));
  ValueRef pos = t.builtin(ir::OpKind::AbsolutePos, -1);
  size_t in_range = t.begin_if(t.binary(ir::OpKind::Lt, pos, count));
  ValueRef v = t.load(idx, pos);
  if (index_type != DType::I64) v = t.cast(v, ir::Scalar::I64);
  ValueRef zero = t.constant(ir::Type::scalar_of(ir::Scalar::I64), ir::AttrValue::of_int(0));
  ValueRef bad = t.binary(ir::OpKind::Or, t.binary(ir::OpKind::Lt, v, zero), t.binary(ir::OpKind::Ge, v, size));
  size_t if_bad = t.begin_if(bad);
  // The op's mark; the first unit of this op to set it counts the op.
  ValueRef marked = t.atomic(ir::OpKind::AtomicExchange, word, u32c(t, 7), ticket);
  size_t first_of_op = t.begin_if(t.binary(ir::OpKind::Ne, marked, ticket));
  (void)t.atomic(ir::OpKind::AtomicAdd, word, u32c(t, 6), u32c(t, 1));
  t.end_then(first_of_op);
  ValueRef old = t.atomic(ir::OpKind::AtomicCas, word, u32c(t, 0), u32c(t, 0), &site);
  size_t first = t.begin_if(t.binary(ir::OpKind::Eq, old, u32c(t, 0)));
  auto lo = [&](const ValueRef& x) { return t.cast(x, ir::Scalar::U32); };
  auto hi = [&](const ValueRef& x) {
    return t.cast(t.binary(ir::OpKind::Shr, t.bitcast(x, ir::Scalar::U64),
                           t.constant(ir::Type::scalar_of(ir::Scalar::U64), ir::AttrValue::of_int(32))),
                  ir::Scalar::U32);
  };
  t.store(word, u32c(t, 1), dim);
  t.store(word, u32c(t, 2), lo(v));
  t.store(word, u32c(t, 3), hi(v));
  t.store(word, u32c(t, 4), lo(size));
  t.store(word, u32c(t, 5), hi(size));
  t.end_then(first);
  t.end_then(if_bad);
  t.end_then(in_range);
  t.finish();
  return k;
}

// Each validated op's ticket: never 0 (an unmarked word).
uint32_t next_ticket() {
  static std::atomic<uint32_t> next{1};
  uint32_t t = next.fetch_add(1);
  return t == 0 ? next.fetch_add(1) : t;
}

// Checks every element of `indices` against [0, size) on the device (see above); the op's ticket.
uint32_t validate(const Client& c, const char* op, const Tensor& indices, int64_t dim, int64_t size) {
  const uint32_t ticket = next_ticket();
  Tensor flat = into_contiguous(indices);
  const int64_t n = flat.numel();
  if (n == 0) return ticket;
  KernelRef kernel = tensor::cached_kernel(common::Key()("kernel", "tensor_check_indices")("indices", indices.dtype()),
                                           [&] { return record_validate(indices.dtype()); });
  const uint32_t count = tensor::checked_u32(n, op, "indices");
  launch(c, kernel, tensor::linear_config(count),
         {flat.handle(), c.device_error_word(), count, size, uint32_t(dim), site_of(op), ticket});
  c.expect_device_error();
  return ticket;
}

// Σ c[d] * stride(x, d), with c[dim] replaced by `at` (if given).
ValueRef offset(Tracer& t, const ValueRef& x, std::vector<ValueRef> c, int dim, const ValueRef* at) {
  if (at) c[size_t(dim)] = *at;
  return tensor::offset(t, x, c, 0, ValueRef{});
}

// Gather: params src, idx, out (tensors of `rank`), word (u32 buffer), count (u32).
ir::Kernel record_gather(DType dtype, DType index_type, int rank, int dim) {
  ir::Kernel k;
  k.name = "tensor_gather";
  Tracer t(k);
  ir::Type elem = ir::Type::scalar_of(dtype);
  ValueRef src = t.param("src", ir::Type::tensor(elem, rank, ir::Access::ReadOnly));
  ValueRef idx = t.param("indices", ir::Type::tensor(ir::Type::scalar_of(index_type), rank, ir::Access::ReadOnly));
  ValueRef out = t.param("out", ir::Type::tensor(elem, rank, ir::Access::ReadWrite));
  ValueRef word = t.param("word", ir::Type::buffer(ir::Type::scalar_of(ir::Scalar::U32), ir::Access::ReadOnly));
  ValueRef count = t.param("count", ir::Type::scalar_of(ir::Scalar::U32));
  ValueRef ticket = t.param("ticket", ir::Type::scalar_of(ir::Scalar::U32));
  ValueRef pos = t.builtin(ir::OpKind::AbsolutePos, -1);
  ValueRef go = t.binary(ir::OpKind::And, t.binary(ir::OpKind::Lt, pos, count),
                         t.binary(ir::OpKind::Ne, t.load(word, u32c(t, 7)), ticket));
  size_t body = t.begin_if(go);
  std::vector<ValueRef> c = tensor::coordinates(t, pos, out, 0, rank);
  ValueRef at = t.cast(t.load(idx, offset(t, idx, c, dim, nullptr)), ir::Scalar::U32);  // validated: in [0, size)
  t.store(out, offset(t, out, c, dim, nullptr), t.load(src, offset(t, src, c, dim, &at)));
  t.end_then(body);
  t.finish();
  return k;
}

// Additive scatter: params dst, idx, values, out (tensors of `rank`; idx and values of one shape),
// word, count (u32), span (u32: idx's length along dim). Out element c = dst[c] + the values
// whose index along dim names c[dim].
ir::Kernel record_scatter(DType dtype, DType index_type, int rank, int dim) {
  const DType acc = ir::compute_scalar(dtype);
  ir::Kernel k;
  k.name = "tensor_scatter";
  Tracer t(k);
  ir::Type elem = ir::Type::scalar_of(dtype);
  ValueRef dst = t.param("dst", ir::Type::tensor(elem, rank, ir::Access::ReadOnly));
  ValueRef idx = t.param("indices", ir::Type::tensor(ir::Type::scalar_of(index_type), rank, ir::Access::ReadOnly));
  ValueRef values = t.param("values", ir::Type::tensor(elem, rank, ir::Access::ReadOnly));
  ValueRef out = t.param("out", ir::Type::tensor(elem, rank, ir::Access::ReadWrite));
  ValueRef word = t.param("word", ir::Type::buffer(ir::Type::scalar_of(ir::Scalar::U32), ir::Access::ReadOnly));
  ValueRef count = t.param("count", ir::Type::scalar_of(ir::Scalar::U32));
  ValueRef span = t.param("span", ir::Type::scalar_of(ir::Scalar::U32));
  ValueRef ticket = t.param("ticket", ir::Type::scalar_of(ir::Scalar::U32));
  ValueRef pos = t.builtin(ir::OpKind::AbsolutePos, -1);
  ValueRef go = t.binary(ir::OpKind::And, t.binary(ir::OpKind::Lt, pos, count),
                         t.binary(ir::OpKind::Ne, t.load(word, u32c(t, 7)), ticket));
  size_t body = t.begin_if(go);
  std::vector<ValueRef> c = tensor::coordinates(t, pos, out, 0, rank);
  auto widen = [&](ValueRef v) { return v.type.scalar == acc ? v : t.cast(v, acc); };
  ValueRef sum = t.var_decl(ir::Type::scalar_of(acc));
  t.var_store(sum, widen(t.load(dst, offset(t, dst, c, dim, nullptr))));
  // Only positions inside the index tensor's other dims receive values.
  ValueRef inside = t.constant(ir::Type::scalar_of(ir::Scalar::Bool), ir::AttrValue::of_bool(true));
  for (int d = 0; d < rank; ++d) {
    if (d != dim)
      inside = t.binary(ir::OpKind::And, inside,
                        t.binary(ir::OpKind::Lt, c[size_t(d)], t.tensor_meta(ir::OpKind::TensorShape, idx, d)));
  }
  size_t if_inside = t.begin_if(inside);
  ValueRef j = t.begin_for(u32c(t, 0), span, u32c(t, 1), dsl::LoopAttrs{});
  ValueRef at = t.cast(t.load(idx, offset(t, idx, c, dim, &j)), ir::Scalar::U32);
  size_t hit = t.begin_if(t.binary(ir::OpKind::Eq, at, c[size_t(dim)]));
  t.var_store(sum, t.binary(ir::OpKind::Add, t.var_load(sum), widen(t.load(values, offset(t, values, c, dim, &j)))));
  t.end_then(hit);
  t.end_for();
  t.end_then(if_inside);
  ValueRef r = t.var_load(sum);
  if (r.type.scalar != dtype) r = t.cast(r, dtype);
  t.store(out, offset(t, out, c, dim, nullptr), r);
  t.end_then(body);
  t.finish();
  return k;
}

struct Checked {
  int64_t dim;
};

// The checks every index op makes on the host: defined tensors on one device, an index type, the
// dim.
Checked check(const char* op, const Tensor& t, int64_t dim, const Tensor& indices) {
  if (!t.defined() || !indices.defined())
    throw Error("tensor.undefined", std::string(op) + ": an empty Tensor (moved from, or never set)");
  if (indices.dtype() != DType::I32 && indices.dtype() != DType::I64) {
    throw Error("tensor.unsupported_dtype",
                std::string(op) + ": indices must be i32 or i64, not " + std::string(ir::scalar_name(indices.dtype())));
  }
  if (indices.client().id() != t.client().id())
    throw Error("tensor.device_mismatch", std::string(op) + ": the indices live on another device");
  const int64_t d = dim < 0 ? dim + t.rank() : dim;
  if (t.rank() == 0 || d < 0 || d >= t.rank()) {
    throw Error("tensor.bad_dim", std::string(op) + ": dim " + std::to_string(dim) + " is outside a tensor of rank " +
                                      std::to_string(t.rank()));
  }
  return {d};
}

// indices (1-D) seen at `shape`: stride 0 everywhere but along dim.
Tensor spread(const Tensor& indices, const Shape& shape, int64_t dim) {
  Strides s(shape.size(), 0);
  s[size_t(dim)] = indices.strides()[0];
  return Tensor(indices.client(), indices.handle(), shape, s, indices.dtype());
}

// A gather or scatter kernel's key: the element and index types, the rank and the dim.
common::Key index_kernel_key(const char* kernel, const Tensor& t, const Tensor& indices, int64_t dim) {
  common::Key k;
  k("kernel", kernel)("dtype", t.dtype())("indices", indices.dtype())("rank", t.rank())("dim", dim);
  return k;
}

// A tensor as a kernel argument, through its own shape and strides.
TensorBinding whole(const Tensor& x, const char* op) { return tensor::binding(x.handle(), x.shape(), x.strides(), op); }

Tensor run_gather(const char* op, const Tensor& t, int64_t dim, const Tensor& indices_seen, uint32_t ticket) {
  Tensor out = tensor::allocate(t.client(), indices_seen.shape(), contiguous_strides(indices_seen.shape()), t.dtype());
  if (out.numel() == 0) return out;
  KernelRef kernel = tensor::cached_kernel(index_kernel_key("tensor_gather", t, indices_seen, dim), [&] {
    return record_gather(t.dtype(), indices_seen.dtype(), int(t.rank()), int(dim));
  });
  TensorBinding bs = whole(t, op), bi = whole(indices_seen, op), bo = whole(out, op);
  const uint32_t count = tensor::checked_u32(out.numel(), op, "elements");
  launch(t.client(), kernel, tensor::linear_config(count), {bs, bi, bo, t.client().device_error_word(), count, ticket});
  return out;
}

Tensor run_scatter(const char* op, const Tensor& t, int64_t dim, const Tensor& indices_seen, const Tensor& values,
                   uint32_t ticket) {
  Tensor out = tensor::allocate(t.client(), t.shape(), contiguous_strides(t.shape()), t.dtype());
  if (out.numel() == 0) return out;
  KernelRef kernel = tensor::cached_kernel(index_kernel_key("tensor_scatter", t, indices_seen, dim), [&] {
    return record_scatter(t.dtype(), indices_seen.dtype(), int(t.rank()), int(dim));
  });
  TensorBinding bd = whole(t, op), bi = whole(indices_seen, op), bv = whole(values, op), bo = whole(out, op);
  const uint32_t count = tensor::checked_u32(out.numel(), op, "elements");
  const uint32_t span = tensor::checked_u32(indices_seen.shape()[size_t(dim)], op, "indices along the dim");
  launch(t.client(), kernel, tensor::linear_config(count),
         {bd, bi, bv, bo, t.client().device_error_word(), count, span, ticket});
  return out;
}

void check_values(const char* op, const Tensor& t, const Tensor& values, const Shape& want) {
  if (!values.defined()) throw Error("tensor.undefined", std::string(op) + ": the values are an empty Tensor");
  if (values.dtype() != t.dtype()) {
    throw Error("tensor.dtype_mismatch", std::string(op) + ": values are " +
                                             std::string(ir::scalar_name(values.dtype())) + " and the tensor " +
                                             std::string(ir::scalar_name(t.dtype())));
  }
  if (values.client().id() != t.client().id())
    throw Error("tensor.device_mismatch", std::string(op) + ": the values live on another device");
  if (values.shape() != want) {
    throw Error("tensor.shape_mismatch", std::string(op) + ": values have shape " + to_string(values.shape()) +
                                             "; they must have shape " + to_string(want));
  }
  if (t.dtype() == DType::Bool)
    throw Error("tensor.unsupported_dtype", std::string(op) + " adds values: it does not take bool tensors");
}

// indices' shape must match t's rank, and not exceed t's dims other than `dim`.
void check_same_rank(const char* op, const Tensor& t, const Tensor& indices, int64_t dim) {
  bool fits = indices.rank() == t.rank();
  for (int64_t d = 0; fits && d < t.rank(); ++d) fits = d == dim || indices.shape()[size_t(d)] <= t.shape()[size_t(d)];
  if (!fits) {
    throw Error("tensor.shape_mismatch", std::string(op) + ": indices of shape " + to_string(indices.shape()) +
                                             " for a tensor of shape " + to_string(t.shape()) +
                                             "; they need its rank and no longer dims but along dim " +
                                             std::to_string(dim));
  }
}

}  // namespace

Tensor gather(const Tensor& t, int64_t dim, const Tensor& indices) {
  const char* op = "gather";
  const int64_t d = check(op, t, dim, indices).dim;
  check_same_rank(op, t, indices, d);
  const uint32_t ticket = validate(t.client(), op, indices, d, t.shape()[size_t(d)]);
  Tensor out = run_gather(op, t, d, indices, ticket);
  return out;
}

Tensor scatter(const Tensor& t, int64_t dim, const Tensor& indices, const Tensor& values) {
  const char* op = "scatter";
  const int64_t d = check(op, t, dim, indices).dim;
  check_same_rank(op, t, indices, d);
  check_values(op, t, values, indices.shape());
  const uint32_t ticket = validate(t.client(), op, indices, d, t.shape()[size_t(d)]);
  Tensor out = run_scatter(op, t, d, indices, values, ticket);
  return out;
}

Tensor select(const Tensor& t, int64_t dim, const Tensor& indices) {
  const char* op = "select";
  const int64_t d = check(op, t, dim, indices).dim;
  if (indices.rank() != 1)
    throw Error("tensor.shape_mismatch", std::string(op) + ": indices must be 1-D, are " + to_string(indices.shape()));
  const uint32_t ticket = validate(t.client(), op, indices, d, t.shape()[size_t(d)]);
  Shape shape = t.shape();
  shape[size_t(d)] = indices.shape()[0];
  Tensor out = run_gather(op, t, d, spread(indices, shape, d), ticket);
  return out;
}

Tensor index_select(const Tensor& t, int64_t dim, const Tensor& indices) { return select(t, dim, indices); }

Tensor select_assign(const Tensor& t, int64_t dim, const Tensor& indices, const Tensor& values) {
  const char* op = "select_assign";
  const int64_t d = check(op, t, dim, indices).dim;
  if (indices.rank() != 1)
    throw Error("tensor.shape_mismatch", std::string(op) + ": indices must be 1-D, are " + to_string(indices.shape()));
  Shape shape = t.shape();
  shape[size_t(d)] = indices.shape()[0];
  check_values(op, t, values, shape);
  const uint32_t ticket = validate(t.client(), op, indices, d, t.shape()[size_t(d)]);
  Tensor out = run_scatter(op, t, d, spread(indices, shape, d), values, ticket);
  return out;
}

}  // namespace kiln
