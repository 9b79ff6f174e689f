#include "kiln/tensor/tensor.h"

#include <algorithm>
#include <numeric>

#include "kiln/tensor/ops.h"
#include "tensor/fusion.h"
#include "tensor/layout.h"
#include "tensor/support.h"

namespace kiln {

namespace {

int64_t product(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// A dim given to a view: negative counts from the end. Error{tensor.bad_dim} outside the rank.
size_t dim_index(const std::string& op, int64_t dim, int64_t rank) {
  int64_t d = dim < 0 ? dim + rank : dim;
  if (d < 0 || d >= rank) {
    throw Error("tensor.bad_dim",
                op + ": dim " + std::to_string(dim) + " is outside a tensor of rank " + std::to_string(rank));
  }
  return size_t(d);
}

// The strides that show `shape`'s elements, row-major, over memory laid out as (old_shape,
// old_strides), when there are such strides (PyTorch's view rule: each run of old dims that are
// contiguous among themselves may be split and merged freely; runs may not mix). None otherwise.
std::optional<Strides> view_strides(const Shape& old_shape, const Strides& old_strides, const Shape& shape) {
  if (product(old_shape) == 0 || old_shape.empty()) return contiguous_strides(shape);
  Strides out(shape.size(), 0);
  int64_t view_d = int64_t(shape.size()) - 1;
  int64_t base = old_strides.back();  // the stride of the innermost dim of the current run
  int64_t run = 1, view_numel = 1;    // elements in the run of old dims, and in the new dims given to it
  for (int64_t d = int64_t(old_shape.size()) - 1; d >= 0; --d) {
    run *= old_shape[size_t(d)];
    const bool run_ends = d == 0 || (old_shape[size_t(d - 1)] != 1 && old_strides[size_t(d - 1)] != run * base);
    if (!run_ends) continue;
    while (view_d >= 0 && (view_numel < run || shape[size_t(view_d)] == 1)) {
      out[size_t(view_d)] = view_numel * base;
      view_numel *= shape[size_t(view_d)];
      --view_d;
    }
    if (view_numel != run) return std::nullopt;
    if (d > 0) {
      base = old_strides[size_t(d - 1)];
      run = 1;
      view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

}  // namespace

std::string to_string(const Shape& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

Strides contiguous_strides(const Shape& shape) {
  Strides s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * std::max<int64_t>(shape[i], 1);
  return s;
}

Tensor::Tensor(Client client, Handle handle, Shape shape, Strides strides, DType dtype)
    : client_(std::move(client)),
      handle_(std::move(handle)),
      shape_(std::move(shape)),
      strides_(std::move(strides)),
      dtype_(dtype) {}

Tensor::Tensor(Client client, Handle handle, Shape shape, DType dtype)
    : Tensor(std::move(client), std::move(handle), shape, contiguous_strides(shape), dtype) {}

Tensor::Tensor(Client client, Shape shape, DType dtype, std::shared_ptr<tensor::Pending> pending)
    : client_(std::move(client)), shape_(std::move(shape)), dtype_(dtype), pending_(std::move(pending)) {}

bool Tensor::pending() const { return pending_ && !pending_->done; }

void Tensor::settle() const {
  Tensor result = tensor::take_result(pending_);  // pending_ is released once the chain has run
  handle_ = std::move(result.handle_);
  strides_ = std::move(result.strides_);
}

void Tensor::check_from_data(DType dtype, size_t count, const Shape& shape) {
  tensor::check_supported("from_data", dtype);
  for (int64_t d : shape) {
    if (d < 0)
      throw Error("tensor.shape_mismatch", "from_data: shape " + kiln::to_string(shape) + " has a negative dim");
  }
  if (product(shape) != int64_t(count)) {
    throw Error("tensor.shape_mismatch", "from_data: shape " + kiln::to_string(shape) + " holds " +
                                             std::to_string(product(shape)) + " element(s) and the data has " +
                                             std::to_string(count));
  }
}

Tensor Tensor::from_data(const Client& client, const std::vector<bool>& data, Shape shape) {
  TensorData d;
  d.dtype = DType::Bool;
  d.shape = std::move(shape);
  d.bytes.assign(data.begin(), data.end());
  return from_data(client, d);
}

Tensor Tensor::from_data(const Client& client, const TensorData& data) {
  check_from_data(data.dtype, data.bytes.size() / size_t(ir::scalar_bytes(data.dtype)), data.shape);
  Handle h = client.upload_bytes(data.bytes.data(), data.bytes.size()).view_as(data.dtype);
  return Tensor(client, std::move(h), data.shape, data.dtype);
}

Tensor Tensor::empty(const Client& client, Shape shape, DType dtype) {
  tensor::check_supported("empty", dtype);
  for (int64_t d : shape) {
    if (d < 0) throw Error("tensor.shape_mismatch", "empty: shape " + kiln::to_string(shape) + " has a negative dim");
  }
  Strides s = contiguous_strides(shape);
  return tensor::allocate(client, shape, s, dtype);
}

int64_t Tensor::numel() const { return product(shape_); }

bool Tensor::is_contiguous() const {
  eval();
  int64_t expected = 1;
  for (size_t i = shape_.size(); i-- > 0;) {
    if (shape_[i] == 1) continue;
    if (strides_[i] != expected) return false;
    expected *= shape_[i];
  }
  return true;
}

Tensor Tensor::swap_dims(int64_t a, int64_t b) const {
  eval();  // a view of a pending tensor is a view of its memory
  size_t i = dim_index("swap_dims", a, rank()), j = dim_index("swap_dims", b, rank());
  Tensor t = *this;
  std::swap(t.shape_[i], t.shape_[j]);
  std::swap(t.strides_[i], t.strides_[j]);
  return t;
}

Tensor Tensor::transpose() const {
  if (rank() < 2)
    throw Error("tensor.bad_dim",
                "transpose: needs a tensor of rank 2 or more, this one has rank " + std::to_string(rank()));
  return swap_dims(-2, -1);
}

Tensor Tensor::permute(const std::vector<int64_t>& order) const {
  eval();  // a view of a pending tensor is a view of its memory
  if (int64_t(order.size()) != rank()) {
    throw Error("tensor.bad_dim", "permute: " + std::to_string(order.size()) + " dims given for a tensor of rank " +
                                      std::to_string(rank()));
  }
  Tensor t = *this;
  std::vector<bool> seen(order.size(), false);
  for (size_t i = 0; i < order.size(); ++i) {
    size_t d = dim_index("permute", order[i], rank());
    if (seen[d]) throw Error("tensor.bad_dim", "permute: dim " + std::to_string(order[i]) + " appears twice");
    seen[d] = true;
    t.shape_[i] = shape_[d];
    t.strides_[i] = strides_[d];
  }
  return t;
}

Tensor Tensor::slice(int64_t dim, int64_t start, int64_t end, int64_t step) const {
  eval();  // a view of a pending tensor is a view of its memory
  size_t d = dim_index("slice", dim, rank());
  if (start < 0 || end < start || end > shape_[d]) {
    throw Error("tensor.index_out_of_range", "slice: [" + std::to_string(start) + ", " + std::to_string(end) +
                                                 ") of dim " + std::to_string(dim) + ", which has size " +
                                                 std::to_string(shape_[d]));
  }
  if (step <= 0) {
    throw Error("tensor.bad_step", "slice: step " + std::to_string(step) + " of dim " + std::to_string(dim) +
                                       "; a step must be 1 or more (reverse a dim by other means)");
  }
  Tensor t = *this;
  t.shape_[d] = (end - start + step - 1) / step;  // a step past the range keeps the first element
  // A dim of one element keeps its stride: multiplied, a long step could pass 32 bits for nothing.
  if (t.shape_[d] > 1) t.strides_[d] = strides_[d] * step;
  if (end > start && start > 0)
    t.handle_ = handle_.offset_start(size_t(start * strides_[d] * ir::scalar_bytes(dtype_)));
  return t;
}

Tensor Tensor::expand(const Shape& shape) const {
  eval();  // a view of a pending tensor is a view of its memory
  if (shape.size() < shape_.size()) {
    throw Error("tensor.shape_mismatch",
                "expand: " + kiln::to_string(shape_) + " cannot expand to fewer dims, " + kiln::to_string(shape));
  }
  const size_t lead = shape.size() - shape_.size();
  for (int64_t d : shape) {
    if (d < 0) throw Error("tensor.shape_mismatch", "expand: " + kiln::to_string(shape) + " has a negative dim");
  }
  Tensor t = *this;
  t.shape_ = shape;
  t.strides_.assign(shape.size(), 0);
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i < lead) continue;
    int64_t have = shape_[i - lead];
    if (have == shape[i]) {
      t.strides_[i] = strides_[i - lead];
    } else if (have != 1) {
      throw Error("tensor.shape_mismatch", "expand: " + kiln::to_string(shape_) + " cannot expand to " +
                                               kiln::to_string(shape) + ": dim " + std::to_string(i) + " is " +
                                               std::to_string(have) + ", not 1");
    }
  }
  return t;
}

Tensor Tensor::reshape(Shape shape) const {
  eval();  // a view of a pending tensor is a view of its memory
  int64_t known = 1, unknown = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1 && unknown < 0) unknown = int64_t(i);
    else if (shape[i] < 0)
      throw Error("tensor.shape_mismatch", "reshape: " + kiln::to_string(shape) + " has a negative dim or two -1");
    else known *= shape[i];
  }
  if (unknown >= 0) {
    if (known == 0 || numel() % known != 0) {
      throw Error("tensor.shape_mismatch", "reshape: " + kiln::to_string(shape_) + " holds " + std::to_string(numel()) +
                                               " element(s), which " + kiln::to_string(shape) +
                                               " cannot hold for any -1");
    }
    shape[size_t(unknown)] = numel() / known;
  }
  if (product(shape) != numel()) {
    throw Error("tensor.shape_mismatch", "reshape: " + kiln::to_string(shape_) + " holds " + std::to_string(numel()) +
                                             " element(s); " + kiln::to_string(shape) + " holds " +
                                             std::to_string(product(shape)));
  }
  if (std::optional<Strides> s = view_strides(shape_, strides_, shape)) {
    Tensor t = *this;
    t.shape_ = std::move(shape);
    t.strides_ = std::move(*s);
    return t;
  }
  Tensor c = into_contiguous(*this);
  c.strides_ = contiguous_strides(shape);
  c.shape_ = std::move(shape);
  return c;
}

TensorData Tensor::to_data() const {
  if (!defined()) throw Error("tensor.undefined", "to_data: the tensor is empty (moved from, or never set)");
  eval();
  Tensor c = into_contiguous(*this);
  TensorData d;
  d.dtype = dtype_;
  d.shape = shape_;
  d.bytes.resize(size_t(numel() * ir::scalar_bytes(dtype_)));
  if (!d.bytes.empty()) client_.read_bytes(c.handle_, d.bytes.data(), d.bytes.size());
  return d;
}

Tensor Tensor::to_device(const Client& client) const { return from_data(client, to_data()); }

int64_t TensorData::numel() const { return product(shape); }

void TensorData::check_values(DType want) const {
  if (want != dtype) {
    throw Error("tensor.dtype_mismatch", "the data holds " + std::string(ir::scalar_name(dtype)) +
                                             " elements, read as " + std::string(ir::scalar_name(want)));
  }
}

namespace tensor {

void check_supported(std::string_view op, DType d) {
  // On every op: the search allocates nothing; only a refusal builds its message.
  if (std::find(std::begin(kDTypes), std::end(kDTypes), d) != std::end(kDTypes)) return;
  std::string names;
  for (size_t i = 0; i < std::size(kDTypes); ++i) {
    names += std::string(i == 0                        ? ""
                         : i + 1 == std::size(kDTypes) ? " and "
                                                       : ", ") +
             std::string(ir::scalar_name(kDTypes[i]));
  }
  throw Error("tensor.unsupported_dtype",
              std::string(op) + ": the tensor library takes " + names + ", not " + std::string(ir::scalar_name(d)));
}

Tensor allocate(const Client& client, const Shape& shape, const Strides& strides, DType dtype) {
  int64_t n = product(shape);
  Handle h = client.empty_bytes(size_t(std::max<int64_t>(n, 1)) * size_t(ir::scalar_bytes(dtype))).view_as(dtype);
  return Tensor(client, std::move(h), shape, strides, dtype);
}

uint32_t checked_u32(int64_t v, const char* op, const char* what) {
  if (v < 0 || v > int64_t(UINT32_MAX)) {
    throw Error("tensor.too_large", std::string(op) + ": " + std::to_string(v) + " " + what +
                                        " do not fit the kernels' 32-bit indices (at most 4294967295)");
  }
  return uint32_t(v);
}

TensorBinding binding(const Handle& h, std::span<const int64_t> shape, std::span<const int64_t> strides,
                      const char* op) {
  if (shape.size() > 8)
    throw Error("tensor.too_large",
                std::string(op) + ": a walk of rank " + std::to_string(shape.size()) + "; kernels take at most 8 dims");
  TensorBinding b;
  b.handle = h;
  b.rank = uint8_t(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    b.shape[i] = checked_u32(shape[i], op, "elements in a dim");
    b.stride[i] = checked_u32(strides[i], op, "as a stride");
  }
  return b;
}

LaunchConfig linear_config(int64_t count) {
  // Positions are u32 (cube * 256 + unit): the last cube's must not wrap past 2^32.
  if (count > int64_t(UINT32_MAX) - 255) {
    throw Error("tensor.too_large",
                std::to_string(count) + " units do not fit the kernels' 32-bit positions (at most 4294967040)");
  }
  LaunchConfig c;
  c.dim = CubeDim{256};
  c.count = CubeCount{uint32_t((count + 255) / 256)};
  return c;
}

}  // namespace tensor

}  // namespace kiln
