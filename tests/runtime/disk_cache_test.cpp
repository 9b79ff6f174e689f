// The on-disk cache of compiled kernels: hits return the stored bytes, and an entry that is
// truncated, corrupted or stored for another key is a miss (recompiled and replaced), never trusted.
#include "backends/cuda/disk_cache.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "kiln/runtime/cuda.h"
#include "kiln/runtime/device.h"

namespace {

namespace fs = std::filesystem;
using kiln::cuda::CacheKey;
using kiln::cuda::DiskCache;

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("kiln-disk-cache-test-" + std::to_string(::getpid()) + "-" +
                                        std::to_string(reinterpret_cast<uintptr_t>(this)));
    fs::remove_all(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

CacheKey key(const std::string& source) {
  return CacheKey{source, "-arch=sm_90a --std=c++17 ", "nvrtc 13.0", "sm_90a"};
}

std::vector<char> payload(size_t n) {
  std::vector<char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = char(i * 31 + 7);
  return v;
}

fs::path entry_file(const DiskCache& c, const CacheKey& k) { return fs::path(c.dir()) / (k.hash_hex() + ".cubin"); }

TEST(DiskCache, StoreThenLoad) {
  TempDir d;
  DiskCache c(d.path.string());
  std::string why;
  EXPECT_FALSE(c.load(key("a"), &why));
  EXPECT_EQ(why, "miss");
  ASSERT_TRUE(c.store(key("a"), payload(5000)));
  auto got = c.load(key("a"), &why);
  ASSERT_TRUE(got);
  EXPECT_EQ(why, "hit");
  EXPECT_EQ(*got, payload(5000));
  // No temp files are left behind.
  for (const auto& e : fs::directory_iterator(c.dir())) EXPECT_EQ(e.path().extension(), ".cubin") << e.path();
}

TEST(DiskCache, KeysDifferByEveryPart) {
  CacheKey base = key("src");
  std::set<std::string> names{base.hash_hex()};
  CacheKey k = base;
  k.source += " ";
  names.insert(k.hash_hex());
  k = base;
  k.options = "-arch=sm_80";
  names.insert(k.hash_hex());
  k = base;
  k.compiler = "nvrtc 12.9";
  names.insert(k.hash_hex());
  k = base;
  k.architecture = "sm_100a";
  names.insert(k.hash_hex());
  EXPECT_EQ(names.size(), 5u);
  EXPECT_EQ(base.hash_hex().size(), 32u);
}

TEST(DiskCache, TruncatedEntryIsAMissAndIsReplaced) {
  TempDir d;
  DiskCache c(d.path.string());
  ASSERT_TRUE(c.store(key("t"), payload(4096)));
  fs::path f = entry_file(c, key("t"));
  fs::resize_file(f, fs::file_size(f) / 2);
  std::string why;
  EXPECT_FALSE(c.load(key("t"), &why));
  EXPECT_EQ(why.rfind("corrupt", 0), 0u) << why;
  ASSERT_TRUE(c.store(key("t"), payload(4096)));
  EXPECT_TRUE(c.load(key("t"), &why));
  EXPECT_EQ(why, "hit");
}

TEST(DiskCache, FlippedByteFailsTheChecksum) {
  TempDir d;
  DiskCache c(d.path.string());
  ASSERT_TRUE(c.store(key("f"), payload(1000)));
  fs::path f = entry_file(c, key("f"));
  std::fstream io(f, std::ios::in | std::ios::out | std::ios::binary);
  io.seekp(std::streamoff(fs::file_size(f) / 2));
  io.put('\x5a' ^ char(io.peek()));
  io.close();
  std::string why;
  EXPECT_FALSE(c.load(key("f"), &why));
  EXPECT_EQ(why, "corrupt: checksum");
}

TEST(DiskCache, AnEntryForAnotherKeyIsNotTrusted) {
  TempDir d;
  DiskCache c(d.path.string());
  ASSERT_TRUE(c.store(key("one"), payload(100)));
  // Put one's entry where two's would be: the stored key differs from the asked one.
  fs::copy_file(entry_file(c, key("one")), entry_file(c, key("two")));
  std::string why;
  EXPECT_FALSE(c.load(key("two"), &why));
  EXPECT_EQ(why, "key differs");
}

TEST(DiskCache, ListAndClear) {
  TempDir d;
  DiskCache c(d.path.string());
  c.store(key("1"), payload(10));
  c.store(key("2"), payload(20));
  EXPECT_EQ(c.list().size(), 2u);
  EXPECT_EQ(c.clear(), 2u);
  EXPECT_TRUE(c.list().empty());
}

TEST(DiskCache, DefaultFolderFollowsTheEnvironment) {
  setenv("KILN_CACHE_DIR", "/tmp/kiln-env-test", 1);
  EXPECT_EQ(DiskCache::default_dir(), "/tmp/kiln-env-test");
  unsetenv("KILN_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
  EXPECT_EQ(DiskCache::default_dir(), "/tmp/xdg/kiln");
  unsetenv("XDG_CACHE_HOME");
}

// What `kiln cache` uses: the public functions see the same folder and entries as the backend.
TEST(DiskCache, PublicFunctionsListAndClearTheFolderInUse) {
  TempDir d;
  setenv("KILN_CACHE_DIR", d.path.c_str(), 1);
  DiskCache c(d.path.string());
  EXPECT_EQ(kiln::disk_cache_dir(), (d.path / "cuda").string());
  EXPECT_TRUE(kiln::disk_cache_entries().empty());
  c.store(key("1"), payload(10));
  c.store(key("2"), payload(20));
  std::vector<kiln::DiskCacheEntry> entries = kiln::disk_cache_entries();
  ASSERT_EQ(entries.size(), 2u);
  std::set<std::string> files{entries[0].file, entries[1].file};
  EXPECT_TRUE(files.count(entry_file(c, key("1")).filename().string())) << entries[0].file;
  EXPECT_TRUE(files.count(entry_file(c, key("2")).filename().string())) << entries[1].file;
  EXPECT_EQ(entries[0].bytes, fs::file_size(fs::path(kiln::disk_cache_dir()) / entries[0].file));
  EXPECT_EQ(kiln::clear_disk_cache(), 2u);
  EXPECT_TRUE(c.list().empty());
  unsetenv("KILN_CACHE_DIR");
}

// `kiln info` prints the reason exactly when no GPU is listed.
TEST(CudaTools, UnavailableReasonIsGivenExactlyWhenThereIsNoCudaDevice) {
  bool gpu = false;
  for (const kiln::Device& dev : kiln::Device::all()) gpu = gpu || dev.kind() == kiln::DeviceKind::Cuda;
  std::string why = kiln::cuda_unavailable_reason();
  EXPECT_EQ(why.empty(), gpu) << why;
}

}  // namespace
