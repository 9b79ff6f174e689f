// The tile programs of this folder, lowered and emitted as CUDA C++ and compiled with NVRTC for
// sm_90a: how CI checks the tile layer's CUDA code generation without a GPU (skips, saying so,
// when NVRTC is missing); and what the lowering gives a product on sm_90: shared arrays that share
// bytes, the occupancy hint, padded relayout rows, block groups.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "backends/cuda/emit.h"
#include "backends/cuda/nvrtc.h"
#include "kiln/error.h"
#include "kiln/passes/passes.h"
#include "programs.h"
#include "support/compile_for_sm90.h"

namespace kiln::tile {
namespace {

TEST(TileCudaSource, EveryTileProgramCompilesWithNvrtc) {
  if (!cuda::nvrtc_available())
    GTEST_SKIP() << "skipped: NVRTC was not found, so tile programs' CUDA sources were not compiled";
  size_t compiled = 0;
  for (const auto& [name, make] : testing::programs()) {
    Traced t = make();
    try {
      kiln::test::compile_for_sm90a(t.program->kernel(),
                                    ir::Dim3{t.program->units_for(ir::Target::cuda(90, true)), 1, 1},
                                    ir::ExecMode::Unchecked);
      ++compiled;
    } catch (const Error& err) {
      ADD_FAILURE() << name << ": " << err.what();
    }
  }
  std::printf("[ cuda     ] %zu tile programs compiled with NVRTC for sm_90a\n", compiled);
}

// `t` lowered for an sm_90 GPU, and its CUDA source.
struct Lowered {
  ir::Kernel kernel;
  std::string source;
};
Lowered lower_for_sm90(const Traced& t) {
  Lowered l{t.program->kernel(), ""};
  l.kernel.facts.cube_dim = ir::Dim3{t.program->units_for(ir::Target::cuda(90, true)), 1, 1};
  l.kernel.facts.mode = ir::ExecMode::Unchecked;
  passes::PipelineOptions pipeline;
  pipeline.target = ir::Target::cuda(90, true);
  passes::run_pipeline(l.kernel, pipeline);
  l.source = cuda::emit_cuda(l.kernel).source;
  return l;
}

// The overlay group of each shared array (-1: none), in allocation order.
std::vector<int64_t> overlays(const ir::Kernel& k) {
  std::vector<int64_t> g;
  for (const ir::Op& op : k.body.ops) {
    if (op.kind != ir::OpKind::SharedAlloc) continue;
    const ir::AttrValue* a = op.attr(ir::AttrKey::Overlay);
    g.push_back(a ? a->i : -1);
  }
  return g;
}

// A pipelined product's output relayout (f32 scratch, 128 x 132 x 4 = 66 KiB) runs after the loop,
// so it takes the larger ring's bytes (decision 020): 90 KiB of shared memory rather than 121 KiB,
// which admits two cubes per SM on sm_90, and the entry says so to ptxas.
TEST(TileCudaSource, AProductsOutputRelayoutReusesItsPipelineRing) {
  Lowered l = lower_for_sm90(testing::matmul_bf16_program(1024, 3));
  EXPECT_EQ(l.kernel.facts.cube_dim.x, 128u) << "a 128 x 128 product takes one plane per 64 x 64";
  std::vector<int64_t> g = overlays(l.kernel);
  ASSERT_EQ(g.size(), 3u) << "the scratch array and two rings";
  EXPECT_EQ(std::count(g.begin(), g.end(), 0), 2) << "the scratch and one ring share group 0";
  EXPECT_EQ(std::count(g.begin(), g.end(), -1), 1);
  EXPECT_NE(l.source.find("__launch_bounds__(128, 2)"), std::string::npos) << l.source.substr(0, 4000);
  // The f32 relayout's rows are padded by 16 bytes (132 floats), and the blocks go in groups,
  // which reads the grid's size (no dyn_dim here, so nothing else does).
  int64_t padded = 0, counts = 0;
  for (const ir::Op& op : l.kernel.body.ops) {
    if (op.kind == ir::OpKind::SharedAlloc && op.type.scalar == ir::Scalar::F32) padded = op.type.length;
    if (op.kind == ir::OpKind::CubeCount) ++counts;
  }
  EXPECT_EQ(padded, 128 * 132);
  EXPECT_EQ(counts, 2);
}

// A scratch array used inside the pipelined loop (a reduction across planes every iteration: a
// column sum, and the product on the square split's 2 x 2 planes) is live with the rings: it keeps
// bytes of its own, and the kernel's smaller shared memory gets no occupancy hint that would cap
// registers below 255.
TEST(TileCudaSource, ScratchUsedInsideAPipelinedLoopKeepsItsOwnBytes) {
  Traced t = trace("col_sums", In<bf16>(cells({256, 256}, {128, 32}).along({0, free_axis})),
                   In<bf16>(cells({256, 128}, {32, 128}).along({free_axis, 1})), Out<float>(cells({2, 128}, {1, 128})),
                   [](Param<bf16> a, Param<bf16> b, Param<float> c) {
                     tile::Var<float> acc = zeros<float>({1, 128});
                     For(d_range(0, 256 / 32).prefetch_stages(3), [&](Index k) {
                       acc = acc.get() + reduce_sum(mma(load_at(a, {k}), load_at(b, {k}), zeros<float>({128, 128})),
                                                    {.dim = 0, .keepdims = true});
                     });
                     store_cell(c, acc);
                   });
  Lowered l = lower_for_sm90(t);
  std::vector<int64_t> g = overlays(l.kernel);
  EXPECT_EQ(g.size(), 3u) << "the reduction's scratch array and two rings";
  for (int64_t x : g) EXPECT_EQ(x, -1);
  EXPECT_NE(l.source.find("__launch_bounds__(128)"), std::string::npos);
}

// Ops of the loop body of the kernel's first loop, and of the regions inside it.
int count_in_loop(const ir::Kernel& k, ir::OpKind kind) {
  for (const ir::Op& op : k.body.ops) {
    if (op.kind != ir::OpKind::For) continue;
    int n = 0;
    ir::walk(op.regions[0], [&](const ir::Op& o) { n += o.kind == kind; });
    return n;
  }
  return -1;
}

// A product whose result is reduced along its rows is placed with whole rows a plane
// (place_products: planes = [4, 1]), so the row sums are lane shuffles: the pipelined loop passes
// only its ring's barrier, where the square split's 2 x 2 planes took two more and a scratch array
// every iteration.
TEST(TileCudaSource, ARowReductionOfAProductStaysInRegisters) {
  Traced t = trace("row_sums", In<bf16>(cells({256, 256}, {128, 32}).along({0, free_axis})),
                   In<bf16>(cells({256, 128}, {32, 128}).along({free_axis, 1})), Out<float>(cells({256, 1}, {128, 1})),
                   [](Param<bf16> a, Param<bf16> b, Param<float> c) {
                     tile::Var<float> acc = zeros<float>({128, 1});
                     For(d_range(0, 256 / 32).prefetch_stages(3), [&](Index k) {
                       acc = acc.get() + reduce_sum(mma(load_at(a, {k}), load_at(b, {k}), zeros<float>({128, 128})),
                                                    {.dim = 1, .keepdims = true});
                     });
                     store_cell(c, acc);
                   });
  Lowered l = lower_for_sm90(t);
  EXPECT_EQ(count_in_loop(l.kernel, ir::OpKind::SyncCube), 1) << "the ring's barrier only";
  EXPECT_EQ(count_in_loop(l.kernel, ir::OpKind::PlaneShuffleXor), 4 * 2)
      << "4 rows a unit (rows g and g + 8 of two m-tiles), each folded over the 4 lanes of its quad";
  EXPECT_NE(l.source.find("kiln_mma_sync<128, 128, 32, 4, 1,"), std::string::npos);
}

// A product whose a is another product's result (relu, then bf16) reads a from registers on sm_90:
// one kiln_mma_sync_frag_a with the first product's planes ([4, 1]: 16 rows a plane), b from
// shared memory as rows (a transposed view outside a loop is transposed in registers first), and
// in a pipelined loop as rows or as columns (a transposed view the ring stages as columns).
TEST(TileCudaSource, AProductOfAProductReadsItsAFromRegisters) {
  for (auto [transposed, looped] :
       {std::pair{false, false}, std::pair{true, false}, std::pair{false, true}, std::pair{true, true}}) {
    Lowered l = lower_for_sm90(testing::chained_products_program(transposed, looped));
    const std::string what = std::string(transposed ? "w2 transposed" : "") + (looped ? "looped" : "");
    EXPECT_NE(l.source.find("kiln_mma_sync<64, 64, 128, 4, 1,"), std::string::npos) << what;
    const std::string frag =
        std::string("kiln_mma_sync_frag_a<64, 128, 64, 4, ") + (transposed && looped ? "72, true>" : "136>");
    EXPECT_NE(l.source.find(frag), std::string::npos) << what << "\n" << l.source.substr(l.source.find("__global__"));
    int a_frag = 0;
    ir::walk(l.kernel.body, [&](const ir::Op& o) { a_frag += o.kind == ir::OpKind::MmaSyncFragA; });
    EXPECT_EQ(a_frag, 1) << what;
  }
}

// A program's Options reach its kernel: fast_math approx gives the hardware's exp2 (ex2.approx),
// cubes_per_processor the second argument of __launch_bounds__; without them the exact exp2f and
// the backend's own bound.
TEST(TileCudaSource, OptionsReachTheKernel) {
  auto body = [](Param<float> x, Param<float> out) { store_cell(out, exp2(load_cell(x))); };
  Cells g = cells({1024}, {256});
  Lowered fast = lower_for_sm90(trace("exp2s", Options{.fast_math = {.approx = true}, .cubes_per_processor = 3},
                                      In<float>(g), Out<float>(g), body));
  const std::string fast_body = fast.source.substr(fast.source.find("__global__"));
  EXPECT_NE(fast_body.find("kiln_exp2_approx("), std::string::npos) << fast_body;
  EXPECT_NE(fast_body.find(", 3) exp2s"), std::string::npos) << fast_body;
  Lowered exact = lower_for_sm90(trace("exp2s", In<float>(g), Out<float>(g), body));
  const std::string exact_body = exact.source.substr(exact.source.find("__global__"));
  EXPECT_EQ(exact_body.find("kiln_exp2_approx("), std::string::npos) << exact_body;
  EXPECT_NE(exact_body.find("exp2f("), std::string::npos) << exact_body;
  EXPECT_EQ(exact_body.find(", 3) exp2s"), std::string::npos) << exact_body;
}

// Loads no product reads are pipelined too: x's [16, 64] f32 cells (16-byte copies into a ring of
// 3 x 1024 floats) and v's [16] cells of a 1001-element extent (one f32 a vector: 4-byte copies,
// 3 x 16 floats), read from the ring into the layouts their users want.
TEST(TileCudaSource, LoadsThatNoProductReadsArePipelined) {
  Lowered l = lower_for_sm90(testing::streamed_sums_program(1001, 3));
  std::vector<uint32_t> rings;
  for (const ir::Op& op : l.kernel.body.ops) {
    if (op.kind == ir::OpKind::SharedAlloc && op.type.scalar == ir::Scalar::F32) rings.push_back(op.type.length);
  }
  EXPECT_NE(std::find(rings.begin(), rings.end(), 3u * 16 * 64), rings.end()) << "x's ring";
  EXPECT_NE(std::find(rings.begin(), rings.end(), 3u * 16), rings.end()) << "v's ring";
  EXPECT_NE(l.source.find("kiln_cp_async<16>("), std::string::npos);
  EXPECT_NE(l.source.find("kiln_cp_async<4>("), std::string::npos);
  EXPECT_NE(l.source.find("kiln_cp_async_wait<1>()"), std::string::npos) << "three stages: one group may still fly";
}

// A factor from before the loop (q) is written into an array of its own once, before the loop; with
// k copied by the pipeline, the loop's product has both factors in place: its body stores nothing
// into shared memory and passes the pipeline's barrier only. Inside another loop too, where the
// trial lowerings of the outer loop leave no array behind.
TEST(TileCudaSource, AFactorFromBeforeTheLoopIsWrittenOnce) {
  for (bool nested : {false, true}) {
    Lowered l = lower_for_sm90(testing::resident_factor_program(4, 2, nested));
    std::vector<const ir::Op*> loops;
    auto find = [&](auto& self, const ir::Region& r) -> void {
      for (const ir::Op& op : r.ops) {
        if (op.kind == ir::OpKind::For && op.attr_int(ir::AttrKey::PrefetchStages, -1) == 2) loops.push_back(&op);
        for (const ir::Region& in : op.regions) self(self, in);
      }
    };
    find(find, l.kernel.body);
    ASSERT_EQ(loops.size(), 1u) << "nested " << nested;
    int64_t shared_stores = 0, barriers = 0;
    ir::walk(loops[0]->regions[0], [&](const ir::Op& op) {
      if (op.kind == ir::OpKind::Store &&
          l.kernel.type_of(op.operand(ir::ops::Store::array)).kind == ir::TypeKind::Shared)
        ++shared_stores;
      barriers += op.kind == ir::OpKind::SyncCube;
    });
    EXPECT_EQ(shared_stores, 0) << "nested " << nested;
    EXPECT_EQ(barriers, 1) << "nested " << nested << ": the pipeline's";
    int64_t bf16_arrays = 0;
    for (const ir::Op& op : l.kernel.body.ops) {
      bf16_arrays += op.kind == ir::OpKind::SharedAlloc && op.type.scalar == ir::Scalar::BF16;
    }
    EXPECT_EQ(bf16_arrays, 2) << "nested " << nested << ": q's array and k's ring, nothing a trial made";
  }
}

// A pipelined loop inside another runs again: before the next outer iteration writes its ring's
// first slots and its resident factor (q, loaded in the outer body) once more, every unit passes
// a barrier after the inner loop, so that none still reads them. (The CPU runs a cube's units in
// lockstep and cannot miss it; a GPU can.)
TEST(TileCudaSource, APipelinedLoopThatRunsAgainEndsWithABarrier) {
  Traced t = trace(
      "again", In<bf16>(cells({128, 64}, {64, 64}).along({free_axis, free_axis})),
      In<bf16>(cells({256, 64}, {64, 64}).along({free_axis, free_axis})), Out<float>(cells({64, 64}, {64, 64})),
      [](Param<bf16> q, Param<bf16> k, Param<float> c) {
        tile::Var<float> acc = zeros(c);
        For(d_range(0, 2), [&](Index o) {
          Tile<bf16> qt = load_at(q, {o, Index(0)});
          For(d_range(0, 4).prefetch_stages(2), [&](Index j) { acc = mma(qt, load_at(k, {j, Index(0)}), acc.get()); });
        });
        store_cell(c, acc);
      });
  Lowered l = lower_for_sm90(t);
  const ir::Op* outer = nullptr;
  for (const ir::Op& op : l.kernel.body.ops) {
    if (op.kind == ir::OpKind::For) outer = &op;
  }
  ASSERT_NE(outer, nullptr);
  const std::vector<ir::Op>& body = outer->regions[0].ops;
  size_t inner = body.size();
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i].kind == ir::OpKind::For && body[i].attr_int(ir::AttrKey::PrefetchStages, -1) == 2) inner = i;
  }
  ASSERT_LT(inner + 2, body.size());
  EXPECT_EQ(body[inner + 1].kind, ir::OpKind::CopyAsyncWait) << "no copy in flight after the loop";
  EXPECT_EQ(body[inner + 2].kind, ir::OpKind::SyncCube) << "then every unit done with the slots and q's rows";
}

// x @ w.T: a loaded tile of w whose transpose is the product's b stays in its ring as loaded (two
// rings, copied by cp.async, no scratch array that registers would fill), and the product reads it
// as columns: kiln_mma_sync<..., true>, mma.sync strides [lda, ldb, 1].
TEST(TileCudaSource, ATransposedFactorIsPipelinedAsStored) {
  Traced t = trace("x_wt", In<bf16>(cells({256, 256}, {128, 32}).along({0, free_axis})),
                   In<bf16>(cells({256, 256}, {128, 32}).along({1, free_axis})),
                   Out<float>(cells({256, 256}, {128, 128})), [](Param<bf16> x, Param<bf16> w, Param<float> c) {
                     tile::Var<float> acc = zeros<float>({128, 128});
                     For(d_range(0, 256 / 32).prefetch_stages(3),
                         [&](Index k) { acc = mma(load_at(x, {k}), load_at(w, {k}).transpose(), acc.get()); });
                     store_cell(c, acc);
                   });
  Lowered l = lower_for_sm90(t);
  EXPECT_NE(l.source.find("kiln_mma_sync<128, 128, 32, 2, 2, 40, 40, true>"), std::string::npos)
      << l.source.substr(0, 6000);
  int64_t rings = 0, copies = 0;
  for (const ir::Op& op : l.kernel.body.ops) {
    if (op.kind != ir::OpKind::SharedAlloc || op.type.scalar != ir::Scalar::BF16) continue;
    ++rings;
    EXPECT_EQ(op.type.length, 3u * 128 * 40) << "three slots of 128 rows of 32 (padded to 40): a ring";
  }
  for (const ir::Op& op : l.kernel.body.ops) {
    if (op.kind != ir::OpKind::For) continue;
    for (const ir::Op& in : op.regions[0].ops) copies += in.kind == ir::OpKind::CopyAsync;
  }
  EXPECT_EQ(rings, 2) << "a ring for each factor, and no bf16 scratch";
  EXPECT_GT(copies, 0);
}

// The position of the first op of `kind` in the pipelined loop's body (-1: none).
int position_in_loop(const ir::Kernel& k, ir::OpKind kind) {
  for (const ir::Op& op : k.body.ops) {
    if (op.kind != ir::OpKind::For) continue;
    const auto& ops = op.regions[0].ops;
    for (size_t i = 0; i < ops.size(); ++i)
      if (ops[i].kind == kind) return int(i);
  }
  return -1;
}

// With three stages a copy has an iteration to land even when it starts after the products, so
// the products start right after the barrier; with two it would have none, so the copies go first.
TEST(TileCudaSource, DeepPipelinesStartTheirCopiesAfterTheProducts) {
  Lowered three = lower_for_sm90(testing::matmul_bf16_program(1024, 3));
  EXPECT_LT(position_in_loop(three.kernel, ir::OpKind::MmaSync), position_in_loop(three.kernel, ir::OpKind::CopyAsync));
  Lowered two = lower_for_sm90(testing::matmul_bf16_program(1024, 2));
  EXPECT_GT(position_in_loop(two.kernel, ir::OpKind::MmaSync), position_in_loop(two.kernel, ir::OpKind::CopyAsync));
}

TEST(TileCudaSource, SmallSharedMemoryGetsNoOccupancyHint) {
  Lowered l = lower_for_sm90(testing::row_softmax_program(256));
  std::string bounds = "__launch_bounds__(" + std::to_string(l.kernel.facts.cube_dim.x) + ")";
  EXPECT_NE(l.source.find(bounds), std::string::npos) << l.source.substr(0, 4000);
}

}  // namespace
}  // namespace kiln::tile
