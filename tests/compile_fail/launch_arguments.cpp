// Must not compile: launch<K> knows K's parameters and its arguments' C++ types, so a wrong count
// or an argument that can never bind is a compile error naming the parameter. Each case is one
// mistake, built with -DKILN_CASE_<name>; the control launches correctly and compiles.
#include "kiln/kiln.h"

using namespace kiln;

struct Scale {
  static constexpr std::string_view name = "scale";
  static constexpr std::array<std::string_view, 3> param_names{"a", "x", "y"};
  void operator()(Scalar<float> a, Slice<const float> x, Slice<float> y) const {
    If(absolute_pos() < x.len(), [&] { y[absolute_pos()] = a * x[absolute_pos()]; });
  }
};

struct Flags {
  static constexpr std::string_view name = "flags";
  void operator()(Scalar<int32_t> n, Slice<int32_t> out, Comptime<bool> relu) const {
    If(absolute_pos() < out.len(), [&] { out[absolute_pos()] = relu ? n.get() : n.get() + 1; });
  }
};

int main() {
  Client c = Device::cpu().client();
  Handle x = c.upload(std::vector<float>(8, 1.0f)), y = c.empty<float>(8);
  Handle n = c.empty<int32_t>(8);
#if defined(KILN_CASE_too_few)
  launch<Scale>(c, CubeCount{1}, CubeDim{8}, 1, x, y);  // error-here: too_few
#elif defined(KILN_CASE_handle_for_scalar)
  launch<Scale>(c, CubeCount{1}, CubeDim{8}, 1, x, x, y);  // error-here: handle_for_scalar
#elif defined(KILN_CASE_number_for_slice)
  launch<Scale>(c, CubeCount{1}, CubeDim{8}, 1, 2.0f, 3.0f, y);  // error-here: number_for_slice
#elif defined(KILN_CASE_bool_for_int_scalar)
  launch<Flags>(c, CubeCount{1}, CubeDim{8}, 1, true, n, comptime(true));  // error-here: bool_for_int_scalar
#elif defined(KILN_CASE_int_for_comptime_bool)
  launch<Flags>(c, CubeCount{1}, CubeDim{8}, 1, 3, n, 7);  // error-here: int_for_comptime_bool
#elif defined(KILN_CASE_comptime_int_for_comptime_bool)
  launch<Flags>(c, CubeCount{1}, CubeDim{8}, 1, 3, n, comptime(1));  // error-here: comptime_int_for_comptime_bool
#else
  launch<Scale>(c, CubeCount{1}, CubeDim{8}, 1, 2.0f, x, y);
  launch<Scale>(c, CubeCount{1}, CubeDim{8}, 1, 2, x, y);
  launch<Flags>(c, CubeCount{1}, CubeDim{8}, 1, 3, n, comptime(true));
  launch<Flags>(c, CubeCount{1}, CubeDim{8}, 1, int64_t(3), n, false);
#endif
}
