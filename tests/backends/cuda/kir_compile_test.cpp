// Every kernel of kernels.kir (IR text after the pass pipeline) is parsed, verified, emitted as
// CUDA C++ and compiled by NVRTC for sm_90a. The count of compiled kernels is printed at the end.
#include <gtest/gtest.h>

#include "cuda_test_util.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"

namespace kiln::cuda::testing {
namespace {

const std::vector<std::string>& kir_cases() {
  static const std::vector<std::string> cases = split_cases(read_text(std::string(KILN_TEST_DATA) + "/kernels.kir"));
  return cases;
}

class CountReport : public ::testing::Environment {
 public:
  void TearDown() override {
    std::cout << "[ cuda     ] " << compiled_count().load() << " kernels compiled with NVRTC for " << kArch
              << (nvrtc_available() ? "" : " (NVRTC not found: compilation skipped)") << "\n";
  }
};
[[maybe_unused]] ::testing::Environment* const kReport = ::testing::AddGlobalTestEnvironment(new CountReport);

class KirCase : public ::testing::TestWithParam<size_t> {};

TEST_P(KirCase, EmitsAndCompiles) {
  const std::string& text = kir_cases().at(GetParam());
  ir::Kernel k = ir::parse(text);
  ir::verify(k, "test input");
  EmitResult r = emit_cuda(k);
  EXPECT_NE(r.source.find(r.entry), std::string::npos);
  KILN_REQUIRE_NVRTC();
  expect_compiles(r);
}

INSTANTIATE_TEST_SUITE_P(Kir, KirCase, ::testing::Range<size_t>(0, kir_cases().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return kernel_name(kir_cases()[info.param]);
                         });

TEST(KirFile, HasTheCasesItClaims) {
  // A split that lost cases would silently test less.
  EXPECT_GE(kir_cases().size(), 17u);
}

}  // namespace
}  // namespace kiln::cuda::testing
