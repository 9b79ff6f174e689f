// The running statistics of the row kernels that read a row in pieces (rows_tiled.cpp, whose
// units each take some columns of a row, and rows_split.cpp, whose cubes each take a chunk of
// one): softmax's (maximum, sum of exp(x - maximum)) and layer_norm's Welford (count, mean,
// squared deviations), how two partials combine, how a cube folds its planes' partials, and what
// the op writes once a row's statistics are known; and the parameters every row kernel takes.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "kiln/dsl/trace.h"
#include "tensor/row_spec.h"

namespace kiln::tensor {

// The parameters of every row kernel, in order: in, weight and bias where the spec has them, out
// (both of rank `rank`), cols (the row's length) and, for layer_norm, eps.
struct RowParams {
  dsl::ValueRef in, weight, bias, out, cols, eps;
};
RowParams declare_row_params(dsl::Tracer& t, const RowSpec& s, int rank);

class RowStats {
 public:
  using Values = std::vector<dsl::ValueRef>;

  RowStats(dsl::Tracer& t, RowOp op, DType acc);

  int count() const { return statistics_of(op_); }
  // Variables holding an empty partial.
  Values declare();
  // The empty partial: softmax's (-inf, 0), layer_norm's zeros.
  Values empty();
  Values load(const Values& vars);
  void store(const Values& vars, const Values& v);
  // The partial in `vars` with element x (in the acc type) added: one exp an element.
  void add(const Values& vars, const dsl::ValueRef& x);
  // The partial of the values xs[i] where valid[i] holds, all known at once (a unit's share of a
  // chunk it keeps in registers): softmax's maximum first, then one exp a value, summed; layer_norm's
  // count and mean, then the squared deviations from that mean. No chain of dependent exps, as
  // adding them one by one would make. With no flags, every value counts.
  Values of_values(const Values& xs, const Values& valid);
  // Softmax over values a unit holds (the held kernel, in registers and in shared memory): the
  // unit's m is `maximum` of them; each value's e = exp(x - shift) (the one exp an element) adds
  // to s (`total` of them) and is kept for the output, e * exp(m - M) / S once the row's (M, S)
  // are known. Where m is finite, shift is m. Where it is not (the unit's values are -inf or NaN,
  // or hold +inf), shift is 0, which makes an empty partial of -inf values and a sum of inf or NaN
  // of the others, and the unit keeps x and writes exp(x - M) / S, as `output` does.
  struct HeldShift {
    dsl::ValueRef m, finite, shift;
  };
  dsl::ValueRef maximum(const Values& xs);
  dsl::ValueRef total(const Values& xs);
  HeldShift held_shift(const dsl::ValueRef& m);
  dsl::ValueRef held_exp(const HeldShift& h, const dsl::ValueRef& x);
  // What the unit keeps of x, whose held_exp is e.
  dsl::ValueRef held_keep(const HeldShift& h, const dsl::ValueRef& e, const dsl::ValueRef& x);
  // The outputs of kept values from the row's statistics: one multiply each where the unit's m is
  // finite.
  Values held_outputs(const HeldShift& h, const Values& row, const Values& kept);
  // Two partials as one. Symmetric (either order gives the same bits: additions commute), so the
  // units of a row that exchange partials all end with one value.
  Values combine(const Values& p, const Values& q);
  // The partials of a row's lanes within a plane folded over the lane bits from `bit` up (the
  // lanes of one row differ in those bits only).
  Values fold_lanes(Values mine, uint32_t bit);
  // `count` partials (part(i), i < count) folded in a fixed tree: neighbours, then neighbouring
  // pairs, and so on, so that a fold waits on log2(count) combines in a row where a chain would
  // wait on count. The same bits wherever the same partials are folded. count >= 1.
  Values fold_tree(uint32_t count, const std::function<Values(uint32_t)>& part);
  // The planes' partials of a row folded through shared memory, in plane order (by fold_tree
  // where `tree`, for a cube that waits on the fold; else in a chain): lanes below `tile` of each
  // plane put theirs at [plane][row], then every unit folds row `row`'s. Every unit of a row ends
  // with the same bits.
  Values fold_planes(const Values& mine, uint32_t planes, uint32_t tile, const dsl::ValueRef& plane,
                     const dsl::ValueRef& lane, const dsl::ValueRef& row, bool tree = false);
  // What the op writes for element x at column j, in the acc type, from a row's statistics.
  std::function<dsl::ValueRef(const dsl::ValueRef& x, const dsl::ValueRef& j)> output(const Values& row,
                                                                                      const dsl::ValueRef& cols,
                                                                                      const dsl::ValueRef& eps,
                                                                                      const dsl::ValueRef& weight,
                                                                                      const dsl::ValueRef& bias);

 private:
  // softmax: the row's sum as docs/tensor.md's formula, sum(exp(x - max)), gives it: NaN where the
  // maximum is +inf (inf - inf), which the running sums do not give (a value equal to the maximum
  // adds exp(0) = 1 there).
  dsl::ValueRef formula_sum(const Values& row);

  dsl::ValueRef bin(ir::OpKind kind, const dsl::ValueRef& a, const dsl::ValueRef& b) { return t_.binary(kind, a, b); }

  dsl::Tracer& t_;
  RowOp op_;
  DType acc_;
  bool norm_;
};

}  // namespace kiln::tensor
