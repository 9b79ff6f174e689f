// The public answers of include/kiln/runtime/cuda.h, forwarded to the CUDA backend.
#include "backends/cuda/disk_cache.h"
#include "backends/cuda/nvrtc.h"
#include "kiln/runtime/cuda.h"
#include "runtime/cuda_devices.h"

namespace kiln {

std::string cuda_unavailable_reason() { return runtime::cuda_unavailable_reason(); }

double nvrtc_compile_milliseconds() { return cuda::compile_milliseconds(); }

std::string disk_cache_dir() { return cuda::DiskCache().dir(); }

std::vector<DiskCacheEntry> disk_cache_entries() {
  std::vector<DiskCacheEntry> out;
  for (const cuda::CacheEntryInfo& e : cuda::DiskCache().list()) out.push_back({e.file, e.bytes});
  return out;
}

size_t clear_disk_cache() { return cuda::DiskCache().clear(); }

}  // namespace kiln
