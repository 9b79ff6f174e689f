// Seed 01's first kernel: y = a * x + y with one vector of 4 floats per unit, 16 floats, one cube
// of 4 units. Prints the device and the result.
#include <cstdio>

#include "example_support.h"

using namespace kiln;

// y = a * x + y, one vector of floats per unit.
template <class F>
struct Saxpy {
  static constexpr std::string_view name = "saxpy";
  static constexpr std::array<std::string_view, 3> param_names{"a", "x", "y"};
  void operator()(Scalar<float> a, Slice<const Vector<F>> x, Slice<Vector<F>> y) const {
    If(absolute_pos() < x.len(),
       [&] { y[absolute_pos()] = Vector<F>(cast<F>(a)) * x[absolute_pos()] + y[absolute_pos()]; });
  }
};

int main(int argc, char** argv) try {
  Device device = example::device_from_args(argc, argv);
  Client client = device.client();
  std::printf("device = %s, runtime = %s\n", device.name().c_str(), std::string(client.runtime_name()).c_str());
  std::vector<float> xs(16), ys(16, 1.0f);
  for (int i = 0; i < 16; ++i) xs[size_t(i)] = float(i);
  Handle x = client.upload(xs), y = client.upload(ys);
  const int vector_size = 4;
  launch<Saxpy<float>>(client, CubeCount{1}, CubeDim{uint32_t(xs.size() / vector_size)}, vector_size, 2.0f, x, y);
  std::printf("saxpy y = %s\n", example::format_list(client.read<float>(y)).c_str());
  return 0;
} catch (const kiln::Error& e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1;
}
