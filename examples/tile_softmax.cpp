// Seed 04's softmax over four lanes holding three values: the lane past the extent reads -inf
// (the padding value is part of the recorded program), so the sum counts the three real lanes;
// the output's fourth element lies outside the extent and keeps its 9.0.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "example_support.h"
#include "kiln/tile.h"

using namespace kiln::tile;
using kiln::Client;
using kiln::Device;
using kiln::Handle;

static void softmax(Param<double> x, Param<double> out) {
  Tile<double> t = load_cell(x);            // the lane past the extent reads -inf
  Tile<double> e = exp(t - reduce_max(t));  // reduce_max(t) is rank 0: it widens itself
  store_cell(out, e / reduce_sum(e));       // nothing past the extent is written
}

static std::string digits17(const std::vector<double>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v[i]);
    std::string d = buf;
    if (d.find_first_of(".en") == std::string::npos) d += ".0";
    s += (i ? ", " : "") + d;
  }
  return s + "]";
}

// Distance in units in the last place between two doubles of one sign.
static int64_t ulps(double a, double b) {
  int64_t ia, ib;
  std::memcpy(&ia, &a, 8);
  std::memcpy(&ib, &b, 8);
  return ia > ib ? ia - ib : ib - ia;
}

int main(int argc, char** argv) try {
  Device device = example::device_from_args(argc, argv);
  Traced t = trace("softmax", In<double>(cells({3}, {4}).pad(Pad::neg_inf)), Out<double>(cells({3}, {4})), softmax);
  // The padding value is part of the record.
  std::istringstream text(render(*t.program));
  for (std::string line; std::getline(text, line);) {
    if (line.find("= make_partition_view") != std::string::npos && line.find("neg_inf") != std::string::npos) {
      std::printf("%s\n", line.substr(line.find_first_not_of(' ')).c_str());
    }
  }
  Client client = device.client();
  std::vector<double> xs = {1.0, 2.0, 3.0, 0.0}, sentinel = {9.0, 9.0, 9.0, 9.0};
  Handle x = client.upload(std::span<const double>(xs)), out = client.upload(std::span<const double>(sentinel));
  t.entry.launch(client, {x, out});
  std::vector<double> got = client.read<double>(out);
  // The kernel's contract, on the host: the softmax of the first 3 values, the rest untouched.
  // Computed in long double and rounded once, so the reference is the correctly rounded value and
  // the device's own roundings (exp, the sum, the division) show as ulps against it.
  long double m = 3.0L, total = 0;
  std::vector<double> want = sentinel;
  for (int i = 0; i < 3; ++i) total += std::exp((long double)xs[size_t(i)] - m);
  for (int i = 0; i < 3; ++i) want[size_t(i)] = double(std::exp((long double)xs[size_t(i)] - m) / total);
  std::printf("%-10s %s\n", device.name().c_str(), digits17(got).c_str());
  std::printf("%-10s %s\n", "reference", digits17(want).c_str());
  int64_t worst = 0;
  for (int i = 0; i < 3; ++i) worst = std::max(worst, ulps(got[size_t(i)], want[size_t(i)]));
  std::printf("%s within 4 ulps (worst %lld); the fourth element is %s\n", worst <= 4 ? "agree" : "DISAGREE",
              static_cast<long long>(worst), got[3] == 9.0 ? "still 9.0" : "CHANGED");
  return worst <= 4 && got[3] == 9.0 ? 0 : 1;
} catch (const kiln::Error& e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1;
}
