// Elementwise ops: the operands' broadcast, the choice of the result's memory (in place by
// ownership, or new memory in the operands' memory order), the walk, and the launch.
#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>

#include "kiln/tensor/ops.h"
#include "tensor/kernels.h"
#include "tensor/layout.h"
#include "tensor/support.h"

namespace kiln {

namespace {

using dsl::Tracer;
using dsl::ValueRef;
using tensor::ElementFn;
using tensor::OperandKind;

// f16 and bf16 compute in f32 and round once, as PyTorch does.
DType compute_type(DType d) { return d == DType::F16 || d == DType::BF16 ? DType::F32 : d; }

ValueRef widen(Tracer& t, ValueRef v) {
  DType c = compute_type(v.type.scalar);
  return c == v.type.scalar ? v : t.cast(v, c);
}

ValueRef constant_like(Tracer& t, const ValueRef& like, double v) {
  ir::Type type = ir::Type::scalar_of(like.type.scalar);
  return ir::is_float(like.type.scalar) ? t.constant(type, ir::AttrValue::of_float(v))
                                        : t.constant(type, ir::AttrValue::of_int(int64_t(v)));
}

enum class Needs { Any, Numbers, Signed, Floats };

struct OpInfo {
  const char* name;
  Needs needs;
  bool to_bool;  // the result is a bool tensor
  ElementFn fn;
};

ElementFn binary_fn(ir::OpKind kind) {
  return [kind](Tracer& t, const std::vector<ValueRef>& v) { return t.binary(kind, widen(t, v[0]), widen(t, v[1])); };
}
ElementFn unary_fn(ir::OpKind kind) {
  return [kind](Tracer& t, const std::vector<ValueRef>& v) { return t.unary(kind, widen(t, v[0])); };
}

void check_dtype(const std::string& op, DType d, Needs needs) {
  tensor::check_supported(op, d);
  if (needs != Needs::Any && d == DType::Bool) {
    throw Error("tensor.unsupported_dtype", op + " does not take bool tensors; cast them to a number type first");
  }
  if (needs == Needs::Signed && ir::is_unsigned_int(d)) {
    throw Error("tensor.unsupported_dtype", op + " takes signed numbers (floats, i32, i64), not " + std::string(ir::scalar_name(d)));
  }
  if (needs == Needs::Floats && !ir::is_float(d)) {
    throw Error("tensor.unsupported_dtype", op + " takes floating-point tensors (f16, bf16, f32, f64), not " +
                                                std::string(ir::scalar_name(d)) + "; cast first");
  }
}

// The operands' facts for the kernel: kinds, element types, and (for tensors) their strides
// broadcast to the result's shape.
struct Prepared {
  std::vector<OperandKind> kinds;
  std::vector<DType> dtypes;
  Shape shape;
};

// What an op may ask of the result beyond the defaults.
struct ResultRule {
  std::optional<DType> dtype;  // another element type than the operands' (cast)
  bool row_major = false;      // new memory, row-major, whatever the operands' order (into_contiguous)
};

Tensor elementwise(const OpInfo& info, std::vector<Operand> operands, ResultRule rule = {}) {
  const std::string op = info.name;
  // The element type: the tensors' (which must agree); numbers take it.
  const Tensor* first = nullptr;
  for (const Operand& o : operands) {
    if (o.is_scalar()) continue;
    if (!o.tensor().defined()) throw Error("tensor.undefined", op + ": an operand is an empty Tensor (moved from, or never set)");
    if (!first) {
      first = &o.tensor();
    } else if (o.tensor().dtype() != first->dtype()) {
      throw Error("tensor.dtype_mismatch", op + ": operands are " + std::string(ir::scalar_name(first->dtype())) +
                                               " and " + std::string(ir::scalar_name(o.tensor().dtype())) +
                                               "; cast one of them so that both have one element type");
    } else if (o.tensor().client().id() != first->client().id()) {
      throw Error("tensor.device_mismatch", op + ": operands live on different devices; move one with to_device()");
    }
  }
  if (!first) throw Error("tensor.undefined", op + ": no tensor among the operands");
  const DType in_type = first->dtype();
  check_dtype(op, in_type, info.needs);
  const DType out_type = rule.dtype ? *rule.dtype : info.to_bool ? DType::Bool : in_type;
  tensor::check_supported(op, out_type);
  const Client client = first->client();

  Shape shape;
  for (const Operand& o : operands) {
    if (!o.is_scalar()) shape = shape.empty() && o.tensor().rank() == 0 ? shape : tensor::broadcast_shapes(shape, o.tensor().shape(), op);
  }

  // Where the result goes: a given operand's memory, else new memory in the voted order.
  int into = -1;
  for (size_t i = 0; i < operands.size() && into < 0 && !rule.row_major; ++i) {
    const Operand& o = operands[i];
    if (!o.is_scalar() && o.owned() && o.tensor().can_mut() && o.tensor().shape() == shape &&
        o.tensor().dtype() == out_type && !tensor::self_overlapping(o.tensor().shape(), o.tensor().strides())) {
      into = int(i);
    }
  }
  std::vector<int> order;
  Tensor out;
  if (into >= 0) {
    out = operands[size_t(into)].tensor();
    order = tensor::memory_order(out.shape(), out.strides());
  } else {
    // Operands of the result's shape vote for their memory order with their bytes.
    std::map<std::vector<int>, int64_t> votes;
    for (const Operand& o : operands) {
      if (rule.row_major || o.is_scalar() || o.tensor().shape() != shape) continue;
      votes[tensor::memory_order(shape, o.tensor().strides())] += o.tensor().numel() * ir::scalar_bytes(in_type);
    }
    for (const auto& [candidate, bytes] : votes) {
      if (order.empty() || bytes > votes[order]) order = candidate;
    }
    if (order.empty()) order = tensor::memory_order(shape, contiguous_strides(shape));
    out = tensor::allocate(client, shape, tensor::strides_in_order(shape, order), out_type);
  }

  // The walk over the result in its memory order, with dims folded where every tensor allows.
  tensor::ElementwiseSpec spec;
  spec.name = std::string("tensor_") + info.name;
  spec.out = out_type;
  spec.fn = info.fn;
  std::vector<Strides> strides;
  for (const Operand& o : operands) {
    spec.kinds.push_back(o.is_scalar() ? OperandKind::Scalar : OperandKind::Tensor);
    spec.dtypes.push_back(in_type);
    if (!o.is_scalar()) strides.push_back(tensor::broadcast_strides(o.tensor().shape(), o.tensor().strides(), shape));
  }
  strides.push_back(out.strides());
  tensor::Walk walk = tensor::Walk::in_order(shape, strides, order);
  walk.fold();
  spec.rank = int(walk.shape.size());

  const int64_t count = out.numel();
  if (count == 0) return out;
  std::vector<TensorBinding> bindings;
  bindings.reserve(operands.size() + 1);
  size_t next = 0;
  for (const Operand& o : operands) {
    if (!o.is_scalar()) bindings.push_back(tensor::binding(o.tensor().handle(), walk.shape, walk.strides[next++], op));
  }
  bindings.push_back(tensor::binding(out.handle(), walk.shape, walk.strides[next], op));
  std::vector<Arg> args;
  size_t b = 0;
  for (const Operand& o : operands) {
    if (o.is_scalar()) args.emplace_back(o.scalar());
    else args.emplace_back(bindings[b++]);
  }
  args.emplace_back(bindings[b]);
  args.emplace_back(tensor::checked_u32(count, op, "elements"));
  // The given operands' handles are released only after the launch: the result may be one of them.
  launch(client, tensor::elementwise_kernel(spec), tensor::linear_config(count), args);
  return out;
}

const OpInfo& info_of(const char* name, Needs needs, bool to_bool, ElementFn fn) {
  // One OpInfo per name, made once.
  static std::mutex mutex;
  static std::map<std::string, OpInfo>* infos = new std::map<std::string, OpInfo>();
  std::lock_guard<std::mutex> lock(mutex);
  auto it = infos->find(name);
  if (it == infos->end()) it = infos->emplace(name, OpInfo{name, needs, to_bool, std::move(fn)}).first;
  return it->second;
}

Tensor binary(const char* name, Needs needs, bool to_bool, ir::OpKind kind, Operand a, Operand b) {
  std::vector<Operand> ops;
  ops.push_back(std::move(a));
  ops.push_back(std::move(b));
  return elementwise(info_of(name, needs, to_bool, binary_fn(kind)), std::move(ops));
}

Tensor unary(const char* name, Needs needs, ElementFn fn, Operand a) {
  std::vector<Operand> ops;
  ops.push_back(std::move(a));
  return elementwise(info_of(name, needs, false, std::move(fn)), std::move(ops));
}

}  // namespace

Tensor add(Operand a, Operand b) { return binary("add", Needs::Numbers, false, ir::OpKind::Add, std::move(a), std::move(b)); }
Tensor sub(Operand a, Operand b) { return binary("sub", Needs::Numbers, false, ir::OpKind::Sub, std::move(a), std::move(b)); }
Tensor mul(Operand a, Operand b) { return binary("mul", Needs::Numbers, false, ir::OpKind::Mul, std::move(a), std::move(b)); }
Tensor div(Operand a, Operand b) { return binary("div", Needs::Numbers, false, ir::OpKind::Div, std::move(a), std::move(b)); }
Tensor rem(Operand a, Operand b) { return binary("rem", Needs::Numbers, false, ir::OpKind::Rem, std::move(a), std::move(b)); }
Tensor pow(Operand a, Operand b) { return binary("pow", Needs::Floats, false, ir::OpKind::Pow, std::move(a), std::move(b)); }
Tensor max(Operand a, Operand b) { return binary("max", Needs::Numbers, false, ir::OpKind::Max, std::move(a), std::move(b)); }
Tensor min(Operand a, Operand b) { return binary("min", Needs::Numbers, false, ir::OpKind::Min, std::move(a), std::move(b)); }
Tensor eq(Operand a, Operand b) { return binary("eq", Needs::Any, true, ir::OpKind::Eq, std::move(a), std::move(b)); }
Tensor ne(Operand a, Operand b) { return binary("ne", Needs::Any, true, ir::OpKind::Ne, std::move(a), std::move(b)); }
Tensor lt(Operand a, Operand b) { return binary("lt", Needs::Numbers, true, ir::OpKind::Lt, std::move(a), std::move(b)); }
Tensor le(Operand a, Operand b) { return binary("le", Needs::Numbers, true, ir::OpKind::Le, std::move(a), std::move(b)); }
Tensor gt(Operand a, Operand b) { return binary("gt", Needs::Numbers, true, ir::OpKind::Gt, std::move(a), std::move(b)); }
Tensor ge(Operand a, Operand b) { return binary("ge", Needs::Numbers, true, ir::OpKind::Ge, std::move(a), std::move(b)); }

Tensor neg(Operand a) { return unary("neg", Needs::Signed, unary_fn(ir::OpKind::Neg), std::move(a)); }
Tensor abs(Operand a) {
  // An unsigned value is its own magnitude.
  return unary("abs", Needs::Numbers, [](Tracer& t, const std::vector<ValueRef>& v) {
    return ir::is_unsigned_int(v[0].type.scalar) ? v[0] : t.unary(ir::OpKind::Abs, widen(t, v[0]));
  }, std::move(a));
}
Tensor exp(Operand a) { return unary("exp", Needs::Floats, unary_fn(ir::OpKind::Exp), std::move(a)); }
Tensor log(Operand a) { return unary("log", Needs::Floats, unary_fn(ir::OpKind::Log), std::move(a)); }
Tensor sqrt(Operand a) { return unary("sqrt", Needs::Floats, unary_fn(ir::OpKind::Sqrt), std::move(a)); }
Tensor tanh(Operand a) { return unary("tanh", Needs::Floats, unary_fn(ir::OpKind::Tanh), std::move(a)); }
Tensor erf(Operand a) { return unary("erf", Needs::Floats, unary_fn(ir::OpKind::Erf), std::move(a)); }

Tensor sigmoid(Operand a) {
  return unary("sigmoid", Needs::Floats, [](Tracer& t, const std::vector<ValueRef>& v) {
    ValueRef x = widen(t, v[0]);
    ValueRef one = constant_like(t, x, 1.0);
    return t.binary(ir::OpKind::Div, one, t.binary(ir::OpKind::Add, one, t.unary(ir::OpKind::Exp, t.unary(ir::OpKind::Neg, x))));
  }, std::move(a));
}

Tensor relu(Operand a) {
  return unary("relu", Needs::Numbers, [](Tracer& t, const std::vector<ValueRef>& v) {
    ValueRef x = widen(t, v[0]);
    return t.binary(ir::OpKind::Max, x, constant_like(t, x, 0.0));
  }, std::move(a));
}

Tensor gelu(Operand a) {
  return unary("gelu", Needs::Floats, [](Tracer& t, const std::vector<ValueRef>& v) {
    ValueRef x = widen(t, v[0]);
    ValueRef half = constant_like(t, x, 0.5);
    ValueRef inner = t.unary(ir::OpKind::Erf, t.binary(ir::OpKind::Mul, x, constant_like(t, x, M_SQRT1_2)));
    return t.binary(ir::OpKind::Mul, t.binary(ir::OpKind::Mul, x, half),
                    t.binary(ir::OpKind::Add, constant_like(t, x, 1.0), inner));
  }, std::move(a));
}

Tensor cast(Operand a, DType dtype) {
  if (a.is_scalar()) throw Error("tensor.undefined", "cast: the operand is a number, not a tensor");
  if (a.tensor().defined() && a.tensor().dtype() == dtype) return std::move(a.tensor());
  std::vector<Operand> ops;
  ops.push_back(std::move(a));
  const OpInfo& info = info_of("cast", Needs::Any, false, [](Tracer&, const std::vector<ValueRef>& v) { return v[0]; });
  return elementwise(info, std::move(ops), ResultRule{dtype, false});
}

Tensor into_contiguous(Tensor t) {
  if (!t.defined()) throw Error("tensor.undefined", "into_contiguous: the tensor is empty (moved from, or never set)");
  if (t.is_contiguous()) return t;
  std::vector<Operand> ops;
  ops.push_back(Operand(std::move(t)));
  const OpInfo& info = info_of("copy", Needs::Any, false, [](Tracer&, const std::vector<ValueRef>& v) { return v[0]; });
  return elementwise(info, std::move(ops), ResultRule{std::nullopt, true});
}

}  // namespace kiln
