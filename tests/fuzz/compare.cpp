// Whether a device's run agrees with the evaluator's, by the tolerance table of docs/fuzz.md:
// integers, bools, casts and correctly rounded float ops (+ - * / fma sqrt, rem, min, max, floor,
// ceil, trunc, round, copysign, abs, neg) bit for bit, any NaN matching any NaN; a float whose
// value a transcendental op (exp log sin cos tanh) fed within its bound; what such a value decided
// (a branch, a compare, a cast to an integer) not at all. Errors must match by kind.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "numbers.h"
#include "program.h"

namespace kiln::fuzz {

namespace {

long double value_of(ir::Scalar s, const unsigned char* p) {
  uint64_t bits = 0;
  std::memcpy(&bits, p, size_t(ir::scalar_bytes(s)));
  return float_value(s, bits);
}

// The bound for a value a transcendental op fed: relative, by its type's precision (a few of the
// op's ulps, grown over the ops that follow), or absolute near zero.
bool close(ir::Scalar s, long double want, long double got) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (std::isinf(want) || std::isinf(got)) return want == got;
  return std::fabs(want - got) <= approximate_tolerance(s) * std::max(std::fabs(want), 1.0L);
}

bool unspecified_off_the_cpu(const std::string& error_kind) {
  return error_kind == "bounds.out_of_range" || error_kind == "arith.division_by_zero";
}

}  // namespace

Evaluation expected(const Program& p, const RunOptions& o, Evaluation want) {
  if (o.against == "cpu" && want.outcome.error_kind.empty()) want.outcome = run_on_device(p, "cpu");
  return want;
}

void relax_for_device(Evaluation& want, const Outcome& got, const std::string& device) {
  if (device == "cpu" || !unspecified_off_the_cpu(want.outcome.error_kind)) return;
  want.outcome = got;
  for (auto& per_element : want.trust) std::fill(per_element.begin(), per_element.end(), Trust::Unknown);
}

Verdict compare(const Program& p, const Evaluation& want, const Outcome& got) {
  Verdict v;
  if (errors_differ(want.outcome, got, v)) return v;
  if (!got.error_kind.empty()) return v;  // the same error on both sides: a failed launch's outputs mean nothing
  for (size_t i = 0; i < p.args.size(); ++i) {
    if (!p.is_output[i]) continue;
    const ir::Scalar s = p.kernel.params[i].type.scalar;
    const size_t bytes = size_t(ir::scalar_bytes(s));
    for (size_t e = 0; e < want.trust[i].size(); ++e) {
      const unsigned char* w = want.outcome.after[i].data() + e * bytes;
      const unsigned char* g = got.after[i].data() + e * bytes;
      const Trust t = want.trust[i][e];
      bool same = std::memcmp(w, g, bytes) == 0;
      if (ir::is_float(s) && !same) {
        const long double x = value_of(s, w), y = value_of(s, g);
        same = (std::isnan(x) && std::isnan(y)) || (t == Trust::Approximate && close(s, x, y));
      }
      if (t == Trust::Unknown) {
        ++v.unknown;
        continue;
      }
      ++(t == Trust::Exact ? v.exact : v.approximate);
      if (!same && v.agree) {
        v.agree = false;
        auto hex = [&](const unsigned char* q) {
          std::string h;
          char buf[4];
          for (size_t b = bytes; b-- > 0;) {
            std::snprintf(buf, sizeof buf, "%02x", q[b]);
            h += buf;
          }
          return h;
        };
        v.first_difference = p.kernel.params[i].name + "[" + std::to_string(e) + "]: the evaluator has 0x" + hex(w) +
                             ", the device 0x" + hex(g) + (t == Trust::Approximate ? " (beyond the tolerance)" : "");
      }
    }
  }
  return v;
}

std::map<ir::OpKind, uint64_t> op_counts(const ir::Kernel& k) {
  std::map<ir::OpKind, uint64_t> c;
  ir::walk(k.body, [&](const ir::Op& op) { ++c[op.kind]; });
  return c;
}

Program with_other_inputs(const Program& p, uint64_t seed) {
  Program q = p;
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  for (size_t i = 0; i < q.args.size(); ++i) {
    if (q.is_output[i]) continue;
    for (unsigned char& b : q.args[i]) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      b = static_cast<unsigned char>(x >> 24);
    }
  }
  return q;
}

}  // namespace kiln::fuzz
