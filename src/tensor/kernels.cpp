#include "tensor/kernels.h"

#include <map>
#include <mutex>

namespace kiln::tensor {

namespace {

using dsl::Tracer;
using dsl::ValueRef;

ir::Kernel record_elementwise(const ElementwiseSpec& spec) {
  ir::Kernel k;
  k.name = spec.name;
  Tracer t(k);
  const bool contiguous = spec.width > 0;
  auto array_type = [&](DType d, ir::Access access) {
    return contiguous ? ir::Type::buffer(ir::Type::vector_of(d, spec.width), access)
                      : ir::Type::tensor(ir::Type::scalar_of(d), spec.rank, access);
  };
  std::vector<ValueRef> inputs;
  for (size_t i = 0; i < spec.kinds.size(); ++i) {
    std::string name = "in" + std::to_string(i);
    inputs.push_back(spec.kinds[i] == OperandKind::Tensor ? t.param(name, array_type(spec.dtypes[i], ir::Access::ReadOnly))
                                                          : t.param(name, ir::Type::scalar_of(spec.dtypes[i])));
  }
  ValueRef out = t.param("out", array_type(spec.out, ir::Access::ReadWrite));
  ValueRef count = t.param("count", ir::Type::scalar_of(ir::Scalar::U32));

  ValueRef pos = t.builtin(ir::OpKind::AbsolutePos, -1);
  size_t in_range = t.begin_if(t.binary(ir::OpKind::Lt, pos, count));
  std::vector<ValueRef> offsets(spec.kinds.size() + 1, pos);
  if (!contiguous) {
    // The walk's coordinates, innermost dim first, each turned into every tensor's offset.
    for (ValueRef& o : offsets) o = ValueRef{};
    ValueRef rest = pos;
    for (int d = spec.rank - 1; d >= 0; --d) {
      ValueRef coord = rest;
      if (d > 0) {
        ValueRef len = t.tensor_meta(ir::OpKind::TensorShape, out, d);
        coord = t.binary(ir::OpKind::Rem, rest, len);
        rest = t.binary(ir::OpKind::Div, rest, len);
      }
      auto step = [&](size_t slot, const ValueRef& tensor) {
        ValueRef s = t.binary(ir::OpKind::Mul, coord, t.tensor_meta(ir::OpKind::TensorStride, tensor, d));
        offsets[slot] = offsets[slot].id == ir::kNoValue ? s : t.binary(ir::OpKind::Add, offsets[slot], s);
      };
      for (size_t i = 0; i < spec.kinds.size(); ++i) {
        if (spec.kinds[i] == OperandKind::Tensor) step(i, inputs[i]);
      }
      step(spec.kinds.size(), out);
    }
  }
  std::vector<ValueRef> values;
  for (size_t i = 0; i < spec.kinds.size(); ++i) {
    values.push_back(spec.kinds[i] == OperandKind::Tensor ? t.load(inputs[i], offsets[i]) : inputs[i]);
  }
  ValueRef result = (*spec.fn)(t, values);
  if (result.type.scalar != spec.out) result = t.cast(result, spec.out);
  // A result computed from numbers alone (no lane of a vector in it) is a scalar: every lane.
  if (contiguous) result = t.splat(result, spec.width);
  t.store(out, offsets.back(), result);
  t.end_then(in_range);
  t.finish();
  return k;
}

}  // namespace

std::string ElementwiseSpec::key() const {
  std::string k = name + "/" + std::to_string(rank) + "/w" + std::to_string(width) + "/" + std::string(ir::scalar_name(out));
  for (size_t i = 0; i < kinds.size(); ++i) {
    k += kinds[i] == OperandKind::Tensor ? "/t" : "/s";
    k += ir::scalar_name(dtypes[i]);
  }
  return k;
}

namespace {
std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, KernelRef>& registry() {
  static auto* kernels = new std::map<std::string, KernelRef>();  // lives to exit: launches at exit may use it
  return *kernels;
}
}  // namespace

KernelRef cached_kernel(const std::string& key, const std::function<ir::Kernel()>& record) {
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

KernelRef elementwise_kernel(const ElementwiseSpec& spec) {
  return cached_kernel(spec.key(), [&] { return record_elementwise(spec); });
}

}  // namespace kiln::tensor
