// What the tensor tests share: the devices to run on, fusion on or off for a scope, fresh random
// tensors of any element type, host copies of a view's values, and comparison with a tolerance by
// element type.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kiln/runtime.h"
#include "kiln/tensor.h"
#include "support/expect_error.h"

namespace kiln::test {

inline std::vector<Device> devices() {
  std::vector<Device> d = {Device::cpu()};
  for (const Device& x : Device::all()) {
    if (x.kind() == DeviceKind::Cuda) d.push_back(x);
  }
  return d;
}

// Fusion on or off for one scope, whatever KILN_FUSION says. With fusion on, a lone op runs at
// its first use through a recorded order; off, at its call: the two take different paths through
// the walk engine, so tests of layout and memory run both.
struct FusionMode {
  explicit FusionMode(bool on) { fusion::set_enabled(on); }
  ~FusionMode() { fusion::set_enabled(std::nullopt); }
  FusionMode(const FusionMode&) = delete;
  FusionMode& operator=(const FusionMode&) = delete;
};

// `v` rounded to `t` and stored in its bytes.
inline void put(DType t, unsigned char* p, double v) {
  ir::visit_scalar(t, [&]<class T>() {
    T x;
    if constexpr (std::is_same_v<T, bool>) x = v != 0;
    else if constexpr (ir::is_short_float_type<T>) x = T(static_cast<float>(v));
    else x = static_cast<T>(v);
    std::memcpy(p, &x, sizeof x);
  });
}

inline double get(DType t, const unsigned char* p) {
  return ir::visit_scalar(t, [&]<class T>() -> double {
    T x;
    std::memcpy(&x, p, sizeof x);
    if constexpr (ir::is_short_float_type<T>) return float(x);
    else return double(x);
  });
}

inline std::vector<double> values(const TensorData& d) {
  std::vector<double> v(size_t(d.numel()));
  const int b = ir::scalar_bytes(d.dtype);
  for (size_t i = 0; i < v.size(); ++i) v[i] = get(d.dtype, d.bytes.data() + i * size_t(b));
  return v;
}

inline TensorData data_of(DType t, const Shape& shape, const std::vector<double>& v) {
  TensorData d;
  d.dtype = t;
  d.shape = shape;
  d.bytes.resize(v.size() * size_t(ir::scalar_bytes(t)));
  for (size_t i = 0; i < v.size(); ++i) put(t, d.bytes.data() + i * size_t(ir::scalar_bytes(t)), v[i]);
  return d;
}

// Fresh values for `t`: integers in [lo, hi] for integer types, uniform floats otherwise; each
// value as `t` holds it (rounded), so that the host reference starts from the same numbers.
inline std::vector<double> random_values(DType t, size_t n, uint32_t seed, double lo = -4, double hi = 4) {
  std::mt19937 g(seed);
  std::vector<double> v(n);
  if (ir::is_int(t) || t == DType::Bool) {
    std::uniform_int_distribution<int64_t> u{static_cast<int64_t>(lo), static_cast<int64_t>(hi)};
    for (double& x : v) x = double(u(g));
  } else {
    std::uniform_real_distribution<double> u(lo, hi);
    for (double& x : v) x = u(g);
  }
  TensorData d = data_of(t, {int64_t(n)}, v);
  return values(d);
}

// A host array with a shape: what a test's reference computes on.
struct HostTensor {
  Shape shape;
  std::vector<double> v;  // row-major
};

inline HostTensor random_host(DType t, const Shape& shape, uint32_t seed, double lo = -4, double hi = 4) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return HostTensor{shape, random_values(t, size_t(n), seed, lo, hi)};
}

inline Tensor upload(const Client& c, DType t, const HostTensor& h) {
  return Tensor::from_data(c, data_of(t, h.shape, h.v));
}

// The row-major values of `view`, a view of `base` (whose host values are `host`), read through
// the view's shape, strides and start offset on the host.
inline HostTensor host_view(const Tensor& base, const HostTensor& host, const Tensor& view) {
  const int64_t start = int64_t(view.handle().offset() - base.handle().offset()) / ir::scalar_bytes(view.dtype());
  HostTensor out{view.shape(), std::vector<double>(size_t(view.numel()))};
  for (size_t i = 0; i < out.v.size(); ++i) {
    int64_t rest = int64_t(i), off = start;
    for (size_t d = view.shape().size(); d-- > 0;) {
      off += rest % view.shape()[d] * view.strides()[d];
      rest /= view.shape()[d];
    }
    out.v[i] = host.v[size_t(off)];
  }
  return out;
}

// Tolerance by element type, relative to max(1, |want|).
// By the type's precision (bits of significand): 8 (bf16), 11 (f16), 24 (f32), 53 (f64).
inline double tolerance(DType t) {
  if (!ir::is_float(t)) return 0;
  const int digits = ir::scalar_facts(t).digits;
  return digits <= 8 ? 1.6e-2 : digits <= 11 ? 2e-3 : digits <= 24 ? 2e-6 : 1e-14;
}

inline void expect_values(const Tensor& got, const std::vector<double>& want, double tol, const std::string& what) {
  std::vector<double> g = values(got.to_data());
  ASSERT_EQ(g.size(), want.size()) << what;
  size_t bad = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const bool both_nan = (std::isnan(g[i]) && std::isnan(want[i])) || g[i] == want[i];  // NaN, or equal (infinities)
    const double err = std::fabs(g[i] - want[i]);
    if (!both_nan && !(err <= tol * std::max(1.0, std::fabs(want[i])))) {
      if (++bad <= 3) ADD_FAILURE() << what << ": element " << i << " is " << g[i] << ", want " << want[i];
    }
  }
  EXPECT_EQ(bad, 0u) << what;
}

}  // namespace kiln::test
