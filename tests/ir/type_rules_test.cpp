// The typing rules (ir/type_rules.h) on their own: the schema's operand letters, the result each
// rule gives, and the words of its refusals, which the tracer and the verifier both report.
#include <gtest/gtest.h>

#include <vector>

#include "kiln/ir/type_rules.h"

namespace kiln::ir {
namespace {

Type f32() { return Type::scalar_of(Scalar::F32); }
Type i32() { return Type::scalar_of(Scalar::I32); }
Type u32() { return Type::scalar_of(Scalar::U32); }
Type boolean() { return Type::scalar_of(Scalar::Bool); }

TypeResult typed(OpKind k, std::vector<Type> operands, std::vector<Attr> attrs = {}, Type stated = Type::none()) {
  return result_type(TypeQuery{k, operands, attrs, stated, {}});
}

TEST(TypeRules, ResultsFollowTheOperands) {
  EXPECT_EQ(typed(OpKind::Add, {f32(), f32()}).type, f32());
  EXPECT_EQ(typed(OpKind::Lt, {Type::vector_of(Scalar::I32, 4), Type::vector_of(Scalar::I32, 4)}).type,
            Type::vector_of(Scalar::Bool, 4));
  EXPECT_EQ(typed(OpKind::Popcount, {Type::vector_of(Scalar::U8, 2)}).type, Type::vector_of(Scalar::U32, 2));
  EXPECT_EQ(typed(OpKind::IsNan, {f32()}).type, boolean());
  EXPECT_EQ(typed(OpKind::Load, {Type::buffer(f32(), Access::ReadOnly), u32()}).type, f32());
  EXPECT_EQ(typed(OpKind::Load, {Type::buffer(f32(), Access::ReadOnly), u32(), boolean()}).type, f32());
  EXPECT_TRUE(typed(OpKind::Store, {Type::buffer(f32(), Access::ReadWrite), u32(), f32()}).type.is_none());
  EXPECT_EQ(typed(OpKind::CubePos, {}).type, u32());
}

TEST(TypeRules, StatedResultsAreChecked) {
  EXPECT_EQ(typed(OpKind::Cast, {f32()}, {}, i32()).type, i32());
  EXPECT_EQ(typed(OpKind::Cast, {f32()}, {}, Type::vector_of(Scalar::I32, 2)).error,
            "casts f32 to vector<2 x i32>: lanes must agree");
  EXPECT_EQ(typed(OpKind::Const, {}, {Attr{AttrKey::Value, AttrValue::of_int(3)}}, f32()).error,
            "value does not match type f32");
  EXPECT_EQ(typed(OpKind::SharedAlloc, {}, {}, Type::shared(f32(), 0)).error, "result must be a shared array of length > 0");
}

TEST(TypeRules, TheSchemaChecksCountsAndOperandKinds) {
  EXPECT_EQ(typed(OpKind::Add, {f32()}).error, "takes 2 operands, has 1");
  EXPECT_EQ(typed(OpKind::Load, {Type::buffer(f32(), Access::ReadOnly)}).error, "takes 2 to 3 operands, has 1");
  EXPECT_EQ(typed(OpKind::VectorConstruct, {f32()}).error, "takes 2 or more operands, has 1");
  EXPECT_EQ(typed(OpKind::Load, {Type::buffer(f32(), Access::ReadOnly), f32()}).error,
            "the index must be a scalar integer, is f32");
  EXPECT_EQ(typed(OpKind::Load, {Type::buffer(f32(), Access::ReadOnly), u32(), u32()}).error, "the mask must be bool, is u32");
  EXPECT_EQ(typed(OpKind::PlaneShuffle, {f32(), i32()}).error, "the lane must be u32, is i32");
  EXPECT_EQ(typed(OpKind::VarLoad, {f32()}).error, "takes a var, not f32");
  EXPECT_EQ(typed(OpKind::Len, {f32()}).error, "takes an array (buffer, tensor, shared or local), not f32");
  EXPECT_EQ(typed(OpKind::Neg, {Type::buffer(f32(), Access::ReadOnly)}).error, "operand 0 is buffer<f32, ro>, not a value");
}

TEST(TypeRules, RulesRefuseInTheirOwnTerms) {
  EXPECT_EQ(typed(OpKind::Add, {f32(), i32()}).error, "operands have different types: f32 and i32");
  EXPECT_EQ(typed(OpKind::Shl, {f32(), f32()}).error, "takes integers, not f32");
  EXPECT_EQ(typed(OpKind::Exp, {i32()}).error, "takes floats, not i32");
  EXPECT_EQ(typed(OpKind::Neg, {u32()}).error, "not defined on u32");
  EXPECT_EQ(typed(OpKind::Store, {Type::buffer(f32(), Access::ReadOnly), u32(), f32()}).error,
            "writes read-only buffer<f32, ro>");
  EXPECT_EQ(result_type(TypeQuery{OpKind::Store, std::vector<Type>{Type::buffer(f32(), Access::ReadOnly), u32(), f32()}, {},
                                  Type::none(), "x"})
                .error,
            "writes read-only buffer<f32, ro> 'x'");
}

// Every row's result letter agrees with what its rule gives for operands its schema accepts.
TEST(TypeRules, EveryRowHasARuleAndASchema) {
  for (int i = 0; i < op_kind_count(); ++i) {
    const OpInfo& info = op_info(static_cast<OpKind>(i));
    EXPECT_GE(info.min_operands, 0) << info.name;
    EXPECT_EQ(info.has_mask(), info.operands.find('m') != std::string_view::npos) << info.name;
    EXPECT_EQ(info.region_label(static_cast<size_t>(info.regions)), "") << info.name;
    if (info.regions > 0) {
      EXPECT_NE(info.region_label(static_cast<size_t>(info.regions) - 1), "") << info.name;
    }
  }
}

}  // namespace
}  // namespace kiln::ir
