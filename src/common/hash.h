// kiln's one 64-bit hash. FNV-1a over bytes: stable across runs and machines (unlike std::hash),
// which what a name or a stored checksum needs (a kernel entry named after its IR, a disk cache
// entry's checksum, autotune's candidate set, a recorded program's content hash). A word step,
// one multiply and fold per 64 bits, for keys hashed on every launch (a kernel id, common/key.h);
// done() mixes either so that its low bits spread well.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::common {

inline constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ull;
inline constexpr uint64_t kFnvPrime = 0x100000001b3ull;

struct Hasher {
  uint64_t h = kFnvOffset;

  // FNV-1a over the bytes.
  Hasher& bytes(const void* p, size_t n) {
    auto* b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * kFnvPrime;
    return *this;
  }
  Hasher& text(std::string_view s) { return bytes(s.data(), s.size()); }
  // FNV-1a over the bytes from the last to the first (a second, independent name for one text).
  Hasher& bytes_backwards(const void* p, size_t n) {
    auto* b = static_cast<const unsigned char*>(p);
    for (size_t i = n; i > 0; --i) h = (h ^ b[i - 1]) * kFnvPrime;
    return *this;
  }
  // One 64-bit word at a time.
  Hasher& word(uint64_t w) {
    h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 32;
    return *this;
  }
  template <class T>
  Hasher& value(const T& v) {
    return bytes(&v, sizeof v);
  }
  // The hash, mixed (for tables); `h` itself is plain FNV-1a while only bytes went in.
  uint64_t done() const {
    uint64_t x = h;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
  }
};

// Plain FNV-1a 64 of `text` (or of `n` bytes at `p`); `seed`: the offset basis, or an earlier hash
// to continue.
inline uint64_t fnv1a64(std::string_view text, uint64_t seed = kFnvOffset) { return Hasher{seed}.text(text).h; }
// A name of its own, apart from the text form: a string literal beside a seed would take the
// pointer form.
inline uint64_t fnv1a64_bytes(const void* p, size_t n, uint64_t seed = kFnvOffset) {
  return Hasher{seed}.bytes(p, n).h;
}

// Sixteen lower-case hex digits.
inline std::string hex16(uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[static_cast<size_t>(i)] = digits[v & 15];
  return s;
}

}  // namespace kiln::common
