// Must not compile: a kernel's cubes_per_processor is a static constexpr int from 1 to 32 (left
// out, the backend chooses); another value or type is a compile error where the kernel is
// launched. The control asks for two cubes a processor and compiles.
#include "kiln/kiln.h"

using namespace kiln;

template <class N>
struct Scale {
  static constexpr std::string_view name = "scale";
  static constexpr N cubes_per_processor = N(2);
  void operator()(Scalar<float> a, Slice<float> y) const {
    If(absolute_pos() < y.len(), [&] { y[absolute_pos()] = a * y[absolute_pos()]; });
  }
};

template <int N>
struct Ask {
  static constexpr std::string_view name = "ask";
  static constexpr int cubes_per_processor = N;
  void operator()(Slice<float> y) const { y[absolute_pos()] = 1.0f; }
};

int main() {
  Client c = Device::cpu().client();
  Handle y = c.empty<float>(8);
#if defined(KILN_CASE_zero)
  launch<Ask<0>>(c, CubeCount{1}, CubeDim{8}, 1, y);  // error-here: zero
#elif defined(KILN_CASE_too_many)
  launch<Ask<33>>(c, CubeCount{1}, CubeDim{8}, 1, y);  // error-here: too_many
#elif defined(KILN_CASE_not_int)
  launch<Scale<unsigned>>(c, CubeCount{1}, CubeDim{8}, 1, 2.0f, y);  // error-here: not_int
#else
  launch<Scale<int>>(c, CubeCount{1}, CubeDim{8}, 1, 2.0f, y);
  launch<Ask<32>>(c, CubeCount{1}, CubeDim{8}, 1, y);
#endif
}
