// The fusion of elementwise chains (kiln/tensor/fusion.h, decision 023): the pending steps that
// ops record when fusion is on, and the run of a chain as one kernel.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "kiln/tensor/ops.h"
#include "tensor/elementwise.h"

namespace kiln::tensor {

// One op's call, recorded and not run: its operands are tensors that have their values, earlier
// steps, or numbers (already converted to the op's element type). A pending Tensor holds its step;
// the step holds its inputs until it runs, then only its result.
struct Pending {
  enum class Kind : uint8_t { Tensor, Step, Number };
  struct Input {
    Kind kind = Kind::Tensor;
    bool owned = false;  // given by std::move: the chain's result may take its memory
    Tensor tensor;
    std::shared_ptr<Pending> step;
    ScalarValue number;
  };

  OpInfo* op = nullptr;
  DType in = DType::F32;
  DType out = DType::F32;
  Shape shape;
  Client client{nullptr};
  std::vector<Input> inputs;
  int steps = 1;       // steps in the chain up to here, a shared one counted per use: the chain's limit
  int operands = 0;    // tensor and number inputs of those steps, counted likewise
  bool done = false;   // run: `result` holds the value, `inputs` are gone
  Tensor result;
};

// The op's call as a pending tensor (fusion on; the call is checked). Operands given by std::move
// are taken into the step.
Tensor record_pending(OpInfo& info, std::span<Operand> operands, const Checked& checked);

// The value of a pending tensor: runs its chain unless it has run, then releases `pending` (the
// tensor's own reference) and answers the result (taken, when that was the last reference, so
// that the tensor alone holds its memory).
Tensor take_result(std::shared_ptr<Pending>& pending);

// Runs every pending chain that reads the memory `memory_id` (before something writes into it).
void flush_readers(uint64_t memory_id);

}  // namespace kiln::tensor
