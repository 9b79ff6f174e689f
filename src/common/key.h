// Keys from field lists: the one way kiln builds what a cache finds a compiled kernel by. A key
// is a list of named fields; each value is taken apart into integers and text the same way
// (key_parts), and a sink makes what the cache needs of them:
//   Key      the packed bytes two keys compare by (a prefix code: equal bytes, equal fields), and
//            their hash; inline up to 64 bytes, so that a key built on every call allocates nothing
//   KeyHash  the hash alone, word by word, for the key hashed on every launch (KernelId)
//   KeyText  "kind{name=value, ...}", for logs, file names and messages
// A field's value may be an integer, a bool, an enum, a string, an ir::Scalar, an ir::Dim3, an
// ir::FastMath, a type with a key_parts(sink) member, or an array, vector or span of those.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/hash.h"
#include "kiln/ir/kernel.h"

namespace kiln::common {

template <class T>
struct is_sequence : std::false_type {};
template <class T, size_t N>
struct is_sequence<std::array<T, N>> : std::true_type {};
template <class T>
struct is_sequence<std::vector<T>> : std::true_type {};
template <class T, size_t N>
struct is_sequence<std::span<T, N>> : std::true_type {};

// Takes `v` apart: integer(uint64_t) for each number it holds, text(string_view) for each string,
// begin(count) before the elements of a sequence (so that sequences of other lengths differ).
template <class Sink, class T>
void key_parts(Sink& s, const T& v) {
  if constexpr (requires { v.key_parts(s); }) {
    v.key_parts(s);  // a type that says how it is taken apart
  } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
    s.text(std::string_view(v));
  } else if constexpr (std::is_same_v<T, ir::Dim3>) {
    s.integer(v.x), s.integer(v.y), s.integer(v.z);
  } else if constexpr (std::is_same_v<T, ir::FastMath>) {
    s.integer(uint64_t(v.contract) | uint64_t(v.approx) << 1);
  } else if constexpr (is_sequence<T>::value) {
    s.begin(v.size());
    for (const auto& e : v) key_parts(s, e);
  } else if constexpr (std::is_enum_v<T>) {
    s.integer(uint64_t(static_cast<std::underlying_type_t<T>>(v)));
  } else {
    static_assert(std::is_integral_v<T>, "a key field is an integer, bool, enum, string, scalar, dim3, fast-math or sequence");
    s.integer(uint64_t(v));
  }
}

// The packed bytes of a key's fields, and their hash.
class Key {
 public:
  template <class T>
  Key& operator()(std::string_view /*field: names the value where the key is built*/, const T& v) {
    key_parts(*this, v);
    return *this;
  }
  std::string_view bytes() const { return heap_.empty() ? std::string_view(inline_.data(), size_) : std::string_view(heap_); }
  uint64_t hash() const { return fnv1a64(bytes()); }
  friend bool operator==(const Key& a, const Key& b) { return a.bytes() == b.bytes(); }

  // key_parts' sink.
  void integer(uint64_t v) {
    // One byte when it fits (the common case: counts, kinds, small sizes), else a marker and 8.
    if (v < 0xff) {
      put(static_cast<char>(v));
    } else {
      put(static_cast<char>(0xff));
      char b[8];
      std::memcpy(b, &v, 8);
      append(b, 8);
    }
  }
  void text(std::string_view t) {
    integer(t.size());
    append(t.data(), t.size());
  }
  void begin(size_t count) { integer(count); }

 private:
  void put(char c) { append(&c, 1); }
  void append(const char* p, size_t n) {
    if (heap_.empty() && size_ + n <= inline_.size()) {
      std::memcpy(inline_.data() + size_, p, n);
      size_ += uint32_t(n);
      return;
    }
    if (heap_.empty()) heap_.assign(inline_.data(), size_);
    heap_.append(p, n);
  }
  std::array<char, 64> inline_{};
  uint32_t size_ = 0;
  std::string heap_;
};

// For hashed containers of keys.
struct KeyHasher {
  size_t operator()(const Key& k) const { return size_t(k.hash()); }
};

// The hash of a key's fields without storing them: numbers below 255 are gathered eight to a
// word (a kernel id is mostly small counts and kinds), larger ones take a word of their own after
// a marker byte, and Hasher's word step takes each word.
class KeyHash {
 public:
  template <class T>
  KeyHash& operator()(std::string_view /*field*/, const T& v) {
    key_parts(*this, v);
    return *this;
  }
  uint64_t done() const {
    Hasher h = h_;
    if (bytes_ > 0) h.word(pending_ | uint64_t(bytes_) << 56);  // the count keeps a short tail apart
    return h.done();
  }

  void integer(uint64_t v) {
    if (v < 0xff) {
      byte(uint8_t(v));
    } else {
      byte(0xff);
      h_.word(v);
    }
  }
  void text(std::string_view t) {
    integer(t.size());
    h_.text(t);
  }
  void begin(size_t count) { integer(count); }

 private:
  void byte(uint8_t b) {
    pending_ |= uint64_t(b) << (8 * bytes_);
    if (++bytes_ == 7) {  // seven bytes a word, the eighth says how many
      h_.word(pending_ | uint64_t(7) << 56);
      pending_ = 0;
      bytes_ = 0;
    }
  }
  Hasher h_;
  uint64_t pending_ = 0;
  unsigned bytes_ = 0;
};

// A key as text: "kind{field=value, ...}". Scalars print by name, sequences as [a, b].
class KeyText {
 public:
  explicit KeyText(std::string_view kind) : text_(kind) {}
  template <class T>
  KeyText& operator()(std::string_view field, const T& v) {
    text_ += fields_++ ? ", " : "{";
    text_ += field;
    text_ += '=';
    value(v);
    return *this;
  }
  std::string text() const { return fields_ ? text_ + "}" : text_; }

 private:
  template <class T>
  void value(const T& v) {
    if constexpr (std::is_same_v<T, ir::Scalar>) {
      text_ += ir::scalar_name(v);
    } else if constexpr (std::is_same_v<T, bool>) {
      text_ += v ? "true" : "false";
    } else if constexpr (std::is_same_v<T, ir::Dim3> || is_sequence<T>::value) {
      // A dim3 prints as its three axes.
      text_ += '[';
      bool first = true;
      auto item = [&](const auto& e) {
        text_ += first ? "" : ", ";
        first = false;
        value(e);
      };
      if constexpr (std::is_same_v<T, ir::Dim3>) {
        item(v.x), item(v.y), item(v.z);
      } else {
        for (const auto& e : v) item(e);
      }
      text_ += ']';
    } else if constexpr (std::is_same_v<T, ir::FastMath>) {
      text_ += '[';
      text_ += ir::to_string(v);
      text_ += ']';
    } else if constexpr (std::is_same_v<T, ir::ExecMode> || std::is_same_v<T, ir::AddressType>) {
      text_ += ir::to_string(v);
    } else if constexpr (requires { v.to_string(); }) {
      text_ += v.to_string();
    } else if constexpr (std::is_enum_v<T>) {
      text_ += std::to_string(static_cast<std::underlying_type_t<T>>(v));
    } else if constexpr (std::is_convertible_v<T, std::string_view>) {
      text_ += std::string_view(v);
    } else {
      text_ += std::to_string(v);
    }
  }
  std::string text_;
  int fields_ = 0;
};

}  // namespace kiln::common
