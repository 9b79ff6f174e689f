// render(prog): recorded tile kernels as cuda_tile text, against seed 04's printed outputs, and one
// case per other kind of op that its line appears.
#include <gtest/gtest.h>

#include "kiln/error.h"
#include "kiln/tile.h"
#include "programs.h"

namespace kiln::tile {
namespace {

// Seed 04's vadd output, line for line.
const char* const kSeedVadd = R"(cuda_tile.module @m {
  entry @vadd(%arg0: tile<ptr<f64>>, %arg1: tile<ptr<f64>>, %arg2: tile<ptr<f64>>) {
    %0 = make_token : token
    %1 = assume div_by<16>, %arg0 : tile<ptr<f64>>
    %2 = make_tensor_view %1, shape = [256], strides = [1] : tensor_view<256xf64, strides=[1]>
    %3 = make_partition_view %2 : partition_view<tile=(128), padding_value = zero, tensor_view<256xf64, strides=[1]>, dim_map=[0]>
    %4, %5, %6 = get_tile_block_id : tile<i32>
    %7, %8 = load_view_tko weak %3[%4] token=%0 : partition_view<tile=(128), padding_value = zero, tensor_view<256xf64, strides=[1]>, dim_map=[0]>, tile<i32> -> tile<128xf64>, token
    %9 = assume div_by<16>, %arg1 : tile<ptr<f64>>
    %10 = make_tensor_view %9, shape = [256], strides = [1] : tensor_view<256xf64, strides=[1]>
    %11 = make_partition_view %10 : partition_view<tile=(128), padding_value = zero, tensor_view<256xf64, strides=[1]>, dim_map=[0]>
    %12, %13 = load_view_tko weak %11[%4] token=%8 : partition_view<tile=(128), padding_value = zero, tensor_view<256xf64, strides=[1]>, dim_map=[0]>, tile<i32> -> tile<128xf64>, token
    %14 = addf %7, %12 rounding<nearest_even> : tile<128xf64>
    %15 = assume div_by<16>, %arg2 : tile<ptr<f64>>
    %16 = make_tensor_view %15, shape = [256], strides = [1] : tensor_view<256xf64, strides=[1]>
    %17 = make_partition_view %16 : partition_view<tile=(128), padding_value = zero, tensor_view<256xf64, strides=[1]>, dim_map=[0]>
    %18 = store_view_tko weak %14, %17[%4] token=%13 : tile<128xf64>, partition_view<tile=(128), padding_value = zero, tensor_view<256xf64, strides=[1]>, dim_map=[0]>, tile<i32> -> token
    return
  }
})";

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> r;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string l = text.substr(start, end - start);
    size_t first = l.find_first_not_of(' ');
    r.push_back(first == std::string::npos ? "" : l.substr(first));
    start = end + 1;
  }
  return r;
}

// The trimmed lines of `text` that contain `needle`.
std::vector<std::string> grep(const std::string& text, const std::string& needle) {
  std::vector<std::string> r;
  for (const std::string& l : lines(text)) {
    if (l.find(needle) != std::string::npos) r.push_back(l);
  }
  return r;
}

bool has_line_starting(const std::string& text, const std::string& prefix_after_eq) {
  for (const std::string& l : lines(text)) {
    size_t eq = l.find(" = ");
    std::string rhs = eq == std::string::npos ? l : l.substr(eq + 3);
    if (rhs.rfind(prefix_after_eq, 0) == 0) return true;
  }
  return false;
}

auto vadd = [](Param<double> a, Param<double> b, Param<double> out) { store_cell(out, load_cell(a) + load_cell(b)); };

TEST(TileRender, VaddIsTheSeedsTextLineForLine) {
  Cells g = cells({256}, {128});
  Traced t = trace("vadd", In<double>(g), In<double>(g), Out<double>(g), vadd);
  std::string text = render(*t.program);
  EXPECT_EQ(lines(text), lines(kSeedVadd)) << text;
  EXPECT_EQ(text, kSeedVadd);
}

// C++ leaves the order of a call's arguments to the compiler; the text does not depend on it.
TEST(TileRender, ReadsPrintWhereTheyAreFirstNeededWhateverOrderTheyWereRecordedIn) {
  Cells g = cells({256}, {128});
  auto b_first = [](Param<double> a, Param<double> b, Param<double> out) {
    Tile<double> y = load_cell(b);
    Tile<double> x = load_cell(a);
    store_cell(out, x + y);
  };
  auto a_first = [](Param<double> a, Param<double> b, Param<double> out) {
    Tile<double> x = load_cell(a);
    Tile<double> y = load_cell(b);
    store_cell(out, x + y);
  };
  std::string one = render(*trace("vadd", In<double>(g), In<double>(g), Out<double>(g), b_first).program);
  std::string two = render(*trace("vadd", In<double>(g), In<double>(g), Out<double>(g), a_first).program);
  EXPECT_EQ(one, kSeedVadd);
  EXPECT_EQ(two, kSeedVadd);
}

// A read never moves past a write recorded after it.
TEST(TileRender, AReadStaysBeforeALaterWrite) {
  Cells g = cells({256}, {128});
  Traced t = trace("k", In<double>(g), Out<double>(g), Shared<double>(),
                   [](Param<double> x, Param<double> out, Param<double> s) {
                     Tile<double> early = load(s, block_id(0) * 128, {128});
                     store(s, block_id(0) * 128, load_cell(x));
                     store_cell(out, early);
                   });
  std::string text = render(*t.program);
  size_t load_at = text.find("load_ptr_tko"), store_at = text.find("store_ptr_tko");
  ASSERT_NE(load_at, std::string::npos) << text;
  ASSERT_NE(store_at, std::string::npos) << text;
  EXPECT_LT(load_at, store_at) << text;
}

TEST(TileRender, SoftmaxPrintsItsPaddingValue) {
  Traced t = trace("softmax", In<double>(cells({3}, {4}).pad(Pad::neg_inf)), Out<double>(cells({3}, {4})),
                   [](Param<double> x, Param<double> out) {
                     Tile<double> v = load_cell(x);
                     Tile<double> e = exp(v - reduce_max(v));
                     store_cell(out, e / reduce_sum(e));
                   });
  std::string text = render(*t.program);
  std::vector<std::string> found;
  for (const std::string& l : grep(text, "= make_partition_view")) {
    if (l.find("neg_inf") != std::string::npos) found.push_back(l);
  }
  EXPECT_EQ(found,
            std::vector<std::string>{"%3 = make_partition_view %2 : partition_view<tile=(4), padding_value = neg_inf, "
                                     "tensor_view<3xf64, strides=[1]>, dim_map=[0]>"})
      << text;
  EXPECT_EQ(grep(text, "= reduce ").size(), 2u) << text;
  EXPECT_EQ(grep(text, "combiner=maxf").size(), 1u) << text;
  EXPECT_EQ(grep(text, "identity=<f64: -inf> combiner=maxf : tile<4xf64> -> tile<f64>").size(), 1u) << text;
  EXPECT_EQ(grep(text, "combiner=addf").size(), 1u) << text;
  EXPECT_TRUE(has_line_starting(text, "exp ")) << text;
  EXPECT_TRUE(has_line_starting(text, "broadcast ")) << text;
  EXPECT_TRUE(has_line_starting(text, "divf ")) << text;
}

Traced matmul() {
  auto a = In<double>(cells({256, 256}, {64, 32}).along({0, free_axis}));
  auto b = In<double>(cells({256, 256}, {32, 64}).along({free_axis, 1}));
  auto c = Out<double>(cells({256, 256}, {64, 64}));
  return trace("matmul", a, b, c, [](Param<double> a, Param<double> b, Param<double> c) {
    Var<double> acc = zeros(c);
    For(d_range(0, 8), [&](Index k) { acc = mma(load_at(a, {k}), load_at(b, {k}), acc); });
    store_cell(c, acc);
  });
}

// The seed's three lines, value numbers and all: the ops before them print as the seed's do
// (the accumulator, then the bounds; inside the body each view, then each axis's block id).
TEST(TileRender, MatmulLoopsWithIterValuesAndMmaf) {
  std::string text = render(*matmul().program);
  std::vector<std::string> picked;
  for (const std::string& l : lines(text)) {
    if (l.find("= for ") != std::string::npos || l.find("= mmaf ") != std::string::npos ||
        l.rfind("continue ", 0) == 0) {
      picked.push_back(l);
    }
  }
  EXPECT_EQ(picked, (std::vector<std::string>{
                        "%5, %6 = for %7 in (%2 to %3, step %4) : tile<i32> iter_values(%8 = %1, %9 = %0) -> "
                        "(tile<64x64xf64>, token) {",
                        "%26 = mmaf %16, %24, %8 : tile<64x32xf64>, tile<32x64xf64>, tile<64x64xf64>",
                        "continue %26, %25 : tile<64x64xf64>, token",
                    }))
      << text;
  // The accumulator is a constant; the loop's results are what the store after it takes.
  EXPECT_EQ(grep(text, "%1 = constant <f64: 0.0> : tile<64x64xf64>").size(), 1u) << text;
  EXPECT_EQ(grep(text, "store_view_tko weak %5, ").size(), 1u) << text;
  EXPECT_EQ(grep(text, "token=%6 ").size(), 1u) << text;
}

// The program keeps its vars: render promotes a copy.
TEST(TileRender, RenderLeavesTheProgramsKernelAlone) {
  Traced t = matmul();
  size_t ops = ir::op_count(t.program->kernel());
  std::string once = render(*t.program);
  EXPECT_EQ(ir::op_count(t.program->kernel()), ops);
  EXPECT_EQ(render(*t.program), once);
}

std::string render_kernel(auto body) {
  Cells g = cells({64, 32}, {32, 32});
  return render(*trace("k", In<float>(g), Out<float>(g), body).program);
}

TEST(TileRender, Casts) {
  std::string text =
      render_kernel([](Param<float> x, Param<float> out) { store_cell(out, load_cell(x).to<double>().to<float>()); });
  EXPECT_EQ(grep(text, "ftof ").size(), 2u) << text;
  EXPECT_EQ(grep(text, " : tile<32x32xf32> -> tile<32x32xf64>").size(), 1u) << text;
}

TEST(TileRender, ComparesAndSelect) {
  std::string text = render_kernel([](Param<float> x, Param<float> out) {
    Tile<float> v = load_cell(x);
    store_cell(out, where(v > 0.0, v, v * 0.5));
  });
  EXPECT_EQ(grep(text, "cmpf greater_than ordered ").size(), 1u) << text;
  EXPECT_EQ(grep(text, "-> tile<32x32xi1>").size(), 1u) << text;
  EXPECT_EQ(grep(text, "select ").size(), 1u) << text;
  EXPECT_EQ(grep(text, "constant <f32: 0.5> : tile<f32>").size(), 1u) << text;
  EXPECT_EQ(grep(text, "mulf ").size(), 1u) << text;
}

TEST(TileRender, PermuteAndBroadcastOfALength1Dimension) {
  std::string text = render_kernel([](Param<float> x, Param<float> out) {
    Tile<float> v = load_cell(x).transpose();
    store_cell(out, v - reduce_max(v, {.dim = 1, .keepdims = true}));
  });
  EXPECT_EQ(grep(text, "permute ").size(), 1u) << text;
  EXPECT_EQ(grep(text, " [1, 0] : tile<32x32xf32> -> tile<32x32xf32>").size(), 1u) << text;
  EXPECT_EQ(grep(text, "reduce ").size(), 1u) << text;
  EXPECT_EQ(grep(text, "dim=1 ").size(), 1u) << text;
  EXPECT_EQ(grep(text, "reshape ").size(), 1u) << text;
  EXPECT_EQ(grep(text, ": tile<32xf32> -> tile<32x1xf32>").size(), 1u) << text;
  EXPECT_EQ(grep(text, "broadcast ").size(), 1u) << text;
  EXPECT_EQ(grep(text, "broadcast %14 : tile<32x1xf32> -> tile<32x32xf32>").size(), 1u) << text;
}

TEST(TileRender, IndexArithmeticAndPointerLoadsAndStores) {
  Cells x = cells({128, 64}, {32, 32});
  Traced t = trace("transpose", In<double>(x), Shared<double>(), [](Param<double> x, Param<double> out) {
    Tile<double> v = load_cell(x);
    Index at = block_id(1) * (32 * 128) + block_id(0) * 32;
    store(out, at, v, {1, 128});
    store(out, at, load(out, at, {32, 32}));
  });
  std::string text = render(*t.program);
  EXPECT_EQ(grep(text, "muli ").size(), 2u) << text;
  EXPECT_EQ(grep(text, "addi ").size(), 1u) << text;
  EXPECT_EQ(grep(text, "constant <i32: 4096> : tile<i32>").size(), 1u) << text;
  EXPECT_EQ(grep(text, "store_ptr_tko weak ").size(), 2u) << text;
  EXPECT_EQ(grep(text, "], strides = [1, 128] token=").size(), 1u) << text;
  EXPECT_EQ(grep(text, "load_ptr_tko weak ").size(), 1u) << text;
  EXPECT_EQ(grep(text, "], strides = [32, 1] token=").size(), 2u) << text;  // row-major by default
  EXPECT_EQ(grep(text, "assume div_by<16>, %arg1 ").size(), 1u) << text;
  // One token chain: each memory op takes the token the one before gave.
  EXPECT_EQ(grep(text, "token=%0 ").size(), 1u) << text;
}

TEST(TileRender, AtomicsAndScatters) {
  Traced t = kiln::tile::testing::scatter_program();
  std::string text = render(*t.program);
  // u32: unsigned max and min, through a tile of pointers moved by the offsets.
  EXPECT_EQ(grep(text, "atomic_rmw_tko relaxed device ").size(), 2u) << text;
  EXPECT_EQ(grep(text, "mode = umax").size(), 1u) << text;
  EXPECT_EQ(grep(text, "mode = umin").size(), 1u) << text;
  EXPECT_EQ(grep(text, " = offset ").size(), 3u) << text;
  EXPECT_EQ(grep(text, ": tile<128xptr<u32>>, tile<128xi32> -> tile<128xptr<u32>>").size(), 3u) << text;
  // The scatter is a store through the pointers, bounded by the extent.
  EXPECT_EQ(grep(text, "store_ptr_tko weak ").size(), 1u) << text;
  EXPECT_EQ(grep(text, ", extent = [").size(), 1u) << text;
  Traced cols = kiln::tile::testing::col_atomic_program();
  std::string c = render(*cols.program);
  EXPECT_EQ(grep(c, "mode = addf, extent = [").size(), 1u) << c;
  EXPECT_EQ(grep(c, "], strides = [0, 1], ").size(), 1u) << c;
}

TEST(TileRender, StoreSubCutsTheCellIntoParts) {
  Cells g = cells({256}, {128});
  Traced t = trace("k", In<double>(g), Out<double>(g), [](Param<double> x, Param<double> out) {
    Tile<double> v = load_at(retile(x, {256}, {64}), {block_id(0) * 2 + 1});
    store_sub(out, v, {Index(1)});
  });
  std::string text = render(*t.program);
  // x by 64, and out by 64 (the part's shape); out's own cells are never used whole.
  EXPECT_EQ(grep(text, "make_partition_view").size(), 2u) << text;
  // Part 1 of cell b is tile 2 * b + 1.
  EXPECT_EQ(grep(text, "%15 = muli %1, %14 : tile<i32>").size(), 1u) << text;
  EXPECT_EQ(grep(text, "%16 = addi %15, %13 : tile<i32>").size(), 1u) << text;
  EXPECT_EQ(grep(text, "[%16] token=").size(), 1u) << text;
  EXPECT_EQ(grep(text, "store_view_tko weak ").size(), 1u) << text;
  EXPECT_EQ(grep(text, "tile=(64)").size(), 4u) << text;
  EXPECT_EQ(grep(text, "constant <i32: 2> : tile<i32>").size(), 2u) << text;
}

TEST(TileRender, DynDimExtentsComeFromTheGrid) {
  Cells g = cells({dyn_dim}, {128});
  Traced t = trace("k", In<double>(g), Out<double>(g),
                   [](Param<double> x, Param<double> out) { store_cell(out, load_cell(x)); });
  std::string text = render(*t.program);
  EXPECT_EQ(grep(text, "get_num_tile_blocks : tile<i32>").size(), 1u) << text;  // once, for both views
  EXPECT_EQ(grep(text, "shape = [%6], strides = [1] : tile<i32> -> tensor_view<?xf64, strides=[1]>").size(), 1u)
      << text;
  EXPECT_EQ(grep(text, "tile<i32> -> tensor_view<?xf64, strides=[1]>").size(), 2u) << text;
}

TEST(TileRender, AnIfThatWritesCarriesTheToken) {
  Cells g = cells({256}, {128});
  Traced t = trace("k", In<double>(g), Out<double>(g), [](Param<double> x, Param<double> out) {
    If(block_id(0) == 0, [&] { store_cell(out, load_cell(x)); });
  });
  std::string text = render(*t.program);
  EXPECT_EQ(grep(text, "cmpi equal ").size(), 1u) << text;
  EXPECT_EQ(grep(text, " = if ").size(), 1u) << text;
  EXPECT_EQ(grep(text, "-> (token) {").size(), 1u) << text;
  EXPECT_EQ(grep(text, "yield ").size(), 2u) << text;
}

}  // namespace
}  // namespace kiln::tile
