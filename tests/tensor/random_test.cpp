// Random tensors: element i is splitmix64 of (seed, i) on every device, checked bit for bit
// against a host implementation (uniform) and to the type's rounding (normal, whose log and cos
// may differ by an ulp of f64 between devices); the moments of many draws.
#include <gtest/gtest.h>

#include <algorithm>

#include "support.h"

namespace kiln::test {
namespace {

uint64_t mix(uint64_t seed, uint64_t i) {
  uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

TEST(TensorRandom, UniformIsSplitmixOfSeedAndIndexOnEveryDevice) {
  for (const Device& dev : devices()) {
    Client c = dev.client();
    for (DType t : {DType::F32, DType::F64, DType::BF16}) {
      const int bits = t == DType::F64 ? 53 : t == DType::F32 ? 24 : 8;
      Tensor u = uniform(c, {7, 33}, t, -2.0, 3.0, 1234);
      std::vector<double> want;
      for (uint64_t i = 0; i < 7 * 33; ++i)
        want.push_back(-2.0 + 5.0 * std::ldexp(double(mix(1234, i) >> (64 - bits)), -bits));
      want = values(data_of(t, {int64_t(want.size())}, want));
      expect_values(u, want, 0, dev.name() + " uniform " + std::string(ir::scalar_name(t)));
    }
    // Another seed, other numbers.
    std::vector<double> a = values(uniform(c, {64}, DType::F32, 0, 1, 1).to_data()),
                        b = values(uniform(c, {64}, DType::F32, 0, 1, 2).to_data());
    EXPECT_NE(a, b);
  }
}

TEST(TensorRandom, NormalMatchesTheHostAndItsMoments) {
  for (const Device& dev : devices()) {
    Client c = dev.client();
    Tensor n = normal(c, {100}, DType::F64, 1.5, 2.0, 99);
    std::vector<double> want;
    for (uint64_t i = 0; i < 100; ++i) {
      double u1 = 1.0 - std::ldexp(double(mix(99, i) >> 11), -53),
             u2 = std::ldexp(double(mix(99, i ^ ~0ull) >> 11), -53);
      want.push_back(1.5 + 2.0 * std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * M_PI * u2));
    }
    expect_values(n, want, 1e-13, dev.name() + " normal f64");
    // Moments of a million draws in f32: mean 1.5 +- 0.01, std 2 +- 0.01.
    std::vector<double> v = values(normal(c, {1000, 1000}, DType::F32, 1.5, 2.0, 7).to_data());
    double mean = 0, sq = 0;
    for (double x : v) mean += x;
    mean /= double(v.size());
    for (double x : v) sq += (x - mean) * (x - mean);
    EXPECT_NEAR(mean, 1.5, 0.01) << dev.name();
    EXPECT_NEAR(std::sqrt(sq / double(v.size())), 2.0, 0.01) << dev.name();
  }
}

TEST(TensorRandom, UniformStaysBelowHi) {
  for (const Device& dev : devices()) {
    Client c = dev.client();
    for (DType t : {DType::F16, DType::BF16, DType::F32}) {
      // Half-precision draws near 1 round up to it; [1, 2) in f32 too, without the clamp.
      for (auto [lo, hi] : {std::pair{0.0, 1.0}, std::pair{1.0, 2.0}}) {
        std::vector<double> v = values(uniform(c, {1 << 16}, t, lo, hi, 5).to_data());
        double top = *std::max_element(v.begin(), v.end()), bottom = *std::min_element(v.begin(), v.end());
        EXPECT_LT(top, hi) << dev.name() << " " << ir::scalar_name(t) << " [" << lo << ", " << hi << ")";
        EXPECT_GE(bottom, lo) << dev.name() << " " << ir::scalar_name(t);
      }
    }
  }
}

TEST(TensorRandom, Refusals) {
  Client c = Device::cpu().client();
  expect_error([&] { (void)uniform(c, {3}, DType::F32, 1, 1, 0); }, "tensor.bad_range");
  expect_error([&] { (void)uniform(c, {3}, DType::I32, 0, 1, 0); }, "tensor.unsupported_dtype");
  expect_error([&] { (void)normal(c, {-1}, DType::F32, 0, 1, 0); }, "tensor.shape_mismatch");
}

}  // namespace
}  // namespace kiln::test
