// The on-disk cache of compiled kernels: a second process that launches the same kernels loads
// their cubins instead of compiling them. Entries are keyed by a 128-bit hash of (generated
// source, compile options, compiler version, architecture); the full key is stored in the entry
// and compared on a hit; writes are atomic (temp file + rename); an entry that fails its checksum
// or whose key differs is a miss, recompiled and replaced, never trusted.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln::cuda {

struct CacheKey {
  std::string source;
  std::string options;
  std::string compiler;      // "nvrtc 13.0"
  std::string architecture;  // "sm_90a"

  std::string material() const;  // the bytes the entry stores and compares
  std::string hash_hex() const;  // 32 hex digits: the entry's file name
};

struct CacheEntryInfo {
  std::string file;
  uint64_t bytes = 0;
};

class DiskCache {
 public:
  // KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else ~/.cache/kiln (then the system temp dir).
  static std::string default_dir();
  // The cubin folder inside a cache dir.
  explicit DiskCache(std::string dir = default_dir());

  const std::string& dir() const { return dir_; }

  // The stored payload for `key`, or nullopt. `why` says what happened: "hit", "miss", or why a
  // present entry was not trusted ("corrupt: checksum", "corrupt: truncated", "key differs").
  std::optional<std::vector<char>> load(const CacheKey& key, std::string* why = nullptr) const;
  // Writes atomically; failures to write are not errors (the cache is an optimisation).
  bool store(const CacheKey& key, const std::vector<char>& payload) const;

  std::vector<CacheEntryInfo> list() const;
  size_t clear() const;  // entries removed

 private:
  std::string dir_;
};

}  // namespace kiln::cuda
