// Memory pool strategies behind one small interface: a SlicedPool packs small allocations into
// shared pages, an ExclusivePool gives each large allocation a page of its own. Both keep freed
// memory for reuse; the MemoryManager picks one by size and handles running out of memory.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <vector>

namespace kiln::runtime {

inline constexpr size_t kAlignment = 256;  // every slice starts on 256 bytes (vector loads, TMA)

struct Slice {
  uint64_t address = 0;
  size_t size = 0;        // bytes reserved for the slice (rounded up)
  uint32_t strategy = 0;  // which pool serves it
  uint32_t page = 0;
};

// Reserves and releases pages of device memory; reserve returns 0 when the device is out of memory.
struct PageSource {
  std::function<uint64_t(size_t)> reserve;
  std::function<void(uint64_t)> release;
};

class PoolStrategy {
 public:
  virtual ~PoolStrategy() = default;
  // A slice of `size` bytes (already rounded to kAlignment); `reused` says whether it came from
  // memory reserved before. nullopt when a new page could not be reserved.
  virtual std::optional<Slice> alloc(size_t size, PageSource& src, bool& reused) = 0;
  virtual void free(const Slice& s) = 0;
  // Releases pages with nothing in use; returns the bytes released.
  virtual uint64_t release_unused(PageSource& src) = 0;
  virtual uint64_t reserved_bytes() const = 0;
  virtual uint64_t page_count() const = 0;
};

// Small allocations: pages of `page_bytes`, each with a free list of blocks (first fit, freed
// neighbours merged).
class SlicedPool : public PoolStrategy {
 public:
  SlicedPool(uint32_t id, size_t page_bytes) : id_(id), page_bytes_(page_bytes) {}
  std::optional<Slice> alloc(size_t size, PageSource& src, bool& reused) override;
  void free(const Slice& s) override;
  uint64_t release_unused(PageSource& src) override;
  uint64_t reserved_bytes() const override;
  uint64_t page_count() const override;

 private:
  struct Page {
    uint64_t address = 0;
    size_t size = 0;
    size_t used = 0;
    std::map<size_t, size_t> free;  // offset -> size of each free block
    bool live = true;               // false once released (slot kept so page indices stay stable)
  };
  std::optional<Slice> take(uint32_t page, size_t size);

  uint32_t id_;
  size_t page_bytes_;
  std::vector<Page> pages_;
};

// Large allocations: one page each; a freed page serves a later request of at least half its size.
class ExclusivePool : public PoolStrategy {
 public:
  explicit ExclusivePool(uint32_t id) : id_(id) {}
  std::optional<Slice> alloc(size_t size, PageSource& src, bool& reused) override;
  void free(const Slice& s) override;
  uint64_t release_unused(PageSource& src) override;
  uint64_t reserved_bytes() const override { return reserved_; }
  uint64_t page_count() const override { return pages_; }

 private:
  uint32_t id_;
  std::multimap<size_t, uint64_t> free_;  // size -> address of each unused page
  uint64_t reserved_ = 0;
  uint64_t pages_ = 0;
};

}  // namespace kiln::runtime
