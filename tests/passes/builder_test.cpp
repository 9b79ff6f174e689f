// Builder-level tests of fold, cse and dce: IR assembled with ir::Builder, structure asserted on
// the result (Taichi's tests/cpp/transforms style), for what golden text shows less directly:
// which value an operand now names, the attribute form of folded constants, return values.
#include "kiln/ir/builder.h"

#include <gtest/gtest.h>

#include <vector>

#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"
#include "kiln/passes/passes.h"

namespace kiln {
namespace {

using ir::AttrKey;
using ir::AttrValue;
using ir::Builder;
using ir::OpKind;
using ir::Scalar;
using ir::Type;
using ir::Value;

const Type kU32 = Type::scalar_of(Scalar::U32);
const Type kI32 = Type::scalar_of(Scalar::I32);
const Type kF32 = Type::scalar_of(Scalar::F32);
const Type kBool = Type::scalar_of(Scalar::Bool);

// A kernel with one rw buffer parameter named `out` of `element`.
ir::Kernel kernel_with_out(const Type& element) {
  ir::Kernel k;
  k.name = "test";
  k.facts.mode = ir::ExecMode::Unchecked;
  Type t = Type::buffer(element, ir::Access::ReadWrite);
  k.params.push_back(ir::Param{"out", t, k.new_value(t)});
  return k;
}
Value out_of(const ir::Kernel& k) { return k.params[0].value; }

size_t count_kind(const ir::Kernel& k, OpKind kind) {
  size_t n = 0;
  ir::walk(k.body, [&](const ir::Op& op) { n += op.kind == kind ? 1 : 0; });
  return n;
}

// The op defining `v`, or nullptr.
const ir::Op* def_of(const ir::Kernel& k, Value v) {
  const ir::Op* found = nullptr;
  ir::walk(k.body, [&](const ir::Op& op) {
    if (op.result == v) found = &op;
  });
  return found;
}

TEST(Dce, ShouldRemoveTheDeadAdd) {
  ir::Kernel k = kernel_with_out(kU32);
  Builder b(k);
  Value pos = b.emit(OpKind::UnitPos, {}, kU32);
  Value one = b.const_int(Scalar::U32, 1);
  b.emit(OpKind::Add, {pos, one}, kU32);  // nobody reads it
  b.emit(OpKind::Store, {out_of(k), pos, pos});
  ASSERT_NO_THROW(ir::verify(k));

  EXPECT_TRUE(passes::dce(k));
  EXPECT_EQ(count_kind(k, OpKind::Add), 0u) << "should remove the dead add";
  EXPECT_EQ(count_kind(k, OpKind::Const), 0u) << "should remove the constant only the add read";
  EXPECT_EQ(count_kind(k, OpKind::Store), 1u) << "should keep the store";
  ASSERT_EQ(k.body.ops.size(), 2u);
  EXPECT_NO_THROW(ir::verify(k));
  EXPECT_FALSE(passes::dce(k)) << "a second run finds nothing";
}

TEST(Dce, ShouldKeepAnUnusedAtomicAndRemoveAnUnusedLoad) {
  ir::Kernel k = kernel_with_out(kU32);
  Builder b(k);
  Value pos = b.emit(OpKind::UnitPos, {}, kU32);
  b.emit(OpKind::AtomicAdd, {out_of(k), pos, pos}, kU32);
  b.emit(OpKind::Load, {out_of(k), pos}, kU32);
  EXPECT_TRUE(passes::dce(k));
  EXPECT_EQ(count_kind(k, OpKind::AtomicAdd), 1u) << "an atomic writes memory even when its old value is unused";
  EXPECT_EQ(count_kind(k, OpKind::Load), 0u) << "an unused load has no effect";
}

TEST(Dce, ShouldRemoveAVarThatIsOnlyStoredInsideALoop) {
  ir::Kernel k = kernel_with_out(kU32);
  Builder b(k);
  Value var = b.emit(OpKind::VarDecl, {}, Type::var(kU32));
  Value lo = b.const_int(Scalar::U32, 0);
  Value hi = b.const_int(Scalar::U32, 8);
  Value step = b.const_int(Scalar::U32, 1);
  b.emit(OpKind::For, {lo, hi, step});
  ir::Region& body = b.enter(0);
  body.args.push_back(k.new_value(kU32));
  b.emit(OpKind::VarStore, {var, body.args[0]});
  b.leave();
  ASSERT_NO_THROW(ir::verify(k));

  EXPECT_TRUE(passes::dce(k));
  EXPECT_EQ(count_kind(k, OpKind::VarDecl), 0u);
  EXPECT_EQ(count_kind(k, OpKind::VarStore), 0u);
  EXPECT_EQ(count_kind(k, OpKind::For), 1u) << "loops are never removed, even when their body ends up empty";
  EXPECT_NO_THROW(ir::verify(k));
}

TEST(Fold, ShouldTurnAnAddOfConstantsIntoAWrappedConstant) {
  ir::Kernel k = kernel_with_out(kU32);
  Builder b(k);
  Value a = b.const_int(Scalar::U32, 0xfffffffe);
  Value c = b.const_int(Scalar::U32, 5);
  Value sum = b.emit(OpKind::Add, {a, c}, kU32);
  b.emit(OpKind::Store, {out_of(k), a, sum});

  EXPECT_TRUE(passes::fold(k));
  const ir::Op* op = def_of(k, sum);
  ASSERT_NE(op, nullptr) << "the folded op keeps its result value";
  EXPECT_EQ(op->kind, OpKind::Const);
  ASSERT_NE(op->attr(AttrKey::Value), nullptr);
  EXPECT_EQ(op->attr(AttrKey::Value)->tag, AttrValue::Tag::Int);
  EXPECT_EQ(op->attr(AttrKey::Value)->i, 3) << "0xfffffffe + 5 wraps to 3 in u32";
  EXPECT_TRUE(op->operands.empty());
  EXPECT_NO_THROW(ir::verify(k));
}

TEST(Fold, ConstantsKeepTheAttributeFormTheVerifierExpects) {
  ir::Kernel k = kernel_with_out(kU32);
  Builder b(k);
  Value x = b.const_float(Scalar::F32, 1.5);
  Value y = b.const_float(Scalar::F32, 2.25);
  Value lt = b.emit(OpKind::Lt, {x, y}, kBool);
  Value prod = b.emit(OpKind::Mul, {x, y}, kF32);
  Value big = b.const_int(Scalar::U64, -1);  // u64 max, held as its bits
  Value shifted = b.emit(OpKind::Shr, {big, b.const_int(Scalar::U64, 60)}, Type::scalar_of(Scalar::U64));
  Value as_u32 = b.emit(OpKind::Cast, {shifted}, kU32);
  Value picked = b.emit(OpKind::Select, {lt, as_u32, as_u32}, kU32);
  Value as_int = b.emit(OpKind::Cast, {prod}, kU32);
  b.emit(OpKind::Store, {out_of(k), picked, as_int});

  EXPECT_TRUE(passes::fold(k));
  ASSERT_NO_THROW(ir::verify(k));
  const AttrValue* v = def_of(k, lt)->attr(AttrKey::Value);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->tag, AttrValue::Tag::Bool);
  EXPECT_EQ(v->i, 1);
  v = def_of(k, prod)->attr(AttrKey::Value);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->tag, AttrValue::Tag::Float);
  EXPECT_EQ(v->f, 3.375);
  v = def_of(k, shifted)->attr(AttrKey::Value);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->i, 15) << "u64 shr is logical";
  v = def_of(k, as_int)->attr(AttrKey::Value);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->i, 3) << "3.375 truncates to 3";
  // The store now names the constants directly; the select of one value twice is gone.
  const ir::Op& store = k.body.ops.back();
  ASSERT_EQ(store.kind, OpKind::Store);
  EXPECT_EQ(store.operand(ir::ops::Store::index), as_u32);
  EXPECT_EQ(store.operand(ir::ops::Store::value), as_int);
  EXPECT_EQ(count_kind(k, OpKind::Select), 0u);
}

TEST(Fold, IdentityReplacesUsesInsideNestedRegions) {
  ir::Kernel k = kernel_with_out(kI32);
  Builder b(k);
  Value pos = b.emit(OpKind::UnitPos, {}, kU32);
  Value x = b.emit(OpKind::Load, {out_of(k), pos}, kI32);
  Value zero = b.const_int(Scalar::I32, 0);
  Value same = b.emit(OpKind::Add, {x, zero}, kI32);
  Value cond = b.emit(OpKind::Gt, {same, zero}, kBool);
  b.emit(OpKind::If, {cond});
  b.enter(0);
  b.emit(OpKind::Store, {out_of(k), pos, same});
  b.leave();
  ASSERT_NO_THROW(ir::verify(k));

  EXPECT_TRUE(passes::fold(k));
  ASSERT_NO_THROW(ir::verify(k));
  EXPECT_EQ(count_kind(k, OpKind::Add), 0u) << "x + 0 is x for integers";
  const ir::Op* gt = def_of(k, cond);
  ASSERT_NE(gt, nullptr);
  EXPECT_EQ(gt->operand(ir::ops::Binary::lhs), x);
  const ir::Op& inner = k.body.ops.back().regions[0].ops.at(0);
  EXPECT_EQ(inner.kind, OpKind::Store);
  EXPECT_EQ(inner.operand(ir::ops::Store::value), x) << "the use inside the if names the add's operand now";
}

TEST(Fold, ShouldKeepIntegerDivisionByZero) {
  ir::Kernel k = kernel_with_out(kI32);
  Builder b(k);
  Value seven = b.const_int(Scalar::I32, 7);
  Value zero = b.const_int(Scalar::I32, 0);
  Value q = b.emit(OpKind::Div, {seven, zero}, kI32);
  Value r = b.emit(OpKind::Rem, {seven, zero}, kI32);
  b.emit(OpKind::Store, {out_of(k), b.const_int(Scalar::U32, 0), q});
  b.emit(OpKind::Store, {out_of(k), b.const_int(Scalar::U32, 1), r});
  EXPECT_FALSE(passes::fold(k)) << "nothing here may fold";
  EXPECT_EQ(count_kind(k, OpKind::Div), 1u);
  EXPECT_EQ(count_kind(k, OpKind::Rem), 1u);
}

TEST(Fold, ShouldInlineABreakFromAConstantIfIntoTheLoopBody) {
  ir::Kernel k = kernel_with_out(kU32);
  Builder b(k);
  Value lo = b.const_int(Scalar::U32, 0);
  Value hi = b.const_int(Scalar::U32, 4);
  Value step = b.const_int(Scalar::U32, 1);
  Value yes = b.const_bool(true);
  b.emit(OpKind::For, {lo, hi, step});
  ir::Region& body = b.enter(0);
  Value i = k.new_value(kU32);
  body.args.push_back(i);
  b.emit(OpKind::If, {yes});
  b.enter(0);
  b.emit(OpKind::Break, {});
  b.leave();
  b.emit(OpKind::Store, {out_of(k), i, i});
  b.leave();
  ASSERT_NO_THROW(ir::verify(k));

  EXPECT_TRUE(passes::fold(k));
  ASSERT_NO_THROW(ir::verify(k));
  const ir::Region& r = k.body.ops.back().regions[0];
  ASSERT_EQ(r.ops.size(), 2u);
  EXPECT_EQ(r.ops[0].kind, OpKind::Break) << "the if's region now runs in its place";
  EXPECT_EQ(r.ops[1].kind, OpKind::Store);
  EXPECT_TRUE(passes::dce(k));
  EXPECT_EQ(k.body.ops.back().regions[0].ops.size(), 1u) << "dce should drop the store after the break";
}

// A for that carries two values, built with emit_results: the results, the body's arguments and
// the yield agree, so it verifies; dce keeps the carried value that is read and drops the other.
TEST(Dce, ShouldDropTheCarriedValueNobodyReadsAndKeepTheOther) {
  ir::Kernel k = kernel_with_out(kU32);
  Builder b(k);
  Value lo = b.const_int(Scalar::U32, 0);
  Value hi = b.const_int(Scalar::U32, 10);
  Value step = b.const_int(Scalar::U32, 1);
  Value init = b.const_int(Scalar::U32, 5);
  std::vector<Value> operands{lo, hi, step, init, init};
  std::vector<Type> types{kU32, kU32};
  std::vector<Value> results = b.emit_results(OpKind::For, operands, types);
  ASSERT_EQ(results.size(), 2u);
  ir::Op& loop = b.last();
  EXPECT_EQ(loop.result, results[0]);
  EXPECT_EQ(loop.more_results, std::vector<Value>{results[1]});
  EXPECT_EQ(loop.type, kU32);
  ir::Region& body = b.enter(0);
  Value i = k.new_value(kU32), sum = k.new_value(kU32), last = k.new_value(kU32);
  body.args = {i, sum, last};
  Value next = b.emit(OpKind::Add, {sum, i}, kU32);
  b.emit(OpKind::Yield, {next, i});
  b.leave();
  b.emit(OpKind::Store, {out_of(k), lo, results[0]});
  ASSERT_NO_THROW(ir::verify(k)) << ir::print(k);

  EXPECT_TRUE(passes::dce(k));
  ASSERT_NO_THROW(ir::verify(k)) << ir::print(k);
  const ir::Op& after = k.body.ops[4];
  ASSERT_EQ(after.kind, OpKind::For);
  EXPECT_EQ(after.result_count(), 1u) << "the last index is read by nobody";
  EXPECT_EQ(after.result, results[0]);
  EXPECT_EQ(after.operands.size(), 4u);
  EXPECT_EQ(after.regions[0].args, (std::vector<Value>{i, sum}));
  EXPECT_EQ(after.regions[0].ops.back().operands, std::vector<Value>{next});
  EXPECT_FALSE(passes::dce(k));
}

// promote_vars keeps the IR's values: the loop's result is what the store after it writes, the
// loop's argument what the add in it reads.
TEST(PromoteVars, ShouldMakeTheVarALoopArgumentAndResult) {
  ir::Kernel k = kernel_with_out(kU32);
  Builder b(k);
  Value var = b.emit(OpKind::VarDecl, {}, Type::var(kU32));
  Value zero = b.const_int(Scalar::U32, 0);
  b.emit(OpKind::VarStore, {var, zero});
  Value hi = b.const_int(Scalar::U32, 4);
  Value step = b.const_int(Scalar::U32, 1);
  b.emit(OpKind::For, {zero, hi, step});
  ir::Region& body = b.enter(0);
  Value i = k.new_value(kU32);
  body.args.push_back(i);
  Value old = b.emit(OpKind::VarLoad, {var}, kU32);
  Value sum = b.emit(OpKind::Add, {old, i}, kU32);
  b.emit(OpKind::VarStore, {var, sum});
  b.leave();
  Value final_value = b.emit(OpKind::VarLoad, {var}, kU32);
  b.emit(OpKind::Store, {out_of(k), zero, final_value});
  ASSERT_NO_THROW(ir::verify(k));

  EXPECT_TRUE(passes::promote_vars(k));
  ASSERT_NO_THROW(ir::verify(k)) << ir::print(k);
  EXPECT_EQ(count_kind(k, OpKind::VarDecl) + count_kind(k, OpKind::VarLoad) + count_kind(k, OpKind::VarStore), 0u);
  const ir::Op& loop = k.body.ops[3];
  ASSERT_EQ(loop.kind, OpKind::For);
  ASSERT_EQ(loop.result_count(), 1u);
  EXPECT_EQ(ir::loop_inits(loop)[0], zero);
  ASSERT_EQ(loop.regions[0].args.size(), 2u);
  const ir::Op& add = loop.regions[0].ops[0];
  EXPECT_EQ(add.operand(ir::ops::Binary::lhs), loop.regions[0].args[1]) << "the add reads the loop's argument";
  EXPECT_EQ(loop.regions[0].ops.back().operands, std::vector<Value>{add.result}) << "and the body yields its sum";
  EXPECT_EQ(k.body.ops.back().operand(ir::ops::Store::value), loop.result) << "the store writes the loop's result";
  EXPECT_FALSE(passes::promote_vars(k)) << "nothing is left to promote";
}

TEST(Cse, ShouldReplaceTheNestedDuplicateWithTheOuterOp) {
  ir::Kernel k = kernel_with_out(kU32);
  Builder b(k);
  Value pos = b.emit(OpKind::UnitPos, {}, kU32);
  Value two = b.const_int(Scalar::U32, 2);
  Value outer = b.emit(OpKind::Mul, {pos, two}, kU32);
  Value cond = b.emit(OpKind::Lt, {pos, two}, kBool);
  b.emit(OpKind::If, {cond});
  b.enter(0);
  Value inner = b.emit(OpKind::Mul, {two, pos}, kU32);  // swapped: mul is commutative
  b.emit(OpKind::Store, {out_of(k), pos, inner});
  b.leave();
  b.emit(OpKind::Store, {out_of(k), pos, outer});

  EXPECT_TRUE(passes::cse(k));
  ASSERT_NO_THROW(ir::verify(k));
  EXPECT_EQ(count_kind(k, OpKind::Mul), 1u);
  const ir::Op& nested_store = k.body.ops[4].regions[0].ops.at(0);
  EXPECT_EQ(nested_store.operand(ir::ops::Store::value), outer);
}

TEST(Cse, ShouldNotLetANestedOpReplaceALaterOuterOne) {
  ir::Kernel k = kernel_with_out(kU32);
  Builder b(k);
  Value pos = b.emit(OpKind::UnitPos, {}, kU32);
  Value two = b.const_int(Scalar::U32, 2);
  Value cond = b.emit(OpKind::Lt, {pos, two}, kBool);
  b.emit(OpKind::If, {cond});
  b.enter(0);
  Value inner = b.emit(OpKind::Mul, {pos, two}, kU32);
  b.emit(OpKind::Store, {out_of(k), pos, inner});
  b.leave();
  Value outer = b.emit(OpKind::Mul, {pos, two}, kU32);
  b.emit(OpKind::Store, {out_of(k), pos, outer});

  EXPECT_FALSE(passes::cse(k));
  EXPECT_EQ(count_kind(k, OpKind::Mul), 2u) << "the if's op does not run for every unit, so it cannot stand in";
  EXPECT_EQ(k.body.ops.back().operand(ir::ops::Store::value), outer);
}

TEST(Cse, ShouldNeverMergePlaneOpsAcrossABarrier) {
  ir::Kernel k = kernel_with_out(kU32);
  Builder b(k);
  Value pos = b.emit(OpKind::UnitPos, {}, kU32);
  Value s1 = b.emit(OpKind::PlaneSum, {pos}, kU32);
  b.emit(OpKind::SyncPlane, {});
  Value s2 = b.emit(OpKind::PlaneSum, {pos}, kU32);
  Value s3 = b.emit(OpKind::PlaneSum, {pos}, kU32);
  Value sum = b.emit(OpKind::Add, {s1, s2}, kU32);
  Value all = b.emit(OpKind::Add, {sum, s3}, kU32);
  b.emit(OpKind::Store, {out_of(k), pos, all});

  EXPECT_TRUE(passes::cse(k));
  EXPECT_EQ(count_kind(k, OpKind::PlaneSum), 2u) << "s3 merges with s2; s1 is before the barrier";
  const ir::Op* last_add = def_of(k, all);
  ASSERT_NE(last_add, nullptr);
  EXPECT_EQ(last_add->operand(ir::ops::Binary::rhs), s2);
}

}  // namespace
}  // namespace kiln
