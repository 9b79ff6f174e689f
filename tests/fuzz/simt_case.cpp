// One SIMT case: the generated kernel verified, evaluated, run on the device, compared; a
// disagreement written as IR text and, with --reduce, shrunk to a reproducer.
#include "kiln/error.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"
#include "program.h"

namespace kiln::fuzz {

namespace {

bool same_outputs(const Program& p, const Evaluation& a, const Evaluation& b) {
  for (size_t i = 0; i < p.args.size(); ++i) {
    if (p.is_output[i] && a.outcome.after[i] != b.outcome.after[i]) return false;
  }
  return a.outcome.error_kind == b.outcome.error_kind;
}

uint64_t ops_in(const Program& p) {
  uint64_t n = 0;
  for (const auto& [kind, c] : op_counts(p.kernel)) n += c;
  return n;
}

}  // namespace

CaseReport run_simt_case(uint64_t seed, const RunOptions& o) {
  CaseReport r;
  Program p = generate_simt(seed);
  try {
    ir::verify(p.kernel, "fuzz");
  } catch (const Error& e) {
    r.status = CaseReport::Status::Refused;
    r.difference = std::string("the generator made a kernel the verifier refuses: ") + e.what();
    return r;
  }
  for (const auto& [kind, c] : op_counts(p.kernel)) r.coverage.emplace_back(ir::op_name(kind));
  Evaluation want = evaluate(p);
  r.trivial = same_outputs(p, want, evaluate(with_other_inputs(p, seed)));
  want = expected(p, o, std::move(want));
  const Outcome got = run_on_device(p, o.device);
  relax_for_device(want, got, o.device);
  r.both_failed = !want.outcome.error_kind.empty();
  if (refused_by_device(want.outcome, got, r)) return r;
  const Verdict v = compare(p, want, got);
  if (!settle(r, v)) return r;
  r.text = "// kiln_fuzz --family simt --seed " + std::to_string(seed) + " --count 1 --device " + o.device +
           " --against " + o.against + "\n// cubes " + std::to_string(p.cubes) + " x units " + std::to_string(p.units) +
           (p.checked ? ", checked" : ", unchecked") + "\n// " + v.first_difference + "\n" + ir::print(p.kernel);
  if (o.reduce) {
    int tries = 0;
    const Program small = reduce(p, o, &tries);
    Evaluation small_want = expected(small, o, evaluate(small));
    const Outcome small_got = run_on_device(small, o.device);
    relax_for_device(small_want, small_got, o.device);
    const Verdict rv = compare(small, small_want, small_got);
    r.reduced = reproducer(small, rv.first_difference + " (reduced from " + std::to_string(ops_in(p)) + " ops to " +
                                      std::to_string(ops_in(small)) + " in " + std::to_string(tries) + " tries)");
  }
  return r;
}

}  // namespace kiln::fuzz
