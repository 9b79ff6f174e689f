// Array instructions: len and tensor metadata, loads and stores on global, shared and local
// arrays with exact bounds checks, and var stores. A masked-off load gives zero and touches no
// memory; an unmasked access out of range stops the launch with Error{bounds.out_of_range}.
#include <cstring>

#include "backends/cpu/lanes.h"
#include "kiln/error.h"

namespace kiln::cpu {

namespace {

using ir::OpKind;

// Where the element `index` of unit u lives, or nullptr when it is out of range.
// Global: in.a is the parameter; shared: in.a is the byte offset in shared memory; local: in.a is
// the slot holding every unit's array; in.imm is the shared/local array length.
template <ArraySpace S>
struct Addr {
  static unsigned char* at(const Exec& e, const Instr& in, uint32_t u, uint64_t index, uint64_t& len) {
    if constexpr (S == ArraySpace::Global) {
      const runtime::ArgBinding& arg = e.args[in.a];
      len = arg.len;
      if (index >= len) return nullptr;
      return reinterpret_cast<unsigned char*>(arg.address) + index * in.bytes;
    } else if constexpr (S == ArraySpace::Shared) {
      len = uint64_t(in.imm);
      if (index >= len) return nullptr;
      return e.shared + in.a + index * in.bytes;
    } else {
      len = uint64_t(in.imm);
      if (index >= len) return nullptr;
      return e.regs + in.a + (uint64_t(u) * len + index) * in.bytes;
    }
  }
};

template <ArraySpace S>
uint32_t load_instr(Exec& e, const Instr& in, uint32_t pc) {
  unsigned char* d = e.slot<unsigned char>(in.dst);
  const uint8_t* mask = in.flag ? e.slot<uint8_t>(in.d) : nullptr;
  uint32_t b = in.bytes;
  for_active(e, [&](uint32_t u) {
    unsigned char* out = d + size_t(u) * b;
    if (mask && !mask[u]) {
      std::memset(out, 0, b);
      return;
    }
    uint64_t index = read_index(e, in.b, in.scalar2, u);
    uint64_t len = 0;
    unsigned char* p = Addr<S>::at(e, in, u, index, len);
    if (!p) fail_bounds(e, in, u, index, len);
    std::memcpy(out, p, b);
  });
  return pc + 1;
}

template <ArraySpace S>
uint32_t store_instr(Exec& e, const Instr& in, uint32_t pc) {
  const unsigned char* v = e.slot<unsigned char>(in.c);
  const uint8_t* mask = in.flag ? e.slot<uint8_t>(in.d) : nullptr;
  uint32_t b = in.bytes;
  for_active(e, [&](uint32_t u) {
    if (mask && !mask[u]) return;
    uint64_t index = read_index(e, in.b, in.scalar2, u);
    uint64_t len = 0;
    unsigned char* p = Addr<S>::at(e, in, u, index, len);
    if (!p) fail_bounds(e, in, u, index, len);
    std::memcpy(p, v + size_t(u) * b, b);
  });
  return pc + 1;
}

uint32_t len_instr(Exec& e, const Instr& in, uint32_t pc) {
  uint32_t v = e.args[in.a].len;
  uint32_t* d = e.slot<uint32_t>(in.dst);
  for (uint32_t u = 0; u < e.units; ++u) d[u] = v;
  return pc + 1;
}

template <bool Shape>
uint32_t tensor_meta_instr(Exec& e, const Instr& in, uint32_t pc) {
  const runtime::ArgBinding& arg = e.args[in.a];
  uint32_t v = Shape ? arg.shape[size_t(in.imm)] : arg.stride[size_t(in.imm)];
  uint32_t* d = e.slot<uint32_t>(in.dst);
  for (uint32_t u = 0; u < e.units; ++u) d[u] = v;
  return pc + 1;
}

}  // namespace

uint64_t read_index(const Exec& e, uint32_t slot, ir::Scalar s, uint32_t i) {
  switch (s) {
    case ir::Scalar::I8: return uint64_t(int64_t(e.slot<int8_t>(slot)[i]));
    case ir::Scalar::I16: return uint64_t(int64_t(e.slot<int16_t>(slot)[i]));
    case ir::Scalar::I32: return uint64_t(int64_t(e.slot<int32_t>(slot)[i]));
    case ir::Scalar::I64: return uint64_t(e.slot<int64_t>(slot)[i]);
    case ir::Scalar::U8: return e.slot<uint8_t>(slot)[i];
    case ir::Scalar::U16: return e.slot<uint16_t>(slot)[i];
    case ir::Scalar::U32: return e.slot<uint32_t>(slot)[i];
    case ir::Scalar::U64: return e.slot<uint64_t>(slot)[i];
    default: return ~uint64_t(0);
  }
}

InstrFn pick_memory(OpKind kind, ArraySpace space) {
  switch (kind) {
    case OpKind::Len: return &len_instr;
    case OpKind::TensorShape: return &tensor_meta_instr<true>;
    case OpKind::TensorStride: return &tensor_meta_instr<false>;
    case OpKind::Load:
      return space == ArraySpace::Global   ? &load_instr<ArraySpace::Global>
             : space == ArraySpace::Shared ? &load_instr<ArraySpace::Shared>
                                           : &load_instr<ArraySpace::Local>;
    case OpKind::Store:
      return space == ArraySpace::Global   ? &store_instr<ArraySpace::Global>
             : space == ArraySpace::Shared ? &store_instr<ArraySpace::Shared>
                                           : &store_instr<ArraySpace::Local>;
    default: return nullptr;
  }
}

}  // namespace kiln::cpu
