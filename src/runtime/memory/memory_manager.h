// MemoryManager: a client's device memory. Picks the pool strategy by size, counts, and on an
// allocation failure frees cached pages and retries once before reporting out of memory.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "kiln/runtime/client.h"
#include "runtime/memory/pool.h"

namespace kiln::runtime {

class DeviceState;

class MemoryManager {
 public:
  // `small_page` is the page size of the sliced pool. The manager keeps its device alive: the last
  // handle to its memory may go after every client, and after kiln's device registry at exit.
  MemoryManager(std::shared_ptr<DeviceState> device, size_t small_page);
  ~MemoryManager();
  MemoryManager(const MemoryManager&) = delete;
  MemoryManager& operator=(const MemoryManager&) = delete;

  // Throws Error{memory.out_of_memory} with the sizes when the device cannot serve `bytes`.
  Slice alloc(size_t bytes);
  void free(const Slice& s);
  MemoryStats stats() const;

  // Allocations up to this size share pages.
  size_t small_limit() const { return small_page_ / 8; }

 private:
  std::shared_ptr<DeviceState> device_;
  std::string device_name_;
  size_t small_page_;
  PageSource source_;
  mutable std::mutex m_;
  SlicedPool small_;
  ExclusivePool large_;
  MemoryStats stats_;
};

}  // namespace kiln::runtime
