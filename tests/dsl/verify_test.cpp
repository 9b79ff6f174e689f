// Every kernel these tests trace successfully gives IR that passes ir::verify, and whose text
// round-trips through the parser: the front end never hands the passes a kernel they must reject.
// (The kernels of trace_error_test.cpp that trace are verified where they are traced.)
#include <gtest/gtest.h>

#include "dsl/traced_cases.h"
#include "kiln/error.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"

namespace kiln::test {
namespace {

// The golden cases, and the variants the KernelId tests trace.
std::vector<TracedCase> all_traced() {
  std::vector<TracedCase> all = traced_cases();
  all.push_back({"saxpy_f64_vector2", [] { return define<Saxpy<double>>(id_of<Saxpy<double>>({8, 1, 1}, 2)); }});
  all.push_back({"saxpy_f32_vector16", [] { return define<Saxpy<float>>(id_of<Saxpy<float>>({1, 1, 1}, 16)); }});
  all.push_back({"transpose_rank3", [] { return define<Transpose>(transpose_id(3)); }});
  all.push_back({"classify_unchecked_u64", [] {
                   LaunchFacts f{{64, 1, 1}, ir::ExecMode::Unchecked, ir::AddressType::U64};
                   return define<Classify>(kernel_id<Classify>(f, param_descs<Classify>()));
                 }});
  all.push_back({"add_in_place", [] {
                   std::vector<ParamDesc> d = add_descs(true);
                   d[0].memory = d[2].memory = 1;  // out shares x's memory
                   d[0].end = d[2].end = 24;
                   return define<Add>(kernel_id<Add>(LaunchFacts{{6, 1, 1}}, d));
                 }});
  return all;
}

class TracedVerifies : public ::testing::TestWithParam<TracedCase> {};

TEST_P(TracedVerifies, PassesTheVerifierAndRoundTripsAsText) {
  ir::Kernel k = GetParam().trace();
  EXPECT_NO_THROW(ir::verify(k, "traced"));
  std::string text = ir::print(k);
  ir::Kernel reparsed = ir::parse(text);
  EXPECT_NO_THROW(ir::verify(reparsed, "reparsed"));
  EXPECT_EQ(ir::print(reparsed), text);
  EXPECT_EQ(ir::op_count(reparsed), ir::op_count(k));
}

std::string case_name(const ::testing::TestParamInfo<TracedCase>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Dsl, TracedVerifies, ::testing::ValuesIn(all_traced()), case_name);

}  // namespace
}  // namespace kiln::test
