// The CUDA backend around the driver, on machines without a GPU: these tests run against the
// stand-in driver (tests/support/fake_cuda_driver.cpp, first on LD_LIBRARY_PATH), which backs
// device memory with host memory, runs no kernels, and fails any entry point a test asks it to.
// Each failure must be a kiln::Error of a stable kind that names the call, and must leave every
// buffer as it was. ctest runs each test in its own process (a lost device stays lost).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/cuda/nvrtc.h"
#include "kiln/kiln.h"
#include "support/expect_error.h"

using namespace kiln;

namespace {

// The stand-in's own entry point `symbol` (libcuda.so.1 as kiln loaded it).
template <class F>
F fake_entry(const char* symbol) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!lib) throw std::runtime_error("libcuda.so.1 is not loaded");
  auto fn = reinterpret_cast<F>(dlsym(lib, symbol));
  dlclose(lib);  // kiln holds its own reference
  if (!fn) throw std::runtime_error("the loaded libcuda.so.1 is not kiln's stand-in: run these tests through ctest");
  return fn;
}

// From now on `call` returns `result` (0 clears it).
void fail_call(const char* call, int result) {
  fake_entry<uint64_t (*)(const char*, int)>("kiln_fake_cuda_fail")(call, result);
}

// Kernels the stand-in accepted with cuLaunchKernel.
uint64_t launches() { return fake_entry<uint64_t (*)()>("kiln_fake_cuda_launches")(); }

// The parameter buffer of the last launch the stand-in accepted.
std::vector<unsigned char> last_params() {
  std::vector<unsigned char> p(4096);
  p.resize(fake_entry<size_t (*)(void*, size_t)>("kiln_fake_cuda_last_params")(p.data(), p.size()));
  return p;
}

// A loop promised a trip: checked, the kernel checks it and reports through the error word.
struct Promised {
  static constexpr std::string_view name = "fake_promised";
  static constexpr std::array<std::string_view, 2> param_names{"y", "n"};
  void operator()(Slice<float> y, Scalar<uint32_t> n) const {
    For(range(0u, n).at_least_once(), [&](Expr<uint32_t> i) { y[i] = 1.0f; });
  }
};

struct AddOne {
  static constexpr std::string_view name = "fake_add_one";
  static constexpr std::array<std::string_view, 1> param_names{"y"};
  void operator()(Slice<float> y) const {
    If(absolute_pos() < y.len(), [&] { y[absolute_pos()] += 1.0f; });
  }
};

using test::expect_error;

class FakeCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<Device> all = Device::all();
    ASSERT_EQ(all.size(), 2u) << "the stand-in driver reports one GPU";
    ASSERT_NE(all[1].info().name.find("kiln fake GPU"), std::string::npos) << all[1].info().name;
    // Its info names the target its kernels compile for: the stand-in GPU's architecture.
    ASSERT_EQ(ir::to_string(all[1].info().target), all[1].info().architecture);
  }
  void need_nvrtc() {
    if (!cuda::nvrtc_available()) GTEST_SKIP() << "NVRTC is not installed: nothing to compile with";
  }
  Client client = Device::cuda(0).client();
};

TEST_F(FakeCuda, LargeTransfersRoundTripThroughTheStagingBuffers) {
  // Over 1 MiB goes through the two pinned staging buffers, chunk by chunk; 40 MiB is three chunks
  // of 16 MiB, the last one partial.
  std::vector<float> data(10 * 1024 * 1024 + 3);
  for (size_t i = 0; i < data.size(); ++i) data[i] = float(i % 9973) * 0.5f;
  Handle h = client.upload(data);
  EXPECT_EQ(client.read<float>(h), data);
  std::vector<float> other(data.size(), -1.0f);
  client.write(h, other);
  EXPECT_EQ(client.read<float>(h), other);
}

TEST_F(FakeCuda, ModuleLoadFailureIsCompileLoad) {
  need_nvrtc();
  std::vector<float> before(64, 2.5f);
  Handle y = client.upload(before);
  fail_call("cuModuleLoadData", 200);  // CUDA_ERROR_INVALID_IMAGE
  Error e = expect_error([&] { launch<AddOne>(client, CubeCount{1}, CubeDim{64}, 1, y); }, "compile.load");
  EXPECT_NE(e.message().find("cuModuleLoadData failed: CUDA_ERROR_INVALID_IMAGE"), std::string::npos) << e.message();
  EXPECT_EQ(client.read<float>(y), before);
  // A failed compile is not cached: once the driver takes the module, the launch runs.
  fail_call("cuModuleLoadData", 0);
  launch<AddOne>(client, CubeCount{1}, CubeDim{64}, 1, y);
  client.sync();
  EXPECT_EQ(client.stats().compilations, 1u);
}

// The runtime's part of loop.zero_trips on a GPU (docs/decisions/027): a kernel with a check gets
// the client's error word and its site after its own parameters, and the site's report, written
// where a kernel would write it (the stand-in runs no kernel), is raised by the next sync, once.
TEST_F(FakeCuda, ACheckedPromiseGetsTheErrorWordAndItsReportIsRaisedAtTheNextSync) {
  need_nvrtc();
  Handle y = client.upload(std::vector<float>(8, 0.0f));
  launch<AddOne>(client, CubeCount{1}, CubeDim{8}, 1, y);
  EXPECT_EQ(last_params().size(), 12u) << "a kernel without a check: y and its length only";
  launch_unchecked<Promised>(client, CubeCount{1}, CubeDim{8}, 1, y, 0u);
  EXPECT_EQ(last_params().size(), 16u) << "unchecked, the promise is not checked: y, its length and n";
  launch<Promised>(client, CubeCount{1}, CubeDim{8}, 1, y, 0u);
  std::vector<unsigned char> p = last_params();
  ASSERT_EQ(p.size(), 28u) << "y, its length, n, then the word's address (at 16, aligned) and the site";
  uint64_t word = 0;
  uint32_t site = 0;
  std::memcpy(&word, p.data() + 16, 8);
  std::memcpy(&site, p.data() + 24, 4);
  EXPECT_EQ(word, client.device_error_word().address());
  EXPECT_NE(site, 0u);
  client.write(client.device_error_word(), std::vector<uint32_t>{site, 1, 0, 0, 0, 0, 0, 5});
  Error e = expect_error([&] { client.sync(); }, "loop.zero_trips");
  EXPECT_EQ(
      e.message(),
      "kernel 'fake_promised' (checked): the at_least_once loop #1 of the kernel starts with lo = 0 and hi = 0 in "
      "unit 5 of cube 0 (linear), which give it zero trips; at_least_once promises lo < hi (drop the promise where "
      "the range may be empty)");
  client.sync();  // reported once: the word was cleared
  std::vector<uint32_t> cleared = client.read<uint32_t>(client.device_error_word());
  EXPECT_EQ(cleared, std::vector<uint32_t>(8, 0u));
}

TEST_F(FakeCuda, LaunchFailureIsLaunchCudaAndTheClientGoesOn) {
  need_nvrtc();
  std::vector<float> before(64, 2.5f);
  Handle y = client.upload(before);
  uint64_t start = launches();
  launch<AddOne>(client, CubeCount{1}, CubeDim{64}, 1, y);  // compiled and launched once
  EXPECT_EQ(launches(), start + 1);
  fail_call("cuLaunchKernel", 701);  // CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
  Error e = expect_error([&] { launch<AddOne>(client, CubeCount{1}, CubeDim{64}, 1, y); }, "launch.cuda");
  EXPECT_NE(e.message().find("cuLaunchKernel of fake_add_one_f32_v1_"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"), std::string::npos) << e.message();
  fail_call("cuLaunchKernel", 0);
  launch<AddOne>(client, CubeCount{1}, CubeDim{64}, 1, y);
  client.sync();
  EXPECT_EQ(launches(), start + 2) << "the refused launch reached the driver once, the next one ran";
  EXPECT_EQ(client.stats().compilations, 1u) << "a refused launch does not recompile";
}

TEST_F(FakeCuda, DriverFailuresAreCudaDriverAndNameTheCall) {
  fail_call("cuStreamCreate", 1);  // CUDA_ERROR_INVALID_VALUE
  Error e = expect_error([&] { (void)Device::cuda(0).client(); }, "cuda.driver");
  EXPECT_NE(e.message().find("cuStreamCreate failed: CUDA_ERROR_INVALID_VALUE"), std::string::npos) << e.message();
  fail_call("cuStreamCreate", 0);
  std::vector<float> before(64, 1.25f);
  Handle h = client.upload(before);
  fail_call("cuMemcpyHtoDAsync", 1);
  expect_error([&] { client.write(h, std::vector<float>(64, 9.0f)); }, "cuda.driver");
  fail_call("cuMemcpyHtoDAsync", 0);
  EXPECT_EQ(client.read<float>(h), before);
}

TEST_F(FakeCuda, OutOfDeviceMemoryIsAnErrorAndTheClientGoesOn) {
  fail_call("cuMemAlloc", 2);  // CUDA_ERROR_OUT_OF_MEMORY
  expect_error([&] { (void)client.empty<float>(size_t(64) << 20); }, "memory.out_of_memory");
  fail_call("cuMemAlloc", 0);
  Handle h = client.upload(std::vector<float>(64, 3.0f));
  EXPECT_EQ(client.read<float>(h)[63], 3.0f);
}

// A kernel that faults loses the context: the failure is reported once, to the first caller that
// meets it, naming the kernels in flight; from then on the device refuses every operation.
TEST_F(FakeCuda, KernelFaultIsReportedOnceThenTheDeviceRefusesWork) {
  need_nvrtc();
  Client other = Device::cuda(0).client();
  Handle y = client.upload(std::vector<float>(64, 1.0f));
  Handle z = other.upload(std::vector<float>(64, 1.0f));
  launch<AddOne>(client, CubeCount{1}, CubeDim{64}, 1, y);
  fail_call("cuStreamSynchronize", 700);  // CUDA_ERROR_ILLEGAL_ADDRESS, as a faulting kernel leaves it
  Error e = expect_error([&] { client.sync(); }, "cuda.kernel_failed");
  EXPECT_NE(e.message().find("a kernel failed on cuda:0"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos) << e.message();
  EXPECT_NE(
      e.message().find("1 kernel launch since the failing client last synchronised (the last: fake_add_one_f32_v1_"),
      std::string::npos)
      << e.message();
  // Every later operation, on any client of the device, is refused with one clear kind.
  Error lost = expect_error([&] { client.sync(); }, "cuda.device_lost");
  EXPECT_NE(lost.message().find("cuda:0 is unusable since a kernel failed"), std::string::npos) << lost.message();
  EXPECT_NE(lost.message().find("(the last: fake_add_one_f32_v1_"), std::string::npos)
      << "the refusal names what failed too: " << lost.message();
  expect_error([&] { (void)client.read<float>(y); }, "cuda.device_lost");
  expect_error([&] { (void)other.upload(std::vector<float>(4, 1.0f)); }, "cuda.device_lost");
  expect_error([&] { launch<AddOne>(other, CubeCount{1}, CubeDim{64}, 1, z); }, "cuda.device_lost");
  expect_error([&] { (void)Device::cuda(0).client(); }, "cuda.device_lost");
  // Other devices are untouched.
  Client cpu = Device::cpu().client();
  Handle c = cpu.upload(std::vector<float>(64, 1.0f));
  launch<AddOne>(cpu, CubeCount{1}, CubeDim{64}, 1, c);
  EXPECT_EQ(cpu.read<float>(c)[0], 2.0f);
}

}  // namespace
