// Float math instructions. f32 ops call the float overloads of <cmath>, f64 the double ones, f16
// and bf16 compute in float and round back: the same shape the CUDA emitter uses, so the backends
// differ only by their libm's last-place errors.
#include <cmath>

#include "backends/cpu/lanes.h"
#include "kiln/error.h"

namespace kiln::cpu {

namespace {

using ir::OpKind;

template <class C>
C apply_math(OpKind kind, C x) {
  switch (kind) {
    case OpKind::Exp: return std::exp(x);
    case OpKind::Exp2: return std::exp2(x);
    case OpKind::Log: return std::log(x);
    case OpKind::Log2: return std::log2(x);
    case OpKind::Sqrt: return std::sqrt(x);
    case OpKind::Rsqrt: return C(1) / std::sqrt(x);
    case OpKind::Recip: return C(1) / x;
    case OpKind::Sin: return std::sin(x);
    case OpKind::Cos: return std::cos(x);
    case OpKind::Tan: return std::tan(x);
    case OpKind::Tanh: return std::tanh(x);
    case OpKind::Erf: return std::erf(x);
    case OpKind::Floor: return std::floor(x);
    case OpKind::Ceil: return std::ceil(x);
    case OpKind::Round: return std::round(x);
    case OpKind::Trunc: return std::trunc(x);
    default: return x;
  }
}

// One instantiation per (kind, type): the switch above folds away.
template <class T, OpKind K>
uint32_t unary_math(Exec& e, const Instr& in, uint32_t pc) {
  const T* a = e.slot<T>(in.a);
  T* d = e.slot<T>(in.dst);
  for_lanes(e, in.width, [&](uint32_t i) { d[i] = num<T>::put(apply_math(K, num<T>::get(a[i]))); });
  return pc + 1;
}

template <class C>
C apply_math2(OpKind kind, C x, C y) {
  switch (kind) {
    case OpKind::Pow: return std::pow(x, y);
    case OpKind::CopySign: return std::copysign(x, y);
    default: return x;
  }
}

template <class T, OpKind K>
uint32_t binary_math(Exec& e, const Instr& in, uint32_t pc) {
  const T* a = e.slot<T>(in.a);
  const T* b = e.slot<T>(in.b);
  T* d = e.slot<T>(in.dst);
  for_lanes(e, in.width, [&](uint32_t i) { d[i] = num<T>::put(apply_math2(K, num<T>::get(a[i]), num<T>::get(b[i]))); });
  return pc + 1;
}

template <class T, bool Nan>
uint32_t class_instr(Exec& e, const Instr& in, uint32_t pc) {
  const T* a = e.slot<T>(in.a);
  uint8_t* d = e.slot<uint8_t>(in.dst);
  for_lanes(e, in.width, [&](uint32_t i) {
    auto x = num<T>::get(a[i]);
    d[i] = Nan ? std::isnan(x) : std::isinf(x);
  });
  return pc + 1;
}

template <class T>
InstrFn pick_for(OpKind kind) {
  switch (kind) {
#define KILN_M(k) \
  case OpKind::k: return &unary_math<T, OpKind::k>;
    KILN_M(Exp) KILN_M(Exp2) KILN_M(Log) KILN_M(Log2) KILN_M(Sqrt) KILN_M(Rsqrt) KILN_M(Recip) KILN_M(Sin)
    KILN_M(Cos) KILN_M(Tan) KILN_M(Tanh) KILN_M(Erf) KILN_M(Floor) KILN_M(Ceil) KILN_M(Round) KILN_M(Trunc)
#undef KILN_M
    case OpKind::Pow: return &binary_math<T, OpKind::Pow>;
    case OpKind::CopySign: return &binary_math<T, OpKind::CopySign>;
    case OpKind::IsNan: return &class_instr<T, true>;
    case OpKind::IsInf: return &class_instr<T, false>;
    default: return nullptr;
  }
}

}  // namespace

InstrFn pick_math(OpKind kind, ir::Scalar s) {
  InstrFn fn = nullptr;
  switch (s) {
    case ir::Scalar::F16: fn = pick_for<f16>(kind); break;
    case ir::Scalar::BF16: fn = pick_for<bf16>(kind); break;
    case ir::Scalar::F32: fn = pick_for<float>(kind); break;
    case ir::Scalar::F64: fn = pick_for<double>(kind); break;
    default: break;
  }
  if (!fn) {
    throw Error("compile.unsupported", "the CPU backend has no '" + std::string(ir::op_name(kind)) + "' on " +
                                           std::string(ir::scalar_name(s)));
  }
  return fn;
}

}  // namespace kiln::cpu
