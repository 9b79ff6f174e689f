// The compile cache of one device: KernelId -> compiled kernel. A lookup takes no lock and
// allocates nothing (an open-addressing table published through an atomic pointer); a miss
// compiles once even when several threads launch the same new kernel at the same moment.
#pragma once

#include <atomic>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "kiln/kernel_id.h"
#include "kiln/kernel_ref.h"

namespace kiln::runtime {

struct CacheEntry {
  KernelId id;
  // What it was traced or specialised from: lets tools define a cached kernel again (for another
  // backend), and keeps a recorded program, which the id points to, alive.
  KernelRef kernel;
  std::string name;
  std::shared_ptr<backend::Executable> exe;
  std::atomic<uint64_t> launches{0};
  // The device error site of a kernel that reports failed checks through the client's error word
  // (Executable::takes_error_word); 0 for every other kernel, whose launches bind nothing more.
  uint32_t error_site = 0;
};

class KernelCache {
 public:
  KernelCache();
  ~KernelCache();
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;

  // The compiled kernel for `id`: from the table, or traced, passed and compiled now.
  CacheEntry& get(const KernelId& id, const KernelRef& kernel, backend::Backend& backend);
  CacheEntry* find(const KernelId& id) const;

  uint64_t compilations() const { return compilations_.load(std::memory_order_relaxed); }
  // Every compiled kernel's id and kernel reference, in compile order: `ref(id)` defines it again.
  std::vector<std::pair<KernelId, KernelRef>> kernels() const;
  uint64_t launches() const;
  std::vector<std::pair<std::string, uint64_t>> launches_by_kernel() const;

 private:
  struct Table {
    size_t mask;
    std::unique_ptr<std::atomic<CacheEntry*>[]> slots;
    explicit Table(size_t capacity);
  };
  CacheEntry& compile(const KernelId& id, const KernelRef& kernel, backend::Backend& backend);
  void insert_locked(CacheEntry* e);

  std::atomic<Table*> table_;
  mutable std::mutex m_;
  std::vector<std::unique_ptr<Table>> tables_;  // every table ever published: readers may hold old ones
  std::vector<std::unique_ptr<CacheEntry>> entries_;
  std::unordered_map<KernelId, std::shared_future<CacheEntry*>, KernelIdHash> in_flight_;
  std::atomic<uint64_t> compilations_{0};
};

}  // namespace kiln::runtime
