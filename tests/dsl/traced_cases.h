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

// An id of K for a launch (cube_dim, vector width, mode) with no comptime values or tensors.
template <class K>
KernelId id_of(ir::Dim3 cube_dim, int vector_width = 1, ir::ExecMode mode = ir::ExecMode::Checked) {
  return kernel_id<K>(LaunchFacts{cube_dim, mode, ir::AddressType::U32, uint8_t(vector_width)},
                      param_descs<K>(vector_width));
}

inline std::vector<ParamDesc> add_descs(bool relu) {
  std::vector<ParamDesc> d = param_descs<Add>();
  d[3].comptime = comptime_bits(relu);
  return d;
}
inline KernelId add_id(ir::ExecMode mode, bool relu) {
  return kernel_id<Add>(LaunchFacts{{6, 1, 1}, mode}, add_descs(relu));
}

// Transpose's tensors at rank 2 (or `rank_in` for the input).
inline KernelId transpose_id(uint8_t rank_in = 2) {
  std::vector<ParamDesc> d = param_descs<Transpose>();
  d[0].rank = rank_in;
  d[1].rank = 2;
  return kernel_id<Transpose>(LaunchFacts{{16, 16, 1}, ir::ExecMode::Checked, ir::AddressType::U64}, d);
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
      {"saxpy_f32_vector4",
       [] {
         return define<Saxpy<float>>(id_of<Saxpy<float>>({4, 1, 1}, 4));
       }},
      {"add_relu", [] { return define<Add>(add_id(ExecMode::Checked, true)); }},
      {"add_no_relu", [] { return define<Add>(add_id(ExecMode::Checked, false)); }},
      {"add_no_relu_unchecked", [] { return define<Add>(add_id(ExecMode::Unchecked, false)); }},
      {"classify_if_elseif_else",
       [] {
         return define<Classify>(id_of<Classify>({64, 1, 1}));
       }},
      {"loops_attributes_and_var",
       [] {
         return define<Loops>(id_of<Loops>({32, 1, 1}));
       }},
      {"loop_vectorize_at_least_once",
       [] {
         return define<ScaleLoop>(id_of<ScaleLoop>({32, 1, 1}));
       }},
      {"collatz_while_break_continue",
       [] {
         return define<Collatz>(id_of<Collatz>({16, 1, 1}));
       }},
      {"broadcast_vector4",
       [] {
         return define<Broadcast>(id_of<Broadcast>({8, 1, 1}, 4));
       }},
      {"reverse_block_shared",
       [] {
         return define<ReverseBlock>(id_of<ReverseBlock>({256, 1, 1}));
       }},
      {"local_sum",
       [] {
         return define<LocalSum>(id_of<LocalSum>({32, 1, 1}));
       }},
      {"histogram_atomics",
       [] {
         return define<Histogram>(id_of<Histogram>({64, 1, 1}));
       }},
      {"plane_ops",
       [] {
         return define<PlaneOps>(id_of<PlaneOps>({64, 1, 1}));
       }},
      {"transpose_tensor", [] { return define<Transpose>(transpose_id()); }},
      {"math_fns",
       [] {
         return define<MathFns>(id_of<MathFns>({32, 1, 1}));
       }},
      {"casts",
       [] {
         return define<Casts>(id_of<Casts>({32, 1, 1}));
       }},
      {"debug_print",
       [] {
         return define<Debug>(id_of<Debug>({2, 1, 1}));
       }},
      {"var_assigned_in_both_branches",
       [] {
         return define<BothBranches>(id_of<BothBranches>({32, 1, 1}));
       }},
      {"element_copy_then_store",
       [] {
         return define<ElementCopy>(id_of<ElementCopy>({32, 1, 1}));
       }},
      {"plain_store_records_no_load",
       [] {
         return define<PlainStore>(id_of<PlainStore>({32, 1, 1}));
       }},
      // After passes::promote_vars, the first pass of the pipeline: the Vars above as loop arguments
      // and results and as if results.
      {"loops_attributes_and_var_promoted",
       [] {
         return promoted(define<Loops>(id_of<Loops>({32, 1, 1})));
       }},
      {"collatz_while_break_continue_promoted",
       [] {
         return promoted(define<Collatz>(id_of<Collatz>({16, 1, 1})));
       }},
      {"local_sum_promoted",
       [] {
         return promoted(define<LocalSum>(id_of<LocalSum>({32, 1, 1})));
       }},
      {"var_assigned_in_both_branches_promoted",
       [] {
         return promoted(define<BothBranches>(id_of<BothBranches>({32, 1, 1})));
       }},
  };
}

}  // namespace kiln::test
