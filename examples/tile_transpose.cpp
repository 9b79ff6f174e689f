// Seed 04's transpose: block (i, j) reads its cell (i, j) of a 128 x 64 matrix and writes tile
// (j, i) of the 64 x 128 result. Declared Out, the result's cells make a 2 x 4 grid that x's 4 x 2
// cells disagree with, and recording refuses it before the body runs; declared Shared, the kernel
// writes at an offset it computes, with the result's strides swapped, and the caller gives the grid.
#include <cstdio>
#include <random>

#include "example_support.h"
#include "kiln/tile.h"

using namespace kiln::tile;
using kiln::Client;
using kiln::Device;
using kiln::Handle;

static void transpose(Param<double> x, Param<double> out) {
  Tile<double> t = load_cell(x);
  Index at = block_id(1) * (32 * 128) + block_id(0) * 32;
  store(out, at, t, {1, 128});  // out's strides, swapped: the layout does the transpose
}

static void transpose_out(Param<double> x, Param<double> out) { store_cell(out, load_cell(x).transpose()); }

int main(int argc, char** argv) try {
  Device device = example::device_from_args(argc, argv);
  Cells xc = cells({128, 64}, {32, 32});  // 4 x 2 cells
  try {
    trace("transpose", In<double>(xc), Out<double>(cells({64, 128}, {32, 32})), transpose_out);
    std::printf("recorded\n");
  } catch (const kiln::Error& e) {
    std::printf("%s\n", e.message().c_str());
  }
  Traced t = trace("transpose", In<double>(xc), Shared<double>(), transpose);
  std::printf("recorded\n");
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> xs(128 * 64), poison(128 * 64, 7.5);
  for (double& v : xs) v = u(rng);
  Client client = device.client();
  Handle x = client.upload(std::span<const double>(xs)), out = client.upload(std::span<const double>(poison));
  t.entry.launch(client, {x, out}, Grid{4, 2, 1});
  std::vector<double> got = client.read<double>(out);
  size_t wrong = 0;
  for (int i = 0; i < 128; ++i) {
    for (int j = 0; j < 64; ++j) wrong += got[size_t(j * 128 + i)] != xs[size_t(i * 64 + j)];
  }
  std::printf("grid [4, 2] on %s: %zu of %d elements differ from the reference\n", device.name().c_str(), wrong,
              128 * 64);
  return wrong == 0 ? 0 : 1;
} catch (const kiln::Error& e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1;
}
