// The op kinds, defined once. Each row of KILN_IR_OPS is an op's whole schema: its text name, its
// family, the kinds of its operands and result, the rule that types its result, its region labels
// and its effects. The enum, the text form, the verifier's structure checks, the tracer's typing
// and the passes' questions (pure? writes memory? where is the mask?) all read this table.
// Adding an op: one row here, its rule in src/ir/type_rules.cpp (if no existing rule fits), one
// site per backend, tests and docs/ir.md.
#pragma once

#include <cstdint>
#include <string_view>

#include "kiln/ir/attr.h"

namespace kiln::ir {

// Properties of an op kind. Passes ask these instead of listing kinds.
enum OpTrait : uint32_t {
  kNoTraits = 0,
  kPure = 1u << 0,         // no side effects; the result depends only on the operands
  kCommutative = 1u << 1,  // operands 0 and 1 may be swapped
  kReadsMemory = 1u << 2,
  kWritesMemory = 1u << 3,
  kAlloc = 1u << 4,       // creates storage: removable when unused, never merged with another
  kPlane = 1u << 5,       // reads other lanes of the plane: stays in its region, never hoisted
  kBarrier = 1u << 6,     // all units of the cube (or plane) meet here
  kControl = 1u << 7,     // structured control flow with regions
  kTerminator = 1u << 8,  // ends the flow of its region for the active units (break, continue, ...)
  kSideEffect = 1u << 9,  // observable effect outside memory (debug print)
  kBuiltin = 1u << 10,    // reads a launch builtin (positions, dims)
};

constexpr uint32_t operator|(OpTrait a, OpTrait b) { return uint32_t(a) | uint32_t(b); }
constexpr uint32_t operator|(uint32_t a, OpTrait b) { return a | uint32_t(b); }

// What an op is for. Backends dispatch on the family, so that a new op of an existing family
// needs only its own expression; the order of the rows means nothing.
#define KILN_IR_FAMILIES(X) \
  X(Constant, "constant")   \
  X(Arith, "arith")         \
  X(Bitwise, "bitwise")     \
  X(Compare, "compare")     \
  X(Select, "select")       \
  X(Cast, "cast")           \
  X(Math, "math")           \
  X(Vector, "vector")       \
  X(Builtin, "builtin")     \
  X(Array, "array")         \
  X(Memory, "memory")       \
  X(Atomic, "atomic")       \
  X(Sync, "sync")           \
  X(Plane, "plane")         \
  X(Var, "var")             \
  X(Control, "control")     \
  X(Debug, "debug")         \
  X(Tile, "tile")           \
  X(Matrix, "matrix")

enum class OpFamily : uint8_t {
#define KILN_X(e, text) e,
  KILN_IR_FAMILIES(KILN_X)
#undef KILN_X
};
std::string_view family_name(OpFamily f);

// Operand signatures: the operands an op takes, in order, each with a name and a kind. Several
// ops share one (every binary arithmetic op is Binary). Each signature becomes a struct in
// kiln::ir::ops whose enum names its operands' positions, so that code reads an operand by name:
// `op.operand(ops::Store::value)`, `q.operand(ops::Load::array)` (Op::operand, TypeQuery::operand).
//
// S(Name, "kinds", (names...)): one kind letter per name, in order:
//   v  a value (scalar or vector)        i  a scalar integer (index, bound)
//   b  a scalar bool                     u  a scalar u32 (a lane)
//   a  an array (buffer, tensor, shared or local)
//   x  a var                             m  the optional mask: a scalar bool, always last
//   c  a value control flow carries: a scalar, a vector or a register tile
//   t  a tile (of any memory space)
//   *  after the last letter: that kind again, any number of times (none included)
//   +  after the last letter: that kind again, any number of times (one at least)
// The last name of a signature ending in * or + names the first of the repeated operands
// (Op::operands_from gives them all).
// A `v` operand also takes a register tile: an elementwise op (arith, bitwise, compare, select,
// cast, math) whose operands are tiles of one shape applies its rule to their elements and gives a
// tile of that shape (type_rules.cpp). lower_tiles rewrites every tile op before a backend runs.
#define KILN_IR_SIGNATURES(S)                                               \
  S(Nullary, "", ())                                                        \
  S(Unary, "v", (x))                                                        \
  S(Binary, "vv", (lhs, rhs))                                               \
  S(Fma, "vvv", (a, b, c))                                                  \
  S(Select, "vvv", (condition, if_true, if_false))                          \
  S(VectorConstruct, "v+", (lanes))                                         \
  S(VectorInsert, "vv", (vector, value))                                    \
  S(Array, "a", (array))                                                    \
  S(Load, "aim", (array, index, mask))                                      \
  S(Store, "aivm", (array, index, value, mask))                             \
  S(CopyAsync, "aiaim", (shared, shared_index, global, global_index, mask)) \
  S(Atomic, "aivm", (array, index, value, mask))                            \
  S(AtomicCas, "aivvm", (array, index, expected, desired, mask))            \
  S(PlaneVote, "b", (predicate))                                            \
  S(PlaneLane, "vu", (value, lane))                                         \
  S(VarLoad, "x", (var))                                                    \
  S(VarStore, "xv", (var, value))                                           \
  S(If, "b", (condition))                                                   \
  S(For, "iiic*", (lower_bound, upper_bound, step, inits))                  \
  S(While, "c*", (inits))                                                   \
  S(Condition, "bc*", (condition, forwarded))                               \
  S(Yield, "c+", (values))                                                  \
  S(Jump, "c*", (values))                                                   \
  S(Print, "v*", (values))                                                  \
  S(Bounds, "ii", (lower_bound, upper_bound))                               \
  S(TileLoadCell, "t", (view))                                              \
  S(TileLoadAt, "ti*", (view, cell))                                        \
  S(TileStoreCell, "tt", (view, tile))                                      \
  S(TileStoreSub, "tti*", (view, tile, part))                               \
  S(TileLoad, "aii*", (array, offset, extent))                              \
  S(TileStore, "aiti*", (array, offset, tile, extent))                      \
  S(TileScatter, "atti*", (array, offsets, values, extent))                 \
  S(TileUnary, "t", (tile))                                                 \
  S(TileMma, "ttt", (a, b, c))                                              \
  S(TileSlot, "ai", (array, offset))                                        \
  S(TileCopyCell, "aitbi*", (array, offset, view, valid, cell))             \
  S(TileStage, "ait", (array, offset, tile))                                \
  S(MmaSync, "aiaia", (a, a_offset, b, b_offset, acc))                      \
  S(MmaSyncFragA, "aaia", (a, b, b_offset, acc))                            \
  S(Mbarrier, "ai", (array, index))                                         \
  S(MbarrierCount, "aiv", (array, index, count))                            \
  S(MbarrierWait, "aiv", (array, index, parity))                            \
  S(WgmmaAccumulators, "a*", (accumulators))

// X(Enum, "text", Family, Signature, "result", "attributes", rule, "region labels", traits)
//
// Signature: the operands, above.
// Result: "" none, "v" a value (or a register tile, above), "a" an array, "x" a var, "t" a tile,
// "c" one result per value the op carries
// (any number, from none; the verifier checks them against the op's regions, docs/ir.md).
// Attributes: the keys the op takes (attr.h), a `?` after those it may leave out; the type rules
// refuse any other key, a missing one, and a value of another type than its key's.
// Rule: the function in src/ir/type_rules.cpp that checks the operands' types and gives the
// result's (rule_<name>); the tracer and the verifier both call it.
// Region labels: one word per region, the text form prints each after the first (`} else {`).
#define KILN_IR_OPS(X)                                                                                                 \
  /* constants */                                                                                                      \
  X(Const, "const", Constant, Nullary, "v", "value", constant, "", kPure)                                              \
  /* arithmetic */                                                                                                     \
  X(Add, "add", Arith, Binary, "v", "", arith, "", kPure | kCommutative)                                               \
  X(Sub, "sub", Arith, Binary, "v", "", arith, "", kPure)                                                              \
  X(Mul, "mul", Arith, Binary, "v", "", arith, "", kPure | kCommutative)                                               \
  X(Div, "div", Arith, Binary, "v", "", arith, "", kPure)                                                              \
  X(Rem, "rem", Arith, Binary, "v", "", arith, "", kPure)                                                              \
  X(Neg, "neg", Arith, Unary, "v", "", arith, "", kPure)                                                               \
  X(Abs, "abs", Arith, Unary, "v", "", arith, "", kPure)                                                               \
  X(Min, "min", Arith, Binary, "v", "", arith, "", kPure | kCommutative)                                               \
  X(Max, "max", Arith, Binary, "v", "", arith, "", kPure | kCommutative)                                               \
  X(Fma, "fma", Arith, Fma, "v", "", fma, "", kPure)                                                                   \
  /* bitwise and shifts (and, or, xor, not are also the logical ops on bool) */                                        \
  X(And, "and", Bitwise, Binary, "v", "", bitwise, "", kPure | kCommutative)                                           \
  X(Or, "or", Bitwise, Binary, "v", "", bitwise, "", kPure | kCommutative)                                             \
  X(Xor, "xor", Bitwise, Binary, "v", "", bitwise, "", kPure | kCommutative)                                           \
  X(Not, "not", Bitwise, Unary, "v", "", bitwise, "", kPure)                                                           \
  X(Shl, "shl", Bitwise, Binary, "v", "", bitwise, "", kPure)                                                          \
  X(Shr, "shr", Bitwise, Binary, "v", "", bitwise, "", kPure)                                                          \
  X(Popcount, "popcount", Bitwise, Unary, "v", "", bit_count, "", kPure)                                               \
  X(LeadingZeros, "leading_zeros", Bitwise, Unary, "v", "", bit_count, "", kPure)                                      \
  X(TrailingZeros, "trailing_zeros", Bitwise, Unary, "v", "", bit_count, "", kPure)                                    \
  /* compare: the result is bool with the operands' lanes */                                                           \
  X(Eq, "cmp.eq", Compare, Binary, "v", "", compare, "", kPure | kCommutative)                                         \
  X(Ne, "cmp.ne", Compare, Binary, "v", "", compare, "", kPure | kCommutative)                                         \
  X(Lt, "cmp.lt", Compare, Binary, "v", "", compare, "", kPure)                                                        \
  X(Le, "cmp.le", Compare, Binary, "v", "", compare, "", kPure)                                                        \
  X(Gt, "cmp.gt", Compare, Binary, "v", "", compare, "", kPure)                                                        \
  X(Ge, "cmp.ge", Compare, Binary, "v", "", compare, "", kPure)                                                        \
  X(Select, "select", Select, Select, "v", "", select, "", kPure)                                                      \
  /* casts */                                                                                                          \
  X(Cast, "cast", Cast, Unary, "v", "", cast, "", kPure)                                                               \
  X(Bitcast, "bitcast", Cast, Unary, "v", "", bitcast, "", kPure)                                                      \
  /* math, on floats */                                                                                                \
  X(Exp, "exp", Math, Unary, "v", "fast_math?", float_math, "", kPure)                                                 \
  X(Exp2, "exp2", Math, Unary, "v", "fast_math?", float_math, "", kPure)                                               \
  X(Log, "log", Math, Unary, "v", "fast_math?", float_math, "", kPure)                                                 \
  X(Log2, "log2", Math, Unary, "v", "fast_math?", float_math, "", kPure)                                               \
  X(Sqrt, "sqrt", Math, Unary, "v", "fast_math?", float_math, "", kPure)                                               \
  X(Rsqrt, "rsqrt", Math, Unary, "v", "fast_math?", float_math, "", kPure)                                             \
  X(Recip, "recip", Math, Unary, "v", "fast_math?", float_math, "", kPure)                                             \
  X(Sin, "sin", Math, Unary, "v", "fast_math?", float_math, "", kPure)                                                 \
  X(Cos, "cos", Math, Unary, "v", "fast_math?", float_math, "", kPure)                                                 \
  X(Tan, "tan", Math, Unary, "v", "fast_math?", float_math, "", kPure)                                                 \
  X(Tanh, "tanh", Math, Unary, "v", "fast_math?", float_math, "", kPure)                                               \
  X(Erf, "erf", Math, Unary, "v", "fast_math?", float_math, "", kPure)                                                 \
  X(Pow, "pow", Math, Binary, "v", "fast_math?", float_math, "", kPure)                                                \
  X(CopySign, "copysign", Math, Binary, "v", "fast_math?", float_math, "", kPure)                                      \
  X(Floor, "floor", Math, Unary, "v", "fast_math?", float_math, "", kPure)                                             \
  X(Ceil, "ceil", Math, Unary, "v", "fast_math?", float_math, "", kPure)                                               \
  X(Round, "round", Math, Unary, "v", "fast_math?", float_math, "", kPure)                                             \
  X(Trunc, "trunc", Math, Unary, "v", "fast_math?", float_math, "", kPure)                                             \
  X(IsNan, "isnan", Math, Unary, "v", "fast_math?", float_predicate, "", kPure)                                        \
  X(IsInf, "isinf", Math, Unary, "v", "fast_math?", float_predicate, "", kPure)                                        \
  /* vectors */                                                                                                        \
  X(VectorConstruct, "vector.construct", Vector, VectorConstruct, "v", "", vector_construct, "", kPure)                \
  X(VectorExtract, "vector.extract", Vector, Unary, "v", "lane", vector_extract, "", kPure)                            \
  X(VectorInsert, "vector.insert", Vector, VectorInsert, "v", "lane", vector_insert, "", kPure)                        \
  X(VectorSplat, "vector.splat", Vector, Unary, "v", "", vector_splat, "", kPure)                                      \
  /* builtins: {axis = 0|1|2} reads one axis; without it, the linear index */                                          \
  X(AbsolutePos, "builtin.absolute_pos", Builtin, Nullary, "v", "axis?", builtin, "", kPure | kBuiltin)                \
  X(UnitPos, "builtin.unit_pos", Builtin, Nullary, "v", "axis?", builtin, "", kPure | kBuiltin)                        \
  X(CubePos, "builtin.cube_pos", Builtin, Nullary, "v", "axis?", builtin, "", kPure | kBuiltin)                        \
  X(CubeDim, "builtin.cube_dim", Builtin, Nullary, "v", "axis?", builtin, "", kPure | kBuiltin)                        \
  X(CubeCount, "builtin.cube_count", Builtin, Nullary, "v", "axis?", builtin, "", kPure | kBuiltin)                    \
  X(PlaneDim, "builtin.plane_dim", Builtin, Nullary, "v", "axis?", builtin, "", kPure | kBuiltin)                      \
  X(UnitPosPlane, "builtin.unit_pos_plane", Builtin, Nullary, "v", "axis?", builtin, "", kPure | kBuiltin)             \
  /* arrays: global buffers and tensors, shared and local arrays */                                                    \
  X(Len, "len", Array, Array, "v", "", length, "", kPure)                                                              \
  X(TensorShape, "tensor.shape", Array, Array, "v", "dim", tensor_dim, "", kPure)                                      \
  X(TensorStride, "tensor.stride", Array, Array, "v", "dim", tensor_dim, "", kPure)                                    \
  /* memory: load array, index [, mask]; store array, index, value [, mask]; with {lanes = W}, W                       \
     consecutive elements of a global array of scalars from the index, as one vector (no mask) */                      \
  X(Load, "load", Memory, Load, "v", "checked? lanes?", load, "", kReadsMemory)                                        \
  X(Store, "store", Memory, Store, "", "checked? lanes?", store, "", kWritesMemory)                                    \
  X(SharedAlloc, "shared.alloc", Memory, Nullary, "a", "overlay?", shared_alloc, "", kAlloc)                           \
  /* asynchronous copy of one 16-byte element of a global array into a shared array of its scalar                      \
     (shared, index, global, index [, mask]: masked off, it writes zeros); lands by copy.async.wait */                 \
  X(CopyAsync, "copy.async", Memory, CopyAsync, "", "", copy_async, "", kReadsMemory | kWritesMemory)                  \
  X(LocalAlloc, "local.alloc", Memory, Nullary, "a", "", local_alloc, "", kAlloc)                                      \
  /* atomics: array, index, value [, mask] (cas: expected, desired); the result is the old value */                    \
  X(AtomicAdd, "atomic.add", Atomic, Atomic, "v", "checked?", atomic, "", kReadsMemory | kWritesMemory)                \
  X(AtomicSub, "atomic.sub", Atomic, Atomic, "v", "checked?", atomic, "", kReadsMemory | kWritesMemory)                \
  X(AtomicMin, "atomic.min", Atomic, Atomic, "v", "checked?", atomic, "", kReadsMemory | kWritesMemory)                \
  X(AtomicMax, "atomic.max", Atomic, Atomic, "v", "checked?", atomic, "", kReadsMemory | kWritesMemory)                \
  X(AtomicAnd, "atomic.and", Atomic, Atomic, "v", "checked?", atomic, "", kReadsMemory | kWritesMemory)                \
  X(AtomicOr, "atomic.or", Atomic, Atomic, "v", "checked?", atomic, "", kReadsMemory | kWritesMemory)                  \
  X(AtomicXor, "atomic.xor", Atomic, Atomic, "v", "checked?", atomic, "", kReadsMemory | kWritesMemory)                \
  X(AtomicExchange, "atomic.exchange", Atomic, Atomic, "v", "checked?", atomic, "", kReadsMemory | kWritesMemory)      \
  X(AtomicCas, "atomic.cas", Atomic, AtomicCas, "v", "checked?", atomic, "", kReadsMemory | kWritesMemory)             \
  /* synchronisation */                                                                                                \
  X(SyncCube, "sync.cube", Sync, Nullary, "", "", no_result, "", kBarrier)                                             \
  X(SyncPlane, "sync.plane", Sync, Nullary, "", "", no_result, "", kBarrier)                                           \
  /* the unit's memory accesses before it are seen by every unit of the launch, on any cube, before                    \
     those after it (a device-scope fence): a cube that publishes work behind an atomic flag, and                      \
     one that reads it after seeing the flag, each put one between the data and the flag */                            \
  X(FenceDevice, "fence.device", Sync, Nullary, "", "", no_result, "", kReadsMemory | kWritesMemory)                   \
  /* the unit's copy.asyncs since the last commit form a group; wait {pending = n} returns when at                     \
     most n of the unit's groups are still in flight (then a sync.cube shows the data to all units) */                 \
  X(CopyAsyncCommit, "copy.async.commit", Sync, Nullary, "", "", no_result, "", kReadsMemory | kWritesMemory)          \
  X(CopyAsyncWait, "copy.async.wait", Sync, Nullary, "", "pending", copy_async_wait, "", kReadsMemory | kWritesMemory) \
  /* mbarriers (Hopper): a shared array of barrier elements, each counting arrivals and bytes of                       \
     transactions. init sets the count of arrivals a phase needs; arrive counts one (arrive_expect_tx                  \
     first adds bytes the phase also waits for, expect_tx adds them alone); complete_tx counts bytes                   \
     landed; a phase completes when its arrivals and bytes are all in, and the next begins. try_wait                   \
     gives whether the phase of the given parity (bit 0) has completed. Counts and bytes are u32 */                    \
  X(MbarrierInit, "mbarrier.init", Sync, MbarrierCount, "", "", mbarrier, "", kReadsMemory | kWritesMemory)            \
  X(MbarrierArrive, "mbarrier.arrive", Sync, Mbarrier, "", "", mbarrier, "", kReadsMemory | kWritesMemory)             \
  X(MbarrierArriveExpectTx, "mbarrier.arrive_expect_tx", Sync, MbarrierCount, "", "", mbarrier, "",                    \
    kReadsMemory | kWritesMemory)                                                                                      \
  X(MbarrierExpectTx, "mbarrier.expect_tx", Sync, MbarrierCount, "", "", mbarrier, "", kReadsMemory | kWritesMemory)   \
  X(MbarrierCompleteTx, "mbarrier.complete_tx", Sync, MbarrierCount, "", "", mbarrier, "",                             \
    kReadsMemory | kWritesMemory)                                                                                      \
  X(MbarrierTryWait, "mbarrier.try_wait", Sync, MbarrierWait, "v", "", mbarrier, "", kReadsMemory | kWritesMemory)     \
  /* the unit's shared-memory writes before it are seen by the asynchronous proxy (bulk copies, wgmma)                 \
     after it; its reads of what the async proxy wrote likewise */                                                     \
  X(FenceProxyAsync, "fence.proxy.async", Sync, Nullary, "", "", no_result, "", kReadsMemory | kWritesMemory)          \
  /* plane ops over the active units of a plane */                                                                     \
  X(PlaneSum, "plane.sum", Plane, Unary, "v", "", plane_numeric, "", kPlane)                                           \
  X(PlaneProd, "plane.prod", Plane, Unary, "v", "", plane_numeric, "", kPlane)                                         \
  X(PlaneMax, "plane.max", Plane, Unary, "v", "", plane_numeric, "", kPlane)                                           \
  X(PlaneMin, "plane.min", Plane, Unary, "v", "", plane_numeric, "", kPlane)                                           \
  X(PlaneAll, "plane.all", Plane, PlaneVote, "v", "", plane_vote, "", kPlane)                                          \
  X(PlaneAny, "plane.any", Plane, PlaneVote, "v", "", plane_vote, "", kPlane)                                          \
  X(PlaneBallot, "plane.ballot", Plane, PlaneVote, "v", "", plane_ballot, "", kPlane)                                  \
  X(PlaneElect, "plane.elect", Plane, Nullary, "v", "", plane_elect, "", kPlane)                                       \
  X(PlaneBroadcast, "plane.broadcast", Plane, PlaneLane, "v", "", plane_lane, "", kPlane)                              \
  X(PlaneShuffle, "plane.shuffle", Plane, PlaneLane, "v", "", plane_lane, "", kPlane)                                  \
  X(PlaneShuffleXor, "plane.shuffle_xor", Plane, PlaneLane, "v", "", plane_lane, "", kPlane)                           \
  X(PlaneShuffleUp, "plane.shuffle_up", Plane, PlaneLane, "v", "", plane_lane, "", kPlane)                             \
  X(PlaneShuffleDown, "plane.shuffle_down", Plane, PlaneLane, "v", "", plane_lane, "", kPlane)                         \
  X(PlaneInclusiveSum, "plane.inclusive_sum", Plane, Unary, "v", "", plane_numeric, "", kPlane)                        \
  X(PlaneExclusiveSum, "plane.exclusive_sum", Plane, Unary, "v", "", plane_numeric, "", kPlane)                        \
  /* mutable locals */                                                                                                 \
  X(VarDecl, "var.decl", Var, Nullary, "x", "", var_decl, "", kAlloc)                                                  \
  X(VarLoad, "var.load", Var, VarLoad, "v", "", var_load, "", kReadsMemory)                                            \
  X(VarStore, "var.store", Var, VarStore, "", "", var_store, "", kWritesMemory)                                        \
  /* structured control flow; the operands after a for's lo, hi, step and a while's are the values                     \
     it starts carrying; condition, yield, break and continue pass carried values on (kernel.h, Op) */                 \
  X(If, "if", Control, If, "c", "", no_result, "then else", kControl)                                                  \
  X(For, "for", Control, For, "c", "unroll? unroll_full? prefetch_stages? vectorize? at_least_once?", loop_bounds,     \
    "body", kControl)                                                                                                  \
  X(While, "while", Control, While, "c", "", no_result, "cond do", kControl)                                           \
  X(Condition, "condition", Control, Condition, "", "", no_result, "", kTerminator)                                    \
  X(Yield, "yield", Control, Yield, "", "", no_result, "", kTerminator)                                                \
  X(Break, "break", Control, Jump, "", "", no_result, "", kTerminator)                                                 \
  X(Continue, "continue", Control, Jump, "", "", no_result, "", kTerminator)                                           \
  X(Terminate, "terminate", Control, Nullary, "", "", no_result, "", kTerminator)                                      \
  /* debug and checks. check.trips lo, hi {loop = N}: where !(lo < hi) the launch fails with                           \
     loop.zero_trips (checked_io puts one before each at_least_once loop of a checked kernel) */                       \
  X(DebugPrint, "debug.print", Debug, Print, "", "format", debug_print, "", kSideEffect)                               \
  X(CheckTrips, "check.trips", Debug, Bounds, "", "loop", check_trips, "", kSideEffect)                                \
  /* the tile layer (docs/tile.md): ops on whole tiles, rewritten by lower_tiles into the ops above.                   \
     A view is a global tile over a parameter, cut into cells {extent, tile, along, pad}. */                           \
  X(TileView, "tile.view", Tile, Array, "t", "extent tile along pad", tile_view, "", kPure)                            \
  X(TileLoadCell, "tile.load_cell", Tile, TileLoadCell, "t", "", tile_load_view, "", kReadsMemory)                     \
  X(TileLoadAt, "tile.load_at", Tile, TileLoadAt, "t", "", tile_load_view, "", kReadsMemory)                           \
  X(TileStoreCell, "tile.store_cell", Tile, TileStoreCell, "", "", tile_store_view, "", kWritesMemory)                 \
  X(TileStoreSub, "tile.store_sub", Tile, TileStoreSub, "", "", tile_store_view, "", kWritesMemory)                    \
  X(TileLoad, "tile.load", Tile, TileLoad, "t", "strides? pad?", tile_load_ptr, "", kReadsMemory)                      \
  X(TileStore, "tile.store", Tile, TileStore, "", "strides?", tile_store_ptr, "", kWritesMemory)                       \
  /* load, store and the atomics address a buffer: element (i, j, ..) at %off + i*strides[0] + j*strides[1] + ..;      \
     the scatter forms put each value at its own i32 offset. An extent (none, or one i32 per dimension)                \
     keeps the elements at coordinates below it; the others are not read (load gives pad) nor written.                 \
     The atomics keep no result: the old values are not kept */                                                        \
  X(TileAtomicAdd, "tile.atomic_add", Tile, TileStore, "", "strides?", tile_atomic, "", kReadsMemory | kWritesMemory)  \
  X(TileAtomicMax, "tile.atomic_max", Tile, TileStore, "", "strides?", tile_atomic, "", kReadsMemory | kWritesMemory)  \
  X(TileAtomicMin, "tile.atomic_min", Tile, TileStore, "", "strides?", tile_atomic, "", kReadsMemory | kWritesMemory)  \
  X(TileScatter, "tile.scatter", Tile, TileScatter, "", "", tile_scatter, "", kWritesMemory)                           \
  X(TileScatterAdd, "tile.scatter_add", Tile, TileScatter, "", "", tile_scatter, "", kReadsMemory | kWritesMemory)     \
  X(TileScatterMax, "tile.scatter_max", Tile, TileScatter, "", "", tile_scatter, "", kReadsMemory | kWritesMemory)     \
  X(TileScatterMin, "tile.scatter_min", Tile, TileScatter, "", "", tile_scatter, "", kReadsMemory | kWritesMemory)     \
  X(TileFull, "tile.full", Tile, Nullary, "t", "value", tile_full, "", kPure)                                          \
  X(TileBroadcast, "tile.broadcast", Tile, TileUnary, "t", "shape", tile_broadcast, "", kPure)                         \
  X(TileReduceSum, "tile.reduce_sum", Tile, TileUnary, "t", "dim keepdims?", tile_reduce, "", kPure)                   \
  X(TileReduceMax, "tile.reduce_max", Tile, TileUnary, "t", "dim keepdims?", tile_reduce, "", kPure)                   \
  X(TileReduceMin, "tile.reduce_min", Tile, TileUnary, "t", "dim keepdims?", tile_reduce, "", kPure)                   \
  X(TileTranspose, "tile.transpose", Tile, TileUnary, "t", "", tile_transpose, "", kPure)                              \
  /* the same register tile in the layout its result type names: the one op that changes a layout */                   \
  X(TileConvertLayout, "tile.convert_layout", Tile, TileUnary, "t", "", tile_convert_layout, "", kPure)                \
  X(TileMma, "tile.mma", Tile, TileMma, "t", "planes? a_fragments?", tile_mma, "", kPure)                              \
  /* shared tiles, as passes/tile/pipeline_loops stages them: the tile of a shared array at an element offset,         \
     in the array's shared layout (the stated type names it); a shared tile read into registers (lanes: the            \
     vector width its copies moved, whose load layout the read takes); a cell of a view copied into a shared           \
     array at an offset, rows as the array's layout lays them (async: cp.async, waited for by copy.async.wait;         \
     valid false copies zeros); a register tile's rows written into a shared array at an offset */                     \
  X(TileSlot, "tile.slot", Tile, TileSlot, "t", "", tile_slot, "", kPure)                                              \
  X(TileRead, "tile.read", Tile, TileUnary, "t", "lanes?", tile_read, "", kReadsMemory)                                \
  X(TileCopyCell, "tile.copy_cell", Tile, TileCopyCell, "", "async?", tile_copy_cell, "",                              \
    kReadsMemory | kWritesMemory)                                                                                      \
  X(TileStage, "tile.stage", Tile, TileStage, "", "", tile_stage, "", kWritesMemory)                                   \
  X(TileBlockId, "tile.block_id", Tile, Nullary, "v", "axis", tile_block_id, "", kPure | kBuiltin)                     \
  /* tensor cores: every unit of the cube together (uniform control flow, a barrier before and after                   \
     is the caller's); a, b shared arrays with element offsets, acc a local array of each unit's                       \
     accumulators, in the layout lower_tiles gives (docs/decisions/019-tile-layer.md) */                               \
  X(MmaSync, "mma.sync", Matrix, MmaSync, "", "shape planes pitches b_columns?", mma_sync, "",                         \
    kReadsMemory | kWritesMemory | kPlane)                                                                             \
  /* the same with a in registers: a local array of each unit's elements of a in the layout a product                  \
     over the same planes leaves its accumulators (mma.h), as when a is another product's result */                    \
  X(MmaSyncFragA, "mma.sync.a_frag", Matrix, MmaSyncFragA, "", "shape planes pitches b_columns?", mma_sync_frag_a, "", \
    kReadsMemory | kWritesMemory | kPlane)                                                                             \
  /* Hopper's warp-group product (sm_90a): each warp group (128 units from a multiple of 128) adds                     \
     a x bT to its accumulators, a the 64 x k rows from a_offset of a shared array, b the n x k rows                   \
     from b_offset, each array laid out as rows of one swizzle span (its shared layout); acc a local                   \
     array of each unit's n / 2 f32 accumulators (mma.h: wgmma_accumulator_element). Asynchronous:                     \
     wgmma.fence before a product that starts on accumulators the units wrote (it names them: their                    \
     writes come before it), wgmma.commit_group closes the products issued since the last into a group,                \
     wgmma.wait_group returns once at most `pending` groups are in flight and names the accumulator                    \
     arrays it makes readable (every one a landing product writes); a product in flight's accumulators                 \
     are not to be read */                                                                                             \
  X(WgmmaMmaAsync, "wgmma.mma_async", Matrix, MmaSync, "", "shape", wgmma, "", kReadsMemory | kWritesMemory | kPlane)  \
  /* the same with a in registers (bf16, f16): each unit's local array of k / 2 elements of a, unit t of a             \
     warp group holding in slot 8 s + i element (row, 16 s + col) of accumulator slot i of an n = 16 product           \
     (wgmma_a_fragment_element) */                                                                                     \
  X(WgmmaMmaAsyncFragA, "wgmma.mma_async.a_frag", Matrix, MmaSyncFragA, "", "shape", wgmma, "",                        \
    kReadsMemory | kWritesMemory | kPlane)                                                                             \
  X(WgmmaFence, "wgmma.fence", Sync, WgmmaAccumulators, "", "", wgmma_accumulators, "",                                \
    kReadsMemory | kWritesMemory | kPlane)                                                                             \
  X(WgmmaCommitGroup, "wgmma.commit_group", Sync, Nullary, "", "", no_result, "",                                      \
    kReadsMemory | kWritesMemory | kPlane)                                                                             \
  X(WgmmaWaitGroup, "wgmma.wait_group", Sync, WgmmaAccumulators, "", "pending", wgmma_accumulators, "",                \
    kReadsMemory | kWritesMemory | kPlane)

enum class OpKind : uint16_t {
#define KILN_X(e, text, family, signature, result, attrs, rule, regions, traits) e,
  KILN_IR_OPS(KILN_X)
#undef KILN_X
};

enum class Signature : uint8_t {
#define KILN_X(name, kinds, names) name,
  KILN_IR_SIGNATURES(KILN_X)
#undef KILN_X
};

// The operand names of each signature as positions: ops::Load::index is 1. An operand read
// through one is checked, in debug builds, against the name the op's own signature gives that
// position, so ops of several signatures share a name where their operands line up
// (ops::Store::array serves every access).
namespace ops {
#define KILN_X(name, kinds, names)                          \
  struct name {                                             \
    static constexpr Signature signature = Signature::name; \
    enum Slot : uint8_t { KILN_IR_UNPAREN names };          \
  };
#define KILN_IR_UNPAREN(...) __VA_ARGS__
KILN_IR_SIGNATURES(KILN_X)
#undef KILN_X
}  // namespace ops

// The signature an ops::X::Slot belongs to.
template <class Slot>
struct slot_signature;
#define KILN_X(name, kinds, names)                      \
  template <>                                           \
  struct slot_signature<ops::name::Slot> {              \
    static constexpr Signature value = Signature::name; \
  };
KILN_IR_SIGNATURES(KILN_X)
#undef KILN_X
template <class Slot>
concept OperandSlot = requires {
  slot_signature<Slot>::value;
};

// A signature's operand kinds and names, derived from its row.
struct SignatureInfo {
  std::string_view name;
  std::string_view kinds;  // the row's letters
  std::string_view names;  // "(array, index, mask)", as the row writes them
  int min_operands;
  int max_operands;  // -1: any number
  int mask_operand;  // the position of the optional mask, or -1 when the op takes none
  // The letter that describes operand i (for i past a repeated last letter, that letter).
  char operand_kind(size_t i) const;
  // The name of operand i (for i past a repeated last letter, that operand's name).
  std::string_view operand_name(size_t i) const;
};
const SignatureInfo& signature_info(Signature s);

// An op kind's schema, derived from its row.
struct OpInfo {
  std::string_view name;
  OpFamily family;
  Signature signature;
  std::string_view result;  // "", "v", "a", "x", "t" or "c"
  uint64_t attrs;           // a bit per AttrKey the op takes
  uint64_t required_attrs;  // a bit per AttrKey it must have
  std::string_view region_labels;
  uint32_t traits;
  int regions;

  const SignatureInfo& operands() const { return signature_info(signature); }
  int min_operands() const { return operands().min_operands; }
  int max_operands() const { return operands().max_operands; }
  int mask_operand() const { return operands().mask_operand; }
  bool has_mask() const { return mask_operand() >= 0; }
  char operand_kind(size_t i) const { return operands().operand_kind(i); }
  std::string_view operand_name(size_t i) const { return operands().operand_name(i); }
  // One result, always (result "v", "a", "x" or "t").
  bool has_result() const { return !result.empty() && result != "c"; }
  // Results are the values the op carries, as many as it carries (if, for, while).
  bool carries_values() const { return result == "c"; }
  bool takes(AttrKey k) const { return (attrs >> static_cast<unsigned>(k)) & 1; }
  bool needs(AttrKey k) const { return (required_attrs >> static_cast<unsigned>(k)) & 1; }
  // The label of region i (the first is printed without one).
  std::string_view region_label(size_t i) const;
};

const OpInfo& op_info(OpKind k);

// Whether position `s` of its signature names the operand that position holds in an op of kind
// `k`: what Op::operand checks (debug builds) before it reads.
template <OperandSlot Slot>
bool slot_fits(OpKind k, Slot s) {
  return op_info(k).operand_name(s) == signature_info(slot_signature<Slot>::value).operand_name(s);
}

inline std::string_view op_name(OpKind k) { return op_info(k).name; }
inline OpFamily op_family(OpKind k) { return op_info(k).family; }
inline bool has_trait(OpKind k, OpTrait t) { return (op_info(k).traits & t) != 0; }
// Finds the kind whose text name is `name`; false when none.
bool parse_op_kind(std::string_view name, OpKind& out);
int op_kind_count();

// Family tests that several layers share.
inline bool is_compare(OpKind k) { return op_family(k) == OpFamily::Compare; }
inline bool is_atomic(OpKind k) { return op_family(k) == OpFamily::Atomic; }
inline bool is_float_math(OpKind k) { return op_family(k) == OpFamily::Math; }

}  // namespace kiln::ir
