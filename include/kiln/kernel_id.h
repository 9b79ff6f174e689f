// KernelId: everything that makes two launches of a kernel compile differently, and the one
// function that assembles it (assemble_kernel_id; make_kernel_id checks the descriptors first) from
// a kernel's signature and run-time descriptors of its parameters. Equal ids share one compiled kernel; data and
// Scalar<T> arguments are not in it, so they never recompile. Decision 014 (kernel ids from descriptors) says what is
// in an id and why.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "kiln/ir/kernel.h"

namespace kiln {

inline constexpr int kMaxParams = 16;
inline constexpr int kMaxComptime = 8;

class Program;
struct KernelId;

// What a kernel parameter is: a global array (Slice<T>), one with shape and strides
// (TensorArg<T>), a run-time number (Scalar<T>), or a value fixed at compile time (Comptime<T>,
// which is no parameter of the traced kernel: it is in the id instead).
enum class ParamKind : uint8_t { Buffer, Tensor, Scalar, Comptime };

// A comptime argument's value: its scalar type and bits (enums as their underlying integer).
struct ComptimeBits {
  ir::Scalar type = ir::Scalar::Bool;
  bool is_enum = false;
  uint64_t bits = 0;
  friend bool operator==(const ComptimeBits&, const ComptimeBits&) = default;
  std::string to_string() const;
  // As a field of a key (common/key.h): its type and flag in one number, its bits in another.
  template <class Sink>
  void key_parts(Sink& s) const {
    s.integer(uint64_t(type) | uint64_t(is_enum) << 8);
    s.integer(bits);
  }
};

// One parameter as a kernel declares it, in the order of its signature.
struct ParamSpec {
  std::string name;  // K::param_names[i] or "argI"; a recorded program's parameter name
  ParamKind kind = ParamKind::Scalar;
  // The element's scalar. For a comptime parameter, the scalar its value is checked and converted
  // through: the C++ type's own, or the element of the same width for an integer type that is no
  // kiln element (long long), f64 for long double, i64 for an enum.
  ir::Scalar element = ir::Scalar::Bool;
  bool read_only = false;  // buffers and tensors
  bool vector = false;     // a Vector<T> element: as wide as the launch's vector width
  uint8_t width = 1;       // otherwise the element's lanes (a recorded program's vector buffer)
  uint8_t rank = 0;        // a recorded program's tensor: its rank (a C++ kernel's comes from the argument)
  int8_t ir_index = -1;    // the kernel parameter it becomes; -1 for a comptime parameter
  const std::type_info* enum_type = nullptr;  // a comptime enum's type
  uint8_t integer_bits = 0;                   // a comptime C++ type that is no kiln element: its width, for messages
};

// A kernel's parameters and what it is: a C++ kernel type (signature_of<K>(), one per type) or a
// program recorded at run time (Program::signature()).
struct KernelSignature {
  std::string_view name;
  const std::type_info* type = nullptr;  // a C++ kernel's type, template arguments included
  const Program* program = nullptr;      // a recorded program
  // The kernel's own hash: a C++ kernel type's hash_code (computed once here, not per launch), or
  // a recorded program's content hash.
  uint64_t kernel_hash = 0;
  ir::Kernel (*define)(const KernelId&) = nullptr;  // traces a C++ kernel
  uint8_t count = 0;                                // parameters, comptime ones included
  uint8_t ir_count = 0;                             // kernel parameters (without the comptime ones)
  ir::FastMath fast_math{};                         // K::fast_math, or a recorded program's own choice
  uint8_t cubes_per_processor = 0;                  // K::cubes_per_processor, or a program's (0: none)
  std::array<ParamSpec, kMaxParams> params{};
};

// One parameter of one launch, known at run time, in the order of the kernel's signature. The
// runtime makes these from the launch's arguments; a tool or test that traces without launching
// makes them from the signature (default_descs, param_descs<K>) and fills in what a launch would
// give.
struct ParamDesc {
  ParamKind kind = ParamKind::Scalar;
  ir::Scalar element = ir::Scalar::Bool;  // buffers, tensors, scalars
  uint8_t width = 1;                      // lanes per element (a vector buffer: the launch's width)
  uint8_t rank = 0;                       // tensors
  ComptimeBits comptime{};                // comptime parameters: the value
  // Buffers and tensors at a launch: the memory the argument views (0: none known) and the bytes
  // [begin, end) it shows; two parameters that show overlapping bytes of one memory are aliased.
  uint64_t memory = 0;
  uint64_t begin = 0, end = 0;
};

// The compile-time facts of a launch (the rest of a launch configuration, the cube count, is not).
struct LaunchFacts {
  ir::Dim3 cube_dim;
  ir::ExecMode mode = ir::ExecMode::Checked;
  ir::AddressType address = ir::AddressType::U32;
  uint8_t vector_width = 1;
};

using ParamScalars = std::array<ir::Scalar, kMaxParams>;
using ParamCounts = std::array<uint8_t, kMaxParams>;
using ComptimeValues = std::array<ComptimeBits, kMaxComptime>;

// The fields whose values make an id, each listed once, X(type, name, initial value): KernelId
// declares them from this list, finalize hashes them, operator== compares them and to_string
// prints those that differ from their initial values. Per-parameter arrays are indexed by kernel
// parameter (comptime parameters are not among them); entries past the counts stay initial.
#define KILN_KERNEL_ID_FIELDS(X)                                                                  \
  X(uint64_t, kernel_hash, 0) /* the program's content hash; a C++ kernel type's hash_code */     \
  X(ir::Dim3, cube_dim, {})                                                                       \
  X(ir::ExecMode, mode, ir::ExecMode::Checked)                                                    \
  X(ir::AddressType, address, ir::AddressType::U32)                                               \
  X(ir::FastMath, fast_math, {})     /* the kernel's own choice: ids that differ compile apart */ \
  X(uint8_t, cubes_per_processor, 0) /* the kernel's own choice too */                            \
  X(uint8_t, vector_width, 1)                                                                     \
  X(uint8_t, param_count, 0) /* kernel parameters */                                              \
  X(uint8_t, comptime_count, 0)                                                                   \
  X(ParamScalars, element, {})    /* each parameter's element scalar */                           \
  X(ParamCounts, width, {})       /* buffers and tensors: lanes per element */                    \
  X(ParamCounts, rank, {})        /* tensors' rank */                                             \
  X(ParamCounts, alias, {})       /* buffers: 1 + the lowest other sharing its memory, or 0 */    \
  X(ComptimeValues, comptime, {}) /* the first comptime_count */

// Fixed-size on purpose: building and hashing an id on the launch path allocates nothing.
struct KernelId {
  // What the kernel is, compared by identity rather than by value: its C++ type, or its program
  // (equal ids have equal program text), and the name only when there is neither.
  const std::type_info* type = nullptr;  // a C++ kernel's type (template arguments included)
  const Program* program = nullptr;      // a recorded program
  std::string_view name;                 // K::name, or the program's kernel name
#define KILN_X(type, field, init) type field = init;
  KILN_KERNEL_ID_FIELDS(KILN_X)
#undef KILN_X
  uint64_t hash = 0;  // set by finalize()

  void finalize();
  bool operator==(const KernelId& o) const;
  // "add{mode=checked, cube_dim=[6,1,1], vector=1, address=u32, comptime0=true, hash=...}" for logs;
  // a recorded program's id also shows "program=<content hash>".
  std::string to_string() const;
};

struct KernelIdHash {
  size_t operator()(const KernelId& id) const { return static_cast<size_t>(id.hash); }
};

// An id from descriptors, checked (assembled by assemble_kernel_id, below). `params` holds one descriptor per signature
// parameter, in signature order: a comptime descriptor's value goes to the id's comptime list, every other one becomes
// kernel parameter `ir_index` (its element, width and rank; aliasing from the memory ranges). The descriptors must
// agree with the signature: Error{launch.arity} for another count, {launch.kind_mismatch} for another kind,
// {launch.type_mismatch} for another element (the runtime checks arguments before it describes them, with messages
// about the arguments).
KernelId make_kernel_id(const KernelSignature& sig, const LaunchFacts& facts, std::span<const ParamDesc> params);
// The same id without checking each descriptor against its parameter: for the runtime's launch,
// whose descriptors are made from the signature itself once each argument has been checked
// (bind_launch), so that a launch does not check every parameter twice.
KernelId assemble_kernel_id(const KernelSignature& sig, const LaunchFacts& facts, std::span<const ParamDesc> params);

// The descriptors of a launch at `vector_width` that has no arguments: kinds, elements and widths
// from the signature; tensors' ranks, comptime values and memory are the caller's to fill in.
std::vector<ParamDesc> default_descs(const KernelSignature& sig, int vector_width);

// The launch facts a traced or recorded kernel is specialised with: cube_dim, mode, address,
// vector width and aliasing, from its id.
ir::KernelFacts kernel_facts(const KernelId& id);

// Parameter i as launch errors name it: "x: Slice<const f32>" (a C++ kernel's parameter, as its
// C++ type), "x: buffer<vector<4 x f32>, ro>" (a recorded program's, as its IR type).
std::string describe_param(const KernelSignature& sig, size_t i);
// "kernel 'scale', argument 1 (x: Slice<const f32>): ", how every argument error begins.
std::string argument_head(const KernelSignature& sig, size_t i);
// Error{launch.arity}: "kernel 'scale' takes 3 arguments (a: Scalar<f32>, ...), 2 were given".
[[noreturn]] void throw_arity(const KernelSignature& sig, size_t given);

// The comptime bits of a C++ value.
template <class T>
ComptimeBits comptime_bits(T v) {
  ComptimeBits b;
  if constexpr (std::is_enum_v<T>) {
    b.is_enum = true;
    b.type = ir::Scalar::I64;
    b.bits = static_cast<uint64_t>(static_cast<int64_t>(v));
  } else if constexpr (std::is_same_v<T, bool>) {
    b.type = ir::Scalar::Bool;
    b.bits = v ? 1 : 0;
  } else if constexpr (std::is_floating_point_v<T>) {
    b.type = ir::Scalar::F64;
    double d = static_cast<double>(v);
    std::memcpy(&b.bits, &d, sizeof d);
  } else if constexpr (std::is_signed_v<T>) {
    b.type = ir::Scalar::I64;
    b.bits = static_cast<uint64_t>(static_cast<int64_t>(v));
  } else {
    b.type = ir::Scalar::U64;
    b.bits = static_cast<uint64_t>(v);
  }
  return b;
}

template <class T>
T comptime_value(const ComptimeBits& b) {
  if constexpr (std::is_enum_v<T>) {
    return static_cast<T>(static_cast<int64_t>(b.bits));
  } else if constexpr (std::is_same_v<T, bool>) {
    return b.bits != 0;
  } else if constexpr (std::is_floating_point_v<T>) {
    double d;
    std::memcpy(&d, &b.bits, sizeof d);
    return static_cast<T>(d);
  } else {
    return static_cast<T>(b.bits);
  }
}

}  // namespace kiln
