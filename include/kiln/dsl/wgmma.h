// Hopper's warp-group product in the kernel language. A warp group is 128 units from a multiple of
// 128; together they add a x bT to their accumulators, a the 64 x k rows of a swizzled shared array
// and b the n x k rows of another (both read along k), each unit holding n / 2 f32 accumulators in a
// LocalArray<float> (which of the 64 x n each holds: ir::wgmma_accumulator_element). The product
// is asynchronous: a fence names the accumulators whose writes must come first, a commit closes the
// products issued since the last into a group, and a wait returns once at most `pending` groups
// are in flight, naming the accumulators it makes readable. CUDA runs it on sm_90a only; the CPU
// runs it exactly everywhere (docs/ir.md, wgmma.*).
//
//   SharedArray<bf16> a(64 * 64, Swizzle::Span128), b(64 * 64, Swizzle::Span128);
//   a[swizzled_index(a, row, col)] = ...;  // every unit stores its share
//   fence_proxy_async();                   // generic-proxy writes, then the tensor cores' reads
//   sync_cube();
//   LocalArray<float> acc(32);             // n = 64
//   ... zero acc ...
//   wgmma_fence(acc);
//   wgmma_mma_async(acc, a, 0u, b, 0u, 64);
//   wgmma_commit_group();
//   wgmma_wait_group(0, acc);
#pragma once

#include "kiln/dsl/barrier.h"
#include "kiln/dsl/memory.h"
#include "kiln/ir/layout.h"

namespace kiln {

using ir::Swizzle;

// The index of element (row, col) of a swizzled shared array seen as rows of one span: where a
// kernel stores it for a product or a bulk copy to read it (ir::SharedLayout::byte_offset's XOR).
template <class T, detail::Index R, detail::Index C>
Expr<uint32_t> swizzled_index(const SharedArray<T>& a, const R& row, const C& col) {
  const ir::TileLayout* l = dsl::Tracer::current().kernel().layout_of(a.ref().type);
  if (!l || l->kind != ir::TileLayout::Kind::Shared || l->shared.swizzle == Swizzle::None) {
    dsl::Tracer::current().fail("trace.type", ir::OpKind::SharedAlloc,
                                "swizzled_index takes a SharedArray made with a swizzle (32, 64 or 128 bytes)");
  }
  const uint32_t e = uint32_t(sizeof(T)), mask = (uint32_t(l->shared.swizzle) / 16 - 1) << 4;
  Expr<uint32_t> bytes = (Expr<uint32_t>(row) * l->shared.pitch + Expr<uint32_t>(col)) * e;
  return (bytes ^ ((bytes >> 3u) & mask)) / e;
}

// acc += a x bT for each warp group: a the 64 rows of k elements from a_offset, b the n rows from
// b_offset (n = 2 acc's length). k: 32 bytes a step (16 of bf16 or f16, 8 of f32 read as tf32, 32
// of f8e4m3 or f8e5m2), all of them within one row of the arrays. The offsets start a row that is
// a multiple of 8, at a multiple of 32 bytes along it (a later step of k).
template <class T, detail::Index I, detail::Index J>
void wgmma_mma_async(const LocalArray<float>& acc, const SharedArray<T>& a, const I& a_offset, const SharedArray<T>& b,
                     const J& b_offset, int k) {
  const dsl::ValueRef operands[] = {a.ref(), detail::index_ref(a_offset), b.ref(), detail::index_ref(b_offset),
                                    acc.ref()};
  const int64_t n = int64_t(acc.ref().type.length) * 2;
  dsl::Tracer::current().record(ir::OpKind::WgmmaMmaAsync, operands, ir::Type::none(),
                                {ir::Attr{ir::AttrKey::Shape, ir::AttrValue::of_ints({64, n, k})}});
}

// The same with a in registers (bf16 or f16): each unit's k / 2 elements of a, slot 8 s + i of unit
// t of its warp group holding a's element (row, 16 s + col) where accumulator slot i of an n = 16
// product sits (ir::wgmma_a_fragment_element). A fence must name `a` too.
template <class T, detail::Index J>
void wgmma_mma_async(const LocalArray<float>& acc, const LocalArray<T>& a, const SharedArray<T>& b, const J& b_offset,
                     int k) {
  const dsl::ValueRef operands[] = {a.ref(), b.ref(), detail::index_ref(b_offset), acc.ref()};
  const int64_t n = int64_t(acc.ref().type.length) * 2;
  dsl::Tracer::current().record(ir::OpKind::WgmmaMmaAsyncFragA, operands, ir::Type::none(),
                                {ir::Attr{ir::AttrKey::Shape, ir::AttrValue::of_ints({64, n, k})}});
}

// The units' writes to these accumulators (and register factors) come before the products issued
// after it.
template <class... Acc>
void wgmma_fence(const Acc&... acc) {
  const dsl::ValueRef operands[] = {acc.ref()..., dsl::ValueRef{}};
  dsl::Tracer::current().record(ir::OpKind::WgmmaFence, std::span(operands, sizeof...(Acc)), ir::Type::none());
}
// The products issued since the last commit form a group.
inline void wgmma_commit_group() { dsl::Tracer::current().record(ir::OpKind::WgmmaCommitGroup, {}, ir::Type::none()); }
// Returns once at most `pending` (0 to 7) groups are in flight; names every accumulator array the
// products it completes write.
template <class... Acc>
void wgmma_wait_group(int pending, const Acc&... acc) {
  const dsl::ValueRef operands[] = {acc.ref()..., dsl::ValueRef{}};
  dsl::Tracer::current().record(ir::OpKind::WgmmaWaitGroup, std::span(operands, sizeof...(Acc)), ir::Type::none(),
                                {ir::Attr{ir::AttrKey::Pending, ir::AttrValue::of_int(pending)}});
}

}  // namespace kiln
