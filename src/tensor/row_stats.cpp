#include "tensor/row_stats.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "tensor/kernels.h"

namespace kiln::tensor {

using dsl::ValueRef;
using K = ir::OpKind;

namespace {

// Four running values, then their sum: a dependent chain a quarter as long, with few values live
// beside the ones held (a pairwise tree would keep half of them).
ValueRef reduce_by_four(dsl::Tracer& t, const RowStats::Values& v, K kind) {
  RowStats::Values acc(v.begin(), v.begin() + std::min<ptrdiff_t>(4, ptrdiff_t(v.size())));
  for (size_t i = acc.size(); i < v.size(); ++i) acc[i % 4] = t.binary(kind, acc[i % 4], v[i]);
  for (size_t i = 1; i < acc.size(); ++i) acc[0] = t.binary(kind, acc[0], acc[i]);
  return acc[0];
}

}  // namespace

RowParams declare_row_params(dsl::Tracer& t, const RowSpec& s, int rank) {
  const ir::Type elem = ir::Type::scalar_of(s.dtype);
  RowParams p;
  p.in = t.param("in", ir::Type::tensor(elem, rank, ir::Access::ReadOnly));
  if (s.weight) p.weight = t.param("weight", ir::Type::tensor(elem, 1, ir::Access::ReadOnly));
  if (s.bias) p.bias = t.param("bias", ir::Type::tensor(elem, 1, ir::Access::ReadOnly));
  p.out = t.param("out", ir::Type::tensor(elem, rank, ir::Access::ReadWrite));
  p.cols = t.param("cols", ir::Type::scalar_of(ir::Scalar::U32));
  if (s.op == RowOp::LayerNorm) p.eps = t.param("eps", ir::Type::scalar_of(ir::compute_scalar(s.dtype)));
  return p;
}

RowStats::RowStats(dsl::Tracer& t, RowOp op, DType acc) : t_(t), op_(op), acc_(acc), norm_(op == RowOp::LayerNorm) {}

RowStats::Values RowStats::declare() {
  // softmax: (max, sum) from (-inf, 0); layer_norm: (count, mean, M2) from zeros.
  Values vars;
  for (const ValueRef& e : empty()) {
    vars.push_back(t_.var_decl(ir::Type::scalar_of(acc_)));
    t_.var_store(vars.back(), e);
  }
  return vars;
}

RowStats::Values RowStats::empty() {
  Values v;
  for (int k = 0; k < count(); ++k) v.push_back(constant(t_, acc_, k == 0 && !norm_ ? -INFINITY : 0.0));
  return v;
}

RowStats::Values RowStats::load(const Values& vars) {
  Values v;
  for (const ValueRef& var : vars) v.push_back(t_.var_load(var));
  return v;
}

void RowStats::store(const Values& vars, const Values& v) {
  for (size_t k = 0; k < vars.size(); ++k) t_.var_store(vars[k], v[k]);
}

void RowStats::add(const Values& vars, const ValueRef& x) {
  const ValueRef zero = constant(t_, acc_, 0), one = constant(t_, acc_, 1);
  if (norm_) {
    ValueRef n = bin(K::Add, t_.var_load(vars[0]), one);
    ValueRef d = bin(K::Sub, x, t_.var_load(vars[1]));
    ValueRef mean = bin(K::Add, t_.var_load(vars[1]), bin(K::Div, d, n));
    t_.var_store(vars[2], bin(K::Add, t_.var_load(vars[2]), bin(K::Mul, d, bin(K::Sub, x, mean))));
    t_.var_store(vars[1], mean);
    t_.var_store(vars[0], n);
    return;
  }
  // (m, s) with x: one exp, of minus the distance between x and m. Past the maximum, the sum is
  // rescaled to x (s * e + 1) and x is the maximum; below it, s + e. Equal values (-inf and -inf
  // too, which would make NaN of exp(-inf - -inf)) add exp(0) = 1.
  ValueRef m = t_.var_load(vars[0]), sum = t_.var_load(vars[1]);
  ValueRef d = bin(K::Sub, x, m);
  ValueRef e = t_.select(bin(K::Eq, x, m), one, t_.unary(K::Exp, t_.unary(K::Neg, t_.unary(K::Abs, d))));
  ValueRef above = bin(K::Gt, d, zero);
  t_.var_store(vars[1], t_.select(above, bin(K::Add, bin(K::Mul, sum, e), one), bin(K::Add, sum, e)));
  t_.var_store(vars[0], t_.select(above, x, m));
}

RowStats::Values RowStats::of_values(const Values& xs, const Values& valid) {
  auto reduce = [&](const Values& v, ir::OpKind kind) { return reduce_by_four(t_, v, kind); };
  const ValueRef zero = constant(t_, acc_, 0), one = constant(t_, acc_, 1);
  // v where value i counts, else `other`.
  auto kept = [&](size_t i, const ValueRef& v, const ValueRef& other) {
    return valid.empty() ? v : t_.select(valid[i], v, other);
  };
  Values masked;
  if (norm_) {
    Values counted;
    for (size_t i = 0; i < xs.size(); ++i) {
      counted.push_back(kept(i, one, zero));
      masked.push_back(kept(i, xs[i], zero));
    }
    ValueRef n = reduce(counted, K::Add);
    ValueRef mean = bin(K::Div, reduce(masked, K::Add), bin(K::Max, n, one));
    Values squares;
    for (size_t i = 0; i < xs.size(); ++i) {
      ValueRef d = bin(K::Sub, masked[i], mean);
      squares.push_back(kept(i, bin(K::Mul, d, d), zero));
    }
    return {n, mean, reduce(squares, K::Add)};
  }
  // Equal values (-inf beside a maximum of -inf too) add exp(0) = 1, as `add` does; a unit with no
  // valid value keeps the empty partial (-inf, 0).
  const ValueRef low = constant(t_, acc_, -INFINITY);
  for (size_t i = 0; i < xs.size(); ++i) masked.push_back(kept(i, xs[i], low));
  ValueRef m = reduce(masked, K::Max);
  Values terms;
  for (size_t i = 0; i < xs.size(); ++i) {
    ValueRef e = t_.select(bin(K::Eq, xs[i], m), one, t_.unary(K::Exp, bin(K::Sub, xs[i], m)));
    terms.push_back(kept(i, e, zero));
  }
  return {m, reduce(terms, K::Add)};
}

ValueRef RowStats::maximum(const Values& xs) { return reduce_by_four(t_, xs, K::Max); }
ValueRef RowStats::total(const Values& xs) { return reduce_by_four(t_, xs, K::Add); }

RowStats::HeldShift RowStats::held_shift(const ValueRef& m) {
  HeldShift h;
  h.m = m;
  h.finite = bin(K::Lt, t_.unary(K::Abs, m), constant(t_, acc_, INFINITY));  // NaN is not either
  // Where m is finite, exp(m - m) is exactly 1: no value needs of_values' select for
  // exp(-inf - -inf).
  h.shift = t_.select(h.finite, m, constant(t_, acc_, 0));
  return h;
}

ValueRef RowStats::held_exp(const HeldShift& h, const ValueRef& x) { return t_.unary(K::Exp, bin(K::Sub, x, h.shift)); }

ValueRef RowStats::held_keep(const HeldShift& h, const ValueRef& e, const ValueRef& x) {
  return t_.select(h.finite, e, x);
}

ValueRef RowStats::formula_sum(const Values& row) {
  return t_.select(bin(K::Eq, row[0], constant(t_, acc_, INFINITY)), constant(t_, acc_, NAN), row[1]);
}

RowStats::Values RowStats::held_outputs(const HeldShift& h, const Values& row, const Values& kept) {
  // scale = exp(m - M) / S: NaN where M is +inf (formula_sum).
  ValueRef inv = bin(K::Div, constant(t_, acc_, 1), formula_sum(row));
  ValueRef scale = bin(K::Mul, t_.unary(K::Exp, bin(K::Sub, h.m, row[0])), inv);
  Values vars;
  for (size_t i = 0; i < kept.size(); ++i) vars.push_back(t_.var_decl(ir::Type::scalar_of(acc_)));
  size_t fast = t_.begin_if(h.finite);
  for (size_t i = 0; i < kept.size(); ++i) t_.var_store(vars[i], bin(K::Mul, kept[i], scale));
  t_.end_then(fast);
  t_.begin_else(fast);
  for (size_t i = 0; i < kept.size(); ++i)
    t_.var_store(vars[i], bin(K::Mul, t_.unary(K::Exp, bin(K::Sub, kept[i], row[0])), inv));
  t_.end_else(fast);
  return load(vars);
}

//   softmax: (m, s) + (m', s') = (M, s * exp(m - M) + s' * exp(m' - M)), M = max(m, m'), with s
//     itself where m is M (no exp(-inf - -inf));
//   layer_norm: Chan's (n, mean, M2): n + n', (n mean + n' mean') / n, M2 + M2' + d^2 n n' / n,
//     d = mean' - mean (d^2 either way), nothing from an empty partial.
RowStats::Values RowStats::combine(const Values& p, const Values& q) {
  if (norm_) {
    const ValueRef one = constant(t_, acc_, 1);
    ValueRef n = bin(K::Add, p[0], q[0]);
    ValueRef safe = bin(K::Max, n, one);
    ValueRef delta = bin(K::Sub, q[1], p[1]);
    ValueRef mean = bin(K::Div, bin(K::Add, bin(K::Mul, p[0], p[1]), bin(K::Mul, q[0], q[1])), safe);
    ValueRef m2 = bin(K::Add, bin(K::Add, p[2], q[2]),
                      bin(K::Div, bin(K::Mul, bin(K::Mul, delta, delta), bin(K::Mul, p[0], q[0])), safe));
    return {n, mean, m2};
  }
  ValueRef m = bin(K::Max, p[0], q[0]);
  auto rescaled = [&](const ValueRef& sum, const ValueRef& from) {
    return t_.select(bin(K::Eq, from, m), sum, bin(K::Mul, sum, t_.unary(K::Exp, bin(K::Sub, from, m))));
  };
  return {m, bin(K::Add, rescaled(p[1], p[0]), rescaled(q[1], q[0]))};
}

RowStats::Values RowStats::fold_lanes(Values mine, uint32_t bit) {
  for (; bit < ir::Target::kPlaneWidth; bit *= 2) {
    Values theirs;
    for (const ValueRef& v : mine) {
      theirs.push_back(t_.plane(K::PlaneShuffleXor, std::array<ValueRef, 2>{v, constant(t_, DType::U32, bit)}));
    }
    mine = combine(mine, theirs);
  }
  return mine;
}

RowStats::Values RowStats::fold_planes(const Values& mine, uint32_t planes, uint32_t tile, const ValueRef& plane,
                                       const ValueRef& lane, const ValueRef& row, bool tree) {
  auto u32 = [&](int64_t v) { return constant(t_, DType::U32, double(v)); };
  Values shared;
  for (int k = 0; k < count(); ++k)
    shared.push_back(t_.alloc(K::SharedAlloc, ir::Type::scalar_of(acc_), int64_t(planes) * tile));
  size_t first_lanes = t_.begin_if(bin(K::Lt, lane, u32(tile)));
  for (int k = 0; k < count(); ++k)
    t_.store(shared[size_t(k)], bin(K::Add, bin(K::Mul, plane, u32(tile)), row), mine[size_t(k)]);
  t_.end_then(first_lanes);
  t_.sync(K::SyncCube);
  if (!tree) {
    // A chain, one plane a step: fewer partials live than the tree's log2(planes) + 1, which
    // spill the tiled kernel's cubes (32 registers a unit at 1024 units, and a few at 256).
    Values folded = declare();
    ValueRef p = t_.begin_for(u32(0), u32(planes), u32(1), dsl::LoopAttrs{});
    Values part;
    for (int k = 0; k < count(); ++k)
      part.push_back(t_.load(shared[size_t(k)], bin(K::Add, bin(K::Mul, p, u32(tile)), row)));
    store(folded, combine(load(folded), part));
    t_.end_for();
    return load(folded);
  }
  return fold_tree(planes, [&](uint32_t p) {
    Values part;
    for (int k = 0; k < count(); ++k)
      part.push_back(t_.load(shared[size_t(k)], bin(K::Add, u32(int64_t(p) * tile), row)));
    return part;
  });
}

RowStats::Values RowStats::fold_tree(uint32_t count, const std::function<Values(uint32_t)>& part) {
  // Pairwise with a stack, as a binary counter: partial i joins the stack, and while the two on
  // top fold the same number of partials they become one. At most log2(count) + 1 wait at once.
  std::vector<std::pair<uint32_t, Values>> stack;
  for (uint32_t i = 0; i < count; ++i) {
    stack.emplace_back(1, part(i));
    while (stack.size() >= 2 && stack[stack.size() - 2].first == stack.back().first) {
      auto top = std::move(stack.back());
      stack.pop_back();
      stack.back().second = combine(stack.back().second, top.second);
      stack.back().first += top.first;
    }
  }
  Values folded = std::move(stack.back().second);
  for (size_t i = stack.size() - 1; i-- > 0;) folded = combine(stack[i].second, folded);
  return folded;
}

std::function<ValueRef(const ValueRef&, const ValueRef&)> RowStats::output(const Values& row, const ValueRef& cols,
                                                                           const ValueRef& eps, const ValueRef& weight,
                                                                           const ValueRef& bias) {
  dsl::Tracer& t = t_;
  const DType acc = acc_;
  if (norm_) {
    ValueRef mean = row[1];
    ValueRef inv = t.unary(K::Rsqrt, bin(K::Add, bin(K::Div, row[2], t.cast(cols, acc)), eps));
    return [&t, acc, mean, inv, weight, bias](const ValueRef& x, const ValueRef& j) {
      ValueRef y = t.binary(K::Mul, t.binary(K::Sub, x, mean), inv);
      auto param_at = [&](const ValueRef& p) {
        ValueRef w = t.load(p, t.binary(K::Mul, j, t.tensor_meta(K::TensorStride, p, 0)));
        return w.type.scalar == acc ? w : t.cast(w, acc);
      };
      if (weight.id != ir::kNoValue) y = t.binary(K::Mul, y, param_at(weight));
      if (bias.id != ir::kNoValue) y = t.binary(K::Add, y, param_at(bias));
      return y;
    };
  }
  if (op_ == RowOp::Softmax) {
    ValueRef m = row[0], inv = bin(K::Div, constant(t, acc, 1), formula_sum(row));
    return [&t, m, inv](const ValueRef& x, const ValueRef&) {
      return t.binary(K::Mul, t.unary(K::Exp, t.binary(K::Sub, x, m)), inv);
    };
  }
  ValueRef shift = bin(K::Add, row[0], t.unary(K::Log, formula_sum(row)));
  return [&t, shift](const ValueRef& x, const ValueRef&) { return t.binary(K::Sub, x, shift); };
}

}  // namespace kiln::tensor
