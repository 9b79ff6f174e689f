// Element access has CUDA C++'s semantics: `y[i]` names the element (reading it loads where it is
// read, assigning it stores, atomics take it), `auto& r = y[i]` is a reference to it, and a copy
// `auto old = y[i]` is the element's value where the copy is initialised; assigning a copy
// rebinds it and touches no memory. Each test reads the loads and stores a small kernel records,
// in order, and which value each store writes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dsl/traced_cases.h"
#include "kiln/error.h"
#include "kiln/ir/text.h"
#include "kiln/passes/passes.h"

namespace kiln::test {
namespace {

// The loads, stores and atomics of a kernel in the order they run: "load y", "store out";
// shared and local arrays are called "shared" and "local".
std::vector<const ir::Op*> accesses(const ir::Kernel& k) {
  std::vector<const ir::Op*> out;
  ir::walk(k.body, [&](const ir::Op& op) {
    if (op.kind == ir::OpKind::Load || op.kind == ir::OpKind::Store || ir::is_atomic(op.kind)) out.push_back(&op);
  });
  return out;
}

std::string label(const ir::Kernel& k, const ir::Op& op) {
  const ir::Value a = op.operand(ir::ops::Store::array);  // loads, stores and atomics all start with it
  const ir::Param* p = k.param_of(a);
  std::string array = p ? p->name : k.type_of(a).kind == ir::TypeKind::Shared ? "shared" : "local";
  return std::string(ir::op_name(op.kind)) + " " + array;
}

std::vector<std::string> labels(const ir::Kernel& k) {
  std::vector<std::string> out;
  for (const ir::Op* op : accesses(k)) out.push_back(label(k, *op));
  return out;
}

using Labels = std::vector<std::string>;

// ---- a copy is the value where it is initialised ----------------------------------------------

TEST(ElementRead, ACopyHoldsTheValueFromBeforeALaterStore) {
  // auto old = y[i]; y[i] = 5.0f; out[i] = old;
  ir::Kernel k = define<ElementCopy>(id_of<ElementCopy>({32, 1, 1}));
  EXPECT_EQ(labels(k), (Labels{"load y", "store y", "store out"}));
  std::vector<const ir::Op*> a = accesses(k);
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a[2]->operand(ir::ops::Store::value), a[0]->result)
      << "out[i] gets the value loaded before the store, not a new load";
}

struct AssignCopy {
  static constexpr std::string_view name = "assign_copy";
  static constexpr std::array<std::string_view, 3> param_names{"x", "y", "out"};
  void operator()(Slice<const float> x, Slice<float> y, Slice<float> out) const {
    auto i = absolute_pos();
    auto old = y[i];
    old = 2.0f;
    old += x[i];
    old *= 3.0f;
    out[i] = old;
  }
};

TEST(ElementRead, AssigningACopyRebindsItAndRecordsNoStore) {
  ir::Kernel k = define<AssignCopy>(id_of<AssignCopy>({32, 1, 1}));
  // should load y once (the copy) and x once, and store only out
  EXPECT_EQ(labels(k), (Labels{"load y", "load x", "store out"}));
  const ir::Op& store = *accesses(k).back();
  bool from_mul = false;
  ir::walk(k.body, [&](const ir::Op& op) {
    from_mul |= op.kind == ir::OpKind::Mul && op.result == store.operand(ir::ops::Store::value);
  });
  EXPECT_TRUE(from_mul) << "out[i] gets (2 + x[i]) * 3, the value the copy was rebound to\n" << ir::print(k);
  // The copy's load is read by nobody: the pipeline's dce removes it.
  passes::run_pipeline(k);
  EXPECT_EQ(labels(k), (Labels{"load x", "store out"})) << ir::print(k);
}

struct CopyReadTwice {
  static constexpr std::string_view name = "copy_read_twice";
  static constexpr std::array<std::string_view, 2> param_names{"x", "out"};
  void operator()(Slice<const float> x, Slice<float> out) const {
    auto i = absolute_pos();
    auto v = x[i];
    auto w = v;  // a copy of a copy shares its value
    out[i] = v * w + v;
  }
};

TEST(ElementRead, ReadingACopyRecordsNoLoad) {
  ir::Kernel k = define<CopyReadTwice>(id_of<CopyReadTwice>({32, 1, 1}));
  EXPECT_EQ(labels(k), (Labels{"load x", "store out"}));
}

// ---- the element itself -----------------------------------------------------------------------

struct PlainAndCompound {
  static constexpr std::string_view name = "plain_and_compound";
  static constexpr std::array<std::string_view, 2> param_names{"x", "y"};
  void operator()(Slice<const float> x, Slice<float> y) const {
    auto i = absolute_pos();
    y[i] = 1.0f;
    y[i] += 2.0f;
    y[i] = x[i];
  }
};

TEST(ElementRead, AStoreLoadsNothingAndACompoundAssignmentLoadsOnce) {
  ir::Kernel k = define<PlainAndCompound>(id_of<PlainAndCompound>({32, 1, 1}));
  EXPECT_EQ(labels(k), (Labels{"store y", "load y", "store y", "load x", "store y"}));
}

struct References {
  static constexpr std::string_view name = "references";
  static constexpr std::array<std::string_view, 2> param_names{"y", "out"};
  void operator()(Slice<float> y, Slice<float> out) const {
    auto i = absolute_pos();
    auto& r = y[i];
    Expr<uint32_t> next = i + 1u;
    auto&& s = y[next];
    r = 1.0f;    // stores, as through a float& in CUDA
    s += 2.0f;   // loads and stores
    out[i] = r;  // reads the element now: after the store
  }
};

TEST(ElementRead, AReferenceIsTheElementAndIsReadWhereItIsRead) {
  ir::Kernel k = define<References>(id_of<References>({32, 1, 1}));
  EXPECT_EQ(labels(k), (Labels{"store y", "load y", "store y", "load y", "store out"}));
  std::vector<const ir::Op*> a = accesses(k);
  ASSERT_EQ(a.size(), 5u);
  EXPECT_EQ(a[3]->operand(ir::ops::Store::index), a[0]->operand(ir::ops::Store::index)) << "out[i] = r reads y[i]";
  EXPECT_EQ(a[4]->operand(ir::ops::Store::value), a[3]->result);
}

struct Atomics {
  static constexpr std::string_view name = "atomics_load_nothing";
  static constexpr std::array<std::string_view, 1> param_names{"bins"};
  void operator()(Slice<uint32_t> bins) const {
    auto i = absolute_pos();
    atomic_add(bins[i], 1u);
    auto& b = bins[i];
    atomic_max(b, 7u);
    atomic_cas(bins[i], 0u, 1u);
  }
};

TEST(ElementRead, AnAtomicTakesTheElementWithoutLoadingIt) {
  ir::Kernel k = define<Atomics>(id_of<Atomics>({32, 1, 1}));
  EXPECT_EQ(labels(k), (Labels{"atomic.add bins", "atomic.max bins", "atomic.cas bins"}));
}

struct Chained {
  static constexpr std::string_view name = "chained";
  static constexpr std::array<std::string_view, 2> param_names{"a", "b"};
  void operator()(Slice<int32_t> a, Slice<int32_t> b) const {
    auto i = absolute_pos();
    a[i] = b[i] = 7;
  }
};

TEST(ElementRead, AnAssignmentGivesTheValueAssigned) {
  ir::Kernel k = define<Chained>(id_of<Chained>({32, 1, 1}));
  EXPECT_EQ(labels(k), (Labels{"store b", "store a"}));
  std::vector<const ir::Op*> a = accesses(k);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0]->operand(ir::ops::Store::value), a[1]->operand(ir::ops::Store::value)) << "both store the constant 7";
}

// ---- every kind of array: a swap through a temporary -------------------------------------------

// The last four accesses are load a, load b, store a (b's value), store b (a's value).
void expect_swap(const ir::Kernel& k, const std::string& a, const std::string& b) {
  std::vector<const ir::Op*> ops = accesses(k);
  ASSERT_GE(ops.size(), 4u) << ir::print(k);
  std::vector<const ir::Op*> last(ops.end() - 4, ops.end());
  Labels got;
  for (const ir::Op* op : last) got.push_back(label(k, *op));
  EXPECT_EQ(got, (Labels{"load " + a, "load " + b, "store " + a, "store " + b})) << ir::print(k);
  EXPECT_EQ(last[2]->operand(ir::ops::Store::value), last[1]->result) << ir::print(k);
  EXPECT_EQ(last[3]->operand(ir::ops::Store::value), last[0]->result) << "b gets a's value from before a was written\n"
                                                                      << ir::print(k);
}

struct SwapVectors {
  static constexpr std::string_view name = "swap_vectors";
  static constexpr std::array<std::string_view, 2> param_names{"a", "b"};
  void operator()(Slice<Vector<float>> a, Slice<Vector<float>> b) const {
    auto i = absolute_pos();
    auto t = a[i];
    a[i] = b[i];
    b[i] = t;
  }
};

struct SwapTensors {
  static constexpr std::string_view name = "swap_tensors";
  static constexpr std::array<std::string_view, 2> param_names{"a", "b"};
  void operator()(TensorArg<double> a, TensorArg<double> b) const {
    auto i = absolute_pos();
    auto t = a[i];
    a[i] = b[i];
    b[i] = t;
  }
};

struct SwapSharedAndLocal {
  static constexpr std::string_view name = "swap_shared_and_local";
  static constexpr std::array<std::string_view, 1> param_names{"out"};
  void operator()(Slice<int32_t> out) const {
    auto u = unit_pos();
    SharedArray<int32_t> s(32);
    LocalArray<int32_t> l(4);
    auto t = s[u];
    s[u] = l[1u];
    l[1u] = t;
    out[u] = l[1u];
  }
};

TEST(ElementRead, ASwapThroughATemporaryWorksOnEveryKindOfArray) {
  ir::Kernel v = define<SwapVectors>(id_of<SwapVectors>({32, 1, 1}, 4));
  expect_swap(v, "a", "b");
  EXPECT_EQ(v.type_of(accesses(v)[3]->operand(ir::ops::Store::value)), ir::Type::vector_of(ir::Scalar::F32, 4));

  std::vector<ParamDesc> tensors = param_descs<SwapTensors>();
  tensors[0].rank = tensors[1].rank = 1;
  expect_swap(define<SwapTensors>(kernel_id<SwapTensors>(LaunchFacts{{32, 1, 1}}, tensors)), "a", "b");

  ir::Kernel sl = define<SwapSharedAndLocal>(id_of<SwapSharedAndLocal>({32, 1, 1}));
  Labels all = labels(sl);
  EXPECT_EQ(all, (Labels{"load shared", "load local", "store shared", "store local", "load local", "store out"}));
  std::vector<const ir::Op*> a = accesses(sl);
  ASSERT_EQ(a.size(), 6u);
  EXPECT_EQ(a[3]->operand(ir::ops::Store::value), a[0]->result);
  EXPECT_EQ(a[2]->operand(ir::ops::Store::value), a[1]->result);
}

// ---- Var ----------------------------------------------------------------------------------------

struct VarFromElement {
  static constexpr std::string_view name = "var_from_element";
  static constexpr std::array<std::string_view, 2> param_names{"y", "out"};
  void operator()(Slice<float> y, Slice<float> out) const {
    auto i = absolute_pos();
    Var<float> v = y[i];
    y[i] = 0.0f;
    v += y[i];
    out[i] = v;
  }
};

TEST(ElementRead, AVarInitialisedFromAnElementReadsItThere) {
  ir::Kernel k = define<VarFromElement>(id_of<VarFromElement>({32, 1, 1}));
  EXPECT_EQ(labels(k), (Labels{"load y", "store y", "load y", "store out"}));
}

}  // namespace
}  // namespace kiln::test
