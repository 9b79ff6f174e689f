// The tracing context. A kernel function runs with proxies as arguments; each proxy operation
// calls into the Tracer, which checks it and appends ops to the innermost open region. The
// templates in the other dsl headers stay thin: the checks and the IR building live here.
#pragma once

#include <cstdint>
#include <memory_resource>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/builder.h"
#include "kiln/ir/kernel.h"

namespace kiln::dsl {

// A traced value: its IR value and type.
struct ValueRef {
  ir::Value id = ir::kNoValue;
  ir::Type type;
  uint32_t trace = 0;  // the serial of the trace that made it: a proxy kept from another trace is refused
};

struct LoopAttrs {
  int64_t unroll = 0;  // 0: not set
  bool unroll_full = false;
  int64_t prefetch_stages = -1;  // -1: not set
  int64_t vectorize = 0;         // 0: not set
  bool at_least_once = false;
};

class Tracer {
 public:
  // Installs itself as the current thread's tracer; the destructor restores the previous one.
  explicit Tracer(ir::Kernel& k);
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  // The tracer of this thread; Error{trace.no_context} outside a trace.
  static Tracer& current();
  static bool active();

  ir::Kernel& kernel() { return k_; }
  int vector_width() const { return k_.facts.vector_width; }

  // Parameters, in order.
  ValueRef param(const std::string& name, const ir::Type& type);

  // Values. Every operand passes through use(), which rejects values of closed regions.
  ValueRef constant(const ir::Type& t, const ir::AttrValue& v);
  std::optional<int64_t> constant_int(const ValueRef& v) const;
  ValueRef unary(ir::OpKind kind, ValueRef a);
  ValueRef binary(ir::OpKind kind, ValueRef a, ValueRef b);
  ValueRef fma(ValueRef a, ValueRef b, ValueRef c);
  ValueRef select(ValueRef cond, ValueRef a, ValueRef b);
  ValueRef cast(ValueRef a, ir::Scalar to);
  ValueRef bitcast(ValueRef a, ir::Scalar to);
  ValueRef splat(ValueRef a, int width);
  ValueRef broadcast_to(ValueRef a, int width, ir::OpKind for_op);
  ValueRef vector_construct(std::span<const ValueRef> lanes);
  ValueRef vector_extract(ValueRef v, int lane);
  ValueRef vector_insert(ValueRef v, ValueRef scalar, int lane);
  ValueRef builtin(ir::OpKind kind, int axis);  // axis -1: linear

  // Arrays.
  ValueRef len(ValueRef array);
  ValueRef tensor_meta(ir::OpKind kind, ValueRef tensor, int dim);
  ValueRef load(ValueRef array, ValueRef index);
  void store(ValueRef array, ValueRef index, ValueRef value);
  ValueRef atomic(ir::OpKind kind, ValueRef array, ValueRef index, ValueRef value, const ValueRef* desired = nullptr);
  // `layout`: a shared array's shared layout (kiln/ir/layout.h), by its number in the kernel's
  // table; 0 for none.
  ValueRef alloc(ir::OpKind kind, const ir::Type& element, int64_t length, uint16_t layout = 0);
  void sync(ir::OpKind kind);
  ValueRef plane(ir::OpKind kind, std::span<const ValueRef> operands);

  // Mutable locals, with definite-assignment tracking: reading a var that is not assigned on
  // every path to the read is Error{trace.unassigned_var}.
  ValueRef var_decl(const ir::Type& element);
  ValueRef var_load(ValueRef var);
  void var_store(ValueRef var, ValueRef value);

  // Control flow. Each begin_* opens a region; the matching end_* closes it.
  size_t begin_if(ValueRef cond);
  void end_then(size_t if_index);
  void begin_else(size_t if_index);
  // Opens the else region for an ElseIf. C++ evaluates ElseIf's condition before the call, so the
  // ops after the if are the ones computing `cond`: they move into the else region, where they run
  // only when the first condition is false. Any other op in between is trace.misplaced_else.
  void begin_else_if(size_t if_index, const ValueRef& cond);
  void end_else(size_t if_index);
  ValueRef begin_for(ValueRef lo, ValueRef hi, ValueRef step, const LoopAttrs& attrs);
  void end_for();
  void begin_while();
  void while_condition(ValueRef cond);  // ends the condition region, opens the body
  void end_while();
  void break_loop();
  void continue_loop();
  void terminate();
  void debug_print(const std::string& format, std::span<const ValueRef> args);

  // Records any op through its typing rule, for the layers built on the tracer (the tile layer's
  // ops); `stated` as for emit.
  ValueRef record(ir::OpKind kind, std::span<const ValueRef> operands, const ir::Type& stated,
                  std::vector<ir::Attr> attrs = {}) {
    return emit_refs(kind, operands, stated, std::move(attrs));
  }
  // The number the next recorded op gets: what messages call it ("op #7").
  size_t next_op_number() const { return ops_ + 1; }

  // Checks a loop attribute given as a traced value: it must be a constant.
  int64_t loop_attribute(const char* name, const ValueRef& v);
  // Error{trace.loop_attribute} when `value` is out of range for the attribute `name`.
  void check_loop_attribute(const char* name, int64_t value);

  // The region being recorded, as a serial unique within the trace. A proxy remembers the region
  // its name was made in: assigning it in another one is Error{trace.rebind} (check_rebind).
  uint32_t region() const { return frames_.back().region_serial; }
  // region() of this thread's tracer; 0 outside a trace (where no proxy can be used anyway).
  static uint32_t current_region() { return active() ? current().region() : 0; }
  // A proxy named in region `named_in` is assigned here: fine in the same region; in a region
  // opened inside it (an If, a For or While body) the assignment could not depend on the region's
  // condition or iteration, so it is refused with a message that points to Var<T>.
  void check_rebind(uint32_t named_in) const {
    if (named_in != region()) fail_rebind();
  }

  // Memory that lives as long as the trace, for what the DSL hands out by reference: the element
  // `y[i]` names is an lvalue, as in CUDA C++ (memory.h). Freed all at once with the tracer, so
  // only trivially destructible objects go here.
  void* storage(size_t bytes, size_t align) { return storage_.allocate(bytes, align); }

  // Called when the kernel function returns: every region is closed, the kernel is verified.
  void finish();

  // Throws Error{kind} with the kernel's name, the number and name of the op being built.
  [[noreturn]] void fail(const std::string& kind, ir::OpKind op, const std::string& what) const;
  [[noreturn]] void fail(const std::string& kind, const std::string& what) const;
  [[noreturn]] void fail_rebind() const;

 private:
  struct Frame {
    uint32_t region_serial;
    bool loop_body = false;
    std::vector<uint32_t> assigned;  // vars definitely assigned by this region
    bool while_condition = false;    // a While's condition region: Break/Continue do not reach its loop
  };

  ValueRef use(const ValueRef& v, ir::OpKind for_op) const;
  // Records an op; its result type is the op's rule's (ir/type_rules.h). `stated` is the result
  // type for ops whose result is a choice (const, cast, allocations, ...); other ops ignore it.
  ValueRef emit(ir::OpKind kind, std::initializer_list<ValueRef> operands, const ir::Type& stated,
                std::vector<ir::Attr> attrs = {});
  ValueRef emit_refs(ir::OpKind kind, std::span<const ValueRef> operands, const ir::Type& stated,
                     std::vector<ir::Attr> attrs = {});
  // The op's rule applied to `operands`; a broken rule is trace.type.
  ir::Type typed(ir::OpKind kind, std::span<const ir::Type> operands, const std::vector<ir::Attr>& attrs,
                 const ir::Type& stated, ir::Value array) const;
  void note_value(const ValueRef& v);
  void open_region(ir::Region& r, bool loop_body);
  Frame close_region();
  void merge_assigned(const std::vector<uint32_t>& vars);
  bool assigned(uint32_t var) const;
  int loop_depth() const;
  std::string op_label(ir::OpKind op) const;

  ir::Kernel& k_;
  ir::Builder b_;
  Tracer* previous_;
  uint32_t serial_;
  std::vector<Frame> frames_;
  std::vector<uint32_t> value_region_;                        // by ir::Value: the serial of the region that defines it
  std::vector<bool> region_open_;                             // by region serial
  std::vector<uint32_t> var_index_;                           // by ir::Value of a var.decl: its index, else ~0
  std::vector<size_t> var_decl_op_;                           // by var index: the number of its var.decl op
  std::vector<std::pair<ir::Value, int64_t>> int_constants_;  // integer constants, for loop attributes
  struct IfRecord {
    ir::Region* parent;
    size_t op_index;
    std::vector<uint32_t> then_assigned;
  };
  std::vector<IfRecord> ifs_;  // by the handle begin_if returns

  // Leaves: builtins and the lengths and shapes of parameters. They read nothing the kernel can
  // change, so each is recorded once and placed at the top of the kernel in a fixed order. That
  // keeps the IR independent of the order in which C++ evaluates operands (unspecified for `a < b`
  // and for function arguments), and visible in every region.
  struct Leaf {
    ir::OpKind kind;
    ir::Value operand;
    int64_t attr;
    ir::Op op;
  };
  ValueRef leaf(ir::OpKind kind, ir::Value operand, int64_t attr, std::vector<ir::Attr> attrs);
  std::vector<Leaf> leaves_;
  std::pmr::monotonic_buffer_resource storage_;
  size_t ops_ = 0;  // ops recorded so far: the next op's number is ops_ + 1
  bool finished_ = false;
};

}  // namespace kiln::dsl
