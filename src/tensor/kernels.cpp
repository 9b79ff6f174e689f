#include "tensor/kernels.h"

#include <algorithm>
#include <mutex>
#include <unordered_map>

namespace kiln::tensor {

namespace {

using dsl::Tracer;
using dsl::ValueRef;

}  // namespace

ValueRef constant(Tracer& t, DType d, double v) {
  ir::Type type = ir::Type::scalar_of(d);
  return ir::is_float(d) ? t.constant(type, ir::AttrValue::of_float(v))
                         : t.constant(type, ir::AttrValue::of_int(int64_t(v)));
}

ValueRef constant_bits(Tracer& t, DType d, int64_t bits) {
  return t.constant(ir::Type::scalar_of(d), ir::AttrValue::of_int(bits));
}

std::vector<ValueRef> coordinates(Tracer& t, const ValueRef& pos, const ValueRef& shape_of, int first, int last) {
  std::vector<ValueRef> c(static_cast<size_t>(std::max(last - first, 0)));
  ValueRef rest = pos;
  for (int d = last - 1; d >= first; --d) {
    if (d == first) {
      c[0] = rest;
      break;
    }
    ValueRef len = t.tensor_meta(ir::OpKind::TensorShape, shape_of, d);
    c[size_t(d - first)] = t.binary(ir::OpKind::Rem, rest, len);
    rest = t.binary(ir::OpKind::Div, rest, len);
  }
  return c;
}

ValueRef offset(Tracer& t, const ValueRef& tensor, const std::vector<ValueRef>& coords, int first, ValueRef base) {
  for (size_t i = 0; i < coords.size(); ++i) {
    ValueRef step =
        t.binary(ir::OpKind::Mul, coords[i], t.tensor_meta(ir::OpKind::TensorStride, tensor, first + int(i)));
    base = base.id == ir::kNoValue ? step : t.binary(ir::OpKind::Add, base, step);
  }
  return base.id == ir::kNoValue ? constant(t, DType::U32, 0) : base;
}

namespace {

ir::Kernel record_walk(const WalkSpec& spec) {
  ir::Kernel k;
  k.name = spec.name;
  Tracer t(k);
  // A contiguous walk reads buffers of vectors; a strided one tensors, of vectors along the
  // innermost dim when `width` is set (strides then count vectors).
  const bool contiguous = spec.width > 0 && spec.rank == 1;
  auto array_type = [&](DType d, ir::Access access) {
    return contiguous ? ir::Type::buffer(ir::Type::vector_of(d, spec.width), access)
                      : ir::Type::tensor(spec.width > 0 ? ir::Type::vector_of(d, spec.width) : ir::Type::scalar_of(d),
                                         spec.rank, access);
  };
  std::vector<ValueRef> inputs;
  for (size_t i = 0; i < spec.kinds.size(); ++i) {
    std::string name = "in" + std::to_string(i);
    inputs.push_back(spec.kinds[i] == OperandKind::Tensor
                         ? t.param(name, array_type(spec.dtypes[i], ir::Access::ReadOnly))
                         : t.param(name, ir::Type::scalar_of(spec.dtypes[i])));
  }
  std::vector<ValueRef> outs;
  for (size_t j = 0; j < spec.outputs.size(); ++j) {
    std::string name = spec.outputs.size() == 1 ? "out" : "out" + std::to_string(j);
    outs.push_back(t.param(name, array_type(spec.steps[size_t(spec.outputs[j])].out, ir::Access::ReadWrite)));
  }
  ValueRef count = t.param("count", ir::Type::scalar_of(ir::Scalar::U32));

  ValueRef pos = t.builtin(ir::OpKind::AbsolutePos, -1);
  size_t in_range = t.begin_if(t.binary(ir::OpKind::Lt, pos, count));
  std::vector<ValueRef> in_offsets(spec.kinds.size(), pos), out_offsets(outs.size(), pos);
  if (!contiguous) {
    // The walk's coordinates (over the outputs' shape), turned into every tensor's offset.
    std::vector<ValueRef> c = coordinates(t, pos, outs[0], 0, spec.rank);
    for (size_t i = 0; i < spec.kinds.size(); ++i) {
      if (spec.kinds[i] == OperandKind::Tensor) in_offsets[i] = offset(t, inputs[i], c, 0, ValueRef{});
    }
    for (size_t j = 0; j < outs.size(); ++j) out_offsets[j] = offset(t, outs[j], c, 0, ValueRef{});
  }
  std::vector<ValueRef> values;
  for (size_t i = 0; i < spec.kinds.size(); ++i) {
    values.push_back(spec.kinds[i] == OperandKind::Tensor ? t.load(inputs[i], in_offsets[i]) : inputs[i]);
  }
  std::vector<ValueRef> steps;
  for (const WalkStep& s : spec.steps) {
    std::vector<ValueRef> args;
    for (int a : s.args) args.push_back(a >= 0 ? values[size_t(a)] : steps[size_t(-a - 1)]);
    ValueRef r = (*s.fn)(t, args);
    if (r.type.scalar != s.out) r = t.cast(r, s.out);
    steps.push_back(r);
  }
  for (size_t j = 0; j < outs.size(); ++j) {
    ValueRef r = steps[size_t(spec.outputs[j])];
    // A result computed from numbers alone (no lane of a vector in it) is a scalar: every lane.
    if (spec.width > 0) r = t.splat(r, spec.width);
    t.store(outs[j], out_offsets[j], r);
  }
  t.end_then(in_range);
  t.finish();
  return k;
}

}  // namespace

common::Key ElementwiseSpec::key() const {
  common::Key k;
  k("kernel", std::string_view("elementwise"))("name", name)("rank", rank)("width", width)("out", out)("kinds", kinds)(
      "dtypes", dtypes);
  return k;
}

namespace {
std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::unordered_map<common::Key, KernelRef, common::KeyHasher>& registry() {
  // Lives to exit: launches at exit may use it.
  static auto* kernels = new std::unordered_map<common::Key, KernelRef, common::KeyHasher>();
  return *kernels;
}
}  // namespace

const KernelRef& cached_kernel(const common::Key& key, const std::function<ir::Kernel()>& record) {
  {
    std::lock_guard<std::mutex> lock(registry_mutex());
    auto it = registry().find(key);
    if (it != registry().end()) return it->second;
  }
  // Recorded outside the lock: two threads may record the same kernel; the first one kept wins.
  KernelRef ref = kernel_ref(record());
  std::lock_guard<std::mutex> lock(registry_mutex());
  return registry().emplace(key, ref).first->second;
}

std::vector<KernelRef> recorded_kernels() {
  std::lock_guard<std::mutex> lock(registry_mutex());
  std::vector<KernelRef> out;
  for (const auto& [key, ref] : registry()) out.push_back(ref);
  return out;
}

// Packed, not text: a fused chain's key is built on every run of the chain (48 steps of text were
// 700 instructions an op of the chain).
common::Key WalkSpec::key() const {
  common::Key k;
  k("kernel", std::string_view("walk"))("name", name)("rank", rank)("width", width)("kinds", kinds)("dtypes", dtypes)(
      "steps", steps.size());
  for (const WalkStep& s : steps) k("op", s.op)("out", s.out)("args", s.args);
  k("outputs", outputs);
  return k;
}

const KernelRef& walk_kernel(const WalkSpec& spec) {
  return cached_kernel(spec.key(), [&] { return record_walk(spec); });
}

const KernelRef& elementwise_kernel(const ElementwiseSpec& spec) {
  return cached_kernel(spec.key(), [&] {
    WalkSpec w;
    w.name = spec.name;
    w.kinds = spec.kinds;
    w.dtypes = spec.dtypes;
    w.rank = spec.rank;
    w.width = spec.width;
    WalkStep step;
    step.op = spec.name;
    step.fn = spec.fn;
    step.out = spec.out;
    for (size_t i = 0; i < spec.kinds.size(); ++i) step.args.push_back(int(i));
    w.steps.push_back(std::move(step));
    w.outputs.push_back(0);
    return record_walk(w);
  });
}

}  // namespace kiln::tensor
