// Keys from field lists: the one way kiln builds what a cache finds a compiled kernel by. A key
// is a list of named fields; each value is taken apart into integers and text the same way
// (key_parts), and a sink makes what the cache needs of them:
//   Key      the packed bytes two keys compare by (a prefix code: equal bytes, equal fields), and
//            their hash; inline up to 64 bytes, so that a key built on every call allocates nothing
//   KeyHash  the hash alone, for the key hashed on every launch (KernelId): fields' own bytes
//            where they have no padding, so that it costs a few stores and words
//   KeyText  "kind{name=value, ...}", for logs, file names and messages
// A field's value may be an integer, a bool, an enum, a string, an ir::Scalar, an ir::Dim3, an
// ir::FastMath, a type with a key_parts(sink) member, or an array, vector or span of those.
#pragma once

#include <algorithm>
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
// begin(count) before the elements of a sequence (so that sequences of other lengths differ);
// a sequence of one-byte numbers goes to raw(bytes, count) where the sink has one.
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
    using E = std::remove_cv_t<typename T::value_type>;
    s.begin(v.size());
    if constexpr (sizeof(E) == 1 && (std::is_integral_v<E> || std::is_enum_v<E>)&&requires {
                    s.raw(static_cast<const void*>(v.data()), v.size());
                  }) {
      s.raw(v.data(), v.size());  // one-byte numbers as they lie (a kernel id's per-parameter arrays)
    } else {
      for (const auto& e : v) key_parts(s, e);
    }
  } else if constexpr (std::is_enum_v<T>) {
    s.integer(uint64_t(static_cast<std::underlying_type_t<T>>(v)));
  } else {
    static_assert(std::is_integral_v<T>,
                  "a key field is an integer, bool, enum, string, scalar, dim3, fast-math or sequence");
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
  std::string_view bytes() const {
    return heap_.empty() ? std::string_view(inline_.data(), size_) : std::string_view(heap_);
  }
  // By words (on every cached op: a byte loop over a 40-byte key was most of a lookup); the
  // length goes in last, so that keys that differ only in trailing zeros hash apart.
  uint64_t hash() const {
    std::string_view b = bytes();
    Hasher h;
    size_t i = 0;
    for (; i + 8 <= b.size(); i += 8) {
      uint64_t w;
      std::memcpy(&w, b.data() + i, 8);
      h.word(w);
    }
    uint64_t tail = 0;
    std::memcpy(&tail, b.data() + i, b.size() - i);
    return h.word(tail).word(b.size()).done();
  }
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
  void raw(const void* p, size_t n) { append(static_cast<const char*>(p), n); }

 private:
  void put(char c) {
    if (heap_.empty() && size_ < inline_.size()) {
      inline_[size_++] = c;
      return;
    }
    append(&c, 1);
  }
  void append(const char* p, size_t n) {
    if (heap_.empty() && size_ + n <= inline_.size()) {
      std::memcpy(inline_.data() + size_, p, n);
      size_ += uint32_t(n);
      return;
    }
    if (heap_.empty()) heap_.assign(inline_.data(), size_);
    heap_.append(p, n);
  }
  std::array<char, 64> inline_;  // the first size_ bytes are the key's; the rest are never read
  uint32_t size_ = 0;
  std::string heap_;
};

// For hashed containers of keys.
struct KeyHasher {
  size_t operator()(const Key& k) const { return size_t(k.hash()); }
};

// The hash of a key's fields without storing them in a Key, for the key hashed on every launch
// (KernelId). Equality is the caller's (field by field), so what is hashed need not be a prefix
// code: a field whose bytes are its value (no padding: numbers, enums, Dim3, arrays of those) goes
// in as those bytes, by 64-bit words copied at sizes the compiler knows; another field as the
// numbers key_parts gives, a word each.
class KeyHash {
 public:
  template <class T>
  KeyHash& operator()(std::string_view /*field*/, const T& v) {
    if constexpr (std::has_unique_object_representations_v<T>) {
      words<sizeof(T)>(reinterpret_cast<const unsigned char*>(&v));
    } else {
      key_parts(*this, v);
    }
    return *this;
  }
  uint64_t done() const { return h_.done(); }

  // key_parts' sink.
  void integer(uint64_t v) { h_.word(v); }
  void text(std::string_view t) { h_.word(t.size()).text(t); }
  void begin(size_t count) { h_.word(count); }

 private:
  template <size_t N>
  void words(const unsigned char* p) {
    if constexpr (N >= 8) {
      uint64_t w;
      std::memcpy(&w, p, 8);
      h_.word(w);
      words<N - 8>(p + 8);
    } else if constexpr (N > 0) {
      uint64_t w = 0;
      std::memcpy(&w, p, N);
      h_.word(w);
    }
  }
  Hasher h_;
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
