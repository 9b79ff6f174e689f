// Hopper's mbarriers in the kernel language: a SharedArray<Mbarrier> holds them, and only these
// functions reach one (indexing such an array does not compile). The meaning of each op is
// docs/ir.md's (mbarrier.*): arrivals and bytes complete a phase, and a wait names the parity of
// the phase it waits for. CUDA runs them on sm_90a only; the CPU runs them exactly everywhere.
//
//   SharedArray<Mbarrier> full(1);
//   If(unit_pos() == 0u, [&] { mbarrier_init(full, 0u, 1u); });
//   sync_cube();
//   ...
//   mbarrier_wait(full, 0u, phase);  // returns once the phase of that parity has completed
#pragma once

#include "kiln/barrier.h"
#include "kiln/dsl/control.h"
#include "kiln/dsl/memory.h"

namespace kiln {

namespace detail {
template <class... Counts>
void mbarrier_op(ir::OpKind kind, const SharedArray<Mbarrier>& bars, const dsl::ValueRef& index,
                 const Counts&... counts) {
  const dsl::ValueRef operands[] = {bars.ref(), index, counts.ref()...};
  dsl::Tracer::current().record(kind, operands, ir::Type::none());
}
}  // namespace detail

// Sets barrier i up for phases of `count` arrivals (1 to 2^20 - 1), its first phase of parity 0.
// One unit does it, before a sync_cube that shows it to the others.
template <detail::Index I>
void mbarrier_init(const SharedArray<Mbarrier>& bars, const I& i, const detail::Operand<uint32_t>& count) {
  detail::mbarrier_op(ir::OpKind::MbarrierInit, bars, detail::index_ref(i), count);
}
// One arrival at barrier i.
template <detail::Index I>
void mbarrier_arrive(const SharedArray<Mbarrier>& bars, const I& i) {
  detail::mbarrier_op(ir::OpKind::MbarrierArrive, bars, detail::index_ref(i));
}
// Adds `bytes` the current phase also waits for (bulk copies complete them), then arrives: what the
// unit that issues a phase's copies does.
template <detail::Index I>
void mbarrier_arrive_expect_tx(const SharedArray<Mbarrier>& bars, const I& i, const detail::Operand<uint32_t>& bytes) {
  detail::mbarrier_op(ir::OpKind::MbarrierArriveExpectTx, bars, detail::index_ref(i), bytes);
}
// Adds `bytes` the current phase also waits for, without an arrival.
template <detail::Index I>
void mbarrier_expect_tx(const SharedArray<Mbarrier>& bars, const I& i, const detail::Operand<uint32_t>& bytes) {
  detail::mbarrier_op(ir::OpKind::MbarrierExpectTx, bars, detail::index_ref(i), bytes);
}
// Counts `bytes` as landed, as a bulk copy does when its data is in shared memory.
template <detail::Index I>
void mbarrier_complete_tx(const SharedArray<Mbarrier>& bars, const I& i, const detail::Operand<uint32_t>& bytes) {
  detail::mbarrier_op(ir::OpKind::MbarrierCompleteTx, bars, detail::index_ref(i), bytes);
}
// Whether the phase of barrier i whose parity is bit 0 of `parity` has completed. On a GPU it may
// say no for a while before it says yes; loop on it (mbarrier_wait does).
template <detail::Index I>
Bool mbarrier_try_wait(const SharedArray<Mbarrier>& bars, const I& i, const detail::Operand<uint32_t>& parity) {
  const dsl::ValueRef operands[] = {bars.ref(), detail::index_ref(i), parity.ref()};
  return Bool(dsl::Tracer::current().record(ir::OpKind::MbarrierTryWait, operands, ir::Type::none()));
}
// Returns once the phase of barrier i of the given parity has completed.
template <detail::Index I>
void mbarrier_wait(const SharedArray<Mbarrier>& bars, const I& i, const detail::Operand<uint32_t>& parity) {
  While([&] { return !mbarrier_try_wait(bars, i, parity); }, [] {});
}
// This unit's shared-memory writes before it are seen by the asynchronous proxy (bulk copies out
// of shared memory, wgmma's operands) after it.
inline void fence_proxy_async() { dsl::Tracer::current().sync(ir::OpKind::FenceProxyAsync); }

}  // namespace kiln
