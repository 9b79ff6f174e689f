// Bad launches: each is a kiln::Error with a stable kind and an actionable message, thrown before
// anything runs, and every buffer is unchanged afterwards.
#include <gtest/gtest.h>

#include "kiln/kiln.h"

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

template <class Fn>
Error expect_error(Fn&& fn, const std::string& kind) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e;
  }
  ADD_FAILURE() << "expected Error{" << kind << "}";
  return Error("none", "none");
}

TEST(LaunchErrors, WrongArgumentCountNamesEveryParameter) {
  Client c = Device::cpu().client();
  Watched x(c, 64, 1), y(c, 64, -7);
  Error e = expect_error([&] { launch<Scale>(c, CubeCount{1}, CubeDim{64}, 1, x.handle, y.handle); },
                         "launch.bad_argument");
  EXPECT_NE(e.message().find("kernel 'scale' takes 3 arguments (a: Scalar<f32>, x: Slice<const f32>, y: Slice<f32>)"),
            std::string::npos)
      << e.message();
  EXPECT_NE(e.message().find("2 were given"), std::string::npos);
  x.expect_unchanged();
  y.expect_unchanged();
}

TEST(LaunchErrors, HandleWhereAScalarGoes) {
  Client c = Device::cpu().client();
  Watched x(c, 64, 1), y(c, 64, -7);
  Error e = expect_error([&] { launch<Scale>(c, CubeCount{1}, CubeDim{64}, 1, x.handle, x.handle, y.handle); },
                         "launch.bad_argument");
  EXPECT_NE(e.message().find("argument 0 (a: Scalar<f32>): a Handle was given; pass a number"), std::string::npos)
      << e.message();
  x.expect_unchanged();
  y.expect_unchanged();
}

TEST(LaunchErrors, NumberWhereABufferGoes) {
  Client c = Device::cpu().client();
  Watched y(c, 64, -7);
  Error e = expect_error([&] { launch<Scale>(c, CubeCount{1}, CubeDim{64}, 1, 2.0f, 3.0f, y.handle); },
                         "launch.bad_argument");
  EXPECT_NE(e.message().find("argument 1 (x: Slice<const f32>): a f32 value was given; pass a Handle"),
            std::string::npos)
      << e.message();
  y.expect_unchanged();
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
  Error e = expect_error([&] { launch<ScaleV>(c, CubeCount{1}, CubeDim{2}, 4, x.handle, y.handle); },
                         "launch.bad_argument");
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
  expect_error([&] { launch<Scale>(c, CubeCount{1}, CubeDim{32, 32, 2}, 1, 1.0f, x.handle, y.handle); },
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
  Error e = expect_error([&] { launch<BadTrace>(c, CubeCount{1}, CubeDim{1}, 1, x.handle, y.handle); },
                         "trace.vector_width");
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
