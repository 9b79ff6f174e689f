// Elementwise ops: each op's definition, the engine that checks a call and launches its walk
// (the operands' broadcast, the result's memory: in place by ownership, or new memory in the
// operands' memory order), and the choice between launching now and recording a pending step.
#include "tensor/elementwise.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <mutex>
#include <optional>
#include <span>
#include <utility>

#include "kiln/runtime/extension.h"
#include "kiln/tensor/fusion.h"
#include "kiln/tensor/ops.h"
#include "tensor/fusion.h"
#include "tensor/kernels.h"
#include "tensor/layout.h"
#include "tensor/support.h"

namespace kiln {

namespace {

using dsl::Tracer;
using dsl::ValueRef;
using tensor::ElementFn;
using tensor::Needs;
using tensor::OpInfo;
using tensor::ResultRule;

ValueRef widen(Tracer& t, ValueRef v) {
  DType c = ir::compute_scalar(v.type.scalar);
  return c == v.type.scalar ? v : t.cast(v, c);
}

ValueRef constant_like(Tracer& t, const ValueRef& like, double v) {
  ir::Type type = ir::Type::scalar_of(like.type.scalar);
  return ir::is_float(like.type.scalar) ? t.constant(type, ir::AttrValue::of_float(v))
                                        : t.constant(type, ir::AttrValue::of_int(int64_t(v)));
}

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
    throw Error("tensor.unsupported_dtype",
                op + " takes signed numbers (floats, i32, i64), not " + std::string(ir::scalar_name(d)));
  }
  if (needs == Needs::Floats && !ir::is_float(d)) {
    throw Error("tensor.unsupported_dtype", op + " takes floating-point tensors (f16, bf16, f32, f64), not " +
                                                std::string(ir::scalar_name(d)) + "; cast first");
  }
}

// The facts that make an op's kernels differ: the result's type, the walk's rank or the vector
// width of a contiguous walk, and each input's kind (the inputs share one element type).
struct KernelFacts {
  DType in = DType::F32, out = DType::F32;
  int rank = 1, width = 0;
  std::array<bool, 4> scalar{};  // per input
  size_t inputs = 0;
  bool condition = false;  // input 0 is bool

  common::Key key() const {
    common::Key k;
    k("in", in)("out", out)("rank", rank)("width", width)("condition", condition)(
        "scalar", std::span<const bool>(scalar.data(), inputs));
    return k;
  }
};

const KernelRef& kernel_for(OpInfo& info, const KernelFacts& f) {
  const common::Key key = f.key();
  {
    std::lock_guard<std::mutex> lock(info.mutex);
    for (const auto& [k, ref] : info.kernels) {
      if (k == key) return ref;
    }
  }
  tensor::ElementwiseSpec spec;
  spec.name = std::string("tensor_") + info.name;
  spec.out = f.out;
  spec.rank = f.rank;
  spec.width = f.width;
  spec.fn = &info.fn;
  for (size_t i = 0; i < f.inputs; ++i) {
    spec.kinds.push_back(f.scalar[i] ? tensor::OperandKind::Scalar : tensor::OperandKind::Tensor);
    spec.dtypes.push_back(i == 0 && f.condition ? DType::Bool : f.in);
  }
  const KernelRef& ref = tensor::elementwise_kernel(spec);
  std::lock_guard<std::mutex> lock(info.mutex);
  for (const auto& [k, kept] : info.kernels) {
    if (k == key) return kept;  // another thread added it meanwhile
  }
  return info.kernels.emplace_back(key, ref).second;
}

// The widest vector a walk's tensors may be read in: 16 bytes of the widest element, at most 4
// lanes.
int widest_vector(std::span<Operand> inputs, std::span<const Tensor* const> outs) {
  int bytes = 1;
  for (const Operand& o : inputs) {
    if (!o.is_scalar()) bytes = std::max(bytes, ir::scalar_bytes(o.tensor().dtype()));
  }
  for (const Tensor* t : outs) bytes = std::max(bytes, ir::scalar_bytes(t->dtype()));
  return std::min(4, 16 / bytes);
}

// Whether every view (but input `skip`, which is output 0's memory) starts on a vector of `width`.
bool starts_aligned(std::span<Operand> inputs, int skip, std::span<const Tensor* const> outs, int width) {
  auto aligned = [&](const Tensor& t) {
    return t.handle().address() % uint64_t(width * ir::scalar_bytes(t.dtype())) == 0;
  };
  for (const Tensor* t : outs) {
    if (!aligned(*t)) return false;
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].is_scalar() && int(i) != skip && !aligned(inputs[i].tensor())) return false;
  }
  return true;
}

// The vector width of a contiguous walk: the widest whose lanes the count and every view's start
// allow.
int contiguous_width(std::span<Operand> inputs, int into, std::span<const Tensor* const> outs, int64_t count) {
  int width = widest_vector(inputs, outs);
  while (width > 1 && !(count % width == 0 && starts_aligned(inputs, into, outs, width))) width /= 2;
  return width;
}

// The vector width of a strided walk along its innermost dim: up to 16 bytes and 4 lanes of the
// widest element, when every tensor steps through that dim by 1 (not a broadcast along it) and its
// length, every outer stride and every view's start allow whole vectors; 1 otherwise.
int inner_width(const tensor::Walk& walk, std::span<Operand> inputs, std::span<const Tensor* const> outs) {
  const size_t last = walk.shape.size() - 1;
  for (size_t o = 0; o < walk.operands; ++o) {
    if (walk.strides[o][last] != 1) return 1;
  }
  auto whole = [&](int width) {
    bool ok = walk.shape[last] % width == 0;
    for (size_t o = 0; o < walk.operands; ++o) {
      for (size_t d = 0; d < last; ++d) ok = ok && walk.strides[o][d] % width == 0;
    }
    return ok && starts_aligned(inputs, -1, outs, width);
  };
  int width = widest_vector(inputs, outs);
  while (width > 1 && !whole(width)) width /= 2;
  return width;
}

// A tensor's handle seen in vectors of `width`: its bytes cut to whole vectors (a view's handle
// runs on to the end of its memory; every vector the walk reads lies before that cut).
Handle in_vectors(const Tensor& t, int width) {
  const Handle& h = t.handle();
  const size_t rest = h.size_in_used() % size_t(width * ir::scalar_bytes(t.dtype()));
  return rest == 0 ? h : h.offset_end(rest);
}

// The handle of a contiguous walk's tensor, showing exactly its `count` elements (a slice's
// handle runs on to the end of its memory; a vector kernel binds whole vectors).
Handle exact(const Tensor& t, int64_t count) {
  const size_t bytes = size_t(count) * size_t(ir::scalar_bytes(t.dtype()));
  const Handle& h = t.handle();
  return h.size_in_used() == bytes ? h : h.offset_end(h.size_in_used() - bytes);
}

// An argument list to fill in (Arg has no empty state).
template <size_t... I>
std::array<Arg, sizeof...(I)> placeholder_args(std::index_sequence<I...>) {
  return {((void)I, Arg(0u))...};
}

}  // namespace

namespace tensor {

DimOrder voted_order(std::span<Operand> operands, const Shape& shape) {
  // Seed 03's rule: each operand of the result's shape votes its bytes (elements times element
  // size: a bool condition weighs less than the f64 values beside it) for its order in memory; the
  // order with the most bytes wins outright, and a tie keeps the logical (row-major) order, so that
  // t + row_major is row-major whichever side t is on.
  std::array<std::pair<DimOrder, int64_t>, kMaxWalkInputs> votes;
  size_t n_votes = 0;
  for (const Operand& o : operands) {
    if (o.is_scalar() || o.tensor().shape() != shape) continue;
    const Tensor& t = o.tensor();
    DimOrder mine;
    if (t.pending()) {
      mine = t.pending_step()->order;
    } else if (tensor::self_overlapping(shape, t.strides())) {
      continue;  // an expanded operand (stride 0 on a long dim) says nothing about a layout worth keeping
    } else {
      mine = tensor::memory_order(shape, t.strides());
    }
    const int64_t bytes = t.numel() * ir::scalar_bytes(t.dtype());
    auto it = std::find_if(votes.begin(), votes.begin() + n_votes, [&](const auto& v) { return v.first == mine; });
    if (it == votes.begin() + n_votes) votes[n_votes++] = {mine, bytes};
    else it->second += bytes;
  }
  size_t best = 0;
  bool tie = false;
  for (size_t i = 1; i < n_votes; ++i) {
    if (votes[i].second > votes[best].second) best = i, tie = false;
    else if (votes[i].second == votes[best].second) tie = true;
  }
  return n_votes > 0 && !tie ? votes[best].first : tensor::row_major_order(shape.size());
}

void check_elementwise(const OpInfo& info, std::span<Operand> operands, const ResultRule& rule, Checked& c) {
  const char* op = info.name;
  // The element type: the tensors' (which must agree); numbers take it.
  const Tensor* first = nullptr;
  // where(condition, a, b) has the condition first; the values follow.
  const Operand* condition = info.condition_first ? &operands.front() : nullptr;
  if (condition) {
    const Operand& c = *condition;
    if (c.is_scalar() || !c.tensor().defined()) {
      throw Error("tensor.undefined",
                  std::string(op) + ": the condition must be a bool tensor (moved from, never set, or a number)");
    }
    if (c.tensor().dtype() != DType::Bool) {
      throw Error("tensor.dtype_mismatch", std::string(op) + ": the condition is " +
                                               std::string(ir::scalar_name(c.tensor().dtype())) +
                                               ", not bool; compare to make one (ne(x, 0))");
    }
  }
  for (const Operand& o : operands.subspan(condition ? 1 : 0)) {
    if (o.is_scalar()) continue;
    const Tensor& t = o.tensor();
    if (!t.defined())
      throw Error("tensor.undefined", std::string(op) + ": an operand is an empty Tensor (moved from, or never set)");
    if (!first) {
      first = &t;
    } else if (t.dtype() != first->dtype()) {
      throw Error("tensor.dtype_mismatch", std::string(op) + ": operands are " +
                                               std::string(ir::scalar_name(first->dtype())) + " and " +
                                               std::string(ir::scalar_name(t.dtype())) +
                                               "; cast one of them so that both have one element type");
    } else if (t.client().id() != first->client().id()) {
      throw Error("tensor.device_mismatch",
                  std::string(op) + ": operands belong to different clients (devices); move one with to_device()");
    }
  }
  if (!first)
    throw Error("tensor.undefined",
                std::string(op) + ": no tensor among the " + (info.condition_first ? "values" : "operands"));
  if (condition && condition->tensor().client().id() != first->client().id()) {
    throw Error("tensor.device_mismatch",
                std::string(op) + ": the condition and the values belong to different clients (devices)");
  }
  c.in = first->dtype();
  check_dtype(op, c.in, info.needs);
  c.out = rule.dtype ? *rule.dtype : info.to_bool ? DType::Bool : c.in;
  if (rule.dtype) tensor::check_supported(op, c.out);
  c.client = &first->client();
  // A number must keep its value in the element type (no 2.5 into an i32 tensor, no 300 into u8).
  for (const Operand& o : operands) {
    ScalarValue converted;
    if (o.is_scalar() && !runtime::convert_scalar(o.scalar(), c.in, converted)) {
      throw Error("tensor.bad_scalar", std::string(op) + ": a " + std::string(ir::scalar_name(o.scalar().type)) +
                                           " number whose value " + std::string(ir::scalar_name(c.in)) +
                                           " cannot hold, with a " + std::string(ir::scalar_name(c.in)) +
                                           " tensor; pass a number of that type, or cast the tensor");
    }
  }

  // The result's shape: the operands' broadcast (an operand's own when they share it).
  c.shape = &first->shape();
  for (const Operand& o : operands) {
    if (o.is_scalar() || o.tensor().shape() == *c.shape) continue;
    c.broadcast = tensor::broadcast_shapes(*c.shape, o.tensor().shape(), op);
    c.shape = &c.broadcast;
  }
  if (rule.dest && tensor::broadcast_shapes(*c.shape, rule.dest->shape(), op) != rule.dest->shape()) {
    throw Error("tensor.shape_mismatch", std::string(op) + ": a value of shape " + to_string(*c.shape) +
                                             " does not broadcast to the destination's shape " +
                                             to_string(rule.dest->shape()));
  }
  if (rule.dest) c.shape = &rule.dest->shape();
}

namespace {

// Whether every tensor of the call is row-major with no gaps and has the result's shape (the
// common case): the walk is then one contiguous run, found without the layout arithmetic of a
// general walk. Not for a pending operand, whose vote is its recorded order, nor a recorded order
// other than row-major (a chain's run records one), nor an empty result (an empty tensor may be
// row-major by the rule and still overlap itself: a stride 0 beside a dim of 0).
bool all_row_major(std::span<Operand> inputs, const Shape& shape, const ResultRule& rule) {
  if ((rule.order && *rule.order != row_major_order(shape.size())) || (rule.dest && !rule.dest->is_contiguous()))
    return false;
  for (int64_t d : shape) {
    if (d == 0) return false;
  }
  for (const Operand& o : inputs) {
    if (o.is_scalar()) continue;
    const Tensor& t = o.tensor();
    if (t.pending() || t.shape() != shape || !t.is_contiguous()) return false;
  }
  return true;
}

// launch_walk for at most kParams parameters: the argument lists live on the stack, sized for the
// call (an eager op's six, not a fused chain's sixteen: clearing the larger lists was a third of
// an eager op's host time).
template <size_t kParams>
void launch_walk_in(const char* op, const Client& client, std::span<Operand> inputs, const Shape& shape,
                    std::span<const DType> out_types, const ResultRule& rule, const WalkKernel& kernel,
                    std::span<Tensor> results) {
  const bool flat = all_row_major(inputs, shape, rule);
  // Where output 0 goes: a destination, a given input's memory, else new memory in the voted order.
  int into = -1;
  for (size_t i = 0; i < inputs.size() && into < 0 && !rule.row_major && !rule.dest; ++i) {
    const Operand& o = inputs[i];
    if (!o.is_scalar() && o.owned() && o.tensor().can_mut() && o.tensor().shape() == shape &&
        o.tensor().dtype() == out_types[0] &&
        (flat || !tensor::self_overlapping(o.tensor().shape(), o.tensor().strides()))) {
      into = int(i);
    }
  }
  tensor::DimOrder order;
  std::optional<Tensor> fresh;  // new memory, when output 0 goes to neither a destination nor an input
  if (!rule.dest && into < 0) {
    order = rule.row_major || flat ? row_major_order(shape.size())
            : rule.order           ? *rule.order
                                   : voted_order(inputs, shape);
    fresh = tensor::allocate(client, shape, tensor::strides_in_order(shape, order), out_types[0]);
  }
  const Tensor& out = rule.dest ? *rule.dest : into >= 0 ? inputs[size_t(into)].tensor() : *fresh;
  if (flat && order.empty()) {
    order = row_major_order(shape.size());
  } else if (!flat && (rule.dest || into >= 0)) {
    order = tensor::memory_order(out.shape(), out.strides());
  }
  std::array<std::optional<Tensor>, kMaxWalkOutputs> more;  // outputs 1.., laid out as output 0
  std::array<const Tensor*, kMaxWalkOutputs> outs{&out};
  for (size_t j = 1; j < out_types.size(); ++j) {
    more[j] = tensor::allocate(client, shape, tensor::strides_in_order(shape, order), out_types[j]);
    outs[j] = &*more[j];
  }
  const std::span<const Tensor* const> out_list(outs.data(), out_types.size());
  // The results, an input's tensor taken only once nothing can fail any more. (Each branch moves:
  // one conditional expression over a const destination would make a const value, and copy.)
  auto deliver = [&] {
    if (rule.dest) {
      results[0] = *rule.dest;
    } else if (into >= 0) {
      results[0] = inputs[size_t(into)].take();
    } else {
      results[0] = std::move(*fresh);
    }
    for (size_t j = 1; j < out_types.size(); ++j) results[j] = std::move(*more[j]);
  };
  const int64_t count = out.numel();
  if (count == 0) return deliver();

  // The walk over the result in its memory order, with dims folded where every tensor allows; one
  // contiguous run when every tensor is row-major.
  std::optional<tensor::Walk> walk;
  if (!flat) {
    std::array<tensor::Dims, kParams> strides;
    size_t n_strides = 0;
    for (const Operand& o : inputs) {
      if (!o.is_scalar())
        strides[n_strides++] = tensor::broadcast_strides(o.tensor().shape(), o.tensor().strides(), shape);
    }
    for (const Tensor* t : out_list) strides[n_strides++] = tensor::Dims(t->strides());
    walk = tensor::Walk::in_order(shape, std::span<const tensor::Dims>(strides.data(), n_strides), order);
    walk->fold();
  }
  bool contiguous = flat || walk->shape.size() == 1;
  for (size_t o = 0; !flat && o < walk->operands; ++o) contiguous = contiguous && walk->strides[o][0] == 1;

  uint32_t units = tensor::checked_u32(count, op, "elements");
  // The arguments, which live until the launch returns: handles for a contiguous walk (vectors of
  // `width` elements, no index arithmetic), tensor bindings otherwise.
  constexpr size_t kMaxArgs = kParams;
  std::array<Arg, kMaxArgs> args = placeholder_args(std::make_index_sequence<kMaxArgs>());
  size_t n_args = 0;
  int rank = 1, width = 0;
  if (contiguous) {
    std::array<Handle, kMaxArgs> handles;
    width = contiguous_width(inputs, into, out_list, count);
    units /= uint32_t(width);
    for (const Operand& o : inputs) {
      args[n_args] = o.is_scalar() ? Arg(o.scalar()) : Arg(handles[n_args] = exact(o.tensor(), count));
      ++n_args;
    }
    for (const Tensor* t : out_list) {
      args[n_args] = Arg(handles[n_args] = exact(*t, count));
      ++n_args;
    }
    args[n_args++] = Arg(units);
    launch(client, kernel(rank, width), tensor::linear_config(units), std::span<const Arg>(args.data(), n_args));
    return deliver();
  }
  // Strided: vectors along the innermost dim where every tensor allows (the walk's lengths and
  // strides then count vectors), else one element a unit.
  std::array<TensorBinding, kMaxArgs> bindings;
  rank = int(walk->shape.size());
  const int w = inner_width(*walk, inputs, out_list);
  if (w > 1) {
    width = w;
    units /= uint32_t(w);
    const size_t last = walk->shape.size() - 1;
    walk->shape[last] /= w;
    for (size_t o = 0; o < walk->operands; ++o) {
      for (size_t d = 0; d < last; ++d) walk->strides[o][d] /= w;
    }
  }
  auto bind = [&](const Tensor& t, size_t next) {
    return tensor::binding(w > 1 ? in_vectors(t, w) : t.handle(), walk->shape, walk->strides[next], op);
  };
  size_t next = 0;
  for (const Operand& o : inputs) {
    args[n_args] = o.is_scalar() ? Arg(o.scalar()) : Arg(bindings[n_args] = bind(o.tensor(), next++));
    ++n_args;
  }
  for (const Tensor* t : out_list) {
    args[n_args] = Arg(bindings[n_args] = bind(*t, next++));
    ++n_args;
  }
  args[n_args++] = Arg(units);
  launch(client, kernel(rank, width), tensor::linear_config(units), std::span<const Arg>(args.data(), n_args));
  deliver();
}

}  // namespace

void launch_walk(const char* op, const Client& client, std::span<Operand> inputs, const Shape& shape,
                 std::span<const DType> out_types, const ResultRule& rule, const WalkKernel& kernel,
                 std::span<Tensor> results) {
  const size_t params = inputs.size() + out_types.size() + 1;
  if (out_types.empty() || out_types.size() > kMaxWalkOutputs || params > kMaxWalkParams) {
    throw Error("tensor.too_large", std::string(op) + ": a walk's kernel takes at most " +
                                        std::to_string(kMaxWalkParams) + " parameters (inputs, at most " +
                                        std::to_string(kMaxWalkOutputs) + " outputs, the count); this one needs " +
                                        std::to_string(params));
  }
  if (params <= 6) return launch_walk_in<6>(op, client, inputs, shape, out_types, rule, kernel, results);
  launch_walk_in<kMaxWalkParams>(op, client, inputs, shape, out_types, rule, kernel, results);
}

Tensor run_eager(OpInfo& info, std::span<Operand> operands, const ResultRule& rule, const Checked& checked) {
  if (operands.size() > 4) throw Error("tensor.too_large", std::string(info.name) + ": more than 4 operands");
  KernelFacts facts;
  facts.in = checked.in;
  facts.out = checked.out;
  facts.inputs = operands.size();
  facts.condition = info.condition_first;
  for (size_t i = 0; i < operands.size(); ++i) facts.scalar[i] = operands[i].is_scalar();
  Tensor result;
  launch_walk(
      info.name, *checked.client, operands, *checked.shape, std::span<const DType>(&checked.out, 1), rule,
      [&](int rank, int width) -> const KernelRef& {
        facts.rank = rank;
        facts.width = width;
        return kernel_for(info, facts);
      },
      std::span<Tensor>(&result, 1));
  return result;
}

}  // namespace tensor

namespace {

// A call whose launch may refuse it for its size: more dims than a walk holds (16), more dims
// longer than 1 than a kernel walks (8: such a walk may not fold into one), more positions than a
// launch has, or a tensor whose memory shows more elements than 32-bit indices reach. Such a call
// runs at once, so that its error comes at the call.
bool launch_may_refuse(std::span<Operand> operands, const Shape& shape) {
  if (shape.size() > tensor::kMaxDims || std::count_if(shape.begin(), shape.end(), [](int64_t d) { return d > 1; }) > 8)
    return true;
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  if (count > int64_t(UINT32_MAX) - 255) return true;
  for (const Operand& o : operands) {
    if (o.is_scalar() || o.tensor().pending()) continue;
    const Tensor& t = o.tensor();
    if (t.handle().size_in_used() / size_t(ir::scalar_bytes(t.dtype())) > UINT32_MAX) return true;
  }
  return false;
}

// An op's call: checked, then recorded as a pending step when fusion is on, else launched. An op
// that writes by request (into a destination, or row-major memory) runs now, and so does one
// whose walk may be too deep for a kernel, so that its error comes at the call.
Tensor elementwise(OpInfo& info, std::span<Operand> operands, ResultRule rule = {}) {
  tensor::Checked checked;
  tensor::check_elementwise(info, operands, rule, checked);
  if (!rule.dest && !rule.row_major && fusion::enabled() && !launch_may_refuse(operands, *checked.shape)) {
    return tensor::record_pending(info, operands, checked);
  }
  return tensor::run_eager(info, operands, rule, checked);
}

Tensor binary(OpInfo& info, Operand a, Operand b) {
  std::array<Operand, 2> ops{std::move(a), std::move(b)};
  return elementwise(info, ops);
}

Tensor unary(OpInfo& info, Operand a, ResultRule rule = {}) {
  std::array<Operand, 1> ops{std::move(a)};
  return elementwise(info, ops, rule);
}

}  // namespace

// Each op's OpInfo is made on its first call and kept to exit (its kernels with it).
#define KILN_BINARY(fn_name, needs, to_bool, kind)                               \
  Tensor fn_name(Operand a, Operand b) {                                         \
    static OpInfo* info = new OpInfo(#fn_name, needs, to_bool, binary_fn(kind)); \
    return binary(*info, std::move(a), std::move(b));                            \
  }
KILN_BINARY(add, Needs::Numbers, false, ir::OpKind::Add)
KILN_BINARY(sub, Needs::Numbers, false, ir::OpKind::Sub)
KILN_BINARY(mul, Needs::Numbers, false, ir::OpKind::Mul)
KILN_BINARY(div, Needs::Numbers, false, ir::OpKind::Div)
KILN_BINARY(rem, Needs::Numbers, false, ir::OpKind::Rem)
KILN_BINARY(pow, Needs::Floats, false, ir::OpKind::Pow)
KILN_BINARY(max, Needs::Numbers, false, ir::OpKind::Max)
KILN_BINARY(min, Needs::Numbers, false, ir::OpKind::Min)
KILN_BINARY(eq, Needs::Any, true, ir::OpKind::Eq)
KILN_BINARY(ne, Needs::Any, true, ir::OpKind::Ne)
KILN_BINARY(lt, Needs::Numbers, true, ir::OpKind::Lt)
KILN_BINARY(le, Needs::Numbers, true, ir::OpKind::Le)
KILN_BINARY(gt, Needs::Numbers, true, ir::OpKind::Gt)
KILN_BINARY(ge, Needs::Numbers, true, ir::OpKind::Ge)
#undef KILN_BINARY

#define KILN_UNARY(fn_name, needs, fn)                            \
  Tensor fn_name(Operand a) {                                     \
    static OpInfo* info = new OpInfo(#fn_name, needs, false, fn); \
    return unary(*info, std::move(a));                            \
  }
KILN_UNARY(neg, Needs::Signed, unary_fn(ir::OpKind::Neg))
KILN_UNARY(exp, Needs::Floats, unary_fn(ir::OpKind::Exp))
KILN_UNARY(log, Needs::Floats, unary_fn(ir::OpKind::Log))
KILN_UNARY(sqrt, Needs::Floats, unary_fn(ir::OpKind::Sqrt))
KILN_UNARY(tanh, Needs::Floats, unary_fn(ir::OpKind::Tanh))
KILN_UNARY(erf, Needs::Floats, unary_fn(ir::OpKind::Erf))
// An unsigned value is its own magnitude.
KILN_UNARY(abs, Needs::Numbers, [](Tracer& t, const std::vector<ValueRef>& v) {
  return ir::is_unsigned_int(v[0].type.scalar) ? v[0] : t.unary(ir::OpKind::Abs, widen(t, v[0]));
})
KILN_UNARY(sigmoid, Needs::Floats, [](Tracer& t, const std::vector<ValueRef>& v) {
  ValueRef x = widen(t, v[0]);
  ValueRef one = constant_like(t, x, 1.0);
  return t.binary(ir::OpKind::Div, one,
                  t.binary(ir::OpKind::Add, one, t.unary(ir::OpKind::Exp, t.unary(ir::OpKind::Neg, x))));
})
KILN_UNARY(relu, Needs::Numbers, [](Tracer& t, const std::vector<ValueRef>& v) {
  ValueRef x = widen(t, v[0]);
  return t.binary(ir::OpKind::Max, x, constant_like(t, x, 0.0));
})
// The erf form, as PyTorch's default: x / 2 * (1 + erf(x / sqrt(2))).
KILN_UNARY(gelu, Needs::Floats, [](Tracer& t, const std::vector<ValueRef>& v) {
  ValueRef x = widen(t, v[0]);
  ValueRef inner = t.unary(ir::OpKind::Erf, t.binary(ir::OpKind::Mul, x, constant_like(t, x, M_SQRT1_2)));
  return t.binary(ir::OpKind::Mul, t.binary(ir::OpKind::Mul, x, constant_like(t, x, 0.5)),
                  t.binary(ir::OpKind::Add, constant_like(t, x, 1.0), inner));
})
#undef KILN_UNARY

Tensor where(Operand condition, Operand a, Operand b) {
  static OpInfo* info = [] {
    auto* i = new OpInfo("where", Needs::Any, false,
                         [](Tracer& t, const std::vector<ValueRef>& v) { return t.select(v[0], v[1], v[2]); });
    i->condition_first = true;
    return i;
  }();
  std::array<Operand, 3> ops{std::move(condition), std::move(a), std::move(b)};
  return elementwise(*info, ops);
}

namespace {
ElementFn identity() {
  return [](Tracer&, const std::vector<ValueRef>& v) { return v[0]; };
}
}  // namespace

Tensor cast(Operand a, DType dtype) {
  static OpInfo* info = new OpInfo("cast", Needs::Any, false, identity());
  if (a.is_scalar()) throw Error("tensor.undefined", "cast: the operand is a number, not a tensor");
  if (a.tensor().defined() && a.tensor().dtype() == dtype) return a.take();
  return unary(*info, std::move(a), ResultRule{dtype, false, nullptr});
}

namespace {
// The copy kernels' op, shared by into_contiguous and assign.
OpInfo& copy_info() {
  static OpInfo* info = new OpInfo("copy", Needs::Any, false, identity());
  return *info;
}
}  // namespace

void assign(const Tensor& dest, const Tensor& value) {
  if (!dest.defined() || !value.defined())
    throw Error("tensor.undefined", "assign: an empty Tensor (moved from, or never set)");
  if (tensor::self_overlapping(dest.shape(), dest.strides())) {
    throw Error("tensor.overlapping_destination", "assign: the destination " + to_string(dest.shape()) +
                                                      " with strides " + to_string(dest.strides()) +
                                                      " reaches some elements twice (an expanded view); "
                                                      "write into a view without repeated elements");
  }
  if (value.client().id() != dest.client().id()) {
    throw Error("tensor.device_mismatch", "assign: the value lives on another device; move it with to_device()");
  }
  // Pending chains that read the destination's memory run first: they were recorded before this
  // write, and must see the values from before it.
  tensor::flush_readers(dest.handle().memory_id());
  // A value over the destination's own memory (a shifted view of it) is copied out first: the copy
  // kernel's units would otherwise read elements that others have already written.
  if (value.handle().memory_id() == dest.handle().memory_id()) {
    Tensor apart = unary(copy_info(), Operand(value), ResultRule{std::nullopt, true, nullptr});
    (void)unary(copy_info(), Operand(apart), ResultRule{dest.dtype(), false, &dest});
    return;
  }
  (void)unary(copy_info(), Operand(value), ResultRule{dest.dtype(), false, &dest});
}

Tensor into_contiguous(Tensor t) {
  if (!t.defined()) throw Error("tensor.undefined", "into_contiguous: the tensor is empty (moved from, or never set)");
  if (t.is_contiguous()) return t;
  return unary(copy_info(), Operand(std::move(t)), ResultRule{std::nullopt, true, nullptr});
}

}  // namespace kiln
