// Handle: a reference-counted view of pooled device memory. Copies share the memory; the memory
// returns to its pool when the last handle referring to it goes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace kiln {

namespace runtime {
struct Allocation;
}

class Handle {
 public:
  Handle() = default;

  // A view without the first `bytes` bytes of this one (Error{handle.bad_offset} past its end).
  Handle offset_start(size_t bytes) const;
  // A view without the last `bytes` bytes of this one: offset_end(8) of 8 floats shows 6.
  Handle offset_end(size_t bytes) const;

  // Bytes this view shows.
  size_t size_in_used() const { return end_ - begin_; }
  // True when no other handle refers to the memory: an op may then write into it in place.
  bool can_mut() const;
  // The allocation this view is of, and where the view starts in it.
  uint64_t memory_id() const;
  size_t offset() const { return begin_; }
  bool valid() const { return alloc_ != nullptr; }

  // For the runtime and backends.
  const std::shared_ptr<runtime::Allocation>& allocation() const { return alloc_; }
  uint64_t address() const;  // device address of the first visible byte
  Handle(std::shared_ptr<runtime::Allocation> a, size_t begin, size_t end)
      : alloc_(std::move(a)), begin_(begin), end_(end) {}

 private:
  std::shared_ptr<runtime::Allocation> alloc_;
  size_t begin_ = 0;
  size_t end_ = 0;
};

}  // namespace kiln
