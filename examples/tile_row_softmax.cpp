// Seed 04's row softmax: each block takes 32 rows of 64 scores. reduce_max(s, keepdims) is
// [32, 1] and widens along its length-1 dimension; the version without keepdims gives [32], whose
// rank differs, and the recorder refuses it (NumPy would widen it along the wrong axis).
#include <cmath>
#include <cstdio>
#include <random>

#include "example_support.h"
#include "kiln/tile.h"

using namespace kiln::tile;
using kiln::Client;
using kiln::Device;
using kiln::Handle;

static void row_softmax(Param<double> x, Param<double> out) {
  Tile<double> s = load_cell(x);                                // [32, 64]
  Tile<double> p = exp(s - reduce_max(s, {.keepdims = true}));  // [32, 1], widened to [32, 64]
  store_cell(out, p / reduce_sum(p, {.keepdims = true}));
}

// The same kernel without the first keepdims.
static void row_softmax_dropped(Param<double> x, Param<double> out) {
  Tile<double> s = load_cell(x);
  Tile<double> p = exp(s - reduce_max(s));  // [32]
  store_cell(out, p / reduce_sum(p, {.keepdims = true}));
}

template <class Body>
static std::string try_record(Body body) {
  Cells g = cells({256, 64}, {32, 64});  // eight blocks of 32 rows
  try {
    trace("row_softmax", In<double>(g), Out<double>(g), body);
    return "recorded";
  } catch (const kiln::Error& e) {
    return e.message();
  }
}

int main(int argc, char** argv) try {
  Device device = example::device_from_args(argc, argv);
  std::printf("%s\n", try_record(row_softmax).c_str());
  std::printf("%s\n", try_record(row_softmax_dropped).c_str());
  Cells g = cells({256, 64}, {32, 64});
  Traced t = trace("row_softmax", In<double>(g), Out<double>(g), row_softmax);
  std::mt19937 rng(4);
  std::uniform_real_distribution<double> u(-8, 8);
  std::vector<double> xs(256 * 64), poison(256 * 64, -1.0);
  for (double& v : xs) v = u(rng);
  Client client = device.client();
  Handle x = client.upload(std::span<const double>(xs)), out = client.upload(std::span<const double>(poison));
  t.entry.launch(client, {x, out});
  std::vector<double> got = client.read<double>(out);
  double worst = 0;
  for (int r = 0; r < 256; ++r) {
    double m = -INFINITY, total = 0;
    for (int j = 0; j < 64; ++j) m = std::max(m, xs[size_t(r * 64 + j)]);
    for (int j = 0; j < 64; ++j) total += std::exp(xs[size_t(r * 64 + j)] - m);
    for (int j = 0; j < 64; ++j) {
      double want = std::exp(xs[size_t(r * 64 + j)] - m) / total;
      worst = std::max(worst, std::abs(got[size_t(r * 64 + j)] - want) / want);
    }
  }
  std::printf("256 x 64 on %s: max relative error %.1e against the host reference\n", device.name().c_str(), worst);
  return worst < 1e-14 ? 0 : 1;
} catch (const kiln::Error& e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1;
}
