// The C++ spelling of each element type, for messages that tell a person what to write.
#include "kiln/element.h"

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

}  // namespace kiln
