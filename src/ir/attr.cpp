// Attribute keys, their types and the padding values' names (attr.h).
#include "kiln/ir/attr.h"

#include <iterator>

namespace kiln::ir {

namespace {

struct KeyFacts {
  std::string_view name;
  AttrType type;
};
constexpr KeyFacts kKeys[] = {
#define KILN_X(e, text, type) {text, AttrType::type},
    KILN_IR_ATTRS(KILN_X)
#undef KILN_X
};

constexpr std::string_view kTypeNames[] = {"flag", "int", "number", "string", "ints", "pad"};
constexpr std::string_view kPadNames[] = {"zero", "neg_zero", "pos_inf", "neg_inf", "nan"};

}  // namespace

std::string_view attr_name(AttrKey k) { return kKeys[static_cast<size_t>(k)].name; }
AttrType attr_type(AttrKey k) { return kKeys[static_cast<size_t>(k)].type; }
std::string_view to_string(AttrType t) { return kTypeNames[static_cast<size_t>(t)]; }

bool parse_attr_key(std::string_view text, AttrKey& out) {
  for (size_t i = 0; i < std::size(kKeys); ++i) {
    if (kKeys[i].name == text) {
      out = static_cast<AttrKey>(i);
      return true;
    }
  }
  return false;
}

std::string_view to_string(Pad p) {
  size_t i = static_cast<size_t>(p);
  return i < std::size(kPadNames) ? kPadNames[i] : "?";
}

bool parse_pad(std::string_view text, Pad& out) {
  for (size_t i = 0; i < std::size(kPadNames); ++i) {
    if (kPadNames[i] == text) {
      out = static_cast<Pad>(i);
      return true;
    }
  }
  return false;
}

bool attr_value_fits(AttrType t, const AttrValue& v) {
  using Tag = AttrValue::Tag;
  switch (t) {
    case AttrType::Flag: return v.tag == Tag::Bool;
    case AttrType::Int: return v.tag == Tag::Int;
    case AttrType::Number: return v.tag == Tag::Int || v.tag == Tag::Float || v.tag == Tag::Bool;
    case AttrType::String: return v.tag == Tag::String;
    case AttrType::Ints: return v.tag == Tag::Ints;
    case AttrType::Pad: return v.tag == Tag::Int && v.i >= 0 && size_t(v.i) < std::size(kPadNames);
  }
  return false;
}

}  // namespace kiln::ir
