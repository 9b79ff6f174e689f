// Seed 04's matmul: each block computes a 64 x 64 tile of c, walking K in a run-time loop that
// carries the accumulator. The record holds one loop and one mmaf, however many steps K takes.
#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>

#include "example_support.h"
#include "kiln/tile.h"

using namespace kiln::tile;
using kiln::Client;
using kiln::Device;
using kiln::Handle;

static void matmul(Param<double> a, Param<double> b, Param<double> c) {
  Var<double> acc = zeros(c);
  For(d_range(0, 256 / 32), [&](Index k) { acc = mma(load_at(a, {k}), load_at(b, {k}), acc); });
  store_cell(c, acc);
}

int main(int argc, char** argv) try {
  Device device = example::device_from_args(argc, argv);
  auto a = In<double>(cells({256, 256}, {64, 32}).along({0, free_axis}));
  auto b = In<double>(cells({256, 256}, {32, 64}).along({free_axis, 1}));
  auto c = Out<double>(cells({256, 256}, {64, 64}));  // the grid: 4 x 4 blocks
  Traced t = trace("matmul", a, b, c, matmul);
  // Eight steps along K, one loop and one mmaf in the record.
  std::istringstream text(render(*t.program));
  for (std::string line; std::getline(text, line);) {
    std::string l = line.substr(std::min(line.size(), line.find_first_not_of(' ')));
    if (l.find("= for ") != std::string::npos || l.find("= mmaf ") != std::string::npos ||
        l.rfind("continue ", 0) == 0) {
      std::printf("%s\n", l.c_str());
    }
  }
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> as(256 * 256), bs(256 * 256), poison(256 * 256, 1e300);
  for (double& v : as) v = u(rng);
  for (double& v : bs) v = u(rng);
  Client client = device.client();
  Handle ha = client.upload(std::span<const double>(as)), hb = client.upload(std::span<const double>(bs));
  Handle hc = client.upload(std::span<const double>(poison));
  t.entry.launch(client, {ha, hb, hc});
  std::vector<double> got = client.read<double>(hc);
  double worst = 0;
  for (int i = 0; i < 256; ++i) {
    for (int j = 0; j < 256; ++j) {
      double want = 0, scale = 0;
      for (int k = 0; k < 256; ++k) {
        want += as[size_t(i * 256 + k)] * bs[size_t(k * 256 + j)];
        scale += std::abs(as[size_t(i * 256 + k)] * bs[size_t(k * 256 + j)]);
      }
      worst = std::max(worst, std::abs(got[size_t(i * 256 + j)] - want) / scale);
    }
  }
  std::printf("256 x 256 x 256 on %s: max relative error %.1e against the host reference\n", device.name().c_str(),
              worst);
  return worst < 1e-14 ? 0 : 1;
} catch (const kiln::Error& e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1;
}
