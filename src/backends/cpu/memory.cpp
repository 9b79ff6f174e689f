// Arrays: planning and executors of len and tensor metadata, shared and local allocations, and
// loads and stores on global, shared and local arrays with exact bounds checks, and the wide ones
// ({lanes = W}) of global arrays. A masked-off load gives zero and touches no memory; an access out
// of range with its mask on (or without a mask) stops the launch with Error{bounds.out_of_range}.
#include <cstring>
#include <type_traits>

#include "backends/cpu/lanes.h"
#include "backends/cpu/planner.h"

namespace kiln::cpu {

namespace {

using ir::OpKind;

// Where the element `index` of unit u lives, or nullptr when it is out of range.
template <ArraySpace S>
struct Addr {
  static unsigned char* at(const Exec& e, const Access& x, uint32_t u, uint64_t index, uint64_t& len) {
    if constexpr (S == ArraySpace::Global) {
      const backend::ArgBinding& arg = e.args[x.array];
      len = arg.len;
      if (index >= len) return nullptr;
      return reinterpret_cast<unsigned char*>(arg.address) + index * x.element_bytes;
    } else if constexpr (S == ArraySpace::Shared) {
      len = x.length;
      if (index >= len) return nullptr;
      return e.shared + x.array + index * x.element_bytes;
    } else {
      len = x.length;
      if (index >= len) return nullptr;
      return e.regs + x.array + (uint64_t(u) * len + index) * x.element_bytes;
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
inline uint64_t index_at(const Exec& e, const Access& x, uint32_t u) {
  if constexpr (std::is_same_v<I, uint32_t>) return e.slot<uint32_t>(x.index.slot)[x.index.uniform ? 0 : u];
  else return read_index(e, x.index, x.index_type, u);
}

// When every unit is active, no mask is off and unit u accesses element first + u, the whole
// access is one copy of a range that is checked once: the common case of elementwise kernels.
// Returns the range's start, or nullptr when the access is not of that shape.
template <ArraySpace S, class I>
unsigned char* contiguous_range(const Exec& e, const Access& x, const uint8_t* mask) {
  if constexpr (!std::is_same_v<I, uint32_t> || S == ArraySpace::Local) {
    return nullptr;
  } else {
    const uint32_t n = e.units;
    if (!e.all_active || (x.index.uniform && n > 1)) return nullptr;
    if (mask) {
      uint8_t all = 1;
      if (x.mask.uniform) all = mask[0];
      else
        for (uint32_t u = 0; u < n; ++u) all &= mask[u];
      if (!all) return nullptr;
    }
    const uint32_t* idx = e.slot<uint32_t>(x.index.slot);
    const uint32_t first = idx[0];
    uint32_t off = 0;
    for (uint32_t u = 0; u < n; ++u) off |= idx[u] ^ (first + u);
    if (off) return nullptr;
    uint64_t len = 0, last = uint64_t(first) + n - 1;
    if (!Addr<S>::at(e, x, 0, last, len)) return nullptr;  // the unit loop reports the error
    return Addr<S>::at(e, x, 0, first, len);
  }
}

template <ArraySpace S, uint32_t B, class I>
uint32_t load_instr(Exec& e, const Instr& in, uint32_t pc) {
  const Access& x = in.as<Access>();
  unsigned char* d = e.slot<unsigned char>(in.dst.slot);
  const uint8_t* mask = x.masked ? e.slot<uint8_t>(x.mask.slot) : nullptr;
  const bool mask_row = x.mask.uniform;
  const uint32_t b = B ? B : x.element_bytes;
  if (unsigned char* p = contiguous_range<S, I>(e, x, mask)) {
    std::memcpy(d, p, size_t(b) * e.units);
    return pc + 1;
  }
  for_active(e, [&](uint32_t u) {
    unsigned char* out = d + size_t(u) * b;
    if (mask && !mask[mask_row ? 0 : u]) {
      std::memset(out, 0, b);
      return;
    }
    uint64_t index = index_at<I>(e, x, u);
    uint64_t len = 0;
    unsigned char* p = Addr<S>::at(e, x, u, index, len);
    if (!p) fail_bounds(e, in, u, index, len);
    copy_element<B>(out, p, b);
  });
  return pc + 1;
}

template <ArraySpace S, uint32_t B, class I>
uint32_t store_instr(Exec& e, const Instr& in, uint32_t pc) {
  const Access& x = in.as<Access>();
  const unsigned char* v = e.slot<unsigned char>(x.value.slot);
  const size_t v_step = x.value.uniform ? 0 : 1;  // a uniform value is every unit's
  const uint8_t* mask = x.masked ? e.slot<uint8_t>(x.mask.slot) : nullptr;
  const bool mask_row = x.mask.uniform;
  const uint32_t b = B ? B : x.element_bytes;
  if (unsigned char* p = contiguous_range<S, I>(e, x, mask)) {
    if (v_step) {
      std::memcpy(p, v, size_t(b) * e.units);
    } else {
      for (uint32_t u = 0, n = e.units; u < n; ++u) copy_element<B>(p + size_t(u) * b, v, b);
    }
    return pc + 1;
  }
  for_active(e, [&](uint32_t u) {
    if (mask && !mask[mask_row ? 0 : u]) return;
    uint64_t index = index_at<I>(e, x, u);
    uint64_t len = 0;
    unsigned char* p = Addr<S>::at(e, x, u, index, len);
    if (!p) fail_bounds(e, in, u, index, len);
    copy_element<B>(p, v + v_step * u * b, b);
  });
  return pc + 1;
}

template <bool Load, ArraySpace S, class I>
InstrFn access_by_bytes(uint32_t bytes) {
  // The table of sizes reads best as one line.
  // clang-format off
  switch (bytes) {
#define KILN_B(n) \
  case n: return Load ? &load_instr<S, n, I> : &store_instr<S, n, I>;
    KILN_B(1) KILN_B(2) KILN_B(4) KILN_B(8) KILN_B(16) KILN_B(32) KILN_B(64)
#undef KILN_B
    default: return Load ? &load_instr<S, 0, I> : &store_instr<S, 0, I>;
  }
  // clang-format on
}

template <bool Load, ArraySpace S>
InstrFn access_by_index(uint32_t bytes, ir::Scalar index) {
  return index == ir::Scalar::U32 ? access_by_bytes<Load, S, uint32_t>(bytes)
                                  : access_by_bytes<Load, S, uint64_t>(bytes);
}

template <bool Load>
InstrFn pick_access(ArraySpace space, uint32_t bytes, ir::Scalar index) {
  switch (space) {
    case ArraySpace::Global: return access_by_index<Load, ArraySpace::Global>(bytes, index);
    case ArraySpace::Shared: return access_by_index<Load, ArraySpace::Shared>(bytes, index);
    case ArraySpace::Local: break;
  }
  return access_by_index<Load, ArraySpace::Local>(bytes, index);
}

// A wide access ({lanes = W}, global only, never masked): unit u's W elements from its index, as
// one vector of W lanes, in range when the last one is. B is the vector's bytes (0: any size).
[[noreturn]] void fail_wide(const Exec& e, const Instr& in, uint32_t u, uint64_t index, uint64_t len) {
  const Access& x = in.as<Access>();
  fail(e, in, u, "bounds.out_of_range",
       "the " + std::to_string(x.lanes) + " elements from index " + std::to_string(index) +
           " (a wide access) reach past " + array_text(e, in) + " (length " + std::to_string(len) + ")");
}

template <class I>
unsigned char* wide_at(const Exec& e, const Instr& in, uint32_t u) {
  const Access& x = in.as<Access>();
  const backend::ArgBinding& arg = e.args[x.array];
  const uint64_t index = index_at<I>(e, x, u), len = arg.len;
  if (index > len || len - index < x.lanes) fail_wide(e, in, u, index, len);
  return reinterpret_cast<unsigned char*>(arg.address) + index * x.element_bytes;
}

template <uint32_t B, class I>
uint32_t wide_load_instr(Exec& e, const Instr& in, uint32_t pc) {
  const uint32_t b = B ? B : in.as<Access>().element_bytes * in.as<Access>().lanes;
  unsigned char* d = e.slot<unsigned char>(in.dst.slot);
  for_active(e, [&](uint32_t u) { copy_element<B>(d + size_t(u) * b, wide_at<I>(e, in, u), b); });
  return pc + 1;
}

template <uint32_t B, class I>
uint32_t wide_store_instr(Exec& e, const Instr& in, uint32_t pc) {
  const Access& x = in.as<Access>();
  const uint32_t b = B ? B : x.element_bytes * x.lanes;
  const unsigned char* v = e.slot<unsigned char>(x.value.slot);
  const size_t v_step = x.value.uniform ? 0 : 1;  // a uniform vector is every unit's (its row's first lanes)
  for_active(e, [&](uint32_t u) { copy_element<B>(wide_at<I>(e, in, u), v + v_step * u * b, b); });
  return pc + 1;
}

template <bool Load, class I>
InstrFn wide_by_bytes(uint32_t bytes) {
  // The table of sizes reads best as one line.
  // clang-format off
  switch (bytes) {
#define KILN_B(n) \
  case n: return Load ? &wide_load_instr<n, I> : &wide_store_instr<n, I>;
    KILN_B(2) KILN_B(4) KILN_B(8) KILN_B(16) KILN_B(32) KILN_B(64)
#undef KILN_B
    default: return Load ? &wide_load_instr<0, I> : &wide_store_instr<0, I>;
  }
  // clang-format on
}

uint32_t len_instr(Exec& e, const Instr& in, uint32_t pc) {
  const uint32_t v = e.args[in.as<ArrayMeta>().param].len, n = e.units;
  uint32_t* d = e.slot<uint32_t>(in.dst.slot);
  for (uint32_t u = 0; u < n; ++u) d[u] = v;
  return pc + 1;
}

template <bool Shape>
uint32_t tensor_meta_instr(Exec& e, const Instr& in, uint32_t pc) {
  const ArrayMeta& x = in.as<ArrayMeta>();
  const backend::ArgBinding& arg = e.args[x.param];
  const uint32_t v = Shape ? arg.shape[x.dim] : arg.stride[x.dim], n = e.units;
  uint32_t* d = e.slot<uint32_t>(in.dst.slot);
  for (uint32_t u = 0; u < n; ++u) d[u] = v;
  return pc + 1;
}

}  // namespace

// Loads, stores and atomics take the array and the index first (ops::Store's names serve each);
// a store's value, an atomic's (a cas's expected value) follow.
Access plan_access(Planner& p, const ir::Op& op) {
  using S = ir::ops::Store;
  const ArrayRef& a = p.array(op.operand(S::array));
  Access x;
  x.space = a.space;
  x.array = a.where;
  x.length = a.length;
  x.alloc_op = a.op;
  x.element_bytes = uint32_t(p.operand_type(op, S::array).element_bytes());
  x.index = p.operand(op, S::index);
  x.index_type = p.operand_type(op, S::index).scalar;
  if (op.kind == OpKind::Store) x.value = p.operand(op, S::value);
  else if (op.kind == OpKind::AtomicCas) x.value = p.operand(op, ir::ops::AtomicCas::expected);
  else if (ir::is_atomic(op.kind)) x.value = p.operand(op, ir::ops::Atomic::value);
  x.masked = op.mask() != ir::kNoValue;
  if (x.masked) x.mask = p.ref(op.mask());
  return x;
}

bool plan_memory(Planner& p, const ir::Op& op) {
  switch (op.kind) {
    case OpKind::Len: {
      const ArrayRef& a = p.array(op.operand(ir::ops::Array::array));
      if (a.space == ArraySpace::Global) {
        p.emit(op, &len_instr, ArrayMeta{a.where, 0});
      } else {
        const uint32_t length = a.length;
        p.constant(op, &length);
      }
      return true;
    }
    case OpKind::TensorShape:
    case OpKind::TensorStride:
      p.emit(op, op.kind == OpKind::TensorShape ? &tensor_meta_instr<true> : &tensor_meta_instr<false>,
             ArrayMeta{p.array(op.operand(ir::ops::Array::array)).where, uint32_t(op.get<ir::AttrKey::Dim>())});
      return true;
    case OpKind::Load:
    case OpKind::Store: {
      const bool load = op.kind == OpKind::Load;
      Access x = plan_access(p, op);
      if (const ir::AttrValue* w = op.attr(ir::AttrKey::Lanes)) {
        x.lanes = uint32_t(w->i);
        const uint32_t bytes = x.element_bytes * x.lanes;
        const bool u32 = x.index_type == ir::Scalar::U32;
        p.emit(op,
               load ? (u32 ? wide_by_bytes<true, uint32_t>(bytes) : wide_by_bytes<true, uint64_t>(bytes))
                    : (u32 ? wide_by_bytes<false, uint32_t>(bytes) : wide_by_bytes<false, uint64_t>(bytes)),
               x);
        return true;
      }
      p.emit(op,
             load ? pick_access<true>(x.space, x.element_bytes, x.index_type)
                  : pick_access<false>(x.space, x.element_bytes, x.index_type),
             x);
      return true;
    }
    case OpKind::SharedAlloc: {
      uint64_t bytes = uint64_t(op.type.length) * uint64_t(op.type.element_bytes());
      // 16 bytes, or the alignment of the array's shared layout, as on CUDA (no op can see an
      // address, but offsets then agree between the backends).
      const ir::TileLayout* l = p.kernel().layout_of(op.type);
      const uint64_t align =
          l && l->kind == ir::TileLayout::Kind::Shared ? std::max<uint64_t>(16, l->shared.align) : 16;
      uint64_t off = (uint64_t(p.plan().shared_bytes) + align - 1) / align * align;
      if (off + bytes > (uint64_t(1) << 31)) throw Error("compile.unsupported", "shared memory over 2 GiB");
      p.define_array(op.result, ArrayRef{ArraySpace::Shared, uint32_t(off), op.type.length, p.op_number()});
      p.plan().shared_arrays.emplace_back(uint32_t(off), uint32_t(bytes));
      p.plan().shared_bytes = uint32_t(off + bytes);
      return true;
    }
    case OpKind::CopyAsync: return plan_async_copy(p, op);
    case OpKind::LocalAlloc: {
      uint64_t per_unit = uint64_t(op.type.length) * uint64_t(op.type.element_bytes());
      uint32_t slot = p.alloc(per_unit * p.plan().units);
      p.define_array(op.result, ArrayRef{ArraySpace::Local, slot, op.type.length, p.op_number()});
      p.plan().local_arrays.emplace_back(slot, uint32_t(per_unit * p.plan().units));
      return true;
    }
    default: return false;
  }
}

}  // namespace kiln::cpu
