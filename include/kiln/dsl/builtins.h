// Launch builtins: where a unit is and how big the launch is. Without an axis a builtin is
// linear (x fastest); the _x/_y/_z forms read one axis.
#pragma once

#include "kiln/dsl/expr.h"

namespace kiln {

namespace detail {
inline Expr<uint32_t> builtin(ir::OpKind kind, int axis = -1) {
  return Expr<uint32_t>(dsl::Tracer::current().builtin(kind, axis));
}
}  // namespace detail

#define KILN_BUILTIN(fn, kind)                                                    \
  inline Expr<uint32_t> fn() { return detail::builtin(ir::OpKind::kind); }        \
  inline Expr<uint32_t> fn##_x() { return detail::builtin(ir::OpKind::kind, 0); } \
  inline Expr<uint32_t> fn##_y() { return detail::builtin(ir::OpKind::kind, 1); } \
  inline Expr<uint32_t> fn##_z() { return detail::builtin(ir::OpKind::kind, 2); }
// The unit's index in the whole launch: cube_pos() * cube_dim() + unit_pos().
KILN_BUILTIN(absolute_pos, AbsolutePos)
// The unit's index in its cube.
KILN_BUILTIN(unit_pos, UnitPos)
// The cube's index in the launch.
KILN_BUILTIN(cube_pos, CubePos)
// Units per cube.
KILN_BUILTIN(cube_dim, CubeDim)
// Cubes in the launch.
KILN_BUILTIN(cube_count, CubeCount)
#undef KILN_BUILTIN

// The cube size the kernel is being compiled for, as C++ values: it is part of the KernelId, so
// a kernel may size shared arrays or unroll C++ loops by it.
inline ir::Dim3 static_cube_dim() { return dsl::Tracer::current().kernel().facts.cube_dim; }

// Units per plane (32 on every backend kiln has).
inline Expr<uint32_t> plane_dim() { return detail::builtin(ir::OpKind::PlaneDim); }
// The unit's index in its plane.
inline Expr<uint32_t> unit_pos_plane() { return detail::builtin(ir::OpKind::UnitPosPlane); }

}  // namespace kiln
