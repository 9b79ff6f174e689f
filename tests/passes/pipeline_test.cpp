// The default pipeline on kernels traced from the DSL: in checked mode every global access ends up
// masked by its own bound (seed 02's defect was a checked launch that checked nothing), in
// unchecked mode none is; and run_pipeline's dump hook, stop_after and errors.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "kiln/dsl.h"
#include "kiln/error.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"
#include "kiln/passes/passes.h"

namespace kiln {
namespace {

using ir::OpKind;

// Global loads, stores and atomics in straight-line code, in both branches of an If, in a For,
// next to a shared array whose accesses must stay raw.
struct Mixed {
  static constexpr std::string_view name = "mixed";
  void operator()(Slice<const float> x, Slice<float> out, Slice<uint32_t> hist) const {
    auto i = absolute_pos();
    out[i] = x[i] + x[i + 1u];
    If(x[i] > 0.0f, [&] { atomic_add(hist[i], 1u); }).Else([&] { out[i] = 0.0f; });
    For(range(0u, 4u), [&](Expr<uint32_t> j) { out[i + j] = x[j] * 2.0f; });
    SharedArray<float> staged(32);
    staged[unit_pos()] = x[i];
    sync_cube();
    out[i] = staged[unit_pos()];
  }
};

// The one the seed's experiment runs: out = x + y.
struct Add {
  static constexpr std::string_view name = "add";
  void operator()(Slice<const float> x, Slice<const float> y, Slice<float> out) const {
    out[absolute_pos()] = x[absolute_pos()] + y[absolute_pos()];
  }
};

template <class K>
ir::Kernel trace(ir::ExecMode mode) {
  return define<K>(kernel_id<K>(LaunchFacts{{32, 1, 1}, mode}, param_descs<K>()));
}

bool is_access(OpKind k) { return k == OpKind::Load || k == OpKind::Store || ir::is_atomic(k); }

struct AccessFacts {
  int global = 0;           // global accesses seen
  int masked_by_bound = 0;  // ... whose mask is, or and-s in, `index < len(that array)`
  int masked = 0;           // ... with any mask
  int flagged = 0;          // accesses still carrying {checked}
  int other = 0;            // accesses of shared and local arrays
  int other_masked = 0;
};

// Walks the kernel and reads each access's mask back to its definition.
AccessFacts access_facts(const ir::Kernel& k) {
  std::map<ir::Value, const ir::Op*> def;
  ir::walk(k.body, [&](const ir::Op& op) {
    if (op.result != ir::kNoValue) def[op.result] = &op;
  });
  auto through_casts = [&](ir::Value v) {
    while (def.count(v) && def[v]->kind == OpKind::Cast) v = def[v]->operand(ir::ops::Unary::x);
    return v;
  };
  // `m` is `cmp.lt index', len'` where len' is (a cast of) `len array` and index' (a cast of) index.
  auto is_bound = [&](ir::Value m, ir::Value array, ir::Value index) {
    if (!def.count(m) || def[m]->kind != OpKind::Lt) return false;
    const ir::Op& lt = *def[m];
    ir::Value len = through_casts(lt.operand(ir::ops::Binary::rhs));
    bool len_of_array =
        def.count(len) && def[len]->kind == OpKind::Len && def[len]->operand(ir::ops::Array::array) == array;
    return len_of_array && through_casts(lt.operand(ir::ops::Binary::lhs)) == through_casts(index);
  };
  AccessFacts f;
  ir::walk(k.body, [&](const ir::Op& op) {
    if (!is_access(op.kind)) return;
    if (op.flag(ir::AttrKey::Checked)) ++f.flagged;
    bool has_mask = op.mask() != ir::kNoValue;
    const ir::Value array = op.operand(ir::ops::Store::array), index = op.operand(ir::ops::Store::index);
    if (!k.type_of(array).is_global()) {
      ++f.other;
      f.other_masked += has_mask ? 1 : 0;
      return;
    }
    ++f.global;
    if (!has_mask) return;
    ++f.masked;
    ir::Value m = op.mask();
    bool bound = is_bound(m, array, index);
    if (!bound && def.count(m) && def[m]->kind == OpKind::And) {
      bound = is_bound(def[m]->operand(ir::ops::Binary::lhs), array, index) ||
              is_bound(def[m]->operand(ir::ops::Binary::rhs), array, index);
    }
    f.masked_by_bound += bound ? 1 : 0;
  });
  return f;
}

TEST(CheckedKernel, EveryGlobalAccessIsMaskedByItsBoundAfterThePipeline) {
  ir::Kernel k = trace<Mixed>(ir::ExecMode::Checked);
  AccessFacts traced = access_facts(k);
  ASSERT_GE(traced.global, 9) << "the kernel must exercise loads, stores and atomics\n" << ir::print(k);
  EXPECT_EQ(traced.flagged, traced.global) << "the tracer flags every global access";
  EXPECT_EQ(traced.masked, 0);

  passes::PipelineOptions options;
  options.verify_each = true;
  passes::run_pipeline(k, options);
  AccessFacts after = access_facts(k);
  EXPECT_GE(after.global, 9);
  EXPECT_EQ(after.masked_by_bound, after.global) << ir::print(k);
  EXPECT_EQ(after.flagged, 0) << "checked_io consumes the flags";
  EXPECT_EQ(after.other, 2) << "the shared store and load stay";
  EXPECT_EQ(after.other_masked, 0) << "shared arrays have a fixed length; they get no bound";
}

TEST(CheckedKernel, CheckedIoAloneMasksEveryAccessOfTheSeedKernel) {
  ir::Kernel k = trace<Add>(ir::ExecMode::Checked);
  EXPECT_TRUE(passes::checked_io(k));
  ASSERT_NO_THROW(ir::verify(k));
  AccessFacts f = access_facts(k);
  EXPECT_EQ(f.global, 3);
  EXPECT_EQ(f.masked_by_bound, 3) << ir::print(k);
}

TEST(UncheckedKernel, NoAccessIsMaskedAndNoFlagIsLeft) {
  ir::Kernel k = trace<Mixed>(ir::ExecMode::Unchecked);
  ASSERT_GT(access_facts(k).flagged, 0);
  passes::PipelineOptions options;
  options.verify_each = true;
  passes::run_pipeline(k, options);
  AccessFacts f = access_facts(k);
  EXPECT_GE(f.global, 9);
  EXPECT_EQ(f.masked, 0) << ir::print(k);
  EXPECT_EQ(f.flagged, 0);
  int lens = 0;
  ir::walk(k.body, [&](const ir::Op& op) { lens += op.kind == OpKind::Len ? 1 : 0; });
  EXPECT_EQ(lens, 0) << "unchecked mode adds no len";
}

TEST(Pipeline, DumpSeesTracedThenEachPassInOrder) {
  ir::Kernel k = trace<Add>(ir::ExecMode::Checked);
  std::vector<std::string> stages;
  std::vector<std::string> texts;
  passes::PipelineOptions options;
  options.dump = [&](std::string_view stage, const ir::Kernel& seen) {
    stages.emplace_back(stage);
    texts.push_back(ir::print(seen));
  };
  passes::run_pipeline(k, options);
  EXPECT_EQ(stages,
            (std::vector<std::string>{"traced", "promote_vars", "place_products", "pipeline_loops", "assign_layouts",
                                      "lower_tiles", "vectorize", "checked_io", "fold", "cse", "dce"}));
  ASSERT_EQ(texts.size(), 11u);
  EXPECT_NE(texts[0].find("{checked}"), std::string::npos) << "the traced dump is taken before any pass";
  EXPECT_NE(texts[1].find("{checked}"), std::string::npos) << "promote_vars leaves the flags";
  EXPECT_EQ(texts[2], texts[1]) << "place_products changes a kernel without tile products in nothing";
  EXPECT_EQ(texts[3], texts[2]) << "pipeline_loops changes a kernel without tile ops in nothing";
  EXPECT_EQ(texts[4], texts[3]) << "assign_layouts changes a kernel without tiles in nothing";
  EXPECT_EQ(texts[5], texts[4]) << "lower_tiles changes a kernel without tile ops in nothing";
  EXPECT_EQ(texts[6], texts[5]) << "vectorize changes a kernel without vectorize loops in nothing";
  EXPECT_EQ(texts[7].find("{checked}"), std::string::npos) << "the checked_io dump is taken after it ran";
  EXPECT_EQ(texts.back(), ir::print(k));
}

TEST(Pipeline, StopAfterStopsAtThatPass) {
  // checked_io gives Mixed one len per access; cse would merge them, so a kernel that stopped after
  // fold still has them all.
  ir::Kernel k = trace<Mixed>(ir::ExecMode::Checked);
  ir::Kernel full = k;
  passes::run_pipeline(full);
  ir::Kernel by_hand = k;
  passes::promote_vars(by_hand);
  passes::checked_io(by_hand);
  passes::fold(by_hand);
  ASSERT_NE(ir::print(by_hand), ir::print(full)) << "cse and dce must have work left after fold";

  std::vector<std::string> stages;
  passes::PipelineOptions options;
  options.stop_after = "fold";
  options.dump = [&](std::string_view stage, const ir::Kernel&) { stages.emplace_back(stage); };
  passes::run_pipeline(k, options);
  EXPECT_EQ(stages, (std::vector<std::string>{"traced", "promote_vars", "place_products", "pipeline_loops",
                                              "assign_layouts", "lower_tiles", "vectorize", "checked_io", "fold"}));
  EXPECT_EQ(ir::print(k), ir::print(by_hand))
      << "stop_after = fold is promote_vars, place_products, pipeline_loops, assign_layouts, lower_tiles and "
         "vectorize (nothing for them here), checked_io, fold, nothing more";
}

TEST(Pipeline, StopAfterTracedRunsNoPass) {
  ir::Kernel k = trace<Add>(ir::ExecMode::Checked);
  std::string before = ir::print(k);
  std::vector<std::string> stages;
  passes::PipelineOptions options;
  options.stop_after = "traced";
  options.dump = [&](std::string_view stage, const ir::Kernel&) { stages.emplace_back(stage); };
  passes::run_pipeline(k, options);
  EXPECT_EQ(stages, std::vector<std::string>{"traced"});
  EXPECT_EQ(ir::print(k), before);
}

TEST(Pipeline, UnknownStageThrowsBeforeRunningAnything) {
  ir::Kernel k = trace<Add>(ir::ExecMode::Checked);
  std::string before = ir::print(k);
  int dumps = 0;
  passes::PipelineOptions options;
  options.stop_after = "unroll";
  options.dump = [&](std::string_view, const ir::Kernel&) { ++dumps; };
  try {
    passes::run_pipeline(k, options);
    FAIL() << "an unknown stage must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "passes.unknown_stage");
    EXPECT_NE(e.message().find("unroll"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("checked_io"), std::string::npos) << "the message lists the stages: " << e.message();
  }
  EXPECT_EQ(dumps, 0);
  EXPECT_EQ(ir::print(k), before);
}

TEST(Pipeline, VerifyEachNamesThePassAfterWhichTheKernelIsInvalid) {
  // A store of an f32 into a u32 buffer: invalid from the start; the first verification is the
  // one after promote_vars, and its message says so.
  ir::Kernel k = ir::parse(
      "kernel @bad(%out: buffer<u32, rw>) {cube_dim = [1, 1, 1], mode = checked, address = u32, vector = 1} {\n"
      "  %0 = const 0 : u32\n"
      "  %1 = const 1.0 : f32\n"
      "  store %out, %0, %1 {checked}\n"
      "}\n");
  passes::PipelineOptions options;
  options.verify_each = true;
  try {
    passes::run_pipeline(k, options);
    FAIL() << "the pipeline must reject invalid IR when verify_each is set";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "ir.verify");
    EXPECT_NE(e.message().find("after promote_vars"), std::string::npos) << e.message();
  }
}

// The pipeline knows the target: it is in the kernel's facts before the first pass runs (where a
// pass reads it) and in what the pipeline gives back; without one, the facts keep what they had.
TEST(Pipeline, PassesSeeTheTargetInTheKernelFacts) {
  for (ir::Target target : {ir::Target::cpu(), ir::Target::cuda(90, true), ir::Target::cuda(80)}) {
    ir::Kernel k = trace<Add>(ir::ExecMode::Checked);
    EXPECT_FALSE(k.facts.target.known()) << "a traced kernel is not compiled for anything yet";
    std::vector<std::string> seen;
    passes::PipelineOptions options;
    options.target = target;
    options.dump = [&](std::string_view, const ir::Kernel& at) { seen.push_back(ir::to_string(at.facts.target)); };
    passes::run_pipeline(k, options);
    std::string name = ir::to_string(target);
    EXPECT_EQ(seen, (std::vector<std::string>{"any", name, name, name, name, name, name, name, name, name, name}))
        << name;
    EXPECT_EQ(k.facts.target, target);
    EXPECT_NE(ir::print(k).find("target = " + name + "}"), std::string::npos) << ir::print(k);
  }
  ir::Kernel k =
      ir::parse("kernel @k() {cube_dim = [1, 1, 1], mode = checked, address = u32, vector = 1, target = sm_80} {\n}\n");
  passes::run_pipeline(k);
  EXPECT_EQ(k.facts.target, ir::Target::cuda(80));
}

}  // namespace
}  // namespace kiln
