// The on-disk cubin cache. Entry layout (little-endian):
//   "KILNCUB1" | u64 key bytes | key | u64 payload bytes | payload | u64 checksum
// where the checksum is FNV-1a 64 over everything before it.
#include "backends/cuda/disk_cache.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "common/hash.h"
#include "common/key.h"
#include "common/log.h"

namespace kiln::cuda {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'C', 'U', 'B', '1'};
constexpr const char* kSuffix = ".cubin";

void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

bool get_u64(const std::string& in, size_t& at, uint64_t& v) {
  if (at + 8 > in.size()) return false;
  v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(static_cast<unsigned char>(in[at + size_t(i)])) << (8 * i);
  at += 8;
  return true;
}

}  // namespace

// The fields packed as every kiln cache key is (common/key.h): what the entry's name hashes and
// what the entry stores to settle a collision.
std::string CacheKey::material() const {
  common::Key k;
  k("architecture", architecture)("compiler", compiler)("options", options)("source", source);
  return std::string(k.bytes());
}

std::string CacheKey::hash_hex() const {
  std::string m = material();
  // Two 64-bit FNV-1a lanes over the same bytes from different starting points, the second also
  // over the reversed bytes: 128 bits for naming; the stored key settles any collision.
  uint64_t a = common::fnv1a64(m);
  uint64_t b = common::Hasher{0x84222325cbf29ce4ull}.bytes_backwards(m.data(), m.size()).h;
  return common::hex16(a) + common::hex16(b);
}

std::string DiskCache::default_dir() { return common::cache_dir(); }

DiskCache::DiskCache(std::string dir) : dir_((fs::path(dir) / "cuda").string()) {}

std::optional<std::vector<char>> DiskCache::load(const CacheKey& key, std::string* why) const {
  auto say = [&](const char* w) {
    if (why) *why = w;
    return std::nullopt;
  };
  fs::path path = fs::path(dir_) / (key.hash_hex() + kSuffix);
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return say(fs::exists(path, ec) ? "corrupt: not a file" : "miss");
  std::ifstream f(path, std::ios::binary);
  if (!f) return say("miss");
  // One read of the whole entry (an entry is the CUDA source and the cubin: tens of kilobytes,
  // which a character iterator reads at some ten instructions a byte).
  f.seekg(0, std::ios::end);
  const std::streamoff size = f.tellg();
  if (size < 0) return say("corrupt: unreadable");
  f.seekg(0, std::ios::beg);
  std::string data(size_t(size), '\0');
  if (!f.read(data.data(), size)) return say("corrupt: truncated");
  if (data.size() < sizeof kMagic + 24 || std::memcmp(data.data(), kMagic, sizeof kMagic) != 0) {
    return say("corrupt: truncated or not a kiln entry");
  }
  uint64_t stored_sum = 0;
  size_t sum_at = data.size() - 8;
  if (!get_u64(data, sum_at, stored_sum)) return say("corrupt: truncated");
  if (common::fnv1a64_bytes(data.data(), data.size() - 8) != stored_sum) return say("corrupt: checksum");
  size_t at = sizeof kMagic;
  uint64_t key_bytes = 0, payload_bytes = 0;
  if (!get_u64(data, at, key_bytes) || key_bytes > data.size() - at) return say("corrupt: truncated");
  std::string stored_key = data.substr(at, key_bytes);
  at += key_bytes;
  if (!get_u64(data, at, payload_bytes) || data.size() - at < 8 || payload_bytes != data.size() - at - 8) {
    return say("corrupt: truncated");
  }
  if (stored_key != key.material()) return say("key differs");
  if (why) *why = "hit";
  return std::vector<char>(data.begin() + std::ptrdiff_t(at), data.begin() + std::ptrdiff_t(at + payload_bytes));
}

bool DiskCache::store(const CacheKey& key, const std::vector<char>& payload) const {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  std::string data(kMagic, sizeof kMagic);
  std::string m = key.material();
  put_u64(data, m.size());
  data += m;
  put_u64(data, payload.size());
  data.append(payload.data(), payload.size());
  put_u64(data, common::fnv1a64_bytes(data.data(), data.size()));
  // A unique temp name in the same folder, then rename: readers see the old entry or the whole
  // new one, never a part.
  static std::atomic<uint64_t> counter{0};
  const std::string name = key.hash_hex();
  fs::path final_path = fs::path(dir_) / (name + kSuffix);
  fs::path tmp =
      fs::path(dir_) / (name + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1)));
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return false;
    f.write(data.data(), std::streamsize(data.size()));
    if (!f) {
      f.close();
      fs::remove(tmp, ec);
      return false;
    }
  }
  fs::rename(tmp, final_path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return false;
  }
  return true;
}

std::vector<CacheEntryInfo> DiskCache::list() const {
  std::vector<CacheEntryInfo> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    if (e.path().extension() == kSuffix) out.push_back({e.path().filename().string(), e.file_size(ec)});
  }
  return out;
}

size_t DiskCache::clear() const {
  size_t n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    std::string name = e.path().filename().string();
    if (e.path().extension() == kSuffix || name.find(".tmp.") != std::string::npos) {
      n += fs::remove(e.path(), ec) ? 1 : 0;
    }
  }
  return n;
}

}  // namespace kiln::cuda
