// The run-time launch entry: a kernel picked at run time (a dtype from a table) with its
// arguments as a list shares launch<K>'s results and compile-cache entry; a program recorded at
// run time launches, its id holds its content hash, an equal program hits the cache and another
// does not; every error of the entry is a kiln::Error of a stable kind that leaves buffers as they
// were.
#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "kiln/kiln.h"
#include "runtime/device_state.h"
#include "runtime/launch_binding.h"
#include "support/expect_error.h"

using namespace kiln;
using test::expect_error;

namespace {

// y = a * x + y (or its negation), a vector of F per unit.
template <class F>
struct Axpy {
  static constexpr std::string_view name = "rt_axpy";
  static constexpr std::array<std::string_view, 4> param_names{"a", "x", "y", "negate"};
  void operator()(Scalar<F> a, Slice<const Vector<F>> x, Slice<Vector<F>> y, Comptime<bool> negate) const {
    If(absolute_pos() < y.len(), [&] {
      Vector<F> v = Vector<F>(a.get()) * x[absolute_pos()] + y[absolute_pos()];
      if (negate) y[absolute_pos()] = -v;
      else y[absolute_pos()] = v;
    });
  }
};

// What the tensor library will hold per dtype: the kernel to launch and how to move data. The
// launch path below picks an entry by a run-time value and never names a template instantiation.
enum class DType { F32, F64 };
struct DTypeEntry {
  KernelRef axpy;
  Handle (*upload)(const Client&, const std::vector<double>&);
  std::vector<double> (*read)(const Client&, const Handle&);
};
template <class F>
DTypeEntry entry_for() {
  return DTypeEntry{
      kernel_ref<Axpy<F>>(),
      [](const Client& c, const std::vector<double>& v) { return c.upload(std::vector<F>(v.begin(), v.end())); },
      [](const Client& c, const Handle& h) {
        std::vector<F> got = c.read<F>(h);
        return std::vector<double>(got.begin(), got.end());
      }};
}
const DTypeEntry& dtype_entry(DType d) {
  static const std::array<DTypeEntry, 2> table{entry_for<float>(), entry_for<double>()};
  return table[size_t(d)];
}

runtime::KernelCache& cpu_cache() { return Device::cpu().state()->cache; }

// The id a launch gets, through the runtime's one binding function.
KernelId id_of(const Client& c, const KernelRef& k, const LaunchConfig& cfg, std::initializer_list<Arg> args) {
  runtime::Bindings bound;
  return runtime::bind_launch(*c.state(), k, cfg, std::span<const Arg>(args.begin(), args.size()), bound);
}

std::vector<double> ramp(size_t n, double start, double step) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * double(i);
  return v;
}

TEST(RuntimeLaunch, DtypeChosenAtRunTimeSharesLaunchKsResultsAndCacheEntry) {
  Client c = Device::cpu().client();
  const size_t n = 40;  // ten vectors of 4
  const std::vector<double> xs = ramp(n, -3, 0.25), ys = ramp(n, 7, -0.5);
  const LaunchConfig cfg{CubeCount{1}, CubeDim{16}, 4};
  for (DType dtype : {DType::F32, DType::F64}) {
    const DTypeEntry& e = dtype_entry(dtype);
    Handle x = e.upload(c, xs), y_typed = e.upload(c, ys), y_list = e.upload(c, ys);
    // launch<K>, the typed front, first (this test is the only one to launch these kernels).
    uint64_t before = c.stats().compilations;
    if (dtype == DType::F32) launch<Axpy<float>>(c, cfg.count, cfg.dim, 4, 2.5f, x, y_typed, comptime(false));
    else launch<Axpy<double>>(c, cfg.count, cfg.dim, 4, 2.5, x, y_typed, comptime(false));
    EXPECT_EQ(c.stats().compilations - before, 1u);
    const KernelId typed = id_of(c, dtype == DType::F32 ? kernel_ref<Axpy<float>>() : kernel_ref<Axpy<double>>(), cfg,
                                 {ScalarValue::of(2.5), x, y_typed, comptime(false)});
    runtime::CacheEntry* entry = cpu_cache().find(typed);
    ASSERT_NE(entry, nullptr);
    const uint64_t launches = entry->launches.load();

    // The run-time path: the entry by dtype, the arguments as a list, `a` a tagged f64.
    launch(c, e.axpy, cfg, {ScalarValue::of(2.5), x, y_list, comptime(false)});
    EXPECT_EQ(c.stats().compilations - before, 1u) << "the list launch compiled again";
    EXPECT_EQ(entry->launches.load(), launches + 1) << "the list launch used another cache entry";
    const KernelId listed = id_of(c, e.axpy, cfg, {ScalarValue::of(2.5), x, y_list, comptime(false)});
    EXPECT_TRUE(listed == typed) << listed.to_string() << " vs " << typed.to_string();
    EXPECT_EQ(cpu_cache().find(listed), entry);

    std::vector<double> want(n);
    for (size_t i = 0; i < n; ++i) want[i] = 2.5 * xs[i] + ys[i];
    EXPECT_EQ(e.read(c, y_list), e.read(c, y_typed));
    EXPECT_EQ(e.read(c, y_list), want) << "exact in both f32 and f64 for these values";

    // Another comptime value is another id, from either path.
    launch(c, e.axpy, cfg, {2.5, x, y_list, comptime(true)});
    EXPECT_EQ(c.stats().compilations - before, 2u);
  }
  // The two dtypes are two kernels of one name.
  EXPECT_NE(*dtype_entry(DType::F32).axpy.signature().type, *dtype_entry(DType::F64).axpy.signature().type);
}

// A program recorded at run time with the tracer (no C++ kernel type): y = x * factor + bias,
// `factor` baked in as a constant, `bias` a run-time scalar.
ir::Kernel record_scale(float factor) {
  ir::Kernel k;
  k.name = "recorded_scale";
  dsl::Tracer t(k);
  Slice<const float> x(t.param("x", ir::Type::buffer(ir::Type::scalar_of(ir::Scalar::F32), ir::Access::ReadOnly)));
  Slice<float> y(t.param("y", ir::Type::buffer(ir::Type::scalar_of(ir::Scalar::F32), ir::Access::ReadWrite)));
  Scalar<float> bias(t.param("bias", ir::Type::scalar_of(ir::Scalar::F32)));
  If(absolute_pos() < y.len(), [&] { y[absolute_pos()] = x[absolute_pos()] * factor + bias.get(); });
  t.finish();
  return k;
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

TEST(RuntimeLaunch, RecordedProgramLaunchesAndIsCachedByItsContent) {
  Client c = Device::cpu().client();
  const std::vector<float> xs{1, 2, 3, 4, 5, 6, 7};
  Handle x = c.upload(xs);
  const LaunchConfig cfg{CubeCount{1}, CubeDim{8}};
  KernelRef twice = kernel_ref(record_scale(2.0f));
  KernelRef twice_again = kernel_ref(record_scale(2.0f));  // recorded apart, equal
  KernelRef thrice = kernel_ref(record_scale(3.0f));
  ASSERT_NE(twice.program(), nullptr);
  EXPECT_NE(twice.program(), twice_again.program());
  EXPECT_EQ(twice.program()->text(), twice_again.program()->text());
  EXPECT_EQ(twice.program()->content_hash(), twice_again.program()->content_hash());
  EXPECT_NE(twice.program()->content_hash(), thrice.program()->content_hash());

  uint64_t before = c.stats().compilations;
  Handle y = c.empty<float>(xs.size());
  launch(c, twice, cfg, {x, y, 0.5f});
  EXPECT_EQ(c.read<float>(y), (std::vector<float>{2.5f, 4.5f, 6.5f, 8.5f, 10.5f, 12.5f, 14.5f}));
  EXPECT_EQ(c.stats().compilations - before, 1u);

  KernelId id = id_of(c, twice, cfg, {x, y, 0.5f});
  EXPECT_EQ(id.program, twice.program().get());
  EXPECT_EQ(id.kernel_hash, twice.program()->content_hash());
  EXPECT_EQ(id.type, nullptr);
  EXPECT_NE(id.to_string().find("kernel_hash=" + hex(twice.program()->content_hash())), std::string::npos)
      << id.to_string();
  runtime::CacheEntry* entry = cpu_cache().find(id);
  ASSERT_NE(entry, nullptr);

  // The equal program, recorded apart: the same cache entry, no compile.
  Handle y2 = c.empty<float>(xs.size());
  launch(c, twice_again, cfg, {x, y2, -1.0});
  EXPECT_EQ(c.stats().compilations - before, 1u);
  EXPECT_EQ(cpu_cache().find(id_of(c, twice_again, cfg, {x, y2, -1.0})), entry);
  EXPECT_EQ(c.read<float>(y2), (std::vector<float>{1, 3, 5, 7, 9, 11, 13}));

  // Another program: another id and a compile.
  Handle y3 = c.empty<float>(xs.size());
  launch(c, thrice, cfg, {x, y3, 0.0f});
  EXPECT_EQ(c.stats().compilations - before, 2u);
  KernelId other = id_of(c, thrice, cfg, {x, y3, 0.0f});
  EXPECT_FALSE(other == id);
  EXPECT_NE(cpu_cache().find(other), entry);
  EXPECT_EQ(c.read<float>(y3), (std::vector<float>{3, 6, 9, 12, 15, 18, 21}));

  // The launch supplies the facts: another cube dim and the unchecked mode are other ids of the
  // same program.
  launch(c, twice, LaunchConfig{CubeCount{2}, CubeDim{4}, 1, ir::ExecMode::Unchecked}, {x, y, 0.0f});
  EXPECT_EQ(c.stats().compilations - before, 3u);
  EXPECT_EQ(c.read<float>(y), (std::vector<float>{2, 4, 6, 8, 10, 12, 14}));

  // The cache keeps the program it compiled, so its id stays valid after every reference goes,
  // and a tool can define the kernel again from the cache.
  const Program* kept = twice.program().get();
  twice = thrice;
  bool found = false;
  for (const auto& [cached_id, ref] : cpu_cache().kernels()) {
    if (cached_id.program != kept) continue;
    found = true;
    EXPECT_EQ(ref(cached_id).name, "recorded_scale");
  }
  EXPECT_TRUE(found);
  launch(c, twice_again, cfg, {x, y2, 0.0f});
  EXPECT_EQ(c.stats().compilations - before, 3u);
}

TEST(RuntimeLaunch, AKernelTracedOnceRunsAsAProgram) {
  // The tracer's output for a C++ kernel is a program like any other: its text drops the facts it
  // was traced with, so the launch's cube dim decides.
  LaunchFacts facts{{64, 1, 1}};
  std::vector<ParamDesc> d = param_descs<Axpy<float>>(1);
  d[3].comptime = comptime_bits(true);
  KernelRef traced = kernel_ref(define<Axpy<float>>(kernel_id<Axpy<float>>(facts, d)));
  EXPECT_EQ(traced.signature().count, 3) << "the comptime value is baked in";
  // Traced for another cube dim (which this body does not read): the same program.
  KernelRef traced32 = kernel_ref(define<Axpy<float>>(kernel_id<Axpy<float>>(LaunchFacts{{32, 1, 1}}, d)));
  EXPECT_EQ(traced32.program()->text(), traced.program()->text());
  EXPECT_EQ(traced.program()->text().find("cube_dim = [64"), std::string::npos) << traced.program()->text();
  Client c = Device::cpu().client();
  Handle x = c.upload(std::vector<float>{1, 2, 3}), y = c.upload(std::vector<float>{10, 20, 30});
  launch(c, traced, LaunchConfig{CubeCount{1}, CubeDim{4}}, {2.0f, x, y});
  EXPECT_EQ(c.read<float>(y), (std::vector<float>{-12, -24, -36}));
}

// ---- errors ------------------------------------------------------------------------------------

struct Scale {
  static constexpr std::string_view name = "rt_scale";
  static constexpr std::array<std::string_view, 4> param_names{"a", "x", "y", "mode"};
  enum class Mode : int { Plain, Twice };
  void operator()(Scalar<float> a, Slice<const float> x, Slice<float> y, Comptime<Mode> mode) const {
    If(absolute_pos() < x.len(), [&] {
      Expr<float> v = a * x[absolute_pos()];
      y[absolute_pos()] = mode == Mode::Twice ? v + v : v;
    });
  }
};
enum class OtherEnum : int { A };

struct Narrow {
  static constexpr std::string_view name = "rt_narrow";
  void operator()(Slice<uint8_t> out, Scalar<uint8_t> v, Comptime<uint8_t> c) const {
    out[0u] = v.get() + Expr<uint8_t>(c.get());
  }
};

// Keeps a buffer's bytes to check that a failed launch did not touch it.
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

const KernelRef& scale_ref() {
  static const KernelRef r = kernel_ref<Scale>();
  return r;
}

TEST(RuntimeLaunchErrors, Arity) {
  Client c = Device::cpu().client();
  Watched x(c, 16, 1), y(c, 16, -7);
  const LaunchConfig cfg{CubeCount{1}, CubeDim{16}};
  Error e = expect_error([&] { launch(c, scale_ref(), cfg, {2.0f, x.handle, y.handle}); }, "launch.arity");
  EXPECT_EQ(e.message(),
            "kernel 'rt_scale' takes 4 arguments (a: Scalar<f32>, x: Slice<const f32>, y: Slice<f32>, "
            "mode: Comptime<enum>), 3 were given");
  expect_error(
      [&] {
        launch(c, scale_ref(), cfg, {2.0f, x.handle, y.handle, comptime(Scale::Mode::Plain), 1.0f});
      },
      "launch.arity");
  y.expect_unchanged();
}

TEST(RuntimeLaunchErrors, KindMismatch) {
  Client c = Device::cpu().client();
  Watched x(c, 16, 1), y(c, 16, -7);
  const LaunchConfig cfg{CubeCount{1}, CubeDim{16}};
  const auto mode = comptime(Scale::Mode::Plain);
  Error e = expect_error([&] { launch(c, scale_ref(), cfg, {2.0f, 3.0f, y.handle, mode}); }, "launch.kind_mismatch");
  EXPECT_EQ(e.message(),
            "kernel 'rt_scale', argument 1 (x: Slice<const f32>): a f32 value was given; the parameter "
            "takes a Handle");
  e = expect_error([&] { launch(c, scale_ref(), cfg, {x.handle, x.handle, y.handle, mode}); }, "launch.kind_mismatch");
  EXPECT_NE(e.message().find("argument 0 (a: Scalar<f32>): a Handle was given; the parameter takes a number"),
            std::string::npos)
      << e.message();
  e = expect_error([&] { launch(c, scale_ref(), cfg, {2.0f, x.handle, y.handle, 1}); }, "launch.kind_mismatch");
  EXPECT_NE(e.message().find("argument 3 (mode: Comptime<enum>): a i32 value was given; the parameter takes "
                             "comptime(value)"),
            std::string::npos)
      << e.message();
  TensorBinding t = tensor_arg(x.handle, {16}, {1});
  expect_error([&] { launch(c, scale_ref(), cfg, {2.0f, t, y.handle, mode}); }, "launch.kind_mismatch");
  expect_error(
      [&] {
        launch(c, scale_ref(), cfg, {comptime(2.0f), x.handle, y.handle, mode});
      },
      "launch.kind_mismatch");
  y.expect_unchanged();
}

// The element type chosen at run time must be the parameter's: the same check, and the same
// message, as launch<K>.
TEST(RuntimeLaunchErrors, WrongDtypeIsATypeMismatchWithLaunchKsMessage) {
  Client c = Device::cpu().client();
  Watched y(c, 16, -7);
  Handle doubles = c.upload(std::vector<double>(16, 1.0));
  const auto mode = comptime(Scale::Mode::Plain);
  Error listed = expect_error(
      [&] {
        launch(c, scale_ref(), LaunchConfig{CubeCount{1}, CubeDim{16}}, {2.0f, doubles, y.handle, mode});
      },
      "launch.type_mismatch");
  Error typed = expect_error([&] { launch<Scale>(c, CubeCount{1}, CubeDim{16}, 1, 2.0f, doubles, y.handle, mode); },
                             "launch.type_mismatch");
  EXPECT_EQ(listed.message(), typed.message());
  EXPECT_NE(listed.message().find("kernel 'rt_scale', argument 1 (x: Slice<const f32>): the handle holds f64 elements, "
                                  "the parameter takes f32"),
            std::string::npos)
      << listed.message();
  // A dtype table entry of the wrong dtype for the data is refused the same way.
  Handle floats = c.upload(std::vector<float>(8, 1.0f)), out = c.empty<float>(8);
  const KernelRef& f64 = dtype_entry(DType::F64).axpy;
  expect_error(
      [&] {
        launch(c, f64, LaunchConfig{CubeCount{1}, CubeDim{8}}, {1.0, floats, out, comptime(false)});
      },
      "launch.type_mismatch");
  y.expect_unchanged();
}

TEST(RuntimeLaunchErrors, ValuesThatDoNotFitAreBadArguments) {
  Client c = Device::cpu().client();
  Handle out = c.upload(std::vector<uint8_t>{42});
  const KernelRef narrow = kernel_ref<Narrow>();
  const LaunchConfig cfg{CubeCount{1}, CubeDim{1}};
  Error e = expect_error([&] { launch(c, narrow, cfg, {out, 300, comptime(uint8_t(1))}); }, "launch.bad_argument");
  EXPECT_NE(e.message().find("argument 1 (arg1: Scalar<u8>): a i32 value was given, and it does not convert"),
            std::string::npos)
      << e.message();
  expect_error([&] { launch(c, narrow, cfg, {out, 2.5, comptime(uint8_t(1))}); }, "launch.bad_argument");
  expect_error([&] { launch(c, narrow, cfg, {out, true, comptime(uint8_t(1))}); }, "launch.bad_argument");
  e = expect_error([&] { launch(c, narrow, cfg, {out, 1, comptime(300)}); }, "launch.bad_argument");
  EXPECT_NE(e.message().find("argument 2 (arg2: Comptime<u8>): a comptime value was given, and its value does not fit"),
            std::string::npos)
      << e.message();
  e = expect_error(
      [&] {
        launch(c, narrow, cfg, {out, 1, Arg::comptime_value(ScalarValue::of(-1))});
      },
      "launch.bad_argument");
  EXPECT_EQ(c.read<uint8_t>(out), std::vector<uint8_t>{42});
  // Values that fit convert, whatever their type: 200 as an i64, 3 as a double.
  launch(c, narrow, cfg, {out, int64_t(200), Arg::comptime_value(ScalarValue::of(3.0))});
  EXPECT_EQ(c.read<uint8_t>(out), std::vector<uint8_t>{203});

  // An enum comptime takes a value of its own enum type only.
  Watched x(c, 4, 1), y(c, 4, -7);
  e = expect_error(
      [&] {
        launch(c, scale_ref(), LaunchConfig{CubeCount{1}, CubeDim{4}},
               {1.0f, x.handle, y.handle, comptime(OtherEnum::A)});
      },
      "launch.bad_argument");
  EXPECT_NE(e.message().find("a comptime value of an enum type was given; the parameter takes a value of its own enum "
                             "type"),
            std::string::npos)
      << e.message();
  expect_error(
      [&] {
        launch(c, scale_ref(), LaunchConfig{CubeCount{1}, CubeDim{4}}, {1.0f, x.handle, y.handle, comptime(0)});
      },
      "launch.bad_argument");
  const auto plain = comptime(Scale::Mode::Plain), twice = comptime(Scale::Mode::Twice);
  const LaunchConfig width3{CubeCount{1}, CubeDim{4}, 3};
  expect_error([&] { launch(c, scale_ref(), width3, {1.0f, x.handle, y.handle, plain}); }, "launch.bad_argument");
  y.expect_unchanged();
  launch(c, scale_ref(), LaunchConfig{CubeCount{1}, CubeDim{4}}, {1.0f, x.handle, y.handle, twice});
  EXPECT_EQ(c.read<float>(y.handle), (std::vector<float>{2.0f, 2.5f, 3.0f, 3.5f}));
}

TEST(RuntimeLaunchErrors, HandlesAndDims) {
  Client c = Device::cpu().client(), other = Device::cpu().client();
  Watched x(c, 16, 1), y(c, 16, -7), foreign(other, 16, 3);
  const auto mode = comptime(Scale::Mode::Plain);
  const LaunchConfig cfg{CubeCount{1}, CubeDim{16}};
  Handle empty;
  Error e = expect_error([&] { launch(c, scale_ref(), cfg, {2.0f, x.handle, empty, mode}); }, "handle.invalid");
  EXPECT_NE(e.message().find("argument 2 (y: Slice<f32>): the handle is empty"), std::string::npos) << e.message();
  e = expect_error(
      [&] {
        launch(c, scale_ref(), cfg, {2.0f, x.handle, foreign.handle, mode});
      },
      "launch.foreign_handle");
  EXPECT_NE(e.message().find("argument 2"), std::string::npos) << e.message();
  const LaunchConfig too_big{CubeCount{1}, CubeDim{4096}};
  e = expect_error([&] { launch(c, scale_ref(), too_big, {2.0f, x.handle, y.handle, mode}); }, "launch.bad_dims");
  EXPECT_NE(e.message().find("cube dim (4096, 1, 1) has 4096 units"), std::string::npos) << e.message();
  x.expect_unchanged();
  y.expect_unchanged();
  foreign.expect_unchanged();
}

TEST(RuntimeLaunchErrors, ProgramsCheckTheirFixedParameterTypes) {
  Client c = Device::cpu().client();
  KernelRef p = kernel_ref(record_scale(2.0f));
  Watched x(c, 8, 1), y(c, 8, -7);
  const LaunchConfig cfg{CubeCount{1}, CubeDim{8}};
  Error e = expect_error([&] { launch(c, p, cfg, {x.handle, y.handle, comptime(1.0f)}); }, "launch.kind_mismatch");
  EXPECT_NE(e.message().find("kernel 'recorded_scale', argument 2 (bias: f32): a comptime value was given"),
            std::string::npos)
      << e.message();
  Handle ints = c.upload(std::vector<int32_t>(8, 1));
  e = expect_error([&] { launch(c, p, cfg, {ints, y.handle, 1.0f}); }, "launch.type_mismatch");
  EXPECT_NE(e.message().find("argument 0 (x: buffer<f32, ro>): the handle holds i32 elements"), std::string::npos)
      << e.message();
  expect_error([&] { launch(c, p, cfg, {x.handle, y.handle}); }, "launch.arity");
  y.expect_unchanged();
}

TEST(RuntimeLaunchErrors, ProgramsThatCannotLaunchAreRefusedWhenMade) {
  // A value parameter wider than a scalar: a launch binds at most 8 bytes for it.
  ir::Kernel vec;
  vec.name = "vector_param";
  {
    dsl::Tracer t(vec);
    Slice<float> y(t.param("y", ir::Type::buffer(ir::Type::scalar_of(ir::Scalar::F32), ir::Access::ReadWrite)));
    (void)t.param("v", ir::Type::vector_of(ir::Scalar::F32, 4));
    y[0u] = 1.0f;
    t.finish();
  }
  Error e = expect_error([&] { kernel_ref(std::move(vec)); }, "program.bad_params");
  EXPECT_NE(e.message().find("parameter 'v' has type vector<4 x f32>"), std::string::npos) << e.message();

  ir::Kernel many;
  many.name = "many_params";
  {
    dsl::Tracer t(many);
    for (int i = 0; i < kMaxParams + 1; ++i) {
      (void)t.param("s" + std::to_string(i), ir::Type::scalar_of(ir::Scalar::I32));
    }
    t.finish();
  }
  e = expect_error([&] { kernel_ref(std::move(many)); }, "program.bad_params");
  EXPECT_NE(e.message().find("17 parameters; a kernel takes at most 16"), std::string::npos) << e.message();

  // IR that breaks a rule is the verifier's error.
  ir::Kernel broken = record_scale(1.0f);
  broken.params[0].type = ir::Type::scalar_of(ir::Scalar::I32);
  expect_error([&] { kernel_ref(std::move(broken)); }, "ir.verify");
}

}  // namespace
