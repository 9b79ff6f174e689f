// Hopper's warp-group product and its fence, commit and wait, with the meaning docs/ir.md gives
// them. Each warp group (128 units from a multiple of 128) issues its own product, with all its
// units active and giving the same operands. A product is computed when it is issued: for each
// accumulator, the accumulator plus the k products of its row of a and column of b, added in k
// order in f32 (a tensor core adds in an order and with roundings of its own: results agree to a
// tolerance, not bit for bit). What it leaves lands in the accumulators only at the wait that
// completes its group; until then they read NaN, so a kernel that reads them early fails here
// rather than passing by luck. The factors are read at issue and read again at that wait: a
// change between (a slot refilled while the tensor cores may still read it) is Error{wgmma.race}.
// A product that starts on accumulators with no product in flight needs a wgmma.fence of its warp
// group naming them since that group's last wait (Error{wgmma.unfenced}): the GPU orders register
// writes before a product only through the fence. A wait names the accumulator arrays it makes readable,
// and one that completes a product on an array it does not name is Error{wgmma.unnamed}: on a GPU
// the names are what keeps the compiler from reading them before the wait.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "backends/cpu/exec.h"
#include "backends/cpu/planner.h"
#include "kiln/float8.h"
#include "kiln/half.h"
#include "kiln/ir/layout.h"
#include "kiln/ir/mma.h"

namespace kiln::cpu {

namespace {

using ir::OpKind;
using ir::Scalar;
constexpr uint32_t kGroup = ir::kWgmmaUnits;
// What the accumulators of a product in flight hold: a quiet NaN with a payload of its own, so that a
// read gives NaN and a write is seen at the next product on them or at their wait.
constexpr uint32_t kInFlight = 0x7fdead00;

std::string group_text(uint32_t g) {
  return "warp group " + std::to_string(g) + " (units " + std::to_string(g * kGroup) + " to " +
         std::to_string(g * kGroup + kGroup - 1) + ")";
}

// The active units of warp group g: all of them (true), none (false), or an error.
bool group_active(const Exec& e, const Instr& in, uint32_t g) {
  uint32_t n = 0, first = 0;
  for (uint32_t u = g * kGroup; u < (g + 1) * kGroup; ++u) {
    if (e.cur[u] && n++ == 0) first = u;
  }
  if (n == 0) return false;
  if (n != kGroup) {
    fail(e, in, first, "wgmma.divergent",
         "only " + std::to_string(n) + " of the 128 units of " + group_text(g) +
             " are active; a warp group's units run this op together (no if or loop may split them)");
  }
  return true;
}

// The value of a factor's element: f32 read as tf32 (the 13 low bits of its mantissa dropped).
float factor_value(Scalar s, const unsigned char* p) {
  switch (s) {
    case Scalar::BF16: {
      uint16_t b;
      std::memcpy(&b, p, 2);
      return detail::bf16_bits_to_float(b);
    }
    case Scalar::F16: {
      uint16_t b;
      std::memcpy(&b, p, 2);
      return detail::half_bits_to_float(b);
    }
    case Scalar::F32: {
      uint32_t b;
      std::memcpy(&b, p, 4);
      return std::bit_cast<float>(b & ~uint32_t(0x1fff));
    }
    case Scalar::F8E4M3: return detail::float8_to_float(*p, detail::kE4M3);
    case Scalar::F8E5M2: return detail::float8_to_float(*p, detail::kE5M2);
    default: return std::numeric_limits<float>::quiet_NaN();  // the type rules allow no other
  }
}

// Where element (row, kk) of a factor whose first row starts at element `first` lies in shared
// memory: the array's rows are one swizzle span each, and its layout's swizzle (the one function
// bulk copies and the descriptors use, ir::SharedLayout) places the bytes.
uint64_t factor_byte(const Wgmma& x, const Wgmma::Factor& f, uint64_t first, uint32_t row, uint32_t kk) {
  const ir::SharedLayout l{f.span / x.element_bytes, ir::Swizzle(f.span), f.span * 8, false};
  return f.at + l.byte_offset(0, first + uint64_t(row) * l.pitch + kk, int(x.element_bytes));
}

// Unit u's offset of a factor, checked: the same in every unit of the group, on a group of 8 rows
// (the descriptor's base), k within one row, in steps of 32 bytes, every row in the array.
uint64_t factor_first(const Exec& e, const Instr& in, const Wgmma& x, const Wgmma::Factor& f, uint32_t g, uint32_t rows,
                      const char* name) {
  const uint32_t u0 = g * kGroup;
  const uint64_t first = read_index(e, f.offset, f.offset_type, u0);
  // An offset as the kernel gave it: a signed one read as a huge unsigned is shown negative.
  auto shown = [&](uint64_t v) {
    return ir::is_signed_int(f.offset_type) ? std::to_string(int64_t(v)) : std::to_string(v);
  };
  for (uint32_t u = u0 + 1; u < u0 + kGroup; ++u) {
    const uint64_t other = read_index(e, f.offset, f.offset_type, u);
    if (other != first) {
      fail(e, in, u, "wgmma.divergent",
           std::string(name) + "_offset is " + shown(other) + " here and " + shown(first) + " in " + unit_text(e, u0) +
               "; the units of " + group_text(g) + " give one product, with one offset");
    }
  }
  const uint64_t pitch = f.span / x.element_bytes;
  // In range first: a negative signed offset reads as a huge one, which the arithmetic below would
  // wrap.
  if (first >= f.length || uint64_t(rows) * pitch > f.length - (first - first % pitch)) {
    fail(e, in, u0, "bounds.out_of_range",
         "the " + std::to_string(rows) + " rows of " + name + " from element " + shown(first) +
             " reach past the end of the shared array of op #" + std::to_string(f.alloc_op) + " (length " +
             std::to_string(f.length) + ")");
  }
  const uint64_t byte = first * x.element_bytes;
  const uint64_t in_row = byte % f.span;
  if ((byte / f.span) % 8 != 0 || in_row % ir::kWgmmaStepBytes != 0 ||
      in_row + uint64_t(x.k) * x.element_bytes > f.span) {
    fail(e, in, u0, "wgmma.misaligned",
         std::string(name) + "_offset " + shown(first) + " puts the factor at row " + std::to_string(byte / f.span) +
             ", byte " + std::to_string(in_row) + " of rows of " + std::to_string(f.span) +
             " bytes: a factor starts on a row that is a multiple of 8, at a multiple of 32 "
             "bytes along it, with its k = " +
             std::to_string(x.k) + " elements within the row");
  }
  return first;
}

// The factor's rows x k elements, as floats (row-major) and as the bytes they were read from.
void gather(const Exec& e, const Wgmma& x, const Wgmma::Factor& f, uint64_t first, uint32_t rows, float* values,
            std::vector<unsigned char>& bytes) {
  for (uint32_t r = 0; r < rows; ++r) {
    for (uint32_t kk = 0; kk < x.k; ++kk) {
      const unsigned char* p = e.shared + factor_byte(x, f, first, r, kk);
      if (values) values[size_t(r) * x.k + kk] = factor_value(x.factor, p);
      bytes.insert(bytes.end(), p, p + x.element_bytes);
    }
  }
}

// The register-A form: a's 64 x k elements from the local arrays of warp group g's units (slot j
// of unit t is element ir::wgmma_a_fragment_element(t, j)), as floats (row-major) and as the
// bytes they were read from, in unit and slot order.
void gather_registers(const Exec& e, const Wgmma& x, uint32_t g, float* values, std::vector<unsigned char>& bytes) {
  for (uint32_t t = 0; t < kGroup; ++t) {
    const unsigned char* unit = e.regs + x.a.at + size_t(g * kGroup + t) * x.a.length * x.element_bytes;
    for (uint32_t j = 0; j < x.a.length; ++j) {
      const unsigned char* p = unit + size_t(j) * x.element_bytes;
      if (values) {
        const ir::MmaElement at = ir::wgmma_a_fragment_element(t, j);
        values[size_t(at.row) * x.k + at.col] = factor_value(x.factor, p);
      }
      bytes.insert(bytes.end(), p, p + x.element_bytes);
    }
  }
}

float* acc_of(const Exec& e, uint32_t slot, uint32_t length, uint32_t u) {
  return reinterpret_cast<float*>(e.regs + slot + size_t(u) * length * sizeof(float));
}

// The newest product in flight on warp group g's accumulator array `slot`, or null.
InFlightProduct* in_flight_on(WarpGroupProducts& q, uint32_t g, uint32_t slot) {
  for (auto it = q.pending.rbegin(); it != q.pending.rend(); ++it) {
    if (it->warp_group == g && it->acc_slot == slot) return &*it;
  }
  return nullptr;
}

// Whether warp group g's accumulators in `slot` still hold kInFlight everywhere.
bool untouched(const Exec& e, uint32_t slot, uint32_t length, uint32_t g) {
  for (uint32_t t = 0; t < kGroup; ++t) {
    const float* acc = acc_of(e, slot, length, g * kGroup + t);
    for (uint32_t i = 0; i < length; ++i) {
      if (std::bit_cast<uint32_t>(acc[i]) != kInFlight) return false;
    }
  }
  return true;
}

[[noreturn]] void fail_written_in_flight(const Exec& e, const Instr& in, const InFlightProduct& p) {
  fail(e, in, p.warp_group * kGroup, "wgmma.race",
       "the accumulators of " + group_text(p.warp_group) + "'s product (op #" + std::to_string(p.instr->op_number) +
           ") were written while it was in flight: they belong to the tensor cores until the wait that completes it");
}

// Warp group g's bytes of local array `slot` (bytes a unit).
std::vector<unsigned char> group_bytes(const Exec& e, uint32_t slot, uint32_t bytes, uint32_t g) {
  const unsigned char* from = e.regs + slot + size_t(g) * kGroup * bytes;
  return std::vector<unsigned char>(from, from + size_t(kGroup) * bytes);
}

uint32_t wgmma_instr(Exec& e, const Instr& in, uint32_t pc) {
  const Wgmma& x = in.as<Wgmma>();
  WarpGroupProducts& q = *e.products;
  std::vector<float> a(size_t(ir::kWgmmaRows) * x.k), b(size_t(x.n) * x.k);
  for (uint32_t g = 0; g < e.units / kGroup; ++g) {
    if (!group_active(e, in, g)) continue;
    const uint32_t u0 = g * kGroup;
    const uint64_t a_first = x.a_in_registers ? 0 : factor_first(e, in, x, x.a, g, ir::kWgmmaRows, "a");
    const uint64_t b_first = factor_first(e, in, x, x.b, g, x.n, "b");
    const InFlightProduct* before = in_flight_on(q, g, x.acc_slot);
    // A fence named the array since the group's last wait, and nothing wrote it after the fence.
    auto check_fenced = [&](uint32_t slot, uint32_t bytes, uint32_t alloc_op, const std::string& what) {
      for (const FencedArray& f : q.fenced[g]) {
        if (f.slot != slot) continue;
        if (f.bytes != group_bytes(e, slot, bytes, g)) {
          fail(e, in, u0, "wgmma.unfenced",
               group_text(g) + " " + what + " the local array of op #" + std::to_string(alloc_op) +
                   ", written after the wgmma.fence that named it: writes come before a product only through a "
                   "fence after them");
        }
        return;
      }
      fail(e, in, u0, "wgmma.unfenced",
           group_text(g) + " " + what + " the local array of op #" + std::to_string(alloc_op) +
               " with no wgmma.fence naming it since the group's last wgmma.wait_group (or since the kernel began): "
               "the units' writes to it come before a product only through a fence");
    };
    if (before && !untouched(e, x.acc_slot, x.acc_length, g)) fail_written_in_flight(e, in, *before);
    if (!before) check_fenced(x.acc_slot, x.acc_length * 4, x.acc_alloc_op, "starts a product on");
    if (x.a_in_registers) check_fenced(x.a.at, x.a.length * x.element_bytes, x.a.alloc_op, "multiplies (as a)");
    InFlightProduct p;
    p.instr = &in;
    p.warp_group = g;
    p.acc_slot = x.acc_slot;
    p.acc_length = x.acc_length;
    p.a_first = a_first;
    p.b_first = b_first;
    if (x.a_in_registers) gather_registers(e, x, g, a.data(), p.read);
    else gather(e, x, x.a, a_first, ir::kWgmmaRows, a.data(), p.read);
    gather(e, x, x.b, b_first, x.n, b.data(), p.read);
    p.result.resize(size_t(kGroup) * x.acc_length);
    for (uint32_t t = 0; t < kGroup; ++t) {
      const float* acc = acc_of(e, x.acc_slot, x.acc_length, u0 + t);
      for (uint32_t i = 0; i < x.acc_length; ++i) {
        const ir::MmaElement at = ir::wgmma_accumulator_element(t, i);
        float c = before ? before->result[size_t(t) * x.acc_length + i] : acc[i];
        const float* ar = &a[size_t(at.row) * x.k];
        const float* br = &b[size_t(at.col) * x.k];
        for (uint32_t kk = 0; kk < x.k; ++kk) c += ar[kk] * br[kk];
        p.result[size_t(t) * x.acc_length + i] = c;
      }
    }
    for (uint32_t t = 0; t < kGroup; ++t) {
      float* acc = acc_of(e, x.acc_slot, x.acc_length, u0 + t);
      for (uint32_t i = 0; i < x.acc_length; ++i) acc[i] = std::bit_cast<float>(kInFlight);
    }
    q.pending.push_back(std::move(p));
  }
  return pc + 1;
}

uint32_t fence_instr(Exec& e, const Instr& in, uint32_t pc) {
  const Wgmma& x = in.as<Wgmma>();
  for (uint32_t g = 0; g < e.units / kGroup; ++g) {
    if (!group_active(e, in, g)) continue;
    std::vector<FencedArray>& fenced = e.products->fenced[g];
    for (size_t i = 0; i < x.waited.size(); ++i) {
      auto it = std::find_if(fenced.begin(), fenced.end(), [&](const FencedArray& f) { return f.slot == x.waited[i]; });
      if (it == fenced.end()) it = fenced.insert(fenced.end(), FencedArray{x.waited[i], {}});
      it->bytes = group_bytes(e, x.waited[i], x.waited_bytes[i], g);
    }
  }
  return pc + 1;
}

uint32_t commit_instr(Exec& e, const Instr& in, uint32_t pc) {
  WarpGroupProducts& q = *e.products;
  for (uint32_t g = 0; g < e.units / kGroup; ++g) {
    if (!group_active(e, in, g)) continue;
    ++q.commits[g];
    for (InFlightProduct& p : q.pending) {
      if (p.warp_group == g && p.group == 0) p.group = q.commits[g];
    }
  }
  return pc + 1;
}

uint32_t wait_instr(Exec& e, const Instr& in, uint32_t pc) {
  WarpGroupProducts& q = *e.products;
  const Wgmma& w = in.as<Wgmma>();
  const uint32_t pending = w.pending;
  std::vector<uint8_t> landing(q.pending.size(), 0);
  bool any = false;
  for (uint32_t g = 0; g < e.units / kGroup; ++g) {
    if (!group_active(e, in, g)) continue;
    q.fenced[g].clear();
    for (size_t i = 0; i < q.pending.size(); ++i) {
      const InFlightProduct& p = q.pending[i];
      if (p.warp_group == g && p.group != 0 && uint64_t(p.group) + pending <= q.commits[g]) landing[i] = any = true;
    }
  }
  if (!any) return pc + 1;
  std::vector<unsigned char> now;
  for (size_t i = 0; i < q.pending.size(); ++i) {
    if (!landing[i]) continue;
    const InFlightProduct& p = q.pending[i];
    const Wgmma& x = p.instr->as<Wgmma>();
    now.clear();
    if (x.a_in_registers) gather_registers(e, x, p.warp_group, nullptr, now);
    else gather(e, x, x.a, p.a_first, ir::kWgmmaRows, nullptr, now);
    gather(e, x, x.b, p.b_first, x.n, nullptr, now);
    if (now != p.read) {
      fail(e, in, p.warp_group * kGroup, "wgmma.race",
           "the factors that " + group_text(p.warp_group) + "'s product (op #" + std::to_string(p.instr->op_number) +
               ") reads were written before this wait completed it: the tensor cores may read a factor until the "
               "wait, so a slot is refilled only after it");
    }
    if (std::find(w.waited.begin(), w.waited.end(), p.acc_slot) == w.waited.end()) {
      fail(e, in, p.warp_group * kGroup, "wgmma.unnamed",
           "this wait completes " + group_text(p.warp_group) + "'s product (op #" + std::to_string(p.instr->op_number) +
               ") on the local array of op #" + std::to_string(x.acc_alloc_op) +
               ", which it does not name: a wait names every accumulator array it makes readable (on a GPU, "
               "the compiler may otherwise read them before the wait)");
    }
    // The newest product on these accumulators leaves what they hold; an older one's result is
    // already in the newer's.
    bool newer = false;
    for (size_t j = i + 1; j < q.pending.size(); ++j) {
      newer |= q.pending[j].warp_group == p.warp_group && q.pending[j].acc_slot == p.acc_slot;
    }
    if (newer) continue;
    if (!untouched(e, p.acc_slot, p.acc_length, p.warp_group)) fail_written_in_flight(e, in, p);
    for (uint32_t t = 0; t < kGroup; ++t) {
      std::memcpy(acc_of(e, p.acc_slot, p.acc_length, p.warp_group * kGroup + t), &p.result[size_t(t) * p.acc_length],
                  p.acc_length * sizeof(float));
    }
  }
  size_t kept = 0;
  for (size_t i = 0; i < q.pending.size(); ++i) {
    if (!landing[i]) q.pending[kept++] = std::move(q.pending[i]);
  }
  q.pending.resize(kept);
  return pc + 1;
}

template <class Slot>
Wgmma::Factor plan_factor(Planner& p, const ir::Op& op, Slot array, Slot offset) {
  const ArrayRef& r = p.array(op.operand(array));
  const ir::TileLayout* l = p.kernel().layout_of(p.type_of(op.operand(array)));
  Wgmma::Factor f;
  f.offset = p.ref(op.operand(offset));
  f.offset_type = p.type_of(op.operand(offset)).scalar;
  f.at = r.where;
  f.length = r.length;
  f.alloc_op = r.op;
  f.span = uint32_t(l->shared.swizzle);  // the verifier holds it to a swizzled layout
  return f;
}

}  // namespace

bool plan_wgmma(Planner& p, const ir::Op& op) {
  Wgmma x;
  if (op.kind == OpKind::WgmmaMmaAsync || op.kind == OpKind::WgmmaMmaAsyncFragA || op.kind == OpKind::WgmmaFence ||
      op.kind == OpKind::WgmmaCommitGroup || op.kind == OpKind::WgmmaWaitGroup) {
    p.plan().warp_groups = p.plan().units / kGroup;  // the verifier holds units to whole warp groups
  }
  switch (op.kind) {
    case OpKind::WgmmaMmaAsync:
    case OpKind::WgmmaMmaAsyncFragA: {
      using M = ir::ops::MmaSync;
      using F = ir::ops::MmaSyncFragA;
      x.a_in_registers = op.kind == OpKind::WgmmaMmaAsyncFragA;
      if (x.a_in_registers) {
        const ArrayRef& a = p.array(op.operand(F::a));
        x.a.at = a.where;
        x.a.length = a.length;
        x.a.alloc_op = a.op;
        x.b = plan_factor(p, op, F::b, F::b_offset);
      } else {
        x.a = plan_factor(p, op, M::a, M::a_offset);
        x.b = plan_factor(p, op, M::b, M::b_offset);
      }
      x.factor = p.type_of(x.a_in_registers ? op.operand(F::b) : op.operand(M::b)).scalar;
      x.element_bytes = uint32_t(ir::scalar_bytes(x.factor));
      const ArrayRef& acc = p.array(x.a_in_registers ? op.operand(F::acc) : op.operand(M::acc));
      x.acc_slot = acc.where;
      x.acc_length = acc.length;
      x.acc_alloc_op = acc.op;
      std::span<const int64_t> shape = op.get<ir::AttrKey::Shape>();
      x.n = uint32_t(shape[1]);
      x.k = uint32_t(shape[2]);
      p.emit(op, &wgmma_instr, x);
      return true;
    }
    case OpKind::WgmmaFence:
    case OpKind::WgmmaWaitGroup:
      for (ir::Value v : op.operands_from(ir::ops::WgmmaAccumulators::accumulators)) {
        x.waited.push_back(p.array(v).where);
        x.waited_bytes.push_back(uint32_t(p.array(v).length * p.type_of(v).element_bytes()));
      }
      if (op.kind == OpKind::WgmmaFence) {
        p.emit(op, &fence_instr, x);
      } else {
        x.pending = uint32_t(op.get<ir::AttrKey::Pending>());
        p.emit(op, &wait_instr, x);
      }
      return true;
    case OpKind::WgmmaCommitGroup: p.emit(op, &commit_instr, x); return true;
    default: return false;
  }
}

}  // namespace kiln::cpu
