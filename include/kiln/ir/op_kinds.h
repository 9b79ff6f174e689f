// The op kinds, defined once. Each row of KILN_IR_OPS is an op's whole schema: its text name, its
// family, the kinds of its operands and result, the rule that types its result, its region labels
// and its effects. The enum, the text form, the verifier's structure checks, the tracer's typing
// and the passes' questions (pure? writes memory? where is the mask?) all read this table.
// Adding an op: one row here, its rule in src/ir/type_rules.cpp (if no existing rule fits), one
// site per backend, tests and docs/ir.md.
#pragma once

#include <cstdint>
#include <string_view>

namespace kiln::ir {

// Properties of an op kind. Passes ask these instead of listing kinds.
enum OpTrait : uint32_t {
  kNoTraits = 0,
  kPure = 1u << 0,         // no side effects; the result depends only on the operands
  kCommutative = 1u << 1,  // operands 0 and 1 may be swapped
  kReadsMemory = 1u << 2,
  kWritesMemory = 1u << 3,
  kAlloc = 1u << 4,        // creates storage: removable when unused, never merged with another
  kPlane = 1u << 5,        // reads other lanes of the plane: stays in its region, never hoisted
  kBarrier = 1u << 6,      // all units of the cube (or plane) meet here
  kControl = 1u << 7,      // structured control flow with regions
  kTerminator = 1u << 8,   // ends the flow of its region for the active units (break, continue, ...)
  kSideEffect = 1u << 9,   // observable effect outside memory (debug print)
  kBuiltin = 1u << 10,     // reads a launch builtin (positions, dims)
};

constexpr uint32_t operator|(OpTrait a, OpTrait b) { return uint32_t(a) | uint32_t(b); }
constexpr uint32_t operator|(uint32_t a, OpTrait b) { return a | uint32_t(b); }

// What an op is for. Backends dispatch on the family, so that a new op of an existing family
// needs only its own expression; the order of the rows means nothing.
#define KILN_IR_FAMILIES(X) \
  X(Constant, "constant")  \
  X(Arith, "arith")        \
  X(Bitwise, "bitwise")    \
  X(Compare, "compare")    \
  X(Select, "select")      \
  X(Cast, "cast")          \
  X(Math, "math")          \
  X(Vector, "vector")      \
  X(Builtin, "builtin")    \
  X(Array, "array")        \
  X(Memory, "memory")      \
  X(Atomic, "atomic")      \
  X(Sync, "sync")          \
  X(Plane, "plane")        \
  X(Var, "var")            \
  X(Control, "control")    \
  X(Debug, "debug")        \
  X(Tile, "tile")          \
  X(Matrix, "matrix")

enum class OpFamily : uint8_t {
#define KILN_X(e, text) e,
  KILN_IR_FAMILIES(KILN_X)
#undef KILN_X
};
std::string_view family_name(OpFamily f);

// X(Enum, "text", Family, "operands", "result", rule, "region labels", traits)
//
// Operands, one letter each, in order:
//   v  a value (scalar or vector)        i  a scalar integer (index, bound)
//   b  a scalar bool                     u  a scalar u32 (a lane)
//   a  an array (buffer, tensor, shared or local)
//   x  a var                             m  the optional mask: a scalar bool, always last
//   c  a value control flow carries: a scalar, a vector or a register tile
//   t  a tile (of any memory space)
//   *  after the last letter: that kind again, any number of times
// A `v` operand also takes a register tile: an elementwise op (arith, bitwise, compare, select,
// cast, math) whose operands are tiles of one shape applies its rule to their elements and gives a
// tile of that shape (type_rules.cpp). lower_tiles rewrites every tile op before a backend runs.
// Result: "" none, "v" a value (or a register tile, above), "a" an array, "x" a var, "t" a tile,
// "c" one result per value the op carries
// (any number, from none; the verifier checks them against the op's regions, docs/ir.md).
// Rule: the function in src/ir/type_rules.cpp that checks the operands' types and gives the
// result's (rule_<name>); the tracer and the verifier both call it.
// Region labels: one word per region, the text form prints each after the first (`} else {`).
#define KILN_IR_OPS(X) \
  /* constants */                                                                                     \
  X(Const, "const", Constant, "", "v", constant, "", kPure)                                           \
  /* arithmetic */                                                                                    \
  X(Add, "add", Arith, "vv", "v", arith, "", kPure | kCommutative)                                    \
  X(Sub, "sub", Arith, "vv", "v", arith, "", kPure)                                                   \
  X(Mul, "mul", Arith, "vv", "v", arith, "", kPure | kCommutative)                                    \
  X(Div, "div", Arith, "vv", "v", arith, "", kPure)                                                   \
  X(Rem, "rem", Arith, "vv", "v", arith, "", kPure)                                                   \
  X(Neg, "neg", Arith, "v", "v", arith, "", kPure)                                                    \
  X(Abs, "abs", Arith, "v", "v", arith, "", kPure)                                                    \
  X(Min, "min", Arith, "vv", "v", arith, "", kPure | kCommutative)                                    \
  X(Max, "max", Arith, "vv", "v", arith, "", kPure | kCommutative)                                    \
  X(Fma, "fma", Arith, "vvv", "v", fma, "", kPure)                                                    \
  /* bitwise and shifts (and, or, xor, not are also the logical ops on bool) */                       \
  X(And, "and", Bitwise, "vv", "v", bitwise, "", kPure | kCommutative)                                \
  X(Or, "or", Bitwise, "vv", "v", bitwise, "", kPure | kCommutative)                                  \
  X(Xor, "xor", Bitwise, "vv", "v", bitwise, "", kPure | kCommutative)                                \
  X(Not, "not", Bitwise, "v", "v", bitwise, "", kPure)                                                \
  X(Shl, "shl", Bitwise, "vv", "v", bitwise, "", kPure)                                               \
  X(Shr, "shr", Bitwise, "vv", "v", bitwise, "", kPure)                                               \
  X(Popcount, "popcount", Bitwise, "v", "v", bit_count, "", kPure)                                    \
  X(LeadingZeros, "leading_zeros", Bitwise, "v", "v", bit_count, "", kPure)                           \
  X(TrailingZeros, "trailing_zeros", Bitwise, "v", "v", bit_count, "", kPure)                         \
  /* compare: the result is bool with the operands' lanes */                                          \
  X(Eq, "cmp.eq", Compare, "vv", "v", compare, "", kPure | kCommutative)                              \
  X(Ne, "cmp.ne", Compare, "vv", "v", compare, "", kPure | kCommutative)                              \
  X(Lt, "cmp.lt", Compare, "vv", "v", compare, "", kPure)                                             \
  X(Le, "cmp.le", Compare, "vv", "v", compare, "", kPure)                                             \
  X(Gt, "cmp.gt", Compare, "vv", "v", compare, "", kPure)                                             \
  X(Ge, "cmp.ge", Compare, "vv", "v", compare, "", kPure)                                             \
  X(Select, "select", Select, "vvv", "v", select, "", kPure)                                          \
  /* casts */                                                                                         \
  X(Cast, "cast", Cast, "v", "v", cast, "", kPure)                                                    \
  X(Bitcast, "bitcast", Cast, "v", "v", bitcast, "", kPure)                                           \
  /* math, on floats */                                                                               \
  X(Exp, "exp", Math, "v", "v", float_math, "", kPure)                                                \
  X(Exp2, "exp2", Math, "v", "v", float_math, "", kPure)                                              \
  X(Log, "log", Math, "v", "v", float_math, "", kPure)                                                \
  X(Log2, "log2", Math, "v", "v", float_math, "", kPure)                                              \
  X(Sqrt, "sqrt", Math, "v", "v", float_math, "", kPure)                                              \
  X(Rsqrt, "rsqrt", Math, "v", "v", float_math, "", kPure)                                            \
  X(Recip, "recip", Math, "v", "v", float_math, "", kPure)                                            \
  X(Sin, "sin", Math, "v", "v", float_math, "", kPure)                                                \
  X(Cos, "cos", Math, "v", "v", float_math, "", kPure)                                                \
  X(Tan, "tan", Math, "v", "v", float_math, "", kPure)                                                \
  X(Tanh, "tanh", Math, "v", "v", float_math, "", kPure)                                              \
  X(Erf, "erf", Math, "v", "v", float_math, "", kPure)                                                \
  X(Pow, "pow", Math, "vv", "v", float_math, "", kPure)                                               \
  X(CopySign, "copysign", Math, "vv", "v", float_math, "", kPure)                                     \
  X(Floor, "floor", Math, "v", "v", float_math, "", kPure)                                            \
  X(Ceil, "ceil", Math, "v", "v", float_math, "", kPure)                                              \
  X(Round, "round", Math, "v", "v", float_math, "", kPure)                                            \
  X(Trunc, "trunc", Math, "v", "v", float_math, "", kPure)                                            \
  X(IsNan, "isnan", Math, "v", "v", float_predicate, "", kPure)                                       \
  X(IsInf, "isinf", Math, "v", "v", float_predicate, "", kPure)                                       \
  /* vectors */                                                                                       \
  X(VectorConstruct, "vector.construct", Vector, "vvv*", "v", vector_construct, "", kPure)            \
  X(VectorExtract, "vector.extract", Vector, "v", "v", vector_extract, "", kPure)                     \
  X(VectorInsert, "vector.insert", Vector, "vv", "v", vector_insert, "", kPure)                       \
  X(VectorSplat, "vector.splat", Vector, "v", "v", vector_splat, "", kPure)                           \
  /* builtins: {axis = 0|1|2} reads one axis; without it, the linear index */                         \
  X(AbsolutePos, "builtin.absolute_pos", Builtin, "", "v", builtin, "", kPure | kBuiltin)             \
  X(UnitPos, "builtin.unit_pos", Builtin, "", "v", builtin, "", kPure | kBuiltin)                     \
  X(CubePos, "builtin.cube_pos", Builtin, "", "v", builtin, "", kPure | kBuiltin)                     \
  X(CubeDim, "builtin.cube_dim", Builtin, "", "v", builtin, "", kPure | kBuiltin)                     \
  X(CubeCount, "builtin.cube_count", Builtin, "", "v", builtin, "", kPure | kBuiltin)                 \
  X(PlaneDim, "builtin.plane_dim", Builtin, "", "v", builtin, "", kPure | kBuiltin)                   \
  X(UnitPosPlane, "builtin.unit_pos_plane", Builtin, "", "v", builtin, "", kPure | kBuiltin)          \
  /* arrays: global buffers and tensors, shared and local arrays */                                   \
  X(Len, "len", Array, "a", "v", length, "", kPure)                                                   \
  X(TensorShape, "tensor.shape", Array, "a", "v", tensor_dim, "", kPure)                              \
  X(TensorStride, "tensor.stride", Array, "a", "v", tensor_dim, "", kPure)                            \
  /* memory: load array, index [, mask]; store array, index, value [, mask]; with {lanes = W}, W      \
     consecutive elements of a global array of scalars from the index, as one vector (no mask) */      \
  X(Load, "load", Memory, "aim", "v", load, "", kReadsMemory)                                         \
  X(Store, "store", Memory, "aivm", "", store, "", kWritesMemory)                                     \
  X(SharedAlloc, "shared.alloc", Memory, "", "a", shared_alloc, "", kAlloc)                           \
  /* asynchronous copy of one 16-byte element of a global array into a shared array of its scalar    \
     (shared, index, global, index [, mask]: masked off, it writes zeros); lands by copy.async.wait */ \
  X(CopyAsync, "copy.async", Memory, "aiaim", "", copy_async, "", kReadsMemory | kWritesMemory)        \
  X(LocalAlloc, "local.alloc", Memory, "", "a", local_alloc, "", kAlloc)                              \
  /* atomics: array, index, value [, mask] (cas: expected, desired); the result is the old value */   \
  X(AtomicAdd, "atomic.add", Atomic, "aivm", "v", atomic, "", kReadsMemory | kWritesMemory)           \
  X(AtomicSub, "atomic.sub", Atomic, "aivm", "v", atomic, "", kReadsMemory | kWritesMemory)           \
  X(AtomicMin, "atomic.min", Atomic, "aivm", "v", atomic, "", kReadsMemory | kWritesMemory)           \
  X(AtomicMax, "atomic.max", Atomic, "aivm", "v", atomic, "", kReadsMemory | kWritesMemory)           \
  X(AtomicAnd, "atomic.and", Atomic, "aivm", "v", atomic, "", kReadsMemory | kWritesMemory)           \
  X(AtomicOr, "atomic.or", Atomic, "aivm", "v", atomic, "", kReadsMemory | kWritesMemory)             \
  X(AtomicXor, "atomic.xor", Atomic, "aivm", "v", atomic, "", kReadsMemory | kWritesMemory)           \
  X(AtomicExchange, "atomic.exchange", Atomic, "aivm", "v", atomic, "", kReadsMemory | kWritesMemory) \
  X(AtomicCas, "atomic.cas", Atomic, "aivvm", "v", atomic, "", kReadsMemory | kWritesMemory)          \
  /* synchronisation */                                                                               \
  X(SyncCube, "sync.cube", Sync, "", "", no_result, "", kBarrier)                                     \
  X(SyncPlane, "sync.plane", Sync, "", "", no_result, "", kBarrier)                                   \
  /* the unit's copy.asyncs since the last commit form a group; wait {pending = n} returns when at    \
     most n of the unit's groups are still in flight (then a sync.cube shows the data to all units) */ \
  X(CopyAsyncCommit, "copy.async.commit", Sync, "", "", no_result, "", kReadsMemory | kWritesMemory)  \
  X(CopyAsyncWait, "copy.async.wait", Sync, "", "", copy_async_wait, "", kReadsMemory | kWritesMemory)\
  /* plane (warp) ops over the active units of a plane */                                             \
  X(PlaneSum, "plane.sum", Plane, "v", "v", plane_numeric, "", kPlane)                                \
  X(PlaneProd, "plane.prod", Plane, "v", "v", plane_numeric, "", kPlane)                              \
  X(PlaneMax, "plane.max", Plane, "v", "v", plane_numeric, "", kPlane)                                \
  X(PlaneMin, "plane.min", Plane, "v", "v", plane_numeric, "", kPlane)                                \
  X(PlaneAll, "plane.all", Plane, "b", "v", plane_vote, "", kPlane)                                   \
  X(PlaneAny, "plane.any", Plane, "b", "v", plane_vote, "", kPlane)                                   \
  X(PlaneBallot, "plane.ballot", Plane, "b", "v", plane_ballot, "", kPlane)                           \
  X(PlaneElect, "plane.elect", Plane, "", "v", plane_elect, "", kPlane)                               \
  X(PlaneBroadcast, "plane.broadcast", Plane, "vu", "v", plane_lane, "", kPlane)                      \
  X(PlaneShuffle, "plane.shuffle", Plane, "vu", "v", plane_lane, "", kPlane)                          \
  X(PlaneShuffleXor, "plane.shuffle_xor", Plane, "vu", "v", plane_lane, "", kPlane)                   \
  X(PlaneShuffleUp, "plane.shuffle_up", Plane, "vu", "v", plane_lane, "", kPlane)                     \
  X(PlaneShuffleDown, "plane.shuffle_down", Plane, "vu", "v", plane_lane, "", kPlane)                 \
  X(PlaneInclusiveSum, "plane.inclusive_sum", Plane, "v", "v", plane_numeric, "", kPlane)             \
  X(PlaneExclusiveSum, "plane.exclusive_sum", Plane, "v", "v", plane_numeric, "", kPlane)             \
  /* mutable locals */                                                                                \
  X(VarDecl, "var.decl", Var, "", "x", var_decl, "", kAlloc)                                          \
  X(VarLoad, "var.load", Var, "x", "v", var_load, "", kReadsMemory)                                   \
  X(VarStore, "var.store", Var, "xv", "", var_store, "", kWritesMemory)                               \
  /* structured control flow; the operands after a for's lo, hi, step and a while's are the values  \
     it starts carrying; condition, yield, break and continue pass carried values on (kernel.h, Op) */ \
  X(If, "if", Control, "b", "c", no_result, "then else", kControl)                                    \
  X(For, "for", Control, "iiic*", "c", loop_bounds, "body", kControl)                                 \
  X(While, "while", Control, "c*", "c", no_result, "cond do", kControl)                               \
  X(Condition, "condition", Control, "bc*", "", no_result, "", kTerminator)                           \
  X(Yield, "yield", Control, "cc*", "", no_result, "", kTerminator)                                   \
  X(Break, "break", Control, "c*", "", no_result, "", kTerminator)                                    \
  X(Continue, "continue", Control, "c*", "", no_result, "", kTerminator)                              \
  X(Terminate, "terminate", Control, "", "", no_result, "", kTerminator)                              \
  /* debug and checks. check.trips lo, hi {loop = N}: where !(lo < hi) the launch fails with        \
     loop.zero_trips (checked_io puts one before each at_least_once loop of a checked kernel) */      \
  X(DebugPrint, "debug.print", Debug, "v*", "", debug_print, "", kSideEffect)                         \
  X(CheckTrips, "check.trips", Debug, "ii", "", check_trips, "", kSideEffect)                         \
  /* the tile layer (docs/tile.md): ops on whole tiles, rewritten by lower_tiles into the ops above. \
     A view is a global tile over a parameter, cut into cells {extent, tile, along, pad}. */          \
  X(TileView, "tile.view", Tile, "a", "t", tile_view, "", kPure)                                      \
  X(TileLoadCell, "tile.load_cell", Tile, "t", "t", tile_load_view, "", kReadsMemory)                 \
  X(TileLoadAt, "tile.load_at", Tile, "ti*", "t", tile_load_view, "", kReadsMemory)                   \
  X(TileStoreCell, "tile.store_cell", Tile, "tt", "", tile_store_view, "", kWritesMemory)             \
  X(TileStoreSub, "tile.store_sub", Tile, "tti*", "", tile_store_view, "", kWritesMemory)             \
  X(TileLoad, "tile.load", Tile, "ai", "t", tile_load_ptr, "", kReadsMemory)                          \
  X(TileStore, "tile.store", Tile, "ait", "", tile_store_ptr, "", kWritesMemory)                      \
  X(TileFull, "tile.full", Tile, "", "t", tile_full, "", kPure)                                       \
  X(TileBroadcast, "tile.broadcast", Tile, "t", "t", tile_broadcast, "", kPure)                       \
  X(TileReduceSum, "tile.reduce_sum", Tile, "t", "t", tile_reduce, "", kPure)                         \
  X(TileReduceMax, "tile.reduce_max", Tile, "t", "t", tile_reduce, "", kPure)                         \
  X(TileReduceMin, "tile.reduce_min", Tile, "t", "t", tile_reduce, "", kPure)                         \
  X(TileTranspose, "tile.transpose", Tile, "t", "t", tile_transpose, "", kPure)                       \
  X(TileMma, "tile.mma", Tile, "ttt", "t", tile_mma, "", kPure)                                       \
  X(TileBlockId, "tile.block_id", Tile, "", "v", tile_block_id, "", kPure | kBuiltin)                \
  /* tensor cores: every unit of the cube together (uniform control flow, a barrier before and after \
     is the caller's); a, b shared arrays with element offsets, acc a local array of each unit's     \
     accumulators, in the layout lower_tiles gives (docs/decisions/019-tile-layer.md) */              \
  X(MmaSync, "mma.sync", Matrix, "aiaia", "", mma_sync, "", kReadsMemory | kWritesMemory | kPlane)

enum class OpKind : uint16_t {
#define KILN_X(e, text, family, operands, result, rule, regions, traits) e,
  KILN_IR_OPS(KILN_X)
#undef KILN_X
};

// An op kind's schema, derived from its row.
struct OpInfo {
  std::string_view name;
  OpFamily family;
  std::string_view operands;  // the row's operand letters
  std::string_view result;    // "", "v", "a", "x", "t" or "c"
  std::string_view region_labels;
  uint32_t traits;
  int min_operands;
  int max_operands;  // -1: any number
  int mask_operand;  // the position of the optional mask, or -1 when the op takes none
  int regions;

  // One result, always (result "v", "a", "x" or "t").
  bool has_result() const { return !result.empty() && result != "c"; }
  // Results are the values the op carries, as many as it carries (if, for, while).
  bool carries_values() const { return result == "c"; }
  bool has_mask() const { return mask_operand >= 0; }
  // The letter that describes operand i (for i past a repeated last letter, that letter).
  char operand_kind(size_t i) const;
  // The label of region i (the first is printed without one).
  std::string_view region_label(size_t i) const;
};

const OpInfo& op_info(OpKind k);
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
