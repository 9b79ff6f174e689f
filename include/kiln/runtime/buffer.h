// Buffer<T>: a Handle whose element type the compiler knows. A Buffer<T> is a Handle (it converts
// to one wherever a Handle goes), made only where its memory holds T: client.buffer<T>(n),
// client.upload_buffer(data), or Buffer<T>::of(handle), which checks the handle's element type
// once. Typed fronts (a tile entry's launch) take Buffer<T>, so that a buffer of another element
// type does not compile (docs/decisions/028-typed-tile-launch.md).
#pragma once

#include <cstddef>
#include <string_view>
#include <utility>

#include "kiln/runtime/handle.h"

namespace kiln {

namespace detail {
// Error{handle.invalid} for an empty handle, Error{handle.type_mismatch} unless it holds `element`.
void check_buffer_element(const Handle& h, ir::Scalar element, std::string_view cpp_name);
}  // namespace detail

template <Element T>
class Buffer : public Handle {
 public:
  using element_type = T;

  // An empty buffer (no memory), as Handle() is: a launch refuses it (handle.invalid).
  Buffer() = default;

  // `h` seen as a Buffer<T>: Error{handle.type_mismatch} unless it holds elements of T (raw bytes
  // too: view_as<T>() first), Error{handle.invalid} for an empty handle.
  static Buffer of(const Handle& h) {
    detail::check_buffer_element(h, scalar_of<T>(), ir::scalar_facts(scalar_of<T>()).cpp_name);
    return Buffer(h);
  }

  // Elements the buffer shows.
  size_t size() const { return size_in_used() / sizeof(T); }

  // Handle's views, keeping the element type (a view by part of an element is refused there).
  Buffer offset_start(size_t bytes) const { return Buffer(Handle::offset_start(bytes)); }
  Buffer offset_end(size_t bytes) const { return Buffer(Handle::offset_end(bytes)); }

 private:
  explicit Buffer(Handle h) : Handle(std::move(h)) {}
};

}  // namespace kiln
