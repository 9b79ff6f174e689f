// What the CUDA backend tells a tool beyond devices and launches: why there is no CUDA device
// (`kiln info`), its on-disk cache of compiled kernels (`kiln cache`) and the time NVRTC has
// spent compiling (`kiln bench`). The runtime answers, so that a program needs no backend header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

// Why no CUDA device is usable ("no CUDA driver: looked for libcuda.so.1 ..."); empty when there
// is one. Never throws.
std::string cuda_unavailable_reason();

// Milliseconds NVRTC has spent compiling in this process, in all (0 before the first compile):
// tells NVRTC's share of a first launch from kiln's own.
double nvrtc_compile_milliseconds();

// One compiled kernel in the on-disk cache.
struct DiskCacheEntry {
  std::string file;  // its file name in disk_cache_dir()
  uint64_t bytes = 0;
};

// The folder of the on-disk cache of compiled CUDA kernels: `cuda` inside KILN_CACHE_DIR, else
// inside $XDG_CACHE_HOME/kiln, else inside ~/.cache/kiln (docs/index.md, Environment).
std::string disk_cache_dir();
// Its entries, read now.
std::vector<DiskCacheEntry> disk_cache_entries();
// Removes every entry; returns how many were removed. Kernels already loaded are not affected;
// the next process compiles them again.
size_t clear_disk_cache();

}  // namespace kiln
