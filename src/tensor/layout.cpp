#include "tensor/layout.h"

#include <algorithm>
#include <numeric>

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

Strides broadcast_strides(const Shape& shape, const Strides& strides, const Shape& out) {
  Strides s(out.size(), 0);
  const size_t lead = out.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i) s[lead + i] = shape[i] == 1 && out[lead + i] != 1 ? 0 : strides[i];
  return s;
}

bool self_overlapping(const Shape& shape, const Strides& strides) {
  // Innermost first: each dim's stride must step past everything the dims inside it reach.
  std::vector<int> order = memory_order(shape, strides);
  int64_t reach = 0;  // the largest offset the inner dims reach
  for (size_t k = order.size(); k-- > 0;) {
    const int i = order[k];
    if (shape[i] <= 1) continue;
    if (strides[i] <= reach) return true;
    reach += (shape[i] - 1) * strides[i];
  }
  return false;
}

std::vector<int> memory_order(const Shape& shape, const Strides& strides) {
  std::vector<int> order(shape.size());
  std::iota(order.begin(), order.end(), 0);
  // Dims of size 1 say nothing about memory: they stay where they are logically, which a stable
  // sort on the others alone would not keep, so they sort as if their stride sat between their
  // neighbours: take them out, sort the rest, and put them back at their logical places.
  std::vector<int> sized;
  for (int i : order) {
    if (shape[i] != 1) sized.push_back(i);
  }
  std::stable_sort(sized.begin(), sized.end(), [&](int a, int b) { return strides[a] > strides[b]; });
  std::vector<int> out;
  size_t next = 0;
  for (int i : order) out.push_back(shape[i] == 1 ? i : sized[next++]);
  return out;
}

Strides strides_in_order(const Shape& shape, const std::vector<int>& order) {
  Strides s(shape.size(), 1);
  int64_t step = 1;
  for (size_t k = order.size(); k-- > 0;) {
    s[order[k]] = step;
    step *= std::max<int64_t>(shape[order[k]], 1);
  }
  return s;
}

Walk Walk::in_order(const Shape& shape, const std::vector<Strides>& strides, const std::vector<int>& order) {
  Walk w;
  w.strides.resize(strides.size());
  for (int i : order) {
    w.shape.push_back(shape[i]);
    for (size_t o = 0; o < strides.size(); ++o) w.strides[o].push_back(strides[o][i]);
  }
  return w;
}

void Walk::fold() {
  Shape shape_out;
  std::vector<Strides> strides_out(strides.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) continue;
    bool merge = !shape_out.empty();
    for (size_t o = 0; merge && o < strides.size(); ++o) {
      // The outer dim's stride must be the inner one's times the inner length.
      merge = strides_out[o].back() == strides[o][i] * shape[i];
    }
    if (merge) {
      shape_out.back() *= shape[i];
      for (size_t o = 0; o < strides.size(); ++o) strides_out[o].back() = strides[o][i];
    } else {
      shape_out.push_back(shape[i]);
      for (size_t o = 0; o < strides.size(); ++o) strides_out[o].push_back(strides[o][i]);
    }
  }
  if (shape_out.empty()) {  // a single element
    shape_out.push_back(1);
    for (auto& s : strides_out) s.push_back(1);
  }
  shape = std::move(shape_out);
  strides = std::move(strides_out);
}

}  // namespace kiln::tensor
