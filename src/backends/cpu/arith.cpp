// Arithmetic, bitwise and compare instructions, with the IR's exact integer semantics (wrapping,
// clamped shifts, no trap on MIN / -1) written out where C++ would leave them undefined.
#include <bit>
#include <cmath>
#include <limits>

#include "backends/cpu/lanes.h"
#include "kiln/error.h"

namespace kiln::cpu {

namespace {

using ir::OpKind;

template <class T>
using wide_unsigned = std::make_unsigned_t<std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>>;

template <class T>
T wrap_add(T a, T b) {
  using U = wide_unsigned<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}
template <class T>
T wrap_sub(T a, T b) {
  using U = wide_unsigned<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
}
template <class T>
T wrap_mul(T a, T b) {
  using U = wide_unsigned<T>;
  // Promote narrow types to unsigned int so the multiply cannot overflow a signed int.
  using P = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
  return static_cast<T>(static_cast<U>(static_cast<P>(static_cast<U>(a)) * static_cast<P>(static_cast<U>(b))));
}

template <class T>
T shift_left(T a, T n) {
  using U = wide_unsigned<T>;
  U amount = static_cast<U>(n);
  if (amount >= sizeof(T) * 8) return T(0);
  return static_cast<T>(static_cast<U>(static_cast<U>(a) << amount));
}
template <class T>
T shift_right(T a, T n) {
  using U = wide_unsigned<T>;
  U amount = static_cast<U>(n);
  if constexpr (std::is_signed_v<T>) {
    if (amount >= sizeof(T) * 8) return a < 0 ? T(-1) : T(0);
    return static_cast<T>(a >> amount);  // arithmetic shift (C++20 defines it)
  } else {
    if (amount >= sizeof(T) * 8) return T(0);
    return static_cast<T>(a >> amount);
  }
}

template <class Op>
struct BinaryInstr {
  template <class T>
  static uint32_t run(Exec& e, const Instr& in, uint32_t pc) {
    const T* a = e.slot<T>(in.a);
    const T* b = e.slot<T>(in.b);
    if constexpr (Op::compare) {
      uint8_t* d = e.slot<uint8_t>(in.dst);
      for_lanes(e, in.width, [&](uint32_t i) { d[i] = Op::template apply<T>(a[i], b[i]) ? 1 : 0; });
    } else {
      T* d = e.slot<T>(in.dst);
      for_lanes(e, in.width, [&](uint32_t i) { d[i] = Op::template apply<T>(a[i], b[i]); });
    }
    return pc + 1;
  }
};

#define KILN_FLOAT_OR(T, float_expr, int_expr)                        \
  if constexpr (is_float_v<T>) {                                      \
    using C = typename num<T>::calc;                                  \
    C x = num<T>::get(a), y = num<T>::get(b);                         \
    return num<T>::put(float_expr);                                   \
  } else {                                                            \
    return int_expr;                                                  \
  }

struct AddOp {
  static constexpr bool compare = false;
  template <class T> static T apply(T a, T b) { KILN_FLOAT_OR(T, x + y, wrap_add(a, b)) }
};
struct SubOp {
  static constexpr bool compare = false;
  template <class T> static T apply(T a, T b) { KILN_FLOAT_OR(T, x - y, wrap_sub(a, b)) }
};
struct MulOp {
  static constexpr bool compare = false;
  template <class T> static T apply(T a, T b) { KILN_FLOAT_OR(T, x * y, wrap_mul(a, b)) }
};
struct MinOp {
  static constexpr bool compare = false;
  template <class T> static T apply(T a, T b) { KILN_FLOAT_OR(T, std::fmin(x, y), (b < a ? b : a)) }
};
struct MaxOp {
  static constexpr bool compare = false;
  template <class T> static T apply(T a, T b) { KILN_FLOAT_OR(T, std::fmax(x, y), (a < b ? b : a)) }
};
struct AndOp {
  static constexpr bool compare = false;
  template <class T> static T apply(T a, T b) {
    if constexpr (std::is_same_v<T, bool>) return a && b;
    else return static_cast<T>(a & b);
  }
};
struct OrOp {
  static constexpr bool compare = false;
  template <class T> static T apply(T a, T b) {
    if constexpr (std::is_same_v<T, bool>) return a || b;
    else return static_cast<T>(a | b);
  }
};
struct XorOp {
  static constexpr bool compare = false;
  template <class T> static T apply(T a, T b) {
    if constexpr (std::is_same_v<T, bool>) return a != b;
    else return static_cast<T>(a ^ b);
  }
};
struct ShlOp {
  static constexpr bool compare = false;
  template <class T> static T apply(T a, T b) { return shift_left(a, b); }
};
struct ShrOp {
  static constexpr bool compare = false;
  template <class T> static T apply(T a, T b) { return shift_right(a, b); }
};

#define KILN_COMPARE_OP(Name, expr)                                         \
  struct Name {                                                             \
    static constexpr bool compare = true;                                   \
    template <class T>                                                      \
    static bool apply(T a, T b) {                                           \
      auto x = num<T>::get(a);                                              \
      auto y = num<T>::get(b);                                              \
      return expr;                                                          \
    }                                                                       \
  };
KILN_COMPARE_OP(EqOp, x == y)
KILN_COMPARE_OP(NeOp, x != y)
KILN_COMPARE_OP(LtOp, x < y)
KILN_COMPARE_OP(LeOp, x <= y)
KILN_COMPARE_OP(GtOp, x > y)
KILN_COMPARE_OP(GeOp, x >= y)
#undef KILN_COMPARE_OP

// Integer division and remainder: zero divisors are an error, MIN / -1 wraps.
template <bool Rem>
struct DivInstr {
  template <class T>
  static uint32_t run(Exec& e, const Instr& in, uint32_t pc) {
    const T* a = e.slot<T>(in.a);
    const T* b = e.slot<T>(in.b);
    T* d = e.slot<T>(in.dst);
    if constexpr (is_float_v<T>) {
      for_lanes(e, in.width, [&](uint32_t i) {
        auto x = num<T>::get(a[i]);
        auto y = num<T>::get(b[i]);
        d[i] = num<T>::put(Rem ? std::fmod(x, y) : x / y);
      });
    } else {
      for_lanes(e, in.width, [&](uint32_t i) {
        if (b[i] == T(0)) {
          fail(e, in, i / in.width, "arith.division_by_zero",
               std::string(Rem ? "remainder" : "division") + " of an integer by zero");
        }
        if constexpr (std::is_signed_v<T>) {
          if (a[i] == std::numeric_limits<T>::min() && b[i] == T(-1)) {
            d[i] = Rem ? T(0) : a[i];
            return;
          }
        }
        d[i] = static_cast<T>(Rem ? a[i] % b[i] : a[i] / b[i]);
      });
    }
    return pc + 1;
  }
};

template <class T>
uint32_t neg_instr(Exec& e, const Instr& in, uint32_t pc) {
  const T* a = e.slot<T>(in.a);
  T* d = e.slot<T>(in.dst);
  for_lanes(e, in.width, [&](uint32_t i) {
    if constexpr (is_float_v<T>) d[i] = num<T>::put(-num<T>::get(a[i]));
    else d[i] = wrap_sub(T(0), a[i]);
  });
  return pc + 1;
}

template <class T>
uint32_t abs_instr(Exec& e, const Instr& in, uint32_t pc) {
  const T* a = e.slot<T>(in.a);
  T* d = e.slot<T>(in.dst);
  for_lanes(e, in.width, [&](uint32_t i) {
    if constexpr (is_float_v<T>) d[i] = num<T>::put(std::fabs(num<T>::get(a[i])));
    else if constexpr (std::is_signed_v<T>) d[i] = a[i] < 0 ? wrap_sub(T(0), a[i]) : a[i];
    else d[i] = a[i];
  });
  return pc + 1;
}

template <class T>
uint32_t not_instr(Exec& e, const Instr& in, uint32_t pc) {
  const T* a = e.slot<T>(in.a);
  T* d = e.slot<T>(in.dst);
  for_lanes(e, in.width, [&](uint32_t i) {
    if constexpr (std::is_same_v<T, bool>) d[i] = !a[i];
    else d[i] = static_cast<T>(~a[i]);
  });
  return pc + 1;
}

template <class T, OpKind K>
uint32_t bits_instr(Exec& e, const Instr& in, uint32_t pc) {
  const T* a = e.slot<T>(in.a);
  uint32_t* d = e.slot<uint32_t>(in.dst);
  for_lanes(e, in.width, [&](uint32_t i) {
    auto u = static_cast<std::make_unsigned_t<T>>(a[i]);
    d[i] = static_cast<uint32_t>(K == OpKind::LeadingZeros    ? std::countl_zero(u)
                                 : K == OpKind::TrailingZeros ? std::countr_zero(u)
                                                              : std::popcount(u));
  });
  return pc + 1;
}

template <class T>
uint32_t fma_instr(Exec& e, const Instr& in, uint32_t pc) {
  const T* a = e.slot<T>(in.a);
  const T* b = e.slot<T>(in.b);
  const T* c = e.slot<T>(in.c);
  T* d = e.slot<T>(in.dst);
  for_lanes(e, in.width, [&](uint32_t i) {
    d[i] = num<T>::put(std::fma(num<T>::get(a[i]), num<T>::get(b[i]), num<T>::get(c[i])));
  });
  return pc + 1;
}

template <class T>
uint32_t select_instr(Exec& e, const Instr& in, uint32_t pc) {
  const uint8_t* c = e.slot<uint8_t>(in.a);
  const T* x = e.slot<T>(in.b);
  const T* y = e.slot<T>(in.c);
  T* d = e.slot<T>(in.dst);
  // in.d: 1 when the condition has one lane per unit (broadcast over the vector's lanes).
  uint32_t w = in.width;
  bool scalar_cond = in.d == 1;
  for_lanes(e, w, [&](uint32_t i) { d[i] = (scalar_cond ? c[i / w] : c[i]) ? x[i] : y[i]; });
  return pc + 1;
}

struct Picker {
  OpKind kind;
  template <class T>
  InstrFn operator()() const {
    constexpr bool is_bool = std::is_same_v<T, bool>;
    constexpr bool is_int = std::is_integral_v<T> && !is_bool;
    switch (kind) {
      case OpKind::Add: if constexpr (!is_bool) return &BinaryInstr<AddOp>::run<T>; break;
      case OpKind::Sub: if constexpr (!is_bool) return &BinaryInstr<SubOp>::run<T>; break;
      case OpKind::Mul: if constexpr (!is_bool) return &BinaryInstr<MulOp>::run<T>; break;
      case OpKind::Div: if constexpr (!is_bool) return &DivInstr<false>::run<T>; break;
      case OpKind::Rem: if constexpr (!is_bool) return &DivInstr<true>::run<T>; break;
      case OpKind::Min: if constexpr (!is_bool) return &BinaryInstr<MinOp>::run<T>; break;
      case OpKind::Max: if constexpr (!is_bool) return &BinaryInstr<MaxOp>::run<T>; break;
      case OpKind::Neg: if constexpr (!is_bool) return &neg_instr<T>; break;
      case OpKind::Abs: if constexpr (!is_bool) return &abs_instr<T>; break;
      case OpKind::Fma: if constexpr (is_float_v<T>) return &fma_instr<T>; break;
      case OpKind::And: if constexpr (is_int || is_bool) return &BinaryInstr<AndOp>::run<T>; break;
      case OpKind::Or: if constexpr (is_int || is_bool) return &BinaryInstr<OrOp>::run<T>; break;
      case OpKind::Xor: if constexpr (is_int || is_bool) return &BinaryInstr<XorOp>::run<T>; break;
      case OpKind::Not: if constexpr (is_int || is_bool) return &not_instr<T>; break;
      case OpKind::Shl: if constexpr (is_int) return &BinaryInstr<ShlOp>::run<T>; break;
      case OpKind::Shr: if constexpr (is_int) return &BinaryInstr<ShrOp>::run<T>; break;
      case OpKind::Popcount: if constexpr (is_int) return &bits_instr<T, OpKind::Popcount>; break;
      case OpKind::LeadingZeros: if constexpr (is_int) return &bits_instr<T, OpKind::LeadingZeros>; break;
      case OpKind::TrailingZeros: if constexpr (is_int) return &bits_instr<T, OpKind::TrailingZeros>; break;
      case OpKind::Eq: return &BinaryInstr<EqOp>::run<T>;
      case OpKind::Ne: return &BinaryInstr<NeOp>::run<T>;
      case OpKind::Lt: return &BinaryInstr<LtOp>::run<T>;
      case OpKind::Le: return &BinaryInstr<LeOp>::run<T>;
      case OpKind::Gt: return &BinaryInstr<GtOp>::run<T>;
      case OpKind::Ge: return &BinaryInstr<GeOp>::run<T>;
      default: break;
    }
    return nullptr;
  }
};

}  // namespace

InstrFn pick_arith(OpKind kind, ir::Scalar s) {
  InstrFn fn = dispatch_scalar(s, Picker{kind});
  if (!fn) {
    throw Error("compile.unsupported", "the CPU backend has no '" + std::string(ir::op_name(kind)) + "' on " +
                                           std::string(ir::scalar_name(s)));
  }
  return fn;
}

InstrFn pick_select(ir::Scalar s) {
  return dispatch_scalar(s, []<class T>() -> InstrFn { return &select_instr<T>; });
}

}  // namespace kiln::cpu
