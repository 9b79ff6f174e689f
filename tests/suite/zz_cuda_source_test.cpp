// Every kernel the suite launched on the CPU, compiled for CUDA: re-traced from the CPU device's
// cache, passed, emitted as CUDA C++ and compiled with NVRTC for sm_90a. Without a GPU this is how
// CI checks the CUDA code generation of the whole suite. Skips, saying so, when NVRTC is missing.
// (The file name sorts last so that its test runs after the suite in a whole-binary run; under
// ctest it runs the CPU cases itself first.)
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

#include "backends/cuda/emit.h"
#include "backends/cuda/nvrtc.h"
#include "kiln/kiln.h"
#include "kiln/passes/passes.h"
#include "runtime/device_state.h"
#include "suite.h"

namespace kiln::suite {
namespace {

TEST(SuiteCudaSource, EveryKernelTheSuiteLaunchesCompilesWithNvrtc) {
  if (!cuda::nvrtc_available()) {
    std::string tried;
    for (const std::string& c : cuda::nvrtc_candidates()) tried += " " + c;
    GTEST_SKIP() << "skipped: NVRTC was not found (tried:" << tried << "), so CUDA sources were not compiled";
  }
  // Run every case on the CPU (ctest runs each test in its own process), filling the cache.
  Client cpu = Device::cpu().client();
  for (const Case& c : cases()) {
    if (c.skipped_on("cpu")) continue;
    std::mt19937_64 rng(7);
    c.run(cpu, rng);
  }
  auto kernels = Device::cpu().state()->cache.kernels();
  ASSERT_GE(kernels.size(), 45u);
  std::set<std::string> names, failures;
  std::atomic<size_t> compiled{0}, next{0};
  std::mutex m;
  auto options = cuda::default_compile_options("sm_90a");
  for (const auto& [id, define] : kernels) names.insert(std::string(id.name));
  // NVRTC compiles different programs concurrently: one worker per hardware thread.
  auto work = [&] {
    for (size_t i = next++; i < kernels.size(); i = next++) {
      const auto& [id, define] = kernels[i];
      try {
        ir::Kernel k = define(id);
        passes::PipelineOptions pipeline;
        pipeline.target = ir::Target::cuda(90, true);
        pipeline.verify_each = true;  // every pass gives valid IR for every kernel of the suite
        passes::run_pipeline(k, pipeline);
        cuda::EmitResult e = cuda::emit_cuda(k);
        std::vector<std::string> kernel_options = options;  // and what the source asks for (fast math)
        kernel_options.insert(kernel_options.end(), e.options.begin(), e.options.end());
        (void)cuda::compile(e.source, e.entry, kernel_options);
        ++compiled;
      } catch (const Error& err) {
        std::lock_guard lock(m);
        failures.insert(id.to_string() + ": " + err.what());
      }
    }
  };
  std::vector<std::thread> workers;
  for (unsigned t = 1; t < std::max(1u, std::thread::hardware_concurrency()); ++t) workers.emplace_back(work);
  work();
  for (auto& w : workers) w.join();
  for (const std::string& f : failures) ADD_FAILURE() << f;
  std::printf("[ cuda     ] %zu suite kernels (%zu distinct names) compiled with NVRTC for sm_90a\n", compiled.load(),
              names.size());
  EXPECT_EQ(compiled.load(), kernels.size());
}

}  // namespace
}  // namespace kiln::suite
