// The kernel suite's registry. A case is a name, the kernels it launches, and a run function that
// draws fresh random inputs, poisons its outputs, launches on the client it is given, reads back
// and compares with a host reference. suite_test.cpp runs every case on every device.
//
// Adding cases, in any tests/suite/*.cpp:
//
//   KILN_SUITE_CASES(saxpy) {
//     for (int w : {1, 2, 4, 8}) {
//       add_case(case_name("saxpy", "f32", "v" + std::to_string(w), "n1000"), kernels<Saxpy<float>>(),
//                [w](Client& client, std::mt19937_64& rng) { ... });
//     }
//   }
#pragma once

#include <functional>
#include <initializer_list>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/kiln.h"
#include "suite_check.h"

namespace kiln::suite {

using RunFn = std::function<void(Client&, std::mt19937_64&)>;

struct Case {
  std::string name;                  // unique; letters, digits and '_' (it ends up in the test name)
  std::vector<std::string> kernels;  // the K::name of every kernel the case launches
  RunFn run;
  std::string bug;      // non-empty: a known kiln bug (see the // BUG: comment at the case); skipped
  std::string bug_on;   // the runtime ("cpu", "cuda") the bug shows on; empty: every device
  std::string only_on;  // non-empty: the one runtime the case means something on (add_case_on)
  // Whether the bug skips this case on a device of runtime `runtime`.
  bool skipped_on(std::string_view runtime) const { return !bug.empty() && (bug_on.empty() || bug_on == runtime); }
  // Whether the case runs on a device of runtime `runtime` at all.
  bool runs_on(std::string_view runtime) const { return only_on.empty() || only_on == runtime; }
};

// Registers a case (called from KILN_SUITE_CASES blocks while the program starts). A case with a
// `bug` is skipped (on runtime `bug_on` only, when given) unless KILN_SUITE_RUN_BUGS=1.
void add_case(std::string name, std::vector<std::string> kernels, RunFn run, std::string bug = {},
              std::string bug_on = {});
// Registers a case that means something on one runtime only ("cpu": the CPU backend's own error
// reports, which a GPU does not make); it is not instantiated on other devices. Every case that
// runs on a device must compare something there.
void add_case_on(std::string runtime, std::string name, std::vector<std::string> kernels, RunFn run);

// Every case, sorted by name (so a case's index, hence its seed, does not depend on link order).
// The first call checks that names are unique and well formed.
const std::vector<Case>& cases();

// The seed of case `index`: a fixed base (KILN_SUITE_SEED overrides it) plus the index.
uint64_t seed_base();
inline uint64_t seed_of(size_t index) { return seed_base() + index; }

// "saxpy_f32_v4_n1000"
std::string case_name(std::initializer_list<std::string_view> parts);

template <class... K>
std::vector<std::string> kernels() {
  return {std::string(K::name)...};
}

// The outcome of running one case on one device, outside GoogleTest's own bookkeeping.
enum class Outcome { Passed, Failed, SkippedBug };
struct CaseResult {
  Outcome outcome = Outcome::Failed;
  uint64_t comparisons = 0;  // values the case compared with its reference (0 is a failure)
};
// Runs case `index` on `device` under the current test: seeds, traces the seed into failures,
// turns a kiln::Error escaping the case into a failure. A BUG case is not run there (unless
// KILN_SUITE_RUN_BUGS=1).
bool run_bugs();
// "cpu" or "cuda", as Client::runtime_name() says, without making a client.
std::string runtime_of(const Device& d);
CaseResult run_case(size_t index, const Device& device);

}  // namespace kiln::suite

#define KILN_SUITE_CONCAT_(a, b) a##b
#define KILN_SUITE_CONCAT(a, b) KILN_SUITE_CONCAT_(a, b)
// Opens a function body that registers cases when the program starts.
#define KILN_SUITE_CASES(group)                                                         \
  static void KILN_SUITE_CONCAT(kiln_suite_register_, group)();                         \
  [[maybe_unused]] static const bool KILN_SUITE_CONCAT(kiln_suite_registered_, group) = \
      (KILN_SUITE_CONCAT(kiln_suite_register_, group)(), true);                         \
  static void KILN_SUITE_CONCAT(kiln_suite_register_, group)()
