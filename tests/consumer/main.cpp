// A program outside kiln's tree, linking only kiln::kiln: y = x * 2 + 1 traced for float and f16,
// launched on the CPU device and checked against the host. Exit status 1 on a mismatch.
#include <cstdio>
#include <vector>

#include "kiln/kiln.h"
#include "kiln/tile.h"

using namespace kiln;

template <class T>
struct TwiceAndOne {
  static constexpr std::string_view name = "twice_and_one";
  void operator()(Slice<const T> x, Slice<T> y) const {
    If(absolute_pos() < x.len(), [&] { y[absolute_pos()] = x[absolute_pos()] * T(2) + T(1); });
  }
};

// Counts the elements of y that differ from x * 2 + 1 (all small integers: exact in f16 too).
template <class T>
int mismatches(const Client& client) {
  const int n = 37;  // two cubes of 32 units, the last one partly past the end
  std::vector<T> xs;
  for (int i = 0; i < n; ++i) xs.push_back(T(i - 10));
  Handle x = client.upload(xs), y = client.upload(std::vector<T>(size_t(n), T(0)));
  launch<TwiceAndOne<T>>(client, CubeCount{2}, CubeDim{32}, 1, x, y);
  std::vector<T> ys = client.read<T>(y);
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    if (static_cast<float>(ys[size_t(i)]) != float((i - 10) * 2 + 1)) ++bad;
  }
  return bad;
}

// The tile layer through the same target: seed 04's vadd over a ragged extent.
int tile_mismatches(const Client& client) {
  using namespace kiln::tile;
  Cells g = cells({300}, {128});
  Traced t =
      trace("vadd", In<float>(g), In<float>(g), Out<float>(g),
            [](Param<float> a, Param<float> b, Param<float> out) { store_cell(out, load_cell(a) + load_cell(b)); });
  std::vector<float> xs(300);
  for (int i = 0; i < 300; ++i) xs[size_t(i)] = float(i);
  Handle a = client.upload(xs), b = client.upload(xs), out = client.upload(std::vector<float>(300, -1.0f));
  t.entry.launch(client, {a, b, out});
  std::vector<float> ys = client.read<float>(out);
  int bad = 0;
  for (int i = 0; i < 300; ++i) bad += ys[size_t(i)] != float(2 * i);
  return bad;
}

// argc and argv are unused on purpose: if kiln's -Wall -Wextra -Werror reached this target, this
// file would not compile.
int main(int argc, char** argv) try {
  Client client = Device::cpu().client();
  int bad = mismatches<float>(client) + mismatches<f16>(client) + tile_mismatches(client);
  std::printf("consumer: %s, %d mismatches\n", bad ? "FAIL" : "ok", bad);
  return bad ? 1 : 0;
} catch (const kiln::Error& e) {
  std::fprintf(stderr, "consumer: error: %s\n", e.what());
  return 1;
}
