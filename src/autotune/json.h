// The little JSON that autotune's result files need: a reader of any well-formed document into a
// tree, and quoting for the writer (which writes its one shape by hand).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::autotune::json {

struct Member;

struct Value {
  enum class Kind : uint8_t { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Value> items;     // an array's
  std::vector<Member> members;  // an object's, in file order

  // The member named `key` of an object, or null.
  const Value* find(std::string_view key) const;
};

// A member of an object. A struct, not a std::pair: clang reads a pair's traits where Value is
// still incomplete.
struct Member {
  std::string key;
  Value value;
};

// nullopt when `text` is not one well-formed JSON value (with white space around it).
std::optional<Value> parse(std::string_view text);
// `s` as a JSON string, quotes included.
std::string quote(std::string_view s);

}  // namespace kiln::autotune::json
