// Bad launches: each is a kiln::Error with a stable kind and an actionable message, thrown before
// anything runs, and every buffer is unchanged afterwards.
#include <gtest/gtest.h>

#include <cstring>

#include "kiln/kiln.h"
#include "support/expect_error.h"

using namespace kiln;

namespace {

struct Scale {
  static constexpr std::string_view name = "scale";
  static constexpr std::array<std::string_view, 3> param_names{"a", "x", "y"};
  void operator()(Scalar<float> a, Slice<const float> x, Slice<float> y) const {
    If(absolute_pos() < x.len(), [&] { y[absolute_pos()] = a * x[absolute_pos()]; });
  }
};

struct ScaleV {
  static constexpr std::string_view name = "scale_v";
  static constexpr std::array<std::string_view, 2> param_names{"x", "y"};
  void operator()(Slice<const Vector<float>> x, Slice<Vector<float>> y) const {
    If(absolute_pos() < x.len(), [&] { y[absolute_pos()] = x[absolute_pos()] * 3.0f; });
  }
};

struct Narrow {
  static constexpr std::string_view name = "narrow";
  void operator()(Scalar<uint8_t> v, Slice<uint8_t> out) const { out[0u] = v.get(); }
};

// Keeps a buffer's bytes to check it was not touched.
struct Watched {
  Client client;
  Handle handle;
  std::vector<float> before;
  Watched(Client c, size_t n, float start) : client(std::move(c)) {
    for (size_t i = 0; i < n; ++i) before.push_back(start + float(i) * 0.25f);
    handle = client.upload(before);
  }
  void expect_unchanged() const { EXPECT_EQ(client.read<float>(handle), before) << "a failed launch changed a buffer"; }
};

using test::expect_error;

// A wrong argument count, or an argument whose C++ type can never bind, does not compile:
// tests/compile_fail/launch_arguments.cpp. What only values tell is checked at run time, below.

TEST(LaunchErrors, HandleOfAnotherElementTypeNamesBothTypes) {
  Client c = Device::cpu().client();
  Watched y(c, 64, -7);
  Handle ints = c.upload(std::vector<int32_t>(64, 3));
  Error e = expect_error([&] { launch<Scale>(c, CubeCount{1}, CubeDim{64}, 1, 2.0f, ints, y.handle); },
                         "launch.type_mismatch");
  EXPECT_NE(e.message().find("kernel 'scale', argument 1 (x: Slice<const f32>): the handle holds i32 elements, the "
                             "parameter takes f32"),
            std::string::npos)
      << e.message();
  EXPECT_NE(e.message().find("view_as<float>()"), std::string::npos) << e.message();
  y.expect_unchanged();
  EXPECT_EQ(c.read<int32_t>(ints), std::vector<int32_t>(64, 3));
  // A double where a float goes is a mismatch too: the widths differ, and so would every index.
  Handle doubles = c.upload(std::vector<double>(64, 1.0));
  expect_error([&] { launch<Scale>(c, CubeCount{1}, CubeDim{64}, 1, 2.0f, doubles, y.handle); },
               "launch.type_mismatch");
  y.expect_unchanged();
}

TEST(LaunchErrors, RawBytesNeedAnElementType) {
  Client c = Device::cpu().client();
  Watched x(c, 16, 1);
  Handle raw = c.empty_bytes(16 * sizeof(float));
  EXPECT_FALSE(raw.element().has_value());
  Error e = expect_error([&] { launch<Scale>(c, CubeCount{1}, CubeDim{16}, 1, 2.0f, x.handle, raw); },
                         "launch.type_mismatch");
  EXPECT_NE(e.message().find("argument 2 (y: Slice<f32>): the handle holds raw bytes"), std::string::npos)
      << e.message();
  EXPECT_NE(e.message().find("empty<float>(n)"), std::string::npos) << e.message();
  // Typed, the same memory launches.
  launch<Scale>(c, CubeCount{1}, CubeDim{16}, 1, 2.0f, x.handle, raw.view_as<float>());
  EXPECT_EQ(c.read<float>(raw)[5], 2.0f * x.before[5]);
  Handle typed = c.empty<float>(16);
  EXPECT_EQ(typed.element(), ir::Scalar::F32);
  EXPECT_EQ(typed.size_in_used(), 16 * sizeof(float));
  launch<Scale>(c, CubeCount{1}, CubeDim{16}, 1, 3.0f, x.handle, typed);
  EXPECT_EQ(c.read<float>(typed)[15], 3.0f * x.before[15]);
}

TEST(LaunchErrors, ExplicitReinterpretationLaunches) {
  Client c = Device::cpu().client();
  // The bits of 1.0f, 2.0f, ... uploaded as integers and viewed as floats.
  std::vector<float> values{1.0f, 2.0f, -0.5f, 1e-3f};
  std::vector<uint32_t> bits(values.size());
  std::memcpy(bits.data(), values.data(), values.size() * 4);
  Handle h = c.upload(bits);
  EXPECT_EQ(h.element(), ir::Scalar::U32);
  Handle y = c.empty<float>(values.size());
  launch<Scale>(c, CubeCount{1}, CubeDim{4}, 1, 2.0f, h.view_as<float>(), y);
  EXPECT_EQ(c.read<float>(y), (std::vector<float>{2.0f, 4.0f, -1.0f, 2e-3f}));
  // The view keeps its memory: it is the same allocation.
  EXPECT_EQ(h.view_as<float>().memory_id(), h.memory_id());
}

TEST(LaunchErrors, EmptyHandleIsInvalid) {
  Client c = Device::cpu().client();
  Watched x(c, 16, 1);
  Error e =
      expect_error([&] { launch<Scale>(c, CubeCount{1}, CubeDim{16}, 1, 2.0f, x.handle, Handle{}); }, "handle.invalid");
  EXPECT_NE(e.message().find("argument 2 (y: Slice<f32>): the handle is empty"), std::string::npos) << e.message();
  expect_error([&] { (void)c.read<float>(Handle{}); }, "handle.invalid");
  expect_error([&] { (void)Handle{}.view_as<float>(); }, "handle.invalid");
  x.expect_unchanged();
}

TEST(LaunchErrors, ScalarThatDoesNotFit) {
  Client c = Device::cpu().client();
  Handle out = c.upload(std::vector<uint8_t>{42});
  Error e = expect_error([&] { launch<Narrow>(c, CubeCount{1}, CubeDim{1}, 1, 300, out); }, "launch.bad_argument");
  EXPECT_NE(e.message().find("does not convert"), std::string::npos) << e.message();
  EXPECT_EQ(c.read<uint8_t>(out), std::vector<uint8_t>{42});
  launch<Narrow>(c, CubeCount{1}, CubeDim{1}, 1, 200, out);
  EXPECT_EQ(c.read<uint8_t>(out), std::vector<uint8_t>{200});
}

TEST(LaunchErrors, VectorWidthThatDoesNotDivideTheBuffer) {
  Client c = Device::cpu().client();
  Watched x(c, 6, 1), y(c, 6, -7);
  Error e =
      expect_error([&] { launch<ScaleV>(c, CubeCount{1}, CubeDim{2}, 4, x.handle, y.handle); }, "launch.bad_argument");
  EXPECT_NE(e.message().find("24 bytes, which is not a whole number of 16-byte elements"), std::string::npos)
      << e.message();
  EXPECT_NE(e.message().find("vector width 4 must divide its length"), std::string::npos) << e.message();
  x.expect_unchanged();
  y.expect_unchanged();
  // Width 2 divides 6.
  launch<ScaleV>(c, CubeCount{1}, CubeDim{3}, 2, x.handle, y.handle);
  EXPECT_EQ(c.read<float>(y.handle)[5], x.before[5] * 3.0f);
}

TEST(LaunchErrors, VectorSizeNotAPowerOfTwo) {
  Client c = Device::cpu().client();
  Watched x(c, 12, 1), y(c, 12, -7);
  expect_error([&] { launch<ScaleV>(c, CubeCount{1}, CubeDim{4}, 3, x.handle, y.handle); }, "launch.bad_argument");
  y.expect_unchanged();
}

TEST(LaunchErrors, CubeOverTheDeviceLimit) {
  Client c = Device::cpu().client();
  Watched x(c, 64, 1), y(c, 64, -7);
  Error e = expect_error([&] { launch<Scale>(c, CubeCount{1}, CubeDim{2048}, 1, 1.0f, x.handle, y.handle); },
                         "launch.bad_dims");
  EXPECT_NE(e.message().find("cube dim (2048, 1, 1) has 2048 units; cpu allows 1 to 1024 units"), std::string::npos)
      << e.message();
  expect_error(
      [&] {
        launch<Scale>(c, CubeCount{1}, CubeDim{32, 32, 2}, 1, 1.0f, x.handle, y.handle);
      },
      "launch.bad_dims");
  expect_error([&] { launch<Scale>(c, CubeCount{1}, CubeDim{0}, 1, 1.0f, x.handle, y.handle); }, "launch.bad_dims");
  x.expect_unchanged();
  y.expect_unchanged();
}

TEST(LaunchErrors, HandleFromAnotherClient) {
  Client a = Device::cpu().client(), b = Device::cpu().client();
  Watched x(a, 64, 1), y(b, 64, -7);
  Watched ya(a, 64, 5);
  Error e = expect_error([&] { launch<Scale>(a, CubeCount{1}, CubeDim{64}, 1, 1.0f, x.handle, y.handle); },
                         "launch.foreign_handle");
  EXPECT_NE(e.message().find("argument 2"), std::string::npos) << e.message();
  x.expect_unchanged();
  y.expect_unchanged();
  expect_error([&] { (void)b.read<float>(x.handle); }, "launch.foreign_handle");
  // The same launch with the client's own handle works.
  launch<Scale>(a, CubeCount{1}, CubeDim{64}, 1, 2.0f, x.handle, ya.handle);
  EXPECT_EQ(a.read<float>(ya.handle)[3], 2.0f * x.before[3]);
}

struct BadTrace {
  static constexpr std::string_view name = "bad_trace";
  void operator()(Slice<const float> x, Slice<float> y) const {
    auto a = vector_of<float>(x[0u], x[1u], x[2u], x[3u]);
    auto b = vector_of<float>(x[0u], x[1u]);
    y[0u] = (a + b)[0];
  }
};

TEST(LaunchErrors, TraceErrorsReachTheCallerOfLaunch) {
  Client c = Device::cpu().client();
  Watched x(c, 8, 1), y(c, 8, -7);
  Error e =
      expect_error([&] { launch<BadTrace>(c, CubeCount{1}, CubeDim{1}, 1, x.handle, y.handle); }, "trace.vector_width");
  EXPECT_NE(e.message().find("widths 4 and 2"), std::string::npos) << e.message();
  y.expect_unchanged();
  // Not cached: the next launch reports it again.
  expect_error([&] { launch<BadTrace>(c, CubeCount{1}, CubeDim{1}, 1, x.handle, y.handle); }, "trace.vector_width");
}

TEST(Devices, ParseAndUnavailableCuda) {
  EXPECT_EQ(Device::parse("cpu").name(), "cpu");
  expect_error([] { Device::parse("tpu:0"); }, "device.unknown");
  if (Device::all().size() == 1) {
    Error e = expect_error([] { Device::cuda(0); }, "device.unavailable");
    EXPECT_NE(e.message().find("cuda:0"), std::string::npos) << e.message();
  }
}

}  // namespace
