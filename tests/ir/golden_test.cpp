// Round-trip tests of the IR text form over tests/ir/golden/roundtrip.kir: every case parses,
// verifies (or fails as it declares), prints back byte for byte, and prints with op numbers in a
// form that parses back to the same kernel. Value checks pin what the text means, not only that
// it survives a round trip.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "kiln/error.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"

namespace kiln::ir {
namespace {

struct RoundTripCase {
  std::string name;
  std::string text;          // the kernel, exactly as print() must give it
  std::string verify_fails;  // when set, the verifier must reject the kernel with this text
};

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

std::vector<RoundTripCase> read_cases() {
  std::ifstream in(std::string(KILN_TEST_DATA) + "/golden/roundtrip.kir");
  std::vector<std::vector<std::string>> chunks(1);
  for (std::string line; std::getline(in, line);) {
    if (line == "// -----") {
      chunks.emplace_back();
    } else {
      chunks.back().push_back(line);
    }
  }
  std::vector<RoundTripCase> cases;
  for (size_t c = 1; c < chunks.size(); ++c) {
    RoundTripCase rc;
    size_t i = 0;
    for (; i < chunks[c].size() && starts_with(chunks[c][i], "//"); ++i) {
      const std::string& l = chunks[c][i];
      if (starts_with(l, "// CASE: ")) rc.name = l.substr(9);
      if (starts_with(l, "// VERIFY-FAILS: ")) rc.verify_fails = l.substr(17);
    }
    size_t end = chunks[c].size();
    while (end > i && chunks[c][end - 1].empty()) --end;
    for (; i < end; ++i) rc.text += chunks[c][i] + "\n";
    cases.push_back(std::move(rc));
  }
  return cases;
}

const RoundTripCase& find_case(const std::string& name) {
  static const std::vector<RoundTripCase> all = read_cases();
  for (const RoundTripCase& c : all) {
    if (c.name == name) return c;
  }
  throw Error("test.no_case", "roundtrip.kir has no case " + name);
}

void PrintTo(const RoundTripCase& c, std::ostream* os) { *os << "case '" << c.name << "'"; }

class RoundTrip : public ::testing::TestWithParam<RoundTripCase> {};

TEST_P(RoundTrip, PrintOfParseIsTheTextExactly) {
  const RoundTripCase& c = GetParam();
  ASSERT_FALSE(c.name.empty()) << "a case has no // CASE: line";
  ASSERT_FALSE(c.text.empty()) << "case '" << c.name << "' has no kernel text";
  Kernel k = parse(c.text);
  std::string printed = print(k);
  EXPECT_EQ(printed, c.text) << "--- expected:\n" << c.text << "--- actual:\n" << printed;
}

TEST_P(RoundTrip, VerifiesOrFailsAsDeclared) {
  const RoundTripCase& c = GetParam();
  Kernel k = parse(c.text);
  if (c.verify_fails.empty()) {
    EXPECT_NO_THROW(verify(k, "golden")) << "case '" << c.name << "'";
  } else {
    try {
      verify(k, "golden");
      ADD_FAILURE() << "case '" << c.name << "' verified, but it declares VERIFY-FAILS: " << c.verify_fails;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), "ir.verify");
      EXPECT_NE(e.message().find(c.verify_fails), std::string::npos) << e.message();
    }
  }
}

TEST_P(RoundTrip, TextWithOpNumbersParsesBackToTheSameKernel) {
  const RoundTripCase& c = GetParam();
  Kernel k = parse(c.text);
  PrintOptions numbered;
  numbered.op_numbers = true;
  std::string with_numbers = print(k, numbered);
  EXPECT_EQ(print(parse(with_numbers)), c.text) << "--- numbered text:\n" << with_numbers;

  // The numbers appear in pre-order, 1 to the number of ops, each once.
  size_t expected = 1;
  for (size_t at = with_numbers.find("// #"); at != std::string::npos; at = with_numbers.find("// #", at + 1)) {
    EXPECT_EQ(std::stoul(with_numbers.substr(at + 4)), expected++) << with_numbers;
  }
  EXPECT_EQ(expected - 1, op_count(k)) << "every op carries its number";
}

TEST_P(RoundTrip, PrintingIsStableAcrossTwoRoundTrips) {
  const RoundTripCase& c = GetParam();
  std::string once = print(parse(c.text));
  EXPECT_EQ(print(parse(once)), once);
}

std::string case_name(const ::testing::TestParamInfo<RoundTripCase>& info) {
  std::string n = info.param.name.empty() ? "unnamed" : info.param.name;
  for (char& ch : n) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return n + "_" + std::to_string(info.index);
}

INSTANTIATE_TEST_SUITE_P(Golden, RoundTrip, ::testing::ValuesIn(read_cases()), case_name);

// A mistyped separator must not silently drop cases.
TEST(RoundTripFile, HoldsEveryCaseWithAUniqueName) {
  std::vector<RoundTripCase> cases = read_cases();
  EXPECT_EQ(cases.size(), 31u);
  std::set<std::string> names;
  for (const RoundTripCase& c : cases) EXPECT_TRUE(names.insert(c.name).second) << "two cases named " << c.name;
}

// Together the cases exercise the text of every op kind, every type kind and every scalar.
TEST(RoundTripFile, CoversEveryOpKindTypeKindAndScalar) {
  std::set<OpKind> ops;
  std::set<TypeKind> kinds;
  std::set<Scalar> scalars;
  for (const RoundTripCase& c : read_cases()) {
    Kernel k = parse(c.text);
    for (const Type& t : k.value_types) {
      kinds.insert(t.kind);
      scalars.insert(t.scalar);
    }
    walk(k.body, [&](const Op& op) { ops.insert(op.kind); });
  }
  for (int i = 0; i < op_kind_count(); ++i) {
    EXPECT_TRUE(ops.count(static_cast<OpKind>(i))) << "no case uses op " << op_name(static_cast<OpKind>(i));
  }
  for (TypeKind t : {TypeKind::Scalar, TypeKind::Vector, TypeKind::Buffer, TypeKind::Tensor, TypeKind::Shared,
                     TypeKind::Local, TypeKind::Var, TypeKind::Tile}) {
    EXPECT_TRUE(kinds.count(t)) << "no case has a value of type kind " << static_cast<int>(t);
  }
  for (Scalar s : {Scalar::Bool, Scalar::I8, Scalar::I16, Scalar::I32, Scalar::I64, Scalar::U8, Scalar::U16,
                   Scalar::U32, Scalar::U64, Scalar::F16, Scalar::BF16, Scalar::F32, Scalar::F64}) {
    EXPECT_TRUE(scalars.count(s)) << "no case uses scalar " << scalar_name(s);
  }
}

// The constant of the op defining printed value %`index` (values are numbered in definition order).
const AttrValue& constant_at(const Kernel& k, size_t index) {
  size_t seen = 0;
  const AttrValue* found = nullptr;
  walk(k.body, [&](const Op& op) {
    if (op.result == kNoValue) return;
    if (seen++ == index && op.kind == OpKind::Const) found = op.attr(AttrKey::Value);
  });
  if (!found) throw Error("test.no_constant", "%" + std::to_string(index) + " is not a constant");
  return *found;
}

TEST(RoundTripValues, FloatConstantsKeepTheirExactValues) {
  Kernel k = parse(find_case("float_and_integer_limits").text);
  EXPECT_EQ(constant_at(k, 1).f, std::numeric_limits<double>::infinity());
  EXPECT_EQ(constant_at(k, 2).f, -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(constant_at(k, 3).f));
  EXPECT_EQ(constant_at(k, 4).f, 0.0);
  EXPECT_TRUE(std::signbit(constant_at(k, 4).f)) << "-0.0 keeps its sign";
  EXPECT_EQ(constant_at(k, 5).f, 1e-300);
  EXPECT_EQ(constant_at(k, 6).f, 1e300);
  EXPECT_EQ(constant_at(k, 7).f, std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(constant_at(k, 8).f, 0.1);
  EXPECT_EQ(constant_at(k, 9).f, 123456789012345678.0);
  EXPECT_TRUE(std::signbit(constant_at(k, 11).f));
  EXPECT_EQ(constant_at(k, 13).f, static_cast<double>(std::numeric_limits<float>::max()));
  for (size_t i = 1; i <= 14; ++i) EXPECT_EQ(constant_at(k, i).tag, AttrValue::Tag::Float) << "%" << i;
}

TEST(RoundTripValues, IntegerLimitsKeepTheirBits) {
  Kernel k = parse(find_case("float_and_integer_limits").text);
  EXPECT_EQ(static_cast<uint64_t>(constant_at(k, 15).i), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(constant_at(k, 16).i, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(constant_at(k, 17).i, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(constant_at(k, 18).i, 0);
  Kernel t = parse(find_case("every_type").text);
  EXPECT_EQ(constant_at(t, 0).tag, AttrValue::Tag::Bool);
  EXPECT_EQ(constant_at(t, 1).i, -128);
  EXPECT_EQ(constant_at(t, 7).i, 4294967295);
}

TEST(RoundTripValues, FormatStringEscapesDecodeToTheirBytes) {
  Kernel k = parse(find_case("debug_print_escapes").text);
  std::vector<std::string> formats;
  walk(k.body, [&](const Op& op) {
    if (op.kind == OpKind::DebugPrint) formats.push_back(op.attr(AttrKey::Format)->s);
  });
  ASSERT_EQ(formats.size(), 2u);
  EXPECT_EQ(formats[0], std::string("unit %u:\tx = %f \"quoted\" back\\slash\n\x01\x1f\x7f\xc3\xa9"));
  EXPECT_EQ(formats[1], "");
}

TEST(RoundTripValues, LoopAttributesAreReadWithTheirValues) {
  Kernel k = parse(find_case("for_loop_attributes").text);
  std::vector<const Op*> loops;
  walk(k.body, [&](const Op& op) {
    if (op.kind == OpKind::For) loops.push_back(&op);
  });
  ASSERT_EQ(loops.size(), 3u);
  EXPECT_EQ(loops[0]->attr_int(AttrKey::Unroll), 4);
  EXPECT_EQ(loops[0]->attr_int(AttrKey::PrefetchStages), 2);
  EXPECT_FALSE(loops[0]->has_attr(AttrKey::UnrollFull));
  EXPECT_TRUE(loops[1]->flag(AttrKey::UnrollFull));
  EXPECT_FALSE(loops[2]->flag(AttrKey::UnrollFull));
  EXPECT_TRUE(loops[2]->has_attr(AttrKey::UnrollFull)) << "unroll_full = false is kept, not dropped";
  EXPECT_EQ(loops[2]->attr_int(AttrKey::PrefetchStages, -1), 0);
  EXPECT_EQ(loops[2]->regions[0].args.size(), 1u);
  EXPECT_EQ(k.type_of(loops[2]->regions[0].args[0]), Type::scalar_of(Scalar::I64));
}

TEST(RoundTripValues, VectorizeAtLeastOnceLanesAndLoopAreReadWithTheirValues) {
  Kernel k = parse(find_case("vectorize_at_least_once_wide_accesses_and_a_check").text);
  std::vector<const Op*> loops, wide, checks;
  walk(k.body, [&](const Op& op) {
    if (op.kind == OpKind::For) loops.push_back(&op);
    if (op.has_attr(AttrKey::Lanes)) wide.push_back(&op);
    if (op.kind == OpKind::CheckTrips) checks.push_back(&op);
  });
  ASSERT_EQ(loops.size(), 2u);
  EXPECT_EQ(loops[0]->attr_int(AttrKey::Vectorize), 4);
  EXPECT_TRUE(loops[0]->flag(AttrKey::AtLeastOnce));
  EXPECT_TRUE(loops[1]->has_attr(AttrKey::AtLeastOnce));
  EXPECT_FALSE(loops[1]->flag(AttrKey::AtLeastOnce)) << "at_least_once = false is read as false";
  ASSERT_EQ(wide.size(), 2u);
  EXPECT_EQ(wide[0]->attr_int(AttrKey::Lanes), 4);
  EXPECT_EQ(wide[0]->type, Type::vector_of(Scalar::F32, 4)) << "a wide load gives a vector of the buffer's scalar";
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0]->attr_int(AttrKey::Loop), 1);
  EXPECT_EQ(checks[0]->operands.size(), 2u);
}

TEST(RoundTripValues, KernelFactsAndComptimeAreRead) {
  Kernel k = parse(find_case("every_type").text);
  EXPECT_EQ(k.name, "every_type");
  EXPECT_EQ(k.facts.cube_dim, (Dim3{32, 2, 1}));
  EXPECT_EQ(k.facts.mode, ExecMode::Unchecked);
  EXPECT_EQ(k.facts.address, AddressType::U64);
  EXPECT_EQ(k.facts.vector_width, 2);
  ASSERT_EQ(k.params.size(), 8u);
  EXPECT_EQ(k.params[4].type, Type::tensor(Type::vector_of(Scalar::F32, 4), 3, Access::ReadOnly));
  Kernel add = parse(find_case("add_relu_true").text);
  ASSERT_EQ(add.facts.comptime.size(), 1u);
  EXPECT_EQ(add.facts.comptime[0].first, "relu");
  EXPECT_EQ(add.facts.comptime[0].second, "true");
}

// Structure is kept: the else of an if holds the inner if (what ElseIf records).
TEST(RoundTripValues, NestedRegionsKeepTheirOps) {
  Kernel k = parse(find_case("if_else_chain").text);
  const Op* outer = nullptr;
  for (const Op& op : k.body.ops) {
    if (op.kind == OpKind::If && !op.regions[1].ops.empty() && !outer) outer = &op;
  }
  ASSERT_NE(outer, nullptr);
  ASSERT_EQ(outer->regions[1].ops.size(), 2u);
  EXPECT_EQ(outer->regions[1].ops[1].kind, OpKind::If);
  EXPECT_EQ(outer->regions[1].ops[1].regions[1].ops.size(), 2u);
}

// The text of a loop that carries values means: results, region arguments and yields in order.
TEST(RoundTripValues, ForCarriesItsValuesInOrder) {
  Kernel k = parse(find_case("for_carries_values").text);
  const Op* loop = nullptr;
  for (const Op& op : k.body.ops) {
    if (op.kind == OpKind::For) loop = &op;
  }
  ASSERT_NE(loop, nullptr);
  ASSERT_EQ(loop->result_count(), 2u);
  EXPECT_EQ(k.type_of(loop->result_at(0)), Type::scalar_of(Scalar::F32));
  EXPECT_EQ(k.type_of(loop->result_at(1)), Type::scalar_of(Scalar::U32));
  EXPECT_EQ(loop->type, Type::scalar_of(Scalar::F32)) << "op.type is the first result's type";
  ASSERT_EQ(loop->operands.size(), 5u);
  ASSERT_EQ(loop_inits(*loop).size(), 2u);
  const Region& body = loop->regions[0];
  ASSERT_EQ(body.args.size(), 3u);
  ASSERT_EQ(loop_carried_args(*loop).size(), 2u);
  EXPECT_EQ(loop_carried_args(*loop)[0], body.args[1]);
  const Op& yield = body.ops.back();
  ASSERT_EQ(yield.kind, OpKind::Yield);
  ASSERT_EQ(yield.operands.size(), 2u);
  // The inner if's result is the loop's next sum.
  const Op& inner_if = body.ops[body.ops.size() - 2];
  ASSERT_EQ(inner_if.kind, OpKind::If);
  EXPECT_EQ(yield.operands_from(ops::Yield::values)[0], inner_if.result);
  EXPECT_EQ(inner_if.regions[0].ops.back().kind, OpKind::Break);
  EXPECT_EQ(inner_if.regions[0].ops.back().operands.size(), 2u);
  // Both results are read after the loop.
  EXPECT_EQ(k.body.ops[k.body.ops.size() - 3].operand(ops::Unary::x), loop->result_at(1)) << "cast %6";
  EXPECT_EQ(k.body.ops[k.body.ops.size() - 2].operand(ops::Binary::lhs), loop->result_at(0)) << "div %5, %17";
}

TEST(RoundTripValues, WhileConditionPassesOnToBodyAndResults) {
  Kernel k = parse(find_case("while_carries_values").text);
  const Op& loop = k.body.ops[4];
  ASSERT_EQ(loop.kind, OpKind::While);
  EXPECT_EQ(loop.result_count(), 3u);
  EXPECT_EQ(loop.regions[0].args.size(), 2u);
  EXPECT_EQ(loop.regions[1].args.size(), 3u);
  const Op& condition = loop.regions[0].ops.back();
  ASSERT_EQ(condition.kind, OpKind::Condition);
  EXPECT_EQ(condition.operands.size(), 4u);
  EXPECT_EQ(condition.operands_from(ops::Condition::forwarded)[0], loop.regions[0].args[0]);
  EXPECT_EQ(k.type_of(loop.result_at(2)), Type::scalar_of(Scalar::Bool));
  EXPECT_EQ(k.body.ops.back().operand(ops::Store::value), loop.result_at(1)) << "the store writes the step count";
}

TEST(RoundTripValues, ArrayAttributesAndTargetAreRead) {
  Kernel k = parse(find_case("array_attributes_and_target").text);
  EXPECT_EQ(k.facts.target, Target::cuda(90, true));
  const AttrValue* load = k.body.ops[1].attr(AttrKey::Planes);
  ASSERT_NE(load, nullptr);
  EXPECT_EQ(load->tag, AttrValue::Tag::Ints);
  EXPECT_EQ(load->ints, (std::vector<int64_t>{1, 0}));
  EXPECT_TRUE(k.body.ops[2].attr(AttrKey::Planes)->ints.empty());
  EXPECT_EQ(k.body.ops[3].attr(AttrKey::Planes)->ints, (std::vector<int64_t>{-1, 7, 123456789012}));
  EXPECT_EQ(k.body.ops[4].attr(AttrKey::Planes)->ints, (std::vector<int64_t>{4}));
  EXPECT_FALSE(k.body.ops[1].attr(AttrKey::Planes) == k.body.ops[4].attr(AttrKey::Planes));
}

TEST(Targets, NamesParseBackAndOddOnesAreRefused) {
  for (Target t : {Target::cpu(), Target::cuda(80), Target::cuda(90, true), Target::cuda(120), Target{}}) {
    Target back = Target::cuda(1);
    ASSERT_TRUE(parse_target(to_string(t), back)) << to_string(t);
    EXPECT_EQ(back, t) << to_string(t);
  }
  EXPECT_EQ(to_string(Target::cuda(90, true)), "sm_90a");
  EXPECT_EQ(to_string(Target::cpu()), "cpu");
  Target out;
  for (const char* bad : {"", "sm_", "sm_9", "sm_090", "sm_90b", "sm_1234", "gpu", "SM_90", "sm_90aa"}) {
    EXPECT_FALSE(parse_target(bad, out)) << bad;
  }
  EXPECT_TRUE(Target::cuda(90, true).cuda_at_least(80));
  EXPECT_FALSE(Target::cuda(75).cuda_at_least(80));
  EXPECT_FALSE(Target::cpu().cuda_at_least(0));
}

}  // namespace
}  // namespace kiln::ir
