// The kernels of tests/dsl/kernels.h with the KernelIds they are traced for, as named cases: the
// golden test compares each case's traced IR (for the *_promoted cases, after promote_vars) with
// tests/dsl/golden/<name>.kir, and the verify test runs every case (and the id tests' kernels)
// through ir::verify.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "dsl/kernels.h"
#include "kiln/ir/kernel.h"
#include "kiln/passes/passes.h"

namespace kiln::test {

// An id of K for a launch: cube_dim, vector width and mode; comptime values and ranks are set by
// the caller before finalize() where K has them.
template <class K>
KernelId id_of(ir::Dim3 cube_dim, int vector_width = 1, ir::ExecMode mode = ir::ExecMode::Checked) {
  KernelId id = kernel_id_base<K>();
  id.cube_dim = cube_dim;
  id.vector_width = static_cast<uint8_t>(vector_width);
  id.mode = mode;
  id.finalize();
  return id;
}

inline KernelId add_id(ir::ExecMode mode, bool relu) {
  KernelId id = kernel_id_base<Add>();
  id.cube_dim = {6, 1, 1};
  id.mode = mode;
  id.comptime_count = 1;
  id.comptime[0] = comptime_bits(relu);
  id.finalize();
  return id;
}

inline KernelId transpose_id() {
  KernelId id = kernel_id_base<Transpose>();
  id.cube_dim = {16, 16, 1};
  id.address = ir::AddressType::U64;
  id.rank[0] = 2;
  id.rank[1] = 2;
  id.finalize();
  return id;
}

inline ir::Kernel promoted(ir::Kernel k) {
  passes::promote_vars(k);
  return k;
}

struct TracedCase {
  std::string name;  // the golden file is golden/<name>.kir
  std::function<ir::Kernel()> trace;
};

// gtest names a failing parameter by this.
inline void PrintTo(const TracedCase& c, std::ostream* os) { *os << c.name; }

inline std::vector<TracedCase> traced_cases() {
  using ir::ExecMode;
  return {
      {"saxpy_f32_vector4", [] { return define<Saxpy<float>>(id_of<Saxpy<float>>({4, 1, 1}, 4)); }},
      {"add_relu", [] { return define<Add>(add_id(ExecMode::Checked, true)); }},
      {"add_no_relu", [] { return define<Add>(add_id(ExecMode::Checked, false)); }},
      {"add_no_relu_unchecked", [] { return define<Add>(add_id(ExecMode::Unchecked, false)); }},
      {"classify_if_elseif_else", [] { return define<Classify>(id_of<Classify>({64, 1, 1})); }},
      {"loops_attributes_and_var", [] { return define<Loops>(id_of<Loops>({32, 1, 1})); }},
      {"collatz_while_break_continue", [] { return define<Collatz>(id_of<Collatz>({16, 1, 1})); }},
      {"broadcast_vector4", [] { return define<Broadcast>(id_of<Broadcast>({8, 1, 1}, 4)); }},
      {"reverse_block_shared", [] { return define<ReverseBlock>(id_of<ReverseBlock>({256, 1, 1})); }},
      {"local_sum", [] { return define<LocalSum>(id_of<LocalSum>({32, 1, 1})); }},
      {"histogram_atomics", [] { return define<Histogram>(id_of<Histogram>({64, 1, 1})); }},
      {"plane_ops", [] { return define<PlaneOps>(id_of<PlaneOps>({64, 1, 1})); }},
      {"transpose_tensor", [] { return define<Transpose>(transpose_id()); }},
      {"math_fns", [] { return define<MathFns>(id_of<MathFns>({32, 1, 1})); }},
      {"casts", [] { return define<Casts>(id_of<Casts>({32, 1, 1})); }},
      {"debug_print", [] { return define<Debug>(id_of<Debug>({2, 1, 1})); }},
      {"var_assigned_in_both_branches", [] { return define<BothBranches>(id_of<BothBranches>({32, 1, 1})); }},
      {"element_copy_then_store", [] { return define<ElementCopy>(id_of<ElementCopy>({32, 1, 1})); }},
      {"plain_store_records_no_load", [] { return define<PlainStore>(id_of<PlainStore>({32, 1, 1})); }},
      // After passes::promote_vars, the first pass of the pipeline: the Vars above as loop arguments
      // and results and as if results.
      {"loops_attributes_and_var_promoted", [] { return promoted(define<Loops>(id_of<Loops>({32, 1, 1}))); }},
      {"collatz_while_break_continue_promoted",
       [] { return promoted(define<Collatz>(id_of<Collatz>({16, 1, 1}))); }},
      {"local_sum_promoted", [] { return promoted(define<LocalSum>(id_of<LocalSum>({32, 1, 1}))); }},
      {"var_assigned_in_both_branches_promoted",
       [] { return promoted(define<BothBranches>(id_of<BothBranches>({32, 1, 1}))); }},
  };
}

}  // namespace kiln::test
