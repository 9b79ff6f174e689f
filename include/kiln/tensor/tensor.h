// Tensor: a client, a typed handle, a shape, strides and an element type (seed 03). Views share
// the handle and change only the shape and strides; ownership decides when an op may write into
// a tensor's memory: an op that is given a tensor by std::move and holds the only handle to its
// memory writes its result there (can_mut), as burn's ops do when they take their operand by
// value. Every op is a kiln kernel, launched on the tensor's client.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/element.h"
#include "kiln/error.h"
#include "kiln/runtime/client.h"
#include "kiln/runtime/handle.h"

namespace kiln {

namespace tensor {
struct Pending;  // an elementwise step recorded and not run yet (src/tensor/fusion.h)
}

// A tensor's element type: one of the element types the tensor library takes.
using DType = ir::Scalar;
inline constexpr DType kDTypes[] = {DType::F16, DType::BF16, DType::F32, DType::F64,
                                    DType::I32, DType::I64,  DType::U8,  DType::Bool};

using Shape = std::vector<int64_t>;
using Strides = std::vector<int64_t>;

// Host data of a tensor: its element type, its shape and its elements, row-major.
struct TensorData {
  DType dtype = DType::F32;
  Shape shape;
  std::vector<unsigned char> bytes;

  int64_t numel() const;
  // The elements as T: Error{tensor.dtype_mismatch} unless T is the data's element type. Bool
  // elements (a byte each, 0 or 1) read as a std::vector<bool>, which packs bits and holds no
  // array to copy into: any non-zero byte is true, as in kernels.
  template <Element T>
  std::vector<T> values() const {
    check_values(scalar_of<T>());
    if constexpr (std::is_same_v<T, bool>) {
      return std::vector<bool>(bytes.begin(), bytes.end());
    } else {
      std::vector<T> out(bytes.size() / sizeof(T));
      if (!out.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
      return out;
    }
  }
  // The elements as a flat list, each the shortest text that reads back as the same value, floats
  // with a decimal point: [21.0, 84.0, 42.0].
  std::string to_string() const;

 private:
  void check_values(DType want) const;
};

class Tensor {
 public:
  Tensor() = default;

  // A contiguous tensor of `shape` holding `data` (row-major). Error{tensor.shape_mismatch} when
  // the shape does not hold exactly data.size() elements; Error{tensor.unsupported_dtype} for an
  // element type the tensor library does not take.
  template <Element T>
  static Tensor from_data(const Client& client, std::span<const T> data, Shape shape) {
    check_from_data(scalar_of<T>(), data.size(), shape);
    return Tensor(client, client.upload(data), std::move(shape), scalar_of<T>());
  }
  template <Element T>
  requires(!std::is_same_v<T, bool>)  // std::vector<bool> holds no array of bools: the overload below
      static Tensor from_data(const Client& client, const std::vector<T>& data, Shape shape) {
    return from_data(client, std::span<const T>(data), std::move(shape));
  }
  static Tensor from_data(const Client& client, const std::vector<bool>& data, Shape shape);
  static Tensor from_data(const Client& client, const TensorData& data);
  // A contiguous tensor whose elements are not set.
  static Tensor empty(const Client& client, Shape shape, DType dtype);

  const Client& client() const { return client_; }
  // The memory: a pending tensor (the result of an elementwise chain that has not run, see
  // kiln/tensor/fusion.h) runs its chain first, as strides(), views and reads do.
  const Handle& handle() const {
    if (pending_) settle();
    return handle_;
  }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  const Strides& strides() const {
    if (pending_) settle();
    return strides_;
  }
  int64_t rank() const { return int64_t(shape_.size()); }
  int64_t numel() const;
  bool defined() const { return handle_.valid() || pending_ != nullptr; }
  // The result of elementwise ops whose kernel has not run yet (fusion on): its shape and element
  // type are known, its memory is not.
  bool pending() const;
  // Runs the chain now when the tensor is pending (nothing otherwise): for timing, or before the
  // memory is written by other means than the tensor library.
  void eval() const {
    if (pending_) settle();
  }

  // Row-major with no gaps (dims of size 1 may have any stride).
  bool is_contiguous() const;
  // True when this tensor holds the only handle to its memory: an op given it by std::move may
  // write into it.
  bool can_mut() const { return handle().can_mut(); }

  // Views: the same memory, new shape and strides; nothing is launched.
  // dims a and b exchanged (negative dims count from the end).
  Tensor swap_dims(int64_t a, int64_t b) const;
  // The last two dims exchanged.
  Tensor transpose() const;
  // Dim i of the result is dim order[i] of this one.
  Tensor permute(const std::vector<int64_t>& order) const;
  // Elements start, start + step, ... before end of dim `dim` (x[start:end:step]): the dim's stride
  // times step, nothing launched. Error{tensor.index_out_of_range} unless 0 <= start <= end <= the
  // dim's size; Error{tensor.bad_step} for a step that is not positive.
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const { return slice(dim, start, start + length); }
  // Dims of size 1 (and new leading dims) repeated to `shape` with stride 0.
  Tensor expand(const Shape& shape) const;
  // The same elements in row-major order with a new shape: a view when the strides allow, else a
  // copy into new memory (one copy kernel). One dim may be -1.
  Tensor reshape(Shape shape) const;

  // Host copies of the elements, row-major: a strided tensor is made contiguous first (one copy).
  // to_vector<bool>() of a bool tensor is a std::vector<bool>.
  TensorData to_data() const;
  template <Element T>
  std::vector<T> to_vector() const {
    return to_data().values<T>();
  }
  // The same values on another device's client.
  Tensor to_device(const Client& client) const;

  // PyTorch's style: tensor([[1., 2.], [3., 4.]]), with dtype and device when they are not the
  // default ones.
  std::string to_string() const;

  // For the ops: a tensor over `handle` (which starts at the first element) with this layout.
  Tensor(Client client, Handle handle, Shape shape, Strides strides, DType dtype);
  Tensor(Client client, Handle handle, Shape shape, DType dtype);
  // For the fusion of elementwise chains: a tensor whose value `pending` computes.
  Tensor(Client client, Shape shape, DType dtype, std::shared_ptr<tensor::Pending> pending);
  const std::shared_ptr<tensor::Pending>& pending_step() const { return pending_; }

 private:
  static void check_from_data(DType dtype, size_t count, const Shape& shape);
  // Runs the pending chain and takes its result's memory and strides. Const, as reading a value
  // is: the tensor's value does not change, only whether it has been computed. (One Tensor object
  // is not to be settled from two threads at once; copies of it may be.)
  void settle() const;
  Client client_{nullptr};
  mutable Handle handle_;
  Shape shape_;
  mutable Strides strides_;
  DType dtype_ = DType::F32;
  mutable std::shared_ptr<tensor::Pending> pending_;
};

// The tensor itself when it is contiguous; else a contiguous copy (one copy kernel).
Tensor into_contiguous(Tensor t);

// The row-major strides of `shape`.
Strides contiguous_strides(const Shape& shape);

std::string to_string(const Shape& dims);

}  // namespace kiln
