// The CUDA runtime on a GPU: bad input that only a real device can judge (shared memory over its
// limit, an allocation larger than the device), the device facts, and that reads wait for the
// work that writes them. Each test skips, saying so, when there is no CUDA device.
#include <gtest/gtest.h>

#include "kiln/kiln.h"
#include "runtime/cuda_devices.h"

using namespace kiln;

namespace {

#define KILN_REQUIRE_GPU()                                                                    \
  if (runtime::cuda_device_count() == 0) {                                                    \
    GTEST_SKIP() << "skipped: no CUDA device (" << runtime::cuda_unavailable_reason() << ")"; \
  }

struct BigShared {
  static constexpr std::string_view name = "big_shared";
  void operator()(Slice<float> out, Comptime<int> floats) const {
    SharedArray<float> s(floats);
    s[unit_pos()] = 1.0f;
    sync_cube();
    out[unit_pos()] = s[(unit_pos() + 1u) % 32u];
  }
};

TEST(CudaRuntime, DeviceFacts) {
  KILN_REQUIRE_GPU();
  Device d = Device::cuda(0);
  EXPECT_EQ(d.name(), "cuda:0");
  EXPECT_GT(d.info().memory_bytes, uint64_t(1) << 30);
  EXPECT_GT(d.info().multiprocessors, 0);
  EXPECT_EQ(d.info().plane_dim, 32u);
  EXPECT_EQ(d.info().architecture.rfind("sm_", 0), 0u);
  EXPECT_EQ(Device::default_device().name(), std::getenv("KILN_DEVICE") ? std::getenv("KILN_DEVICE") : "cuda:0");
}

TEST(CudaRuntime, SharedMemoryOverTheLimitIsBadDims) {
  KILN_REQUIRE_GPU();
  Client c = Device::cuda(0).client();
  Handle out = c.upload(std::vector<float>(32, -1.0f));
  // 64 KiB works (through the dynamic shared memory attribute)...
  launch<BigShared>(c, CubeCount{1}, CubeDim{32}, 1, out, comptime(16 * 1024));
  EXPECT_EQ(c.read<float>(out), std::vector<float>(32, 1.0f));
  // ...one float more than the device allows per cube does not.
  int over = int(c.device().info().max_shared_bytes / 4) + 1;
  c.write(out, std::vector<float>(32, -1.0f));
  try {
    launch<BigShared>(c, CubeCount{1}, CubeDim{32}, 1, out, comptime(over));
    FAIL() << "expected launch.bad_dims";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "launch.bad_dims");
    EXPECT_NE(e.message().find("bytes of shared memory per cube"), std::string::npos) << e.message();
  }
  EXPECT_EQ(c.read<float>(out), std::vector<float>(32, -1.0f));
}

TEST(CudaRuntime, AllocationLargerThanTheDeviceThenTheClientStillWorks) {
  KILN_REQUIRE_GPU();
  Client c = Device::cuda(0).client();
  Handle keep = c.upload(std::vector<float>{1, 2, 3, 4});
  size_t too_big = size_t(c.device().info().memory_bytes) * 2;
  try {
    (void)c.empty_bytes(too_big);
    FAIL() << "expected memory.out_of_memory";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "memory.out_of_memory");
    EXPECT_NE(e.message().find("could not allocate " + std::to_string(too_big) + " bytes"), std::string::npos)
        << e.message();
  }
  EXPECT_EQ(c.read<float>(keep), (std::vector<float>{1, 2, 3, 4}));
  Handle more = c.upload(std::vector<float>(1 << 20, 2.0f));
  EXPECT_EQ(c.read<float>(more)[12345], 2.0f);
}

struct Inc {
  static constexpr std::string_view name = "inc";
  void operator()(Slice<uint32_t> x) const {
    If(absolute_pos() < x.len(), [&] { x[absolute_pos()] = x[absolute_pos()] + 1u; });
  }
};

TEST(CudaRuntime, ReadsWaitForQueuedLaunchesAndLargeTransfersRoundTrip) {
  KILN_REQUIRE_GPU();
  Client c = Device::cuda(0).client();
  const size_t n = size_t(48) << 20;  // 192 MiB: staged through pinned buffers both ways
  std::vector<uint32_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = uint32_t(i * 2654435761u);
  Handle h = c.upload(v);
  for (int i = 0; i < 10; ++i) launch<Inc>(c, CubeCount{uint32_t(n / 256)}, CubeDim{256}, 1, h);
  std::vector<uint32_t> got = c.read<uint32_t>(h);  // no sync before: the read must wait
  ASSERT_EQ(got.size(), n);
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) bad += got[i] != v[i] + 10u;
  EXPECT_EQ(bad, 0u);
}

TEST(CudaRuntime, EachClientHasItsOwnStream) {
  KILN_REQUIRE_GPU();
  Client a = Device::cuda(0).client(), b = Device::cuda(0).client();
  Handle ha = a.upload(std::vector<uint32_t>(1 << 20, 1)), hb = b.upload(std::vector<uint32_t>(1 << 20, 5));
  launch<Inc>(a, CubeCount{4096}, CubeDim{256}, 1, ha);
  launch<Inc>(b, CubeCount{4096}, CubeDim{256}, 1, hb);
  EXPECT_EQ(a.read<uint32_t>(ha)[77], 2u);
  EXPECT_EQ(b.read<uint32_t>(hb)[77], 6u);
}

}  // namespace
