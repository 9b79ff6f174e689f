// The reference registry, fake mode (references instead of kernels, after the launch checks) and
// check mode (kernel and reference side by side, compared with a tolerance).
#include "kiln/tile/reference.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <utility>

namespace kiln::tile {

namespace {

template <class T>
double to_double(T v) {
  if constexpr (ir::is_short_float_type<T>) {
    return double(float(v));
  } else {
    return double(v);
  }
}

template <class T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else {
    return T(v);
  }
}

std::string argument(size_t i, Role r) {
  return "argument " + std::to_string(i) + " (" + std::string(to_string(r)) + ")";
}

// The extent the launch's grid makes of the cells: a dyn_dim extent is its grid axis's blocks
// times the tile.
std::vector<int64_t> resolved_extent(const ParamDecl& d, const Grid& grid) {
  if (!d.cells) return {};
  std::vector<int64_t> e = d.cells->extent();
  for (size_t i = 0; i < e.size(); ++i) {
    int axis = d.cells->axes()[i];
    if (e[i] == dyn_dim && axis != free_axis) e[i] = int64_t(grid[size_t(axis)]) * d.cells->tile()[i];
  }
  return e;
}

std::vector<HostBuffer> to_host(const Entry& entry, const Client& client, std::span<const Handle> buffers,
                                const Grid& grid) {
  const auto& params = entry.program().params();
  std::vector<HostBuffer> host;
  host.reserve(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    std::vector<std::byte> bytes(buffers[i].size_in_used());
    client.read_bytes(buffers[i], bytes.data(), bytes.size());
    host.emplace_back(params[i], resolved_extent(params[i], grid), std::move(bytes),
                      "kernel `" + entry.program().name() + "`: " + argument(i, params[i].role));
  }
  return host;
}

bool is_output(Role r) { return r == Role::Out || r == Role::Shared; }

thread_local const References* fake_scope = nullptr;

}  // namespace

// ---- HostBuffer ----------------------------------------------------------------------------------

HostBuffer::HostBuffer(const ParamDecl& decl, std::vector<int64_t> extent, std::vector<std::byte> bytes,
                       std::string label)
    : decl_(decl), extent_(std::move(extent)), bytes_(std::move(bytes)), label_(std::move(label)) {}

void HostBuffer::check_element(ir::Scalar wanted) const {
  if (wanted != decl_.element) {
    throw Error("reference.type_mismatch", label_ + " holds " + std::string(ir::scalar_name(decl_.element)) +
                                               " and the reference reads it as " +
                                               std::string(ir::scalar_name(wanted)));
  }
}

double HostBuffer::get(size_t i) const {
  return ir::visit_scalar(decl_.element, [&]<class T>() {
    T v;
    std::memcpy(&v, bytes_.data() + i * sizeof(T), sizeof(T));
    return to_double(v);
  });
}

std::vector<double> HostBuffer::values() const {
  std::vector<double> v(size());
  for (size_t i = 0; i < v.size(); ++i) v[i] = get(i);
  return v;
}

void HostBuffer::set(size_t i, double v) {
  ir::visit_scalar(decl_.element, [&]<class T>() {
    T x = from_double<T>(v);
    std::memcpy(bytes_.data() + i * sizeof(T), &x, sizeof(T));
  });
}

// ---- the registry --------------------------------------------------------------------------------

ReferenceFn last_out(std::function<void(std::span<const HostBuffer> inputs, HostBuffer& out)> fn) {
  return [fn = std::move(fn)](std::span<HostBuffer> buffers, const Grid&) {
    if (buffers.empty()) throw Error("launch.arity", "last_out: the kernel takes no buffers");
    fn(buffers.first(buffers.size() - 1), buffers.back());
  };
}

References& References::add(std::string name, size_t buffers, ReferenceFn fn) {
  fns_[std::move(name)] = Reference{buffers, std::move(fn)};
  return *this;
}

const Reference& References::at(std::string_view name) const {
  auto it = fns_.find(name);
  if (it != fns_.end()) return it->second;
  std::string known;
  for (const auto& [n, f] : fns_) known += (known.empty() ? "" : ", ") + n;
  throw Error("reference.missing", "kernel `" + std::string(name) + "`: no reference is registered under this name (" +
                                       (known.empty() ? std::string("none are registered") : "registered: " + known) +
                                       ")");
}

const ReferenceFn& References::of(const Entry& entry) const {
  const std::string& name = entry.program().name();
  const Reference& r = at(name);
  const size_t params = entry.program().params().size();
  if (r.buffers != params) {
    throw Error("reference.arity",
                "kernel `" + name + "` takes " + std::to_string(params) +
                    " buffer(s), and its reference was registered for " + std::to_string(r.buffers) +
                    ": register it with the kernel's count, or check that this is the kernel it is for");
  }
  return r.fn;
}

std::vector<std::string> References::names() const {
  std::vector<std::string> n;
  for (const auto& [name, f] : fns_) n.push_back(name);
  return n;
}

// ---- fake mode -----------------------------------------------------------------------------------

FakeDevice::FakeDevice(const References& refs) : previous_(fake_scope) { fake_scope = &refs; }
FakeDevice::~FakeDevice() { fake_scope = previous_; }
const References* FakeDevice::current() { return fake_scope; }

void detail::run_reference(const References& refs, const Entry& entry, const Client& client,
                           std::span<const Handle> buffers, const Grid& grid) {
  const ReferenceFn& fn = refs.of(entry);
  std::vector<HostBuffer> host = to_host(entry, client, buffers, grid);
  fn(host, grid);
  const auto& params = entry.program().params();
  for (size_t i = 0; i < params.size(); ++i) {
    if (is_output(params[i].role)) client.write_bytes(buffers[i], host[i].bytes().data(), host[i].bytes().size());
  }
}

void launch_reference(const References& refs, const Entry& entry, const Client& client, std::span<const Handle> buffers,
                      std::optional<Grid> grid) {
  Grid g = entry.checked_grid(buffers, grid);
  detail::run_reference(refs, entry, client, buffers, g);
}

// ---- check mode ----------------------------------------------------------------------------------

Tolerance default_tolerance(ir::Scalar element) {
  if (!ir::is_float(element)) return {0, 0};
  const int digits = ir::scalar_facts(element).digits;
  return digits >= 53 ? Tolerance{1e-12, 1e-12} : digits >= 24 ? Tolerance{1e-5, 1e-5} : Tolerance{1e-2, 1e-2};
}

namespace {

// Fewer mantissa bits first: the tolerance of a float output follows the least precise float
// parameter, since an input rounded to it bounds what any output can agree to.
int precision_bits(ir::Scalar s) { return ir::is_float(s) ? ir::scalar_facts(s).digits : 53; }

OutputCheck compare(size_t param, const HostBuffer& got, const HostBuffer& want, Tolerance tol) {
  OutputCheck c;
  c.param = param;
  c.role = got.role();
  c.element = got.element();
  c.tolerance = tol;
  c.elements = got.size();
  const bool exact = !ir::is_float(got.element());
  const size_t width = size_t(ir::scalar_bytes(got.element()));
  for (size_t i = 0; i < c.elements; ++i) {
    double d = got.get(i), w = want.get(i);
    bool same;
    if (exact) {
      // Integers compare by their bytes: a double holds no more than 53 bits of an i64.
      same = std::memcmp(got.bytes().data() + i * width, want.bytes().data() + i * width, width) == 0;
    } else {
      same = d == w || (std::isnan(d) && std::isnan(w));
    }
    double err = same ? 0.0 : std::abs(d - w);
    if (std::isnan(err)) err = std::numeric_limits<double>::infinity();
    c.max_abs_error = std::max(c.max_abs_error, err);
    if (w != 0 && !std::isnan(w)) c.max_rel_error = std::max(c.max_rel_error, err / std::abs(w));
    bool ok = same || (!exact && err <= tol.absolute + tol.relative * std::abs(w));
    if (!ok) {
      if (!c.first_mismatch) {
        c.first_mismatch = i;
        c.device_value = d;
        c.reference_value = w;
      }
      ++c.mismatches;
    }
  }
  return c;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

bool CheckReport::pass() const {
  for (const OutputCheck& o : outputs) {
    if (!o.pass()) return false;
  }
  return true;
}

std::string CheckReport::text() const {
  std::string t;
  for (const OutputCheck& o : outputs) {
    t += "kernel `" + kernel + "` on " + device + ": " + argument(o.param, o.role) + " " +
         std::string(ir::scalar_name(o.element)) + ", " + std::to_string(o.elements) + " element(s): ";
    if (o.pass()) {
      t += "pass";
    } else {
      t += "FAIL, " + std::to_string(o.mismatches) + " mismatch(es), first at index " +
           std::to_string(*o.first_mismatch) + ": device " + number(o.device_value) + ", reference " +
           number(o.reference_value);
    }
    t += "; max abs error " + short_number(o.max_abs_error) + ", max rel error " + short_number(o.max_rel_error) +
         " (tolerance " + short_number(o.tolerance.absolute) + " + " + short_number(o.tolerance.relative) +
         " x |reference|)\n";
  }
  return t;
}

CheckReport check(const References& refs, const Entry& entry, const Client& client, std::span<const Handle> buffers,
                  std::optional<Grid> grid, std::optional<Tolerance> tolerance) {
  Grid g = entry.checked_grid(buffers, grid);
  const ReferenceFn& fn = refs.of(entry);
  const auto& params = entry.program().params();
  // The reference reads the buffers as they were before the kernel wrote any of them.
  std::vector<HostBuffer> want = to_host(entry, client, buffers, g);
  {
    // The kernel runs on the device even inside a FakeDevice scope: check mode compares the two.
    struct Suspend {
      const References* saved = fake_scope;
      Suspend() { fake_scope = nullptr; }
      ~Suspend() { fake_scope = saved; }
    } suspend;
    entry.launch(client, buffers, grid);
  }
  fn(want, g);
  std::vector<HostBuffer> got = to_host(entry, client, buffers, g);

  ir::Scalar least = ir::Scalar::F64;
  for (const ParamDecl& d : params) {
    if (ir::is_float(d.element) && precision_bits(d.element) < precision_bits(least)) least = d.element;
  }
  CheckReport report{entry.program().name(), client.device().name(), {}};
  for (size_t i = 0; i < params.size(); ++i) {
    if (!is_output(params[i].role)) continue;
    Tolerance tol =
        tolerance ? *tolerance : default_tolerance(ir::is_float(params[i].element) ? least : params[i].element);
    report.outputs.push_back(compare(i, got[i], want[i], tol));
  }
  return report;
}

}  // namespace kiln::tile
