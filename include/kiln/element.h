// The C++ types that are kiln element types (bool, the fixed-width integers, f16, bf16, float,
// double: the rows of ir/scalars.h) and the IR scalar each one is. Kernels, handles and launches
// all speak of elements through these.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

#include "kiln/half.h"
#include "kiln/ir/type.h"

namespace kiln {

template <class T>
struct scalar_traits {
  static constexpr bool valid = false;
};
// One specialisation per row of the element table (ir/scalars.h).
#define KILN_X(e, text, T, cpp, compute)                \
  template <>                                           \
  struct scalar_traits<T> {                             \
    static constexpr bool valid = true;                 \
    static constexpr ir::Scalar scalar = ir::Scalar::e; \
  };
KILN_ELEMENT_TYPES(KILN_X)
#undef KILN_X

template <class T>
concept Element = scalar_traits<T>::valid;

template <Element T>
constexpr ir::Scalar scalar_of() {
  return scalar_traits<T>::scalar;
}

template <class T>
concept FloatElement = Element<T> && ir::is_float(scalar_of<T>());

// The element type of a host array of T: T's own for a kiln element type, and, for the integer
// types the fixed-width names are not (long long where int64_t is long), the element of the same
// width and signedness. None for anything else (char, structs), which uploads as raw bytes.
template <class T>
constexpr std::optional<ir::Scalar> element_of() {
  if constexpr (Element<T>) {
    return scalar_of<T>();
  } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, char> && !std::is_same_v<T, wchar_t> &&
                       !std::is_same_v<T, char8_t> && !std::is_same_v<T, char16_t> && !std::is_same_v<T, char32_t>) {
    if constexpr (std::is_signed_v<T>) return scalar_of<std::conditional_t<sizeof(T) == 8, int64_t, int32_t>>();
    else return scalar_of<std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>>();
  } else {
    return std::nullopt;
  }
}

// How a program spells the element type `s` in C++ ("float", "int32_t", "f16"), for messages that
// tell a person what to write.
constexpr std::string_view cpp_element_name(ir::Scalar s) { return ir::scalar_facts(s).cpp_name; }

}  // namespace kiln
