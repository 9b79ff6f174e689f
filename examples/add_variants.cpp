// Seed 01's quiz: one `add` kernel launched four times, (checked, no relu), (unchecked, no relu),
// (checked, relu), (checked, no relu). The execution mode and the comptime `relu` are part of
// the KernelId, the data is not: three compilations.
#include <cstdio>

#include "example_support.h"

using namespace kiln;

// out = x + y; `relu` is decided when the kernel is compiled.
struct Add {
  static constexpr std::string_view name = "add";
  static constexpr std::array<std::string_view, 4> param_names{"x", "y", "out", "relu"};
  void operator()(Slice<const float> x, Slice<const float> y, Slice<float> out, Comptime<bool> relu) const {
    auto v = x[absolute_pos()] + y[absolute_pos()];
    if (relu) out[absolute_pos()] = max(v, 0.0f);  // a C++ if: only one branch is recorded
    else out[absolute_pos()] = v;
  }
};

int main(int argc, char** argv) try {
  Client client = example::device_from_args(argc, argv).client();
  std::vector<float> xs{1, -1, 3, -3, 5, -5}, ys{0.5f, -0.5f, 0.5f, -0.5f, 0.5f, -0.5f};
  Handle x = client.upload(xs), y = client.upload(ys);
  auto run = [&](bool checked, bool relu) {
    Handle out = client.upload(std::vector<float>(6, -1.0f));
    if (checked) launch<Add>(client, CubeCount{1}, CubeDim{6}, 1, x, y, out, comptime(relu));
    else launch_unchecked<Add>(client, CubeCount{1}, CubeDim{6}, 1, x, y, out, comptime(relu));
    std::printf("add checked=%s relu=%s out = %s\n", checked ? "true" : "false", relu ? "true" : "false",
                example::format_list(client.read<float>(out)).c_str());
  };
  run(true, false);
  run(false, false);
  run(true, true);
  run(true, false);
  std::printf("compilations: %llu\n", static_cast<unsigned long long>(client.stats().compilations));
  return 0;
} catch (const kiln::Error& e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1;
}
