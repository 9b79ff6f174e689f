// Plane operations: collective over the active units of a plane of plane_dim() units.
#pragma once

#include "kiln/dsl/expr.h"

namespace kiln {

namespace detail {
template <Proxy A>
auto plane1(ir::OpKind kind, const A& a) {
  dsl::ValueRef r[] = {read_ref(a)};
  return result_proxy_t<proxy_element_t<A>, proxy_is_vector<A>>(dsl::Tracer::current().plane(kind, r));
}
template <Proxy A>
auto plane2(ir::OpKind kind, const A& a, const Operand<uint32_t>& lane) {
  dsl::ValueRef r[] = {read_ref(a), lane.ref()};
  return result_proxy_t<proxy_element_t<A>, proxy_is_vector<A>>(dsl::Tracer::current().plane(kind, r));
}
template <Proxy A>
Expr<bool> plane_bool(ir::OpKind kind, const A& a) {
  dsl::ValueRef r[] = {read_ref(a)};
  return Expr<bool>(dsl::Tracer::current().plane(kind, r));
}
}  // namespace detail

// Sum, product, max, min over the active units of the plane; every unit gets the result.
template <Proxy A>
auto plane_sum(const A& a) {
  return detail::plane1(ir::OpKind::PlaneSum, a);
}
template <Proxy A>
auto plane_prod(const A& a) {
  return detail::plane1(ir::OpKind::PlaneProd, a);
}
template <Proxy A>
auto plane_max(const A& a) {
  return detail::plane1(ir::OpKind::PlaneMax, a);
}
template <Proxy A>
auto plane_min(const A& a) {
  return detail::plane1(ir::OpKind::PlaneMin, a);
}
// Prefix sums over the active units in lane order.
template <Proxy A>
auto plane_inclusive_sum(const A& a) {
  return detail::plane1(ir::OpKind::PlaneInclusiveSum, a);
}
template <Proxy A>
auto plane_exclusive_sum(const A& a) {
  return detail::plane1(ir::OpKind::PlaneExclusiveSum, a);
}
// True when the predicate holds for all / any active unit.
template <Proxy A>
Expr<bool> plane_all(const A& a) {
  return detail::plane_bool(ir::OpKind::PlaneAll, a);
}
template <Proxy A>
Expr<bool> plane_any(const A& a) {
  return detail::plane_bool(ir::OpKind::PlaneAny, a);
}
// Bit i set when unit i of the plane is active and its predicate holds.
template <Proxy A>
Expr<uint32_t> plane_ballot(const A& a) {
  dsl::ValueRef r[] = {read_ref(a)};
  return Expr<uint32_t>(dsl::Tracer::current().plane(ir::OpKind::PlaneBallot, r));
}
// True on the first active unit of the plane only.
inline Expr<bool> plane_elect() { return Expr<bool>(dsl::Tracer::current().plane(ir::OpKind::PlaneElect, {})); }
// The value of unit `lane` (the same lane for all: broadcast; per unit: shuffle). A lane, mask or
// delta is a uint32_t proxy or a C++ number as detail::Number takes it.
template <Proxy A>
auto plane_broadcast(const A& a, const detail::Operand<uint32_t>& lane) {
  return detail::plane2(ir::OpKind::PlaneBroadcast, a, lane);
}
template <Proxy A>
auto plane_shuffle(const A& a, const detail::Operand<uint32_t>& lane) {
  return detail::plane2(ir::OpKind::PlaneShuffle, a, lane);
}
// The value of unit lane ^ mask, lane - delta, lane + delta (a unit keeps its own value when that
// unit is outside the plane).
template <Proxy A>
auto plane_shuffle_xor(const A& a, const detail::Operand<uint32_t>& mask) {
  return detail::plane2(ir::OpKind::PlaneShuffleXor, a, mask);
}
template <Proxy A>
auto plane_shuffle_up(const A& a, const detail::Operand<uint32_t>& delta) {
  return detail::plane2(ir::OpKind::PlaneShuffleUp, a, delta);
}
template <Proxy A>
auto plane_shuffle_down(const A& a, const detail::Operand<uint32_t>& delta) {
  return detail::plane2(ir::OpKind::PlaneShuffleDown, a, delta);
}

}  // namespace kiln
