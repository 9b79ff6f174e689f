// The pipeline: one flat list of passes, a dump hook after each, and the verifier between them.
#include <string>

#include "kiln/error.h"
#include "kiln/ir/verifier.h"
#include "kiln/passes/passes.h"

namespace kiln::passes {

const std::vector<Pass>& default_pipeline() {
  // promote_vars first, so that every later pass sees values instead of Vars (and lower_tiles sees
  // the tiles a loop carries); lower_tiles next, so that the rest see only kiln's ops; vectorize
  // then, on loops whose accesses still carry `checked` (it guards its wide ones itself and leaves
  // the scalar ones to checked_io); checked_io before the others: it adds len/compare ops that
  // fold, cse and dce then tidy. The tile dialect's passes before lower_tiles: place_products
  // decides, from the whole program, where each product runs; pipeline_loops writes each loop's
  // rings and resident factors as tile ops (from those placements: a factor tensor cores read
  // pads its rows); assign_layouts writes where every register tile sits and each change of
  // layout; lower_tiles then lowers op by op.
  static const std::vector<Pass> pipeline = {
      {"promote_vars", promote_vars},
      {"place_products", place_products},
      {"pipeline_loops", pipeline_loops},
      {"assign_layouts", assign_layouts},
      {"lower_tiles", lower_tiles},
      {"vectorize", vectorize},
      {"checked_io", checked_io},
      {"fold", fold},
      {"cse", cse},
      {"dce", dce},
  };
  return pipeline;
}

void run_pipeline(ir::Kernel& k, const PipelineOptions& options) {
  const auto& pipeline = default_pipeline();
  bool known = options.stop_after.empty() || options.stop_after == "traced";
  for (const Pass& p : pipeline) known = known || p.name == options.stop_after;
  if (!known) {
    std::string names = "traced";
    for (const Pass& p : pipeline) names += ", " + std::string(p.name);
    throw Error("passes.unknown_stage",
                "no pass is named '" + std::string(options.stop_after) + "'; stages are " + names);
  }
  if (options.dump) options.dump("traced", k);
  if (options.stop_after == "traced") return;
  if (options.target.known()) k.facts.target = options.target;
  for (const Pass& p : pipeline) {
    p.run(k);
    if (options.verify_each) ir::verify(k, "after " + std::string(p.name));
    if (options.dump) options.dump(p.name, k);
    if (options.stop_after == p.name) return;
  }
}

}  // namespace kiln::passes
