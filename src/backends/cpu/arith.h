// Arithmetic, bitwise, compare and select on the CPU backend: the ops (which scalars each takes
// and what one lane computes), their executors and how they are planned, with the IR's exact
// integer semantics (wrapping, clamped shifts, no trap on MIN / -1) written out where C++ would
// leave them undefined. Each family plans in a file of its own (arith_*.cpp), so that the compiler
// makes their thousand-odd executors (op x scalar x which operands are rows) on several cores;
// arith.cpp dispatches.
//
// Adding an elementwise op: a struct saying which scalars it `takes` and what one lane computes
// (`apply`), and one case in its family's plan function. An operand may be uniform (a row,
// plan.h); the executors read either form, and a uniform result runs them for one unit
// (run_uniform).
#pragma once

#include <bit>
#include <cmath>
#include <limits>

#include "backends/cpu/lanes.h"
#include "backends/cpu/planner.h"

namespace kiln::cpu::arith {

using ir::OpKind;

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

template <class T>
constexpr bool kIsBool = std::is_same_v<T, bool>;
template <class T>
constexpr bool kIsInt = std::is_integral_v<T> && !kIsBool<T>;

// ---- the ops: which scalars each takes and what one lane computes ----------------------------

// Floats compute in num<T>::calc (f16/bf16 in float, rounded back); integers as written.
#define KILN_FLOAT_OR(T, float_expr, int_expr) \
  if constexpr (is_float_v<T>) {               \
    using C = typename num<T>::calc;           \
    C x = num<T>::get(a), y = num<T>::get(b);  \
    return num<T>::put(float_expr);            \
  } else {                                     \
    return int_expr;                           \
  }

struct Numbers {
  template <class T>
  static constexpr bool takes = !kIsBool<T>;
};
struct IntsAndBool {
  template <class T>
  static constexpr bool takes = std::is_integral_v<T>;
};
struct Ints {
  template <class T>
  static constexpr bool takes = kIsInt<T>;
};
struct Floats {
  template <class T>
  static constexpr bool takes = is_float_v<T>;
};
struct Any {
  template <class T>
  static constexpr bool takes = true;
};

struct AddOp : Numbers {
  template <class T>
  static T apply(T a, T b) {
    KILN_FLOAT_OR(T, x + y, wrap_add(a, b))
  }
};
struct SubOp : Numbers {
  template <class T>
  static T apply(T a, T b) {
    KILN_FLOAT_OR(T, x - y, wrap_sub(a, b))
  }
};
struct MulOp : Numbers {
  template <class T>
  static T apply(T a, T b) {
    KILN_FLOAT_OR(T, x * y, wrap_mul(a, b))
  }
};
struct MinOp : Numbers {
  template <class T>
  static T apply(T a, T b) {
    KILN_FLOAT_OR(T, float_min(x, y), (b < a ? b : a))
  }
};
struct MaxOp : Numbers {
  template <class T>
  static T apply(T a, T b) {
    KILN_FLOAT_OR(T, float_max(x, y), (a < b ? b : a))
  }
};
struct AndOp : IntsAndBool {
  template <class T>
  static T apply(T a, T b) {
    if constexpr (kIsBool<T>) return a && b;
    else return static_cast<T>(a & b);
  }
};
struct OrOp : IntsAndBool {
  template <class T>
  static T apply(T a, T b) {
    if constexpr (kIsBool<T>) return a || b;
    else return static_cast<T>(a | b);
  }
};
struct XorOp : IntsAndBool {
  template <class T>
  static T apply(T a, T b) {
    if constexpr (kIsBool<T>) return a != b;
    else return static_cast<T>(a ^ b);
  }
};
struct ShlOp : Ints {
  template <class T>
  static T apply(T a, T b) {
    return shift_left(a, b);
  }
};
struct ShrOp : Ints {
  template <class T>
  static T apply(T a, T b) {
    return shift_right(a, b);
  }
};
// Compares give bool with the operands' lanes; IEEE on floats.
#define KILN_COMPARE_OP(Name, expr) \
  struct Name : Any {               \
    template <class T>              \
    static bool apply(T a, T b) {   \
      auto x = num<T>::get(a);      \
      auto y = num<T>::get(b);      \
      return expr;                  \
    }                               \
  };
KILN_COMPARE_OP(EqOp, x == y)
KILN_COMPARE_OP(NeOp, x != y)
KILN_COMPARE_OP(LtOp, x < y)
KILN_COMPARE_OP(LeOp, x <= y)
KILN_COMPARE_OP(GtOp, x > y)
KILN_COMPARE_OP(GeOp, x >= y)
#undef KILN_COMPARE_OP

// The sign bit of a float stored as its bits (f16, bf16, fp8): negation and absolute value flip or
// clear it, as IEEE's negate and abs do (and as CUDA's device library does): a NaN keeps its
// payload, and an fp8 infinity stays one (a round trip through f32 would saturate it).
template <class T>
constexpr auto kSignBit = decltype(T::bits)(1u << (8 * sizeof(T::bits) - 1));

struct NegOp : Numbers {
  template <class T>
  static T apply(T a) {
    if constexpr (is_short_float_v<T>) return T::from_bits(decltype(a.bits)(a.bits ^ kSignBit<T>));
    else if constexpr (is_float_v<T>) return num<T>::put(-num<T>::get(a));
    else return wrap_sub(T(0), a);
  }
};
struct AbsOp : Numbers {
  template <class T>
  static T apply(T a) {
    if constexpr (is_short_float_v<T>) return T::from_bits(decltype(a.bits)(a.bits & ~kSignBit<T>));
    else if constexpr (is_float_v<T>) return num<T>::put(std::fabs(num<T>::get(a)));
    else if constexpr (std::is_signed_v<T>) return a < 0 ? wrap_sub(T(0), a) : a;
    else return a;
  }
};
struct NotOp : IntsAndBool {
  template <class T>
  static T apply(T a) {
    if constexpr (kIsBool<T>) return !a;
    else return static_cast<T>(~a);
  }
};
struct PopcountOp : Ints {
  template <class T>
  static uint32_t apply(T a) {
    return uint32_t(std::popcount(static_cast<std::make_unsigned_t<T>>(a)));
  }
};
struct LeadingZerosOp : Ints {
  template <class T>
  static uint32_t apply(T a) {
    return uint32_t(std::countl_zero(static_cast<std::make_unsigned_t<T>>(a)));
  }
};
struct TrailingZerosOp : Ints {
  template <class T>
  static uint32_t apply(T a) {
    return uint32_t(std::countr_zero(static_cast<std::make_unsigned_t<T>>(a)));
  }
};

// ---- executors -------------------------------------------------------------------------------

// What an op's apply gives, as stored: bool results are bytes.
template <class R>
using stored_t = std::conditional_t<std::is_same_v<R, bool>, uint8_t, R>;

template <class Op, class T>
struct Binary {
  template <bool UA, bool UB>
  struct At {
    static uint32_t run(Exec& e, const Instr& in, uint32_t pc) {
      const Elementwise& x = in.as<Elementwise>();
      const Operand<T, UA> a(e, x.a);
      const Operand<T, UB> b(e, x.b);
      using D = stored_t<decltype(Op::template apply<T>(T{}, T{}))>;
      D* d = e.slot<D>(in.dst.slot);
      for_elements<UA || UB>(e, x.width,
                             [&](uint32_t i, uint32_t j) { d[i] = D(Op::template apply<T>(a(i, j), b(i, j))); });
      return pc + 1;
    }
  };
};

template <class Op, class T>
uint32_t unary(Exec& e, const Instr& in, uint32_t pc) {
  const Elementwise& x = in.as<Elementwise>();
  const T* a = e.slot<T>(x.a.slot);
  using D = stored_t<decltype(Op::template apply<T>(T{}))>;
  D* d = e.slot<D>(in.dst.slot);
  for_lanes(e, x.width, [&](uint32_t i) { d[i] = D(Op::template apply<T>(a[i])); });
  return pc + 1;
}

// Integer division and remainder: zero divisors are an error, MIN / -1 wraps. Float `rem` is fmod.
template <bool Rem, class T>
struct Divide {
  template <bool UA, bool UB>
  struct At {
    static uint32_t run(Exec& e, const Instr& in, uint32_t pc) {
      const Elementwise& x = in.as<Elementwise>();
      const Operand<T, UA> a(e, x.a);
      const Operand<T, UB> b(e, x.b);
      T* d = e.slot<T>(in.dst.slot);
      const uint32_t w = x.width;
      if constexpr (is_float_v<T>) {
        for_elements<UA || UB>(e, w, [&](uint32_t i, uint32_t j) {
          auto p = num<T>::get(a(i, j));
          auto q = num<T>::get(b(i, j));
          d[i] = num<T>::put(Rem ? std::fmod(p, q) : p / q);
        });
      } else {
        for_elements<UA || UB>(e, w, [&](uint32_t i, uint32_t j) {
          const T p = a(i, j), q = b(i, j);
          if (q == T(0)) {
            fail(e, in, i / w, "arith.division_by_zero",
                 std::string(Rem ? "remainder" : "division") + " of an integer by zero");
          }
          if constexpr (std::is_signed_v<T>) {
            if (p == std::numeric_limits<T>::min() && q == T(-1)) {
              d[i] = Rem ? T(0) : p;
              return;
            }
          }
          d[i] = static_cast<T>(Rem ? p % q : p / q);
        });
      }
      return pc + 1;
    }
  };
};

template <class T>
struct Fma {
  template <bool UA, bool UB, bool UC>
  struct At {
    static uint32_t run(Exec& e, const Instr& in, uint32_t pc) {
      const Elementwise& x = in.as<Elementwise>();
      const Operand<T, UA> a(e, x.a);
      const Operand<T, UB> b(e, x.b);
      const Operand<T, UC> c(e, x.c);
      T* d = e.slot<T>(in.dst.slot);
      for_elements<UA || UB || UC>(e, x.width, [&](uint32_t i, uint32_t j) {
        d[i] = num<T>::put(std::fma(num<T>::get(a(i, j)), num<T>::get(b(i, j)), num<T>::get(c(i, j))));
      });
      return pc + 1;
    }
  };
};

template <class T, bool LaneCond>
struct SelectInstr {
  template <bool UC, bool UX, bool UY>
  struct At {
    static uint32_t run(Exec& e, const Instr& in, uint32_t pc) {
      const Select& s = in.as<Select>();
      const Operand<uint8_t, UC> c(e, s.cond);
      const Operand<T, UX> x(e, s.if_true);
      const Operand<T, UY> y(e, s.if_false);
      T* d = e.slot<T>(in.dst.slot);
      const uint32_t w = s.width;
      for_elements<UC || UX || UY>(e, w, [&](uint32_t i, uint32_t j) {
        // A condition of one lane per unit picks whole vectors: element i's unit is i / w.
        const uint8_t t = UC || LaneCond ? c(i, j) : c(i / w, 0);
        d[i] = t ? x(i, j) : y(i, j);
      });
      return pc + 1;
    }
  };
};

// ---- planning --------------------------------------------------------------------------------

// Whether the executor of op reads operand r as a row: r is uniform and op's result is not (a
// uniform result runs for one unit, whose element of each row is the row's first).
inline bool row(Planner& p, const ir::Op& op, Ref r) { return r.uniform && !p.uniform(op.result); }

using BinaryOperands = ir::ops::Binary;
using UnaryOperands = ir::ops::Unary;

template <class Op>
bool binary(Planner& p, const ir::Op& op) {
  Elementwise x{p.operand(op, BinaryOperands::lhs),
                p.operand(op, BinaryOperands::rhs),
                {},
                p.operand_type(op, BinaryOperands::lhs).width};
  const ir::Scalar s = p.operand_type(op, BinaryOperands::lhs).scalar;
  const bool ua = row(p, op, x.a), ub = row(p, op, x.b);
  InstrFn fn = ir::visit_scalar(s, [&]<class T>() -> InstrFn {
    if constexpr (Op::template takes<T>) return by_rows<Binary<Op, T>::template At>(ua, ub);
    else return nullptr;
  });
  p.emit(op, require(fn, op.kind, s), x);
  return true;
}

template <class Op>
bool unary_op(Planner& p, const ir::Op& op) {
  Elementwise x{p.operand(op, UnaryOperands::x), {}, {}, p.operand_type(op, UnaryOperands::x).width};
  const ir::Scalar s = p.operand_type(op, UnaryOperands::x).scalar;
  InstrFn fn = ir::visit_scalar(s, [&]<class T>() -> InstrFn {
    if constexpr (Op::template takes<T>) return &unary<Op, T>;
    else return nullptr;
  });
  p.emit(op, require(fn, op.kind, s), x);
  return true;
}

template <bool Rem>
bool divide(Planner& p, const ir::Op& op) {
  Elementwise x{p.operand(op, BinaryOperands::lhs),
                p.operand(op, BinaryOperands::rhs),
                {},
                p.operand_type(op, BinaryOperands::lhs).width};
  const ir::Scalar s = p.operand_type(op, BinaryOperands::lhs).scalar;
  const bool ua = row(p, op, x.a), ub = row(p, op, x.b);
  InstrFn fn = ir::visit_scalar(s, [&]<class T>() -> InstrFn {
    if constexpr (!kIsBool<T>) return by_rows<Divide<Rem, T>::template At>(ua, ub);
    else return nullptr;
  });
  p.emit(op, require(fn, op.kind, s), x);
  return true;
}

inline bool fma(Planner& p, const ir::Op& op) {
  using F = ir::ops::Fma;
  Elementwise x{p.operand(op, F::a), p.operand(op, F::b), p.operand(op, F::c), p.operand_type(op, F::a).width};
  const ir::Scalar s = p.operand_type(op, F::a).scalar;
  const bool ua = row(p, op, x.a), ub = row(p, op, x.b), uc = row(p, op, x.c);
  InstrFn fn = ir::visit_scalar(s, [&]<class T>() -> InstrFn {
    if constexpr (is_float_v<T>) return by_rows<Fma<T>::template At>(ua, ub, uc);
    else return nullptr;
  });
  p.emit(op, require(fn, op.kind, s), x);
  return true;
}

inline bool select(Planner& p, const ir::Op& op) {
  using S = ir::ops::Select;
  Select s{p.operand(op, S::condition), p.operand(op, S::if_true), p.operand(op, S::if_false), op.type.width, false};
  s.lane_cond = p.operand_type(op, S::condition).width == op.type.width;
  const bool uc = row(p, op, s.cond), ux = row(p, op, s.if_true), uy = row(p, op, s.if_false);
  InstrFn fn = ir::visit_scalar(op.type.scalar, [&]<class T>() -> InstrFn {
    return s.lane_cond ? by_rows<SelectInstr<T, true>::template At>(uc, ux, uy)
                       : by_rows<SelectInstr<T, false>::template At>(uc, ux, uy);
  });
  p.emit(op, fn, s);
  return true;
}

// The families' plans: each returns false for an op of another family.
bool plan_numeric(Planner& p, const ir::Op& op);  // arith_numeric.cpp: add sub mul min max neg abs
bool plan_divide(Planner& p, const ir::Op& op);   // arith_divide.cpp: div rem fma select
bool plan_bitwise(Planner& p, const ir::Op& op);  // arith_bitwise.cpp: and or xor not shl shr, bit counts
bool plan_compare(Planner& p, const ir::Op& op);  // arith_compare.cpp: the six compares

}  // namespace kiln::cpu::arith
