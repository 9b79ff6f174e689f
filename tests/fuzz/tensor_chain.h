// The tensor family's cases (docs/fuzz.md): a chain of tensor ops over odd views, as data, so
// that the generator (tensor_generator.cpp) makes it, the host reference (tensor_reference.cpp)
// computes it without kiln's tensor library, and tensor_family.cpp runs it on a device.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/tensor.h"

namespace kiln::fuzz::tensor_chain {

enum class StepKind { Input, SwapDims, Permute, Slice, Expand, Unary, Binary, Where, Cast, Reduce, Rows, Matmul };

// An operand of a step: an earlier step's tensor, or a number (exact in every float type, so that
// its conversion to the tensor's type cannot round).
struct Arg {
  int node = -1;  // -1: the number
  double number = 0;
  bool is_number() const { return node < 0; }
};

struct Step {
  StepKind kind = StepKind::Input;
  std::string op;  // "add", "exp", "sum", "softmax", ... (Unary, Binary, Reduce, Rows)
  std::vector<Arg> args;
  // SwapDims: the two dims; Permute: the order; Slice: dim, start, end, step; Expand: the shape;
  // Reduce: the dim (none: every dim); Rows: the dim.
  std::vector<int64_t> dims;
  bool keepdim = false;
  int input = -1;       // Input: which of Chain::inputs
  uint64_t choice = 0;  // Matmul: picks the variant among those the call has
  DType dtype = DType::F32;
  Shape shape;  // the result's
};

struct Input {
  DType dtype = DType::F32;
  Shape shape;
  std::vector<unsigned char> bytes;  // row-major
};

struct Chain {
  uint64_t seed = 0;
  bool fused = true;  // fusion::set_enabled for the whole case
  bool hold = false;  // every step's tensor kept (and compared); else a last use takes it by std::move
  std::vector<Input> inputs;
  std::vector<Step> steps;  // step i makes node i; the last one is the chain's result
};

Chain generate(uint64_t seed);
// The same chain over other values (the same shapes, types and views), for the triviality check.
Chain with_other_inputs(const Chain& c, uint64_t seed);
// The chain as text: inputs, steps with their shapes and types, the fusion mode.
std::string describe(const Chain& c);
// The reference's own float conversions (tensor_reference.cpp): `x` rounded to nearest even in
// `d`; an f16 or bf16 value's bits and back.
double round_to(DType d, long double x);
uint16_t half_bits(DType d, double v);
double from_half_bits(DType d, uint16_t bits);
// How many bytes an element of `d` takes.
inline size_t element_bytes(DType d) { return size_t(ir::scalar_bytes(d)); }

// The reference's values of a node, row-major. Floats are held exactly in `f` (every f16, bf16
// and f32 value is a double), integers and bools in `i`. Per element: how far the reference
// vouches for it, and for an approximate one, the bound on |kiln - reference|.
enum class Trust : uint8_t { Exact, Approximate, Unknown };
struct Values {
  DType dtype = DType::F32;
  Shape shape;
  std::vector<double> f;
  std::vector<int64_t> i;
  std::vector<double> err;
  std::vector<Trust> trust;
  size_t size() const { return trust.size(); }
};

// Every node's values, computed on the host from the chain alone.
std::vector<Values> reference(const Chain& c);

// The nodes a run reads back and compares: the result, and with `hold` every op's result too.
std::vector<int> compared_nodes(const Chain& c);

}  // namespace kiln::fuzz::tensor_chain
