// The element types, defined once: each row says what an IR scalar is called in the text form and
// in C++, which C++ type holds one, and which scalar it is computed in. Every other fact (size,
// kind, signedness, the unsigned of the same width) is derived from the C++ type, and every layer
// that needs the C++ type of a run-time scalar gets it from visit_scalar, never from a switch of
// its own.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>
#include <type_traits>
#include <utility>

#include "kiln/barrier.h"
#include "kiln/float8.h"
#include "kiln/half.h"

namespace kiln::ir {

// X(Enum, "text", C++ type, "C++ spelling", compute Enum). The order is the text form's keyword
// table's; nothing else may rely on it. `compute` is the scalar arithmetic on this one runs in:
// f16, bf16 and the fp8 formats are stored as their bits and computed in f32, rounded back after
// each op (docs/ir.md); a conversion to fp8 saturates (kiln/float8.h). `barrier` is the element of
// shared arrays of mbarriers (kiln/barrier.h): no value has it (type_rules.cpp refuses one), and
// it is neither a number nor a bool.
#define KILN_ELEMENT_TYPES(X)                        \
  X(Bool, "bool", bool, "bool", Bool)                \
  X(I8, "i8", int8_t, "int8_t", I8)                  \
  X(I16, "i16", int16_t, "int16_t", I16)             \
  X(I32, "i32", int32_t, "int32_t", I32)             \
  X(I64, "i64", int64_t, "int64_t", I64)             \
  X(U8, "u8", uint8_t, "uint8_t", U8)                \
  X(U16, "u16", uint16_t, "uint16_t", U16)           \
  X(U32, "u32", uint32_t, "uint32_t", U32)           \
  X(U64, "u64", uint64_t, "uint64_t", U64)           \
  X(F16, "f16", ::kiln::f16, "f16", F32)             \
  X(BF16, "bf16", ::kiln::bf16, "bf16", F32)         \
  X(F8E4M3, "f8e4m3", ::kiln::f8e4m3, "f8e4m3", F32) \
  X(F8E5M2, "f8e5m2", ::kiln::f8e5m2, "f8e5m2", F32) \
  X(F32, "f32", float, "float", F32)                 \
  X(F64, "f64", double, "double", F64)               \
  X(Barrier, "barrier", ::kiln::Mbarrier, "Mbarrier", Barrier)

enum class Scalar : uint8_t {
#define KILN_X(e, text, T, cpp, compute) e,
  KILN_ELEMENT_TYPES(KILN_X)
#undef KILN_X
};

// Whether C++ type T is a float narrower than f32 (f16, bf16, fp8): stored as its bits, computed
// in f32.
template <class T>
inline constexpr bool is_short_float_type =
    std::is_same_v<T, f16> || std::is_same_v<T, bf16> || std::is_same_v<T, f8e4m3> || std::is_same_v<T, f8e5m2>;
template <class T>
inline constexpr bool is_float_type = std::is_floating_point_v<T> || is_short_float_type<T>;
template <class T>
inline constexpr bool is_int_type = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// The C++ type of scalar S.
template <Scalar S>
struct scalar_cpp;
#define KILN_X(e, text, T, cpp, compute) \
  template <>                            \
  struct scalar_cpp<Scalar::e> {         \
    using type = T;                      \
  };
KILN_ELEMENT_TYPES(KILN_X)
#undef KILN_X
template <Scalar S>
using scalar_t = typename scalar_cpp<S>::type;

// The type visit_scalar gives for a row's C++ type: itself, except a barrier, which is visited as
// its eight bytes (uint64_t). No value is a barrier, so a visit reaches one only where bytes are
// moved (a shared array's poison), and no site needs a case for it.
template <class T>
struct visited {
  using type = T;
};
template <>
struct visited<::kiln::Mbarrier> {
  using type = uint64_t;
};

// The one dispatch from a run-time scalar to its C++ type: fn.template operator()<T>() with T the
// C++ type of `s` (`[&]<class T>() { ... }`). Code that takes only some scalars filters with
// `if constexpr` on T (is_float_type<T>, is_int_type<T>) and answers the others itself.
template <class Fn>
constexpr decltype(auto) visit_scalar(Scalar s, Fn&& fn) {
  switch (s) {
#define KILN_X(e, text, T, cpp, compute) \
  case Scalar::e: return std::forward<Fn>(fn).template operator()<typename visited<T>::type>();
    KILN_ELEMENT_TYPES(KILN_X)
#undef KILN_X
  }
  return std::forward<Fn>(fn).template operator()<bool>();  // not reached: every Scalar has a row
}

// What the rows say of each scalar, with what follows from its C++ type.
struct ScalarFacts {
  std::string_view name;      // the text form's "f32"
  std::string_view cpp_name;  // how a program spells it: "float", "int32_t", "f16"
  int bytes;
  bool is_float;
  bool is_signed_int;
  bool is_unsigned_int;
  Scalar compute;      // the scalar its arithmetic runs in
  Scalar as_unsigned;  // the unsigned integer of its width, for integers (itself for the others)
  int digits;          // bits of precision: a float's significand with its implicit bit (11 for f16,
                       // 8 for bf16, 24 for f32, 53 for f64), an integer's value bits, 1 for bool
};

namespace detail {
// The row whose C++ type is the unsigned integer of T's width.
template <class T>
constexpr Scalar unsigned_scalar_of(Scalar self) {
  if constexpr (is_int_type<T>) {
    using U = std::make_unsigned_t<T>;
#define KILN_X(e, text, T, cpp, compute) \
  if constexpr (std::is_same_v<U, T>) return Scalar::e;
    KILN_ELEMENT_TYPES(KILN_X)
#undef KILN_X
  }
  return self;
}
template <class T>
constexpr int digits_of() {
  if constexpr (is_short_float_type<T>) return T::mantissa_bits + 1;
  else return std::numeric_limits<T>::digits;
}
}  // namespace detail

inline constexpr ScalarFacts kScalarFacts[] = {
#define KILN_X(e, text, T, cpp, compute)     \
  {text,                                     \
   cpp,                                      \
   int(sizeof(T)),                           \
   is_float_type<T>,                         \
   is_int_type<T> && std::is_signed_v<T>,    \
   is_int_type<T> && std::is_unsigned_v<T>,  \
   Scalar::compute,                          \
   detail::unsigned_scalar_of<T>(Scalar::e), \
   detail::digits_of<T>()},
    KILN_ELEMENT_TYPES(KILN_X)
#undef KILN_X
};

constexpr const ScalarFacts& scalar_facts(Scalar s) { return kScalarFacts[static_cast<size_t>(s)]; }
constexpr std::string_view scalar_name(Scalar s) { return scalar_facts(s).name; }
constexpr int scalar_bytes(Scalar s) { return scalar_facts(s).bytes; }
constexpr bool is_float(Scalar s) { return scalar_facts(s).is_float; }
constexpr bool is_signed_int(Scalar s) { return scalar_facts(s).is_signed_int; }
constexpr bool is_unsigned_int(Scalar s) { return scalar_facts(s).is_unsigned_int; }
constexpr bool is_int(Scalar s) { return is_signed_int(s) || is_unsigned_int(s); }
// The element of shared arrays of mbarriers, which no value has.
constexpr bool is_barrier(Scalar s) { return s == Scalar::Barrier; }
// The scalar arithmetic on `s` runs in (f32 for f16 and bf16), and whether it differs from `s`.
constexpr Scalar compute_scalar(Scalar s) { return scalar_facts(s).compute; }
constexpr bool is_short_float(Scalar s) { return compute_scalar(s) != s; }
constexpr Scalar unsigned_of(Scalar s) { return scalar_facts(s).as_unsigned; }
// Parses "f32", "u8", ...; false when `text` names no scalar.
bool parse_scalar(std::string_view text, Scalar& out);

}  // namespace kiln::ir
