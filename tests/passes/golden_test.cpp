// Golden text tests for the passes, in the style of MLIR's test/Transforms files: each .kir file in
// this folder holds cases separated by a line `// -----`; a case names itself in a
// `// CHECK-NAME:` comment, gives an input kernel, a line `// EXPECT:` and the exact text
// ir::print gives after the file's pass (pipeline.kir: the whole default pipeline).
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/error.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"
#include "kiln/passes/passes.h"

namespace kiln {
namespace {

struct GoldenCase {
  std::string file;  // the pass: "fold", ..., or "pipeline"
  std::string name;
  std::string input;
  std::string expected;
  std::string problem;  // set when the case itself is malformed
};

std::string trim_blank_lines(const std::vector<std::string>& lines, size_t begin, size_t end) {
  while (begin < end && lines[begin].find_first_not_of(" \t") == std::string::npos) ++begin;
  while (end > begin && lines[end - 1].find_first_not_of(" \t") == std::string::npos) --end;
  std::string out;
  for (size_t i = begin; i < end; ++i) out += lines[i] + "\n";
  return out;
}

// Splits one file. The part before the first separator is the file's header comment; every part
// after it is a case.
std::vector<GoldenCase> read_cases(const std::string& file) {
  std::ifstream in(std::string(KILN_TEST_DATA) + "/" + file + ".kir");
  std::vector<GoldenCase> cases;
  if (!in) return cases;
  std::vector<std::vector<std::string>> chunks(1);
  for (std::string line; std::getline(in, line);) {
    if (line == "// -----") {
      chunks.emplace_back();
    } else {
      chunks.back().push_back(line);
    }
  }
  for (size_t c = 1; c < chunks.size(); ++c) {
    const std::vector<std::string>& lines = chunks[c];
    GoldenCase g;
    g.file = file;
    size_t expect = lines.size();
    for (size_t i = 0; i < lines.size(); ++i) {
      const std::string& l = lines[i];
      if (l.rfind("// CHECK-NAME:", 0) == 0) {
        std::string rest = l.substr(14);
        size_t b = rest.find_first_not_of(' ');
        g.name = b == std::string::npos ? "" : rest.substr(b);
      } else if (l == "// EXPECT:") {
        expect = i;
        break;
      }
    }
    if (g.name.empty()) g.problem = "case " + std::to_string(c) + " of " + file + ".kir has no // CHECK-NAME: line";
    if (expect == lines.size()) g.problem = "case '" + g.name + "' has no // EXPECT: line";
    g.input = trim_blank_lines(lines, 0, expect);
    if (expect < lines.size()) g.expected = trim_blank_lines(lines, expect + 1, lines.size());
    if (g.problem.empty() && g.expected.empty()) g.problem = "case '" + g.name + "' has nothing after // EXPECT:";
    cases.push_back(std::move(g));
  }
  return cases;
}

std::vector<GoldenCase> all_cases() {
  std::vector<GoldenCase> all;
  for (const char* file : {"promote_vars", "place_products", "pipeline_loops", "assign_layouts", "lower_tiles",
                           "vectorize", "checked_io", "fold", "cse", "dce", "pipeline"}) {
    for (GoldenCase& g : read_cases(file)) all.push_back(std::move(g));
  }
  return all;
}

// Runs the file's pass; the result is whether the pass says it changed the kernel (the pipeline
// says nothing, so it reports true).
bool run_pass(const std::string& file, ir::Kernel& k) {
  if (file == "pipeline") {
    passes::PipelineOptions options;
    options.verify_each = true;
    passes::run_pipeline(k, options);
    return true;
  }
  for (const passes::Pass& p : passes::default_pipeline()) {
    if (p.name == file) return p.run(k);
  }
  throw Error("test.no_pass", "no pass is named " + file);
}

// gtest prints a parameter on failure; the case's name says more than its bytes.
void PrintTo(const GoldenCase& g, std::ostream* os) { *os << g.file << ".kir, case '" << g.name << "'"; }

class Golden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(Golden, PassGivesExpectedText) {
  const GoldenCase& g = GetParam();
  ASSERT_TRUE(g.problem.empty()) << g.problem;
  SCOPED_TRACE(g.file + ".kir, case '" + g.name + "'");

  ir::Kernel k = ir::parse(g.input);
  ASSERT_NO_THROW(ir::verify(k, "input")) << "the case's input is not valid IR";
  std::string before = ir::print(k);
  bool changed = run_pass(g.file, k);
  std::string actual = ir::print(k);
  EXPECT_EQ(actual, g.expected) << "case '" << g.name << "' (" << g.file << ".kir)\n--- expected:\n"
                                << g.expected << "--- actual:\n"
                                << actual;
  EXPECT_NO_THROW(ir::verify(k, "after " + g.file)) << "the output of case '" << g.name << "' does not verify";
  if (g.file != "pipeline") {
    EXPECT_EQ(changed, actual != before) << g.file << " must return whether it changed the kernel";
  }

  // The expected text is in the one text form: it parses and prints back unchanged.
  ir::Kernel reparsed = ir::parse(g.expected);
  EXPECT_EQ(ir::print(reparsed), g.expected) << "print(parse(expected)) differs from expected";

  // A second run finds nothing left to do.
  bool again = run_pass(g.file, k);
  EXPECT_EQ(ir::print(k), actual) << "a second run of " << g.file << " changed the kernel again";
  if (g.file != "pipeline") {
    EXPECT_FALSE(again) << "a second run of " << g.file << " reports a change";
  }
}

std::string case_name(const ::testing::TestParamInfo<GoldenCase>& info) {
  std::string n = info.param.file + "_" + info.param.name;
  for (char& c : n) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return n + "_" + std::to_string(info.index);
}

INSTANTIATE_TEST_SUITE_P(Files, Golden, ::testing::ValuesIn(all_cases()), case_name);

// A file that fails to split (a mistyped separator, a missing file) must not pass with fewer cases.
TEST(GoldenFiles, EachFileHasItsCases) {
  EXPECT_EQ(read_cases("promote_vars").size(), 9u);
  EXPECT_EQ(read_cases("place_products").size(), 3u);
  EXPECT_EQ(read_cases("pipeline_loops").size(), 3u);
  EXPECT_EQ(read_cases("assign_layouts").size(), 4u);
  EXPECT_EQ(read_cases("lower_tiles").size(), 1u);
  EXPECT_EQ(read_cases("vectorize").size(), 16u);
  EXPECT_EQ(read_cases("checked_io").size(), 10u);
  EXPECT_EQ(read_cases("fold").size(), 17u);
  EXPECT_EQ(read_cases("cse").size(), 9u);
  EXPECT_EQ(read_cases("dce").size(), 11u);
  EXPECT_EQ(read_cases("pipeline").size(), 5u);
}

TEST(GoldenFiles, CaseNamesAreUniqueWithinAFile) {
  std::vector<GoldenCase> all = all_cases();
  for (size_t i = 0; i < all.size(); ++i) {
    for (size_t j = i + 1; j < all.size(); ++j) {
      EXPECT_FALSE(all[i].file == all[j].file && all[i].name == all[j].name)
          << all[i].file << ".kir has two cases named '" << all[i].name << "'";
    }
  }
}

}  // namespace
}  // namespace kiln
