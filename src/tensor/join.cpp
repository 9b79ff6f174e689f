// cat and stack: new memory, and one copy kernel per input into its slice of it.
#include "kiln/tensor/ops.h"
#include "tensor/support.h"

namespace kiln {

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  if (tensors.empty()) throw Error("tensor.shape_mismatch", "cat: no tensors to join");
  const Tensor& first = tensors[0];
  for (const Tensor& t : tensors) {
    if (!t.defined()) throw Error("tensor.undefined", "cat: an empty Tensor (moved from, or never set)");
  }
  const int64_t rank = first.rank();
  const int64_t d = dim < 0 ? dim + rank : dim;
  if (rank == 0 || d < 0 || d >= rank) {
    throw Error("tensor.bad_dim",
                "cat: dim " + std::to_string(dim) + " is outside tensors of rank " + std::to_string(rank));
  }
  Shape shape = first.shape();
  shape[size_t(d)] = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (t.dtype() != first.dtype()) {
      throw Error("tensor.dtype_mismatch", "cat: tensor " + std::to_string(i) + " is " +
                                               std::string(ir::scalar_name(t.dtype())) + " and tensor 0 " +
                                               std::string(ir::scalar_name(first.dtype())));
    }
    if (t.client().id() != first.client().id())
      throw Error("tensor.device_mismatch", "cat: tensor " + std::to_string(i) + " lives on another device");
    bool fits = t.rank() == rank;
    for (int64_t j = 0; fits && j < rank; ++j) fits = j == d || t.shape()[size_t(j)] == first.shape()[size_t(j)];
    if (!fits) {
      throw Error("tensor.shape_mismatch", "cat: tensor " + std::to_string(i) + " has shape " + to_string(t.shape()) +
                                               " and tensor 0 " + to_string(first.shape()) + "; all dims but " +
                                               std::to_string(dim) + " must agree");
    }
    shape[size_t(d)] += t.shape()[size_t(d)];
  }
  Tensor out = tensor::allocate(first.client(), shape, contiguous_strides(shape), first.dtype());
  int64_t at = 0;
  for (const Tensor& t : tensors) {
    const int64_t len = t.shape()[size_t(d)];
    if (len > 0 && t.numel() > 0) assign(out.narrow(d, at, len), t);
    at += len;
  }
  return out;
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  if (tensors.empty()) throw Error("tensor.shape_mismatch", "stack: no tensors to stack");
  const int64_t rank = tensors[0].rank() + 1;
  const int64_t d = dim < 0 ? dim + rank : dim;
  if (d < 0 || d >= rank) {
    throw Error("tensor.bad_dim",
                "stack: dim " + std::to_string(dim) + " is outside the result's rank " + std::to_string(rank));
  }
  std::vector<Tensor> parts;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (!t.defined()) throw Error("tensor.undefined", "stack: an empty Tensor (moved from, or never set)");
    if (t.shape() != tensors[0].shape()) {
      throw Error("tensor.shape_mismatch", "stack: tensor " + std::to_string(i) + " has shape " + to_string(t.shape()) +
                                               " and tensor 0 " + to_string(tensors[0].shape()) +
                                               "; stacked tensors have one shape");
    }
    Shape s = t.shape();
    s.insert(s.begin() + d, 1);
    parts.push_back(t.reshape(s));  // a view: a dim of 1 takes any stride
  }
  return cat(parts, d);
}

}  // namespace kiln
