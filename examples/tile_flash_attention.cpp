// Seed 04's flash attention: the row softmax inside a loop over key/value blocks, carrying the
// running maximum, the running sum and the output accumulator (three Vars, the same ops each step).
// Once in f32, and once with bf16 inputs and an f32 accumulator (p narrowed to bf16 before the
// second product), each against a float64 reference on the host.
#include <cmath>
#include <cstdio>
#include <random>

#include "example_support.h"
#include "kiln/tile.h"

using namespace kiln::tile;
using kiln::Client;
using kiln::Device;
using kiln::Handle;

constexpr uint32_t kSeq = 256, kDim = 64, kBlock = 64;

// q, k, v: [seq, dim]; out = softmax(q k^T / sqrt(dim)) v, block by block of 64 queries.
template <class T>
void flash_attn(Param<T> q, Param<T> k, Param<T> v, Param<float> out) {
  const double scale = 1.0 / std::sqrt(double(kDim));
  Tile<T> qt = load_cell(q);  // [64, dim]
  Var<float> m = full<float>({kBlock, 1}, -INFINITY);
  Var<float> l = zeros<float>({kBlock, 1});
  Var<float> acc = zeros<float>({kBlock, kDim});
  For(d_range(0, kSeq / kBlock), [&](Index j) {
    Tile<T> kt = load_at(k, {j, 0});  // [64, dim]
    Tile<float> s = mma(qt, kt.transpose(), zeros<float>({kBlock, kBlock})) * scale;
    Tile<float> m_new = max(m.get(), reduce_max(s, {.keepdims = true}));
    Tile<float> p = exp(s - m_new);
    Tile<float> alpha = exp(m.get() - m_new);
    l = l.get() * alpha + reduce_sum(p, {.keepdims = true});
    acc = mma(p.to<T>(), load_at(v, {j, 0}), acc.get() * alpha);
    m = m_new;
  });
  store_cell(out, acc.get() / l.get());
}

template <class T>
double run(Client& client, const std::vector<double>& q, const std::vector<double>& k, const std::vector<double>& v) {
  Cells rows = cells({kSeq, kDim}, {kBlock, kDim});
  Cells keys = cells({kSeq, kDim}, {kBlock, kDim}).along({free_axis, 1});
  Traced t = trace(std::is_same_v<T, float> ? "flash_attn" : "flash_attn_bf16", In<T>(rows), In<T>(keys), In<T>(keys),
                   Out<float>(rows), flash_attn<T>);
  auto narrow = [](const std::vector<double>& x) {
    std::vector<T> y;
    for (double d : x) y.push_back(T(float(d)));
    return y;
  };
  std::vector<T> qn = narrow(q), kn = narrow(k), vn = narrow(v);
  std::vector<float> poison(size_t(kSeq * kDim), NAN);
  Handle hq = client.upload(std::span<const T>(qn)), hk = client.upload(std::span<const T>(kn));
  Handle hv = client.upload(std::span<const T>(vn)), ho = client.upload(std::span<const float>(poison));
  t.entry.launch(client, {hq, hk, hv, ho});
  std::vector<float> got = client.read<float>(ho);
  // The float64 reference, over the inputs as the kernel saw them (after narrowing).
  double worst = 0;
  for (uint32_t i = 0; i < kSeq; ++i) {
    std::vector<double> s(kSeq);
    double m = -INFINITY, total = 0;
    for (uint32_t j = 0; j < kSeq; ++j) {
      double d = 0;
      for (uint32_t c = 0; c < kDim; ++c)
        d += double(float(qn[size_t(i * kDim + c)])) * double(float(kn[size_t(j * kDim + c)]));
      s[size_t(j)] = d / std::sqrt(double(kDim));
      m = std::max(m, s[size_t(j)]);
    }
    for (double& x : s) total += (x = std::exp(x - m));
    for (uint32_t c = 0; c < kDim; ++c) {
      double o = 0;
      for (uint32_t j = 0; j < kSeq; ++j) o += s[size_t(j)] * double(float(vn[size_t(j * kDim + c)]));
      worst = std::max(worst, std::abs(double(got[size_t(i * kDim + c)]) - o / total));
    }
  }
  return worst;
}

int main(int argc, char** argv) try {
  Device device = example::device_from_args(argc, argv);
  Client client = device.client();
  std::mt19937 rng(5);
  std::normal_distribution<double> n(0, 1);
  std::vector<double> q(size_t(kSeq * kDim)), k(q.size()), v(q.size());
  for (auto* x : {&q, &k, &v}) {
    for (double& d : *x) d = n(rng);
  }
  double f32 = run<float>(client, q, k, v);
  std::printf("flash_attn      f32 in, f32 accumulate, s %lld d %lld on %s: max abs error %.1e against float64\n",
              (long long)kSeq, (long long)kDim, device.name().c_str(), f32);
  double b16 = run<kiln::bf16>(client, q, k, v);
  std::printf("flash_attn_bf16 bf16 in, f32 accumulate, s %lld d %lld on %s: max abs error %.1e against float64\n",
              (long long)kSeq, (long long)kDim, device.name().c_str(), b16);
  // f32 throughout agrees to f32 rounding; bf16 rounds p (8 bits of mantissa) before the second product.
  return f32 < 1e-5 && b16 < 2e-2 ? 0 : 1;
} catch (const kiln::Error& e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1;
}
