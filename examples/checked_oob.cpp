// Seed 02's experiment, done right. Buffers of 8 floats whose handles show only 6 (offset_end of
// 8 bytes), 8 units. In checked mode (launch) an index at or past len() reads zero and writes
// nothing; unchecked (launch_unchecked), the CPU backend refuses the out-of-range access with an
// error naming the unit, the argument, the index and the length, and leaves `out` as it was.
#include <cstdio>

#include "example_support.h"

using namespace kiln;

// out = x + y with no bounds guard of its own.
struct Add {
  static constexpr std::string_view name = "add";
  static constexpr std::array<std::string_view, 3> param_names{"x", "y", "out"};
  void operator()(Slice<const float> x, Slice<const float> y, Slice<float> out) const {
    out[absolute_pos()] = x[absolute_pos()] + y[absolute_pos()];
  }
};

// The same, guarded by out.len() only: reads of a shorter x or y are not guarded.
struct AddGuarded {
  static constexpr std::string_view name = "add_guarded";
  static constexpr std::array<std::string_view, 3> param_names{"x", "y", "out"};
  void operator()(Slice<const float> x, Slice<const float> y, Slice<float> out) const {
    If(absolute_pos() < out.len(), [&] { out[absolute_pos()] = x[absolute_pos()] + y[absolute_pos()]; });
  }
};

// Writes x.len() as the kernel sees it.
struct LenOf {
  static constexpr std::string_view name = "len_of";
  static constexpr std::array<std::string_view, 2> param_names{"x", "out"};
  void operator()(Slice<const float> x, Slice<uint32_t> out) const {
    If(absolute_pos() == 0u, [&] { out[0u] = x.len(); });
  }
};

int main(int argc, char** argv) try {
  Client client = example::device_from_args(argc, argv).client();
  const std::vector<float> X{1, 2, 3, 4, 5, 6, 100, 100};
  const std::vector<float> Y{10, 20, 30, 40, 50, 60, 1000, 1000};
  Handle x = client.upload(X), y = client.upload(Y);
  Handle x6 = x.offset_end(8), y6 = y.offset_end(8);

  Handle len = client.upload(std::vector<uint32_t>{0});
  launch<LenOf>(client, CubeCount{1}, CubeDim{1}, 1, x6, len);
  std::printf("x.len() seen by the kernel (8 f32, offset_end 8 bytes): %u\n", client.read<uint32_t>(len)[0]);

  enum class Mode { Checked, Unchecked, Guarded };
  auto row = [&](Mode mode, bool read_case) {
    Handle out = client.upload(std::vector<float>(8, -1.0f));
    Handle xa = read_case ? x6 : x, ya = read_case ? y6 : y, oa = read_case ? out : out.offset_end(8);
    const char* label = mode == Mode::Checked ? "launch" : mode == Mode::Unchecked ? "launch_unchecked" : "add_guarded";
    std::string result;
    try {
      if (mode == Mode::Checked) launch<Add>(client, CubeCount{1}, CubeDim{8}, 1, xa, ya, oa);
      if (mode == Mode::Unchecked) launch_unchecked<Add>(client, CubeCount{1}, CubeDim{8}, 1, xa, ya, oa);
      if (mode == Mode::Guarded) launch<AddGuarded>(client, CubeCount{1}, CubeDim{8}, 1, xa, ya, oa);
      result = example::format_list(client.read<float>(out));
    } catch (const kiln::Error& e) {
      result = std::string("refused: ") + e.what();
    }
    std::printf("%-16s %s: %s\n", label, read_case ? "read  (x, y show 6, out 8)" : "write (x, y 8, out shows 6)",
                result.c_str());
  };
  for (bool read_case : {true, false}) {
    for (Mode m : {Mode::Checked, Mode::Unchecked, Mode::Guarded}) row(m, read_case);
  }
  return 0;
} catch (const kiln::Error& e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1;
}
