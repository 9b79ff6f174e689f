// kiln cache path|ls|clear: the on-disk cache of compiled kernels.
#include <cstdio>

#include "commands.h"
#include "kiln/runtime/cuda.h"

namespace kiln::tool {

int cache(const Args& args) {
  const std::string usage = "kiln cache path|ls|clear";
  if (args.size() != 1) usage_error("cache takes one of path, ls, clear", usage);
  const std::string dir = disk_cache_dir();
  if (args[0] == "path") {
    std::printf("%s\n", dir.c_str());
  } else if (args[0] == "ls") {
    uint64_t total = 0;
    std::vector<DiskCacheEntry> entries = disk_cache_entries();
    for (const auto& e : entries) {
      std::printf("%10llu  %s\n", static_cast<unsigned long long>(e.bytes), e.file.c_str());
      total += e.bytes;
    }
    std::printf("%zu entries, %llu bytes in %s\n", entries.size(), static_cast<unsigned long long>(total), dir.c_str());
  } else if (args[0] == "clear") {
    std::printf("removed %zu entries from %s\n", clear_disk_cache(), dir.c_str());
  } else {
    usage_error("unknown cache command '" + args[0] + "'", usage);
  }
  return 0;
}

}  // namespace kiln::tool
