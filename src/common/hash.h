// A 64-bit FNV-1a hash: names kernel entries after their IR, failing sources after their text, and
// autotune's candidate sets. Stable across runs and machines (unlike std::hash), which is what a
// name or a stored checksum needs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::common {

// `h`: the offset basis, or an earlier hash to continue.
inline uint64_t fnv1a64(std::string_view text, uint64_t h = 0xcbf29ce484222325ull) {
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

// Sixteen lower-case hex digits.
inline std::string hex16(uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[static_cast<size_t>(i)] = digits[v & 15];
  return s;
}

}  // namespace kiln::common
