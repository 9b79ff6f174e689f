// The tensor library's kernels. Each is recorded through the dsl's tracer for the element types,
// rank and operand kinds of a call, at run time, and kept: the next call with the same facts
// launches the same program without recording it again (and the device's cache compiles each
// program once). Recording by run-time element type is what lets one op serve every dtype without
// a switch over template instantiations.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/key.h"
#include "kiln/dsl/trace.h"
#include "kiln/kernel_ref.h"
#include "kiln/tensor/tensor.h"

namespace kiln::tensor {

// An operand of an elementwise kernel: a strided tensor or a run-time number.
enum class OperandKind : uint8_t { Tensor, Scalar };

// What an elementwise kernel computes from its operands' values, at trace time.
using ElementFn = std::function<dsl::ValueRef(dsl::Tracer&, const std::vector<dsl::ValueRef>&)>;

struct ElementwiseSpec {
  std::string name;                // the kernel's name: "tensor_add"
  std::vector<OperandKind> kinds;  // one per input
  std::vector<DType> dtypes;       // one per input
  DType out = DType::F32;
  int rank = 1;  // of the walk (every tensor operand and the output)
  // 0: a strided walk of `rank` dims. 1, 2 or 4 with rank 1: every tensor is contiguous in the
  // walk, read and written as vectors of `width` elements through plain buffers (no index
  // arithmetic). 2 or 4 with rank 2 or more: a strided walk whose innermost dim every tensor steps
  // through contiguously, in vectors of `width` (tensors of vectors: strides count vectors).
  int width = 0;
  const ElementFn* fn = nullptr;  // out = fn(inputs), lanewise on vectors
  common::Key key() const;        // what makes two specs the same kernel (fn is named by `name`)
};

// A walk's kernel in general: inputs (tensors or numbers), steps that each compute one op's
// ElementFn from inputs and earlier steps (rounded to the step's element type, as the op's own
// kernel stores it), and outputs that store steps. An op's kernel is one step; a fused chain is
// many, its intermediate values kept in registers.
struct WalkStep {
  std::string op;  // the op's name, which names its ElementFn in the key
  const ElementFn* fn = nullptr;
  DType out = DType::F32;
  std::vector<int> args;  // each >= 0: input i; < 0: step -(arg + 1)
};

struct WalkSpec {
  std::string name;                // the kernel's name: "tensor_fused_mul_add_gelu"
  std::vector<OperandKind> kinds;  // one per input
  std::vector<DType> dtypes;       // one per input
  std::vector<WalkStep> steps;     // inputs before users
  std::vector<int> outputs;        // the steps stored, one output parameter each, in order
  int rank = 1;
  int width = 0;  // as ElementwiseSpec's
  common::Key key() const;
};

// The kernel of `spec`: parameters are the inputs, the outputs ("out", or "out0".. when there are
// several) and the count, laid out as elementwise_kernel's.
const KernelRef& walk_kernel(const WalkSpec& spec);

// The kernel of `spec`. Strided: parameters are the inputs (tensors of `rank`, or scalars), the
// output (a tensor of `rank`) and the element count (u32); unit i computes the i-th element of the
// walk (row-major over the output's shape) from each tensor operand's strides; with width > 1, the
// tensors are tensors of vectors along the innermost dim (strides count vectors) and unit i
// computes the i-th vector. Contiguous (rank 1, width > 0): the tensors are buffers of vectors of
// `width` and the count is in vectors; unit i computes vector i.
const KernelRef& elementwise_kernel(const ElementwiseSpec& spec);

// Helpers for recording the library's kernels.
// A constant of type d: v as a float for float types, its integer value otherwise.
dsl::ValueRef constant(dsl::Tracer& t, DType d, double v);
// A constant of type d from its bits (u64 masks and multipliers beyond 2^53).
dsl::ValueRef constant_bits(dsl::Tracer& t, DType d, int64_t bits);
// The coordinates of linear position `pos` over dims [first, last) of `shape_of`'s shape, the
// last dim fastest; the first dim takes what is left (so its own length is not read).
std::vector<dsl::ValueRef> coordinates(dsl::Tracer& t, const dsl::ValueRef& pos, const dsl::ValueRef& shape_of,
                                       int first, int last);
// Σ coords[i] * stride(tensor, first + i), from `base`.
dsl::ValueRef offset(dsl::Tracer& t, const dsl::ValueRef& tensor, const std::vector<dsl::ValueRef>& coords, int first,
                     dsl::ValueRef base);

// The kernel kept under `key` (the fields that make it), recording it with `record` the first time.
// Kept to exit: the reference stays valid.
const KernelRef& cached_kernel(const common::Key& key, const std::function<ir::Kernel()>& record);

// Every kernel recorded so far: for the tests that compile them for CUDA.
std::vector<KernelRef> recorded_kernels();

}  // namespace kiln::tensor
