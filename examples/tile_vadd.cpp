// Seed 04's vadd as a tile kernel: `tile_vadd --render` prints the recorded program as cuda_tile
// text (cells of 128 over 256 elements); without it, vadd runs over 1000 elements (eight cells, the
// last with 24 lanes past the extent), then is launched with 999-element buffers, which the launch
// checks refuse before anything runs.
#include <cstdio>
#include <cstring>

#include "example_support.h"
#include "kiln/tile.h"

using namespace kiln;
using namespace kiln::tile;

// Each block reads its cell of `a` and of `b` and writes its cell of `out`.
void vadd(Param<double> a, Param<double> b, Param<double> out) { store_cell(out, load_cell(a) + load_cell(b)); }

Traced trace_vadd(const Cells& g) { return trace("vadd", In<double>(g), In<double>(g), Out<double>(g), vadd); }

// Uploads 0..n-1 to a and b, launches over cells of 1000 and prints the result or the refusal.
void add_1000(const Client& client, const Entry& entry, size_t n) {
  try {
    std::vector<double> xs(n);
    for (size_t i = 0; i < n; ++i) xs[i] = double(i);
    Handle a = client.upload(xs), b = client.upload(xs), out = client.upload(std::vector<double>(n, 0.0));
    entry.launch(client, {a, b, out});
    std::vector<double> ys = client.read<double>(out);
    std::printf("%zu values, the last is %s\n", ys.size(), example::format_float(float(ys.back())).c_str());
  } catch (const kiln::Error& e) {
    std::printf("refused: %s: %s\n", e.kind().c_str(), e.message().c_str());
  }
}

int main(int argc, char** argv) try {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--render") == 0) {
      std::printf("%s\n", render(*trace_vadd(cells({256}, {128})).program).c_str());
      return 0;
    }
  }
  Device device = example::device_from_args(argc, argv);
  Client client = device.client();
  Traced t = trace_vadd(cells({1000}, {128}));
  for (size_t n : {1000, 999}) add_1000(client, t.entry, n);
  return 0;
} catch (const kiln::Error& e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1;
}
