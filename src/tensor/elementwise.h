// The elementwise engine that eager ops and fused chains share: what an op takes (OpInfo), the
// checks of its operands, and the launch of a walk over the result's shape (the result's memory,
// the walk's order and folding, the vector width, the arguments).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "kiln/kernel_id.h"
#include "kiln/tensor/ops.h"
#include "tensor/kernels.h"
#include "tensor/layout.h"

namespace kiln::tensor {

enum class Needs { Any, Numbers, Signed, Floats };

// An op: its name, what it takes, what it computes, and the kernels recorded for it, by the facts
// that make them differ (KernelFacts::key), searched in order (an op has a handful; a deque, so
// that a launch may hold a reference to one while another thread adds one).
struct OpInfo {
  const char* name;
  Needs needs;
  bool to_bool;  // the result is a bool tensor
  ElementFn fn;
  bool condition_first = false;  // operand 0 is a bool tensor, the others share the element type (where)
  std::mutex mutex;
  std::deque<std::pair<common::Key, KernelRef>> kernels;

  OpInfo(const char* n, Needs ne, bool b, ElementFn f) : name(n), needs(ne), to_bool(b), fn(std::move(f)) {}
};

// What an op may ask of the result beyond the defaults.
struct ResultRule {
  std::optional<DType> dtype;       // another element type than the operands' (cast)
  bool row_major = false;           // new memory, row-major, whatever the operands' order (into_contiguous)
  const Tensor* dest = nullptr;     // the result goes into this view's elements (assign)
  const DimOrder* order = nullptr;  // new memory in this order (a pending step's, as recorded)
};

// An op's call, checked: the operands' element type, the result's, the broadcast shape (the
// destination's, for assign) and the client. Both point into the call's operands where they can:
// an op whose operands share one shape copies no shape, and takes no reference to the client.
// They are valid until an operand is taken (a given tensor moved into a result or a step).
struct Checked {
  DType in = DType::F32;
  DType out = DType::F32;
  const Shape* shape = nullptr;  // an operand's, the destination's, or `broadcast`
  Shape broadcast;               // set when the operands' shapes differ
  const Client* client = nullptr;

  Checked() = default;
  Checked(DType i, DType o, const Shape& s, const Client& c) : in(i), out(o), shape(&s), client(&c) {}
  // Not copied: `shape` may point at this object's own `broadcast`.
  Checked(const Checked&) = delete;
  Checked& operator=(const Checked&) = delete;
};

// Every check of an elementwise call that does not need the operands' memory: defined tensors,
// one element type and client, the op's dtypes, numbers that the element type holds, shapes that
// broadcast (to the destination's). Throws the tensor.* errors.
void check_elementwise(const OpInfo& info, std::span<Operand> operands, const ResultRule& rule, Checked& checked);

// The order in which new memory lays out a result of `shape`: the one that the operands of that
// shape vote for, weighed by their bytes (a pending operand by the order recorded for it; an
// expanded one does not vote); row-major when none has the shape, or when the top orders tie.
DimOrder voted_order(std::span<Operand> operands, const Shape& shape);

// A walk's kernel takes its inputs (tensors and numbers), its outputs and the count: at most
// kMaxParams parameters in all, and at most kMaxWalkOutputs outputs.
inline constexpr size_t kMaxWalkParams = size_t(kMaxParams);
inline constexpr size_t kMaxWalkInputs = kMaxWalkParams - 2;
inline constexpr size_t kMaxWalkOutputs = 4;

// The kernel for a walk of `rank` dims (or, with width > 0, a contiguous walk in vectors), kept
// to exit (a reference: a launch copies no KernelRef).
using WalkKernel = std::function<const KernelRef&(int rank, int width)>;

// Launches one kernel over the walk of `shape`: `inputs` (tensors broadcast to it, or numbers),
// then one output per `out_types`. Output 0 goes where `rule` says, else into the memory of an
// input given by std::move that holds its memory alone, has the shape and element type and does
// not overlap itself, else into new memory in the order the inputs of that shape vote for; the
// other outputs get new memory in output 0's order. `results` receives the outputs (an input's
// tensor is taken only once the launch has been issued).
void launch_walk(const char* op, const Client& client, std::span<Operand> inputs, const Shape& shape,
                 std::span<const DType> out_types, const ResultRule& rule, const WalkKernel& kernel,
                 std::span<Tensor> results);

// The op's own kernel over checked operands, launched now.
Tensor run_eager(OpInfo& info, std::span<Operand> operands, const ResultRule& rule, const Checked& checked);

}  // namespace kiln::tensor
