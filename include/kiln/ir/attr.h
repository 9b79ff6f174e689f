// Op attributes, defined once: each key's text name and the type of its value. The op table
// (op_kinds.h) says which keys each op takes; the type rules check both, so a pass or a backend
// reads an attribute through its typed accessor (Op::get<AttrKey::Dim>()) and never guesses.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::ir {

// What an attribute's value is:
//   Flag    a boolean, written `name` alone when true (`name = false` when false)
//   Int     an integer
//   Number  a constant's payload: an integer, a float or a bool, as the op's type says
//   String  a quoted text
//   Ints    an array of integers, `[1, 2, 3]`
//   Pad     the value a tile lane past the extent reads, written as its name (`neg_inf`)
enum class AttrType : uint8_t { Flag, Int, Number, String, Ints, Pad };

// X(Enum, "text", Type). Attributes are kept sorted by key, so this order is the order the text
// form prints them in.
#define KILN_IR_ATTRS(X)                    \
  X(Value, "value", Number)                 \
  X(Axis, "axis", Int)                      \
  X(Lane, "lane", Int)                      \
  X(Dim, "dim", Int)                        \
  X(Checked, "checked", Flag)               \
  X(Unroll, "unroll", Int)                  \
  X(UnrollFull, "unroll_full", Flag)        \
  X(PrefetchStages, "prefetch_stages", Int) \
  X(Format, "format", String)               \
  X(FastMath, "fast_math", Flag)            \
  X(Planes, "planes", Ints)                 \
  X(Extent, "extent", Ints)                 \
  X(Tile, "tile", Ints)                     \
  X(Along, "along", Ints)                   \
  X(Pad, "pad", Pad)                        \
  X(Strides, "strides", Ints)               \
  X(Shape, "shape", Ints)                   \
  X(Keepdims, "keepdims", Flag)             \
  X(Pending, "pending", Int)                \
  X(Overlay, "overlay", Int)                \
  X(Pitches, "pitches", Ints)               \
  X(BColumns, "b_columns", Flag)            \
  X(Vectorize, "vectorize", Int)            \
  X(AtLeastOnce, "at_least_once", Flag)     \
  X(Lanes, "lanes", Int)                    \
  X(Loop, "loop", Int)                      \
  X(AFragments, "a_fragments", Flag)        \
  X(Async, "async", Flag)

enum class AttrKey : uint8_t {
#define KILN_X(e, text, type) e,
  KILN_IR_ATTRS(KILN_X)
#undef KILN_X
};
inline constexpr int kAttrKeyCount = 0
#define KILN_X(e, text, type) +1
    KILN_IR_ATTRS(KILN_X)
#undef KILN_X
    ;
static_assert(kAttrKeyCount <= 64, "op_kinds.h holds an op's attribute keys in a 64-bit mask");

std::string_view attr_name(AttrKey k);
AttrType attr_type(AttrKey k);
bool parse_attr_key(std::string_view text, AttrKey& out);
// "flag", "int", "number", "string", "ints", "pad": how messages name a type.
std::string_view to_string(AttrType t);

// The value a lane past a tile view's extent reads (cuda_tile's padding_value).
enum class Pad : uint8_t { zero, neg_zero, pos_inf, neg_inf, nan };
std::string_view to_string(Pad p);
// Parses what to_string writes; false when `text` names no padding value.
bool parse_pad(std::string_view text, Pad& out);

// A constant or attribute payload. Integers (and bools, and Pad values) keep their bits in `i`
// (u64 values as their two's-complement bits), floats in `f`, an array of integers (dimensions,
// shapes, the tile layer's permutations) in `ints`, printed `[1, 2, 3]`.
struct AttrValue {
  enum class Tag : uint8_t { Int, Float, Bool, String, Ints };
  Tag tag = Tag::Int;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<int64_t> ints;

  static AttrValue of_int(int64_t v) { return {Tag::Int, v, 0, {}, {}}; }
  static AttrValue of_float(double v) { return {Tag::Float, 0, v, {}, {}}; }
  static AttrValue of_bool(bool v) { return {Tag::Bool, v ? 1 : 0, 0, {}, {}}; }
  static AttrValue of_string(std::string v) { return {Tag::String, 0, 0, std::move(v), {}}; }
  static AttrValue of_ints(std::vector<int64_t> v) { return {Tag::Ints, 0, 0, {}, std::move(v)}; }
  static AttrValue of_pad(Pad p) { return of_int(static_cast<int64_t>(p)); }
  friend bool operator==(const AttrValue&, const AttrValue&) = default;
};

// Whether `v` is a value of type `t` (a Flag is a Bool, a Pad an Int naming a padding value).
bool attr_value_fits(AttrType t, const AttrValue& v);

struct Attr {
  AttrKey key;
  AttrValue value;
  friend bool operator==(const Attr&, const Attr&) = default;
};

// The C++ type an attribute reads as (`type`, Op::get<K>()) and is made from (`arg`, attr<K>()),
// by its key's type.
template <AttrType T>
struct attr_repr;
template <>
struct attr_repr<AttrType::Flag> {
  using type = bool;
  using arg = type;
  static type read(const AttrValue& v) { return v.i != 0; }
  static AttrValue make(type v) { return AttrValue::of_bool(v); }
};
template <>
struct attr_repr<AttrType::Int> {
  using type = int64_t;
  using arg = type;
  static type read(const AttrValue& v) { return v.i; }
  static AttrValue make(type v) { return AttrValue::of_int(v); }
};
template <>
struct attr_repr<AttrType::Number> {
  using type = AttrValue;
  using arg = type;
  static type read(const AttrValue& v) { return v; }
  static AttrValue make(type v) { return v; }
};
template <>
struct attr_repr<AttrType::String> {
  using type = std::string_view;
  using arg = type;
  static type read(const AttrValue& v) { return v.s; }
  static AttrValue make(type v) { return AttrValue::of_string(std::string(v)); }
};
template <>
struct attr_repr<AttrType::Ints> {
  using type = std::span<const int64_t>;
  using arg = std::vector<int64_t>;
  static type read(const AttrValue& v) { return v.ints; }
  static AttrValue make(arg v) { return AttrValue::of_ints(std::move(v)); }
};
template <>
struct attr_repr<AttrType::Pad> {
  using type = Pad;
  using arg = type;
  static type read(const AttrValue& v) { return static_cast<Pad>(v.i); }
  static AttrValue make(type v) { return AttrValue::of_pad(v); }
};

// The type of key K, at compile time.
template <AttrKey K>
constexpr AttrType attr_type_of() {
  constexpr AttrType types[] = {
#define KILN_X(e, text, type) AttrType::type,
      KILN_IR_ATTRS(KILN_X)
#undef KILN_X
  };
  return types[static_cast<size_t>(K)];
}
template <AttrKey K>
using attr_t = typename attr_repr<attr_type_of<K>()>::type;

// An attribute of key K holding `v`, typed by K: attr<AttrKey::Pad>(Pad::neg_inf).
template <AttrKey K>
using attr_arg_t = typename attr_repr<attr_type_of<K>()>::arg;
template <AttrKey K>
Attr attr(attr_arg_t<K> v) {
  return Attr{K, attr_repr<attr_type_of<K>()>::make(v)};
}

}  // namespace kiln::ir
