#include "tensor/layout.h"

#include <algorithm>

namespace kiln::tensor {

Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& op) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Right-aligned: position i of the result is a's dim i - (rank - a.size()), if any.
    int64_t da = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
    int64_t db = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
    if (da != db && da != 1 && db != 1) {
      throw Error("tensor.shape_mismatch", op + ": shapes " + to_string(a) + " and " + to_string(b) +
                                               " do not broadcast: dim " + std::to_string(i) + " of the result is " +
                                               std::to_string(da) + " on one side and " + std::to_string(db) +
                                               " on the other (dims must be equal, or one of them 1)");
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Dims broadcast_strides(std::span<const int64_t> shape, std::span<const int64_t> strides, std::span<const int64_t> out) {
  Dims s(out.size(), 0);
  const size_t lead = out.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i) s[lead + i] = shape[i] == 1 && out[lead + i] != 1 ? 0 : strides[i];
  return s;
}

bool self_overlapping(std::span<const int64_t> shape, std::span<const int64_t> strides) {
  // Innermost first: each dim's stride must step past everything the dims inside it reach.
  DimOrder order = memory_order(shape, strides);
  int64_t reach = 0;  // the largest offset the inner dims reach
  for (size_t k = order.size(); k-- > 0;) {
    const size_t i = size_t(order[k]);
    if (shape[i] <= 1) continue;
    if (strides[i] <= reach) return true;
    reach += (shape[i] - 1) * strides[i];
  }
  return false;
}

DimOrder row_major_order(size_t rank) {
  DimOrder o(rank, 0);
  for (size_t i = 0; i < rank; ++i) o[i] = int(i);
  return o;
}

DimOrder memory_order(std::span<const int64_t> shape, std::span<const int64_t> strides) {
  // Dims of size 1 say nothing about memory: they keep their logical places, and the others are
  // sorted (stably, by stride, larger first) into the places that remain.
  DimOrder sized;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] != 1) sized.push_back(int(i));
  }
  std::stable_sort(sized.begin(), sized.end(), [&](int a, int b) { return strides[size_t(a)] > strides[size_t(b)]; });
  DimOrder out;
  size_t next = 0;
  for (size_t i = 0; i < shape.size(); ++i) out.push_back(shape[i] == 1 ? int(i) : sized[next++]);
  return out;
}

Strides strides_in_order(const Shape& shape, const DimOrder& order) {
  Strides s(shape.size(), 1);
  int64_t step = 1;
  for (size_t k = order.size(); k-- > 0;) {
    s[size_t(order[k])] = step;
    step *= std::max<int64_t>(shape[size_t(order[k])], 1);
  }
  return s;
}

Walk Walk::in_order(std::span<const int64_t> shape, std::span<const Dims> strides, const DimOrder& order) {
  if (strides.size() > kMaxOperands) {
    throw Error("tensor.too_large", "an elementwise walk takes at most " + std::to_string(kMaxOperands) + " tensors");
  }
  Walk w;
  w.operands = strides.size();
  for (int i : order) {
    w.shape.push_back(shape[size_t(i)]);
    for (size_t o = 0; o < w.operands; ++o) w.strides[o].push_back(strides[o][size_t(i)]);
  }
  return w;
}

void Walk::fold() {
  Walk f;
  f.operands = operands;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) continue;
    bool merge = !f.shape.empty();
    for (size_t o = 0; merge && o < operands; ++o) {
      // The outer dim's stride must be the inner one's times the inner length.
      merge = f.strides[o].back() == strides[o][i] * shape[i];
    }
    if (merge) {
      f.shape.back() *= shape[i];
      for (size_t o = 0; o < operands; ++o) f.strides[o].back() = strides[o][i];
    } else {
      f.shape.push_back(shape[i]);
      for (size_t o = 0; o < operands; ++o) f.strides[o].push_back(strides[o][i]);
    }
  }
  if (f.shape.empty()) {  // a single element
    f.shape.push_back(1);
    for (size_t o = 0; o < operands; ++o) f.strides[o].push_back(1);
  }
  shape = f.shape;  // only the operands' strides in use are copied (the list holds 16)
  for (size_t o = 0; o < operands; ++o) strides[o] = f.strides[o];
}

}  // namespace kiln::tensor
