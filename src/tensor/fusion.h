// The fusion of elementwise chains (kiln/tensor/fusion.h, decision 023): the pending steps that
// ops record when fusion is on, and the run of a chain as one kernel.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "kiln/tensor/ops.h"
#include "tensor/elementwise.h"
#include "tensor/layout.h"

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

  Pending();
  ~Pending();
  Pending(const Pending&) = delete;
  Pending& operator=(const Pending&) = delete;

  OpInfo* op = nullptr;
  DType in = DType::F32;
  DType out = DType::F32;
  Shape shape;
  DimOrder order;  // the memory order the op's own result would have (its operands' vote)
  Client client{nullptr};
  std::vector<Input> inputs;
  // The chain's size up to here, for its limits: its distinct steps (a step read by several
  // counted once), its distinct inputs (a tensor view or a number once however often read), the
  // bytes of the distinct tensors given to it (which eager ops would have freed). Each is an upper
  // bound, exact whenever it was measured by walking the chain (record_pending walks only when a
  // bound passes a limit, so that the op's path stays short).
  int steps = 1;
  int operands = 0;
  int64_t taken_bytes = 0;
  // `steps` was the exact count when `generation` was the number of chain runs so far: it still is
  // while no chain has run since (a run can take steps out of this chain).
  bool steps_exact = true;
  uint64_t generation = 0;
  uint64_t mark = 0;              // the last walk over chains that visited this step (each walk draws a new number)
  std::atomic<bool> done{false};  // run: `result` holds the value, `inputs` are gone
  bool failed = false;            // its last run threw: sync and flush leave it to its own use, which throws again
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
