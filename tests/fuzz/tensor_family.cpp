// One case of the tensor family: the seed's chain (tensor_generator.cpp) run through kiln's tensor
// library on a device, fused or eagerly as the seed says, and compared element by element with the
// host reference (tensor_reference.cpp) or with the same chain on the CPU device; the reference
// says which elements are exact, approximate within a bound, or not comparable.
#include <cmath>
#include <cstring>
#include <map>

#include "kiln/autotune.h"
#include "kiln/runtime.h"
#include "kiln/tensor.h"
#include "numbers.h"
#include "program.h"
#include "tensor_chain.h"

namespace kiln::fuzz {

namespace {

using namespace tensor_chain;
using tensor_chain::Trust;  // not program.h's, which is the IR evaluator's

// What a run on a device read back: the compared nodes' values, or the error it stopped with.
struct DeviceRun {
  std::vector<TensorData> outputs;  // per compared_nodes() entry
  std::string error_kind, error_message;
  std::vector<std::string> variants;  // the matmul variants it ran, in order
};

kiln::Operand number(DType d, double v) {
  if (ir::is_float(d)) return kiln::Operand(v);
  return kiln::Operand(int64_t(v));
}

// The tensors of one run, and which of them a step may take by std::move: a node not compared,
// at its last use, named once by that step.
class Runner {
 public:
  Runner(const Chain& c, const Client& client) : c_(c), client_(client), nodes_(c.steps.size()) {
    last_use_.assign(c.steps.size(), -1);
    for (size_t n = 0; n < c.steps.size(); ++n) {
      for (const Arg& a : c.steps[n].args) {
        if (!a.is_number()) last_use_[size_t(a.node)] = int(n);
      }
    }
    for (int n : compared_nodes(c)) last_use_[size_t(n)] = -1;
  }

  DeviceRun run() {
    DeviceRun r;
    for (size_t n = 0; n < c_.steps.size(); ++n) nodes_[n] = step(n, r);
    for (int n : compared_nodes(c_)) r.outputs.push_back(nodes_[size_t(n)].to_data());
    return r;
  }

 private:
  kiln::Operand arg(size_t n, size_t k, DType d) {
    const Step& s = c_.steps[n];
    const Arg& a = s.args[k];
    if (a.is_number()) return number(d, a.number);
    int named = 0;
    for (const Arg& b : s.args) named += b.node == a.node;
    Tensor& t = nodes_[size_t(a.node)];
    if (!c_.hold && named == 1 && last_use_[size_t(a.node)] == int(n)) return kiln::Operand(std::move(t));
    return kiln::Operand(static_cast<const Tensor&>(t));
  }

  const Tensor& node(const Arg& a) const { return nodes_[size_t(a.node)]; }

  // The operands' element type (a where's values, not its condition).
  DType operand_type(const Step& s) const {
    for (size_t k = s.kind == StepKind::Where ? 1 : 0; k < s.args.size(); ++k) {
      if (!s.args[k].is_number()) return node(s.args[k]).dtype();
    }
    return s.dtype;
  }

  Tensor step(size_t n, DeviceRun& r) {
    const Step& s = c_.steps[n];
    const DType d = s.args.empty() ? s.dtype : operand_type(s);
    switch (s.kind) {
      case StepKind::Input: {
        const Input& in = c_.inputs[size_t(s.input)];
        return Tensor::from_data(client_, TensorData{in.dtype, in.shape, in.bytes});
      }
      case StepKind::SwapDims: return node(s.args[0]).swap_dims(s.dims[0], s.dims[1]);
      case StepKind::Permute: return node(s.args[0]).permute(s.dims);
      case StepKind::Slice: return node(s.args[0]).slice(s.dims[0], s.dims[1], s.dims[2], s.dims[3]);
      case StepKind::Expand: return node(s.args[0]).expand(s.dims);
      case StepKind::Cast: return kiln::cast(arg(n, 0, d), s.dtype);
      case StepKind::Where: return kiln::where(arg(n, 0, DType::Bool), arg(n, 1, d), arg(n, 2, d));
      case StepKind::Unary: return unary(s.op, arg(n, 0, d));
      case StepKind::Binary: return binary(s.op, arg(n, 0, d), arg(n, 1, d));
      case StepKind::Reduce: return reduce(s, node(s.args[0]));
      case StepKind::Rows:
        return s.op == "softmax" ? softmax(node(s.args[0]), s.dims[0]) : log_softmax(node(s.args[0]), s.dims[0]);
      case StepKind::Matmul: {
        const Tensor &a = node(s.args[0]), &b = node(s.args[1]);
        const std::vector<std::string> variants = matmul_variants(a, b);
        r.variants.push_back(variants[s.choice % variants.size()]);
        return kiln::matmul(a, b, r.variants.back());
      }
    }
    return Tensor();
  }

  static Tensor unary(const std::string& op, kiln::Operand a) {
    using Fn = Tensor (*)(kiln::Operand);
    static const std::map<std::string, Fn> fns = {{"neg", kiln::neg},  {"abs", kiln::abs},         {"exp", kiln::exp},
                                                  {"log", kiln::log},  {"sqrt", kiln::sqrt},       {"tanh", kiln::tanh},
                                                  {"erf", kiln::erf},  {"sigmoid", kiln::sigmoid}, {"relu", kiln::relu},
                                                  {"gelu", kiln::gelu}};
    return fns.at(op)(std::move(a));
  }

  static Tensor binary(const std::string& op, kiln::Operand a, kiln::Operand b) {
    using Fn = Tensor (*)(kiln::Operand, kiln::Operand);
    static const std::map<std::string, Fn> fns = {
        {"add", kiln::add}, {"sub", kiln::sub}, {"mul", kiln::mul}, {"div", kiln::div}, {"rem", kiln::rem},
        {"pow", kiln::pow}, {"max", kiln::max}, {"min", kiln::min}, {"eq", kiln::eq},   {"ne", kiln::ne},
        {"lt", kiln::lt},   {"le", kiln::le},   {"gt", kiln::gt},   {"ge", kiln::ge}};
    return fns.at(op)(std::move(a), std::move(b));
  }

  static Tensor reduce(const Step& s, const Tensor& t) {
    if (s.op == "argmax") return kiln::argmax(t, s.dims[0], s.keepdim);
    if (s.op == "argmin") return kiln::argmin(t, s.dims[0], s.keepdim);
    using Fn = Tensor (*)(const Tensor&, const std::vector<int64_t>&, bool);
    static const std::map<std::string, Fn> fns = {
        {"sum", kiln::sum}, {"mean", kiln::mean}, {"amax", kiln::amax}, {"amin", kiln::amin}};
    return fns.at(s.op)(t, s.dims, s.keepdim);
  }

  const Chain& c_;
  const Client& client_;
  std::vector<Tensor> nodes_;
  std::vector<int> last_use_;  // the step that may take a node by std::move; -1: none
};

DeviceRun run_on(const Chain& c, const std::string& device) {
  fusion::set_enabled(c.fused);
  // Timing candidates would make a case slow and its kernels depend on the machine's mood; matmul's
  // variant comes from the seed instead, the row ops run their default.
  autotune::set_mode(autotune::Mode::off);
  DeviceRun r;
  try {
    r = Runner(c, client_for(device)).run();
  } catch (const Error& e) {
    r.error_kind = e.kind();
    r.error_message = e.what();
  }
  fusion::set_enabled(std::nullopt);
  return r;
}

// Element k's bits, and its value by numbers.h's decoding.
uint64_t bits_at(const TensorData& t, size_t k) {
  uint64_t b = 0;
  std::memcpy(&b, t.bytes.data() + k * element_bytes(t.dtype), element_bytes(t.dtype));
  return b;
}
double float_at(const TensorData& t, size_t k) { return double(float_value(t.dtype, bits_at(t, k))); }
int64_t int_at(const TensorData& t, size_t k) { return signed_value(t.dtype, bits_at(t, k)); }

bool same_float(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);  // any NaN matches any NaN
  return a == b && std::signbit(a) == std::signbit(b);
}

std::string number_text(double v) {
  char s[40];
  std::snprintf(s, sizeof s, "%.17g", v);
  return s;
}

// Compares node `node`'s values as read back (`got`) with `want`: the reference's values, or the
// CPU's (`cpu`: then an approximate element may be off by twice the bound, once each side).
void compare_node(int node, const Values& ref, const TensorData* cpu, const TensorData& got, CaseReport& r) {
  auto fail = [&](const std::string& what) {
    if (r.status != CaseReport::Status::Disagree) r.difference = "%" + std::to_string(node) + what;
    r.status = CaseReport::Status::Disagree;
  };
  if (got.dtype != ref.dtype || got.shape != ref.shape) {
    return fail(" came back as " + std::string(ir::scalar_name(got.dtype)) + " " + to_string(got.shape) + ", not " +
                std::string(ir::scalar_name(ref.dtype)) + " " + to_string(ref.shape));
  }
  const bool floats = ir::is_float(ref.dtype);
  for (size_t k = 0; k < ref.size(); ++k) {
    const Trust t = ref.trust[k];
    if (t == Trust::Unknown) {
      ++r.unknown;
      continue;
    }
    (t == Trust::Exact ? r.exact : r.approximate) += 1;
    bool ok;
    std::string want, have;
    if (floats) {
      const double w = cpu ? float_at(*cpu, k) : ref.f[k], g = float_at(got, k);
      const double bound = cpu ? 2 * ref.err[k] : ref.err[k];
      ok = t == Trust::Exact ? same_float(w, g) : (std::isnan(w) ? std::isnan(g) : g == w || std::fabs(g - w) <= bound);
      want = number_text(w) + (t == Trust::Exact ? "" : " ± " + number_text(bound));
      have = number_text(g);
    } else {
      const int64_t w = cpu ? int_at(*cpu, k) : ref.i[k], g = int_at(got, k);
      ok = w == g;
      want = std::to_string(w);
      have = std::to_string(g);
    }
    if (!ok) fail(" element " + std::to_string(k) + ": want " + want + ", got " + have);
  }
}

bool same_values(const Values& a, const Values& b) {
  for (size_t k = 0; k < a.size(); ++k) {
    if (ir::is_float(a.dtype) ? !same_float(a.f[k], b.f[k]) : a.i[k] != b.i[k]) return false;
  }
  return true;
}

// What the case exercises: each op, each view, each element type, the fusion mode, and whether
// operands were given by std::move.
std::vector<std::string> coverage(const Chain& c) {
  std::vector<std::string> what;
  auto add = [&](const std::string& s) {
    if (std::find(what.begin(), what.end(), s) == what.end()) what.push_back(s);
  };
  for (const Step& s : c.steps) {
    switch (s.kind) {
      case StepKind::Input: add(std::string("input ") + std::string(ir::scalar_name(s.dtype))); break;
      case StepKind::SwapDims: add("view swap_dims"); break;
      case StepKind::Permute: add("view permute"); break;
      case StepKind::Slice: add(s.dims[3] > 1 ? "view slice with a step" : "view slice"); break;
      case StepKind::Expand: add("view expand"); break;
      case StepKind::Cast: add("cast to " + std::string(ir::scalar_name(s.dtype))); break;
      case StepKind::Where: add("where"); break;
      case StepKind::Matmul: add("matmul"); break;
      default: add(s.op);
    }
  }
  add(c.fused ? "fused" : "unfused");
  add(c.hold ? "steps held" : "steps moved");
  return what;
}

std::string error_text(const DeviceRun& run) { return "kiln threw " + run.error_kind + ": " + run.error_message; }

// Errors that say the generator made a chain outside the library's contract.
bool refused_kind(const std::string& kind) {
  for (const char* k : {"tensor.unsupported_dtype", "tensor.dtype_mismatch", "tensor.shape_mismatch",
                        "tensor.bad_scalar", "tensor.bad_dim"}) {
    if (kind == k) return true;
  }
  return false;
}

}  // namespace

CaseReport run_tensor_case(uint64_t seed, const RunOptions& o) {
  CaseReport r;
  const Chain chain = generate(seed);
  r.coverage = coverage(chain);
  const std::vector<Values> want = reference(chain);
  const std::vector<int> compared = compared_nodes(chain);
  const Values& result = want[size_t(compared[0])];
  r.trivial = same_values(result, reference(with_other_inputs(chain, seed))[size_t(compared[0])]);
  DeviceRun cpu;
  if (o.against == "cpu") cpu = run_on(chain, "cpu");
  const DeviceRun got = run_on(chain, o.device);
  if (!got.error_kind.empty() && refused_kind(got.error_kind)) {
    r.status = CaseReport::Status::Refused;
    r.difference = error_text(got);
    return r;
  }
  if (!got.error_kind.empty() || !cpu.error_kind.empty()) {
    r.status = CaseReport::Status::Disagree;
    r.difference = error_text(got.error_kind.empty() ? cpu : got) + (got.error_kind.empty() ? " on the cpu" : "");
  } else {
    for (size_t k = 0; k < compared.size(); ++k) {
      compare_node(compared[k], want[size_t(compared[k])], o.against == "cpu" ? &cpu.outputs[k] : nullptr,
                   got.outputs[k], r);
    }
  }
  std::string variants;
  for (const std::string& v : got.variants) variants += " \"" + v + "\"";
  r.text = "// kiln_fuzz --family tensor --seed " + std::to_string(seed) + " --count 1 --device " + o.device +
           " --against " + o.against + "\n// " + r.difference + "\n" + describe(chain) +
           (variants.empty() ? "" : "// matmul variants:" + variants + "\n");
  return r;
}

}  // namespace kiln::fuzz
