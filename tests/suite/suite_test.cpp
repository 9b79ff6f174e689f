// Runs the kernel suite: every registered case on every device kiln::Device::all() reports, as
// GoogleTest value-parameterized tests named Suite/KernelSuite.Run/<case>_<device>; and checks the
// registry itself (how many kernels, and that every case runs on the CPU with no silent skips).
#include "suite.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <stdexcept>

namespace kiln::suite {

namespace {

std::vector<Case>& mutable_cases() {
  static std::vector<Case> all;
  return all;
}

bool sorted_once = false;

const std::vector<Device>& devices() {
  static const std::vector<Device> all = Device::all();
  return all;
}

std::string device_label(const Device& d) {
  std::string s;
  for (char c : d.name()) {
    if (std::isalnum(static_cast<unsigned char>(c))) s += c;
  }
  return s;
}

}  // namespace

void add_case(std::string name, std::vector<std::string> kernels, RunFn run, std::string bug, std::string bug_on) {
  if (sorted_once) throw std::logic_error("kiln suite: add_case after the registry was read: " + name);
  mutable_cases().push_back(
      Case{std::move(name), std::move(kernels), std::move(run), std::move(bug), std::move(bug_on), {}});
}

void add_case_on(std::string runtime, std::string name, std::vector<std::string> kernels, RunFn run) {
  if (runtime != "cpu" && runtime != "cuda") throw std::logic_error("kiln suite: no runtime '" + runtime + "'");
  add_case(std::move(name), std::move(kernels), std::move(run));
  mutable_cases().back().only_on = std::move(runtime);
}

std::string runtime_of(const Device& d) { return d.kind() == DeviceKind::Cpu ? "cpu" : "cuda"; }

bool run_bugs() {
  static const bool on = [] {
    const char* v = std::getenv("KILN_SUITE_RUN_BUGS");
    return v && std::string(v) == "1";
  }();
  return on;
}

const std::vector<Case>& cases() {
  if (!sorted_once) {
    auto& all = mutable_cases();
    std::sort(all.begin(), all.end(), [](const Case& a, const Case& b) { return a.name < b.name; });
    for (size_t i = 0; i < all.size(); ++i) {
      for (char c : all[i].name) {
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') {
          throw std::logic_error("kiln suite: case name '" + all[i].name + "' has a character other than [A-Za-z0-9_]");
        }
      }
      if (i > 0 && all[i].name == all[i - 1].name) {
        throw std::logic_error("kiln suite: two cases are named '" + all[i].name + "'");
      }
    }
    sorted_once = true;
  }
  return mutable_cases();
}

uint64_t seed_base() {
  static const uint64_t base = [] {
    if (const char* s = std::getenv("KILN_SUITE_SEED"); s && *s) return uint64_t(std::strtoull(s, nullptr, 0));
    return uint64_t(0x6b696c6e00000000ull);  // "kiln"
  }();
  return base;
}

std::string case_name(std::initializer_list<std::string_view> parts) {
  std::string s;
  for (std::string_view p : parts) {
    if (p.empty()) continue;
    if (!s.empty()) s += '_';
    s += p;
  }
  return s;
}

CaseResult run_case(size_t index, const Device& device) {
  const Case& c = cases()[index];
  if (c.skipped_on(runtime_of(device)) && !run_bugs()) return {Outcome::SkippedBug, 0};
  uint64_t seed = seed_of(index);
  char seed_text[160];
  std::snprintf(seed_text, sizeof seed_text, "case %s on %s, seed 0x%llx (rerun with KILN_SUITE_SEED=0x%llx)",
                c.name.c_str(), device.name().c_str(), static_cast<unsigned long long>(seed),
                static_cast<unsigned long long>(seed_base()));
  SCOPED_TRACE(seed_text);
  int failures_before = ::testing::UnitTest::GetInstance()->current_test_info()->result()->total_part_count();
  std::mt19937_64 rng(seed);
  uint64_t checks_before = comparison_count();
  Client client = device.client();
  try {
    c.run(client, rng);
    client.sync();
  } catch (const kiln::Error& e) {
    ADD_FAILURE() << "kiln::Error escaped the case: " << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "exception escaped the case: " << e.what();
  }
  // On every device a case runs on, it must have compared something: a case that returns early
  // (on a device it does not mean anything on) is registered with add_case_on instead.
  CaseResult result;
  result.comparisons = comparison_count() - checks_before;
  if (result.comparisons == 0) ADD_FAILURE() << "case " << c.name << " compared nothing on " << device.name();
  const ::testing::TestResult* r = ::testing::UnitTest::GetInstance()->current_test_info()->result();
  bool failed = false;
  for (int i = failures_before; i < r->total_part_count(); ++i) {
    if (r->GetTestPartResult(i).failed()) failed = true;
  }
  result.outcome = failed ? Outcome::Failed : Outcome::Passed;
  return result;
}

namespace {

class KernelSuite : public ::testing::TestWithParam<std::tuple<size_t, size_t>> {};

TEST_P(KernelSuite, Run) {
  auto [index, device] = GetParam();
  const Case& c = cases()[index];
  if (c.skipped_on(runtime_of(devices()[device])) && !run_bugs()) GTEST_SKIP() << "BUG: " << c.bug;
  run_case(index, devices()[device]);
  EXPECT_FALSE(IsSkipped()) << "case " << c.name << " skipped itself without a documented BUG";
}

// Every (case, device) pair the case runs on.
std::vector<std::tuple<size_t, size_t>> instances() {
  std::vector<std::tuple<size_t, size_t>> v;
  for (size_t i = 0; i < cases().size(); ++i) {
    for (size_t d = 0; d < devices().size(); ++d) {
      if (cases()[i].runs_on(runtime_of(devices()[d]))) v.emplace_back(i, d);
    }
  }
  return v;
}

// "saxpy_f32_v4_n1000_cpu"
std::string test_name(const ::testing::TestParamInfo<KernelSuite::ParamType>& info) {
  return cases()[std::get<0>(info.param)].name + "_" + device_label(devices()[std::get<1>(info.param)]);
}

INSTANTIATE_TEST_SUITE_P(Suite, KernelSuite, ::testing::ValuesIn(instances()), test_name);

TEST(SuiteInventory, HasAtLeast45Kernels) {
  // Kernels of BUG cases that are not built (a compile error) do not count.
  std::set<std::string> names;
  for (const Case& c : cases()) {
    EXPECT_FALSE(c.kernels.empty()) << "case " << c.name << " names no kernel";
    if (c.bug.empty() || !c.bug_on.empty()) names.insert(c.kernels.begin(), c.kernels.end());
  }
  EXPECT_GE(names.size(), 45u) << "distinct kernels in the suite";
  std::printf("kernel suite: %zu cases over %zu distinct kernels\n", cases().size(), names.size());
}

TEST(SuiteInventory, CpuIsAmongTheDevicesAndEveryCaseIsInstantiatedOnIt) {
  ASSERT_FALSE(devices().empty());
  EXPECT_EQ(devices()[0].kind(), DeviceKind::Cpu);
  std::set<std::string> instantiated;
  const ::testing::UnitTest& ut = *::testing::UnitTest::GetInstance();
  for (int s = 0; s < ut.total_test_suite_count(); ++s) {
    const ::testing::TestSuite& suite = *ut.GetTestSuite(s);
    if (std::string(suite.name()) != "Suite/KernelSuite") continue;
    for (int t = 0; t < suite.total_test_count(); ++t) instantiated.insert(suite.GetTestInfo(t)->name());
  }
  for (const Case& c : cases()) {
    if (!c.runs_on("cpu")) continue;
    EXPECT_TRUE(instantiated.count("Run/" + c.name + "_cpu")) << "no CPU test for case " << c.name;
  }
}

// Runs every case on the CPU in this process (ctest runs each test in its own process, so the
// suite's own results are not visible here): each must pass having compared something, or be
// skipped for a documented BUG; cases for another runtime only are not run.
TEST(SuiteInventory, EveryCaseRanOnCpu) {
  std::vector<std::string> failed, silent, bugs;
  size_t passed = 0, elsewhere = 0;
  uint64_t comparisons = 0;
  for (size_t i = 0; i < cases().size(); ++i) {
    const Case& c = cases()[i];
    if (!c.runs_on("cpu")) {
      ++elsewhere;
      continue;
    }
    CaseResult r = run_case(i, Device::cpu());
    comparisons += r.comparisons;
    switch (r.outcome) {
      case Outcome::Passed: ++passed; break;
      case Outcome::Failed: failed.push_back(c.name); break;
      case Outcome::SkippedBug: bugs.push_back(c.name + ": " + c.bug); break;
    }
    if (r.outcome != Outcome::SkippedBug && r.comparisons == 0) silent.push_back(c.name);
  }
  EXPECT_FALSE(IsSkipped());
  std::string f, s;
  for (const auto& n : failed) f += "\n  " + n;
  for (const auto& n : silent) s += "\n  " + n;
  EXPECT_TRUE(failed.empty()) << failed.size() << " cases failed on the CPU:" << f;
  EXPECT_TRUE(silent.empty()) << silent.size() << " cases compared nothing on the CPU:" << s;
  // A documented BUG is the exception: more than a handful means the suite has stopped testing.
  EXPECT_LE(bugs.size(), 10u) << "cases skipped for a documented BUG";
  std::printf(
      "kernel suite on the CPU: %zu passed (%llu comparisons), %zu failed, %zu skipped for a documented "
      "BUG, %zu for another runtime only\n",
      passed, static_cast<unsigned long long>(comparisons), failed.size(), bugs.size(), elsewhere);
  for (const auto& b : bugs) std::printf("  BUG %s\n", b.c_str());
}

}  // namespace

}  // namespace kiln::suite
