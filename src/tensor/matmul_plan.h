// What matmul works out before it picks a kernel: the product as a walk of batch dims (folded
// where the operands allow, an rhs shared by the batch turned into rows) over one [rows, k] x
// [k, n] product, each operand's strides, and the candidates that can compute it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kiln/autotune.h"
#include "kiln/tensor/tensor.h"
#include "kiln/tile/program.h"
#include "tensor/layout.h"

namespace kiln::tensor {

struct MatmulPlan {
  DType dtype = DType::F32;
  int64_t rows = 0, n = 0, k = 0;  // of one product
  // The batch walk (possibly empty) and, per operand (lhs, rhs, out), its batch strides.
  Dims batch;
  std::array<Dims, 3> batch_strides;
  // Per operand, the strides of its matrix: lhs [rows, k], rhs [k, n], out [rows, n].
  std::array<std::array<int64_t, 2>, 3> matrix_strides{};
  int64_t products() const;  // batch elements
};

// The product planned for checked operands, the output new contiguous memory of `out_shape`.
MatmulPlan plan_matmul(const Tensor& lhs, const Tensor& rhs, const Shape& out_shape);

// Every kernel that can compute the plan, each as an autotune candidate that writes `out`; the
// one-unit-per-element kernel ("naive", which takes every case) comes last. `fallback` is set to
// the one to run untuned. Without `out`, the candidates are names only (run is empty).
std::vector<autotune::Candidate> matmul_candidates(const MatmulPlan& p, const Tensor& lhs, const Tensor& rhs,
                                                   const Tensor* out, size_t* fallback);

// Whether autotune times the naive kernel for this plan beside `tiles` tile products: only where
// it may win (no tile product applies, or fewer than 2^24 multiply-adds). Past that it loses by two
// orders of magnitude, and its untimed warm-up alone was most of a cold tuning (2.25 s of 5.6 s
// at 8192^3 with a transposed rhs). matmul(a, b, "naive") still runs it at any size.
bool naive_is_tuned(const MatmulPlan& p, size_t tiles);

// The tile layer's products that can compute the plan (src/tensor/matmul_tile.cpp); `preferred`
// is set to the one to run untuned, when one is added.
void add_tile_candidates(const MatmulPlan& p, const Tensor& lhs, const Tensor& rhs, const Tensor* out,
                         std::vector<autotune::Candidate>& to, size_t* preferred);

// Every tile product recorded so far: for the tests that compile them for CUDA.
std::vector<std::shared_ptr<const tile::Traced>> recorded_tile_matmuls();

}  // namespace kiln::tensor
