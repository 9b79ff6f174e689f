// copy.async, copy.async.commit and copy.async.wait, with the meaning docs/ir.md gives them and no
// more: a copy reads its global element when it is issued (its bounds checked then) and lands in
// shared memory only when a wait of its unit lets it, so a kernel that reads the destination
// before its wait sees what was there before (0xff poison, or an older value), as a GPU may, and
// its tests fail here rather than pass by luck. A masked-off copy lands zeros. A unit's copies
// since its last commit form a group; wait {pending = n} lands every committed group of the unit
// but its newest n, in issue order. Copies never committed, or left in flight at the end, never
// land.
#include <algorithm>
#include <cstring>

#include "backends/cpu/exec.h"
#include "backends/cpu/planner.h"

namespace kiln::cpu {

namespace {

using ir::OpKind;

uint32_t copy_async_instr(Exec& e, const Instr& in, uint32_t pc) {
  const AsyncCopy& x = in.as<AsyncCopy>();
  const uint8_t* mask = x.masked ? e.slot<uint8_t>(x.mask.slot) : nullptr;
  const backend::ArgBinding& arg = e.args[x.param];
  const uint32_t scalars = x.bytes / x.shared_element_bytes;
  for_active(e, [&](uint32_t u) {
    PendingCopy c;
    c.unit = u;
    c.bytes = x.bytes;
    const uint64_t at = read_index(e, x.shared_index, x.shared_index_type, u);
    if (at > x.shared_length || x.shared_length - at < scalars) {
      fail(e, in, u, "bounds.out_of_range",
           "the " + std::to_string(scalars) + " elements from index " + std::to_string(at) +
               " of the shared array of op #" + std::to_string(x.shared_alloc_op) + " (length " +
               std::to_string(x.shared_length) + ") that a copy lands in reach past its end");
    }
    c.shared_offset = x.shared_at + uint32_t(at) * x.shared_element_bytes;
    if (!mask || mask[x.mask.uniform ? 0 : u]) {
      const uint64_t index = read_index(e, x.global_index, x.global_index_type, u);
      if (index >= arg.len) {
        const ir::Param& p = e.plan->params[x.param];
        fail(e, in, u, "bounds.out_of_range",
             "index " + std::to_string(index) + " is out of range of argument " + std::to_string(x.param) + " '" +
                 p.name + "' (length " + std::to_string(arg.len) + ")");
      }
      std::memcpy(c.data, reinterpret_cast<const unsigned char*>(arg.address) + index * x.bytes, x.bytes);
    }
    e.copies->pending.push_back(c);
  });
  return pc + 1;
}

uint32_t commit_instr(Exec& e, const Instr&, uint32_t pc) {
  AsyncCopies& q = *e.copies;
  for_active(e, [&](uint32_t u) { ++q.commits[u]; });
  for (PendingCopy& c : q.pending) {
    if (c.group == 0 && e.cur[c.unit]) c.group = q.commits[c.unit];
  }
  return pc + 1;
}

uint32_t wait_instr(Exec& e, const Instr& in, uint32_t pc) {
  AsyncCopies& q = *e.copies;
  const uint32_t pending = in.as<AsyncCopy>().pending;
  auto lands = [&](const PendingCopy& c) {
    return e.cur[c.unit] && c.group != 0 && uint64_t(c.group) + pending <= q.commits[c.unit];
  };
  for (const PendingCopy& c : q.pending) {
    if (lands(c)) std::memcpy(e.shared + c.shared_offset, c.data, c.bytes);
  }
  q.pending.erase(std::remove_if(q.pending.begin(), q.pending.end(), lands), q.pending.end());
  return pc + 1;
}

}  // namespace

bool plan_async_copy(Planner& p, const ir::Op& op) {
  switch (op.kind) {
    case OpKind::CopyAsync: {
      using C = ir::ops::CopyAsync;
      const ArrayRef& dst = p.array(op.operand(C::shared));
      const ArrayRef& src = p.array(op.operand(C::global));
      AsyncCopy x;
      x.shared_index = p.operand(op, C::shared_index);
      x.global_index = p.operand(op, C::global_index);
      x.shared_index_type = p.operand_type(op, C::shared_index).scalar;
      x.global_index_type = p.operand_type(op, C::global_index).scalar;
      x.shared_at = dst.where;
      x.shared_length = dst.length;
      x.shared_alloc_op = dst.op;
      x.shared_element_bytes = uint32_t(p.operand_type(op, C::shared).element_bytes());
      x.param = src.where;
      x.bytes = uint32_t(p.operand_type(op, C::global).element_bytes());
      x.masked = op.mask() != ir::kNoValue;
      if (x.masked) x.mask = p.ref(op.mask());
      p.emit(op, &copy_async_instr, x);
      return true;
    }
    case OpKind::CopyAsyncCommit: p.emit(op, &commit_instr); return true;
    case OpKind::CopyAsyncWait: {
      AsyncCopy x;
      x.pending = uint32_t(op.get<ir::AttrKey::Pending>());
      p.emit(op, &wait_instr, x);
      return true;
    }
    default: return false;
  }
}

}  // namespace kiln::cpu
