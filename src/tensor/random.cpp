// Counter-based random numbers: splitmix64 of (seed, element index), the same function on every
// device; one unit per element.
#include "kiln/tensor/random.h"

#include <cmath>

#include "kiln/half.h"
#include "kiln/runtime/launch.h"
#include "tensor/kernels.h"
#include "tensor/support.h"

namespace kiln {

namespace {

using dsl::Tracer;
using dsl::ValueRef;

enum class Law { Uniform, Normal };

ValueRef u64(Tracer& t, uint64_t v) { return tensor::constant_bits(t, DType::U64, static_cast<int64_t>(v)); }
ValueRef f64(Tracer& t, double v) { return tensor::constant(t, DType::F64, v); }

// splitmix64's finaliser of seed + (i + 1) * golden: 64 well-mixed bits per (seed, i).
ValueRef mix(Tracer& t, const ValueRef& seed, const ValueRef& i) {
  auto mul = [&](const ValueRef& a, const ValueRef& b) { return t.binary(ir::OpKind::Mul, a, b); };
  auto x_shift = [&](const ValueRef& z, uint64_t s) {
    return t.binary(ir::OpKind::Xor, z, t.binary(ir::OpKind::Shr, z, u64(t, s)));
  };
  ValueRef z =
      t.binary(ir::OpKind::Add, seed, mul(t.binary(ir::OpKind::Add, i, u64(t, 1)), u64(t, 0x9E3779B97F4A7C15ull)));
  z = mul(x_shift(z, 30), u64(t, 0xBF58476D1CE4E5B9ull));
  z = mul(x_shift(z, 27), u64(t, 0x94D049BB133111EBull));
  return x_shift(z, 31);
}

// The random bits a uniform draw takes for each type: as many as its significand holds, so that
// every fraction k / 2^bits is one of its values.
int uniform_bits(DType d) { return ir::scalar_facts(d).digits; }

// The largest value of `d` below `hi`: where lo + (hi - lo) u rounds up to hi, the draw takes it.
double below(DType d, double hi) {
  auto step_down = [](uint16_t bits) -> uint16_t {
    if ((bits & 0x7fff) == 0) return 0x8001;  // below +-0: the smallest negative subnormal
    return bits & 0x8000 ? uint16_t(bits + 1) : uint16_t(bits - 1);
  };
  return ir::visit_scalar(d, [&]<class T>() -> double {
    if constexpr (std::is_same_v<T, double>) {
      return std::nextafter(hi, -INFINITY);
    } else if constexpr (std::is_same_v<T, float>) {
      float h = float(hi);
      return double(double(h) < hi ? h : std::nextafter(h, -INFINITY));
    } else if constexpr (ir::is_short_float_type<T>) {
      T h(hi);
      if (double(float(h)) >= hi) h.bits = step_down(h.bits);
      return double(float(h));
    } else {
      return hi;  // random tensors are floats
    }
  });
}

// Params: out (a buffer of dtype), count (u32), seed (u64), a, b (f64: lo, hi or mean, std), top
// (f64: for uniform, the largest value of the type below hi).
ir::Kernel record_random(Law law, DType dtype) {
  ir::Kernel k;
  k.name = law == Law::Uniform ? "tensor_uniform" : "tensor_normal";
  Tracer t(k);
  ValueRef out = t.param("out", ir::Type::buffer(ir::Type::scalar_of(dtype), ir::Access::ReadWrite));
  ValueRef count = t.param("count", ir::Type::scalar_of(ir::Scalar::U32));
  ValueRef seed = t.param("seed", ir::Type::scalar_of(ir::Scalar::U64));
  ValueRef a = t.param("a", ir::Type::scalar_of(ir::Scalar::F64));
  ValueRef b = t.param("b", ir::Type::scalar_of(ir::Scalar::F64));
  ValueRef top = t.param("top", ir::Type::scalar_of(ir::Scalar::F64));
  ValueRef pos = t.builtin(ir::OpKind::AbsolutePos, -1);
  size_t in_range = t.begin_if(t.binary(ir::OpKind::Lt, pos, count));
  ValueRef i = t.cast(pos, ir::Scalar::U64);
  // `bits` high bits of z as a fraction in [0, 1).
  auto fraction = [&](const ValueRef& z, int bits) {
    ValueRef top = t.cast(t.binary(ir::OpKind::Shr, z, u64(t, uint64_t(64 - bits))), ir::Scalar::F64);
    return t.binary(ir::OpKind::Mul, top, f64(t, std::ldexp(1.0, -bits)));
  };
  ValueRef value;
  if (law == Law::Uniform) {
    ValueRef u = fraction(mix(t, seed, i), uniform_bits(dtype));
    value = t.binary(ir::OpKind::Add, a, t.binary(ir::OpKind::Mul, t.binary(ir::OpKind::Sub, b, a), u));
    // [lo, hi): a value that rounds to hi or past it in the type is the type's last one below hi.
    ValueRef rounded = dtype == DType::F64 ? value : t.cast(t.cast(value, dtype), ir::Scalar::F64);
    value = t.select(t.binary(ir::OpKind::Ge, rounded, b), top, value);
  } else {
    // Two independent streams: the index's bits and its complement's.
    ValueRef u1 = t.binary(ir::OpKind::Sub, f64(t, 1.0), fraction(mix(t, seed, i), 53));  // (0, 1]
    ValueRef u2 = fraction(mix(t, seed, t.binary(ir::OpKind::Xor, i, u64(t, ~0ull))), 53);
    ValueRef r = t.unary(ir::OpKind::Sqrt, t.binary(ir::OpKind::Mul, f64(t, -2.0), t.unary(ir::OpKind::Log, u1)));
    ValueRef n =
        t.binary(ir::OpKind::Mul, r, t.unary(ir::OpKind::Cos, t.binary(ir::OpKind::Mul, f64(t, 2 * M_PI), u2)));
    value = t.binary(ir::OpKind::Add, a, t.binary(ir::OpKind::Mul, b, n));
  }
  if (dtype != DType::F64) value = t.cast(value, dtype);
  t.store(out, pos, value);
  t.end_then(in_range);
  t.finish();
  return k;
}

bool lo_below_hi(double lo, double hi) { return lo < hi; }

Tensor random(Law law, const Client& client, const Shape& shape, DType dtype, double a, double b, uint64_t seed) {
  const char* name = law == Law::Uniform ? "uniform" : "normal";
  if (!ir::is_float(dtype)) {
    throw Error("tensor.unsupported_dtype", std::string(name) +
                                                " makes floating-point tensors (f16, bf16, f32, f64), not " +
                                                std::string(ir::scalar_name(dtype)));
  }
  for (int64_t d : shape) {
    if (d < 0)
      throw Error("tensor.shape_mismatch", std::string(name) + ": shape " + to_string(shape) + " has a negative dim");
  }
  Tensor out = tensor::allocate(client, shape, contiguous_strides(shape), dtype);
  const int64_t n = out.numel();
  if (n == 0) return out;
  KernelRef kernel = tensor::cached_kernel(common::Key()("kernel", "tensor_random")("law", law)("dtype", dtype),
                                           [&] { return record_random(law, dtype); });
  const uint32_t count = tensor::checked_u32(n, name, "elements");
  if (law == Law::Uniform && !(lo_below_hi(a, b))) {
    throw Error("tensor.bad_range", std::string(name) + ": [" + std::to_string(a) + ", " + std::to_string(b) +
                                        ") is empty; lo must be below hi");
  }
  const double top = law == Law::Uniform ? below(dtype, b) : 0.0;
  launch(client, kernel, tensor::linear_config(count), {out.handle(), count, seed, a, b, top});
  return out;
}

}  // namespace

Tensor uniform(const Client& client, const Shape& shape, DType dtype, double lo, double hi, uint64_t seed) {
  return random(Law::Uniform, client, shape, dtype, lo, hi, seed);
}

Tensor normal(const Client& client, const Shape& shape, DType dtype, double mean, double std, uint64_t seed) {
  return random(Law::Normal, client, shape, dtype, mean, std, seed);
}

}  // namespace kiln
