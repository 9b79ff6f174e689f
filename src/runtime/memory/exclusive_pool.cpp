// ExclusivePool: one page per large allocation, freed pages kept for reuse.
#include "runtime/memory/pool.h"

namespace kiln::runtime {

std::optional<Slice> ExclusivePool::alloc(size_t size, PageSource& src, bool& reused) {
  // The smallest unused page that fits, unless it would waste more than half of itself.
  auto it = free_.lower_bound(size);
  if (it != free_.end() && it->first <= 2 * size) {
    Slice s{it->second, it->first, id_, 0};
    free_.erase(it);
    reused = true;
    return s;
  }
  uint64_t address = src.reserve(size);
  if (!address) return std::nullopt;
  reused = false;
  reserved_ += size;
  ++pages_;
  return Slice{address, size, id_, 0};
}

void ExclusivePool::free(const Slice& s) { free_.emplace(s.size, s.address); }

uint64_t ExclusivePool::release_unused(PageSource& src) {
  uint64_t released = 0;
  for (auto& [size, address] : free_) {
    src.release(address);
    released += size;
    reserved_ -= size;
    --pages_;
  }
  free_.clear();
  return released;
}

}  // namespace kiln::runtime
