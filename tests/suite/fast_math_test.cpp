// Kernels that allow fast math (docs/decisions/015-fast-math.md) beside their exact twins, on every
// device against one long-double host reference. The CPU is exact, so both meet the exact
// tolerance there; on CUDA the fast f32 kernel meets a tolerance that the approximations it uses
// allow (tanh.approx, about 2^-11 relative, is the coarsest), and f64 only contracts.
#include "arith_ref.h"
#include "suite_run.h"

namespace kiln::suite {
namespace {

// A sum of terms from every family fast math changes: products an add may fuse with, a division,
// sqrt, recip, and exp, exp2, log, sin, cos and tanh. Inputs are in [-1, 1].
template <class F, bool Fast>
struct FastMix {
  static constexpr std::string_view name = "fast_mix";
  static constexpr FastMath fast_math{.contract = Fast, .approx = Fast};
  void operator()(Slice<const Vector<F>> x, Slice<Vector<F>> y) const {
    auto i = absolute_pos();
    If(i < x.len(), [&] {
      Vector<F> v = x[i];
      y[i] = v * v + exp(v) / (v + F(2)) + sin(v) * cos(v) + sqrt(v + F(3)) + tanh(v) +
             log(v + F(2)) * recip(v + F(3)) + exp2(v);
    });
  }
};

long double fast_mix_reference(long double v) {
  return v * v + std::exp(v) / (v + 2) + std::sin(v) * std::cos(v) + std::sqrt(v + 3) + std::tanh(v) +
         std::log(v + 2) / (v + 3) + std::exp2(v);
}

// The terms add up to at most 8 or so: the exact kernel's roundings (about a dozen, each within a
// few ulp of its term) stay under 1e-5 in f32; the approximations add up to a few 1e-4, most of it
// tanh's.
template <class F>
Tol tol_fast_mix(bool fast, std::string_view runtime) {
  if constexpr (std::is_same_v<F, float>) {
    if (fast && runtime == "cuda") return {1e-4, 1.5e-3, 0};
    return {1e-5, 1e-5, 4};
  } else {
    return {1e-12, 1e-12, 4};
  }
}

template <class F, bool Fast>
void register_fast_mix(int width) {
  const size_t n = size_t(width) * 2003;
  add_case(case_name({Fast ? "fast_mix_fast" : "fast_mix_exact", dtype_name<F>(), vw(width), nn(n)}),
           kernels<FastMix<F, Fast>>(), [=](Client& client, std::mt19937_64& rng) {
             auto x = random_values<F>(rng, n, -1.0, 1.0);
             auto out = run_map<FastMix<F, Fast>, F, 1>(client, width, 64, n, x);
             expect_near(Fast ? "fast_mix with fast math" : "fast_mix",
                         tabulate<F>(n, [&](size_t i) { return narrow<F>(fast_mix_reference(wide(x[i]))); }), out[0],
                         tol_fast_mix<F>(Fast, client.runtime_name()));
           });
}

KILN_SUITE_CASES(fast_math) {
  for (int w : {1, 4}) {
    register_fast_mix<float, false>(w);
    register_fast_mix<float, true>(w);
  }
  register_fast_mix<double, false>(2);
  register_fast_mix<double, true>(2);
}

// Kernels that differ only in fast math compile apart, and the CPU runs the fast one exactly: the
// two outputs are the same bytes.
TEST(FastMath, KernelsThatDifferOnlyInFastMathCompileApartAndTheCpuIsExact) {
  Client c = Device::cpu().client();
  std::mt19937_64 rng(5);
  const size_t n = 2 * 96 * 3;
  Handle x = c.upload(random_values<float>(rng, n, -1.0, 1.0));
  Handle exact = c.empty<float>(n), fast = c.empty<float>(n);
  // A cube dim and width no suite case uses, so that neither kernel is in the cache yet.
  auto run = [&](auto kernel, Handle& out) {
    launch<decltype(kernel)>(c, CubeCount{3}, CubeDim{96}, 2, x, out);
    return c.stats().compilations;
  };
  uint64_t before = c.stats().compilations;
  uint64_t after_exact = run(FastMix<float, false>{}, exact);
  uint64_t after_fast = run(FastMix<float, true>{}, fast);
  EXPECT_EQ(after_exact - before, 1u);
  EXPECT_EQ(after_fast - after_exact, 1u) << "the fast kernel shared the exact one's compiled kernel";
  EXPECT_EQ(run(FastMix<float, true>{}, fast), after_fast) << "a second launch compiled again";
  expect_same_bytes("fast math on the CPU", read_all_bytes(c, exact), read_all_bytes(c, fast));
}

}  // namespace
}  // namespace kiln::suite
