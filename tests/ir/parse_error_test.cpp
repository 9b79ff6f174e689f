// Parser errors: each is a kiln::Error of kind "ir.parse" whose message names the line and column
// where the problem starts, and says what it is.
#include <gtest/gtest.h>

#include <string>

#include "kiln/error.h"
#include "kiln/ir/text.h"

namespace kiln::ir {
namespace {

constexpr const char* kHeader =
    "kernel @k(%x: buffer<f32, ro>, %y: buffer<f32, rw>) {cube_dim = [1, 1, 1], mode = checked, address = u32, "
    "vector = 1} {\n";

struct ParseFailure {
  std::string kind;
  std::string message;
};

ParseFailure parse_failure(const std::string& text) {
  try {
    parse(text);
  } catch (const Error& e) {
    return {e.kind(), e.message()};
  }
  return {"(none)", "(the text parsed)"};
}

void expect_parse_error(const std::string& text, int line, int column, const std::string& what) {
  ParseFailure f = parse_failure(text);
  EXPECT_EQ(f.kind, "ir.parse") << f.message;
  std::string where = "line " + std::to_string(line) + ", column " + std::to_string(column) + ": ";
  EXPECT_EQ(f.message.rfind(where, 0), 0u) << "expected the message to start with '" << where << "': " << f.message;
  EXPECT_NE(f.message.find(what), std::string::npos) << "expected '" << what << "' in: " << f.message;
}

TEST(ParseError, UnknownOpNamesTheOpAtItsStart) {
  expect_parse_error(std::string(kHeader) + "  %0 = const 1 : u32\n  %1 = frobnicate %0 : u32\n}\n", 3, 8,
                     "unknown op 'frobnicate'");
}

TEST(ParseError, UndefinedValueNamesTheValue) {
  expect_parse_error(std::string(kHeader) + "  %0 = const 1 : u32\n  %1 = load %x, %7 : f32\n}\n", 3, 17,
                     "value %7 is used before it is defined");
}

TEST(ParseError, ValueUsedBeforeALaterDefinitionIsUndefined) {
  expect_parse_error(std::string(kHeader) + "  %0 = add %1, %1 : u32\n  %1 = const 1 : u32\n}\n", 2, 12,
                     "value %1 is used before it is defined");
}

TEST(ParseError, DuplicateDefinitionPointsAtTheSecondName) {
  expect_parse_error(std::string(kHeader) + "  %0 = const 1 : u32\n  %0 = const 2 : u32\n}\n", 3, 3,
                     "value %0 is defined twice");
}

TEST(ParseError, DuplicateParameterName) {
  expect_parse_error(
      "kernel @k(%x: f32, %x: u32) {cube_dim = [1, 1, 1], mode = checked, address = u32, vector = 1} {\n}\n", 1, 20,
      "value %x is defined twice");
}

TEST(ParseError, RegionArgumentRedefiningAValue) {
  expect_parse_error(
      std::string(kHeader) + "  %0 = const 0 : u32\n  %1 = const 1 : u32\n  for %0, %1, %1 (%0: u32) {\n  }\n}\n", 4,
      19, "value %0 is defined twice");
}

TEST(ParseError, UnknownScalarInAType) {
  expect_parse_error(
      "kernel @k(%x: buffer<f33, ro>) {cube_dim = [1, 1, 1], mode = checked, address = u32, vector = 1} {\n}\n", 1, 22,
      "unknown scalar type 'f33'");
}

TEST(ParseError, BadVectorWidth) {
  expect_parse_error(std::string(kHeader) + "  %0 = const 1.0 : vector<3 x f32>\n}\n", 2, 27,
                     "vector width 3 is not one of 1, 2, 4, 8, 16");
}

TEST(ParseError, BadAccessInAType) {
  expect_parse_error(
      "kernel @k(%x: buffer<f32, wo>) {cube_dim = [1, 1, 1], mode = checked, address = u32, vector = 1} {\n}\n", 1, 27,
      "expected 'ro' or 'rw', not 'wo'");
}

TEST(ParseError, TensorRankTooLargeIsNotWrapped) {
  expect_parse_error(
      "kernel @k(%x: tensor<f32, 256, ro>) {cube_dim = [1, 1, 1], mode = checked, address = u32, vector = 1} {\n}\n", 1,
      27, "the number 256 is too large here (at most 255)");
}

TEST(ParseError, ArrayLengthTooLargeIsNotWrapped) {
  expect_parse_error(std::string(kHeader) + "  %0 = shared.alloc : shared<f32, 4294967296>\n}\n", 2, 35,
                     "the number 4294967296 is too large");
}

TEST(ParseError, VectorWidthTooLargeIsNotWrapped) {
  // 2^32 + 4 would read as 4 if it were narrowed to 32 bits.
  expect_parse_error(std::string(kHeader) + "  %0 = const 1.0 : vector<4294967300 x f32>\n}\n", 2, 27,
                     "the number 4294967300 is too large");
}

TEST(ParseError, TileWithMoreThanFourDimensions) {
  expect_parse_error(
      "kernel @k(%x: tile<[1, 2, 3, 4, 5] x f32>) {cube_dim = [1, 1, 1], mode = checked, address = u32, vector = "
      "1} {\n}\n",
      1, 33, "a tile has at most 4 dimensions");
}

TEST(ParseError, TileWithoutAKnownMemorySpace) {
  expect_parse_error(
      "kernel @k(%x: tile<[16, 16] x f32, local>) {cube_dim = [1, 1, 1], mode = checked, address = u32, vector = "
      "1} {\n}\n",
      1, 36, "a tile's memory space is 'registers', 'shared' or 'global', not 'local'");
  expect_parse_error(
      "kernel @k(%x: tile<[16, 16] x f32>) {cube_dim = [1, 1, 1], mode = checked, address = u32, vector = 1} {\n}\n", 1,
      34, "expected ','");
}

TEST(ParseError, UnknownTarget) {
  expect_parse_error(
      "kernel @k() {cube_dim = [1, 1, 1], mode = checked, address = u32, vector = 1, target = sm_9x} {\n}\n", 1, 88,
      "target is 'cpu' or a CUDA architecture such as 'sm_90a', not 'sm_9x'");
  expect_parse_error(
      "kernel @k() {cube_dim = [1, 1, 1], mode = checked, address = u32, vector = 1, target = gpu} {\n}\n", 1, 88,
      "not 'gpu'");
}

TEST(ParseError, ResultsAndTypesDisagreeInNumber) {
  expect_parse_error(std::string(kHeader) +
                         "  %0 = const 0 : u32\n  %1, %2 = for %0, %0, %0, %0 : u32 (%3: u32, %4: u32) {\n"
                         "    yield %4\n  }\n}\n",
                     3, 3, "op 'for' defines 2 results but gives 1 types");
  expect_parse_error(std::string(kHeader) + "  %0 = const 0 : u32\n  store %y, %0, %0 : f32, f32\n}\n", 3, 20,
                     "op 'store' gives 2 result types but defines no results");
}

TEST(ParseError, ArrayAttributeHoldsIntegers) {
  expect_parse_error(std::string(kHeader) + "  %0 = const 0 : u32\n  %1 = load %x, %0 {planes = [1, 2.5]} : f32\n}\n",
                     3, 34, "an array attribute holds integers, not '2.5'");
  expect_parse_error(std::string(kHeader) + "  %0 = const 0 : u32\n  %1 = load %x, %0 {planes = [1, 2} : f32\n}\n", 3,
                     35, "expected ']'");
}

// A padding value is written as its name, which the parser checks against the five there are.
TEST(ParseError, PadAttributeNamesAPaddingValue) {
  expect_parse_error(std::string(kHeader) + "  %0 = const 0 : u32\n  %1 = load %x, %0 {pad = inf} : f32\n}\n", 3, 27,
                     "a padding value is zero, neg_zero, pos_inf, neg_inf or nan, not 'inf'");
}

// A break or continue that carries nothing ends at its name, even when the next line defines
// results; one that carries values takes them.
TEST(ParseError, BreakBeforeADefinitionTakesNoOperands) {
  Kernel k = parse(std::string(kHeader) +
                   "  %0 = const 0 : u32\n  %1 = const 1 : u32\n  for %0, %1, %1 (%2: u32) {\n    break\n"
                   "    %3, %4 = if %0 : u32, u32 {\n      yield %0, %0\n    } else {\n      yield %1, %1\n    }\n"
                   "  }\n}\n");
  const Op& loop = k.body.ops[2];
  ASSERT_EQ(loop.regions[0].ops.size(), 2u);
  EXPECT_TRUE(loop.regions[0].ops[0].operands.empty());
  EXPECT_EQ(loop.regions[0].ops[1].result_count(), 2u);
}

TEST(ParseError, UnterminatedStringPointsAtItsOpeningQuote) {
  expect_parse_error(std::string(kHeader) + "  debug.print {format = \"abc\n}\n", 2, 25, "unterminated string");
}

TEST(ParseError, UnknownEscapeInAString) {
  expect_parse_error(std::string(kHeader) + "  debug.print {format = \"a\\qb\"}\n}\n", 2, 27, "unknown escape '\\q'");
}

TEST(ParseError, BadHexEscapeInAString) {
  expect_parse_error(std::string(kHeader) + "  debug.print {format = \"a\\xg1\"}\n}\n", 2, 27, "bad \\x escape");
}

TEST(ParseError, TrailingTextAfterTheKernel) {
  expect_parse_error(std::string(kHeader) + "}\n\n  trailing\n", 4, 3, "text after the kernel's closing brace");
}

TEST(ParseError, TrailingCommentIsNotText) {
  EXPECT_NO_THROW(parse(std::string(kHeader) + "}\n// a comment after the kernel\n"));
}

TEST(ParseError, MissingClosingBrace) {
  ParseFailure f = parse_failure(std::string(kHeader) + "  %0 = const 1 : u32\n");
  EXPECT_EQ(f.kind, "ir.parse");
  EXPECT_NE(f.message.find("line 3"), std::string::npos) << f.message;
}

TEST(ParseError, ResultWithoutAType) {
  expect_parse_error(std::string(kHeader) + "  %0 = builtin.unit_pos\n}\n", 2, 3,
                     "op 'builtin.unit_pos' defines %0 but has no ': type'");
}

TEST(ParseError, ConstantWithoutAType) {
  expect_parse_error(std::string(kHeader) + "  %0 = const 1\n}\n", 2, 14, "a constant needs its type");
}

TEST(ParseError, BadConstants) {
  expect_parse_error(std::string(kHeader) + "  %0 = const yes : bool\n}\n", 2, 14,
                     "a bool constant is 'true' or 'false', not 'yes'");
  expect_parse_error(std::string(kHeader) + "  %0 = const -1 : u32\n}\n", 2, 14, "bad unsigned constant '-1'");
  expect_parse_error(std::string(kHeader) + "  %0 = const 1.5 : i32\n}\n", 2, 14, "bad integer constant '1.5'");
  expect_parse_error(std::string(kHeader) + "  %0 = const 18446744073709551616 : u64\n}\n", 2, 14,
                     "bad unsigned constant '18446744073709551616'");
  expect_parse_error(std::string(kHeader) + "  %0 = const 1.2.3 : f32\n}\n", 2, 14, "expected a number, not '1.2.3'");
}

TEST(ParseError, UnknownAttribute) {
  expect_parse_error(std::string(kHeader) + "  %0 = builtin.unit_pos {colour = 1} : u32\n}\n", 2, 26,
                     "unknown attribute 'colour'");
}

TEST(ParseError, UnknownKernelFactAndBadFactValues) {
  expect_parse_error("kernel @k() {cube_dim = [1, 1, 1], colour = red} {\n}\n", 1, 36, "unknown kernel fact 'colour'");
  expect_parse_error("kernel @k() {mode = careful} {\n}\n", 1, 21, "mode is 'checked' or 'unchecked', not 'careful'");
  expect_parse_error("kernel @k() {address = u16} {\n}\n", 1, 24, "address is 'u32' or 'u64', not 'u16'");
}

TEST(ParseError, FastMathListsContractAndApproxOnce) {
  expect_parse_error("kernel @k() {fast_math = [contract, fast]} {\n}\n", 1, 37,
                     "fast_math lists 'contract' and 'approx', not 'fast'");
  expect_parse_error("kernel @k() {fast_math = [approx, approx]} {\n}\n", 1, 35, "fast_math names 'approx' twice");
  expect_parse_error("kernel @k() {fast_math = []} {\n}\n", 1, 27,
                     "fast_math lists 'contract', 'approx' or both; leave it out for exact math");
  expect_parse_error("kernel @k() {fast_math = approx} {\n}\n", 1, 26, "expected '['");
}

TEST(ParseError, MissingElseOrDoKeyword) {
  expect_parse_error(std::string(kHeader) + "  while {\n    %0 = const true : bool\n    condition %0\n  } {\n  }\n}\n",
                     5, 5, "expected 'do'");
}

TEST(ParseError, NotAKernel) {
  expect_parse_error("function @k() {}\n", 1, 1, "expected 'kernel'");
  expect_parse_error("", 1, 1, "expected 'kernel'");
}

}  // namespace
}  // namespace kiln::ir
