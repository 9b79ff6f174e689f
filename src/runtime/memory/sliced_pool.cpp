// SlicedPool: small allocations packed into shared pages.
#include "runtime/memory/pool.h"

namespace kiln::runtime {

std::optional<Slice> SlicedPool::take(uint32_t index, size_t size) {
  Page& p = pages_[index];
  for (auto it = p.free.begin(); it != p.free.end(); ++it) {
    if (it->second < size) continue;
    size_t offset = it->first;
    size_t left = it->second - size;
    p.free.erase(it);
    if (left) p.free.emplace(offset + size, left);
    p.used += size;
    return Slice{p.address + offset, size, id_, index};
  }
  return std::nullopt;
}

std::optional<Slice> SlicedPool::alloc(size_t size, PageSource& src, bool& reused) {
  for (uint32_t i = 0; i < pages_.size(); ++i) {
    if (!pages_[i].live) continue;
    if (auto s = take(i, size)) {
      reused = true;
      return s;
    }
  }
  uint64_t address = src.reserve(page_bytes_);
  if (!address) return std::nullopt;
  reused = false;
  Page page;
  page.address = address;
  page.size = page_bytes_;
  page.free.emplace(0, page_bytes_);
  // Reuse the slot of a released page, so the vector does not grow without bound.
  for (uint32_t i = 0; i < pages_.size(); ++i) {
    if (!pages_[i].live) {
      pages_[i] = std::move(page);
      return take(i, size);
    }
  }
  pages_.push_back(std::move(page));
  return take(uint32_t(pages_.size() - 1), size);
}

void SlicedPool::free(const Slice& s) {
  Page& p = pages_[s.page];
  size_t offset = s.address - p.address;
  size_t size = s.size;
  p.used -= size;
  auto next = p.free.lower_bound(offset);
  if (next != p.free.end() && offset + size == next->first) {
    size += next->second;
    next = p.free.erase(next);
  }
  if (next != p.free.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == offset) {
      prev->second += size;
      return;
    }
  }
  p.free.emplace(offset, size);
}

uint64_t SlicedPool::release_unused(PageSource& src) {
  uint64_t released = 0;
  for (Page& p : pages_) {
    if (p.live && p.used == 0) {
      src.release(p.address);
      released += p.size;
      p.live = false;
      p.free.clear();
    }
  }
  return released;
}

uint64_t SlicedPool::reserved_bytes() const {
  uint64_t n = 0;
  for (const Page& p : pages_) n += p.live ? p.size : 0;
  return n;
}

uint64_t SlicedPool::page_count() const {
  uint64_t n = 0;
  for (const Page& p : pages_) n += p.live ? 1 : 0;
  return n;
}

}  // namespace kiln::runtime
