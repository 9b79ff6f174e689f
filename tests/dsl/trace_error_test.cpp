// Trace errors: each is a kiln::Error with a stable kind, found while define<K>(id) runs the kernel
// function, whose message names the kernel (and, for errors at an op, the op) and says what to do.
// Where a rule has an allowed twin (a Var assigned in both branches), the twin is traced too.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dsl/traced_cases.h"
#include "kiln/error.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"

namespace kiln::test {
namespace {

struct TraceFailure {
  std::string kind;
  std::string message;
};

template <class K>
TraceFailure trace_failure(const KernelId& id) {
  try {
    define<K>(id);
  } catch (const Error& e) {
    return {e.kind(), e.message()};
  }
  return {"(none)", "(the kernel traced)"};
}

// Traces K with a plain id and checks the kind, that the message names the kernel, and that it
// contains each of `parts`.
template <class K>
void expect_trace_error(const std::string& kind, std::initializer_list<std::string> parts) {
  TraceFailure f = trace_failure<K>(id_of<K>({32, 1, 1}));
  EXPECT_EQ(f.kind, kind) << f.message;
  std::string kernel = "kernel '" + std::string(K::name) + "'";
  EXPECT_EQ(f.message.rfind(kernel, 0), 0u) << "the message must start by naming the kernel: " << f.message;
  for (const std::string& p : parts)
    EXPECT_NE(f.message.find(p), std::string::npos) << "no '" << p << "' in: " << f.message;
  EXPECT_FALSE(dsl::Tracer::active()) << "a failed trace leaves no tracer installed";
}

// Traces K, which must succeed, and verifies the result again outside define().
template <class K>
ir::Kernel traces(int vector_width = 1) {
  ir::Kernel k = define<K>(id_of<K>({32, 1, 1}, vector_width));
  EXPECT_NO_THROW(ir::verify(k, "traced")) << K::name;
  return k;
}

// ---- vectors -----------------------------------------------------------------------------------

struct WidthMismatch {
  static constexpr std::string_view name = "width_mismatch";
  void operator()(Slice<const float> x, Slice<float> out) const {
    Expr<float> a = x[absolute_pos()];
    Vector<float> four = vector_of<float>(a, a, a, a);
    Vector<float> two = vector_of<float>(a, a);
    Vector<float> sum = four + two;
    out[absolute_pos()] = sum[0];
  }
};

TEST(TraceError, AddingVectorsOfWidthsFourAndTwo) {
  expect_trace_error<WidthMismatch>("trace.vector_width", {"'add'", "widths 4 and 2"});
}

struct WidthMismatchInStore {
  static constexpr std::string_view name = "width_mismatch_store";
  void operator()(Slice<Vector<float>> y) const {
    Expr<float> a = 1.0f;
    y[absolute_pos()] = vector_of<float>(a, a);
  }
};

TEST(TraceError, StoringAVectorOfAnotherWidth) {
  TraceFailure f = trace_failure<WidthMismatchInStore>(id_of<WidthMismatchInStore>({32, 1, 1}, 4));
  EXPECT_EQ(f.kind, "trace.vector_width");
  EXPECT_EQ(f.message.rfind("kernel 'width_mismatch_store'", 0), 0u) << f.message;
  EXPECT_NE(f.message.find("'store'"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("widths 2 and 4"), std::string::npos) << f.message;
}

struct LaneOutOfRange {
  static constexpr std::string_view name = "lane_out_of_range";
  void operator()(Slice<const Vector<float>> x, Slice<float> out) const {
    out[absolute_pos()] = Vector<float>(x[absolute_pos()])[4];
  }
};

TEST(TraceError, VectorLaneOutsideTheWidth) {
  TraceFailure f = trace_failure<LaneOutOfRange>(id_of<LaneOutOfRange>({32, 1, 1}, 4));
  EXPECT_EQ(f.kind, "trace.vector_lane");
  EXPECT_NE(f.message.find("kernel 'lane_out_of_range'"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("lane 4 is outside a vector of width 4"), std::string::npos) << f.message;
}

// ---- loop attributes and steps -----------------------------------------------------------------

struct NegativePrefetch {
  static constexpr std::string_view name = "negative_prefetch";
  void operator()(Slice<float> out, Scalar<uint32_t> n) const {
    For(range(0u, n).prefetch_stages(-1), [&](Expr<uint32_t> i) { out[i] = 0.0f; });
  }
};

TEST(TraceError, PrefetchStagesMinusOne) {
  expect_trace_error<NegativePrefetch>("trace.loop_attribute",
                                       {"'for'", "Loop attribute prefetch_stages must be 0 or greater"});
}

struct UnrollZero {
  static constexpr std::string_view name = "unroll_zero";
  void operator()(Slice<float> out, Scalar<uint32_t> n) const {
    For(range(0u, n).unroll(0), [&](Expr<uint32_t> i) { out[i] = 0.0f; });
  }
};

TEST(TraceError, UnrollZero) {
  expect_trace_error<UnrollZero>("trace.loop_attribute", {"'for'", "Loop attribute unroll must be 1 or greater"});
}

struct UnrollByAScalar {
  static constexpr std::string_view name = "unroll_by_a_scalar";
  void operator()(Slice<float> out, Scalar<uint32_t> n) const {
    For(range(0u, n).unroll(n), [&](Expr<uint32_t> i) { out[i] = 0.0f; });
  }
};

TEST(TraceError, NonConstantAttribute) {
  expect_trace_error<UnrollByAScalar>("trace.loop_attribute",
                                      {"Loop attribute unroll must be a compile-time constant"});
}

struct PrefetchByAScalar {
  static constexpr std::string_view name = "prefetch_by_a_scalar";
  void operator()(Slice<float> out, Scalar<uint32_t> n) const {
    For(range(0u, n).prefetch_stages(n), [&](Expr<uint32_t> i) { out[i] = 0.0f; });
  }
};

TEST(TraceError, NonConstantPrefetchStages) {
  expect_trace_error<PrefetchByAScalar>("trace.loop_attribute",
                                        {"Loop attribute prefetch_stages must be a compile-time constant"});
}

struct VectorizeThree {
  static constexpr std::string_view name = "vectorize_three";
  void operator()(Slice<float> out, Scalar<uint32_t> n) const {
    For(range(0u, n).vectorize(3), [&](Expr<uint32_t> i) { out[i] = 0.0f; });
  }
};

TEST(TraceError, VectorizeByAWidthKilnHasNot) {
  expect_trace_error<VectorizeThree>("trace.loop_attribute",
                                     {"'for'", "Loop attribute vectorize must be one of 2, 4, 8, 16, not 3"});
}

struct VectorizeByAScalar {
  static constexpr std::string_view name = "vectorize_by_a_scalar";
  void operator()(Slice<float> out, Scalar<uint32_t> n) const {
    For(range(0u, n).vectorize(n), [&](Expr<uint32_t> i) { out[i] = 0.0f; });
  }
};

TEST(TraceError, NonConstantVectorize) {
  expect_trace_error<VectorizeByAScalar>("trace.loop_attribute",
                                         {"Loop attribute vectorize must be a compile-time constant"});
}

// A constant proxy is a constant: its value is the attribute.
struct UnrollByAConstantProxy {
  static constexpr std::string_view name = "unroll_by_a_constant_proxy";
  void operator()(Slice<float> out, Scalar<uint32_t> n) const {
    Expr<uint32_t> two = 2u;
    For(range(0u, n).unroll(two), [&](Expr<uint32_t> i) { out[i] = 0.0f; });
  }
};

TEST(TraceError, ConstantProxyAttributeIsAccepted) {
  ir::Kernel k = traces<UnrollByAConstantProxy>();
  const ir::Op* loop = nullptr;
  ir::walk(k.body, [&](const ir::Op& op) {
    if (op.kind == ir::OpKind::For) loop = &op;
  });
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->attr_int(ir::AttrKey::Unroll), 2);
}

struct NegativeSignedStep {
  static constexpr std::string_view name = "negative_signed_step";
  void operator()(Slice<float> out) const {
    For(range(10, 0, -1), [&](Expr<int32_t> i) { out[cast<uint32_t>(i)] = 0.0f; });
  }
};

TEST(TraceError, NegativeConstantStep) {
  expect_trace_error<NegativeSignedStep>("trace.loop_step", {"'for'", "the step -1 must be greater than 0"});
}

// A zero step of an unsigned range, as a C++ number. (-1 there does not compile: it is out of
// uint32_t's range, tests/compile_fail/narrowing.cpp range_negative_step.)
struct ZeroStepOfAnUnsignedRange {
  static constexpr std::string_view name = "zero_unsigned_step";
  void operator()(Slice<float> out, Scalar<uint32_t> n) const {
    For(range(0u, n, 0), [&](Expr<uint32_t> i) { out[i] = 0.0f; });
  }
};

TEST(TraceError, ZeroConstantStepOfAnUnsignedRange) {
  expect_trace_error<ZeroStepOfAnUnsignedRange>("trace.loop_step", {"the step 0 must be greater than 0"});
}

struct ZeroStepProxy {
  static constexpr std::string_view name = "zero_step_proxy";
  void operator()(Slice<float> out) const {
    Expr<int32_t> lo = 0;
    Expr<int32_t> hi = 8;
    Expr<int32_t> step = 0;
    For(range(lo, hi, step), [&](Expr<int32_t> i) { out[cast<uint32_t>(i)] = 0.0f; });
  }
};

TEST(TraceError, ZeroStepGivenAsAConstantProxy) {
  expect_trace_error<ZeroStepProxy>("trace.loop_step", {"'for'", "the step 0 must be greater than 0"});
}

// ---- Break and Continue ------------------------------------------------------------------------

struct BreakAtTop {
  static constexpr std::string_view name = "break_at_top";
  void operator()(Slice<float> out) const {
    out[absolute_pos()] = 1.0f;
    Break();
  }
};

TEST(TraceError, BreakOutsideARunTimeLoop) {
  expect_trace_error<BreakAtTop>("trace.break_outside_loop",
                                 {"'break'", "Break() is only allowed inside a run-time For or While"});
}

// A C++ loop runs while tracing; it is no run-time loop for Break() to leave.
struct BreakInACppLoop {
  static constexpr std::string_view name = "break_in_a_cpp_loop";
  void operator()(Slice<float> out) const {
    for (int i = 0; i < 2; ++i) {
      Expr<float> v = out[absolute_pos()];
      If(v > 0.0f, [] { Break(); });
    }
  }
};

TEST(TraceError, BreakInACppForLoop) {
  expect_trace_error<BreakInACppLoop>("trace.break_outside_loop", {"'break'", "C++ loop"});
}

struct ContinueAtTop {
  static constexpr std::string_view name = "continue_at_top";
  void operator()(Slice<float> out) const {
    If(absolute_pos() > 3u, [] { Continue(); });
    out[absolute_pos()] = 1.0f;
  }
};

TEST(TraceError, ContinueOutsideARunTimeLoop) {
  expect_trace_error<ContinueAtTop>("trace.break_outside_loop",
                                    {"'continue'", "Continue() is only allowed inside a run-time For or While"});
}

struct ContinueInACppLoop {
  static constexpr std::string_view name = "continue_in_a_cpp_loop";
  void operator()(Slice<float> out) const {
    for (int i = 0; i < 3; ++i) {
      if (i == 1) Continue();
    }
    out[absolute_pos()] = 1.0f;
  }
};

TEST(TraceError, ContinueInACppForLoop) {
  expect_trace_error<ContinueInACppLoop>("trace.break_outside_loop", {"'continue'"});
}

// A While's condition region is not its body: Break there would leave a loop that has not
// started. Inside an outer For it must still be a trace error, not a verifier failure later.
struct BreakInAWhileCondition {
  static constexpr std::string_view name = "break_in_a_while_condition";
  void operator()(Slice<float> out, Scalar<uint32_t> n) const {
    For(range(0u, n), [&](Expr<uint32_t> i) {
      While(
          [&] {
            Break();
            return i < 4u;
          },
          [&] { out[i] = 1.0f; });
    });
  }
};

TEST(TraceError, BreakInAWhileConditionInsideAFor) {
  expect_trace_error<BreakInAWhileCondition>("trace.break_outside_loop", {"'break'"});
}

struct BreakInNestedLoops {
  static constexpr std::string_view name = "break_in_nested_loops";
  void operator()(Slice<float> out, Scalar<uint32_t> n) const {
    For(range(0u, n), [&](Expr<uint32_t> i) {
      While([&] { return i < 4u; },
            [&] {
              If(i == 2u, [] { Break(); });
              Continue();
            });
      Break();
    });
    out[absolute_pos()] = 1.0f;
  }
};

TEST(TraceError, BreakAndContinueInsideLoopsAreAccepted) {
  ir::Kernel k = traces<BreakInNestedLoops>();
  int terminators = 0;
  ir::walk(k.body, [&](const ir::Op& op) {
    terminators += op.kind == ir::OpKind::Break || op.kind == ir::OpKind::Continue ? 1 : 0;
  });
  EXPECT_EQ(terminators, 3);
}

// ---- definite assignment of Vars ----------------------------------------------------------------

struct ReadBeforeAssign {
  static constexpr std::string_view name = "read_before_assign";
  void operator()(Slice<float> out) const {
    Var<float> v;
    out[absolute_pos()] = v;
  }
};

TEST(TraceError, ReadingAVarBeforeItIsAssigned) {
  expect_trace_error<ReadBeforeAssign>("trace.unassigned_var", {"'var.load'", "Var<f32>", "before it is assigned"});
}

struct AssignedInThenOnly {
  static constexpr std::string_view name = "assigned_in_then_only";
  void operator()(Slice<float> out) const {
    Var<float> v;
    Expr<float> e = out[absolute_pos()];
    If(e > 0.0f, [&] { v = e; }).Else([&] { out[absolute_pos()] = 0.0f; });
    out[absolute_pos()] = v;
  }
};

TEST(TraceError, VarAssignedInOnlyOneBranch) {
  expect_trace_error<AssignedInThenOnly>("trace.unassigned_var", {"'var.load'"});
}

struct AssignedInIfWithoutElse {
  static constexpr std::string_view name = "assigned_in_if_without_else";
  void operator()(Slice<float> out) const {
    Var<float> v;
    Expr<float> e = out[absolute_pos()];
    If(e > 0.0f, [&] { v = e; });
    out[absolute_pos()] = v;
  }
};

TEST(TraceError, VarAssignedInAnIfWithoutElse) {
  expect_trace_error<AssignedInIfWithoutElse>("trace.unassigned_var", {"'var.load'"});
}

TEST(TraceError, VarAssignedInBothBranchesIsReadable) {
  ir::Kernel k = traces<BothBranches>();
  int loads = 0, stores = 0;
  ir::walk(k.body, [&](const ir::Op& op) {
    loads += op.kind == ir::OpKind::VarLoad ? 1 : 0;
    stores += op.kind == ir::OpKind::VarStore ? 1 : 0;
  });
  EXPECT_EQ(loads, 1);
  EXPECT_EQ(stores, 2);
}

struct AssignedInEveryArmOfAChain {
  static constexpr std::string_view name = "assigned_in_every_arm";
  void operator()(Slice<float> out) const {
    Var<float> v;
    Expr<float> e = out[absolute_pos()];
    If(e > 0.0f, [&] { v = 1.0f; }).ElseIf(e < 0.0f, [&] { v = -1.0f; }).Else([&] { v = 0.0f; });
    out[absolute_pos()] = v;
  }
};

TEST(TraceError, VarAssignedInEveryArmOfAnElseIfChainIsReadable) {
  EXPECT_NO_THROW(traces<AssignedInEveryArmOfAChain>());
}

struct AssignedInTwoArmsOfThree {
  static constexpr std::string_view name = "assigned_in_two_arms_of_three";
  void operator()(Slice<float> out) const {
    Var<float> v;
    Expr<float> e = out[absolute_pos()];
    If(e > 0.0f, [&] { v = 1.0f; }).ElseIf(e < 0.0f, [&] { v = -1.0f; }).Else([&] { out[absolute_pos()] = 2.0f; });
    out[absolute_pos()] = v;
  }
};

TEST(TraceError, VarMissingInOneArmOfAnElseIfChain) {
  expect_trace_error<AssignedInTwoArmsOfThree>("trace.unassigned_var", {"'var.load'"});
}

struct AssignedInLoopBody {
  static constexpr std::string_view name = "assigned_in_loop_body";
  void operator()(Slice<float> out, Scalar<uint32_t> n) const {
    Var<float> v;
    For(range(0u, n), [&](Expr<uint32_t> i) { v = out[i]; });
    out[absolute_pos()] = v;
  }
};

TEST(TraceError, VarAssignedOnlyInsideAForBodyThenReadAfter) {
  expect_trace_error<AssignedInLoopBody>("trace.unassigned_var", {"'var.load'", "declared by op #"});
}

// A While's condition runs at least once: what it assigns is assigned after the loop.
struct AssignedInWhileCondition {
  static constexpr std::string_view name = "assigned_in_while_condition";
  void operator()(Slice<float> out) const {
    Var<float> v;
    While(
        [&] {
          v = out[absolute_pos()];
          return Expr<float>(v) > 0.0f;
        },
        [&] { out[absolute_pos()] = 0.0f; });
    out[absolute_pos()] = v;
  }
};

TEST(TraceError, VarAssignedInAWhileConditionIsReadableAfter) { EXPECT_NO_THROW(traces<AssignedInWhileCondition>()); }

// ---- read-only parameters ----------------------------------------------------------------------

struct StoreToConst {
  static constexpr std::string_view name = "store_to_const";
  static constexpr std::array<std::string_view, 2> param_names{"input", "out"};
  void operator()(Slice<const float> input, Slice<float> out) const {
    out[absolute_pos()] = input[absolute_pos()];
    input[absolute_pos()] = 0.0f;
  }
};

TEST(TraceError, StoreToASliceOfConst) {
  expect_trace_error<StoreToConst>("trace.read_only", {"'store'", "'input'", "buffer<f32, ro>", "Slice<T>"});
}

struct AtomicOnConst {
  static constexpr std::string_view name = "atomic_on_const";
  static constexpr std::array<std::string_view, 1> param_names{"counts"};
  void operator()(Slice<const uint32_t> counts) const { atomic_add(counts[absolute_pos()], 1u); }
};

TEST(TraceError, AtomicOnASliceOfConst) {
  expect_trace_error<AtomicOnConst>("trace.read_only", {"'atomic.add'", "'counts'", "buffer<u32, ro>"});
}

struct StoreToConstVectorSlice {
  static constexpr std::string_view name = "store_to_const_vectors";
  static constexpr std::array<std::string_view, 1> param_names{"xs"};
  void operator()(Slice<const Vector<float>> xs) const { xs[absolute_pos()] = 1.0f; }
};

TEST(TraceError, StoreToASliceOfConstVectors) {
  TraceFailure f = trace_failure<StoreToConstVectorSlice>(id_of<StoreToConstVectorSlice>({32, 1, 1}, 4));
  EXPECT_EQ(f.kind, "trace.read_only");
  EXPECT_NE(f.message.find("kernel 'store_to_const_vectors'"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("'xs'"), std::string::npos) << f.message;
}

// ---- atomics on a copy of an element -----------------------------------------------------------

// `auto e = bins[k]` holds bins[k]'s value (as `auto e = bins[k]` does in CUDA C++): an atomic
// on it has no element to work on.
struct AtomicOnACopy {
  static constexpr std::string_view name = "atomic_on_a_copy";
  static constexpr std::array<std::string_view, 1> param_names{"bins"};
  void operator()(Slice<uint32_t> bins) const {
    auto e = bins[absolute_pos()];
    atomic_add(e, 1u);
  }
};

TEST(TraceError, AtomicOnACopyOfAnElement) {
  expect_trace_error<AtomicOnACopy>("trace.not_an_element", {"'atomic.add'", "auto e = a[i]", "auto& e = a[i]"});
}

// The allowed twin: a reference is the element.
struct AtomicOnAReference {
  static constexpr std::string_view name = "atomic_on_a_reference";
  void operator()(Slice<uint32_t> bins) const {
    auto& e = bins[absolute_pos()];
    atomic_add(e, 1u);
    atomic_cas(e, 1u, 2u);
  }
};

TEST(TraceError, AtomicOnAReferenceToAnElementTraces) { EXPECT_NO_THROW(traces<AtomicOnAReference>()); }

// ---- scope -------------------------------------------------------------------------------------

// A value made inside a region and used after it: only through a C++ container, since assigning
// an outer name inside the region is refused first (trace.rebind, below).
struct ValueEscapesIf {
  static constexpr std::string_view name = "value_escapes_if";
  void operator()(Slice<float> out) const {
    std::vector<Expr<float>> kept;
    If(absolute_pos() < 4u, [&] { kept.push_back(out[absolute_pos()] * 2.0f); });
    out[absolute_pos()] = kept[0];
  }
};

TEST(TraceError, ValueDefinedInsideIfUsedAfterIt) {
  expect_trace_error<ValueEscapesIf>("trace.scope", {"'store'", "after that region closed", "Var<T>"});
}

struct InductionValueEscapes {
  static constexpr std::string_view name = "induction_value_escapes";
  void operator()(Slice<float> out, Scalar<uint32_t> n) const {
    std::vector<Expr<uint32_t>> kept;
    For(range(0u, n), [&](Expr<uint32_t> i) { kept.push_back(i); });
    out[kept[0]] = 1.0f;
  }
};

TEST(TraceError, InductionValueUsedAfterItsLoop) {
  expect_trace_error<InductionValueEscapes>("trace.scope", {"'store'"});
}

struct ThenValueInElse {
  static constexpr std::string_view name = "then_value_in_else";
  void operator()(Slice<float> out) const {
    std::vector<Expr<float>> kept;
    Expr<bool> c = absolute_pos() < 4u;
    If(c, [&] { kept.push_back(out[absolute_pos()] + 1.0f); }).Else([&] { out[absolute_pos()] = kept[0]; });
  }
};

TEST(TraceError, ThenValueUsedInTheElse) { expect_trace_error<ThenValueInElse>("trace.scope", {"'store'"}); }

// ---- rebinding a name inside a region ----------------------------------------------------------
// A proxy names one traced value. `v = w` inside an If would replace v's value on every path,
// whatever the condition (w may well be a value from outside the If), so it is refused; a Var is
// the mutable local. The twins rebind in the region the name was made in, or use a Var.

struct RebindInIf {
  static constexpr std::string_view name = "rebind_in_if";
  void operator()(Slice<const float> x, Slice<float> out) const {
    Expr<float> v = x[absolute_pos()];
    Expr<float> doubled = v * 2.0f;  // made outside the If: no trace.scope would catch it
    If(absolute_pos() < 4u, [&] { v = doubled; });
    out[absolute_pos()] = v;
  }
};

TEST(TraceError, RebindingAnOuterNameInsideAnIf) {
  expect_trace_error<RebindInIf>("trace.rebind", {"assigned inside it", "Var<T>"});
}

struct CompoundAssignInLoop {
  static constexpr std::string_view name = "compound_assign_in_loop";
  void operator()(Slice<const float> x, Slice<float> out, Scalar<uint32_t> n) const {
    Vector<float> acc = 0.0f;
    For(range(0u, n), [&](Expr<uint32_t> i) { acc += x[i]; });
    out[absolute_pos()] = acc[0];
  }
};

TEST(TraceError, CompoundAssignmentToAnOuterNameInALoop) {
  expect_trace_error<CompoundAssignInLoop>("trace.rebind", {"Var<T>"});
}

struct ElementCopyRebindInIf {
  static constexpr std::string_view name = "element_copy_rebind_in_if";
  void operator()(Slice<const float> a, Slice<float> y, Slice<float> out) const {
    auto i = absolute_pos();
    auto old = y[i];  // a value, as `float old = y[i]` is
    Expr<float> other = a[i];
    If(i < 2u, [&] { old = other; });
    out[i] = old;
  }
};

TEST(TraceError, RebindingACopyOfAnElementInsideAnIf) {
  expect_trace_error<ElementCopyRebindInIf>("trace.rebind", {"Var<T>"});
}

struct RebindTwins {
  static constexpr std::string_view name = "rebind_twins";
  void operator()(Slice<const float> x, Slice<float> out, Scalar<uint32_t> n) const {
    auto i = absolute_pos();
    Expr<float> v = x[i];
    v = v * 2.0f;  // the region it was made in
    Var<float> acc = v;
    For(range(0u, n), [&](Expr<uint32_t> k) {
      Expr<float> t = x[k];
      t += 1.0f;  // made in the loop body, rebound there
      acc += t;
    });
    auto old = out[i];
    If(i < 2u, [&] { out[i] = acc; });  // an element stores in any region
    old = old + 1.0f;
    out[i] = old;
  }
};

TEST(TraceError, RebindingInTheSameRegionAndVarsTrace) { traces<RebindTwins>(); }

// ---- misplaced Else ----------------------------------------------------------------------------

struct ElseAfterAnotherOp {
  static constexpr std::string_view name = "else_after_another_op";
  void operator()(Slice<float> out) const {
    Expr<bool> c = absolute_pos() < 4u;
    IfChain chain = If(c, [&] { out[absolute_pos()] = 1.0f; });
    out[absolute_pos()] = 3.0f;
    chain.Else([&] { out[absolute_pos()] = 2.0f; });
  }
};

TEST(TraceError, ElseNotDirectlyAfterItsIf) {
  expect_trace_error<ElseAfterAnotherOp>("trace.misplaced_else", {"'if'", "Else() must directly follow its If()"});
}

struct ElseInsideAnotherRegion {
  static constexpr std::string_view name = "else_inside_another_region";
  void operator()(Slice<float> out) const {
    Expr<bool> c = absolute_pos() < 4u;
    IfChain chain = If(c, [&] { out[absolute_pos()] = 1.0f; });
    If(c, [&] { chain.Else([&] { out[absolute_pos()] = 2.0f; }); });
  }
};

TEST(TraceError, ElseCalledInsideAnotherRegion) {
  expect_trace_error<ElseInsideAnotherRegion>("trace.misplaced_else", {"'if'"});
}

struct ElseIfAfterAStore {
  static constexpr std::string_view name = "else_if_after_a_store";
  void operator()(Slice<float> out) const {
    Expr<bool> c = absolute_pos() < 4u;
    Expr<bool> d = absolute_pos() < 8u;
    IfChain chain = If(c, [&] { out[absolute_pos()] = 1.0f; });
    out[absolute_pos()] = 3.0f;
    chain.ElseIf(d, [&] { out[absolute_pos()] = 2.0f; });
  }
};

TEST(TraceError, ElseIfNotDirectlyAfterItsIf) {
  expect_trace_error<ElseIfAfterAStore>("trace.misplaced_else", {"'if'", "op 'store' was recorded in between"});
}

// ---- types at trace level ----------------------------------------------------------------------

struct MixedTypesThroughTheTracer {
  static constexpr std::string_view name = "mixed_types";
  void operator()(Slice<const float> x, Slice<const int32_t> y, Slice<float> out) const {
    Expr<float> a = x[absolute_pos()];
    Expr<int32_t> b = y[absolute_pos()];
    // C++ rejects `a + b`; a call below the operators reaches the tracer's own check.
    out[absolute_pos()] = Expr<float>(dsl::Tracer::current().binary(ir::OpKind::Add, a.ref(), b.ref()));
  }
};

TEST(TraceError, MixingElementTypesBelowTheOperators) {
  expect_trace_error<MixedTypesThroughTheTracer>("trace.type", {"'add'", "operands are f32 and i32", "cast<T>()"});
}

struct ArithmeticOnBool {
  static constexpr std::string_view name = "arithmetic_on_bool";
  void operator()(Slice<const bool> x, Slice<bool> out) const {
    Expr<bool> a = x[absolute_pos()];
    out[absolute_pos()] = a + a;  // C++ accepts it: both sides are Expr<bool>
  }
};

TEST(TraceError, ArithmeticOnBool) {
  expect_trace_error<ArithmeticOnBool>("trace.type", {"'add'", "not defined on bool"});
}

struct NegateUnsigned {
  static constexpr std::string_view name = "negate_unsigned";
  void operator()(Slice<uint32_t> out) const { out[absolute_pos()] = -absolute_pos(); }
};

TEST(TraceError, NegatingAnUnsignedValue) {
  expect_trace_error<NegateUnsigned>("trace.type", {"'neg'", "not defined on u32"});
}

struct ExpOfAnInteger {
  static constexpr std::string_view name = "exp_of_an_integer";
  void operator()(Slice<int32_t> out) const {
    Expr<int32_t> v = out[absolute_pos()];
    out[absolute_pos()] = exp(v);
  }
};

TEST(TraceError, FloatMathOnAnInteger) {
  expect_trace_error<ExpOfAnInteger>("trace.type", {"'exp'", "takes floats, not i32"});
}

struct ShiftAFloat {
  static constexpr std::string_view name = "shift_a_float";
  void operator()(Slice<float> out) const {
    Expr<float> v = out[absolute_pos()];
    out[absolute_pos()] = v << 1.0f;
  }
};

TEST(TraceError, ShiftingAFloat) {
  expect_trace_error<ShiftAFloat>("trace.type", {"'shl'", "takes integers, not f32"});
}

// The tracer and the verifier type an op by the same rule (ir/type_rules.h), so they refuse it in
// the same words.
TEST(TraceError, TheTracerAndTheVerifierRefuseInTheSameWords) {
  TraceFailure traced = trace_failure<ShiftAFloat>(id_of<ShiftAFloat>({32, 1, 1}));
  std::string verified;
  try {
    ir::verify(
        ir::parse("kernel @k(%f: f32) {cube_dim = [32, 1, 1], mode = checked, address = u32, vector = 1} {\n"
                  "  %0 = shl %f, %f : f32\n}\n"));
  } catch (const Error& e) {
    verified = e.message();
  }
  const std::string rule = "'shl': takes integers, not f32";
  EXPECT_NE(traced.message.find(rule), std::string::npos) << traced.message;
  EXPECT_NE(verified.find(rule), std::string::npos) << verified;
}

struct BitcastChangingSize {
  static constexpr std::string_view name = "bitcast_changing_size";
  void operator()(Slice<const float> x, Slice<uint64_t> out) const {
    Expr<float> v = x[absolute_pos()];
    out[absolute_pos()] = bitcast<uint64_t>(v);
  }
};

TEST(TraceError, BitcastChangingSize) {
  expect_trace_error<BitcastChangingSize>("trace.type", {"'bitcast'", "f32 to u64"});
}

struct TensorDimOutOfRange {
  static constexpr std::string_view name = "tensor_dim_out_of_range";
  void operator()(TensorArg<const float> t, Slice<uint32_t> out) const { out[absolute_pos()] = t.shape(2); }
};

TEST(TraceError, TensorDimOutsideTheRank) {
  std::vector<ParamDesc> d = param_descs<TensorDimOutOfRange>();
  d[0].rank = 2;
  TraceFailure f = trace_failure<TensorDimOutOfRange>(kernel_id<TensorDimOutOfRange>(LaunchFacts{}, d));
  EXPECT_EQ(f.kind, "trace.tensor_dim");
  EXPECT_EQ(f.message.rfind("kernel 'tensor_dim_out_of_range'", 0), 0u) << f.message;
  EXPECT_NE(f.message.find("dim 2 is outside a tensor of rank 2"), std::string::npos) << f.message;
}

struct SharedArrayOfLengthZero {
  static constexpr std::string_view name = "shared_array_of_length_zero";
  void operator()(Slice<float> out) const {
    SharedArray<float> tile(0);
    out[absolute_pos()] = tile[0u];
  }
};

TEST(TraceError, SharedArrayOfLengthZero) {
  expect_trace_error<SharedArrayOfLengthZero>("trace.array_length", {"'shared.alloc'", "array length 0"});
}

// ---- outside a trace ---------------------------------------------------------------------------

TEST(TraceError, ProxyOutsideATrace) {
  ASSERT_FALSE(dsl::Tracer::active());
  try {
    Expr<float> e = 1.0f;
    ADD_FAILURE() << "a proxy was made outside a trace, value " << e.ref().id;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "trace.no_context");
    EXPECT_NE(e.message().find("outside a kernel trace"), std::string::npos) << e.message();
  }
  try {
    absolute_pos();
    ADD_FAILURE() << "a builtin was read outside a trace";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "trace.no_context");
  }
}

// A proxy kept from one trace is not a value of the next one.
Expr<float> g_kept = Expr<float>(dsl::ValueRef{});

struct KeepsAProxy {
  static constexpr std::string_view name = "keeps_a_proxy";
  void operator()(Slice<float> out) const { g_kept = out[absolute_pos()]; }
};

struct UsesAKeptProxy {
  static constexpr std::string_view name = "uses_a_kept_proxy";
  void operator()(Slice<float> out) const { out[absolute_pos()] = g_kept; }
};

TEST(TraceError, ProxyFromAnotherTraceWithAnUnknownValue) {
  traces<KeepsAProxy>();
  // The kept value's id is 2 in the first trace; the second trace has fewer values, so the
  // tracer does not know it.
  TraceFailure f = trace_failure<UsesAKeptProxy>(id_of<UsesAKeptProxy>({32, 1, 1}));
  EXPECT_EQ(f.kind, "trace.bad_value");
  EXPECT_EQ(f.message.rfind("kernel 'uses_a_kept_proxy'", 0), 0u) << f.message;
}

// The same with a value id the second trace also has: only the trace serial tells them apart.
struct UsesAKeptProxyWithMoreValues {
  static constexpr std::string_view name = "uses_a_kept_proxy_with_more_values";
  void operator()(Slice<float> out) const {
    Expr<float> a = 1.0f, b = 2.0f, c = 3.0f, d = 4.0f;
    out[absolute_pos()] = a + b + c + d + g_kept;
  }
};

TEST(TraceError, ProxyFromAnotherTraceWithAKnownValueId) {
  traces<KeepsAProxy>();
  TraceFailure f = trace_failure<UsesAKeptProxyWithMoreValues>(id_of<UsesAKeptProxyWithMoreValues>({32, 1, 1}));
  EXPECT_EQ(f.kind, "trace.bad_value");
  EXPECT_NE(f.message.find("another kernel"), std::string::npos) << f.message;
}

// ---- the tracer's own region bookkeeping ------------------------------------------------------
// The DSL's If/For/While close what they open; a kernel that drives the tracer's begin_*/end_*
// directly (as a recorder built on the tracer may) can leave a region open or record too late.

struct LeavesALoopOpen {
  static constexpr std::string_view name = "leaves_a_loop_open";
  void operator()(Slice<float> out) const {
    dsl::Tracer& t = dsl::Tracer::current();
    dsl::ValueRef i = t.begin_for(detail::literal<uint32_t>(0), out.len().ref(), detail::literal<uint32_t>(1), {});
    t.store(out.ref(), i, detail::literal<float>(1.0f));
    // no t.end_for()
  }
};

TEST(TraceError, RegionLeftOpenAtTheEndOfTheKernel) {
  expect_trace_error<LeavesALoopOpen>("trace.unclosed_region", {"a run-time region was left open"});
}

TEST(TraceError, RecordingAfterTheTraceFinished) {
  ir::Kernel k;
  k.name = "finished_early";
  dsl::Tracer t(k);
  dsl::ValueRef out = t.param("out", ir::Type::buffer(ir::Type::scalar_of(ir::Scalar::F32), ir::Access::ReadWrite));
  t.finish();
  try {
    (void)t.constant(ir::Type::scalar_of(ir::Scalar::F32), ir::AttrValue::of_float(1.0));
    ADD_FAILURE() << "recording after finish() did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "trace.finished") << e.what();
    EXPECT_NE(e.message().find("kernel 'finished_early'"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("the trace has already finished"), std::string::npos) << e.message();
  }
  (void)out;
}

}  // namespace
}  // namespace kiln::test
