// Float math: planning and executors. f32 ops call the float overloads of <cmath>, f64 the double
// ones, f16 and bf16 compute in float and round back: the same shape the CUDA emitter uses, so the
// backends differ only by their libm's last-place errors.
//
// Adding a math op: one row in KILN_CPU_UNARY_MATH (what one lane computes from x) or
// KILN_CPU_BINARY_MATH (from x and y), or a case in plan_math for other shapes.
#include <cmath>

#include "backends/cpu/lanes.h"
#include "backends/cpu/planner.h"

namespace kiln::cpu {

namespace {

using ir::OpKind;

// X(kind, the result for one lane x, computed in float or double)
#define KILN_CPU_UNARY_MATH(X)  \
  X(Exp, std::exp(x))           \
  X(Exp2, std::exp2(x))         \
  X(Log, std::log(x))           \
  X(Log2, std::log2(x))         \
  X(Sqrt, std::sqrt(x))         \
  X(Rsqrt, C(1) / std::sqrt(x)) \
  X(Recip, C(1) / x)            \
  X(Sin, std::sin(x))           \
  X(Cos, std::cos(x))           \
  X(Tan, std::tan(x))           \
  X(Tanh, std::tanh(x))         \
  X(Erf, std::erf(x))           \
  X(Floor, std::floor(x))       \
  X(Ceil, std::ceil(x))         \
  X(Round, std::round(x))       \
  X(Trunc, std::trunc(x))

// X(kind, the result for lanes x and y)
#define KILN_CPU_BINARY_MATH(X) \
  X(Pow, std::pow(x, y))        \
  X(CopySign, std::copysign(x, y))

template <OpKind K, class C>
C apply_math(C x) {
  switch (K) {
#define KILN_X(kind, expr) \
  case OpKind::kind: return expr;
    KILN_CPU_UNARY_MATH(KILN_X)
#undef KILN_X
    default: return x;
  }
}

template <OpKind K, class C>
C apply_math(C x, C y) {
  switch (K) {
#define KILN_X(kind, expr) \
  case OpKind::kind: return expr;
    KILN_CPU_BINARY_MATH(KILN_X)
#undef KILN_X
    default: return x;
  }
}

// One instantiation per (kind, type): the switch above folds away.
template <class T, OpKind K>
uint32_t unary_math(Exec& e, const Instr& in, uint32_t pc) {
  const Elementwise& x = in.as<Elementwise>();
  const T* a = e.slot<T>(x.a.slot);
  T* d = e.slot<T>(in.dst.slot);
  for_lanes(e, x.width, [&](uint32_t i) { d[i] = num<T>::put(apply_math<K>(num<T>::get(a[i]))); });
  return pc + 1;
}

template <class T, OpKind K>
struct BinaryMath {
  template <bool UA, bool UB>
  struct At {
    static uint32_t run(Exec& e, const Instr& in, uint32_t pc) {
      const Elementwise& x = in.as<Elementwise>();
      const Operand<T, UA> a(e, x.a);
      const Operand<T, UB> b(e, x.b);
      T* d = e.slot<T>(in.dst.slot);
      for_elements<UA || UB>(e, x.width, [&](uint32_t i, uint32_t j) {
        d[i] = num<T>::put(apply_math<K>(num<T>::get(a(i, j)), num<T>::get(b(i, j))));
      });
      return pc + 1;
    }
  };
};

template <class T, bool Nan>
uint32_t class_instr(Exec& e, const Instr& in, uint32_t pc) {
  const Elementwise& x = in.as<Elementwise>();
  const T* a = e.slot<T>(x.a.slot);
  uint8_t* d = e.slot<uint8_t>(in.dst.slot);
  for_lanes(e, x.width, [&](uint32_t i) {
    auto v = num<T>::get(a[i]);
    d[i] = Nan ? std::isnan(v) : std::isinf(v);
  });
  return pc + 1;
}

// Calls fn.template operator()<T>() for the float scalars; nullptr for the others.
template <class Fn>
InstrFn on_floats(ir::Scalar s, Fn&& fn) {
  return ir::visit_scalar(s, [&]<class T>() -> InstrFn {
    if constexpr (is_float_v<T>) return fn.template operator()<T>();
    else return nullptr;
  });
}

}  // namespace

bool plan_math(Planner& p, const ir::Op& op) {
  if (!ir::is_float_math(op.kind)) return false;
  // Math ops take operands of one type: the first one's (x, or a binary op's lhs) is theirs.
  const ir::Value first = op.operands.front();
  const ir::Scalar s = p.type_of(first).scalar;
  Elementwise x;
  InstrFn fn = nullptr;
  switch (op.kind) {
#define KILN_X(kind, expr) \
  case OpKind::kind: fn = on_floats(s, []<class T>() -> InstrFn { return &unary_math<T, OpKind::kind>; }); break;
    KILN_CPU_UNARY_MATH(KILN_X)
#undef KILN_X
    case OpKind::IsNan: fn = on_floats(s, []<class T>() -> InstrFn { return &class_instr<T, true>; }); break;
    case OpKind::IsInf: fn = on_floats(s, []<class T>() -> InstrFn { return &class_instr<T, false>; }); break;
#define KILN_X(kind, expr)                                                                                             \
  case OpKind::kind: {                                                                                                 \
    x.b = p.operand(op, ir::ops::Binary::rhs);                                                                         \
    const bool ua = p.operand(op, ir::ops::Binary::lhs).uniform && !p.uniform(op.result);                              \
    const bool ub = x.b.uniform && !p.uniform(op.result);                                                              \
    fn =                                                                                                               \
        on_floats(s, [&]<class T>() -> InstrFn { return by_rows<BinaryMath<T, OpKind::kind>::template At>(ua, ub); }); \
    break;                                                                                                             \
  }
      KILN_CPU_BINARY_MATH(KILN_X)
#undef KILN_X
    default: return false;
  }
  x.a = p.ref(first);
  x.width = p.type_of(first).width;
  p.emit(op, require(fn, op.kind, s), x);
  return true;
}

}  // namespace kiln::cpu
