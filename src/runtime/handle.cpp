// Handle: views of an allocation, their element types, and reinterpretation.
#include "kiln/runtime/handle.h"

#include <string>

#include "kiln/error.h"
#include "runtime/client_state.h"

namespace kiln {

std::string_view cpp_element_name(ir::Scalar s) {
  switch (s) {
    case ir::Scalar::Bool: return "bool";
    case ir::Scalar::I8: return "int8_t";
    case ir::Scalar::I16: return "int16_t";
    case ir::Scalar::I32: return "int32_t";
    case ir::Scalar::I64: return "int64_t";
    case ir::Scalar::U8: return "uint8_t";
    case ir::Scalar::U16: return "uint16_t";
    case ir::Scalar::U32: return "uint32_t";
    case ir::Scalar::U64: return "uint64_t";
    case ir::Scalar::F16: return "f16";
    case ir::Scalar::BF16: return "bf16";
    case ir::Scalar::F32: return "float";
    case ir::Scalar::F64: return "double";
  }
  return "?";
}

Handle Handle::offset_start(size_t bytes) const {
  if (bytes > size_in_used()) {
    throw Error("handle.bad_offset", "offset_start(" + std::to_string(bytes) + ") on a handle showing " +
                                         std::to_string(size_in_used()) + " bytes");
  }
  return Handle(alloc_, begin_ + bytes, end_, element_);
}

Handle Handle::offset_end(size_t bytes) const {
  if (bytes > size_in_used()) {
    throw Error("handle.bad_offset", "offset_end(" + std::to_string(bytes) + ") on a handle showing " +
                                         std::to_string(size_in_used()) + " bytes");
  }
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
                                       " bytes into its memory, not on a " + std::to_string(size) +
                                       "-byte boundary");
  }
  return Handle(alloc_, begin_, end_, element);
}

Handle Handle::as_bytes() const { return Handle(alloc_, begin_, end_, std::nullopt); }

bool Handle::can_mut() const { return alloc_ && alloc_.use_count() == 1; }
uint64_t Handle::memory_id() const { return alloc_ ? alloc_->id : 0; }
uint64_t Handle::address() const { return alloc_ ? alloc_->slice.address + begin_ : 0; }

}  // namespace kiln
