// The 64-bit hash behind kernel ids and recorded programs' content hashes: FNV-1a over bytes (a
// program's text, once per program), or a multiply-and-fold step per 64-bit word (an id, on every
// launch), mixed at the end. Both are simple and fast, and distribute well after the final mix.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kiln::dsl {

struct Hasher {
  uint64_t h = 1469598103934665603ull;
  void bytes(const void* p, size_t n) {
    auto* b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  }
  void text(std::string_view s) { bytes(s.data(), s.size()); }
  void word(uint64_t w) {
    h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 32;
  }
  template <class T>
  void value(const T& v) {
    bytes(&v, sizeof v);
  }
  uint64_t done() const {
    uint64_t x = h;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
  }
};

}  // namespace kiln::dsl
