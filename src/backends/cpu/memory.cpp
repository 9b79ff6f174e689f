// Array instructions: len and tensor metadata, loads and stores on global, shared and local
// arrays with exact bounds checks, and var stores. A masked-off load gives zero and touches no
// memory; an unmasked access out of range stops the launch with Error{bounds.out_of_range}.
#include <cstring>
#include <type_traits>

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
      const backend::ArgBinding& arg = e.args[in.a];
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

// Element copies of a size known at compile time compile to plain moves; other sizes use memcpy.
template <uint32_t B>
inline void copy_element(unsigned char* d, const unsigned char* s, uint32_t bytes) {
  if constexpr (B == 0) std::memcpy(d, s, bytes);
  else std::memcpy(d, s, B);
}

// Index reads specialised for u32 (the type of every builtin and length), generic otherwise.
template <class I>
inline uint64_t index_at(const Exec& e, const Instr& in, uint32_t u) {
  if constexpr (std::is_same_v<I, uint32_t>) return e.slot<uint32_t>(in.b)[u];
  else return read_index(e, in.b, in.scalar2, u);
}

// When every unit is active, no mask is off and unit u accesses element first + u, the whole
// access is one copy of a range that is checked once: the common case of elementwise kernels.
// Returns the range's start, or nullptr when the access is not of that shape.
template <ArraySpace S, class I>
unsigned char* contiguous_range(const Exec& e, const Instr& in, const uint8_t* mask, uint32_t b) {
  if constexpr (!std::is_same_v<I, uint32_t> || S == ArraySpace::Local) {
    return nullptr;
  } else {
    if (!e.all_active) return nullptr;
    const uint32_t n = e.units;
    if (mask) {
      uint8_t all = 1;
      for (uint32_t u = 0; u < n; ++u) all &= mask[u];
      if (!all) return nullptr;
    }
    const uint32_t* idx = e.slot<uint32_t>(in.b);
    const uint32_t first = idx[0];
    uint32_t off = 0;
    for (uint32_t u = 0; u < n; ++u) off |= idx[u] ^ (first + u);
    if (off) return nullptr;
    uint64_t len = 0, last = uint64_t(first) + n - 1;
    if (!Addr<S>::at(e, in, 0, last, len)) return nullptr;  // the unit loop reports the error
    return Addr<S>::at(e, in, 0, first, len);
    (void)b;
  }
}

template <ArraySpace S, uint32_t B, class I>
uint32_t load_instr(Exec& e, const Instr& in, uint32_t pc) {
  unsigned char* d = e.slot<unsigned char>(in.dst);
  const uint8_t* mask = in.flag ? e.slot<uint8_t>(in.d) : nullptr;
  const uint32_t b = B ? B : in.bytes;
  if (unsigned char* p = contiguous_range<S, I>(e, in, mask, b)) {
    std::memcpy(d, p, size_t(b) * e.units);
    return pc + 1;
  }
  for_active(e, [&](uint32_t u) {
    unsigned char* out = d + size_t(u) * b;
    if (mask && !mask[u]) {
      std::memset(out, 0, b);
      return;
    }
    uint64_t index = index_at<I>(e, in, u);
    uint64_t len = 0;
    unsigned char* p = Addr<S>::at(e, in, u, index, len);
    if (!p) fail_bounds(e, in, u, index, len);
    copy_element<B>(out, p, b);
  });
  return pc + 1;
}

template <ArraySpace S, uint32_t B, class I>
uint32_t store_instr(Exec& e, const Instr& in, uint32_t pc) {
  const unsigned char* v = e.slot<unsigned char>(in.c);
  const uint8_t* mask = in.flag ? e.slot<uint8_t>(in.d) : nullptr;
  const uint32_t b = B ? B : in.bytes;
  if (unsigned char* p = contiguous_range<S, I>(e, in, mask, b)) {
    std::memcpy(p, v, size_t(b) * e.units);
    return pc + 1;
  }
  for_active(e, [&](uint32_t u) {
    if (mask && !mask[u]) return;
    uint64_t index = index_at<I>(e, in, u);
    uint64_t len = 0;
    unsigned char* p = Addr<S>::at(e, in, u, index, len);
    if (!p) fail_bounds(e, in, u, index, len);
    copy_element<B>(p, v + size_t(u) * b, b);
  });
  return pc + 1;
}

template <bool Load, ArraySpace S, class I>
InstrFn pick_access_bytes(uint32_t bytes) {
  switch (bytes) {
#define KILN_B(n) \
  case n: return Load ? &load_instr<S, n, I> : &store_instr<S, n, I>;
    KILN_B(1) KILN_B(2) KILN_B(4) KILN_B(8) KILN_B(16) KILN_B(32) KILN_B(64)
#undef KILN_B
    default: return Load ? &load_instr<S, 0, I> : &store_instr<S, 0, I>;
  }
}

template <bool Load, ArraySpace S>
InstrFn pick_access(uint32_t bytes, ir::Scalar index) {
  return index == ir::Scalar::U32 ? pick_access_bytes<Load, S, uint32_t>(bytes)
                                  : pick_access_bytes<Load, S, uint64_t>(bytes);
}

uint32_t len_instr(Exec& e, const Instr& in, uint32_t pc) {
  const uint32_t v = e.args[in.a].len, n = e.units;
  uint32_t* d = e.slot<uint32_t>(in.dst);
  for (uint32_t u = 0; u < n; ++u) d[u] = v;
  return pc + 1;
}

template <bool Shape>
uint32_t tensor_meta_instr(Exec& e, const Instr& in, uint32_t pc) {
  const backend::ArgBinding& arg = e.args[in.a];
  const uint32_t v = Shape ? arg.shape[size_t(in.imm)] : arg.stride[size_t(in.imm)], n = e.units;
  uint32_t* d = e.slot<uint32_t>(in.dst);
  for (uint32_t u = 0; u < n; ++u) d[u] = v;
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

InstrFn pick_memory(OpKind kind, ArraySpace space, uint32_t bytes, ir::Scalar index) {
  switch (kind) {
    case OpKind::Len: return &len_instr;
    case OpKind::TensorShape: return &tensor_meta_instr<true>;
    case OpKind::TensorStride: return &tensor_meta_instr<false>;
    case OpKind::Load:
      return space == ArraySpace::Global   ? pick_access<true, ArraySpace::Global>(bytes, index)
             : space == ArraySpace::Shared ? pick_access<true, ArraySpace::Shared>(bytes, index)
                                           : pick_access<true, ArraySpace::Local>(bytes, index);
    case OpKind::Store:
      return space == ArraySpace::Global   ? pick_access<false, ArraySpace::Global>(bytes, index)
             : space == ArraySpace::Shared ? pick_access<false, ArraySpace::Shared>(bytes, index)
                                           : pick_access<false, ArraySpace::Local>(bytes, index);
    default: return nullptr;
  }
}

}  // namespace kiln::cpu
