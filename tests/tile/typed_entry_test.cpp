// trace() answers a typed entry: launch(client, buffers...) takes one Buffer<T> per parameter, of
// its element type (a wrong type or count does not compile: tests/compile_fail/tile_typed_launch.cpp),
// and runs the same launch checks as the untyped form. Buffer<T>::of is the one run-time check, made
// once where a Handle becomes a Buffer.
#include <gtest/gtest.h>

#include <random>

#include "kiln/error.h"
#include "kiln/runtime.h"
#include "kiln/tile.h"
#include "programs.h"
#include "support/expect_error.h"

namespace kiln::tile {
namespace {

using test::expect_error;
using testing::devices;

TEST(TileTypedEntry, BuffersLaunchOnEveryDevice) {
  Cells g = cells({1000}, {128});
  auto vadd =
      trace("vadd", In<float>(g), In<float>(g), Out<float>(g),
            [](Param<float> a, Param<float> b, Param<float> out) { store_cell(out, load_cell(a) + load_cell(b)); });
  static_assert(std::is_same_v<decltype(vadd.entry), TypedEntry<float, float, float>>);
  for (const Device& dev : devices()) {
    Client c = dev.client();
    const uint32_t seed = std::random_device{}();
    std::vector<double> da = testing::random_values(1000, seed), db = testing::random_values(1000, seed + 1);
    std::vector<float> xa(da.begin(), da.end()), xb(db.begin(), db.end());
    Buffer<float> a = c.upload_buffer(xa), b = c.upload_buffer(xb);
    Buffer<float> out = c.upload_buffer(std::vector<float>(1001, -7.0f));
    vadd.entry.launch(c, a, b, out);
    std::vector<float> got = c.read<float>(out);
    for (size_t i = 0; i < 1000; ++i) ASSERT_EQ(got[i], xa[i] + xb[i]) << dev.name() << " seed " << seed << " at " << i;
    EXPECT_EQ(got[1000], -7.0f) << dev.name();
    // The untyped forms stay: a list of handles, and the entry as a plain Entry.
    Buffer<float> again = c.buffer<float>(1000);
    vadd.entry.launch(c, {a, b, again});
    const Entry& plain = vadd.entry;
    plain.launch(c, {b, a, again});
    EXPECT_EQ(c.read<float>(again), std::vector<float>(got.begin(), got.begin() + 1000)) << dev.name();
  }
}

// A Grid after the buffers, for a kernel whose grid no Out fixes.
TEST(TileTypedEntry, AGridComesLast) {
  auto transpose = testing::transpose_program_typed();
  for (const Device& dev : devices()) {
    Client c = dev.client();
    std::vector<double> xs = testing::random_values(128 * 64, std::random_device{}());
    Buffer<double> x = c.upload_buffer(xs), out = c.upload_buffer(std::vector<double>(128 * 64, 3.0));
    transpose.entry.launch(c, x, out, Grid{4, 2, 1});
    std::vector<double> got = c.read<double>(out);
    for (int i = 0; i < 128; ++i)
      for (int j = 0; j < 64; ++j) ASSERT_EQ(got[size_t(j * 128 + i)], xs[size_t(i * 64 + j)]) << dev.name();
  }
}

// Converting to Traced keeps the untyped entry, as code written before typed entries has it.
TEST(TileTypedEntry, TracedStillTakesHandles) {
  Traced t = testing::vadd_program(256);
  Client c = Device::cpu().client();
  Handle a = c.upload(std::vector<double>(256, 1.5)), out = c.empty<double>(256);
  t.entry.launch(c, {a, a, out});
  EXPECT_EQ(c.read<double>(out), std::vector<double>(256, 3.0));
}

// The launch checks that types cannot make (sizes, the grid) still run, and a refused launch
// changes nothing.
TEST(TileTypedEntry, LaunchChecksStillRun) {
  auto vadd = trace(
      "vadd", In<double>(cells({1000}, {128})), In<double>(cells({1000}, {128})), Out<double>(cells({1000}, {128})),
      [](Param<double> a, Param<double> b, Param<double> out) { store_cell(out, load_cell(a) + load_cell(b)); });
  Client c = Device::cpu().client();
  Buffer<double> a = c.upload_buffer(std::vector<double>(1000, 1.0)),
                 short_b = c.upload_buffer(std::vector<double>(999, 2.0));
  Buffer<double> out = c.upload_buffer(std::vector<double>(1000, -1.0));
  EXPECT_EQ(expect_error([&] { vadd.entry.launch(c, a, short_b, out); }, "launch.short_buffer").message(),
            "kernel `vadd`: argument 1 (In) holds 999 element(s) and its cells reach 1000");
  expect_error([&] { vadd.entry.launch(c, a, a, out, Grid{9, 1, 1}); }, "launch.grid_mismatch");
  expect_error([&] { vadd.entry.launch(c, a, a, Buffer<double>()); }, "handle.invalid");
  EXPECT_EQ(c.read<double>(out), std::vector<double>(1000, -1.0));
}

// Buffer<T>::of: the handle must hold Ts.
TEST(TileTypedEntry, BufferOfChecksTheElementType) {
  Client c = Device::cpu().client();
  Handle floats = c.upload(std::vector<float>(8, 1.0f));
  EXPECT_EQ(
      expect_error([&] { (void)Buffer<double>::of(floats); }, "handle.type_mismatch").message(),
      "Buffer<double>::of: the handle holds float elements; take it as Buffer<float>, or reinterpret the bytes with "
      "view_as<double>()");
  EXPECT_EQ(expect_error([&] { (void)Buffer<float>::of(c.empty_bytes(32)); }, "handle.type_mismatch").message(),
            "Buffer<float>::of: the handle holds raw bytes; view_as<float>() them first");
  EXPECT_EQ(expect_error([&] { (void)Buffer<float>::of(Handle()); }, "handle.invalid").message(),
            "Buffer<float>::of: the handle is empty");
  Buffer<float> b = Buffer<float>::of(floats);
  EXPECT_EQ(b.size(), 8u);
  EXPECT_EQ(b.offset_start(16).size(), 4u);
  Buffer<double> d = Buffer<double>::of(c.empty_bytes(64).view_as<double>());
  EXPECT_EQ(d.size(), 8u);
}

}  // namespace
}  // namespace kiln::tile
