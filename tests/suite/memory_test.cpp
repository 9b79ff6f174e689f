// Memory: gather and scatter, TensorArg shapes and strides (a transposed view, padded row pitches,
// a permuted rank-3 tensor), and the checked-mode contract on views made with offset_start and
// offset_end: with no guard in the kernel, reads at or past len() give zero, writes and atomics
// there are dropped, and the buffer around the view keeps its poison. On the CPU, unchecked
// launches and other run-time errors throw the documented kiln::Error and leave every output as
// it was, byte for byte.
#include "arith_ref.h"
#include "suite_run.h"

namespace kiln::suite {
namespace {

template <class T>
struct Gather {
  static constexpr std::string_view name = "gather";
  void operator()(Slice<const T> x, Slice<const uint32_t> idx, Slice<T> out) const {
    auto i = absolute_pos();
    If(i < idx.len(), [&] { out[i] = x[idx[i]]; });
  }
};

template <class T>
struct Scatter {
  static constexpr std::string_view name = "scatter";
  void operator()(Slice<const T> x, Slice<const uint32_t> idx, Slice<T> out) const {
    auto i = absolute_pos();
    If(i < idx.len(), [&] { out[idx[i]] = x[i]; });
  }
};

// out[r, c] = in[r, c] through both tensors' strides, on a 2D grid.
template <class T>
struct StridedCopy {
  static constexpr std::string_view name = "strided_copy";
  void operator()(TensorArg<const T> in, TensorArg<T> out) const {
    auto r = absolute_pos_y();
    auto c = absolute_pos_x();
    If(r < in.shape(0) && c < in.shape(1),
       [&] { out[r * out.stride(0) + c * out.stride(1)] = in[r * in.stride(0) + c * in.stride(1)]; });
  }
};

// out[a * shape(1) + b] = sum over c of in[a, b, c], whatever the strides.
template <class T>
struct SumLastAxis {
  static constexpr std::string_view name = "sum_last_axis";
  void operator()(TensorArg<const T> in, Slice<T> out) const {
    auto i = absolute_pos();
    If(i < in.shape(0) * in.shape(1), [&] {
      auto a = i / in.shape(1);
      auto b = i % in.shape(1);
      Var<T> acc = T(0);
      For(range(0u, in.shape(2)),
          [&](Expr<uint32_t> c) { acc = acc + in[a * in.stride(0) + b * in.stride(1) + c * in.stride(2)]; });
      out[i] = acc;
    });
  }
};

// No guard: every unit reads x and y and writes out at its index.
template <class T>
struct CheckedAdd {
  static constexpr std::string_view name = "checked_add";
  void operator()(Slice<const Vector<T>> x, Slice<const Vector<T>> y, Slice<Vector<T>> out) const {
    out[absolute_pos()] = x[absolute_pos()] + y[absolute_pos()];
  }
};

// No guard: bins[idx[i]] += 1 for every unit, idx may point past bins.
struct CheckedAtomic {
  static constexpr std::string_view name = "checked_atomic";
  void operator()(Slice<const uint32_t> idx, Slice<uint32_t> bins) const { atomic_add(bins[idx[absolute_pos()]], 1u); }
};

// No guard: out[i] = 2 x[i] for every unit.
struct CopyTwice {
  static constexpr std::string_view name = "copy_twice";
  void operator()(Slice<const int32_t> x, Slice<int32_t> out) const { out[absolute_pos()] = x[absolute_pos()] * 2; }
};

struct IntDivide {
  static constexpr std::string_view name = "int_divide";
  void operator()(Slice<const int32_t> a, Slice<const int32_t> b, Slice<int32_t> q) const {
    auto i = absolute_pos();
    If(i < a.len(), [&] { q[i] = a[i] / b[i]; });
  }
};

// A barrier inside a branch only some units take.
struct DivergentSync {
  static constexpr std::string_view name = "divergent_sync";
  void operator()(Slice<float> out) const {
    auto u = unit_pos();
    out[absolute_pos()] = 1.0f;
    If(u < 5u, [&] { sync_cube(); });
    out[absolute_pos()] = 2.0f;
  }
};

// Reads a Var that only one branch assigns.
struct UnassignedVar {
  static constexpr std::string_view name = "unassigned_var";
  void operator()(Slice<float> out) const {
    Var<float> v;
    If(absolute_pos() < 3u, [&] { v = 1.0f; });
    out[absolute_pos()] = v;
  }
};

template <class T>
void register_gather_scatter(size_t nx, size_t n) {
  add_case(case_name({"gather", dtype_name<T>(), nn(n), "from" + std::to_string(nx)}), kernels<Gather<T>>(),
           [=](Client& client, std::mt19937_64& rng) {
             auto x = random_any<T>(rng, nx);
             auto idx = random_values<uint32_t>(rng, n, 0, double(nx - 1));
             auto out = run_map<Gather<T>, T, 1>(client, 1, 64, n, x, idx);
             expect_equal("x[idx[i]]", tabulate<T>(n, [&](size_t i) { return x[idx[i]]; }), out[0]);
           });
  add_case(case_name({"scatter", dtype_name<T>(), nn(n), "into" + std::to_string(n + 37)}), kernels<Scatter<T>>(),
           [=](Client& client, std::mt19937_64& rng) {
             auto x = random_any<T>(rng, n);
             std::vector<uint32_t> slots(n + 37);
             for (size_t i = 0; i < slots.size(); ++i) slots[i] = uint32_t(i);
             std::shuffle(slots.begin(), slots.end(), rng);
             std::vector<uint32_t> idx(slots.begin(), slots.begin() + std::ptrdiff_t(n));  // distinct targets
             Handle hx = client.upload(x), hi = client.upload(idx), ho = poisoned_elems<T>(client, n + 37);
             launch<Scatter<T>>(client, CubeCount{cubes_for(n, 64)}, CubeDim{64}, 1, hx, hi, ho);
             std::vector<T> e = poison_vector<T>(n + 37);  // the 37 slots no unit targets keep their poison
             for (size_t i = 0; i < n; ++i) e[idx[i]] = x[i];
             std::vector<unsigned char> eb(e.size() * sizeof(T));
             std::memcpy(eb.data(), static_cast<const void*>(e.data()), eb.size());
             expect_same_bytes("out[idx[i]] = x[i], untouched slots as they were", eb, read_all_bytes(client, ho));
           });
}

// A strided view: `in` shows shape (rows, cols) with strides (is0, is1) over in_len elements;
// `out` has strides (os0, os1) over out_len elements. Elements of out no (r, c) reaches keep
// their poison.
template <class T>
void register_strided(std::string what, uint32_t rows, uint32_t cols, uint32_t is0, uint32_t is1, size_t in_len,
                      uint32_t os0, uint32_t os1, size_t out_len) {
  add_case(case_name({"strided_copy", dtype_name<T>(), what, std::to_string(rows) + "x" + std::to_string(cols)}),
           kernels<StridedCopy<T>>(), [=](Client& client, std::mt19937_64& rng) {
             auto in = random_any<T>(rng, in_len);
             Handle hi = client.upload(in), ho = poisoned_elems<T>(client, out_len);
             launch<StridedCopy<T>>(client, CubeCount{cubes_for(cols, 16), cubes_for(rows, 8)}, CubeDim{16, 8}, 1,
                                    tensor_arg(hi, {rows, cols}, {is0, is1}), tensor_arg(ho, {rows, cols}, {os0, os1}));
             std::vector<T> e = poison_vector<T>(out_len);
             for (size_t r = 0; r < rows; ++r)
               for (size_t c = 0; c < cols; ++c) e[r * os0 + c * os1] = in[r * is0 + c * is1];
             std::vector<unsigned char> eb(e.size() * sizeof(T));
             std::memcpy(eb.data(), static_cast<const void*>(e.data()), eb.size());
             expect_same_bytes("strided copy (and the gaps between rows untouched)", eb, read_all_bytes(client, ho));
           });
}

// x, y and out are views of larger buffers; the launch runs `extra` units past the end of all.
template <class T>
void register_checked(int width) {
  const size_t vecs = 1009, n = vecs * size_t(width), w = size_t(width), b = sizeof(T) * w;
  add_case(case_name({"checked_add", dtype_name<T>(), vw(width), nn(n)}), kernels<CheckedAdd<T>>(),
           [=](Client& client, std::mt19937_64& rng) {
             auto x = random_values<T>(rng, n, -100, 100), y = random_values<T>(rng, n, -100, 100);
             Handle hx = client.upload(x), hy = client.upload(y);
             Handle out = poisoned_elems<T>(client, n + 2 * w);
             // x shows vectors 2 .. vecs-4 (its first 2 and last 3 are cut off), y all of them,
             // out vectors 1 .. vecs (of vecs + 2).
             Handle xv = hx.offset_start(2 * b).offset_end(3 * b);
             Handle ov = out.offset_start(b).offset_end(b);
             size_t xlen = vecs - 5, olen = vecs;
             launch<CheckedAdd<T>>(client, CubeCount{cubes_for(vecs + 100, 64)}, CubeDim{64}, width, xv, hy, ov);
             std::vector<T> e = poison_vector<T>(n + 2 * w);
             for (size_t v = 0; v < olen; ++v) {
               for (size_t l = 0; l < w; ++l) {
                 T xs = v < xlen ? x[(v + 2) * w + l] : make<T>(0);  // past x.len(): reads zero
                 e[(v + 1) * w + l] = ref::add(xs, y[v * w + l]);
               }
             }
             std::vector<T> got = client.read<T>(out);
             // Compare values (tolerance by dtype), then the poison around the view byte for byte.
             std::vector<uint8_t> inside(e.size(), 0);
             for (size_t k = w; k < w + olen * w; ++k) inside[k] = 1;
             expect_near("x + y inside the view (x reads 0 past its len)", e, got, tol_arith<T>(), &inside);
             std::vector<unsigned char> eb(e.size() * sizeof(T)), gb(e.size() * sizeof(T));
             std::memcpy(eb.data(), static_cast<const void*>(e.data()), eb.size());
             std::memcpy(gb.data(), static_cast<const void*>(got.data()), gb.size());
             eb.erase(eb.begin() + std::ptrdiff_t(b), eb.end() - std::ptrdiff_t(b));
             gb.erase(gb.begin() + std::ptrdiff_t(b), gb.end() - std::ptrdiff_t(b));
             expect_same_bytes("the buffer's head and tail outside out's view", eb, gb);
           });
}

KILN_SUITE_CASES(memory) {
  register_gather_scatter<float>(500, 2000);
  register_gather_scatter<uint8_t>(3000, 1001);
  register_gather_scatter<int64_t>(17, 999);
  register_gather_scatter<f16>(100, 333);

  // Row-major in, column-major out (a transpose through strides).
  register_strided<float>("transpose_out", 37, 53, 53, 1, 37 * 53, 1, 37, 37 * 53);
  // A column-major view read as row-major (the memory holds 53 x 37).
  register_strided<int32_t>("transposed_view", 37, 53, 1, 37, 37 * 53, 53, 1, 37 * 53);
  // Padded pitches on both sides.
  register_strided<double>("padded", 19, 30, 35, 1, 19 * 35, 33, 1, 19 * 33);
  register_strided<uint8_t>("padded", 40, 17, 20, 1, 40 * 20, 19, 1, 40 * 19);

  for (auto [label, perm] :
       {std::pair{"abc", std::array<int, 3>{0, 1, 2}}, std::pair{"cab", std::array<int, 3>{2, 0, 1}},
        std::pair{"bca", std::array<int, 3>{1, 2, 0}}}) {
    add_case(case_name({"sum_last_axis", "i32", "layout", label, "7x11x13"}), kernels<SumLastAxis<int32_t>>(),
             [perm = perm](Client& client, std::mt19937_64& rng) {  // an init-capture: clang 14 captures no binding
               const uint32_t shape[3] = {7, 11, 13};
               // Memory order: dims listed in perm, outermost first.
               uint32_t stride[3];
               uint32_t s = 1;
               for (int k = 2; k >= 0; --k) {
                 stride[perm[size_t(k)]] = s;
                 s *= shape[perm[size_t(k)]];
               }
               auto mem = random_any<int32_t>(rng, s);
               Handle hm = client.upload(mem), ho = poisoned_elems<int32_t>(client, 7 * 11);
               launch<SumLastAxis<int32_t>>(client, CubeCount{2}, CubeDim{64}, 1,
                                            tensor_arg(hm, {7, 11, 13}, {stride[0], stride[1], stride[2]}), ho);
               std::vector<int32_t> e(7 * 11);
               for (uint32_t a = 0; a < 7; ++a)
                 for (uint32_t b = 0; b < 11; ++b) {
                   int32_t acc = 0;
                   for (uint32_t c = 0; c < 13; ++c)
                     acc = ref::add(acc, mem[a * stride[0] + b * stride[1] + c * stride[2]]);
                   e[a * 11 + b] = acc;
                 }
               expect_equal("sum over the last axis", e, client.read<int32_t>(ho));
             });
  }

  register_checked<float>(1);
  register_checked<int32_t>(4);
  register_checked<f16>(2);
  register_checked<double>(8);

  add_case("checked_atomic_u32_n1000", kernels<CheckedAtomic>(), [](Client& client, std::mt19937_64& rng) {
    const size_t n = 1000, bins = 50, units = 1100;
    auto idx = random_values<uint32_t>(rng, n, 0, bins + 9);  // some past the view
    auto start = random_values<uint32_t>(rng, bins, 1, 100);
    std::vector<uint32_t> full = start;
    for (int k = 0; k < 3; ++k) full.push_back(0xffffffffu);  // a tail the view hides
    Handle hi = client.upload(idx), hb = client.upload(full);
    launch<CheckedAtomic>(client, CubeCount{cubes_for(units, 100)}, CubeDim{100}, 1, hi, hb.offset_end(3 * 4));
    std::vector<uint32_t> e = full;
    for (uint32_t i : idx) {
      if (i < bins) ++e[i];
    }
    e[0] += uint32_t(units - n);  // units past idx.len() read idx = 0
    expect_equal("bins (adds past the view dropped, the hidden tail untouched)", e, client.read<uint32_t>(hb));
  });

  // The CPU's bounds sanitizer: an unchecked out-of-range read stops the launch, and writes that
  // cubes before the failing one made are undone.
  // The CPU backend's own report (a GPU does what its hardware does).
  add_case_on("cpu", "unchecked_oob_read_cpu_error", kernels<CopyTwice>(), [](Client& client, std::mt19937_64& rng) {
    const size_t n = 1000;
    auto x = random_values<int32_t>(rng, n, -1000, 1000);
    Handle hx = client.upload(x), out = poisoned_elems<int32_t>(client, 2 * n);
    std::vector<unsigned char> before = read_all_bytes(client, out);
    try {
      launch_unchecked<CopyTwice>(client, CubeCount{16}, CubeDim{128}, 1, hx, out);  // 2048 units, x has 1000
      ADD_FAILURE() << "an out-of-range unchecked read did not throw";
    } catch (const kiln::Error& e) {
      EXPECT_EQ(e.kind(), "bounds.out_of_range") << e.what();
      EXPECT_NE(std::string(e.what()).find("copy_twice"), std::string::npos)
          << "the error names the kernel: " << e.what();
    }
    expect_same_bytes("out after the failed launch", before, read_all_bytes(client, out));
    // The same launch with a view that fits runs.
    launch_unchecked<CopyTwice>(client, CubeCount{1}, CubeDim{100}, 1, hx, out.offset_end(4 * (2 * n - 100)));
    std::vector<int32_t> got = client.read<int32_t>(out);
    got.resize(100);
    expect_equal("a fitting unchecked launch", tabulate<int32_t>(100, [&](size_t i) { return x[i] * 2; }), got);
  });

  // The CPU backend's own report (a GPU does what its hardware does).
  add_case_on("cpu", "unchecked_oob_write_cpu_error", kernels<CopyTwice>(), [](Client& client, std::mt19937_64& rng) {
    const size_t n = 1000;
    auto x = random_values<int32_t>(rng, 2 * n, -1000, 1000);
    Handle hx = client.upload(x), out = poisoned_elems<int32_t>(client, n + 7);
    Handle view = out.offset_end(7 * 4);
    std::vector<unsigned char> before = read_all_bytes(client, out);
    try {
      launch_unchecked<CopyTwice>(client, CubeCount{9}, CubeDim{128}, 1, hx, view);
      ADD_FAILURE() << "an out-of-range unchecked write did not throw";
    } catch (const kiln::Error& e) {
      EXPECT_EQ(e.kind(), "bounds.out_of_range") << e.what();
    }
    expect_same_bytes("out (and its hidden tail) after the failed launch", before, read_all_bytes(client, out));
  });

  // The CPU backend's own report (unspecified on GPUs).
  add_case_on("cpu", "int_division_by_zero_cpu_error", kernels<IntDivide>(), [](Client& client, std::mt19937_64& rng) {
    const size_t n = 700;
    auto a = random_any<int32_t>(rng, n), b = random_values<int32_t>(rng, n, 1, 100);
    b[n - 3] = 0;
    Handle ha = client.upload(a), hb = client.upload(b), q = poisoned_elems<int32_t>(client, n);
    std::vector<unsigned char> before = read_all_bytes(client, q);
    try {
      launch<IntDivide>(client, CubeCount{cubes_for(n, 64)}, CubeDim{64}, 1, ha, hb, q);
      ADD_FAILURE() << "an integer division by zero did not throw";
    } catch (const kiln::Error& e) {
      EXPECT_EQ(e.kind(), "arith.division_by_zero") << e.what();
    }
    expect_same_bytes("q after the failed launch", before, read_all_bytes(client, q));
  });

  // The CPU backend's own report (undefined on GPUs).
  add_case_on("cpu", "divergent_sync_cpu_error", kernels<DivergentSync>(), [](Client& client, std::mt19937_64&) {
    Handle out = poisoned_elems<float>(client, 64);
    std::vector<unsigned char> before = read_all_bytes(client, out);
    try {
      launch<DivergentSync>(client, CubeCount{2}, CubeDim{32}, 1, out);
      ADD_FAILURE() << "sync_cube under divergent control flow did not throw";
    } catch (const kiln::Error& e) {
      EXPECT_EQ(e.kind(), "sync.divergent") << e.what();
    }
    expect_same_bytes("out after the failed launch", before, read_all_bytes(client, out));
  });

  add_case("unassigned_var_trace_error", kernels<UnassignedVar>(), [](Client& client, std::mt19937_64&) {
    Handle out = poisoned_elems<float>(client, 8);
    std::vector<unsigned char> before = read_all_bytes(client, out);
    try {
      launch<UnassignedVar>(client, CubeCount{1}, CubeDim{8}, 1, out);
      ADD_FAILURE() << "reading a Var that one path leaves unassigned traced";
    } catch (const kiln::Error& e) {
      EXPECT_EQ(e.kind(), "trace.unassigned_var") << e.what();
    }
    expect_same_bytes("out after the refused launch", before, read_all_bytes(client, out));
  });
}

}  // namespace
}  // namespace kiln::suite
