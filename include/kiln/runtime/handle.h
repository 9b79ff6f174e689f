// Handle: a reference-counted, typed view of pooled device memory. Copies share the memory; the
// memory returns to its pool when the last handle referring to it goes. A handle knows the element
// type of what it holds, so that a launch can refuse a buffer of one type where a kernel takes
// another; reinterpreting the bytes is explicit (view_as).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "kiln/element.h"

namespace kiln {

namespace runtime {
struct Allocation;
}

class Handle {
 public:
  Handle() = default;

  // A view without the first `bytes` bytes of this one. Error{handle.bad_offset} past its end, or
  // when a typed handle would move by part of an element (as_bytes() first to do that).
  Handle offset_start(size_t bytes) const;
  // A view without the last `bytes` bytes of this one: offset_end(8) of 8 floats shows 6.
  Handle offset_end(size_t bytes) const;

  // The element type of what the handle holds: set by upload<T>, empty<T> and view_as<T>; none for
  // raw bytes (empty_bytes, upload_bytes), which a kernel takes only through view_as.
  std::optional<ir::Scalar> element() const { return element_; }
  // The same memory seen as elements of U. Error{handle.bad_view} unless the view shows a whole
  // number of U and starts on a U boundary; Error{handle.invalid} on an empty handle.
  template <Element U>
  Handle view_as() const {
    return view_as(scalar_of<U>());
  }
  Handle view_as(ir::Scalar element) const;
  // The same memory as raw bytes.
  Handle as_bytes() const;

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
  Handle(std::shared_ptr<runtime::Allocation> a, size_t begin, size_t end, std::optional<ir::Scalar> element)
      : alloc_(std::move(a)), begin_(begin), end_(end), element_(element) {}

 private:
  std::shared_ptr<runtime::Allocation> alloc_;
  size_t begin_ = 0;
  size_t end_ = 0;
  std::optional<ir::Scalar> element_;
};

}  // namespace kiln
