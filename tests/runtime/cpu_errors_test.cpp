// Errors the CPU backend finds while a kernel runs: out-of-range accesses in unchecked mode,
// division by zero, barriers under divergent control flow. Each names the kernel, op, unit and
// numbers involved, and a failed launch leaves every buffer as it was (also when many cubes ran
// and wrote before the failing one).
#include <gtest/gtest.h>

#include "kiln/kiln.h"

using namespace kiln;

namespace {

struct Copy {
  static constexpr std::string_view name = "copy";
  static constexpr std::array<std::string_view, 2> param_names{"x", "out"};
  void operator()(Slice<const float> x, Slice<float> out) const { out[absolute_pos()] = x[absolute_pos()] * 2.0f; }
};

TEST(CpuErrors, UncheckedOutOfRangeRestoresEveryBuffer) {
  Client c = Device::cpu().client();
  std::vector<float> xs(1000), poison(1024, -3.0f);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = float(i);
  Handle x = c.upload(xs), out = c.upload(poison);
  // 4 cubes of 256 units: cubes 0-2 are in range and write; cube 3 reads x[1000] in unit 232.
  try {
    launch_unchecked<Copy>(c, CubeCount{4}, CubeDim{256}, 1, x, out);
    FAIL() << "expected bounds.out_of_range";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "bounds.out_of_range");
    EXPECT_EQ(e.message(),
              "kernel 'copy' (unchecked): op #2 'load' in unit 232 of cube (3, 0, 0): index 1000 is out of range of "
              "argument 0 'x' (length 1000)");
  }
  EXPECT_EQ(c.read<float>(out), poison);
  // Checked, the same launch reads zero past the end.
  launch<Copy>(c, CubeCount{4}, CubeDim{256}, 1, x, out);
  auto got = c.read<float>(out);
  EXPECT_EQ(got[999], 1998.0f);
  EXPECT_EQ(got[1000], 0.0f);
}

struct Divide {
  static constexpr std::string_view name = "divide";
  void operator()(Slice<const int32_t> a, Slice<const int32_t> b, Slice<int32_t> out) const {
    out[absolute_pos()] = a[absolute_pos()] / b[absolute_pos()];
  }
};

TEST(CpuErrors, IntegerDivisionByZero) {
  Client c = Device::cpu().client();
  Handle a = c.upload(std::vector<int32_t>{10, 20, 30, INT32_MIN});
  Handle b = c.upload(std::vector<int32_t>{2, 0, 3, -1});
  Handle out = c.upload(std::vector<int32_t>{-1, -1, -1, -1});
  try {
    launch<Divide>(c, CubeCount{1}, CubeDim{4}, 1, a, b, out);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "arith.division_by_zero");
    EXPECT_NE(e.message().find("unit 1 of cube (0, 0, 0)"), std::string::npos) << e.message();
  }
  EXPECT_EQ(c.read<int32_t>(out), (std::vector<int32_t>{-1, -1, -1, -1}));
  c.write(b, std::vector<int32_t>{2, 4, 3, -1});
  launch<Divide>(c, CubeCount{1}, CubeDim{4}, 1, a, b, out);
  EXPECT_EQ(c.read<int32_t>(out), (std::vector<int32_t>{5, 5, 10, INT32_MIN}));  // MIN / -1 wraps
}

struct DivergentBarrier {
  static constexpr std::string_view name = "divergent_barrier";
  void operator()(Slice<float> out) const {
    SharedArray<float> s(64);
    If(unit_pos() < 10u, [&] {
      s[unit_pos()] = 1.0f;
      sync_cube();
    });
    out[unit_pos()] = 1.0f;
  }
};

TEST(CpuErrors, BarrierUnderDivergentControlFlow) {
  Client c = Device::cpu().client();
  Handle out = c.upload(std::vector<float>(64, 5.0f));
  try {
    launch<DivergentBarrier>(c, CubeCount{1}, CubeDim{64}, 1, out);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "sync.divergent");
    EXPECT_NE(e.message().find("op #"), std::string::npos);
    EXPECT_NE(e.message().find("'sync.cube'"), std::string::npos) << e.message();
  }
  EXPECT_EQ(c.read<float>(out), std::vector<float>(64, 5.0f));
}

struct SharedOverrun {
  static constexpr std::string_view name = "shared_overrun";
  void operator()(Slice<float> out) const {
    SharedArray<float> s(16);
    s[unit_pos()] = 2.0f;
    out[unit_pos()] = s[unit_pos()];
  }
};

TEST(CpuErrors, SharedArrayOutOfRangeInAnyMode) {
  Client c = Device::cpu().client();
  Handle out = c.upload(std::vector<float>(32, 5.0f));
  try {
    launch<SharedOverrun>(c, CubeCount{1}, CubeDim{32}, 1, out);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "bounds.out_of_range");
    EXPECT_NE(e.message().find("index 16 is out of range of the shared array of op #"), std::string::npos)
        << e.message();
    EXPECT_NE(e.message().find("(length 16)"), std::string::npos);
  }
  EXPECT_EQ(c.read<float>(out), std::vector<float>(32, 5.0f));
}

// What the CPU backend cannot run is compile.unsupported, found before anything runs.
struct HugeShared {
  static constexpr std::string_view name = "huge_shared";
  void operator()(Slice<double> out) const {
    SharedArray<double> s(int64_t(1) << 29);  // 4 GiB per cube
    s[unit_pos()] = 1.0;
    sync_cube();
    out[absolute_pos()] = s[unit_pos()];
  }
};

TEST(CpuErrors, SharedMemoryOverTwoGibIsUnsupported) {
  Client c = Device::cpu().client();
  std::vector<double> before(32, -1.0);
  Handle out = c.upload(before);
  try {
    launch<HugeShared>(c, CubeCount{1}, CubeDim{32}, 1, out);
    FAIL() << "expected compile.unsupported";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "compile.unsupported") << e.what();
    EXPECT_NE(e.message().find("shared memory over 2 GiB"), std::string::npos) << e.message();
  }
  EXPECT_EQ(c.read<double>(out), before);
}

}  // namespace
