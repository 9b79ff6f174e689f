// The loop attributes vectorize and at_least_once (seed 05), run: a vectorised elementwise loop
// over trip counts around its width, from units whose ranges start at every alignment, on views
// that start one element into their memory, checked and unchecked, and checked past the end of
// its buffers; an at_least_once loop that breaks, continues and carries values; and, in checked
// mode, a broken promise (zero trips), which is loop.zero_trips on every device: raised by the
// launch on the CPU, which restores the buffers, and by the next sync or read on a GPU, through
// the client's device error word.
#include <algorithm>

#include "arith_ref.h"
#include "kiln/ir/text.h"
#include "kiln/passes/passes.h"
#include "suite_run.h"

namespace kiln::suite {
namespace {

// Unit u: y[i] = x[i] * a + x[i] for i in [u * chunk, u * chunk + m).
template <class T, int W>
struct VectorScale {
  static constexpr std::string_view name = "vector_scale";
  void operator()(Slice<const T> x, Slice<T> y, Scalar<T> a, Scalar<uint32_t> chunk, Scalar<uint32_t> m) const {
    auto lo = absolute_pos() * chunk;
    For(range(lo, lo + m).vectorize(W), [&](Expr<uint32_t> i) { y[i] = x[i] * a + x[i]; });
  }
};

// Unit u: y[i] = x[i + 1] - x[i] for i in [u * chunk, u * chunk + m): a constant offset.
template <class T, int W>
struct VectorDiff {
  static constexpr std::string_view name = "vector_diff";
  void operator()(Slice<const T> x, Slice<T> y, Scalar<uint32_t> chunk, Scalar<uint32_t> m) const {
    auto lo = absolute_pos() * chunk;
    For(range(lo, lo + m).vectorize(W), [&](Expr<uint32_t> i) { y[i] = x[i + 1u] - x[i]; });
  }
};

// As VectorScale, with the loop also promised a trip.
template <class T, int W>
struct VectorScaleOnce {
  static constexpr std::string_view name = "vector_scale_once";
  void operator()(Slice<const T> x, Slice<T> y, Scalar<T> a, Scalar<uint32_t> chunk, Scalar<uint32_t> m) const {
    auto lo = absolute_pos() * chunk;
    For(range(lo, lo + m).vectorize(W).at_least_once(), [&](Expr<uint32_t> i) { y[i] = x[i] * a + x[i]; });
  }
};

// acc sums x[(i + j) % len] over j < count[i], skipping j % 3 == 1 (Continue) and stopping once
// acc > limit (Break, recording j); the loop is promised a trip.
template <class T>
struct AtLeastOnceSum {
  static constexpr std::string_view name = "at_least_once_sum";
  void operator()(Slice<const T> x, Slice<const uint32_t> count, Scalar<T> limit, Slice<T> acc_out,
                  Slice<uint32_t> stop_out) const {
    auto i = absolute_pos();
    If(i < count.len(), [&] {
      Var<T> acc = T(0);
      Var<uint32_t> stop = 0xffffffffu;
      For(range(0u, count[i]).at_least_once(), [&](Expr<uint32_t> j) {
        If(j % 3u == 1u, [&] { Continue(); });
        acc = acc + x[(i + j) % x.len()];
        If(acc > limit, [&] {
          stop = j;
          Break();
        });
      });
      acc_out[i] = acc;
      stop_out[i] = stop;
    });
  }
};

constexpr uint32_t kUnits = 3;

template <class T>
T scale_ref(T x, T a) {
  return ref::add(ref::mul(x, a), x);
}

template <class T>
std::vector<T> inputs(std::mt19937_64& rng, size_t n) {
  if constexpr (is_float_v<T>) return random_values<T>(rng, n, -100, 100);
  else return random_any<T>(rng, n);
}

// Launches K over kUnits units on x and y views of n elements that start `offset` elements into
// their memory (y's first `offset` elements and everything past the view are poison that must
// stay), and checks y against the reference for the elements [u * chunk, u * chunk + m) of the
// view that lie inside it.
template <class K, class T>
void run_scale(Client& client, std::mt19937_64& rng, uint32_t chunk, uint32_t m, size_t n, size_t offset, size_t tail,
               bool checked) {
  std::vector<T> x = inputs<T>(rng, offset + n + tail);
  T a = inputs<T>(rng, 1)[0];
  const size_t b = sizeof(host_t<T>);
  Handle hx = client.upload(x), hy = poisoned_elems<T>(client, offset + n + tail);
  Handle vx = hx.offset_start(offset * b).offset_end(tail * b), vy = hy.offset_start(offset * b).offset_end(tail * b);
  if (checked) {
    launch<K>(client, CubeCount{1}, CubeDim{kUnits}, 1, vx, vy, a, chunk, m);
  } else {
    launch_unchecked<K>(client, CubeCount{1}, CubeDim{kUnits}, 1, vx, vy, a, chunk, m);
  }
  std::vector<T> want = poison_vector<T>(offset + n + tail);
  for (uint32_t u = 0; u < kUnits; ++u) {
    for (size_t i = size_t(u) * chunk; i < size_t(u) * chunk + m && i < n; ++i)
      want[offset + i] = scale_ref(x[offset + i], a);
  }
  expect_near(std::string(checked ? "checked" : "unchecked") + " y, view from element " + std::to_string(offset), want,
              client.read<host_t<T>>(hy), tol_arith<T>());
}

template <class T, int W>
void register_vectorize() {
  // Trip counts around the width (W - 1 is 1 for W = 2); chunk = m + 1 starts each unit's range
  // at another alignment.
  std::vector<uint32_t> counts{0u, 1u, uint32_t(W - 1), uint32_t(W), uint32_t(W + 1), 1000u};
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  for (uint32_t m : counts) {
    add_case(case_name({"vectorize", dtype_name<T>(), "w" + std::to_string(W), "m" + std::to_string(m)}),
             kernels<VectorScale<T, W>>(), [m](Client& client, std::mt19937_64& rng) {
               for (size_t offset : {0u, 1u}) {
                 for (bool checked : {true, false}) {
                   run_scale<VectorScale<T, W>, T>(client, rng, m + 1, m, size_t(kUnits) * (m + 1), offset, 0, checked);
                 }
               }
             });
  }
  // Checked, the last unit's range runs 3 elements past the views (into memory they hide): its
  // vector loop's bounds test fails, and the loop runs as it was, guarded.
  add_case(case_name({"vectorize_checked_past_the_end", dtype_name<T>(), "w" + std::to_string(W)}),
           kernels<VectorScale<T, W>>(), [](Client& client, std::mt19937_64& rng) {
             for (size_t offset : {0u, 1u}) {
               run_scale<VectorScale<T, W>, T>(client, rng, 100, 100, size_t(kUnits) * 100 - 3, offset, 3, true);
             }
           });
}

// VectorDiff over kUnits units on an x view of `nx` elements and a y view of n, both starting
// `offset` elements into their memory; checked, an x[i + 1] past the view reads 0.
template <class T, int W>
void run_diff(Client& client, std::mt19937_64& rng, uint32_t chunk, uint32_t m, size_t n, size_t nx, size_t offset,
              bool checked) {
  std::vector<T> x = inputs<T>(rng, offset + nx + 1);
  const size_t b = sizeof(host_t<T>);
  Handle hx = client.upload(x), hy = poisoned_elems<T>(client, offset + n);
  Handle vx = hx.offset_start(offset * b).offset_end(b), vy = hy.offset_start(offset * b);
  using K = VectorDiff<T, W>;
  if (checked) {
    launch<K>(client, CubeCount{1}, CubeDim{kUnits}, 1, vx, vy, chunk, m);
  } else {
    launch_unchecked<K>(client, CubeCount{1}, CubeDim{kUnits}, 1, vx, vy, chunk, m);
  }
  std::vector<T> want = poison_vector<T>(offset + n);
  for (uint32_t u = 0; u < kUnits; ++u) {
    for (size_t i = size_t(u) * chunk; i < size_t(u) * chunk + m && i < n; ++i) {
      T next = i + 1 < nx ? x[offset + i + 1] : make<T>(0);
      want[offset + i] = ref::sub(next, x[offset + i]);
    }
  }
  expect_near(std::string(checked ? "checked" : "unchecked") + " y, views from element " + std::to_string(offset), want,
              client.read<host_t<T>>(hy), tol_arith<T>());
}

template <class T, int W>
void register_vectorize_offset() {
  for (uint32_t m : {0u, uint32_t(W - 1), uint32_t(W), uint32_t(W + 1), 1000u}) {
    add_case(case_name({"vectorize_offset", dtype_name<T>(), "w" + std::to_string(W), "m" + std::to_string(m)}),
             kernels<VectorDiff<T, W>>(), [m](Client& client, std::mt19937_64& rng) {
               const size_t n = size_t(kUnits) * (m + 1);
               for (size_t offset : {0u, 1u}) {
                 for (bool checked : {true, false}) run_diff<T, W>(client, rng, m + 1, m, n, n + 1, offset, checked);
                 // Checked, x ends where y does: the last unit's x[i + 1] runs one past the view.
                 if (m > 0) run_diff<T, W>(client, rng, m, m, size_t(kUnits) * m, size_t(kUnits) * m, offset, true);
               }
             });
  }
}

template <class T>
void register_at_least_once() {
  const size_t n = 1000;
  add_case(case_name({"at_least_once_sum", dtype_name<T>(), nn(n)}), kernels<AtLeastOnceSum<T>>(),
           [=](Client& client, std::mt19937_64& rng) {
             auto x = random_values<T>(rng, n, 0, 100);
             auto count = random_values<uint32_t>(rng, n, 1, 60);  // every unit has a trip
             T limit = make<T>(1000 + rng() % 1000);
             std::vector<T> ea(n);
             std::vector<uint32_t> es(n, 0xffffffffu);
             for (size_t i = 0; i < n; ++i) {
               T acc = make<T>(0);
               for (uint32_t j = 0; j < count[i]; ++j) {
                 if (j % 3 == 1) continue;
                 acc = ref::add(acc, x[(i + j) % n]);
                 if (wide(acc) > wide(limit)) {
                   es[i] = j;
                   break;
                 }
               }
               ea[i] = acc;
             }
             for (bool checked : {true, false}) {
               Handle hx = client.upload(x), hc = client.upload(count), ha = poisoned_elems<T>(client, n),
                      hs = poisoned_elems<uint32_t>(client, n);
               if (checked) {
                 launch<AtLeastOnceSum<T>>(client, CubeCount{cubes_for(n, 64)}, CubeDim{64}, 1, hx, hc, limit, ha, hs);
               } else {
                 launch_unchecked<AtLeastOnceSum<T>>(client, CubeCount{cubes_for(n, 64)}, CubeDim{64}, 1, hx, hc, limit,
                                                     ha, hs);
               }
               std::string mode = checked ? "checked " : "unchecked ";
               expect_near(mode + "accumulated", ea, client.read<T>(ha), tol_arith<T>());
               expect_equal(mode + "break index", es, client.read<uint32_t>(hs));
             }
           });
}

// A checked launch `run` that breaks an at_least_once promise: loop.zero_trips naming the kernel,
// the loop and its bounds, from the launch (CPU) or the next read (GPU); on the CPU the buffers
// `watched` are as they were. `where` are more parts the message holds.
void expect_zero_trips(Client& client, const std::function<void()>& run, const std::string& kernel,
                       const std::vector<std::string>& where, const std::vector<Handle>& watched) {
  std::vector<std::vector<unsigned char>> before;
  for (const Handle& h : watched) before.push_back(read_all_bytes(client, h));
  try {
    run();
    client.sync();
    ADD_FAILURE() << "a checked at_least_once loop with zero trips did not fail";
  } catch (const kiln::Error& e) {
    EXPECT_EQ(e.kind(), "loop.zero_trips") << e.what();
    std::string what = e.what();
    std::vector<std::string> parts = {"kernel '" + kernel + "' (checked)", "the at_least_once loop #1", "zero trips"};
    parts.insert(parts.end(), where.begin(), where.end());
    for (const std::string& part : parts) {
      EXPECT_NE(what.find(part), std::string::npos) << "the message names " << part << ": " << what;
    }
    note_check();
  }
  if (client.runtime_name() != "cpu") return;  // a GPU kernel cannot undo its other units' writes
  for (size_t i = 0; i < watched.size(); ++i) {
    expect_same_bytes("a buffer after the failed launch", before[i], read_all_bytes(client, watched[i]));
  }
}

KILN_SUITE_CASES(loop_attributes) {
  register_vectorize<float, 4>();
  register_vectorize<float, 16>();
  register_vectorize<double, 2>();
  register_vectorize<int32_t, 8>();
  register_vectorize<uint8_t, 16>();
  register_vectorize_offset<float, 4>();
  register_vectorize_offset<int32_t, 8>();
  register_at_least_once<float>();
  register_at_least_once<int32_t>();

  // One unit's count is 0: its promise is broken. Then the client goes on: the error was reported
  // once, and the same launch with a trip for every unit gives the reference.
  add_case("at_least_once_zero_trips_checked_error", kernels<AtLeastOnceSum<int32_t>>(),
           [](Client& client, std::mt19937_64& rng) {
             const size_t n = 700;
             auto x = random_values<int32_t>(rng, n, 0, 100);
             auto count = random_values<uint32_t>(rng, n, 1, 30);
             count[437] = 0;
             Handle hx = client.upload(x), hc = client.upload(count), ha = poisoned_elems<int32_t>(client, n),
                    hs = poisoned_elems<uint32_t>(client, n);
             auto run = [&] {
               launch<AtLeastOnceSum<int32_t>>(client, CubeCount{cubes_for(n, 64)}, CubeDim{64}, 1, hx, hc, 5000, ha,
                                               hs);
             };
             expect_zero_trips(client, run, "at_least_once_sum", {"lo = 0 and hi = 0", "unit 53 of cube"}, {ha, hs});
             count[437] = 1;
             client.write(hc, count);
             run();
             std::vector<uint32_t> es(n, 0xffffffffu);
             std::vector<int32_t> ea(n);
             for (size_t i = 0; i < n; ++i) {
               int32_t acc = 0;
               for (uint32_t j = 0; j < count[i]; ++j) {
                 if (j % 3 == 1) continue;
                 acc += x[(i + j) % n];
                 if (acc > 5000) {
                   es[i] = j;
                   break;
                 }
               }
               ea[i] = acc;
             }
             expect_equal("accumulated after the error", ea, client.read<int32_t>(ha));
             expect_equal("break index after the error", es, client.read<uint32_t>(hs));
           });

  // Vectorised and promised a trip: the zero trips are found where the loop runs as it was.
  add_case("vector_at_least_once_zero_trips_checked_error", kernels<VectorScaleOnce<float, 4>>(),
           [](Client& client, std::mt19937_64& rng) {
             const size_t n = 64;
             auto x = random_values<float>(rng, n, -100, 100);
             Handle hx = client.upload(x), hy = poisoned_elems<float>(client, n);
             auto run = [&] {
               launch<VectorScaleOnce<float, 4>>(client, CubeCount{1}, CubeDim{kUnits}, 1, hx, hy, 2.0f, 0u, 0u);
             };
             expect_zero_trips(client, run, "vector_scale_once", {"lo = 0 and hi = 0"}, {hy});
             launch<VectorScaleOnce<float, 4>>(client, CubeCount{1}, CubeDim{kUnits}, 1, hx, hy, 2.0f, 20u, 19u);
             std::vector<float> want = poison_vector<float>(n);
             for (uint32_t u = 0; u < kUnits; ++u) {
               for (size_t i = u * 20; i < u * 20 + 19; ++i) want[i] = scale_ref(x[i], 2.0f);
             }
             expect_near("y after the error", want, client.read<float>(hy), tol_arith<float>());
           });

  // Unchecked, the promise is the caller's and nothing checks it; the CPU keeps the loop's test
  // (a GPU runs one iteration), so there the unit's loop runs no iteration.
  add_case_on("cpu", "at_least_once_unchecked_zero_trips_cpu", kernels<AtLeastOnceSum<int32_t>>(),
              [](Client& client, std::mt19937_64& rng) {
                const size_t n = 64;
                auto x = random_values<int32_t>(rng, n, 0, 100);
                std::vector<uint32_t> count(n, 0);
                Handle hx = client.upload(x), hc = client.upload(count), ha = poisoned_elems<int32_t>(client, n),
                       hs = poisoned_elems<uint32_t>(client, n);
                launch_unchecked<AtLeastOnceSum<int32_t>>(client, CubeCount{1}, CubeDim{64}, 1, hx, hc, 5000, ha, hs);
                expect_equal("accumulated (no iteration)", std::vector<int32_t>(n, 0), client.read<int32_t>(ha));
                expect_equal("break index (none)", std::vector<uint32_t>(n, 0xffffffffu), client.read<uint32_t>(hs));
              });
}

// The cases above compare results, which are the same whether a loop vectorised or not: this pins
// that the suite's vectorize kernels do vectorise, checked and unchecked (two wide loads of x, one
// wide store of y), and that nothing else in them did.
template <class T, int W>
void expect_vectorised() {
  for (ir::ExecMode mode : {ir::ExecMode::Checked, ir::ExecMode::Unchecked}) {
    using K = VectorScale<T, W>;
    ir::Kernel k = define<K>(kernel_id<K>(LaunchFacts{{kUnits, 1, 1}, mode}, param_descs<K>()));
    passes::run_pipeline(k);
    int loads = 0, stores = 0, scalar_loads = 0;
    ir::walk(k.body, [&](const ir::Op& op) {
      const bool wide = op.attr_int(ir::AttrKey::Lanes) == W;
      if (op.kind == ir::OpKind::Load) (wide ? loads : scalar_loads) += 1;
      if (op.kind == ir::OpKind::Store && wide) ++stores;
    });
    EXPECT_EQ(loads, 2) << dtype_name<T>() << " w" << W << "\n" << ir::print(k);
    EXPECT_EQ(stores, 1) << dtype_name<T>() << " w" << W;
    // The rest, and checked also the loop behind the failed bounds test, read x one by one.
    EXPECT_EQ(scalar_loads, mode == ir::ExecMode::Checked ? 4 : 2) << dtype_name<T>() << " w" << W;
  }
}

template <class T, int W>
void expect_diff_vectorised() {
  using K = VectorDiff<T, W>;
  ir::Kernel k = define<K>(kernel_id<K>(LaunchFacts{{kUnits, 1, 1}, ir::ExecMode::Checked}, param_descs<K>()));
  passes::run_pipeline(k);
  int wide = 0;
  ir::walk(k.body, [&](const ir::Op& op) { wide += op.attr_int(ir::AttrKey::Lanes) == W ? 1 : 0; });
  EXPECT_EQ(wide, 3) << "x[i + 1] and x[i] loaded, y[i] stored wide\n" << ir::print(k);
}

TEST(LoopAttributesKernels, TheVectorizeCasesVectorise) {
  expect_diff_vectorised<float, 4>();
  expect_diff_vectorised<int32_t, 8>();
  expect_vectorised<float, 4>();
  expect_vectorised<float, 16>();
  expect_vectorised<double, 2>();
  expect_vectorised<int32_t, 8>();
  expect_vectorised<uint8_t, 16>();
}

}  // namespace
}  // namespace kiln::suite
