// Edges of launch arguments and memory found in review: values that must be refused rather than
// converted, overlapping views that must all be marked aliased, bool bytes other than 0 and 1.
#include <gtest/gtest.h>

#include "kiln/kiln.h"
#include "runtime/device_state.h"

using namespace kiln;

namespace {

struct Narrow {
  static constexpr std::string_view name = "edges_narrow";
  void operator()(Slice<int32_t> out, Scalar<int32_t> v, Comptime<uint8_t> c) const {
    out[0u] = v.get() + cast<int32_t>(Expr<uint8_t>(c.get()));
  }
};

TEST(ArgumentEdges, ComptimeValuesThatDoNotFitAreRefused) {
  Client cl = Device::cpu().client();
  Handle out = cl.upload(std::vector<int32_t>{-1});
  try {
    launch<Narrow>(cl, CubeCount{1}, CubeDim{1}, 1, out, 1, comptime(300));
    FAIL() << "comptime(300) for a Comptime<uint8_t> must be refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "launch.bad_argument");
    EXPECT_NE(e.message().find("argument 2 (arg2: Comptime<u8>)"), std::string::npos) << e.message();
  }
  launch<Narrow>(cl, CubeCount{1}, CubeDim{1}, 1, out, 1, comptime(200));
  EXPECT_EQ(cl.read<int32_t>(out)[0], 201);
}

TEST(ArgumentEdges, FloatsAtTheIntegerLimitAreRefused) {
  Client cl = Device::cpu().client();
  Handle out = cl.upload(std::vector<int32_t>{-1});
  // 2147483648.0f is INT32_MAX + 1 (the float nearest INT32_MAX): converting it is undefined.
  EXPECT_THROW(launch<Narrow>(cl, CubeCount{1}, CubeDim{1}, 1, out, 2147483648.0f, comptime(uint8_t(0))), Error);
  EXPECT_THROW(launch<Narrow>(cl, CubeCount{1}, CubeDim{1}, 1, out, -2147483904.0f, comptime(uint8_t(0))), Error);
  launch<Narrow>(cl, CubeCount{1}, CubeDim{1}, 1, out, -2147483648.0f, comptime(uint8_t(0)));
  EXPECT_EQ(cl.read<int32_t>(out)[0], INT32_MIN);
}

struct Three {
  static constexpr std::string_view name = "edges_three_views";
  void operator()(Slice<const float> a, Slice<const float> b, Slice<float> c) const {
    If(absolute_pos() < c.len(), [&] { c[absolute_pos()] = c[absolute_pos()] + 1.0f; });
    (void)a;
    (void)b;
  }
};

TEST(ArgumentEdges, EveryOverlappingViewIsMarkedAliased) {
  Client cl = Device::cpu().client();
  Handle h = cl.upload(std::vector<float>(30, 0.0f));
  // a = [0, 40) bytes, b = [80, 120), c = [20, 100): c overlaps both, a and b overlap only c.
  Handle a = h.offset_end(80), b = h.offset_start(80), c = h.offset_start(20).offset_end(20);
  launch<Three>(cl, CubeCount{1}, CubeDim{32}, 1, a, b, c);
  bool found = false;
  for (const auto& [id, define] : Device::cpu().state()->cache.kernels()) {
    if (id.name != "edges_three_views") continue;
    found = true;
    EXPECT_NE(id.alias[0], 0) << "a overlaps c";
    EXPECT_NE(id.alias[1], 0) << "b overlaps c";
    EXPECT_NE(id.alias[2], 0) << "c overlaps a and b";
    ir::Kernel k = define(id);
    EXPECT_TRUE(k.param_aliased(0) && k.param_aliased(1) && k.param_aliased(2));
  }
  EXPECT_TRUE(found);
}

struct Flags {
  static constexpr std::string_view name = "edges_flags";
  void operator()(Slice<const bool> f, Slice<uint32_t> out) const {
    auto i = absolute_pos();
    If(i < f.len(), [&] { If(f[i], [&] { out[i] = 1u; }).Else([&] { out[i] = 2u; }); });
  }
};

TEST(ArgumentEdges, BoolBytesOtherThanOneAreTrue) {
  Client cl = Device::cpu().client();
  Handle f = cl.upload(std::vector<uint8_t>{2, 0, 1, 255}).view_as<bool>();  // bytes kiln never writes
  Handle out = cl.upload(std::vector<uint32_t>{9, 9, 9, 9});
  launch<Flags>(cl, CubeCount{1}, CubeDim{4}, 1, f, out);
  EXPECT_EQ(cl.read<uint32_t>(out), (std::vector<uint32_t>{1, 2, 1, 1}));
}

TEST(ArgumentEdges, NegativeSizesAreOutOfMemoryNotAWrappedSlice) {
  Client cl = Device::cpu().client();
  int n = -1;
  try {
    (void)cl.empty_bytes(size_t(n) * sizeof(float));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "memory.out_of_memory");
  }
}

}  // namespace
