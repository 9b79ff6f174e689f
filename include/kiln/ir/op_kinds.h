// The op kinds, defined once. The enum, the text names, the operand and region counts and the
// properties passes ask (pure, commutative, memory, ...) are all derived from this one list.
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

// X(Enum, "text", min_operands, max_operands (-1: any), regions, traits)
// Families are grouped; the order means nothing beyond that.
#define KILN_IR_OPS(X)                                                          \
  /* constants */                                                               \
  X(Const, "const", 0, 0, 0, kPure)                                             \
  /* arithmetic */                                                              \
  X(Add, "add", 2, 2, 0, kPure | kCommutative)                                  \
  X(Sub, "sub", 2, 2, 0, kPure)                                                 \
  X(Mul, "mul", 2, 2, 0, kPure | kCommutative)                                  \
  X(Div, "div", 2, 2, 0, kPure)                                                 \
  X(Rem, "rem", 2, 2, 0, kPure)                                                 \
  X(Neg, "neg", 1, 1, 0, kPure)                                                 \
  X(Abs, "abs", 1, 1, 0, kPure)                                                 \
  X(Min, "min", 2, 2, 0, kPure | kCommutative)                                  \
  X(Max, "max", 2, 2, 0, kPure | kCommutative)                                  \
  X(Fma, "fma", 3, 3, 0, kPure)                                                 \
  /* bitwise and shifts (and, or, xor, not are also the logical ops on bool) */ \
  X(And, "and", 2, 2, 0, kPure | kCommutative)                                  \
  X(Or, "or", 2, 2, 0, kPure | kCommutative)                                    \
  X(Xor, "xor", 2, 2, 0, kPure | kCommutative)                                  \
  X(Not, "not", 1, 1, 0, kPure)                                                 \
  X(Shl, "shl", 2, 2, 0, kPure)                                                 \
  X(Shr, "shr", 2, 2, 0, kPure)                                                 \
  X(Popcount, "popcount", 1, 1, 0, kPure)                                       \
  X(LeadingZeros, "leading_zeros", 1, 1, 0, kPure)                              \
  /* compare: the result is bool with the operands' lanes */                    \
  X(Eq, "cmp.eq", 2, 2, 0, kPure | kCommutative)                                \
  X(Ne, "cmp.ne", 2, 2, 0, kPure | kCommutative)                                \
  X(Lt, "cmp.lt", 2, 2, 0, kPure)                                               \
  X(Le, "cmp.le", 2, 2, 0, kPure)                                               \
  X(Gt, "cmp.gt", 2, 2, 0, kPure)                                               \
  X(Ge, "cmp.ge", 2, 2, 0, kPure)                                               \
  X(Select, "select", 3, 3, 0, kPure)                                           \
  /* casts */                                                                   \
  X(Cast, "cast", 1, 1, 0, kPure)                                               \
  X(Bitcast, "bitcast", 1, 1, 0, kPure)                                         \
  /* math, on floats */                                                         \
  X(Exp, "exp", 1, 1, 0, kPure)                                                 \
  X(Exp2, "exp2", 1, 1, 0, kPure)                                               \
  X(Log, "log", 1, 1, 0, kPure)                                                 \
  X(Log2, "log2", 1, 1, 0, kPure)                                               \
  X(Sqrt, "sqrt", 1, 1, 0, kPure)                                               \
  X(Rsqrt, "rsqrt", 1, 1, 0, kPure)                                             \
  X(Recip, "recip", 1, 1, 0, kPure)                                             \
  X(Sin, "sin", 1, 1, 0, kPure)                                                 \
  X(Cos, "cos", 1, 1, 0, kPure)                                                 \
  X(Tan, "tan", 1, 1, 0, kPure)                                                 \
  X(Tanh, "tanh", 1, 1, 0, kPure)                                               \
  X(Erf, "erf", 1, 1, 0, kPure)                                                 \
  X(Pow, "pow", 2, 2, 0, kPure)                                                 \
  X(Floor, "floor", 1, 1, 0, kPure)                                             \
  X(Ceil, "ceil", 1, 1, 0, kPure)                                               \
  X(Round, "round", 1, 1, 0, kPure)                                             \
  X(Trunc, "trunc", 1, 1, 0, kPure)                                             \
  X(IsNan, "isnan", 1, 1, 0, kPure)                                             \
  X(IsInf, "isinf", 1, 1, 0, kPure)                                             \
  /* vectors */                                                                 \
  X(VectorConstruct, "vector.construct", 2, 16, 0, kPure)                       \
  X(VectorExtract, "vector.extract", 1, 1, 0, kPure)                            \
  X(VectorInsert, "vector.insert", 2, 2, 0, kPure)                              \
  X(VectorSplat, "vector.splat", 1, 1, 0, kPure)                                \
  /* builtins: {axis = 0|1|2} reads one axis; without it, the linear index */   \
  X(AbsolutePos, "builtin.absolute_pos", 0, 0, 0, kPure | kBuiltin)             \
  X(UnitPos, "builtin.unit_pos", 0, 0, 0, kPure | kBuiltin)                     \
  X(CubePos, "builtin.cube_pos", 0, 0, 0, kPure | kBuiltin)                     \
  X(CubeDim, "builtin.cube_dim", 0, 0, 0, kPure | kBuiltin)                     \
  X(CubeCount, "builtin.cube_count", 0, 0, 0, kPure | kBuiltin)                 \
  X(PlaneDim, "builtin.plane_dim", 0, 0, 0, kPure | kBuiltin)                   \
  X(UnitPosPlane, "builtin.unit_pos_plane", 0, 0, 0, kPure | kBuiltin)          \
  /* arrays: global buffers and tensors, shared and local arrays */             \
  X(Len, "len", 1, 1, 0, kPure)                                                 \
  X(TensorShape, "tensor.shape", 1, 1, 0, kPure)                                \
  X(TensorStride, "tensor.stride", 1, 1, 0, kPure)                              \
  /* load array, index [, mask]; store array, index, value [, mask] */          \
  X(Load, "load", 2, 3, 0, kReadsMemory)                                        \
  X(Store, "store", 3, 4, 0, kWritesMemory)                                     \
  X(SharedAlloc, "shared.alloc", 0, 0, 0, kAlloc)                               \
  X(LocalAlloc, "local.alloc", 0, 0, 0, kAlloc)                                 \
  /* atomics: array, index, value [, mask]; the result is the old value */      \
  X(AtomicAdd, "atomic.add", 3, 4, 0, kReadsMemory | kWritesMemory)             \
  X(AtomicSub, "atomic.sub", 3, 4, 0, kReadsMemory | kWritesMemory)             \
  X(AtomicMin, "atomic.min", 3, 4, 0, kReadsMemory | kWritesMemory)             \
  X(AtomicMax, "atomic.max", 3, 4, 0, kReadsMemory | kWritesMemory)             \
  X(AtomicAnd, "atomic.and", 3, 4, 0, kReadsMemory | kWritesMemory)             \
  X(AtomicOr, "atomic.or", 3, 4, 0, kReadsMemory | kWritesMemory)              \
  X(AtomicXor, "atomic.xor", 3, 4, 0, kReadsMemory | kWritesMemory)             \
  X(AtomicExchange, "atomic.exchange", 3, 4, 0, kReadsMemory | kWritesMemory)   \
  /* array, index, expected, desired [, mask] */                                \
  X(AtomicCas, "atomic.cas", 4, 5, 0, kReadsMemory | kWritesMemory)             \
  /* synchronisation */                                                         \
  X(SyncCube, "sync.cube", 0, 0, 0, kBarrier)                                   \
  X(SyncPlane, "sync.plane", 0, 0, 0, kBarrier)                                 \
  /* plane (warp) ops over the active units of a plane */                       \
  X(PlaneSum, "plane.sum", 1, 1, 0, kPlane)                                     \
  X(PlaneProd, "plane.prod", 1, 1, 0, kPlane)                                   \
  X(PlaneMax, "plane.max", 1, 1, 0, kPlane)                                     \
  X(PlaneMin, "plane.min", 1, 1, 0, kPlane)                                     \
  X(PlaneAll, "plane.all", 1, 1, 0, kPlane)                                     \
  X(PlaneAny, "plane.any", 1, 1, 0, kPlane)                                     \
  X(PlaneBallot, "plane.ballot", 1, 1, 0, kPlane)                               \
  X(PlaneElect, "plane.elect", 0, 0, 0, kPlane)                                 \
  X(PlaneBroadcast, "plane.broadcast", 2, 2, 0, kPlane)                         \
  X(PlaneShuffle, "plane.shuffle", 2, 2, 0, kPlane)                             \
  X(PlaneShuffleXor, "plane.shuffle_xor", 2, 2, 0, kPlane)                      \
  X(PlaneShuffleUp, "plane.shuffle_up", 2, 2, 0, kPlane)                        \
  X(PlaneShuffleDown, "plane.shuffle_down", 2, 2, 0, kPlane)                    \
  X(PlaneInclusiveSum, "plane.inclusive_sum", 1, 1, 0, kPlane)                  \
  X(PlaneExclusiveSum, "plane.exclusive_sum", 1, 1, 0, kPlane)                  \
  /* mutable locals */                                                          \
  X(VarDecl, "var.decl", 0, 0, 0, kAlloc)                                       \
  X(VarLoad, "var.load", 1, 1, 0, kReadsMemory)                                 \
  X(VarStore, "var.store", 2, 2, 0, kWritesMemory)                              \
  /* structured control flow; the operands after a for's lo, hi, step and a    \
     while's are the initial values it carries; condition, yield, break and      \
     continue pass carried values on (kernel.h, Op) */                           \
  X(If, "if", 1, 1, 2, kControl)                                                \
  X(For, "for", 3, -1, 1, kControl)                                             \
  X(While, "while", 0, -1, 2, kControl)                                         \
  X(Condition, "condition", 1, -1, 0, kTerminator)                              \
  X(Yield, "yield", 1, -1, 0, kTerminator)                                      \
  X(Break, "break", 0, -1, 0, kTerminator)                                      \
  X(Continue, "continue", 0, -1, 0, kTerminator)                                \
  X(Terminate, "terminate", 0, 0, 0, kTerminator)                               \
  /* debug */                                                                   \
  X(DebugPrint, "debug.print", 0, 16, 0, kSideEffect)

enum class OpKind : uint16_t {
#define KILN_X(e, text, lo, hi, regions, traits) e,
  KILN_IR_OPS(KILN_X)
#undef KILN_X
};

struct OpInfo {
  std::string_view name;
  int min_operands;
  int max_operands;  // -1: any number
  int regions;
  uint32_t traits;
};

const OpInfo& op_info(OpKind k);
inline std::string_view op_name(OpKind k) { return op_info(k).name; }
inline bool has_trait(OpKind k, OpTrait t) { return (op_info(k).traits & t) != 0; }
// Finds the kind whose text name is `name`; false when none.
bool parse_op_kind(std::string_view name, OpKind& out);
int op_kind_count();

// Family tests that several layers share.
bool is_compare(OpKind k);
bool is_atomic(OpKind k);
bool is_float_math(OpKind k);  // exp .. isinf

}  // namespace kiln::ir
