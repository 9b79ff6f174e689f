// Kernels the front-end tests trace. Each is written so that its IR does not depend on the order
// in which C++ evaluates operands: a sub-expression that records ops is named (`Expr<T> t = ...;`)
// before it meets another such sub-expression. Builtins and parameter lengths are recorded once at
// the top of the kernel (Tracer::leaf), so they may appear anywhere.
#pragma once

#include <array>
#include <string_view>

#include "kiln/dsl.h"

namespace kiln::test {

// Seed 01's saxpy: y = a * x + y, one vector of F per unit.
template <class F>
struct Saxpy {
  static constexpr std::string_view name = "saxpy";
  static constexpr std::array<std::string_view, 3> param_names{"a", "x", "y"};
  void operator()(Scalar<float> a, Slice<const Vector<F>> x, Slice<Vector<F>> y) const {
    If(absolute_pos() < x.len(),
       [&] { y[absolute_pos()] = Vector<F>(cast<F>(a)) * x[absolute_pos()] + y[absolute_pos()]; });
  }
};

// Seed 01's add: `relu` is a C++ if, so only one branch is recorded.
struct Add {
  static constexpr std::string_view name = "add";
  static constexpr std::array<std::string_view, 4> param_names{"x", "y", "out", "relu"};
  void operator()(Slice<const float> x, Slice<const float> y, Slice<float> out, Comptime<bool> relu) const {
    auto v = x[absolute_pos()] + y[absolute_pos()];
    if (relu) out[absolute_pos()] = max(v, 0.0f);
    else out[absolute_pos()] = v;
  }
};

// If / ElseIf / Else and Terminate: the sign of each element.
struct Classify {
  static constexpr std::string_view name = "classify";
  static constexpr std::array<std::string_view, 2> param_names{"x", "out"};
  void operator()(Slice<const int32_t> x, Slice<int32_t> out) const {
    If(absolute_pos() >= x.len(), [] { Terminate(); });
    Expr<int32_t> v = x[absolute_pos()];
    If(v < 0, [&] { out[absolute_pos()] = -1; }).ElseIf(v == 0, [&] { out[absolute_pos()] = 0; }).Else([&] {
      out[absolute_pos()] = 1;
    });
  }
};

// For with every loop attribute; a Var carries the sum out of the loops.
struct Loops {
  static constexpr std::string_view name = "loops";
  static constexpr std::array<std::string_view, 3> param_names{"x", "out", "n"};
  void operator()(Slice<const float> x, Slice<float> out, Scalar<uint32_t> n) const {
    Var<float> acc = 0.0f;
    For(range(0u, n, 2u).unroll(4).prefetch_stages(2), [&](Expr<uint32_t> i) { acc += x[i]; });
    For(range(0u, 8u).unroll_full(), [&](Expr<uint32_t> i) { acc += cast<float>(i); });
    For(range(-4, 10, 3).unroll(1).prefetch_stages(0), [&](Expr<int32_t> i) { acc -= cast<float>(i); });
    out[absolute_pos()] = acc;
  }
};

// The loop attributes vectorize and at_least_once (seed 05): y[i] = x[i] * a over [0, n).
struct ScaleLoop {
  static constexpr std::string_view name = "scale_loop";
  static constexpr std::array<std::string_view, 4> param_names{"x", "y", "a", "n"};
  void operator()(Slice<const float> x, Slice<float> y, Scalar<float> a, Scalar<uint32_t> n) const {
    For(range(0u, n).vectorize(4).at_least_once(), [&](auto i) { y[i] = x[i] * a; });
  }
};

// While with Break and Continue: Collatz steps, capped at 1000.
struct Collatz {
  static constexpr std::string_view name = "collatz";
  static constexpr std::array<std::string_view, 2> param_names{"x", "steps"};
  void operator()(Slice<const uint32_t> x, Slice<uint32_t> steps) const {
    Var<uint32_t> v = x[absolute_pos()];
    Var<uint32_t> count = 0u;
    While([&] { return v != 1u; },
          [&] {
            count += 1u;
            If(count > 1000u, [] { Break(); });
            Expr<uint32_t> cur = v;
            If((cur & 1u) == 0u, [&] {
              v = cur >> 1u;
              Continue();
            });
            v = cur * 3u + 1u;
          });
    steps[absolute_pos()] = count;
  }
};

// Vectors of the launch's width meeting scalars (a Scalar parameter, a literal, a lane).
struct Broadcast {
  static constexpr std::string_view name = "broadcast";
  static constexpr std::array<std::string_view, 3> param_names{"x", "y", "s"};
  void operator()(Slice<const Vector<float>> x, Slice<Vector<float>> y, Scalar<float> s) const {
    Vector<float> v = x[absolute_pos()];
    Vector<float> scaled = v * s;
    Vector<float> shifted = scaled + 1.0f;
    Expr<float> lane0 = shifted[0];
    Vector<float> replaced = shifted.with_lane(3, lane0);
    Vector<float> built = vector_of<float>(lane0, s, 2.0f, lane0);
    y[absolute_pos()] = replaced + built;
    Expr<uint32_t> next = absolute_pos() + 1u;
    y[next] = lane0;
  }
};

// A shared array and a barrier: each cube reverses its block.
struct ReverseBlock {
  static constexpr std::string_view name = "reverse_block";
  static constexpr std::array<std::string_view, 2> param_names{"x", "out"};
  void operator()(Slice<const float> x, Slice<float> out) const {
    SharedArray<float> tile(256);
    tile[unit_pos()] = x[absolute_pos()];
    sync_cube();
    Expr<uint32_t> mirror = cube_dim() - 1u - unit_pos();
    out[absolute_pos()] = tile[mirror];
  }
};

// A local array filled and summed by run-time loops.
struct LocalSum {
  static constexpr std::string_view name = "local_sum";
  static constexpr std::array<std::string_view, 2> param_names{"x", "out"};
  void operator()(Slice<const int32_t> x, Slice<int32_t> out) const {
    LocalArray<int32_t> buf(4);
    Expr<uint32_t> base = absolute_pos() * 4u;
    For(range(0u, 4u), [&](Expr<uint32_t> i) { buf[i] = x[base + i]; });
    Var<int32_t> total = 0;
    For(range(0u, buf.len()), [&](Expr<uint32_t> i) { total += buf[i]; });
    out[absolute_pos()] = total;
  }
};

// Every atomic on a global buffer, a float atomic, an atomic on a shared array.
struct Histogram {
  static constexpr std::string_view name = "histogram";
  static constexpr std::array<std::string_view, 3> param_names{"keys", "bins", "sums"};
  void operator()(Slice<const uint32_t> keys, Slice<uint32_t> bins, Slice<float> sums) const {
    Expr<uint32_t> k = keys[absolute_pos()];
    Expr<uint32_t> old = atomic_add(bins[k], 1u);
    Expr<uint32_t> a = atomic_sub(bins[k], old);
    Expr<uint32_t> b = atomic_min(bins[k], a);
    Expr<uint32_t> c = atomic_max(bins[k], b);
    Expr<uint32_t> d = atomic_and(bins[k], c);
    Expr<uint32_t> e = atomic_or(bins[k], d);
    Expr<uint32_t> f = atomic_xor(bins[k], e);
    Expr<uint32_t> g = atomic_exchange(bins[k], f);
    atomic_cas(bins[k], g, old);
    atomic_add(sums[k], 0.5f);
    SharedArray<uint32_t> counts(64);
    atomic_add(counts[unit_pos()], 1u);
  }
};

// Plane (warp) reductions, scans, shuffles and votes.
struct PlaneOps {
  static constexpr std::string_view name = "plane_ops";
  static constexpr std::array<std::string_view, 3> param_names{"x", "out", "votes"};
  void operator()(Slice<const float> x, Slice<float> out, Slice<uint32_t> votes) const {
    Expr<float> v = x[absolute_pos()];
    Expr<float> total = plane_sum(v);
    Expr<float> biggest = plane_max(v);
    Expr<float> smallest = plane_min(v);
    Expr<float> product = plane_prod(v);
    Expr<float> prefix = plane_inclusive_sum(v);
    Expr<float> before = plane_exclusive_sum(v);
    Expr<float> first = plane_broadcast(v, 0u);
    Expr<float> mine = plane_shuffle(v, unit_pos_plane());
    Expr<float> partner = plane_shuffle_xor(v, 1u);
    Expr<float> up = plane_shuffle_up(v, 1u);
    Expr<float> down = plane_shuffle_down(v, plane_dim() - 1u);
    Expr<bool> positive = v > 0.0f;
    Expr<bool> all = plane_all(positive);
    Expr<bool> any = plane_any(positive);
    Expr<uint32_t> ballot = plane_ballot(positive);
    If(plane_elect(), [&] { votes[cube_pos()] = ballot; });
    Expr<float> s1 = total + biggest;
    Expr<float> s2 = s1 + smallest;
    Expr<float> s3 = s2 + product;
    Expr<float> s4 = s3 + prefix;
    Expr<float> s5 = s4 + before;
    Expr<float> s6 = s5 + first;
    Expr<float> s7 = s6 + mine;
    Expr<float> s8 = s7 + partner;
    Expr<float> s9 = s8 + up;
    Expr<float> s10 = s9 + down;
    Expr<bool> both = all && any;
    out[absolute_pos()] = select(both, s10, 0.0f);
  }
};

// Tensor parameters: 2-d shape and strides, 2-d positions.
struct Transpose {
  static constexpr std::string_view name = "transpose";
  static constexpr std::array<std::string_view, 2> param_names{"in", "out"};
  void operator()(TensorArg<const float> in, TensorArg<float> out) const {
    Expr<uint32_t> row = absolute_pos_y();
    Expr<uint32_t> col = absolute_pos_x();
    Expr<bool> in_rows = row < in.shape(0);
    Expr<bool> in_cols = col < in.shape(1);
    If(in_rows && in_cols, [&] {
      Expr<uint32_t> src_row = row * in.stride(0);
      Expr<uint32_t> src = src_row + col * in.stride(1);
      Expr<uint32_t> dst_row = col * out.stride(0);
      Expr<uint32_t> dst = dst_row + row * out.stride(1);
      out[dst] = in[src];
    });
  }
};

// The float math functions, min/max, fma, select, isnan/isinf.
struct MathFns {
  static constexpr std::string_view name = "math_fns";
  static constexpr std::array<std::string_view, 2> param_names{"x", "out"};
  void operator()(Slice<const float> x, Slice<float> out) const {
    Expr<float> v = x[absolute_pos()];
    Expr<float> a = exp(v);
    Expr<float> b = exp2(a);
    Expr<float> c = log(b);
    Expr<float> d = log2(c);
    Expr<float> e = sqrt(d);
    Expr<float> f = rsqrt(e);
    Expr<float> g = recip(f);
    Expr<float> h = sin(g);
    Expr<float> i = cos(h);
    Expr<float> j = tan(i);
    Expr<float> k = tanh(j);
    Expr<float> l = erf(k);
    Expr<float> m = pow(l, 2.0f);
    Expr<float> n = floor(m);
    Expr<float> o = ceil(n);
    Expr<float> p = round(o);
    Expr<float> q = trunc(p);
    Expr<float> r = abs(q);
    Expr<float> lo = min(r, 1.0f);
    Expr<float> hi = max(lo, -1.0f);
    Expr<float> fused = fma(hi, v, 0.5f);
    Expr<bool> nan = isnan(v);
    Expr<bool> inf = isinf(v);
    Expr<bool> bad = nan || inf;
    out[absolute_pos()] = select(bad, 0.0f, fused);
  }
};

// Value casts between every family, a bitcast, and the integer bit counts.
struct Casts {
  static constexpr std::string_view name = "casts";
  static constexpr std::array<std::string_view, 4> param_names{"x", "ints", "bits", "wide"};
  void operator()(Slice<const float> x, Slice<int32_t> ints, Slice<uint32_t> bits, Slice<double> wide) const {
    Expr<float> v = x[absolute_pos()];
    Expr<int32_t> i = cast<int32_t>(v);
    ints[absolute_pos()] = i;
    Expr<uint32_t> raw = bitcast<uint32_t>(v);
    bits[absolute_pos()] = raw;
    Expr<f16> half = cast<f16>(v);
    Expr<bf16> brain = cast<bf16>(half);
    wide[absolute_pos()] = cast<double>(brain);
    Expr<uint8_t> small = cast<uint8_t>(i);
    Expr<uint32_t> ones = popcount(small);
    Expr<uint32_t> zeros = leading_zeros(raw);
    bits[absolute_pos()] = ones + zeros;
  }
};

// debug_print with arguments and with escapes in the format.
struct Debug {
  static constexpr std::string_view name = "debug";
  static constexpr std::array<std::string_view, 1> param_names{"x"};
  void operator()(Slice<const float> x) const {
    debug_print("unit %u: x = %f\n", unit_pos(), x[absolute_pos()]);
    debug_print("tab\there \"quoted\" \\ done");
  }
};

// A Var assigned in both branches of an If/Else is assigned after it.
struct BothBranches {
  static constexpr std::string_view name = "both_branches";
  static constexpr std::array<std::string_view, 2> param_names{"x", "out"};
  void operator()(Slice<const float> x, Slice<float> out) const {
    Var<float> v;
    Expr<float> e = x[absolute_pos()];
    If(e > 0.0f, [&] { v = e; }).Else([&] { v = 0.0f; });
    out[absolute_pos()] = v;
  }
};

// An element read is a value, as in CUDA C++: `old` holds y[i] as it was before the store, so the
// load comes first; storing through `y[i]` records no load of y.
struct ElementCopy {
  static constexpr std::string_view name = "element_copy";
  static constexpr std::array<std::string_view, 2> param_names{"y", "out"};
  void operator()(Slice<float> y, Slice<float> out) const {
    auto i = absolute_pos();
    auto old = y[i];
    y[i] = 5.0f;
    out[i] = old;
  }
};

// Plain stores, a chained one among them: no load of an element that is only written.
struct PlainStore {
  static constexpr std::string_view name = "plain_store";
  static constexpr std::array<std::string_view, 3> param_names{"x", "y", "z"};
  void operator()(Slice<const float> x, Slice<float> y, Slice<float> z) const {
    auto i = absolute_pos();
    y[i] = x[i];
    Expr<uint32_t> next = i + 1u;
    y[next] = z[i] = 2.0f;
  }
};

}  // namespace kiln::test
