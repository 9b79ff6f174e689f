// Printing tensors: PyTorch's style for a tensor, a flat list for its data.
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <unordered_map>

#include "kiln/half.h"
#include "kiln/tensor/tensor.h"

namespace kiln {

namespace {

// Every element as a double (exact for each supported type but i64 beyond 2^53, printed apart).
std::vector<double> as_doubles(const TensorData& d) {
  std::vector<double> out(size_t(d.numel()));
  const unsigned char* p = d.bytes.data();
  ir::visit_scalar(d.dtype, [&]<class T>() {
    for (size_t i = 0; i < out.size(); ++i) {
      T v;
      std::memcpy(&v, p + sizeof(T) * i, sizeof(T));
      if constexpr (ir::is_short_float_type<T>) out[i] = double(float(v));
      else out[i] = double(v);
    }
  });
  return out;
}

int64_t int_at(const TensorData& d, size_t i) {
  if (d.dtype == DType::I64) {
    int64_t v;
    std::memcpy(&v, d.bytes.data() + 8 * i, 8);
    return v;
  }
  if (d.dtype == DType::I32) {
    int32_t v;
    std::memcpy(&v, d.bytes.data() + 4 * i, 4);
    return v;
  }
  return d.bytes[i];
}

// The shortest text that reads back as v in the data's type, with a decimal point for floats.
std::string shortest(double v, DType t) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::string s;
  if (ir::is_short_float(t)) {
    // The fewest significant digits that read back as the same 16-bit value.
    auto same_bits = [&](double back) {
      return ir::visit_scalar(t, [&]<class T>() {
        if constexpr (ir::is_short_float_type<T>) return T(back).bits == T(v).bits;
        else return back == v;
      });
    };
    for (int digits = 1; digits <= 9; ++digits) {
      std::snprintf(buf, sizeof buf, "%.*g", digits, v);
      if (same_bits(std::strtod(buf, nullptr))) break;
    }
    s = buf;
  } else {
    auto r = t == DType::F64 ? std::to_chars(buf, buf + sizeof buf, v) : std::to_chars(buf, buf + sizeof buf, float(v));
    s.assign(buf, r.ptr);
  }
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

}  // namespace

std::string TensorData::to_string() const {
  std::string s = "[";
  const bool integer = ir::is_int(dtype);
  std::vector<double> v = integer ? std::vector<double>() : as_doubles(*this);
  for (size_t i = 0; i < size_t(numel()); ++i) {
    if (i) s += ", ";
    if (dtype == DType::Bool) s += bytes[i] ? "true" : "false";
    else if (integer) s += std::to_string(int_at(*this, i));
    else s += shortest(v[i], dtype);
  }
  return s + "]";
}

std::string Tensor::to_string() const {
  if (!defined()) return "tensor(<empty>)";
  TensorData d = to_data();
  const size_t n = size_t(d.numel());
  // As PyTorch: past 1000 elements, a dim longer than 6 shows its first and last 3 around "...".
  const bool summarize = n > 1000;
  auto shown = [&](size_t dim) {
    std::vector<int64_t> at;
    const int64_t len = shape_[dim];
    for (int64_t i = 0; i < len; ++i) {
      if (summarize && len > 6 && i == 3) at.push_back(-1), i = len - 4;
      else at.push_back(i);
    }
    return at;
  };
  std::vector<size_t> strides(shape_.size(), 1);
  for (size_t k = shape_.size(); k-- > 1;) strides[k - 1] = strides[k] * size_t(shape_[k]);
  // The elements printed, in order.
  std::vector<size_t> picked;
  std::function<void(size_t, size_t)> pick = [&](size_t dim, size_t offset) {
    if (dim == shape_.size()) return picked.push_back(offset);
    for (int64_t i : shown(dim)) {
      if (i >= 0) pick(dim + 1, offset + size_t(i) * strides[dim]);
    }
  };
  if (n > 0) pick(0, 0);
  std::unordered_map<size_t, std::string> cells;
  if (d.dtype == DType::Bool) {
    for (size_t i : picked) cells[i] = d.bytes[i] ? "True" : "False";
  } else if (ir::is_int(d.dtype)) {
    for (size_t i : picked) cells[i] = std::to_string(int_at(d, i));
  } else {
    // As PyTorch: whole numbers print as "2.", others with four decimals, and scientific notation
    // when the magnitudes (of the elements printed) span too much to read in fixed form.
    std::vector<double> v = as_doubles(d);
    bool whole = true;
    double lo = INFINITY, hi = 0;
    for (size_t i : picked) {
      const double x = v[i];
      if (!std::isfinite(x)) continue;
      whole = whole && x == std::floor(x);
      double a = std::fabs(x);
      if (a != 0) lo = std::min(lo, a), hi = std::max(hi, a);
    }
    // (Whole numbers turn scientific only past 1e8, as PyTorch's int mode.)
    const bool sci = hi > 1e8 || (!whole && hi > 0 && (hi / lo > 1000 || lo < 1e-4));
    for (size_t i : picked) {
      char buf[64];
      double x = v[i];
      if (std::isnan(x)) std::snprintf(buf, sizeof buf, "nan");
      else if (std::isinf(x)) std::snprintf(buf, sizeof buf, x > 0 ? "inf" : "-inf");
      else if (whole && !sci) std::snprintf(buf, sizeof buf, "%.0f.", x);
      else if (sci) std::snprintf(buf, sizeof buf, "%.4e", x);
      else std::snprintf(buf, sizeof buf, "%.4f", x);
      cells[i] = buf;
    }
  }
  size_t width = 0;
  for (const auto& [i, c] : cells) width = std::max(width, c.size());
  const std::string prefix = "tensor(";
  std::string out = prefix;
  // Nested brackets, the last dim on one line; dims above it one line (rank - dim - 1 blank lines) apart.
  std::function<void(size_t, size_t, size_t)> emit = [&](size_t dim, size_t offset, size_t indent) {
    if (dim == shape_.size()) {
      const std::string& c = cells[offset];
      out += std::string(width - c.size(), ' ') + c;
      return;
    }
    out += "[";
    bool first = true;
    for (int64_t i : shown(dim)) {
      if (!first) {
        out += ",";
        if (dim + 1 == shape_.size()) out += " ";
        else out += std::string(shape_.size() - dim - 1, '\n') + std::string(indent + 1, ' ');
      }
      first = false;
      if (i < 0) {
        out += dim + 1 == shape_.size() ? " ..." : "...";
      } else {
        emit(dim + 1, offset + size_t(i) * strides[dim], indent + 1);
      }
    }
    out += "]";
  };
  if (n == 0) out += "[]";
  else emit(0, 0, prefix.size());
  if (client_.runtime_name() != "cpu") out += ", device='" + client_.device().name() + "'";
  if (dtype_ != DType::F32 && dtype_ != DType::I64 && dtype_ != DType::Bool)
    out += ", dtype=" + std::string(ir::scalar_name(dtype_));
  return out + ")";
}

}  // namespace kiln
