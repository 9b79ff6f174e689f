// One tile case: recorded from its seed, evaluated by the tile evaluator, launched on a kiln device
// through tile::Entry (the launch checks, lower_tiles, the backend), and compared by the trust the
// evaluator gives each output element.
#include <cmath>
#include <cstring>
#include <map>

#include "kiln/error.h"
#include "kiln/ir/text.h"
#include "kiln/runtime/device.h"
#include "numbers.h"
#include "tile_program.h"

namespace kiln::fuzz {

namespace {

using ir::Scalar;

bool same_element(Scalar s, uint64_t a, uint64_t b) {
  if (ir::is_float(s) && std::isnan(float_value(s, a))) return std::isnan(float_value(s, b));
  return (a & mask_of(s)) == (b & mask_of(s));
}

Verdict compare_tile(const TileCase& c, const TileEvaluation& want, const Outcome& got) {
  Verdict v;
  if (errors_differ(want.outcome, got, v)) return v;
  if (!got.error_kind.empty()) return v;  // the same error on both sides: the outputs mean nothing
  const ir::Kernel& k = c.program->kernel();
  for (size_t p = 0; p < c.args.size(); ++p) {
    if (!c.is_output[p]) continue;
    const Scalar s = k.params[p].type.scalar;
    const size_t bytes = size_t(ir::scalar_bytes(s));
    for (size_t i = 0; i < want.trust[p].size(); ++i) {
      uint64_t w = 0, g = 0;
      std::memcpy(&w, want.outcome.after[p].data() + i * bytes, bytes);
      std::memcpy(&g, got.after[p].data() + i * bytes, bytes);
      const Trust t = want.trust[p][i];
      bool ok = true;
      if (t == Trust::Unknown) {
        ++v.unknown;
        continue;
      }
      if (t == Trust::Exact) {
        ++v.exact;
        ok = same_element(s, w, g);
      } else {
        ++v.approximate;
        const long double x = float_value(s, w), y = float_value(s, g);
        ok = std::isnan(x)                    ? std::isnan(y)
             : std::isinf(x) || std::isinf(y) ? x == y
                                              : std::fabs(x - y) <= want.bound[p][i];
      }
      if (!ok && v.agree) {
        v.agree = false;
        auto shown = [&](uint64_t b) {
          return ir::is_float(s) ? std::to_string(double(float_value(s, b))) : std::to_string(signed_value(s, b));
        };
        v.first_difference =
            "parameter " + std::to_string(p) + " element " + std::to_string(i) + ": want " + shown(w) +
            (t == Trust::Approximate ? " (within " + std::to_string(double(want.bound[p][i])) + ")" : "") + ", got " +
            shown(g);
      }
    }
  }
  return v;
}

// Whether two evaluations leave the same outputs: the program's outputs ignore its inputs (a
// Shared parameter that the program left as it was counts as the same).
bool same_outputs(const TileCase& a, const TileEvaluation& x, const TileCase& b, const TileEvaluation& y) {
  if (x.outcome.error_kind != y.outcome.error_kind) return false;
  for (size_t p = 0; p < a.args.size(); ++p) {
    if (!a.is_output[p]) continue;
    const bool untouched = x.outcome.after[p] == a.args[p] && y.outcome.after[p] == b.args[p];
    if (x.outcome.after[p] != y.outcome.after[p] && !untouched) return false;
  }
  return true;
}

}  // namespace

Outcome run_tile_on_device(const TileCase& c, const std::string& device) {
  Outcome o;
  const Client& client = client_for(device);
  const std::vector<Handle> handles = upload(client, c.program->kernel().params, c.args);
  try {
    tile::Entry(c.program).launch(client, std::span<const Handle>(handles.data(), handles.size()), c.grid);
    client.sync();
  } catch (const Error& e) {
    o.error_kind = e.kind();
    o.error_message = e.what();
  }
  read_back(client, handles, c.args, o);
  return o;
}

CaseReport run_tile_case(uint64_t seed, const RunOptions& o) {
  CaseReport r;
  const TileCase c = generate_tile(seed, seed);
  if (!c.program) {
    r.status = CaseReport::Status::Refused;
    r.difference = "the recorder refused the program: " + c.refused;
    return r;
  }
  for (const auto& [kind, n] : op_counts(c.program->kernel())) r.coverage.emplace_back(ir::op_name(kind));
  r.coverage.push_back("shape " + c.shape);
  for (const std::string& t : c.tags) r.coverage.push_back(t);
  TileEvaluation want = evaluate_tile(c);
  const TileCase other = generate_tile(seed, seed ^ 0x5bd1e995u);
  r.trivial = other.program && same_outputs(c, want, other, evaluate_tile(other));
  if (o.against == "cpu" && want.outcome.error_kind.empty()) want.outcome = run_tile_on_device(c, "cpu");
  r.both_failed = !want.outcome.error_kind.empty();
  const Outcome got = run_tile_on_device(c, o.device);
  if (refused_by_device(want.outcome, got, r)) return r;
  const Verdict v = compare_tile(c, want, got);
  if (!settle(r, v)) return r;
  r.text = "// kiln_fuzz --family tile --seed " + std::to_string(seed) + " --count 1 --device " + o.device +
           " --against " + o.against + "\n// shape " + c.shape + ", grid " + std::to_string(c.grid[0]) + " x " +
           std::to_string(c.grid[1]) + " x " + std::to_string(c.grid[2]) + "\n// " + v.first_difference + "\n" +
           ir::print(c.program->kernel());
  return r;
}

}  // namespace kiln::fuzz
