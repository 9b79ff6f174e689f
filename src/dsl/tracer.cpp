// The tracer: checks each proxy operation and records it as IR.
#include <algorithm>
#include <atomic>
#include <iterator>
#include <tuple>

#include "kiln/dsl/trace.h"
#include "kiln/error.h"
#include "kiln/ir/text.h"
#include "kiln/ir/type_rules.h"
#include "kiln/ir/verifier.h"

namespace kiln::dsl {

using ir::OpKind;
using ir::Scalar;
using ir::Type;

namespace {
thread_local Tracer* g_current = nullptr;
constexpr uint32_t kNoVar = 0xffffffffu;

std::string ts(const Type& t) { return ir::to_string(t); }
}  // namespace

static std::atomic<uint32_t> g_next_serial{1};  // trace serials, never 0

Tracer::Tracer(ir::Kernel& k) : k_(k), b_(k), previous_(g_current), serial_(g_next_serial.fetch_add(1)) {
  g_current = this;
  region_open_.push_back(true);
  frames_.push_back(Frame{0, false, {}});
}

Tracer::~Tracer() { g_current = previous_; }

Tracer& Tracer::current() {
  if (!g_current) {
    throw Error("trace.no_context",
                "a kiln proxy was used outside a kernel trace; proxies only exist while define() or launch() "
                "runs the kernel function");
  }
  return *g_current;
}

bool Tracer::active() { return g_current != nullptr; }

std::string Tracer::op_label(OpKind op) const {
  return "op #" + std::to_string(ops_ + 1) + " '" + std::string(ir::op_name(op)) + "'";
}

void Tracer::fail(const std::string& kind, OpKind op, const std::string& what) const {
  throw Error(kind, "kernel '" + k_.name + "': " + op_label(op) + ": " + what);
}

void Tracer::fail(const std::string& kind, const std::string& what) const {
  throw Error(kind, "kernel '" + k_.name + "': " + what);
}

void Tracer::note_value(const ValueRef& v) {
  if (v.id == ir::kNoValue) return;
  if (value_region_.size() <= v.id) {
    value_region_.resize(v.id + 1, 0);
    var_index_.resize(v.id + 1, kNoVar);
  }
  value_region_[v.id] = frames_.back().region_serial;
}

ValueRef Tracer::use(const ValueRef& v, OpKind for_op) const {
  if (v.id == ir::kNoValue || v.id >= value_region_.size() || v.trace != serial_) {
    fail("trace.bad_value", for_op, "an operand is not a value of this trace (a proxy from another kernel?)");
  }
  if (!region_open_[value_region_[v.id]]) {
    fail("trace.scope", for_op,
         "uses a value defined inside a run-time If/For/While region after that region closed; declare a Var<T> "
         "before the region and assign it inside to carry a value out");
  }
  return v;
}

ir::Type Tracer::typed(OpKind kind, std::span<const Type> operands, const std::vector<ir::Attr>& attrs,
                       const Type& stated, ir::Value array) const {
  const ir::Param* p = array == ir::kNoValue ? nullptr : k_.param_of(array);
  ir::TypeResult r = ir::result_type(ir::TypeQuery{kind, operands, attrs, stated, p ? std::string_view(p->name) : ""});
  if (!r.ok()) fail("trace.type", kind, r.error);
  return r.type;
}

ValueRef Tracer::emit_refs(OpKind kind, std::span<const ValueRef> operands, const Type& stated,
                           std::vector<ir::Attr> attrs) {
  if (finished_) fail("trace.finished", kind, "the trace has already finished");
  std::vector<ir::Value> ids;
  std::vector<Type> types;
  ids.reserve(operands.size());
  types.reserve(operands.size());
  for (const ValueRef& o : operands) {
    ids.push_back(use(o, kind).id);
    types.push_back(o.type);
  }
  Type result = typed(kind, types, attrs, stated, ir::written_array(kind, ids));
  ir::Value id = b_.emit(kind, ids, result, std::move(attrs));
  ++ops_;
  ValueRef r{id, result, serial_};
  note_value(r);
  return r;
}

ValueRef Tracer::emit(OpKind kind, std::initializer_list<ValueRef> operands, const Type& stated,
                      std::vector<ir::Attr> attrs) {
  return emit_refs(kind, std::span<const ValueRef>(operands.begin(), operands.size()), stated, std::move(attrs));
}

ValueRef Tracer::param(const std::string& name, const Type& type) {
  ir::Value v = k_.new_value(type);
  k_.params.push_back(ir::Param{name, type, v});
  ValueRef r{v, type, serial_};
  note_value(r);
  return r;
}

ValueRef Tracer::constant(const Type& t, const ir::AttrValue& v) {
  ValueRef r = emit(OpKind::Const, {}, t, {ir::Attr{ir::AttrKey::Value, v}});
  if (t.is_scalar() && ir::is_int(t.scalar)) int_constants_.emplace_back(r.id, v.i);
  return r;
}

std::optional<int64_t> Tracer::constant_int(const ValueRef& v) const {
  for (const auto& [value, constant] : int_constants_) {
    if (value == v.id) return constant;
  }
  return std::nullopt;
}

ValueRef Tracer::splat(ValueRef a, int width) {
  if (width == 1 || a.type.width == width) return a;
  return emit(OpKind::VectorSplat, {a}, Type::vector_of(a.type.scalar, width));
}

ValueRef Tracer::broadcast_to(ValueRef a, int width, OpKind for_op) {
  if (a.type.width == width) return a;
  if (a.type.width != 1) {
    fail("trace.vector_width", for_op,
         "vectors of different widths " + std::to_string(a.type.width) + " and " + std::to_string(width) +
             "; only a scalar (width 1) broadcasts to a vector");
  }
  return splat(a, width);
}

ValueRef Tracer::unary(OpKind kind, ValueRef a) { return emit(kind, {a}, Type::none()); }

// Typing is the op's rule; the tracer adds what the DSL allows beyond the IR: a scalar operand
// broadcasts to the other's vector width.
ValueRef Tracer::binary(OpKind kind, ValueRef a, ValueRef b) {
  use(a, kind);
  use(b, kind);
  if (a.type.is_value() && b.type.is_value() && a.type.scalar != b.type.scalar) {
    fail("trace.type", kind,
         "operands are " + std::string(ir::scalar_name(a.type.scalar)) + " and " +
             std::string(ir::scalar_name(b.type.scalar)) + "; convert one with cast<T>()");
  }
  if (a.type.is_value() && b.type.is_value()) {
    int width = std::max<int>(a.type.width, b.type.width);
    if (a.type.width != b.type.width && a.type.width != 1 && b.type.width != 1) {
      fail("trace.vector_width", kind,
           "vectors of different widths " + std::to_string(a.type.width) + " and " + std::to_string(b.type.width) +
               "; only a scalar (width 1) broadcasts to a vector");
    }
    a = broadcast_to(a, width, kind);
    b = broadcast_to(b, width, kind);
  }
  return emit(kind, {a, b}, Type::none());
}

ValueRef Tracer::fma(ValueRef a, ValueRef b, ValueRef c) {
  for (const ValueRef* v : {&a, &b, &c}) {
    use(*v, OpKind::Fma);
    if (v->type.scalar != a.type.scalar) fail("trace.type", OpKind::Fma, "operands differ in type; use cast<T>()");
  }
  int width = std::max({int(a.type.width), int(b.type.width), int(c.type.width)});
  a = broadcast_to(a, width, OpKind::Fma);
  b = broadcast_to(b, width, OpKind::Fma);
  c = broadcast_to(c, width, OpKind::Fma);
  return emit(OpKind::Fma, {a, b, c}, Type::none());
}

ValueRef Tracer::select(ValueRef cond, ValueRef a, ValueRef b) {
  use(cond, OpKind::Select);
  use(a, OpKind::Select);
  use(b, OpKind::Select);
  if (a.type.scalar != b.type.scalar)
    fail("trace.type", OpKind::Select, "the two values differ in type; use cast<T>()");
  int width = std::max<int>(a.type.width, b.type.width);
  a = broadcast_to(a, width, OpKind::Select);
  b = broadcast_to(b, width, OpKind::Select);
  if (cond.type.width != 1 && cond.type.width != width) {
    width = std::max<int>(width, cond.type.width);
    a = broadcast_to(a, width, OpKind::Select);
    b = broadcast_to(b, width, OpKind::Select);
    cond = broadcast_to(cond, width, OpKind::Select);
  }
  return emit(OpKind::Select, {cond, a, b}, Type::none());
}

ValueRef Tracer::cast(ValueRef a, Scalar to) {
  use(a, OpKind::Cast);
  if (!a.type.is_value()) fail("trace.type", OpKind::Cast, "casts values, not " + ts(a.type));
  return emit(OpKind::Cast, {a}, a.type.with_scalar(to));
}

ValueRef Tracer::bitcast(ValueRef a, Scalar to) {
  use(a, OpKind::Bitcast);
  if (!a.type.is_value() || ir::scalar_bytes(to) != ir::scalar_bytes(a.type.scalar)) {
    fail("trace.type", OpKind::Bitcast,
         "bitcast needs types of one size: " + ts(a.type) + " to " + std::string(ir::scalar_name(to)));
  }
  return emit(OpKind::Bitcast, {a}, a.type.with_scalar(to));
}

ValueRef Tracer::vector_construct(std::span<const ValueRef> lanes) {
  int n = static_cast<int>(lanes.size());
  if (n < 2 || !ir::Target::valid_vector_width(int(n))) {
    fail("trace.vector_width", OpKind::VectorConstruct,
         std::to_string(n) + " lanes; a vector has one of " + ir::Target::vector_widths_text(2));
  }
  for (const ValueRef& l : lanes) {
    if (!l.type.is_scalar() || l.type.scalar != lanes[0].type.scalar) {
      fail("trace.type", OpKind::VectorConstruct, "lanes must be scalars of one type");
    }
  }
  return emit_refs(OpKind::VectorConstruct, lanes, Type::vector_of(lanes[0].type.scalar, n));
}

ValueRef Tracer::vector_extract(ValueRef v, int lane) {
  use(v, OpKind::VectorExtract);
  if (v.type.width == 1 && lane == 0) return v;
  if (lane < 0 || lane >= v.type.width) {
    fail("trace.vector_lane", OpKind::VectorExtract,
         "lane " + std::to_string(lane) + " is outside a vector of width " + std::to_string(v.type.width));
  }
  return emit(OpKind::VectorExtract, {v}, Type::scalar_of(v.type.scalar),
              {ir::Attr{ir::AttrKey::Lane, ir::AttrValue::of_int(lane)}});
}

ValueRef Tracer::vector_insert(ValueRef v, ValueRef scalar, int lane) {
  use(v, OpKind::VectorInsert);
  if (lane < 0 || lane >= v.type.width) {
    fail("trace.vector_lane", OpKind::VectorInsert,
         "lane " + std::to_string(lane) + " is outside a vector of width " + std::to_string(v.type.width));
  }
  if (!(scalar.type == Type::scalar_of(v.type.scalar))) {
    fail("trace.type", OpKind::VectorInsert, "inserts " + ts(scalar.type) + " into " + ts(v.type));
  }
  if (v.type.width == 1) return scalar;
  return emit(OpKind::VectorInsert, {v, scalar}, v.type, {ir::Attr{ir::AttrKey::Lane, ir::AttrValue::of_int(lane)}});
}

ValueRef Tracer::leaf(OpKind kind, ir::Value operand, int64_t attr, std::vector<ir::Attr> attrs) {
  for (const Leaf& l : leaves_) {
    if (l.kind == kind && l.operand == operand && l.attr == attr) return ValueRef{l.op.result, l.op.type, serial_};
  }
  if (finished_) fail("trace.finished", kind, "the trace has already finished");
  ir::Op op;
  op.kind = kind;
  std::vector<Type> types;
  if (operand != ir::kNoValue) {
    op.operands.push_back(operand);
    types.push_back(k_.type_of(operand));
  }
  Type type = typed(kind, types, attrs, Type::none(), operand);
  op.attrs = std::move(attrs);
  op.type = type;
  op.result = k_.new_value(type);
  ++ops_;
  ValueRef r{op.result, type, serial_};
  note_value(r);
  value_region_[r.id] = 0;  // placed in the kernel's top region
  leaves_.push_back(Leaf{kind, operand, attr, std::move(op)});
  return r;
}

ValueRef Tracer::builtin(OpKind kind, int axis) {
  std::vector<ir::Attr> attrs;
  if (axis >= 0) attrs.push_back(ir::Attr{ir::AttrKey::Axis, ir::AttrValue::of_int(axis)});
  return leaf(kind, ir::kNoValue, axis, std::move(attrs));
}

ValueRef Tracer::len(ValueRef array) {
  use(array, OpKind::Len);
  if (k_.param_of(array.id)) return leaf(OpKind::Len, array.id, -1, {});
  return emit(OpKind::Len, {array}, Type::none());
}

ValueRef Tracer::tensor_meta(OpKind kind, ValueRef tensor, int dim) {
  if (dim < 0 || dim >= tensor.type.rank) {
    fail("trace.tensor_dim", kind,
         "dim " + std::to_string(dim) + " is outside a tensor of rank " + std::to_string(tensor.type.rank));
  }
  use(tensor, kind);
  return leaf(kind, tensor.id, dim, {ir::Attr{ir::AttrKey::Dim, ir::AttrValue::of_int(dim)}});
}

static void check_index(const Tracer& t, OpKind kind, const ValueRef& index) {
  if (!index.type.is_scalar() || !ir::is_int(index.type.scalar)) {
    t.fail("trace.type", kind, "an index must be a scalar integer, is " + ts(index.type));
  }
}

ValueRef Tracer::load(ValueRef array, ValueRef index) {
  check_index(*this, OpKind::Load, index);
  std::vector<ir::Attr> attrs;
  if (array.type.is_global()) attrs.push_back(ir::Attr{ir::AttrKey::Checked, ir::AttrValue::of_bool(true)});
  return emit(OpKind::Load, {array, index}, array.type.element(), std::move(attrs));
}

void Tracer::store(ValueRef array, ValueRef index, ValueRef value) {
  check_index(*this, OpKind::Store, index);
  if (array.type.is_global() && array.type.access == ir::Access::ReadOnly) {
    const ir::Param* p = k_.param_of(array.id);
    std::string name = p ? "'" + p->name + "' " : "";
    fail("trace.read_only", OpKind::Store,
         "writes parameter " + name + "of type " + ts(array.type) +
             ", which is read-only; declare it Slice<T> instead of Slice<const T> to write it");
  }
  value = broadcast_to(value, array.type.width, OpKind::Store);
  if (!(value.type == array.type.element())) {
    fail("trace.type", OpKind::Store, "stores " + ts(value.type) + " into an array of " + ts(array.type.element()));
  }
  std::vector<ir::Attr> attrs;
  if (array.type.is_global()) attrs.push_back(ir::Attr{ir::AttrKey::Checked, ir::AttrValue::of_bool(true)});
  emit(OpKind::Store, {array, index, value}, Type::none(), std::move(attrs));
}

ValueRef Tracer::atomic(OpKind kind, ValueRef array, ValueRef index, ValueRef value, const ValueRef* desired) {
  check_index(*this, kind, index);
  if (array.type.is_global() && array.type.access == ir::Access::ReadOnly) {
    const ir::Param* p = k_.param_of(array.id);
    std::string name = p ? "'" + p->name + "' " : "";
    fail("trace.read_only", kind,
         "atomics write; parameter " + name + "of type " + ts(array.type) +
             " is read-only; declare it Slice<T> instead of Slice<const T> to write it");
  }
  if (!(value.type == array.type.element()) || (desired && !(desired->type == array.type.element()))) {
    fail("trace.type", kind, "the value must be " + ts(array.type.element()) + ", is " + ts(value.type));
  }
  std::vector<ir::Attr> attrs;
  if (array.type.is_global()) attrs.push_back(ir::Attr{ir::AttrKey::Checked, ir::AttrValue::of_bool(true)});
  if (desired) return emit(kind, {array, index, value, *desired}, array.type.element(), std::move(attrs));
  return emit(kind, {array, index, value}, array.type.element(), std::move(attrs));
}

ValueRef Tracer::alloc(OpKind kind, const Type& element, int64_t length, uint16_t layout) {
  if (length <= 0 || length > (int64_t(1) << 30)) {
    fail("trace.array_length", kind, "array length " + std::to_string(length) + " must be between 1 and 2^30");
  }
  Type t = kind == OpKind::SharedAlloc ? Type::shared(element, static_cast<uint32_t>(length))
                                       : Type::local(element, static_cast<uint32_t>(length));
  return emit(kind, {}, t.with_layout(layout));
}

void Tracer::sync(OpKind kind) { emit(kind, {}, Type::none()); }

ValueRef Tracer::plane(OpKind kind, std::span<const ValueRef> operands) {
  return emit_refs(kind, operands, Type::none());
}

ValueRef Tracer::var_decl(const Type& element) {
  ValueRef v = emit(OpKind::VarDecl, {}, Type::var(element));
  var_index_[v.id] = static_cast<uint32_t>(var_decl_op_.size());
  var_decl_op_.push_back(ops_);
  return v;
}

bool Tracer::assigned(uint32_t var) const {
  for (const Frame& f : frames_) {
    if (std::find(f.assigned.begin(), f.assigned.end(), var) != f.assigned.end()) return true;
  }
  return false;
}

ValueRef Tracer::var_load(ValueRef var) {
  use(var, OpKind::VarLoad);
  uint32_t index = var_index_.at(var.id);
  if (!assigned(index)) {
    fail("trace.unassigned_var", OpKind::VarLoad,
         "reads the Var<" + ts(var.type.element()) + "> declared by op #" + std::to_string(var_decl_op_[index]) +
             " before it is assigned on every path to this read; give it a value where it is declared");
  }
  return emit(OpKind::VarLoad, {var}, var.type.element());
}

void Tracer::var_store(ValueRef var, ValueRef value) {
  use(var, OpKind::VarStore);
  value = broadcast_to(value, var.type.width, OpKind::VarStore);
  if (!(value.type == var.type.element())) {
    fail("trace.type", OpKind::VarStore, "assigns " + ts(value.type) + " to a Var of " + ts(var.type.element()));
  }
  emit(OpKind::VarStore, {var, value}, Type::none());
  uint32_t index = var_index_.at(var.id);
  auto& a = frames_.back().assigned;
  if (std::find(a.begin(), a.end(), index) == a.end()) a.push_back(index);
}

void Tracer::open_region(ir::Region& r, bool loop_body) {
  b_.enter(r);
  uint32_t serial = static_cast<uint32_t>(region_open_.size());
  region_open_.push_back(true);
  frames_.push_back(Frame{serial, loop_body, {}});
}

Tracer::Frame Tracer::close_region() {
  Frame f = std::move(frames_.back());
  frames_.pop_back();
  region_open_[f.region_serial] = false;
  b_.leave();
  return f;
}

void Tracer::merge_assigned(const std::vector<uint32_t>& vars) {
  auto& a = frames_.back().assigned;
  for (uint32_t v : vars) {
    if (std::find(a.begin(), a.end(), v) == a.end()) a.push_back(v);
  }
}

int Tracer::loop_depth() const {
  // Loop bodies around the innermost region, up to the nearest While condition region: a
  // Break there would leave a loop that has not started its body (the verifier rejects it).
  int n = 0;
  for (size_t i = frames_.size(); i-- > 0;) {
    if (frames_[i].while_condition) break;
    n += frames_[i].loop_body ? 1 : 0;
  }
  return n;
}

size_t Tracer::begin_if(ValueRef cond) {
  use(cond, OpKind::If);
  if (!(cond.type == Type::scalar_of(Scalar::Bool))) {
    fail("trace.type", OpKind::If, "the condition must be a scalar bool, is " + ts(cond.type));
  }
  emit(OpKind::If, {cond}, Type::none());
  ir::Region* parent = &b_.region();
  size_t handle = ifs_.size();
  ifs_.push_back(IfRecord{parent, parent->ops.size() - 1, {}});
  open_region(parent->ops.back().regions[0], false);
  return handle;
}

void Tracer::end_then(size_t if_index) { ifs_.at(if_index).then_assigned = close_region().assigned; }

void Tracer::begin_else(size_t if_index) {
  IfRecord& rec = ifs_.at(if_index);
  if (&b_.region() != rec.parent || rec.op_index + 1 != rec.parent->ops.size()) {
    fail("trace.misplaced_else", OpKind::If, "Else() must directly follow its If(), with no op recorded in between");
  }
  ir::Op& op = rec.parent->ops[rec.op_index];
  if (!op.regions[1].ops.empty()) fail("trace.misplaced_else", OpKind::If, "this If() already has an Else()");
  open_region(op.regions[1], false);
}

void Tracer::begin_else_if(size_t if_index, const ValueRef& cond) {
  IfRecord& rec = ifs_.at(if_index);
  if (&b_.region() != rec.parent || rec.op_index >= rec.parent->ops.size() ||
      rec.parent->ops[rec.op_index].kind != OpKind::If) {
    fail("trace.misplaced_else", OpKind::If, "ElseIf() must directly follow its If()");
  }
  std::vector<ir::Op>& ops = rec.parent->ops;
  size_t first = rec.op_index + 1;
  // Walking back from the last op, each op must define a value the condition needs.
  std::vector<ir::Value> needed{cond.id};
  for (size_t i = ops.size(); i-- > first;) {
    if (ops[i].result == ir::kNoValue || std::find(needed.begin(), needed.end(), ops[i].result) == needed.end()) {
      fail("trace.misplaced_else", OpKind::If,
           "ElseIf() must directly follow its If(); op '" + std::string(ir::op_name(ops[i].kind)) +
               "' was recorded in between and is not part of the ElseIf condition");
    }
    needed.insert(needed.end(), ops[i].operands.begin(), ops[i].operands.end());
  }
  if (!ops[rec.op_index].regions[1].ops.empty())
    fail("trace.misplaced_else", OpKind::If, "this If() already has an Else()");
  std::vector<ir::Op> moved(std::make_move_iterator(ops.begin() + static_cast<std::ptrdiff_t>(first)),
                            std::make_move_iterator(ops.end()));
  ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(first), ops.end());
  open_region(ops[rec.op_index].regions[1], false);
  for (ir::Op& op : moved) {
    value_region_.at(op.result) = frames_.back().region_serial;
    b_.region().ops.push_back(std::move(op));
  }
}

void Tracer::end_else(size_t if_index) {
  Frame f = close_region();
  // A var is assigned after the if when both branches assign it.
  std::vector<uint32_t> both;
  for (uint32_t v : f.assigned) {
    const auto& t = ifs_.at(if_index).then_assigned;
    if (std::find(t.begin(), t.end(), v) != t.end()) both.push_back(v);
  }
  merge_assigned(both);
}

void Tracer::check_loop_attribute(const char* name, int64_t value) {
  std::string n(name);
  if (n == "prefetch_stages" && value < 0) {
    fail("trace.loop_attribute", OpKind::For, "Loop attribute prefetch_stages must be 0 or greater");
  }
  if (n == "unroll" && value < 1)
    fail("trace.loop_attribute", OpKind::For, "Loop attribute unroll must be 1 or greater");
  if (n == "vectorize" && (value < 2 || !ir::Target::valid_vector_width(int(value)))) {
    fail("trace.loop_attribute", OpKind::For,
         "Loop attribute vectorize must be one of " + ir::Target::vector_widths_text(2) + ", not " +
             std::to_string(value));
  }
}

int64_t Tracer::loop_attribute(const char* name, const ValueRef& v) {
  std::optional<int64_t> c = constant_int(v);
  if (!c) {
    fail("trace.loop_attribute", OpKind::For,
         std::string("Loop attribute ") + name + " must be a compile-time constant; pass a C++ integer");
  }
  check_loop_attribute(name, *c);
  return *c;
}

ValueRef Tracer::begin_for(ValueRef lo, ValueRef hi, ValueRef step, const LoopAttrs& attrs) {
  for (const ValueRef* v : {&lo, &hi, &step}) {
    use(*v, OpKind::For);
    if (!v->type.is_scalar() || !ir::is_int(v->type.scalar)) {
      fail("trace.type", OpKind::For, "loop bounds and step must be scalar integers, got " + ts(v->type));
    }
  }
  if (lo.type.scalar != hi.type.scalar || lo.type.scalar != step.type.scalar) {
    fail("trace.type", OpKind::For,
         "loop bounds and step must have one type, got " + ts(lo.type) + ", " + ts(hi.type) + ", " + ts(step.type));
  }
  if (std::optional<int64_t> s = constant_int(step); s && *s <= 0) {
    fail("trace.loop_step", OpKind::For, "the step " + std::to_string(*s) + " must be greater than 0");
  }
  if (attrs.prefetch_stages != -1) check_loop_attribute("prefetch_stages", attrs.prefetch_stages);
  std::vector<ir::Attr> list;
  if (attrs.unroll != 0) {
    check_loop_attribute("unroll", attrs.unroll);
    list.push_back(ir::Attr{ir::AttrKey::Unroll, ir::AttrValue::of_int(attrs.unroll)});
  }
  if (attrs.unroll_full) list.push_back(ir::Attr{ir::AttrKey::UnrollFull, ir::AttrValue::of_bool(true)});
  if (attrs.prefetch_stages >= 0) {
    list.push_back(ir::Attr{ir::AttrKey::PrefetchStages, ir::AttrValue::of_int(attrs.prefetch_stages)});
  }
  if (attrs.vectorize != 0) {
    check_loop_attribute("vectorize", attrs.vectorize);
    list.push_back(ir::Attr{ir::AttrKey::Vectorize, ir::AttrValue::of_int(attrs.vectorize)});
  }
  if (attrs.at_least_once) list.push_back(ir::Attr{ir::AttrKey::AtLeastOnce, ir::AttrValue::of_bool(true)});
  emit(OpKind::For, {lo, hi, step}, Type::none(), std::move(list));
  ir::Region& body = b_.region().ops.back().regions[0];
  ir::Value i = k_.new_value(lo.type);
  body.args.push_back(i);
  open_region(body, true);
  ValueRef iv{i, lo.type, serial_};
  note_value(iv);
  return iv;
}

void Tracer::end_for() { close_region(); }

void Tracer::begin_while() {
  emit(OpKind::While, {}, Type::none());
  open_region(b_.region().ops.back().regions[0], false);
  frames_.back().while_condition = true;
}

void Tracer::while_condition(ValueRef cond) {
  use(cond, OpKind::Condition);
  if (!(cond.type == Type::scalar_of(Scalar::Bool))) {
    fail("trace.type", OpKind::While, "the condition must be a scalar bool, is " + ts(cond.type));
  }
  emit(OpKind::Condition, {cond}, Type::none());
  // The condition region runs at least once: what it assigns is assigned after the loop.
  Frame f = close_region();
  merge_assigned(f.assigned);
  open_region(b_.region().ops.back().regions[1], true);
}

void Tracer::end_while() { close_region(); }

void Tracer::break_loop() {
  if (loop_depth() == 0) {
    fail("trace.break_outside_loop", OpKind::Break,
         "Break() is only allowed inside a run-time For or While; a C++ loop runs while tracing, leave it with a C++ "
         "break");
  }
  emit(OpKind::Break, {}, Type::none());
}

void Tracer::continue_loop() {
  if (loop_depth() == 0) {
    fail(
        "trace.break_outside_loop", OpKind::Continue,
        "Continue() is only allowed inside a run-time For or While; a C++ loop runs while tracing, use a C++ continue");
  }
  emit(OpKind::Continue, {}, Type::none());
}

void Tracer::terminate() { emit(OpKind::Terminate, {}, Type::none()); }

void Tracer::debug_print(const std::string& format, std::span<const ValueRef> args) {
  for (const ValueRef& a : args) {
    if (!a.type.is_scalar()) fail("trace.type", OpKind::DebugPrint, "prints scalars, not " + ts(a.type));
  }
  emit_refs(OpKind::DebugPrint, args, Type::none(), {ir::Attr{ir::AttrKey::Format, ir::AttrValue::of_string(format)}});
}

void Tracer::fail_rebind() const {
  fail("trace.rebind",
       "a proxy named outside this If/For/While region is assigned inside it: a proxy names one traced "
       "value, so the new value would replace the old one on every path, whatever the region's condition or "
       "iteration. Declare it Var<T> to carry a value out of a region, or give the new value its own name");
}

void Tracer::finish() {
  if (frames_.size() != 1) fail("trace.unclosed_region", "a run-time region was left open");
  finished_ = true;
  std::stable_sort(leaves_.begin(), leaves_.end(), [&](const Leaf& a, const Leaf& b) {
    auto param_index = [&](ir::Value v) {
      for (size_t i = 0; i < k_.params.size(); ++i) {
        if (k_.params[i].value == v) return static_cast<int64_t>(i);
      }
      return int64_t{-1};
    };
    return std::tuple(a.kind, param_index(a.operand), a.attr) < std::tuple(b.kind, param_index(b.operand), b.attr);
  });
  std::vector<ir::Op> top;
  top.reserve(leaves_.size() + k_.body.ops.size());
  for (Leaf& l : leaves_) top.push_back(std::move(l.op));
  for (ir::Op& op : k_.body.ops) top.push_back(std::move(op));
  k_.body.ops = std::move(top);
  leaves_.clear();
  ir::verify(k_, "traced");
}

}  // namespace kiln::dsl
