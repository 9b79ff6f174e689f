// Errors the CPU backend finds while a kernel runs: out-of-range accesses (global in unchecked
// mode, shared and local in any mode, atomics), division and remainder by zero, barriers under
// divergent control flow. Each names the kernel, op, unit and numbers involved, and a failed
// launch leaves every buffer as it was (also when many cubes ran and wrote before the failing
// one, and when the failing store had written for earlier units).
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

// Every other way a CPU launch stops midway, each after other cubes (or earlier units of the
// same store) wrote: the buffers come back as they were (decision 005 lists the failure points).

struct LocalOverrun {
  static constexpr std::string_view name = "local_overrun";
  void operator()(Slice<const uint32_t> k, Slice<uint32_t> out) const {
    LocalArray<uint32_t> scratch(4);
    out[absolute_pos()] = 7u;
    scratch[k[absolute_pos()]] = 1u;
    out[absolute_pos()] = scratch[0u];
  }
};

TEST(CpuErrors, LocalArrayOutOfRangeRestoresEveryBuffer) {
  Client c = Device::cpu().client();
  std::vector<uint32_t> k(256, 0u), before(256, 9u);
  k[200] = 4;  // cube 3 (of 64 units) indexes past the 4 elements
  Handle hk = c.upload(k), out = c.upload(before);
  try {
    launch<LocalOverrun>(c, CubeCount{4}, CubeDim{64}, 1, hk, out);
    FAIL() << "expected bounds.out_of_range";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "bounds.out_of_range");
    EXPECT_NE(e.message().find("in unit 8 of cube (3, 0, 0): index 4 is out of range of the local array of op #"),
              std::string::npos)
        << e.message();
  }
  EXPECT_EQ(c.read<uint32_t>(out), before);
}

struct CountInto {
  static constexpr std::string_view name = "count_into";
  void operator()(Slice<const uint32_t> bin, Slice<uint32_t> counts, Slice<uint32_t> seen) const {
    seen[absolute_pos()] = 1u;
    atomic_add(counts[bin[absolute_pos()]], 1u);
  }
};

TEST(CpuErrors, AtomicOutOfRangeRestoresEveryBuffer) {
  Client c = Device::cpu().client();
  std::vector<uint32_t> bins(128);
  for (size_t i = 0; i < bins.size(); ++i) bins[i] = uint32_t(i % 8);
  bins[100] = 8;  // past the 8 counters, in cube 3 of 32 units
  std::vector<uint32_t> counts(8, 0u), seen(128, 0u);
  Handle hb = c.upload(bins), hc = c.upload(counts), hs = c.upload(seen);
  try {
    launch_unchecked<CountInto>(c, CubeCount{4}, CubeDim{32}, 1, hb, hc, hs);
    FAIL() << "expected bounds.out_of_range";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "bounds.out_of_range");
    EXPECT_NE(e.message().find("'atomic.add' in unit 4 of cube (3, 0, 0): index 8 is out of range of argument 1"),
              std::string::npos)
        << e.message();
  }
  EXPECT_EQ(c.read<uint32_t>(hc), counts);
  EXPECT_EQ(c.read<uint32_t>(hs), seen);
}

struct Scatter {
  static constexpr std::string_view name = "scatter";
  void operator()(Slice<const uint32_t> to, Slice<float> out) const { out[to[absolute_pos()]] = 1.0f; }
};

TEST(CpuErrors, AStoreThatFailsPartWayThroughACubeRestoresTheUnitsBeforeIt) {
  // One cube: units 0..9 store, unit 10 is out of range; the store's own earlier writes go back.
  Client c = Device::cpu().client();
  std::vector<uint32_t> to(32);
  for (uint32_t i = 0; i < 32; ++i) to[i] = 31 - i;
  to[10] = 32;
  std::vector<float> before(32, -1.0f);
  Handle ht = c.upload(to), out = c.upload(before);
  try {
    launch_unchecked<Scatter>(c, CubeCount{1}, CubeDim{32}, 1, ht, out);
    FAIL() << "expected bounds.out_of_range";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "bounds.out_of_range");
    EXPECT_NE(e.message().find("in unit 10 of cube (0, 0, 0): index 32"), std::string::npos) << e.message();
  }
  EXPECT_EQ(c.read<float>(out), before);
}

struct Modulo {
  static constexpr std::string_view name = "modulo";
  void operator()(Slice<const int32_t> a, Slice<const int32_t> b, Slice<int32_t> out) const {
    If(absolute_pos() < out.len(), [&] { out[absolute_pos()] = a[absolute_pos()] % b[absolute_pos()]; });
  }
};

TEST(CpuErrors, RemainderByZeroInALaterCubeRestoresEveryBuffer) {
  Client c = Device::cpu().client();
  std::vector<int32_t> a(300), b(300, 7), before(300, -5);
  for (int i = 0; i < 300; ++i) a[size_t(i)] = i * 3 - 100;
  b[290] = 0;  // cube 4 of 64 units
  Handle ha = c.upload(a), hb = c.upload(b), out = c.upload(before);
  try {
    launch<Modulo>(c, CubeCount{5}, CubeDim{64}, 1, ha, hb, out);
    FAIL() << "expected arith.division_by_zero";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "arith.division_by_zero");
    EXPECT_NE(e.message().find("in unit 34 of cube (4, 0, 0): remainder of an integer by zero"), std::string::npos)
        << e.message();
  }
  EXPECT_EQ(c.read<int32_t>(out), before);
}

struct ScaleInPlace {
  static constexpr std::string_view name = "scale_in_place";
  void operator()(Slice<const int32_t> x, Slice<const int32_t> d, Slice<int32_t> out) const {
    If(absolute_pos() < out.len(),
       [&] { out[absolute_pos()] = x[absolute_pos()] / (d[0u] + cast<int32_t>(cube_pos())); });
  }
};

TEST(CpuErrors, AFailedInPlaceLaunchRestoresTheSharedBuffer) {
  // out is x (one buffer, two parameters). The divisor d[0] + cube_pos is the same for every unit
  // of a cube (a uniform value in the plan, computed once per cube); it is zero in cube 2, after
  // cubes 0 and 1 wrote.
  Client c = Device::cpu().client();
  std::vector<int32_t> xs(200);
  for (int i = 0; i < 200; ++i) xs[size_t(i)] = i * 10;
  Handle x = c.upload(xs), d = c.upload(std::vector<int32_t>{-2});
  try {
    launch<ScaleInPlace>(c, CubeCount{4}, CubeDim{64}, 1, x, d, x);
    FAIL() << "expected arith.division_by_zero";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "arith.division_by_zero");
    EXPECT_NE(e.message().find("in unit 0 of cube (2, 0, 0)"), std::string::npos) << e.message();
  }
  EXPECT_EQ(c.read<int32_t>(x), xs);
  c.write(d, std::vector<int32_t>{5});
  launch<ScaleInPlace>(c, CubeCount{4}, CubeDim{64}, 1, x, d, x);
  std::vector<int32_t> got = c.read<int32_t>(x);
  for (int i = 0; i < 200; ++i) EXPECT_EQ(got[size_t(i)], i * 10 / (5 + i / 64)) << i;
}

struct LateDivergentBarrier {
  static constexpr std::string_view name = "late_divergent_barrier";
  void operator()(Slice<float> out) const {
    out[absolute_pos()] = 2.0f;
    If(cube_pos() == 2u && unit_pos() < 5u, [&] { sync_cube(); });
  }
};

TEST(CpuErrors, ADivergentBarrierInALaterCubeRestoresEveryBuffer) {
  Client c = Device::cpu().client();
  std::vector<float> before(256, 5.0f);
  Handle out = c.upload(before);
  try {
    launch<LateDivergentBarrier>(c, CubeCount{4}, CubeDim{64}, 1, out);
    FAIL() << "expected sync.divergent";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "sync.divergent");
    EXPECT_NE(e.message().find("of cube (2, 0, 0)"), std::string::npos) << e.message();
  }
  EXPECT_EQ(c.read<float>(out), before);
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

// Cubes take tickets from work[0]; ticket 0 fails (an unchecked read past x's end) before it sets
// the flag work[1] that every later ticket spins on. A cube may wait for one that took its work
// earlier (docs/ir.md, fence.device), so the CPU backend must not leave the waiting cubes spinning
// once that one has failed: a while loop's head ends the cube when another has failed. Without
// that, this launch never returns when the backend has more than one host thread (KILN_CPU_THREADS,
// else one a hardware thread).
struct WaitForTheFirst {
  static constexpr std::string_view name = "wait_for_the_first";
  static constexpr std::array<std::string_view, 3> param_names{"work", "x", "out"};
  void operator()(Slice<uint32_t> work, Slice<const float> x, Slice<float> out) const {
    auto ticket = atomic_add(work[0u], 1u);
    If(ticket == 0u, [&] {
      // Long enough that the other host threads' cubes have taken their tickets and spin.
      Var<float> slow = 0.0f;
      For(range(0u, 200000u), [&](Expr<uint32_t>) { slow = slow * 0.5f + 1.0f; });
      out[1u] = slow;
      out[0u] = x[x.len()];
      fence_device();
      atomic_exchange(work[1u], 1u);
    }).Else([&] {
      While([&] { return atomic_add(work[1u], 0u) == 0u; }, [&] {});
      fence_device();
      out[ticket] = x[0u];
    });
  }
};

TEST(CpuErrors, AFailedCubeEndsTheCubesWaitingForIt) {
  Client c = Device::cpu().client();
  std::vector<float> before(64, -3.0f);
  Handle work = c.upload(std::vector<uint32_t>{0u, 0u}), x = c.upload(std::vector<float>(8, 1.0f)),
         out = c.upload(before);
  try {
    launch_unchecked<WaitForTheFirst>(c, CubeCount{64}, CubeDim{1}, 1, work, x, out);
    FAIL() << "expected bounds.out_of_range";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "bounds.out_of_range");
    EXPECT_NE(e.message().find("index 8 is out of range of argument 1 'x'"), std::string::npos) << e.message();
  }
  EXPECT_EQ(c.read<float>(out), before);
  EXPECT_EQ(c.read<uint32_t>(work), (std::vector<uint32_t>{0u, 0u}));
}

}  // namespace

// Every cube fails, the later ones sooner: cube c counts down (16 - c) * 4000 in a while loop, then
// reads past x's end by c. Host threads run cubes side by side, so a later cube fails first; the
// launch still reports cube 0's error on every run: cubes before a failed one run on (a while
// loop's head stops only the cubes after it), and the lowest failing cube's error is the launch's.
struct EveryCubeFails {
  static constexpr std::string_view name = "every_cube_fails";
  static constexpr std::array<std::string_view, 2> param_names{"x", "out"};
  void operator()(Slice<const float> x, Slice<float> out) const {
    Var<uint32_t> left = (16u - cube_pos_x()) * 4000u;
    While([&] { return left > 0u; }, [&] { left = left - 1u; });
    out[cube_pos_x()] = x[x.len() + cube_pos_x()];
  }
};

TEST(CpuErrors, TheLowestFailingCubeIsTheLaunchsErrorWhicheverThreadRanIt) {
  Client c = Device::cpu().client();
  std::vector<float> before(16, -3.0f);
  Handle x = c.upload(std::vector<float>(8, 1.0f)), out = c.upload(before);
  for (int run = 0; run < 8; ++run) {
    try {
      launch_unchecked<EveryCubeFails>(c, CubeCount{16}, CubeDim{1}, 1, x, out);
      FAIL() << "expected bounds.out_of_range";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), "bounds.out_of_range");
      EXPECT_NE(e.message().find("of cube (0, 0, 0): index 8 is out of range of argument 0 'x'"), std::string::npos)
          << "run " << run << ": " << e.message();
    }
    EXPECT_EQ(c.read<float>(out), before);
  }
}
