// Unit tests of the IR's tables: scalars (names, sizes, families), Type construction, equality and
// text, the op table's traits and operand counts, attribute names, and the Builder.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "kiln/error.h"
#include "kiln/ir/builder.h"
#include "kiln/ir/text.h"

namespace kiln::ir {
namespace {

struct ScalarFact {
  Scalar s;
  const char* name;
  int bytes;
  char family;  // 'b' bool, 'i' signed, 'u' unsigned, 'f' float
};

const ScalarFact kScalarFacts[] = {
    {Scalar::Bool, "bool", 1, 'b'},       {Scalar::I8, "i8", 1, 'i'},         {Scalar::I16, "i16", 2, 'i'},
    {Scalar::I32, "i32", 4, 'i'},         {Scalar::I64, "i64", 8, 'i'},       {Scalar::U8, "u8", 1, 'u'},
    {Scalar::U16, "u16", 2, 'u'},         {Scalar::U32, "u32", 4, 'u'},       {Scalar::U64, "u64", 8, 'u'},
    {Scalar::F16, "f16", 2, 'f'},         {Scalar::BF16, "bf16", 2, 'f'},     {Scalar::F32, "f32", 4, 'f'},
    {Scalar::F64, "f64", 8, 'f'},         {Scalar::F8E4M3, "f8e4m3", 1, 'f'}, {Scalar::F8E5M2, "f8e5m2", 1, 'f'},
    {Scalar::Barrier, "barrier", 8, 'x'},  // the element of mbarrier arrays: no family
};

TEST(Scalars, NameRoundTripsAndByteSize) {
  for (const ScalarFact& f : kScalarFacts) {
    EXPECT_EQ(scalar_name(f.s), f.name);
    EXPECT_EQ(scalar_bytes(f.s), f.bytes) << f.name;
    Scalar parsed = Scalar::Bool;
    ASSERT_TRUE(parse_scalar(f.name, parsed)) << f.name;
    EXPECT_EQ(parsed, f.s) << f.name;
  }
}

TEST(Scalars, Families) {
  for (const ScalarFact& f : kScalarFacts) {
    EXPECT_EQ(is_float(f.s), f.family == 'f') << f.name;
    EXPECT_EQ(is_signed_int(f.s), f.family == 'i') << f.name;
    EXPECT_EQ(is_unsigned_int(f.s), f.family == 'u') << f.name;
    EXPECT_EQ(is_int(f.s), f.family == 'i' || f.family == 'u') << f.name;
  }
}

TEST(Scalars, UnknownNamesDoNotParse) {
  Scalar s = Scalar::I32;
  for (const char* bad : {"", "f8", "float", "I32", "u128", "bool ", "bf"}) {
    EXPECT_FALSE(parse_scalar(bad, s)) << "'" << bad << "'";
    EXPECT_EQ(s, Scalar::I32) << "a failed parse leaves the output alone";
  }
}

TEST(Types, VectorOfWidthOneIsTheScalar) {
  EXPECT_EQ(Type::vector_of(Scalar::F32, 1), Type::scalar_of(Scalar::F32));
  EXPECT_TRUE(Type::vector_of(Scalar::F32, 1).is_scalar());
  Type v = Type::vector_of(Scalar::F32, 4);
  EXPECT_TRUE(v.is_vector());
  EXPECT_EQ(v.width, 4);
  EXPECT_EQ(v.element_bytes(), 16);
}

TEST(Types, VectorWidthsOutsideTheSetAreBadTypes) {
  for (int w : {0, 3, 5, 32, -4}) {
    try {
      Type::vector_of(Scalar::F32, w);
      ADD_FAILURE() << "width " << w << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), "ir.bad_type");
      EXPECT_NE(e.message().find(std::to_string(w)), std::string::npos) << e.message();
    }
  }
  for (int w : {2, 4, 8, 16}) EXPECT_NO_THROW(Type::vector_of(Scalar::I8, w));
}

TEST(Types, EqualityComparesEveryFieldThatMatters) {
  Type f32 = Type::scalar_of(Scalar::F32);
  Type v4 = Type::vector_of(Scalar::F32, 4);
  EXPECT_EQ(Type::buffer(f32, Access::ReadOnly), Type::buffer(f32, Access::ReadOnly));
  EXPECT_NE(Type::buffer(f32, Access::ReadOnly), Type::buffer(f32, Access::ReadWrite));
  EXPECT_NE(Type::buffer(f32, Access::ReadOnly), Type::buffer(v4, Access::ReadOnly));
  EXPECT_NE(Type::buffer(f32, Access::ReadWrite), Type::tensor(f32, 1, Access::ReadWrite));
  EXPECT_NE(Type::tensor(f32, 1, Access::ReadWrite), Type::tensor(f32, 2, Access::ReadWrite));
  EXPECT_EQ(Type::shared(f32, 64), Type::shared(f32, 64));
  EXPECT_NE(Type::shared(f32, 64), Type::shared(f32, 65));
  EXPECT_NE(Type::shared(f32, 64), Type::local(f32, 64));
  EXPECT_NE(Type::var(f32), Type::var(Type::scalar_of(Scalar::F64)));
  EXPECT_NE(Type::var(f32), f32);
  EXPECT_NE(Type::tile(Scalar::F32, 2, {16, 16}), Type::tile(Scalar::F32, 2, {16, 8}));
  EXPECT_NE(Type::tile(Scalar::F32, 2, {16, 16}), Type::tile(Scalar::F16, 2, {16, 16}));
  EXPECT_EQ(Type::tile(Scalar::F32, 2, {16, 16}), Type::tile(Scalar::F32, 2, {16, 16}));
  EXPECT_EQ(Type::tile(Scalar::F32, 2, {16, 16}), Type::tile(Scalar::F32, 2, {16, 16}, MemorySpace::Registers));
  EXPECT_NE(Type::tile(Scalar::F32, 2, {16, 16}), Type::tile(Scalar::F32, 2, {16, 16}, MemorySpace::Shared));
  EXPECT_NE(Type::tile(Scalar::F32, 2, {16, 16}, MemorySpace::Shared),
            Type::tile(Scalar::F32, 2, {16, 16}, MemorySpace::Global));
  EXPECT_NE(f32, Type::scalar_of(Scalar::I32));
  EXPECT_NE(Type::none(), f32);
  EXPECT_EQ(Type::none(), Type{});
}

TEST(Types, ElementAndWithScalar) {
  Type buf = Type::buffer(Type::vector_of(Scalar::F16, 8), Access::ReadOnly);
  EXPECT_EQ(buf.element(), Type::vector_of(Scalar::F16, 8));
  EXPECT_EQ(Type::var(Type::scalar_of(Scalar::U8)).element(), Type::scalar_of(Scalar::U8));
  EXPECT_EQ(Type::vector_of(Scalar::F32, 4).with_scalar(Scalar::Bool), Type::vector_of(Scalar::Bool, 4));
  EXPECT_TRUE(buf.is_global());
  EXPECT_TRUE(buf.is_array());
  EXPECT_FALSE(buf.is_value());
  EXPECT_TRUE(Type::shared(Type::scalar_of(Scalar::F32), 4).is_array());
  EXPECT_FALSE(Type::shared(Type::scalar_of(Scalar::F32), 4).is_global());
  EXPECT_FALSE(Type::var(Type::scalar_of(Scalar::F32)).is_array());
  EXPECT_TRUE(Type::scalar_of(Scalar::Bool).is_bool());
  EXPECT_FALSE(Type::buffer(Type::scalar_of(Scalar::Bool), Access::ReadWrite).is_bool());
}

TEST(Types, TextOfEveryKind) {
  Type f32 = Type::scalar_of(Scalar::F32);
  Type v4 = Type::vector_of(Scalar::F32, 4);
  EXPECT_EQ(to_string(Type::none()), "none");
  EXPECT_EQ(to_string(f32), "f32");
  EXPECT_EQ(to_string(v4), "vector<4 x f32>");
  EXPECT_EQ(to_string(Type::buffer(v4, Access::ReadOnly)), "buffer<vector<4 x f32>, ro>");
  EXPECT_EQ(to_string(Type::buffer(f32, Access::ReadWrite)), "buffer<f32, rw>");
  EXPECT_EQ(to_string(Type::tensor(f32, 3, Access::ReadOnly)), "tensor<f32, 3, ro>");
  EXPECT_EQ(to_string(Type::shared(Type::vector_of(Scalar::U64, 2), 64)), "shared<vector<2 x u64>, 64>");
  EXPECT_EQ(to_string(Type::local(Type::scalar_of(Scalar::I16), 4)), "local<i16, 4>");
  EXPECT_EQ(to_string(Type::var(Type::scalar_of(Scalar::Bool))), "var<bool>");
  EXPECT_EQ(to_string(Type::tile(Scalar::BF16, 2, {16, 32})), "tile<[16, 32] x bf16, registers>");
  EXPECT_EQ(to_string(Type::tile(Scalar::F16, 2, {128, 64}, MemorySpace::Shared)), "tile<[128, 64] x f16, shared>");
  EXPECT_EQ(to_string(Type::tile(Scalar::F32, 1, {256}, MemorySpace::Global)), "tile<[256] x f32, global>");
  EXPECT_EQ(print_type(Type::tile(Scalar::F64, 0, {})), "tile<[] x f64, registers>");
}

// Every kind of type prints to text that the parser reads back to an equal type (as a parameter's
// type or a result's type).
TEST(Types, TextParsesBackToAnEqualType) {
  Type f32 = Type::scalar_of(Scalar::F32);
  const Type types[] = {
      f32,
      Type::vector_of(Scalar::BF16, 16),
      Type::buffer(Type::vector_of(Scalar::I8, 2), Access::ReadOnly),
      Type::tensor(f32, 4, Access::ReadWrite),
      Type::shared(f32, 1024),
      Type::local(Type::vector_of(Scalar::U32, 8), 3),
      Type::var(Type::vector_of(Scalar::F64, 2)),
      Type::tile(Scalar::F16, 3, {2, 4, 8}),
      Type::tile(Scalar::BF16, 2, {64, 64}, MemorySpace::Shared),
      Type::tile(Scalar::I8, 1, {16}, MemorySpace::Global),
  };
  for (const Type& t : types) {
    std::string text =
        "kernel @t(%p: " + to_string(t) + ") {cube_dim = [1, 1, 1], mode = checked, address = u32, vector = 1} {\n}\n";
    Kernel k = parse(text);
    ASSERT_EQ(k.params.size(), 1u);
    EXPECT_EQ(k.params[0].type, t) << to_string(t);
    EXPECT_EQ(print(k), text);
  }
}

// ---- the op table ------------------------------------------------------------------------------

TEST(OpTable, EveryKindsNameParsesBackToTheSameKind) {
  std::set<std::string_view> names;
  ASSERT_GT(op_kind_count(), 100);
  for (int i = 0; i < op_kind_count(); ++i) {
    OpKind k = static_cast<OpKind>(i);
    OpKind parsed = OpKind::Const;
    ASSERT_TRUE(parse_op_kind(op_name(k), parsed)) << op_name(k);
    EXPECT_EQ(parsed, k) << op_name(k);
    EXPECT_TRUE(names.insert(op_name(k)).second) << "two kinds named " << op_name(k);
  }
  OpKind out = OpKind::Add;
  EXPECT_FALSE(parse_op_kind("addd", out));
  EXPECT_FALSE(parse_op_kind("", out));
  EXPECT_FALSE(parse_op_kind("cmp", out));
  EXPECT_EQ(out, OpKind::Add);
}

TEST(OpTable, OperandAndRegionCountsAreConsistent) {
  for (int i = 0; i < op_kind_count(); ++i) {
    const OpInfo& info = op_info(static_cast<OpKind>(i));
    EXPECT_GE(info.min_operands(), 0) << info.name;
    EXPECT_TRUE(info.max_operands() == -1 || info.max_operands() >= info.min_operands()) << info.name;
    EXPECT_EQ(info.regions > 0, (info.traits & kControl) != 0) << info.name << ": regions exactly on control ops";
  }
  EXPECT_EQ(op_info(OpKind::If).regions, 2);
  EXPECT_EQ(op_info(OpKind::For).regions, 1);
  EXPECT_EQ(op_info(OpKind::While).regions, 2);
  EXPECT_EQ(op_info(OpKind::Fma).min_operands(), 3);
  EXPECT_EQ(op_info(OpKind::Load).min_operands(), 2);
  EXPECT_EQ(op_info(OpKind::Load).max_operands(), 3);
  EXPECT_EQ(op_info(OpKind::AtomicCas).max_operands(), 5);
  EXPECT_EQ(op_info(OpKind::VectorConstruct).min_operands(), 1);
  EXPECT_EQ(op_info(OpKind::VectorConstruct).max_operands(), -1);  // its rule allows 2, 4, 8 or 16
  EXPECT_EQ(op_info(OpKind::Load).mask_operand(), 2);
  EXPECT_EQ(op_info(OpKind::Store).mask_operand(), 3);
  EXPECT_EQ(op_info(OpKind::AtomicCas).mask_operand(), 4);
  EXPECT_EQ(op_info(OpKind::Add).mask_operand(), -1);
  EXPECT_EQ(op_info(OpKind::If).region_label(1), "else");
  EXPECT_EQ(op_info(OpKind::While).region_label(1), "do");
}

TEST(OpTable, TraitsOfRepresentativeOps) {
  EXPECT_TRUE(has_trait(OpKind::Add, kPure));
  EXPECT_TRUE(has_trait(OpKind::Add, kCommutative));
  EXPECT_FALSE(has_trait(OpKind::Sub, kCommutative));
  EXPECT_FALSE(has_trait(OpKind::Lt, kCommutative));
  EXPECT_TRUE(has_trait(OpKind::Eq, kCommutative));
  EXPECT_FALSE(has_trait(OpKind::Fma, kCommutative)) << "fma's third operand is not interchangeable";
  EXPECT_TRUE(has_trait(OpKind::Store, kWritesMemory));
  EXPECT_FALSE(has_trait(OpKind::Store, kPure));
  EXPECT_TRUE(has_trait(OpKind::Load, kReadsMemory));
  EXPECT_FALSE(has_trait(OpKind::Load, kWritesMemory));
  EXPECT_FALSE(has_trait(OpKind::Load, kPure)) << "a load's result depends on memory";
  EXPECT_TRUE(has_trait(OpKind::AtomicAdd, kReadsMemory));
  EXPECT_TRUE(has_trait(OpKind::AtomicAdd, kWritesMemory));
  EXPECT_TRUE(has_trait(OpKind::PlaneSum, kPlane));
  EXPECT_FALSE(has_trait(OpKind::PlaneSum, kPure)) << "a plane op reads other units: never hoisted or merged freely";
  EXPECT_TRUE(has_trait(OpKind::SyncCube, kBarrier));
  EXPECT_TRUE(has_trait(OpKind::SharedAlloc, kAlloc));
  EXPECT_TRUE(has_trait(OpKind::VarDecl, kAlloc));
  EXPECT_TRUE(has_trait(OpKind::DebugPrint, kSideEffect));
  EXPECT_TRUE(has_trait(OpKind::AbsolutePos, kBuiltin));
  EXPECT_TRUE(has_trait(OpKind::Break, kTerminator));
  EXPECT_TRUE(has_trait(OpKind::For, kControl));
  Op mul;
  mul.kind = OpKind::Mul;
  EXPECT_TRUE(mul.has(kCommutative));
}

// Families as passes see them: every op is exactly one of pure, effectful (memory, side effect,
// barrier, plane, alloc) or structural (control, terminator).
TEST(OpTable, PureOpsHaveNoEffects) {
  const uint32_t effects =
      kReadsMemory | kWritesMemory | kAlloc | kPlane | kBarrier | kControl | kTerminator | kSideEffect;
  for (int i = 0; i < op_kind_count(); ++i) {
    const OpInfo& info = op_info(static_cast<OpKind>(i));
    if (info.traits & kPure) {
      EXPECT_EQ(info.traits & effects, 0u) << info.name << " is pure but declares an effect";
    } else {
      EXPECT_NE(info.traits & effects, 0u) << info.name << " is neither pure nor declares what it does";
    }
    if (info.traits & kCommutative) {
      // cse orders a commutative op's operands as ops::Binary's lhs and rhs.
      EXPECT_EQ(info.signature, Signature::Binary) << info.name;
      EXPECT_EQ(info.min_operands(), 2) << info.name;
      EXPECT_EQ(info.max_operands(), 2) << info.name;
    }
  }
}

TEST(OpTable, FamilyPredicates) {
  std::set<OpKind> compares, atomics, math;
  for (int i = 0; i < op_kind_count(); ++i) {
    OpKind k = static_cast<OpKind>(i);
    if (is_compare(k)) compares.insert(k);
    if (is_atomic(k)) atomics.insert(k);
    if (is_float_math(k)) math.insert(k);
    std::string_view n = op_name(k);
    EXPECT_EQ(is_compare(k), n.substr(0, 4) == "cmp.") << n;
    EXPECT_EQ(is_atomic(k), n.substr(0, 7) == "atomic.") << n;
  }
  EXPECT_EQ(compares.size(), 6u);
  EXPECT_EQ(atomics.size(), 9u);
  EXPECT_EQ(math.size(), 20u);
  EXPECT_TRUE(math.count(OpKind::Exp) && math.count(OpKind::IsInf) && math.count(OpKind::Pow));
  EXPECT_FALSE(is_float_math(OpKind::Fma));
}

TEST(Attributes, NamesRoundTrip) {
  for (AttrKey k : {AttrKey::Value, AttrKey::Axis, AttrKey::Lane, AttrKey::Dim, AttrKey::Checked, AttrKey::Unroll,
                    AttrKey::UnrollFull, AttrKey::PrefetchStages, AttrKey::Format, AttrKey::FastMath}) {
    AttrKey parsed = AttrKey::Value;
    ASSERT_TRUE(parse_attr_key(attr_name(k), parsed)) << attr_name(k);
    EXPECT_EQ(parsed, k);
  }
  AttrKey out = AttrKey::Lane;
  EXPECT_FALSE(parse_attr_key("unrolled", out));
  EXPECT_EQ(out, AttrKey::Lane);
}

TEST(Attributes, SetKeepsAttributesSortedAndReplaces) {
  Op op;
  op.set_attr(AttrKey::PrefetchStages, AttrValue::of_int(2));
  op.set_attr(AttrKey::Unroll, AttrValue::of_int(4));
  op.set_attr(AttrKey::Checked, AttrValue::of_bool(true));
  ASSERT_EQ(op.attrs.size(), 3u);
  EXPECT_EQ(op.attrs[0].key, AttrKey::Checked);
  EXPECT_EQ(op.attrs[1].key, AttrKey::Unroll);
  EXPECT_EQ(op.attrs[2].key, AttrKey::PrefetchStages);
  op.set_attr(AttrKey::Unroll, AttrValue::of_int(8));
  EXPECT_EQ(op.attrs.size(), 3u);
  EXPECT_EQ(op.attr_int(AttrKey::Unroll), 8);
  op.erase_attr(AttrKey::Checked);
  EXPECT_FALSE(op.flag(AttrKey::Checked));
  EXPECT_EQ(op.attr_int(AttrKey::Lane, -7), -7);
}

TEST(Builder, EmitsIntoTheInnermostRegionAndSortsAttributes) {
  Kernel k;
  k.name = "built";
  Value buf = k.new_value(Type::buffer(Type::scalar_of(Scalar::U32), Access::ReadWrite));
  k.params.push_back(Param{"out", k.type_of(buf), buf});
  Builder b(k);
  Value zero = b.const_int(Scalar::U32, 0);
  Value hi = b.const_int(Scalar::U32, 8);
  Value one = b.const_int(Scalar::U32, 1);
  b.emit(OpKind::For, {zero, hi, one}, Type::none(),
         {Attr{AttrKey::PrefetchStages, AttrValue::of_int(1)}, Attr{AttrKey::Unroll, AttrValue::of_int(2)}});
  Region& body = b.enter(0);
  Value i = k.new_value(Type::scalar_of(Scalar::U32));
  body.args.push_back(i);
  EXPECT_EQ(b.depth(), 2u);
  b.emit(OpKind::Store, {buf, i, i}, Type::none(), make_attrs({Attr{AttrKey::Checked, AttrValue::of_bool(true)}}));
  b.leave();
  EXPECT_EQ(b.depth(), 1u);
  EXPECT_EQ(b.last().kind, OpKind::For);
  EXPECT_EQ(b.last().attrs[0].key, AttrKey::Unroll) << "emit sorts attributes by key";
  EXPECT_EQ(op_count(k), 5u);
  EXPECT_EQ(print(k),
            "kernel @built(%out: buffer<u32, rw>) {cube_dim = [1, 1, 1], mode = checked, address = u32, vector = 1} {\n"
            "  %0 = const 0 : u32\n"
            "  %1 = const 8 : u32\n"
            "  %2 = const 1 : u32\n"
            "  for %0, %1, %2 {unroll = 2, prefetch_stages = 1} (%3: u32) {\n"
            "    store %out, %3, %3 {checked}\n"
            "  }\n"
            "}\n");
  EXPECT_EQ(k.param_of(buf), &k.params[0]);
  EXPECT_EQ(k.param_of(zero), nullptr);
}

// The printer numbers values in order of definition, whatever ids the kernel gave them.
TEST(Printer, RenumbersValuesInDefinitionOrder) {
  Kernel k;
  k.name = "gaps";
  Builder b(k);
  for (int i = 0; i < 5; ++i) k.new_value(Type::scalar_of(Scalar::I32));  // unused ids
  Value a = b.const_int(Scalar::I32, 3);
  Value c = b.emit(OpKind::Neg, {a}, Type::scalar_of(Scalar::I32));
  EXPECT_EQ(a, 5u);
  EXPECT_EQ(c, 6u);
  EXPECT_EQ(print(k),
            "kernel @gaps() {cube_dim = [1, 1, 1], mode = checked, address = u32, vector = 1} {\n"
            "  %0 = const 3 : i32\n"
            "  %1 = neg %0 : i32\n"
            "}\n");
}

}  // namespace
}  // namespace kiln::ir
