// Fuzzing fold + cse + dce (Halide's test/fuzz/cse.cpp idea): a few hundred random straight-line
// integer kernels over u32 and i32, each run by a small evaluator written here from docs/ir.md
// before and after the passes; the values stored must not change. The constants are chosen to hit
// the edges (0, 1, all ones, MIN, MAX, shift amounts around 32) and loads give the passes values
// they cannot know.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kiln/ir/builder.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"
#include "kiln/passes/passes.h"

namespace kiln {
namespace {

using ir::OpKind;
using ir::Scalar;
using ir::Type;
using ir::Value;

constexpr size_t kSlots = 4;  // elements of the input and output buffers
using Slots = std::array<uint32_t, kSlots>;

const Type kU32 = Type::scalar_of(Scalar::U32);
const Type kI32 = Type::scalar_of(Scalar::I32);
const Type kBool = Type::scalar_of(Scalar::Bool);

// ---- the generator ---------------------------------------------------------------------------

class RandomKernel {
 public:
  explicit RandomKernel(uint32_t seed) : rng_(seed), b_(k_) {
    k_.name = "fuzz";
    k_.facts.mode = ir::ExecMode::Unchecked;
    Type in = Type::buffer(kU32, ir::Access::ReadOnly), out = Type::buffer(kU32, ir::Access::ReadWrite);
    k_.params.push_back(ir::Param{"in", in, k_.new_value(in)});
    k_.params.push_back(ir::Param{"out", out, k_.new_value(out)});
  }

  ir::Kernel build() {
    load();
    load();
    constant(kU32);
    constant(kI32);
    int n = pick(10, 40);
    for (int i = 0; i < n; ++i) step();
    // The result at index 0 (what the test is about), two more at 1 and 2.
    for (uint32_t slot = 0; slot < 3; ++slot) {
      Value v = any_int();
      if (k_.type_of(v) == kI32) v = b_.emit(OpKind::Cast, {v}, kU32);
      b_.emit(OpKind::Store, {k_.params[1].value, b_.const_int(Scalar::U32, slot), v});
    }
    return std::move(k_);
  }

 private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  template <class T>
  const T& one_of(const std::vector<T>& v) {
    return v[static_cast<size_t>(pick(0, static_cast<int>(v.size()) - 1))];
  }
  std::vector<Value>& pool(const Type& t) { return t == kU32 ? u32_ : t == kI32 ? i32_ : bool_; }
  Type int_type() { return pick(0, 1) ? kU32 : kI32; }
  Value any_int() { return pick(0, 1) ? one_of(u32_) : one_of(i32_); }

  void keep(Value v, const Type& t) { pool(t).push_back(v); }

  void constant(const Type& t) {
    static const std::vector<uint32_t> edges = {0,  1,  2,           3,           7,           31,         32,
                                                33, 64, 0x7fffffffu, 0x80000000u, 0xfffffffeu, 0xffffffffu};
    uint32_t bits = pick(0, 3) == 0 ? static_cast<uint32_t>(rng_()) : one_of(edges);
    // Constants hold their value canonically: sign-extended for i32, zero-extended for u32.
    int64_t v = t == kI32 ? int64_t{static_cast<int32_t>(bits)} : int64_t{bits};
    keep(b_.constant(t, ir::AttrValue::of_int(v)), t);
  }

  void load() {
    Value index = b_.const_int(Scalar::U32, pick(0, kSlots - 1));
    keep(b_.emit(OpKind::Load, {k_.params[0].value, index}, kU32), kU32);
  }

  void emit_kept(OpKind kind, std::vector<Value> operands, const Type& t) {
    Value v = b_.emit(kind, operands, t);
    keep(v, t);
    emitted_.push_back(Emitted{kind, std::move(operands), t});
  }

  void step() {
    static const std::vector<OpKind> binary = {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Xor, OpKind::And,
                                               OpKind::Or,  OpKind::Shl, OpKind::Shr, OpKind::Min, OpKind::Max};
    static const std::vector<OpKind> compare = {OpKind::Eq, OpKind::Ne, OpKind::Lt, OpKind::Le, OpKind::Gt, OpKind::Ge};
    static const std::vector<OpKind> logic = {OpKind::And, OpKind::Or, OpKind::Xor};
    switch (pick(0, 11)) {
      case 0: constant(kU32); return;
      case 1: constant(kI32); return;
      case 2: load(); return;
      case 3: {
        Value v = any_int();
        emit_kept(OpKind::Cast, {v}, k_.type_of(v) == kU32 ? kI32 : kU32);
        return;
      }
      case 4:
      case 5:
      case 6: {
        Type t = int_type();
        emit_kept(one_of(binary), {one_of(pool(t)), one_of(pool(t))}, t);
        return;
      }
      case 7: {
        Type t = int_type();
        emit_kept(one_of(compare), {one_of(pool(t)), one_of(pool(t))}, kBool);
        return;
      }
      case 8: {
        if (bool_.empty()) return;
        Type t = int_type();
        emit_kept(OpKind::Select, {one_of(bool_), one_of(pool(t)), one_of(pool(t))}, t);
        return;
      }
      case 9: {
        if (bool_.empty()) return;
        if (pick(0, 3) == 0) {
          emit_kept(OpKind::Not, {one_of(bool_)}, kBool);
        } else {
          emit_kept(one_of(logic), {one_of(bool_), one_of(bool_)}, kBool);
        }
        return;
      }
      default: {
        // Repeat an earlier op (swapped when commutative): work for cse.
        if (emitted_.empty()) return;
        Emitted e = one_of(emitted_);
        if (ir::has_trait(e.kind, ir::kCommutative) && pick(0, 1)) {
          std::swap(e.operands[ir::ops::Binary::lhs], e.operands[ir::ops::Binary::rhs]);
        }
        emit_kept(e.kind, e.operands, e.type);
        return;
      }
    }
  }

  struct Emitted {
    OpKind kind;
    std::vector<Value> operands;
    Type type;
  };

  std::mt19937 rng_;
  ir::Kernel k_;
  ir::Builder b_;
  std::vector<Value> u32_, i32_, bool_;
  std::vector<Emitted> emitted_;
};

// ---- the evaluator: docs/ir.md on 32-bit lanes -------------------------------------------------

// Runs a straight-line kernel of the ops the generator makes (and the constants fold makes);
// returns the output buffer, which starts as all 0xdeadbeef.
Slots evaluate(const ir::Kernel& k, const Slots& in, std::string& error) {
  Slots out;
  out.fill(0xdeadbeefu);
  std::vector<uint32_t> val(k.value_types.size(), 0);
  for (const ir::Op& op : k.body.ops) {
    // Operands by name: the evaluator reads the IR its own way, but through the op table's names.
    using B = ir::ops::Binary;
    using U = ir::ops::Unary;
    using S = ir::ops::Select;
    using St = ir::ops::Store;
    auto x = [&](auto slot) { return val[op.operand(slot)]; };
    bool is_signed = !op.operands.empty() && k.type_of(op.operands.front()) == kI32;
    auto sx = [&](auto slot) { return static_cast<int32_t>(x(slot)); };
    uint32_t r = 0;
    switch (op.kind) {
      case OpKind::Const: r = static_cast<uint32_t>(op.attr(ir::AttrKey::Value)->i); break;
      case OpKind::Load:
        if (x(ir::ops::Load::index) >= kSlots) {
          error = "load index out of range";
          return out;
        }
        r = in[x(ir::ops::Load::index)];
        break;
      case OpKind::Store:
        if (x(St::index) >= kSlots) {
          error = "store index out of range";
          return out;
        }
        out[x(St::index)] = x(St::value);
        continue;
      case OpKind::Cast: r = x(U::x); break;  // u32 <-> i32 keeps the bits
      case OpKind::Add: r = x(B::lhs) + x(B::rhs); break;
      case OpKind::Sub: r = x(B::lhs) - x(B::rhs); break;
      case OpKind::Mul: r = x(B::lhs) * x(B::rhs); break;
      case OpKind::And: r = x(B::lhs) & x(B::rhs); break;
      case OpKind::Or: r = x(B::lhs) | x(B::rhs); break;
      case OpKind::Xor: r = x(B::lhs) ^ x(B::rhs); break;
      case OpKind::Not: r = op.type == kBool ? !x(U::x) : ~x(U::x); break;
      case OpKind::Shl: r = x(B::rhs) >= 32 ? 0 : x(B::lhs) << x(B::rhs); break;
      case OpKind::Shr:
        if (is_signed) {
          r = x(B::rhs) >= 32 ? (sx(B::lhs) < 0 ? 0xffffffffu : 0u) : static_cast<uint32_t>(sx(B::lhs) >> x(B::rhs));
        } else {
          r = x(B::rhs) >= 32 ? 0 : x(B::lhs) >> x(B::rhs);
        }
        break;
      case OpKind::Min:
        r = (is_signed ? sx(B::lhs) < sx(B::rhs) : x(B::lhs) < x(B::rhs)) ? x(B::lhs) : x(B::rhs);
        break;
      case OpKind::Max:
        r = (is_signed ? sx(B::lhs) > sx(B::rhs) : x(B::lhs) > x(B::rhs)) ? x(B::lhs) : x(B::rhs);
        break;
      case OpKind::Eq: r = x(B::lhs) == x(B::rhs); break;
      case OpKind::Ne: r = x(B::lhs) != x(B::rhs); break;
      case OpKind::Lt: r = is_signed ? sx(B::lhs) < sx(B::rhs) : x(B::lhs) < x(B::rhs); break;
      case OpKind::Le: r = is_signed ? sx(B::lhs) <= sx(B::rhs) : x(B::lhs) <= x(B::rhs); break;
      case OpKind::Gt: r = is_signed ? sx(B::lhs) > sx(B::rhs) : x(B::lhs) > x(B::rhs); break;
      case OpKind::Ge: r = is_signed ? sx(B::lhs) >= sx(B::rhs) : x(B::lhs) >= x(B::rhs); break;
      case OpKind::Select: r = x(S::condition) ? x(S::if_true) : x(S::if_false); break;
      default: error = "the evaluator has no rule for '" + std::string(op.info().name) + "'"; return out;
    }
    val[op.result] = r;
  }
  return out;
}

TEST(Fuzz, FoldCseDceKeepTheStoredValuesOfRandomIntegerKernels) {
  constexpr uint32_t kKernels = 600;
  int folded = 0, merged = 0, removed = 0, shrunk = 0;
  for (uint32_t seed = 1; seed <= kKernels; ++seed) {
    ir::Kernel k = RandomKernel(seed).build();
    std::string original = ir::print(k);
    ASSERT_NO_THROW(ir::verify(k, "generated")) << original;
    std::mt19937 rng(seed * 7919u);
    Slots in = {static_cast<uint32_t>(rng()), 0xffffffffu, 0x80000000u, static_cast<uint32_t>(rng() % 64)};

    std::string error;
    Slots want = evaluate(k, in, error);
    ASSERT_EQ(error, "") << "seed " << seed << "\n" << original;
    size_t ops_before = ir::op_count(k);
    folded += passes::fold(k) ? 1 : 0;
    merged += passes::cse(k) ? 1 : 0;
    removed += passes::dce(k) ? 1 : 0;
    shrunk += ir::op_count(k) < ops_before ? 1 : 0;
    std::string optimized = ir::print(k);
    ASSERT_NO_THROW(ir::verify(k, "after fold, cse, dce")) << "seed " << seed << "\n" << optimized;
    Slots got = evaluate(k, in, error);
    ASSERT_EQ(error, "") << "seed " << seed << "\n" << optimized;
    ASSERT_EQ(got, want) << "seed " << seed << ": the passes changed a stored value\n--- before:\n"
                         << original << "--- after:\n"
                         << optimized;
  }
  // The fuzzing is only worth something if each pass had work in many of the kernels.
  EXPECT_GT(folded, int(kKernels) / 2);
  EXPECT_GT(merged, int(kKernels) / 4);
  EXPECT_GT(removed, int(kKernels) / 2);
  EXPECT_GT(shrunk, int(kKernels) / 2);
}

// The evaluator itself must see a difference when one exists, or the test above could pass by
// computing nothing.
TEST(Fuzz, TheEvaluatorSeesAChangedOperand) {
  for (uint32_t seed = 1; seed <= 50; ++seed) {
    ir::Kernel k = RandomKernel(seed).build();
    Slots in = {1, 2, 3, 4};
    std::string error;
    Slots a = evaluate(k, in, error);
    ASSERT_EQ(error, "");
    // Point the store at index 0 to a different value: the output must differ in slot 0 unless the
    // two values happen to be equal.
    ir::Builder b(k);
    Value other = b.const_int(Scalar::U32, static_cast<int64_t>(a[0] ^ 0x5a5a5a5au));
    ir::Op c = k.body.ops.back();
    k.body.ops.pop_back();
    k.body.ops.insert(k.body.ops.begin(), std::move(c));  // the constant goes first so it dominates
    bool redirected = false;
    for (ir::Op& op : k.body.ops) {
      if (op.kind == OpKind::Store) {
        op.operand(ir::ops::Store::value) = other;
        redirected = true;
        break;
      }
    }
    ASSERT_TRUE(redirected);
    ASSERT_NO_THROW(ir::verify(k));
    Slots b2 = evaluate(k, in, error);
    EXPECT_NE(a[0], b2[0]) << "seed " << seed;
  }
}

}  // namespace
}  // namespace kiln
