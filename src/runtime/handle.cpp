// Handle: views of an allocation, their element types, and reinterpretation.
#include "kiln/runtime/handle.h"

#include <string>

#include "kiln/error.h"
#include "runtime/client_state.h"

namespace kiln {

namespace {
// A view of typed elements moves by whole elements, so that it stays a view of elements.
void check_offset(const char* what, size_t bytes, size_t shown, std::optional<ir::Scalar> element) {
  if (bytes > shown) {
    throw Error("handle.bad_offset", std::string(what) + "(" + std::to_string(bytes) + ") on a handle showing " +
                                         std::to_string(shown) + " bytes");
  }
  if (element && bytes % size_t(ir::scalar_bytes(*element)) != 0) {
    throw Error("handle.bad_offset", std::string(what) + "(" + std::to_string(bytes) + ") on a handle of " +
                                         std::string(cpp_element_name(*element)) +
                                         " elements is not a whole number of " +
                                         std::to_string(ir::scalar_bytes(*element)) +
                                         "-byte elements; offset by whole elements, or as_bytes() first");
  }
}
}  // namespace

Handle Handle::offset_start(size_t bytes) const {
  check_offset("offset_start", bytes, size_in_used(), element_);
  return Handle(alloc_, begin_ + bytes, end_, element_);
}

Handle Handle::offset_end(size_t bytes) const {
  check_offset("offset_end", bytes, size_in_used(), element_);
  return Handle(alloc_, begin_, end_ - bytes, element_);
}

Handle Handle::view_as(ir::Scalar element) const {
  std::string target = "view_as<" + std::string(cpp_element_name(element)) + ">()";
  if (!valid()) throw Error("handle.invalid", target + " of an empty handle");
  size_t size = size_t(ir::scalar_bytes(element));
  if (size_in_used() % size != 0) {
    throw Error("handle.bad_view", target + " of a handle showing " + std::to_string(size_in_used()) +
                                       " bytes, which is not a whole number of " + std::to_string(size) +
                                       "-byte elements");
  }
  if (address() % size != 0) {
    throw Error("handle.bad_view", target + " of a view that starts " + std::to_string(offset()) +
                                       " bytes into its memory, not on a " + std::to_string(size) + "-byte boundary");
  }
  return Handle(alloc_, begin_, end_, element);
}

Handle Handle::as_bytes() const { return Handle(alloc_, begin_, end_, std::nullopt); }

bool Handle::can_mut() const { return alloc_ && alloc_.use_count() == 1; }
uint64_t Handle::memory_id() const { return alloc_ ? alloc_->id : 0; }
uint64_t Handle::address() const { return alloc_ ? alloc_->slice.address + begin_ : 0; }

}  // namespace kiln
