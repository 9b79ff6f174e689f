// Reference kernels (seed 04's fake device and device gate): host functions registered by kernel
// name that compute what a tile kernel should, over host copies of the launch's buffers.
//
// - Fake mode: launch_reference(), or entry.launch inside a FakeDevice scope, runs every launch
//   check and then the reference instead of the kernel, so the host side, the launch checks and the
//   reference can be tested on any machine.
// - Check mode: check() runs the kernel on the client's device and the reference on the host, and
//   compares the outputs (Out and Shared parameters) with a tolerance by element type.
#pragma once

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/element.h"
#include "kiln/error.h"
#include "kiln/tile/program.h"

namespace kiln::tile {

// One buffer of a launch, copied to the host: its parameter's element type, role and cells, and
// the elements the buffer holds (all of them, past the extent too: a reference leaves those alone,
// as the kernel must).
class HostBuffer {
 public:
  // `label` names the buffer in messages: "kernel `vadd`: argument 0 (In)".
  HostBuffer(const ParamDecl& decl, std::vector<int64_t> extent, std::vector<std::byte> bytes, std::string label);

  ir::Scalar element() const { return decl_.element; }
  Role role() const { return decl_.role; }
  const std::optional<Cells>& cells() const { return decl_.cells; }
  // The cells' extent with every dyn_dim given by the launch's grid; empty for a Shared.
  const std::vector<int64_t>& extent() const { return extent_; }
  // Elements the buffer holds.
  size_t size() const { return bytes_.size() / size_t(ir::scalar_bytes(decl_.element)); }

  // The elements as T, which must be the element type (Error{reference.type_mismatch}).
  template <Element T>
  std::span<T> as() {
    check_element(scalar_of<T>());
    return {reinterpret_cast<T*>(bytes_.data()), size()};
  }
  template <Element T>
  std::span<const T> as() const {
    check_element(scalar_of<T>());
    return {reinterpret_cast<const T*>(bytes_.data()), size()};
  }
  // Element i as a double, whatever the element type (a reference may compute in double).
  double get(size_t i) const;
  // Every element as a double.
  std::vector<double> values() const;
  // Writes element i, rounded to the element type as its C++ type's conversion from double does.
  void set(size_t i, double v);

  std::span<const std::byte> bytes() const { return bytes_; }

 private:
  void check_element(ir::Scalar wanted) const;

  ParamDecl decl_;
  std::vector<int64_t> extent_;
  std::vector<std::byte> bytes_;
  std::string label_;
};

// A reference: reads the buffers and writes the outputs in place, for the launch's grid.
using ReferenceFn = std::function<void(std::span<HostBuffer> buffers, const Grid& grid)>;

// The seed's last_out: a reference from a function that reads the other buffers and writes only
// the last one.
ReferenceFn last_out(std::function<void(std::span<const HostBuffer> inputs, HostBuffer& out)> fn);

// A registered reference: the number of buffers its kernel takes (seed 04's `(2, last_out(..))`)
// and the function.
struct Reference {
  size_t buffers = 0;
  ReferenceFn fn;
};

// Host references by kernel name.
class References {
 public:
  // Registers (or replaces) the reference of kernel `name`, which takes `buffers` buffers: a
  // kernel of that name with another parameter count is refused when it would run the reference
  // (reference.arity), before any buffer is touched.
  References& add(std::string name, size_t buffers, ReferenceFn fn);
  // The reference of kernel `name`; Error{reference.missing} naming the registered kernels if none.
  const Reference& at(std::string_view name) const;
  // The reference of `entry`'s kernel: reference.missing as `at`, and Error{reference.arity} when
  // it was registered for another number of buffers than the kernel's parameters.
  const ReferenceFn& of(const Entry& entry) const;
  bool contains(std::string_view name) const { return fns_.find(name) != fns_.end(); }
  // The registered names, sorted.
  std::vector<std::string> names() const;

 private:
  std::map<std::string, Reference, std::less<>> fns_;
};

// References for kiln's own example kernels (src/tile/reference_kernels.cpp): vadd, softmax,
// row_softmax, transpose, matmul, flash_attn and flash_attn_bf16.
References reference_kernels();

// Fake mode: runs every launch check of entry.launch (the same refusals, before anything else),
// copies the buffers to the host, runs the reference registered under the kernel's name
// (Error{reference.missing} if none) and copies the Out and Shared buffers back. The kernel's
// body never runs.
void launch_reference(const References& refs, const Entry& entry, const Client& client, std::span<const Handle> buffers,
                      std::optional<Grid> grid = std::nullopt);
inline void launch_reference(const References& refs, const Entry& entry, const Client& client,
                             std::initializer_list<Handle> buffers, std::optional<Grid> grid = std::nullopt) {
  launch_reference(refs, entry, client, std::span<const Handle>(buffers.begin(), buffers.size()), grid);
}

namespace detail {
// launch_reference after the launch checks passed, on the grid they answered.
void run_reference(const References& refs, const Entry& entry, const Client& client, std::span<const Handle> buffers,
                   const Grid& grid);
}  // namespace detail

// While one lives on this thread, entry.launch runs references instead of kernels (seed 04's
// with_gpu_fake): host code written for a device runs unchanged. Scopes nest; the innermost wins.
class FakeDevice {
 public:
  explicit FakeDevice(const References& refs);
  ~FakeDevice();
  FakeDevice(const FakeDevice&) = delete;
  FakeDevice& operator=(const FakeDevice&) = delete;

  // The references of the innermost scope on this thread; null outside every scope.
  static const References* current();

 private:
  const References* previous_;
};

// An element agrees with the reference when |device - reference| <= absolute + relative *
// |reference| (equal values, infinities and NaN against NaN included).
struct Tolerance {
  double relative = 0;
  double absolute = 0;
};
// Exact for integers and bool; 1e-12 for f64 (a few thousand ulps near 1, not a few: a sum of
// hundreds of products rounds differently in another order or with fused multiply-adds, and a
// device's exp is not the host's), 1e-5 for f32, 1e-2 for f16 and bf16.
Tolerance default_tolerance(ir::Scalar element);

// How one output compared.
struct OutputCheck {
  size_t param = 0;  // the argument's index
  Role role = Role::Out;
  ir::Scalar element = ir::Scalar::F64;
  Tolerance tolerance;
  size_t elements = 0;
  size_t mismatches = 0;
  double max_abs_error = 0;
  double max_rel_error = 0;  // over elements whose reference is not 0
  // The first element out of tolerance, with both values.
  std::optional<size_t> first_mismatch;
  double device_value = 0;
  double reference_value = 0;

  bool pass() const { return mismatches == 0; }
};

struct CheckReport {
  std::string kernel;
  std::string device;
  std::vector<OutputCheck> outputs;

  bool pass() const;
  // One line per output: "argument 2 (Out) f64, 1000 element(s): pass, max abs error 0, ..." or
  // "...: FAIL, 1 mismatch(es), first at index 17: device 34, reference 35; ...".
  std::string text() const;
};

// Check mode (the device gate): runs every launch check, copies the buffers to the host, launches
// the kernel on the client's device, runs the reference on the host copies and compares each Out
// and Shared buffer, whole, with the reference's. The tolerance defaults to that of the least
// precise element type among the kernel's parameters (bf16 inputs bound an f32 output's precision).
// The caller's buffers are left as the kernel left them. Inside a FakeDevice scope the kernel still
// runs on the device.
CheckReport check(const References& refs, const Entry& entry, const Client& client, std::span<const Handle> buffers,
                  std::optional<Grid> grid = std::nullopt, std::optional<Tolerance> tolerance = std::nullopt);
inline CheckReport check(const References& refs, const Entry& entry, const Client& client,
                         std::initializer_list<Handle> buffers, std::optional<Grid> grid = std::nullopt,
                         std::optional<Tolerance> tolerance = std::nullopt) {
  return check(refs, entry, client, std::span<const Handle>(buffers.begin(), buffers.size()), grid, tolerance);
}

}  // namespace kiln::tile
