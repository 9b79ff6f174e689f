// Reference kernels: fake mode (seed 04's with_gpu_fake: the launch checks, then the reference
// instead of the kernel) and check mode (the kernel on each device against its reference).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

#include "kiln/runtime.h"
#include "kiln/tile.h"
#include "programs.h"
#include "support/expect_error.h"

namespace kiln::tile {
namespace {

using test::expect_error;

using testing::devices;

std::vector<double> random_values(size_t n, uint32_t seed, double lo = -2, double hi = 2) {
  return testing::random_values(n, seed, lo, hi);
}

// ---- fake mode -------------------------------------------------------------------------------------

// Seed 04's host half: three n-element buffers, a launch over cells of a 1000-element extent.
std::vector<double> add_1000(const Client& c, int64_t n) {
  Traced t = testing::vadd_program(1000);
  std::vector<double> xs(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) xs[size_t(i)] = double(i);
  Handle a = c.upload(xs), b = c.upload(xs), out = c.upload(std::vector<double>(size_t(n), 0.0));
  t.entry.launch(c, {a, b, out});
  return c.read<double>(out);
}

TEST(TileReference, FakeDeviceRunsVaddsReference) {
  Client c = Device::cpu().client();
  References refs = reference_kernels();
  FakeDevice fake(refs);
  std::vector<double> ys = add_1000(c, 1000);
  ASSERT_EQ(ys.size(), 1000u);
  EXPECT_EQ(ys.back(), 1998.0);
  Error e = expect_error([&] { add_1000(c, 999); }, "launch.short_buffer");
  EXPECT_EQ(e.message(), "kernel `vadd`: argument 0 (In) holds 999 element(s) and its cells reach 1000");
}

// The answer is the reference's, not the kernel's: a reference that writes 7 everywhere shows.
TEST(TileReference, FakeModeNeverRunsTheKernel) {
  Client c = Device::cpu().client();
  References sevens;
  sevens.add("vadd", 3, last_out([](std::span<const HostBuffer>, HostBuffer& out) {
               for (size_t i = 0; i < out.size(); ++i) out.set(i, 7.0);
             }));
  Traced t = testing::vadd_program(1000);
  std::vector<double> xs = random_values(1000, 3);
  Handle a = c.upload(xs), b = c.upload(xs), out = c.upload(std::vector<double>(1000, 0.0));
  launch_reference(sevens, t.entry, c, {a, b, out});
  EXPECT_EQ(c.read<double>(out), std::vector<double>(1000, 7.0));
  // Inputs are not copied back, whatever the reference does to its copies.
  References scribbler;
  scribbler.add("vadd", 3, [](std::span<HostBuffer> bufs, const Grid&) { bufs[0].set(0, -1.0); });
  launch_reference(scribbler, t.entry, c, {a, b, out});
  EXPECT_EQ(c.read<double>(a), xs);
}

// The 999-element refusal comes from the launch checks: no reference runs, no buffer changes.
TEST(TileReference, LaunchChecksComeBeforeTheReference) {
  Client c = Device::cpu().client();
  int calls = 0;
  References counting;
  counting.add("vadd", 3, [&](std::span<HostBuffer>, const Grid&) { ++calls; });
  Traced t = testing::vadd_program(1000);
  std::vector<double> xs(999, 1.0), zeros(999, 0.0);
  Handle a = c.upload(xs), b = c.upload(xs), out = c.upload(zeros);
  Error e = expect_error([&] { launch_reference(counting, t.entry, c, {a, b, out}); }, "launch.short_buffer");
  EXPECT_EQ(e.message(), "kernel `vadd`: argument 0 (In) holds 999 element(s) and its cells reach 1000");
  {
    FakeDevice fake(counting);
    expect_error([&] { t.entry.launch(c, {a, b, out}); }, "launch.short_buffer");
  }
  Error g = expect_error(
      [&] {
        launch_reference(counting, t.entry, c, {a, b, out}, Grid{9, 1, 1});
      },
      "launch.grid_mismatch");
  EXPECT_EQ(g.message(), "kernel `vadd`: the Out cells make the grid [8, 1, 1], and the launch gives [9, 1, 1]");
  expect_error([&] { check(counting, t.entry, c, {a, b, out}); }, "launch.short_buffer");
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(c.read<double>(out), zeros);
}

// A reference registered for another number of buffers than its kernel takes is refused in fake
// mode, by launch_reference and by check, before it runs and before any buffer changes.
TEST(TileReference, AReferenceForAnotherBufferCountIsRefused) {
  Client c = Device::cpu().client();
  int calls = 0;
  References two;
  two.add("vadd", 2, last_out([&](std::span<const HostBuffer>, HostBuffer&) { ++calls; }));
  Traced t = testing::vadd_program(1000);
  std::vector<double> xs = random_values(1000, 6), poison(1000, -3.0);
  Handle a = c.upload(xs), b = c.upload(xs), out = c.upload(poison);
  const std::string message =
      "kernel `vadd` takes 3 buffer(s), and its reference was registered for 2: register it with the kernel's count, "
      "or "
      "check that this is the kernel it is for";
  EXPECT_EQ(expect_error(
                [&] {
                  launch_reference(two, t.entry, c, {a, b, out});
                },
                "reference.arity")
                .message(),
            message);
  {
    FakeDevice fake(two);
    EXPECT_EQ(expect_error([&] { t.entry.launch(c, {a, b, out}); }, "reference.arity").message(), message);
  }
  EXPECT_EQ(expect_error([&] { check(two, t.entry, c, {a, b, out}); }, "reference.arity").message(), message);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(c.read<double>(out), poison);
  // Registered with the kernel's count, the same function runs.
  two.add("vadd", 3, last_out([&](std::span<const HostBuffer>, HostBuffer&) { ++calls; }));
  launch_reference(two, t.entry, c, {a, b, out});
  EXPECT_EQ(calls, 1);
}

// A dyn_dim extent is the grid's blocks times the tile: the reference sees 8 x 128 elements.
TEST(TileReference, DynDimExtentFollowsTheGrid) {
  Client c = Device::cpu().client();
  Cells g = cells({dyn_dim}, {128});
  Traced t =
      trace("vadd", In<double>(g), In<double>(g), Out<double>(g),
            [](Param<double> a, Param<double> b, Param<double> out) { store_cell(out, load_cell(a) + load_cell(b)); });
  std::vector<double> xs = random_values(1025, 4), ys = random_values(1025, 5);
  Handle a = c.upload(xs), b = c.upload(ys), out = c.upload(std::vector<double>(1025, -1.0));
  launch_reference(reference_kernels(), t.entry, c, {a, b, out}, Grid{8, 1, 1});
  std::vector<double> got = c.read<double>(out);
  for (size_t i = 0; i < 1024; ++i) ASSERT_EQ(got[i], xs[i] + ys[i]) << i;
  EXPECT_EQ(got[1024], -1.0);
}

// Seed 04's softmax with a sentinel past the extent, through the registry's reference and through
// the seed's own contract written with last_out.
TEST(TileReference, SoftmaxKeepsTheSentinel) {
  Client c = Device::cpu().client();
  Traced t = testing::softmax_program();
  const std::vector<double> want = {0.09003057317038043, 0.24472847105479767, 0.6652409557748218, 9.0};
  References seeds = reference_kernels();
  seeds.add("softmax", 2, last_out([](std::span<const HostBuffer> in, HostBuffer& out) {
              const size_t n = 3;
              double m = in[0].get(0), total = 0;
              for (size_t i = 1; i < n; ++i) m = std::max(m, in[0].get(i));
              for (size_t i = 0; i < n; ++i) total += std::exp(in[0].get(i) - m);
              for (size_t i = 0; i < n; ++i) out.set(i, std::exp(in[0].get(i) - m) / total);
            }));
  for (const References& refs : {reference_kernels(), seeds}) {
    Handle x = c.upload(std::vector<double>{1, 2, 3, 0}), out = c.upload(std::vector<double>{9, 9, 9, 9});
    FakeDevice fake(refs);
    t.entry.launch(c, {x, out});
    std::vector<double> got = c.read<double>(out);
    for (size_t i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(got[i], want[i]) << i;
    EXPECT_EQ(got[3], 9.0);
  }
}

TEST(TileReference, MissingReference) {
  Client c = Device::cpu().client();
  Traced t = testing::col_sum_program();
  Handle x = c.upload(random_values(16 * 32, 6)), out = c.upload(std::vector<double>(32, 5.0));
  Error e = expect_error([&] { launch_reference(reference_kernels(), t.entry, c, {x, out}); }, "reference.missing");
  EXPECT_EQ(
      e.message(),
      "kernel `col_sum`: no reference is registered under this name (registered: flash_attn, flash_attn_bf16, matmul, "
      "row_softmax, softmax, transpose, vadd)");
  Error none = expect_error([&] { check(References{}, t.entry, c, {x, out}); }, "reference.missing");
  EXPECT_EQ(none.message(), "kernel `col_sum`: no reference is registered under this name (none are registered)");
  EXPECT_EQ(c.read<double>(out), std::vector<double>(32, 5.0));
}

TEST(TileReference, ReadingABufferAsAnotherType) {
  Client c = Device::cpu().client();
  References wrong;
  wrong.add("vadd", 3, last_out([](std::span<const HostBuffer> in, HostBuffer&) { (void)in[0].as<float>(); }));
  Traced t = testing::vadd_program(7);
  Handle a = c.upload(std::vector<double>(7, 1.0)), out = c.upload(std::vector<double>(7, 0.0));
  Handle b = c.upload(std::vector<double>(7, 1.0));
  Error e = expect_error([&] { launch_reference(wrong, t.entry, c, {a, b, out}); }, "reference.type_mismatch");
  EXPECT_EQ(e.message(), "kernel `vadd`: argument 0 (In) holds f64 and the reference reads it as f32");
}

// ---- check mode ------------------------------------------------------------------------------------

// Seed 04's flash attention (examples/tile_flash_attention.cpp), at a size the CPU runs quickly,
// pipelined as the benchmark runs it: the key tile, used transposed as the first product's b,
// stays in its ring as loaded and is read as columns (the example runs the loop unpipelined).
constexpr uint32_t kSeq = 128, kDim = 64, kBlock = 64;

template <class T>
void flash_attn(Param<T> q, Param<T> k, Param<T> v, Param<float> out) {
  const double scale = 1.0 / std::sqrt(double(kDim));
  Tile<T> qt = load_cell(q);
  Var<float> m = full<float>({kBlock, 1}, -INFINITY);
  Var<float> l = zeros<float>({kBlock, 1});
  Var<float> acc = zeros<float>({kBlock, kDim});
  For(d_range(0, kSeq / kBlock).prefetch_stages(2), [&](Index j) {
    Tile<T> kt = load_at(k, {j, 0});
    Tile<float> s = mma(qt, kt.transpose(), zeros<float>({kBlock, kBlock})) * scale;
    Tile<float> m_new = max(m.get(), reduce_max(s, {.keepdims = true}));
    Tile<float> p = exp(s - m_new);
    Tile<float> alpha = exp(m.get() - m_new);
    l = l.get() * alpha + reduce_sum(p, {.keepdims = true});
    acc = mma(p.to<T>(), load_at(v, {j, 0}), acc.get() * alpha);
    m = m_new;
  });
  store_cell(out, acc.get() / l.get());
}

template <class T>
Traced flash_attn_program(const char* name) {
  Cells rows = cells({kSeq, kDim}, {kBlock, kDim});
  Cells keys = cells({kSeq, kDim}, {kBlock, kDim}).along({free_axis, 1});
  return trace(name, In<T>(rows), In<T>(keys), In<T>(keys), Out<float>(rows), flash_attn<T>);
}

// The example kernels by the name they are registered under (more than one program for some).
std::multimap<std::string, std::function<Traced()>> example_programs() {
  return {
      {"vadd", [] { return testing::vadd_program(1000); }},
      {"vadd", [] { return testing::vadd_program(7); }},
      {"softmax", testing::softmax_program},
      {"row_softmax", [] { return testing::row_softmax_program(256); }},
      {"row_softmax", [] { return testing::row_softmax_program(100); }},
      {"transpose", testing::transpose_program},
      {"matmul", testing::matmul_program},
      {"flash_attn", [] { return flash_attn_program<float>("flash_attn"); }},
      {"flash_attn_bf16", [] { return flash_attn_program<bf16>("flash_attn_bf16"); }},
  };
}

Handle upload_as(const Client& c, ir::Scalar s, const std::vector<double>& v) {
  return ir::visit_scalar(s, [&]<class T>() -> Handle {
    if constexpr (!ir::is_float_type<T>) {
      throw Error("test.unsupported", "upload_as: " + std::string(ir::scalar_name(s)));
    } else {
      std::vector<T> out;
      for (double d : v) out.push_back(T(d));
      return c.upload(out);
    }
  });
}

int64_t elements(const Cells& c) {
  int64_t n = 1;
  for (int64_t e : c.extent()) n *= e;
  return n;
}

// Random inputs over each In's extent; each Out one poisoned element longer than its extent (the
// kernel must leave it); a Shared as large as the first In (transpose writes all of it, permuted).
std::vector<Handle> buffers_for(const Client& c, const Program& p, uint32_t seed) {
  std::vector<Handle> h;
  int64_t first_in = 0;
  for (const ParamDecl& d : p.params()) {
    if (d.role == Role::In) {
      if (first_in == 0) first_in = elements(*d.cells);
      h.push_back(upload_as(c, d.element, random_values(size_t(elements(*d.cells)), seed++)));
    } else {
      int64_t n = d.cells ? elements(*d.cells) + 1 : first_in;
      h.push_back(upload_as(c, d.element, std::vector<double>(size_t(n), 12345.0)));
    }
  }
  return h;
}

TEST(TileReference, EveryExampleKernelAgreesOnEveryDevice) {
  References refs = reference_kernels();
  auto programs = example_programs();
  for (const std::string& name : refs.names()) {
    EXPECT_TRUE(programs.count(name) > 0) << "no program checks the reference of `" << name << "`";
  }
  for (const Device& dev : devices()) {
    Client c = dev.client();
    for (const auto& [name, make] : programs) {
      Traced t = make();
      std::vector<Handle> h = buffers_for(c, *t.program, 17);
      std::optional<Grid> grid;
      if (!t.program->grid()) grid = Grid{4, 2, 1};  // transpose: 4 x 2 cells of its In
      CheckReport r = check(refs, t.entry, c, h, grid);
      EXPECT_TRUE(r.pass()) << r.text();
      EXPECT_EQ(r.outputs.size(), 1u) << name;
      EXPECT_EQ(r.device, dev.name());
    }
  }
}

// A wrong reference fails, and the report names the index and both values; the caller's buffers
// hold the kernel's answer.
TEST(TileReference, CheckCatchesAWrongReference) {
  References off_by_one;
  off_by_one.add("vadd", 3, last_out([](std::span<const HostBuffer> in, HostBuffer& out) {
                   for (size_t i = 0; i < 1000; ++i) out.set(i, in[0].get(i) + in[1].get(i) + (i == 17 ? 1.0 : 0.0));
                 }));
  Traced t = testing::vadd_program(1000);
  for (const Device& dev : devices()) {
    Client c = dev.client();
    std::vector<double> xs(1000), ys(1000, 0.5);
    for (size_t i = 0; i < xs.size(); ++i) xs[i] = double(i);
    Handle a = c.upload(xs), b = c.upload(ys), out = c.upload(std::vector<double>(1000, 0.0));
    CheckReport r = check(off_by_one, t.entry, c, {a, b, out});
    ASSERT_EQ(r.outputs.size(), 1u);
    const OutputCheck& o = r.outputs[0];
    EXPECT_FALSE(r.pass());
    EXPECT_EQ(o.param, 2u);
    EXPECT_EQ(o.mismatches, 1u);
    EXPECT_EQ(o.first_mismatch, std::optional<size_t>(17));
    EXPECT_EQ(o.device_value, 17.5);
    EXPECT_EQ(o.reference_value, 18.5);
    EXPECT_EQ(o.max_abs_error, 1.0);
    EXPECT_EQ(r.text(),
              "kernel `vadd` on " + dev.name() +
                  ": argument 2 (Out) f64, 1000 element(s): FAIL, 1 mismatch(es), first at index 17: device 17.5, "
                  "reference 18.5; max abs error 1, max rel error 0.0541 (tolerance 1e-12 + 1e-12 x |reference|)\n");
    std::vector<double> got = c.read<double>(out);
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], xs[i] + ys[i]) << i;
    // Inside a FakeDevice scope too, the check runs the kernel, not the reference.
    {
      FakeDevice fake(off_by_one);
      EXPECT_FALSE(check(off_by_one, t.entry, c, {a, b, out}).pass());
    }
    // A tolerance that admits the difference passes.
    EXPECT_TRUE(check(off_by_one, t.entry, c, {a, b, out}, std::nullopt, Tolerance{0, 1.0}).pass());
  }
}

// The comparison covers the whole buffer: a reference (or kernel) that writes past the extent fails.
TEST(TileReference, CheckComparesTheWholeBuffer) {
  References refs = reference_kernels();
  Client c = Device::cpu().client();
  Traced t = testing::vadd_program(7);
  Handle a = c.upload(random_values(7, 8)), b = c.upload(random_values(7, 9));
  Handle out = c.upload(std::vector<double>(8, 3.0));
  References tail_writer;
  tail_writer.add("vadd", 3, last_out([](std::span<const HostBuffer> in, HostBuffer& out) {
                    for (size_t i = 0; i < 7; ++i) out.set(i, in[0].get(i) + in[1].get(i));
                    out.set(7, 4.0);
                  }));
  CheckReport r = check(tail_writer, t.entry, c, {a, b, out});
  EXPECT_FALSE(r.pass());
  EXPECT_EQ(r.outputs[0].first_mismatch, std::optional<size_t>(7));
  EXPECT_EQ(r.outputs[0].device_value, 3.0);
  EXPECT_TRUE(check(refs, t.entry, c, {a, b, out}).pass());
}

}  // namespace
}  // namespace kiln::tile
