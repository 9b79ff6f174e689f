// The warp-group product from the kernel language (kiln/dsl/wgmma.h), against a host reference
// on every device that runs it (the CPU, and an sm_90a GPU): each factor format, each swizzle,
// several widths n, a product per row or per 32-byte step of k, two warp groups per cube with
// products of their own. Then what the CPU catches in a kernel that misuses it, each a kiln::Error
// with the output as it was: a product with no fence, a factor written before the wait, a wait that
// does not name the accumulators, a group split by an if, a misplaced or out-of-range offset; and
// the accumulators of a product in flight read as NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <random>

#include "kiln/kiln.h"

using namespace kiln;

namespace {

// out (128 x N, f32) = a (128 x K) x bT (b: N x K), K = KB rows of one swizzle span each. Two warp
// groups: group g takes a's rows 64 g to 64 g + 63. Shared memory holds KB blocks of rows for each
// factor, swizzled; each block is multiplied by one product per row (Split 1) or one per 32 bytes
// of k, from offsets along the row.
template <class T, Swizzle S, uint32_t N, uint32_t KB, uint32_t Split>
struct Product {
  static constexpr std::string_view name = "wgmma_product";
  static constexpr std::array<std::string_view, 3> param_names{"a", "b", "out"};
  static constexpr uint32_t kRow = uint32_t(S) / sizeof(T), kK = KB * kRow;
  void operator()(Slice<const T> a, Slice<const T> b, Slice<float> out) const {
    SharedArray<T> as(KB * 128 * kRow, S), bs(KB * N * kRow, S);
    // Each unit stores its share: element (r, c) of block c / kRow at row r of the block.
    For(range(unit_pos(), 128u * kK, 256u), [&](Expr<uint32_t> i) {
      Expr<uint32_t> r = i / kK, c = i % kK;
      as[swizzled_index(as, (c / kRow) * 128u + r, c % kRow)] = a[i];
    });
    For(range(unit_pos(), N * kK, 256u), [&](Expr<uint32_t> i) {
      Expr<uint32_t> r = i / kK, c = i % kK;
      bs[swizzled_index(bs, (c / kRow) * N + r, c % kRow)] = b[i];
    });
    fence_proxy_async();
    sync_cube();
    LocalArray<float> acc(N / 2);
    for (uint32_t i = 0; i < N / 2; ++i) acc[i] = 0.0f;
    Expr<uint32_t> g = unit_pos() / 128u;
    wgmma_fence(acc);
    constexpr uint32_t kPart = kRow / Split;
    for (uint32_t kb = 0; kb < KB; ++kb) {
      for (uint32_t s = 0; s < Split; ++s) {
        wgmma_mma_async(acc, as, (kb * 128u + g * 64u) * kRow + s * kPart, bs, kb * N * kRow + s * kPart, int(kPart));
      }
    }
    wgmma_commit_group();
    wgmma_wait_group(0, acc);
    Expr<uint32_t> t = unit_pos() % 128u, w = t / 32u, l = t % 32u;
    for (uint32_t i = 0; i < N / 2; ++i) {
      Expr<uint32_t> row = g * 64u + w * 16u + l / 4u + 8u * ((i >> 1) & 1u),
                     col = 8u * (i >> 2) + 2u * (l % 4u) + (i & 1u);
      out[row * N + col] = acc[i];
    }
  }
};

// The value the tensor cores multiply: f32 is read as tf32 (13 low mantissa bits dropped).
template <class T>
double factor(T x) {
  if constexpr (std::is_same_v<T, float>) return double(std::bit_cast<float>(std::bit_cast<uint32_t>(x) & ~0x1fffu));
  else return double(float(x));
}

uint64_t fresh_seed() {
  std::random_device seed;
  return (uint64_t(seed()) << 32) | seed();
}

// n factors of a few bits, so that every product and sum is exact in f32 on the host and close on
// the tensor cores, which add in an order of their own; f32 factors get bits that tf32 drops.
template <class T>
std::vector<T> draw_factors(size_t n, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> small(-8, 8);
  std::vector<T> v(n);
  for (T& x : v) {
    float f = float(small(rng)) / 8.0f;
    if constexpr (std::is_same_v<T, float>) f += float(small(rng)) * 1e-6f;
    x = T(f);
  }
  return v;
}

// a (rows x k) x bT (b: n x k) in double, row-major.
template <class T>
std::vector<float> host_product(const std::vector<T>& a, const std::vector<T>& b, uint32_t rows, uint32_t n,
                                uint32_t k) {
  std::vector<float> want(size_t(rows) * n);
  for (uint32_t r = 0; r < rows; ++r) {
    for (uint32_t c = 0; c < n; ++c) {
      double sum = 0;
      for (uint32_t i = 0; i < k; ++i) sum += factor(a[r * k + i]) * factor(b[c * k + i]);
      want[size_t(r) * n + c] = float(sum);
    }
  }
  return want;
}

// Runs `run(client, device)` on every device that runs warp-group products: the CPU, and an sm_90a
// GPU (H100, H200); says which, so that a run without such a GPU shows it.
template <class F>
void on_product_devices(const std::string& what, F&& run) {
  int ran = 0;
  for (const Device& dev : Device::all()) {
    if (dev.kind() == DeviceKind::Cuda && dev.info().architecture != "sm_90a") continue;
    ++ran;
    std::cout << "[ wgmma    ] " << what << " on " << dev.name() << "\n";
    Client c = dev.client();
    run(c, dev);
  }
  EXPECT_GE(ran, 1);
}

template <class T, Swizzle S, uint32_t N, uint32_t KB, uint32_t Split>
void check_product(const std::string& what) {
  using P = Product<T, S, N, KB, Split>;
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(what + ", seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::vector<T> a = draw_factors<T>(128 * P::kK, rng), b = draw_factors<T>(N * P::kK, rng);
  const std::vector<float> want = host_product(a, b, 128, N, P::kK);
  on_product_devices(what, [&](Client& c, const Device& dev) {
    Handle ha = c.upload(a), hb = c.upload(b), out = c.upload(std::vector<float>(128 * N, -7.0f));
    launch<P>(c, CubeCount{1}, CubeDim{256}, 1, ha, hb, out);
    std::vector<float> got = c.read<float>(out);
    int bad = 0;
    for (size_t i = 0; i < got.size() && bad < 5; ++i) {
      if (!(std::fabs(got[i] - want[i]) <= 1e-3f * (1.0f + std::fabs(want[i])))) {
        ++bad;
        ADD_FAILURE() << dev.name() << ": out[" << i / N << "][" << i % N << "] is " << got[i] << ", want " << want[i];
      }
    }
  });
}

TEST(WgmmaDsl, Bf16Swizzle128RowsWholeAndByStep) {
  check_product<bf16, Swizzle::Span128, 64, 2, 1>("bf16, 128-byte swizzle, n 64, a product per row");
  check_product<bf16, Swizzle::Span128, 64, 1, 4>("bf16, 128-byte swizzle, n 64, a product per step");
}
TEST(WgmmaDsl, F16Swizzle64AndWideN) {
  check_product<f16, Swizzle::Span64, 256, 2, 1>("f16, 64-byte swizzle, n 256");
  check_product<f16, Swizzle::Span64, 8, 1, 2>("f16, 64-byte swizzle, n 8, by step");
}
TEST(WgmmaDsl, Bf16Swizzle32) { check_product<bf16, Swizzle::Span32, 128, 3, 1>("bf16, 32-byte swizzle, n 128"); }
TEST(WgmmaDsl, F32FactorsAreReadAsTf32) {
  check_product<float, Swizzle::Span128, 32, 1, 4>("f32 as tf32, 128-byte swizzle, n 32, by step");
}
TEST(WgmmaDsl, Float8Factors) {
  check_product<f8e4m3, Swizzle::Span128, 64, 2, 1>("f8e4m3, 128-byte swizzle, n 64");
  check_product<f8e5m2, Swizzle::Span64, 16, 1, 2>("f8e5m2, 64-byte swizzle, n 16, by step");
}

// The register-A form: out (64 x N) = a (64 x K, read by each unit straight into its fragment)
// x bT (b: N x K in a 128-byte swizzle, one span a row: K = 64 / sizeof(T) x 2... K = 64 here).
template <class T, uint32_t N, bool FenceA = true>
struct RegisterProduct {
  static constexpr std::string_view name = "wgmma_register_product";
  static constexpr std::array<std::string_view, 3> param_names{"a", "b", "out"};
  static constexpr uint32_t kK = 64;
  void operator()(Slice<const T> a, Slice<const T> b, Slice<float> out) const {
    SharedArray<T> bs(N * kK, Swizzle::Span128);
    For(range(unit_pos(), N * kK, 128u), [&](Expr<uint32_t> i) { bs[swizzled_index(bs, i / kK, i % kK)] = b[i]; });
    fence_proxy_async();
    sync_cube();
    Expr<uint32_t> t = unit_pos(), w = t / 32u, l = t % 32u;
    LocalArray<T> af(kK / 2);
    for (uint32_t j = 0; j < kK / 2; ++j) {
      const uint32_t i = j % 8;
      Expr<uint32_t> row = w * 16u + l / 4u + 8u * ((i >> 1) & 1u),
                     col = 16u * (j / 8) + 8u * (i >> 2) + 2u * (l % 4u) + (i & 1u);
      af[j] = a[row * kK + col];
    }
    LocalArray<float> acc(N / 2);
    for (uint32_t i = 0; i < N / 2; ++i) acc[i] = 0.0f;
    if constexpr (FenceA) wgmma_fence(acc, af);
    else wgmma_fence(acc);
    wgmma_mma_async(acc, af, bs, 0u, int(kK));
    wgmma_commit_group();
    wgmma_wait_group(0, acc);
    for (uint32_t i = 0; i < N / 2; ++i) {
      Expr<uint32_t> row = w * 16u + l / 4u + 8u * ((i >> 1) & 1u), col = 8u * (i >> 2) + 2u * (l % 4u) + (i & 1u);
      out[row * N + col] = acc[i];
    }
  }
};

template <class T, uint32_t N>
void check_register_product(const std::string& what) {
  using P = RegisterProduct<T, N>;
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(what + ", seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::vector<T> a = draw_factors<T>(64 * P::kK, rng), b = draw_factors<T>(N * P::kK, rng);
  const std::vector<float> want = host_product(a, b, 64, N, P::kK);
  on_product_devices(what, [&](Client& c, const Device& dev) {
    Handle ha = c.upload(a), hb = c.upload(b), out = c.upload(std::vector<float>(64 * N, -7.0f));
    launch<P>(c, CubeCount{1}, CubeDim{128}, 1, ha, hb, out);
    EXPECT_EQ(c.read<float>(out), want) << dev.name() << ": sums of a few bits are exact in any order";
  });
}

TEST(WgmmaDsl, RegisterFactors) {
  check_register_product<bf16, 64>("bf16 a in registers, n 64");
  check_register_product<f16, 128>("f16 a in registers, n 128");
}

TEST(WgmmaDsl, RegisterFactorsNeedAFenceToo) {
  Client c = Device::cpu().client();
  const std::vector<float> before(64 * 64, -7.0f);
  Handle a = c.upload(std::vector<bf16>(64 * 64, bf16(1.0f))), b = c.upload(std::vector<bf16>(64 * 64, bf16(1.0f))),
         out = c.upload(before);
  try {
    launch<RegisterProduct<bf16, 64, false>>(c, CubeCount{1}, CubeDim{128}, 1, a, b, out);
    ADD_FAILURE() << "expected wgmma.unfenced";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "wgmma.unfenced");
    EXPECT_NE(e.message().find("multiplies (as a) the local array of op #"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("with no wgmma.fence naming it"), std::string::npos) << e.message();
  }
  EXPECT_EQ(c.read<float>(out), before);
}

// One warp group, bf16 64 x 64 x 64 (128-byte swizzle), with one misuse picked by M; out gets each
// unit's accumulators. The CPU reports each misuse; a GPU would compute garbage or hang.
enum class Misuse {
  None,
  NoFence,
  WriteAfterFence,
  WriteBeforeWait,
  WriteAccumulatorBeforeWait,
  UnnamedWait,
  ReadBeforeWait,
  SplitGroup,
  OffRow,
  PastEnd,
  Negative,
  Offsets
};

template <Misuse M>
struct Misused {
  static constexpr std::string_view name = "wgmma_misused";
  static constexpr std::array<std::string_view, 1> param_names{"out"};
  void operator()(Slice<float> out) const {
    SharedArray<bf16> as(128 * 64, Swizzle::Span128), bs(64 * 64, Swizzle::Span128);
    For(range(unit_pos(), 64u * 64u, 128u), [&](Expr<uint32_t> i) {
      as[i] = cast<bf16>(Expr<float>(cast<float>(i % 7u)));
      bs[i] = cast<bf16>(Expr<float>(cast<float>(i % 5u)));
    });
    fence_proxy_async();
    sync_cube();
    LocalArray<float> acc(32);
    for (uint32_t i = 0; i < 32; ++i) acc[i] = 0.0f;
    if constexpr (M != Misuse::NoFence) wgmma_fence(acc);
    Expr<uint32_t> a_offset = 0u;
    if constexpr (M == Misuse::OffRow) a_offset = 64u;  // row 1
    if constexpr (M == Misuse::PastEnd) a_offset = 72u * 64u;
    if constexpr (M == Misuse::Offsets) a_offset = (unit_pos() / 32u % 2u) * 8u * 64u;
    if constexpr (M == Misuse::WriteAfterFence) acc[3] = 1.0f;
    auto product = [&] {
      if constexpr (M == Misuse::Negative) wgmma_mma_async(acc, as, Expr<int32_t>(-512), bs, 0u, 64);
      else wgmma_mma_async(acc, as, a_offset, bs, 0u, 64);
    };
    if constexpr (M == Misuse::SplitGroup) If(unit_pos() < 64u, product);
    else product();
    wgmma_commit_group();
    if constexpr (M == Misuse::WriteBeforeWait) as[unit_pos()] = cast<bf16>(Expr<float>(1.5f));
    if constexpr (M == Misuse::ReadBeforeWait) out[absolute_pos() * 32u] = acc[0];
    if constexpr (M == Misuse::WriteAccumulatorBeforeWait) acc[5] = 0.0f;
    if constexpr (M == Misuse::UnnamedWait) wgmma_wait_group(0);
    else wgmma_wait_group(0, acc);
    if constexpr (M != Misuse::ReadBeforeWait) {
      for (uint32_t i = 0; i < 32; ++i) out[absolute_pos() * 32u + i] = acc[i];
    }
  }
};

template <Misuse M>
void expect_misuse(const std::string& kind, const std::string& says) {
  Client c = Device::cpu().client();
  const std::vector<float> before(2 * 128 * 32, -7.0f);
  Handle out = c.upload(before);
  try {
    launch<Misused<M>>(c, CubeCount{2}, CubeDim{128}, 1, out);
    ADD_FAILURE() << "expected " << kind;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.message();
    EXPECT_NE(e.message().find(says), std::string::npos) << e.message();
  }
  EXPECT_EQ(c.read<float>(out), before) << "a failed launch leaves its output as it was";
}

TEST(WgmmaDsl, TheSameKernelWithoutAMisuseRuns) {
  Client c = Device::cpu().client();
  Handle out = c.upload(std::vector<float>(2 * 128 * 32, -7.0f));
  launch<Misused<Misuse::None>>(c, CubeCount{2}, CubeDim{128}, 1, out);
  std::vector<float> got = c.read<float>(out);
  // Unit 0's slot 0 is out[0][0] = sum over k of (k % 7) (k % 5): a's row 0 and b's row 0 are their
  // first 64 elements, which the swizzle of row 0 leaves in place.
  float want = 0;
  for (uint32_t k = 0; k < 64; ++k) want += float(k % 7) * float(k % 5);
  EXPECT_EQ(got[0], want);
  EXPECT_EQ(got[128 * 32], want) << "the second cube";
}

TEST(WgmmaDsl, AProductWithoutAFenceIsRefused) {
  expect_misuse<Misuse::NoFence>("wgmma.unfenced",
                                 "warp group 0 (units 0 to 127) starts a product on the local array of op #");
}
TEST(WgmmaDsl, AFactorWrittenBeforeTheWaitIsARace) {
  expect_misuse<Misuse::WriteBeforeWait>("wgmma.race", "were written before this wait completed it");
}
TEST(WgmmaDsl, AWaitNamesTheAccumulatorsItCompletes) {
  expect_misuse<Misuse::UnnamedWait>("wgmma.unnamed", "which it does not name");
}
TEST(WgmmaDsl, AWarpGroupSplitByAnIfIsDivergent) {
  expect_misuse<Misuse::SplitGroup>("wgmma.divergent", "only 64 of the 128 units of warp group 0");
}
TEST(WgmmaDsl, OffsetsThatDifferInAWarpGroupAreDivergent) {
  expect_misuse<Misuse::Offsets>("wgmma.divergent", "a_offset is 512 here and 0 in unit 0 of cube (0, 0, 0)");
}
TEST(WgmmaDsl, AFactorOffItsRowGroupIsMisaligned) {
  expect_misuse<Misuse::OffRow>("wgmma.misaligned", "a_offset 64 puts the factor at row 1, byte 0");
}
TEST(WgmmaDsl, AFactorPastItsArraysEndIsOutOfRange) {
  expect_misuse<Misuse::PastEnd>("bounds.out_of_range",
                                 "the 64 rows of a from element 4608 reach past the end of the shared array of op #");
  expect_misuse<Misuse::Negative>("bounds.out_of_range", "the 64 rows of a from element -512 reach");
}
TEST(WgmmaDsl, AccumulatorsWrittenAfterTheirFenceAreUnfenced) {
  expect_misuse<Misuse::WriteAfterFence>("wgmma.unfenced", ", written after the wgmma.fence that named it");
}
TEST(WgmmaDsl, AccumulatorsWrittenBeforeTheWaitAreARace) {
  expect_misuse<Misuse::WriteAccumulatorBeforeWait>("wgmma.race", "were written while it was in flight");
}

// Read before the wait, the accumulators are NaN on the CPU (on a GPU, whatever the tensor cores
// have left so far).
TEST(WgmmaDsl, AccumulatorsReadBeforeTheWaitAreNan) {
  Client c = Device::cpu().client();
  Handle out = c.upload(std::vector<float>(128 * 32, -7.0f));
  launch<Misused<Misuse::ReadBeforeWait>>(c, CubeCount{1}, CubeDim{128}, 1, out);
  std::vector<float> got = c.read<float>(out);
  for (uint32_t u = 0; u < 128; ++u) EXPECT_TRUE(std::isnan(got[u * 32])) << "unit " << u << ": " << got[u * 32];
}

}  // namespace
