// Corners the other files leave out: index types other than u32 (negative signed indices are out
// of range in checked mode), float atomics on shared memory, sync_plane, a plane that spans parts
// of rows in a 2D cube, rank-4 tensors, 16-lane vectors, 1024-unit cubes, views whose offset is
// not a multiple of the vector (or element) size, and the same kernel launched from several
// threads at once.
#include <thread>

#include "arith_ref.h"
#include "suite_run.h"

namespace kiln::suite {
namespace {

// out[i] = x[idx[i]] with an index of type I, no guard on the index (checked mode decides).
template <class T, class I>
struct GatherIndexed {
  static constexpr std::string_view name = "gather_indexed";
  void operator()(Slice<const T> x, Slice<const I> idx, Slice<T> out) const {
    auto i = absolute_pos();
    If(i < idx.len(), [&] { out[i] = x[idx[i]]; });
  }
};

// Per cube: the sum of x by atomic_add on a shared float, and the last value swapped into a shared
// slot by atomic_exchange (checked through the multiset of old values); and a global atomic_sub.
template <class F>
struct SharedFloatAtomics {
  static constexpr std::string_view name = "shared_float_atomics";
  void operator()(Slice<const F> x, Slice<F> sums, Slice<F> olds, Slice<F> finals, Slice<F> total) const {
    SharedArray<F> acc(1), slot(1);
    auto u = unit_pos();
    auto i = absolute_pos();
    If(u == 0u, [&] {
      acc[0u] = 0.0f;
      slot[0u] = -1.0f;
    });
    sync_cube();
    If(i < x.len(), [&] {
      atomic_add(acc[0u], x[i]);
      olds[i] = atomic_exchange(slot[0u], x[i]);
      atomic_sub(total[0u], x[i]);
    });
    sync_cube();
    If(u == 0u, [&] {
      sums[cube_pos()] = acc[0u];
      finals[cube_pos()] = slot[0u];
    });
  }
};

// Units exchange values through shared memory with only a plane barrier between write and read.
struct PlaneSyncExchange {
  static constexpr std::string_view name = "plane_sync_exchange";
  void operator()(Slice<const int32_t> x, Slice<int32_t> out) const {
    SharedArray<int32_t> s(128);
    auto u = unit_pos();
    s[u] = x[absolute_pos()];
    sync_plane();
    out[absolute_pos()] = s[u ^ 1u] - s[u];  // u ^ 1 is in the same plane
  }
};

// Plane ops in a 2D cube whose rows (24 units) do not line up with planes (32 units).
struct PlaneGrid2D {
  static constexpr std::string_view name = "plane_grid_2d";
  void operator()(Slice<const int32_t> x, Slice<int32_t> sum, Slice<int32_t> first, Slice<uint32_t> lane) const {
    auto i = absolute_pos();
    Expr<int32_t> v = x[i];
    sum[i] = plane_sum(v);
    first[i] = plane_broadcast(v, 0u);
    lane[i] = unit_pos_plane() + unit_pos_y() * 1000u + unit_pos_x() * 1000000u;
  }
};

// out (contiguous, row-major) = a rank-4 tensor read through its strides.
template <class T>
struct Rank4Copy {
  static constexpr std::string_view name = "rank4_copy";
  void operator()(TensorArg<const T> in, Slice<T> out) const {
    auto i = absolute_pos();
    auto n3 = in.shape(3), n2 = in.shape(2), n1 = in.shape(1);
    If(i < in.shape(0) * n1 * n2 * n3, [&] {
      auto d3 = i % n3;
      auto d2 = (i / n3) % n2;
      auto d1 = (i / (n3 * n2)) % n1;
      auto d0 = i / (n3 * n2 * n1);
      out[i] = in[d0 * in.stride(0) + d1 * in.stride(1) + d2 * in.stride(2) + d3 * in.stride(3)];
    });
  }
};

template <class F>
struct Scale2 {
  static constexpr std::string_view name = "scale2";
  void operator()(Slice<const Vector<F>> x, Slice<Vector<F>> y) const {
    auto i = absolute_pos();
    If(i < x.len(), [&] { y[i] = x[i] * 2.0f; });
  }
};

// Sixteen parameters of every kind and many scalar types: each value lands in out, so a launch
// that packs arguments at the wrong offsets shows which one.
struct ManyParams {
  static constexpr std::string_view name = "many_params";
  void operator()(Slice<const double> a, Scalar<int8_t> s8, TensorArg<const float> t2, Scalar<f16> h,
                  Scalar<uint64_t> u64, Scalar<bool> flag, Scalar<bf16> b16, Scalar<int16_t> s16, Scalar<uint8_t> u8,
                  Scalar<double> d, Scalar<uint16_t> u16, TensorArg<const int32_t> t3, Scalar<int64_t> s64,
                  Scalar<float> f, Scalar<uint32_t> u32, Slice<double> out) const {
    If(absolute_pos() == 0u, [&] {
      Expr<double> v[] = {cast<double>(s8),
                          cast<double>(h),
                          cast<double>(u64),
                          cast<double>(flag),
                          cast<double>(b16),
                          cast<double>(s16),
                          cast<double>(u8),
                          Expr<double>(d),
                          cast<double>(u16),
                          cast<double>(s64),
                          cast<double>(f),
                          cast<double>(u32),
                          cast<double>(t2.shape(0)),
                          cast<double>(t2.shape(1)),
                          cast<double>(t2.stride(0)),
                          cast<double>(t2.stride(1)),
                          cast<double>(t3.shape(0)),
                          cast<double>(t3.shape(1)),
                          cast<double>(t3.shape(2)),
                          cast<double>(t3.stride(0)),
                          cast<double>(t3.stride(1)),
                          cast<double>(t3.stride(2)),
                          cast<double>(t2[1u]),
                          cast<double>(t3[2u]),
                          Expr<double>(a[0u]),
                          cast<double>(a.len())};
      for (uint32_t k = 0; k < std::size(v); ++k) out[k] = v[k];
    });
  }
};

// a[i] = x; b[i] = 3x + 1; a[i] = 2 a[i]: with a and b the same buffer, the last read must see b's
// store (an emitter that assumed distinct buffers could forward x instead).
struct AliasedStores {
  static constexpr std::string_view name = "aliased_stores";
  void operator()(Slice<const float> x, Slice<float> a, Slice<float> b) const {
    auto i = absolute_pos();
    If(i < x.len(), [&] {
      Expr<float> v = x[i];
      a[i] = v;
      b[i] = v * 3.0f + 1.0f;
      a[i] = a[i] * 2.0f;
    });
  }
};

// A kernel without parameters.
struct NoParams {
  static constexpr std::string_view name = "no_params";
  void operator()() const {
    If(absolute_pos() < 3u, [&] { debug_print("no params, unit %u of %u\n", absolute_pos(), cube_dim()); });
  }
};

// The host image of reading `count` elements of T from `bytes` at byte offset `off`.
template <class T>
std::vector<T> elements_at(const std::vector<unsigned char>& bytes, size_t off, size_t count) {
  std::vector<T> v(count);
  std::memcpy(static_cast<void*>(v.data()), bytes.data() + off, count * sizeof(T));
  return v;
}

template <class T, class I>
void register_gather_indexed(size_t nx, size_t n) {
  add_case(case_name({"gather_indexed", dtype_name<T>(), "by", dtype_name<I>(), nn(n)}), kernels<GatherIndexed<T, I>>(),
           [=](Client& client, std::mt19937_64& rng) {
             auto x = random_any<T>(rng, nx);
             // Mostly in range; some past the end and, for signed indices, negative.
             auto idx = random_values<I>(rng, n, std::is_signed_v<I> ? -5.0 : 0.0, double(nx + 5));
             auto out = run_map<GatherIndexed<T, I>, T, 1>(client, 1, 64, n, x, idx);
             expect_equal("x[idx] (0 where idx is negative or past the end)",
                          tabulate<T>(n,
                                      [&](size_t i) {
                                        int64_t k = int64_t(idx[i]);
                                        return k >= 0 && k < int64_t(nx) ? x[size_t(k)] : make<T>(0);
                                      }),
                          out[0]);
           });
}

template <class F>
void register_shared_float_atomics(uint32_t dim, size_t n) {
  add_case(
      case_name({"shared_float_atomics", dtype_name<F>(), "dim" + std::to_string(dim), nn(n)}),
      kernels<SharedFloatAtomics<F>>(), [=](Client& client, std::mt19937_64& rng) {
        auto x = random_values<F>(rng, n, 0, 1);
        uint32_t cubes = cubes_for(n, dim);
        F start = make<F>(1000);
        Handle hx = client.upload(x), hs = poisoned_elems<F>(client, cubes), ho = poisoned_elems<F>(client, n),
               hf = poisoned_elems<F>(client, cubes), ht = client.upload(std::vector<F>{start});
        launch<SharedFloatAtomics<F>>(client, CubeCount{cubes}, CubeDim{dim}, 1, hx, hs, ho, hf, ht);
        std::vector<F> sums = client.read<F>(hs), olds = client.read<F>(ho), finals = client.read<F>(hf);
        std::vector<F> es(cubes);
        long double all = 0;
        for (uint32_t c = 0; c < cubes; ++c) {
          long double s = 0;
          std::vector<F> in{make<F>(-1)}, out{finals[c]};
          for (size_t i = c * dim; i < std::min(n, size_t(c + 1) * dim); ++i) {
            s += wide(x[i]);
            in.push_back(x[i]);
            out.push_back(olds[i]);
          }
          all += s;
          es[c] = narrow<F>(s);
          auto less = [](F a, F b) { return wide(a) < wide(b); };
          std::sort(in.begin(), in.end(), less);
          std::sort(out.begin(), out.end(), less);
          if (!expect_equal("cube " + std::to_string(c) + ": exchanged values in == old and final values out", in, out))
            break;
        }
        expect_near("per-cube sums by shared atomic_add", es, sums, tol_reduce<F>(dim));
        expect_near("start - sum by global atomic_sub", std::vector<F>{narrow<F>(wide(start) - all)},
                    client.read<F>(ht), tol_reduce<F>(wide(start) + all));
      });
}

template <class F>
void register_saxpy16() {
  const size_t units = 307, n = units * 16;
  add_case(case_name({"scale2", dtype_name<F>(), "v16", nn(n)}), kernels<Scale2<F>>(),
           [=](Client& client, std::mt19937_64& rng) {
             auto x = random_values<F>(rng, n, -100, 100);
             auto out = run_map<Scale2<F>, F, 1>(client, 16, 64, n, x);
             expect_equal("x * 2 with 16 lanes", tabulate<F>(n, [&](size_t i) { return ref::mul(x[i], make<F>(2)); }),
                          out[0]);
           });
}

// A view starting `skip_bytes` into the buffer, launched with vector width `width`: the result
// must be right, or the launch must be refused with a launch.* kiln::Error (never a fault that
// leaves the client unusable).
template <class F>
void register_offset_view(int width, size_t skip_bytes) {
  const size_t vecs = 250, n = vecs * size_t(width);
  bool aligned = skip_bytes % (sizeof(F) * size_t(width)) == 0;
  // A view whose byte offset is not a multiple of the element is refused where it is made
  // (handle.bad_offset: a typed handle moves by whole elements); one on an element but not on a
  // vector of `width` of them is refused at launch (launch.bad_argument), on every device (on CUDA
  // it used to fault with CUDA_ERROR_MISALIGNED_ADDRESS, which is sticky).
  const char* refusal = skip_bytes % sizeof(F) != 0 ? "handle.bad_offset" : "launch.bad_argument";
  add_case(case_name({"view_offset", dtype_name<F>(), vw(width), "skip" + std::to_string(skip_bytes) + "bytes"}),
           kernels<Scale2<F>>(), [=](Client& client, std::mt19937_64& rng) {
             size_t total = n * sizeof(F) + 64;
             std::vector<unsigned char> bytes(total);
             for (auto& b : bytes) b = uint8_t(rng() % 64);  // small exponents: finite floats
             Handle hb = client.upload(bytes).view_as<F>();
             Handle out = poisoned_elems<F>(client, n);
             try {
               Handle view = hb.offset_start(skip_bytes).offset_end(total - skip_bytes - n * sizeof(F));
               launch<Scale2<F>>(client, CubeCount{cubes_for(vecs, 64)}, CubeDim{64}, width, view, out);
               client.sync();
             } catch (const kiln::Error& e) {
               EXPECT_FALSE(aligned) << "a view on an element boundary was refused: " << e.what();
               EXPECT_EQ(e.kind(), refusal) << e.what();
               note_check();
               // Whatever happened, the client must still work.
               try {
                 Handle probe = client.upload(std::vector<F>(64, make<F>(1)));
                 Handle probe_out = poisoned_elems<F>(client, 64);
                 launch<Scale2<F>>(client, CubeCount{1}, CubeDim{64}, 1, probe, probe_out);
                 expect_equal("a launch after the refused one", std::vector<F>(64, make<F>(2)),
                              client.read<F>(probe_out));
               } catch (const kiln::Error& again) {
                 ADD_FAILURE() << "the client is unusable after the failed launch: " << again.what();
               }
               return;
             }
             if (!aligned) {
               ADD_FAILURE() << "a view " << skip_bytes << " bytes in, not on an element boundary, must be refused";
               return;
             }
             auto x = elements_at<F>(bytes, skip_bytes, n);
             expect_equal("2 x through a view at byte " + std::to_string(skip_bytes),
                          tabulate<F>(n, [&](size_t i) { return ref::mul(x[i], make<F>(2)); }), client.read<F>(out));
           });
}

// Comptime parameters before and between buffers: bindings must reach the kernel parameter they
// belong to (they were shifted by the comptime arguments before the fix), also in an in-place
// launch (aliasing is recorded by C++ parameter and must land on the right kernel parameter) and
// when the kernel can fail midway (shared memory), where the CPU snapshots writable buffers.
struct ComptimeFirst {
  static constexpr std::string_view name = "comptime_first";
  void operator()(Comptime<int> scale, Slice<const float> x, Comptime<bool> negate, Slice<float> y) const {
    SharedArray<float> s(64);
    s[unit_pos()] = x[absolute_pos()] * float(scale.get());
    sync_cube();
    auto v = s[63u - unit_pos()];
    y[absolute_pos()] = negate ? -v : v;
  }
};

KILN_SUITE_CASES(extras) {
  add_case("comptime_first_f32_n256", kernels<ComptimeFirst>(), [](Client& client, std::mt19937_64& rng) {
    const size_t n = 256;
    auto x = random_values<float>(rng, n, -10, 10);
    Handle hx = client.upload(x), hy = poisoned_elems<float>(client, n);
    launch_unchecked<ComptimeFirst>(client, CubeCount{4}, CubeDim{64}, 1, comptime(3), hx, comptime(true), hy);
    auto want = tabulate<float>(n, [&](size_t i) { return -(x[(i / 64) * 64 + 63 - i % 64] * 3.0f); });
    expect_equal("y = -(3 x) mirrored per cube", want, client.read<float>(hy));
    // In place: y is x.
    Handle hz = client.upload(x);
    launch<ComptimeFirst>(client, CubeCount{4}, CubeDim{64}, 1, comptime(2), hz, comptime(false), hz);
    expect_equal("in place, 2 x mirrored per cube",
                 tabulate<float>(n, [&](size_t i) { return x[(i / 64) * 64 + 63 - i % 64] * 2.0f; }),
                 client.read<float>(hz));
  });

  register_gather_indexed<float, uint64_t>(300, 1000);
  register_gather_indexed<float, int64_t>(300, 1000);
  register_gather_indexed<int32_t, int32_t>(77, 999);
  register_gather_indexed<uint8_t, int8_t>(100, 500);
  register_gather_indexed<double, uint16_t>(1000, 700);
  register_gather_indexed<f16, int16_t>(50, 400);

  register_shared_float_atomics<float>(128, 1000);
  register_shared_float_atomics<double>(96, 777);

  add_case("plane_sync_exchange_i32_dim128", kernels<PlaneSyncExchange>(), [](Client& client, std::mt19937_64& rng) {
    const size_t n = 128 * 6;
    auto x = random_values<int32_t>(rng, n, -1e6, 1e6);
    Handle hx = client.upload(x), ho = poisoned_elems<int32_t>(client, n);
    launch<PlaneSyncExchange>(client, CubeCount{6}, CubeDim{128}, 1, hx, ho);
    expect_equal("x[i ^ 1] - x[i]", tabulate<int32_t>(n, [&](size_t i) { return x[i ^ 1] - x[i]; }),
                 client.read<int32_t>(ho));
  });

  add_case("plane_grid_2d_i32_dim24x3", kernels<PlaneGrid2D>(), [](Client& client, std::mt19937_64& rng) {
    const uint32_t dx = 24, dy = 3, cubes = 4, per = dx * dy;
    const size_t n = size_t(per) * cubes;
    auto x = random_values<int32_t>(rng, n, -1000, 1000);
    Handle hx = client.upload(x), hs = poisoned_elems<int32_t>(client, n), hf = poisoned_elems<int32_t>(client, n),
           hl = poisoned_elems<uint32_t>(client, n);
    launch<PlaneGrid2D>(client, CubeCount{cubes}, CubeDim{dx, dy}, 1, hx, hs, hf, hl);
    std::vector<int32_t> es(n), ef(n);
    std::vector<uint32_t> el(n);
    for (size_t c = 0; c < cubes; ++c) {
      for (uint32_t p0 = 0; p0 < per; p0 += 32) {  // planes are 32 consecutive linear units
        uint32_t p1 = std::min(p0 + 32, per);
        int32_t s = 0;
        for (uint32_t u = p0; u < p1; ++u) s += x[c * per + u];
        for (uint32_t u = p0; u < p1; ++u) {
          es[c * per + u] = s;
          ef[c * per + u] = x[c * per + p0];
          el[c * per + u] = u % 32 + (u / dx) * 1000 + (u % dx) * 1000000;
        }
      }
    }
    expect_equal("plane_sum", es, client.read<int32_t>(hs));
    expect_equal("plane_broadcast of lane 0", ef, client.read<int32_t>(hf));
    expect_equal("unit_pos_plane, unit_pos_y, unit_pos_x", el, client.read<uint32_t>(hl));
  });

  add_case("rank4_copy_f32_permuted", kernels<Rank4Copy<float>>(), [](Client& client, std::mt19937_64& rng) {
    const uint32_t shape[4] = {3, 5, 4, 7};
    // Memory order (outermost first): dims 2, 0, 3, 1.
    const int order[4] = {2, 0, 3, 1};
    uint32_t stride[4], s = 1;
    for (int k = 3; k >= 0; --k) {
      stride[order[k]] = s;
      s *= shape[order[k]];
    }
    auto mem = random_values<float>(rng, s, -10, 10);
    Handle hm = client.upload(mem), ho = poisoned_elems<float>(client, s);
    launch<Rank4Copy<float>>(
        client, CubeCount{4}, CubeDim{128}, 1,
        tensor_arg(hm, {shape[0], shape[1], shape[2], shape[3]}, {stride[0], stride[1], stride[2], stride[3]}), ho);
    std::vector<float> e;
    for (uint32_t a = 0; a < shape[0]; ++a)
      for (uint32_t b = 0; b < shape[1]; ++b)
        for (uint32_t c = 0; c < shape[2]; ++c)
          for (uint32_t d = 0; d < shape[3]; ++d)
            e.push_back(mem[a * stride[0] + b * stride[1] + c * stride[2] + d * stride[3]]);
    expect_equal("rank-4 tensor in row-major order", e, client.read<float>(ho));
  });

  register_saxpy16<float>();
  register_saxpy16<double>();
  register_saxpy16<f16>();

  add_case("plane_sum_cube1024_i32", kernels<PlaneGrid2D>(), [](Client& client, std::mt19937_64& rng) {
    // The largest cube: 1024 units, 32 full planes.
    const size_t n = 1024 * 2;
    auto x = random_values<int32_t>(rng, n, -1000, 1000);
    Handle hx = client.upload(x), hs = poisoned_elems<int32_t>(client, n), hf = poisoned_elems<int32_t>(client, n),
           hl = poisoned_elems<uint32_t>(client, n);
    launch<PlaneGrid2D>(client, CubeCount{2}, CubeDim{32, 32}, 1, hx, hs, hf, hl);
    std::vector<int32_t> es(n);
    for (size_t p = 0; p < n; p += 32) {
      int32_t s = 0;
      for (size_t u = p; u < p + 32; ++u) s += x[u];
      for (size_t u = p; u < p + 32; ++u) es[u] = s;
    }
    expect_equal("plane sums in 32x32 cubes", es, client.read<int32_t>(hs));
  });

  register_offset_view<float>(4, 4);   // one element in: not a multiple of the 16-byte vector
  register_offset_view<float>(4, 16);  // one vector in
  register_offset_view<float>(1, 2);   // half an element in
  register_offset_view<double>(2, 8);
  register_offset_view<f16>(8, 6);

  add_case("concurrent_launches_8_threads", kernels<Scale2<float>>(), [](Client& client, std::mt19937_64& rng) {
    const size_t n = 4096;
    const int threads = 8;
    std::vector<std::vector<float>> xs;
    for (int t = 0; t < threads; ++t) xs.push_back(random_values<float>(rng, n, -100, 100));
    std::vector<Handle> outs(threads);
    std::vector<std::string> errors(threads);
    {
      std::vector<std::thread> pool;
      for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
          try {
            Handle hx = client.upload(xs[size_t(t)]);
            outs[size_t(t)] = poisoned_elems<float>(client, n);
            for (int rep = 0; rep < 5; ++rep) {
              launch<Scale2<float>>(client, CubeCount{cubes_for(n / 4, 64)}, CubeDim{64}, 4, hx, outs[size_t(t)]);
            }
          } catch (const std::exception& e) {
            errors[size_t(t)] = e.what();
          }
        });
      }
      for (auto& th : pool) th.join();
    }
    for (int t = 0; t < threads; ++t) {
      EXPECT_EQ(errors[size_t(t)], "") << "thread " << t;
      if (outs[size_t(t)].valid()) {
        expect_equal("thread " + std::to_string(t), tabulate<float>(n, [&](size_t i) { return xs[size_t(t)][i] * 2; }),
                     client.read<float>(outs[size_t(t)]));
      }
    }
  });
  add_case("many_params_16", kernels<ManyParams>(), [](Client& client, std::mt19937_64& rng) {
    auto a = random_values<double>(rng, 7, -1e6, 1e6);
    auto m2 = random_values<float>(rng, 12, -100, 100);
    auto m3 = random_values<int32_t>(rng, 60, -1e6, 1e6);
    int8_t s8 = int8_t(-100 + int(rng() % 50));
    f16 h = narrow<f16>(-3.25L);
    uint64_t u64 = (uint64_t(1) << 52) + (rng() % 1000);
    bf16 b16 = narrow<bf16>(1.5L + double(rng() % 8));
    int16_t s16 = int16_t(-30000 + int(rng() % 100));
    uint8_t u8 = uint8_t(200 + rng() % 50);
    double d = -0.125 * double(rng() % 1000);
    uint16_t u16 = uint16_t(60000 + rng() % 100);
    int64_t s64 = -(int64_t(1) << 50) - int64_t(rng() % 1000);
    float f = 0.5f + float(rng() % 100);
    uint32_t u32 = 4000000000u + uint32_t(rng() % 1000);
    Handle ha = client.upload(a), h2 = client.upload(m2), h3 = client.upload(m3),
           out = poisoned_elems<double>(client, 26);
    launch<ManyParams>(client, CubeCount{1}, CubeDim{32}, 1, ha, s8, tensor_arg(h2, {3, 4}, {4, 1}), h, u64, true, b16,
                       s16, u8, d, u16, tensor_arg(h3, {3, 4, 5}, {1, 3, 12}), s64, f, u32, out);
    std::vector<double> e = {double(s8),
                             double(wide(h)),
                             double(u64),
                             1.0,
                             double(wide(b16)),
                             double(s16),
                             double(u8),
                             d,
                             double(u16),
                             double(s64),
                             double(f),
                             double(u32),
                             3,
                             4,
                             4,
                             1,
                             3,
                             4,
                             5,
                             1,
                             3,
                             12,
                             double(m2[1]),
                             double(m3[2]),
                             a[0],
                             7};
    expect_equal("each parameter as the kernel saw it", e, client.read<double>(out));
  });

  add_case("aliased_stores_f32", kernels<AliasedStores>(), [](Client& client, std::mt19937_64& rng) {
    const size_t n = 1000;
    auto x = random_values<float>(rng, n, -100, 100);
    Handle hx = client.upload(x), same = poisoned_elems<float>(client, n);
    launch<AliasedStores>(client, CubeCount{cubes_for(n, 64)}, CubeDim{64}, 1, hx, same, same);
    expect_near("a and b one buffer: 2 (3x + 1)", tabulate<float>(n, [&](size_t i) { return (x[i] * 3 + 1) * 2; }),
                client.read<float>(same), tol_fused<float>(700));
    Handle a = poisoned_elems<float>(client, n), b = poisoned_elems<float>(client, n);
    launch<AliasedStores>(client, CubeCount{cubes_for(n, 64)}, CubeDim{64}, 1, hx, a, b);
    expect_equal("a alone: 2x", tabulate<float>(n, [&](size_t i) { return x[i] * 2; }), client.read<float>(a));
    expect_near("b alone: 3x + 1", tabulate<float>(n, [&](size_t i) { return x[i] * 3 + 1; }), client.read<float>(b),
                tol_fused<float>(300));
  });

  add_case("no_params_debug_print", kernels<NoParams>(), [](Client& client, std::mt19937_64&) {
    ::testing::internal::CaptureStdout();
    launch<NoParams>(client, CubeCount{1}, CubeDim{40}, 1);
    client.sync();
    std::fflush(stdout);
    std::string got = ::testing::internal::GetCapturedStdout();
    std::string want = "no params, unit 0 of 40\nno params, unit 1 of 40\nno params, unit 2 of 40\n";
    if (client.runtime_name() == "cpu") {
      EXPECT_EQ(want, got);
    } else {
      EXPECT_EQ(want.size(), got.size()) << got;  // any order on other devices
    }
    note_check();
  });
}

}  // namespace
}  // namespace kiln::suite
