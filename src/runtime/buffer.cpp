// Buffer<T>::of's one run-time check (runtime/buffer.h): the handle holds elements of T.
#include "kiln/runtime/buffer.h"

#include <string>

#include "kiln/error.h"

namespace kiln::detail {

void check_buffer_element(const Handle& h, ir::Scalar element, std::string_view cpp_name) {
  const std::string self = "Buffer<" + std::string(cpp_name) + ">::of";
  if (!h.valid()) throw Error("handle.invalid", self + ": the handle is empty");
  std::optional<ir::Scalar> held = h.element();
  if (!held) {
    throw Error("handle.type_mismatch",
                self + ": the handle holds raw bytes; view_as<" + std::string(cpp_name) + ">() them first");
  }
  if (*held != element) {
    const std::string other(ir::scalar_facts(*held).cpp_name);
    throw Error("handle.type_mismatch", self + ": the handle holds " + other + " elements; take it as Buffer<" + other +
                                            ">, or reinterpret the bytes with view_as<" + std::string(cpp_name) +
                                            ">()");
  }
}

}  // namespace kiln::detail
