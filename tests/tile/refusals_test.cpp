// Every refusal of the tile layer: each Error kind the recorder (record.*, trace.no_context) and
// the launch (launch.*, handle.invalid) raise, checked for its kind and its whole message, and the
// broadcasting rule from both sides. Launch checks run on the CPU device before anything compiles,
// and a refused launch leaves every buffer as it was.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "kiln/error.h"
#include "kiln/ir/text.h"
#include "kiln/kiln.h"
#include "kiln/tile.h"
#include "support/expect_error.h"

namespace kiln::tile {
namespace {

using test::expect_error;
using P = Param<double>;

// The message of the Error{kind} that f throws.
std::string refused(const std::function<void()>& f, const std::string& kind) { return expect_error(f, kind).message(); }

// Records `body` as kernel `k` over In and Out cells of 128 lanes in a 256-element extent.
template <class Body>
Traced record_k(Body body) {
  Cells g = cells({256}, {128});
  return trace("k", In<double>(g), Out<double>(g), body);
}

// Records `body` as kernel `k` with an In of cells g and a Shared output.
template <class Body>
Traced record_shared(Cells g, Body body) {
  return trace("k", In<double>(g), Shared<double>(), body);
}

// ---- parameters and their roles ----------------------------------------------------------------

TEST(TileRefusals, InWritten) {
  EXPECT_EQ(refused([] { record_k([](P x, P) { store_cell(x, load_cell(x)); }); }, "record.in_written"),
            "kernel `k`: op #4 `store_cell`: parameter 0 is an In, and nothing writes an In");
  // Through an address too: an In is read-only whichever way it is written.
  EXPECT_EQ(refused([] { record_k([](P x, P) { store(x, Index(0), load_cell(x)); }); }, "record.in_written"),
            "kernel `k`: op #5 `store`: parameter 0 is an In, and nothing writes an In");
}

TEST(TileRefusals, NoCells) {
  Cells g = cells({256}, {128});
  EXPECT_EQ(
      refused([&] { record_shared(g, [](P x, P out) { store_cell(out, load_cell(x)); }); }, "record.no_cells"),
      "kernel `k`: op #3 `store_cell`: parameter 1 is a Shared, which has no cells; write it with store at an offset");
  EXPECT_EQ(
      refused([&] { record_shared(g, [](P, P out) { load_cell(out); }); }, "record.no_cells"),
      "kernel `k`: op #2 `load_cell`: parameter 1 is a Shared, which has no cells; read it with load at an offset");
  EXPECT_EQ(refused([&] { record_shared(g, [](P, P out) { zeros(out); }); }, "record.no_cells"),
            "kernel `k`: parameter 1 is a Shared, which has no cells");
  EXPECT_EQ(refused([&] { record_shared(g, [](P, P out) { retile(out, {128}, {64}); }); }, "record.no_cells"),
            "kernel `k`: parameter 1 is a Shared, which has no cells to retile");
}

TEST(TileRefusals, OutWrittenByPointer) {
  EXPECT_EQ(refused([] { record_k([](P x, P out) { store(out, block_id(0) * 128, load_cell(x)); }); },
                    "record.out_written_by_pointer"),
            "kernel `k`: op #7 `store`: parameter 1 is an Out, which is written through its cells alone (store_cell, "
            "store_sub); a parameter written any other way is a Shared");
}

// ---- shapes --------------------------------------------------------------------------------------

// Seed 04's row softmax without keepdims: the [32] row maxima meet the [32, 64] scores.
TEST(TileRefusals, RowSoftmaxWithoutKeepdims) {
  Cells g = cells({256, 64}, {32, 64});
  auto dropped = [](P x, P out) {
    Tile<double> s = load_cell(x);
    Tile<double> p = exp(s - reduce_max(s));
    store_cell(out, p / reduce_sum(p, {.keepdims = true}));
  };
  EXPECT_EQ(refused([&] { trace("row_softmax", In<double>(g), Out<double>(g), dropped); }, "record.shape_mismatch"),
            "kernel `row_softmax`: op #5 `subf`: rhs is tile<32xf64>, declared tile<32x64xf64>");
  auto kept = [](P x, P out) {
    Tile<double> s = load_cell(x);
    Tile<double> p = exp(s - reduce_max(s, {.keepdims = true}));
    store_cell(out, p / reduce_sum(p, {.keepdims = true}));
  };
  Traced t = trace("row_softmax", In<double>(g), Out<double>(g), kept);
  std::string text = ir::print(t.program->kernel());
  EXPECT_NE(text.find("tile.reduce_max %2 {dim = 1, keepdims} : tile<[32, 1] x f64, registers>"), std::string::npos)
      << text;
  EXPECT_NE(text.find("tile.broadcast %3 {shape = [32, 64]} : tile<[32, 64] x f64, registers>"), std::string::npos)
      << text;
}

// What widens: a rank-0 tile to any shape, and length-1 dimensions against a tile of the same rank.
TEST(TileBroadcasting, WhatWidens) {
  struct Case {
    std::vector<uint32_t> lhs, rhs, result;
  };
  const Case cases[] = {
      {{}, {32, 64}, {32, 64}},      {{32, 64}, {}, {32, 64}},      {{}, {}, {}},
      {{32, 1}, {32, 64}, {32, 64}}, {{32, 64}, {32, 1}, {32, 64}}, {{1, 64}, {32, 64}, {32, 64}},
      {{32, 64}, {1, 64}, {32, 64}}, {{32, 1}, {1, 64}, {32, 64}},  {{128}, {128}, {128}},
  };
  for (const Case& c : cases) {
    std::vector<uint32_t> got;
    record_k([&](P, P) {
      auto make = [](const std::vector<uint32_t>& s) {
        if (s.empty()) return constant<double>(2.0);
        return s.size() == 1 ? full<double>({s[0]}, 2.0) : full<double>({s[0], s[1]}, 2.0);
      };
      got = (make(c.lhs) + make(c.rhs)).shape();
    });
    EXPECT_EQ(got, c.result) << "lhs rank " << c.lhs.size() << ", rhs rank " << c.rhs.size();
  }
  // A C++ number is a rank-0 tile: `t * 2.0` records one broadcast to t's shape.
  Traced t = record_k([](P x, P out) { store_cell(out, load_cell(x) * 2.0); });
  std::string text = ir::print(t.program->kernel());
  EXPECT_NE(text.find("tile.full {value = 2.0} : tile<[] x f64, registers>"), std::string::npos) << text;
  EXPECT_NE(text.find("{shape = [128]} : tile<[128] x f64, registers>"), std::string::npos) << text;
}

// What does not: ranks that differ (NumPy would widen [32] against [32, 64]) and lengths that differ
// where neither is 1. The op is declared with its first operand's shape.
TEST(TileBroadcasting, WhatIsRefused) {
  auto add = [](std::function<Tile<double>()> a, std::function<Tile<double>()> b) {
    return refused([&] { record_k([&](P, P) { a() + b(); }); }, "record.shape_mismatch");
  };
  auto f1 = [](uint32_t n) { return [n] { return full<double>({n}, 1.0); }; };
  auto f2 = [](uint32_t m, uint32_t n) { return [m, n] { return full<double>({m, n}, 1.0); }; };
  EXPECT_EQ(add(f1(32), f2(32, 64)), "kernel `k`: op #5 `addf`: rhs is tile<32x64xf64>, declared tile<32xf64>");
  EXPECT_EQ(add(f2(32, 64), f1(32)), "kernel `k`: op #5 `addf`: rhs is tile<32xf64>, declared tile<32x64xf64>");
  EXPECT_EQ(add(f1(64), f1(128)), "kernel `k`: op #5 `addf`: rhs is tile<128xf64>, declared tile<64xf64>");
  EXPECT_EQ(add(f2(2, 64), f2(32, 64)), "kernel `k`: op #5 `addf`: rhs is tile<32x64xf64>, declared tile<2x64xf64>");
  // where(): the condition widens like any operand, and is named as such.
  EXPECT_EQ(refused(
                [] {
                  record_k([](P, P) {
                    where(full<double>({64}, 1.0) > 0.0, full<double>({32}, 1.0), constant<double>(0.0));
                  });
                },
                "record.shape_mismatch"),
            "kernel `k`: op #9 `select`: lhs is tile<32xf64>, declared tile<64xf64>");
}

TEST(TileRefusals, ShapeMismatchOutsideElementwise) {
  auto shape = [](std::function<void(P, P)> body) { return refused([&] { record_k(body); }, "record.shape_mismatch"); };
  EXPECT_EQ(shape([](P, P out) { store_cell(out, full<double>({64}, 0.0)); }),
            "kernel `k`: op #4 `store_cell`: stores tile<64xf64> into a cell of tile<128xf64>");
  EXPECT_EQ(shape([](P, P out) {
              store_sub(out, full<double>({2, 64}, 0.0), {Index(0)});
            }),
            "kernel `k`: op #5 `store_sub`: stores tile<2x64xf64>, which does not cut a cell of tile<128xf64> into "
            "whole parts");
  EXPECT_EQ(
      shape([](P, P) {
        broadcast(full<double>({32}, 0.0), {32, 64});
      }),
      "kernel `k`: op #4 `broadcast`: widens tile<32xf64> to [32, 64]; only a rank-0 tile, or length-1 dimensions "
      "of a tile of the same rank, widen");
  EXPECT_EQ(shape([](P, P) {
              broadcast(full<double>({2, 64}, 0.0), {32, 64});
            }),
            "kernel `k`: op #4 `broadcast`: widens tile<2x64xf64> to [32, 64]; only a rank-0 tile, or length-1 "
            "dimensions of a tile of the same rank, widen");
  EXPECT_EQ(shape([](P, P) { reduce_sum(constant<double>(1.0)); }),
            "kernel `k`: op #4 `reduce`: reduces tile<f64>, which has no dimension to reduce");
  EXPECT_EQ(shape([](P x, P) { load_cell(x).transpose(); }),
            "kernel `k`: op #4 `permute`: transposes tiles of rank 2, not tile<128xf64>");
  EXPECT_EQ(shape([](P x, P) {
              Tile<double> t = load_cell(x);
              mma(t, t, t);
            }),
            "kernel `k`: op #4 `mmaf`: multiplies tiles of rank 2, not tile<128xf64>");
  EXPECT_EQ(
      shape([](P, P) {
        Var<double> acc = full<double>({32}, 0.0);
        acc = full<double>({64}, 0.0);
      }),
      "kernel `k`: op #7 `var`: assigns tile<64xf64> to a var of tile<32xf64>; a carried tile keeps its shape and "
      "type");
}

TEST(TileRefusals, TileShape) {
  EXPECT_EQ(
      refused([] { trace("k", In<double>(cells({1000}, {100})), Out<double>(cells({1000}, {128})), [](P, P) {}); },
              "record.tile_shape"),
      "kernel `k`: argument 0 (In) has tile 100 in dimension 0; tile dimensions are powers of two");
  EXPECT_EQ(refused([] { record_k([](P, P) {
                           full<double>({32, 48}, 0.0);
                         }); }, "record.tile_shape"),
            "kernel `k`: op #3 `constant`: tile dimensions are powers of two; [32, 48] is not");
  EXPECT_EQ(refused([] { record_k([](P, P) {
                           full<double>({2, 2, 2, 2, 2}, 0.0);
                         }); }, "record.tile_shape"),
            "kernel `k`: op #3 `constant`: a tile has at most 4 dimensions, not 5");
  EXPECT_EQ(refused([] { record_k([](P x, P) { retile(x, {256}, {96}); }); }, "record.tile_shape"),
            "kernel `k`: op #3 `retile`: tile dimensions are powers of two; cells([256], [96]) has 96");
  EXPECT_EQ(
      refused([] { record_shared(cells({256}, {128}), [](P, P s) { load(s, Index(0), {24}); }); }, "record.tile_shape"),
      "kernel `k`: op #3 `load`: tile dimensions are powers of two; [24] is not");
}

// Every way cells can be wrong on their own; each names the argument.
TEST(TileRefusals, Cells) {
  Cells g = cells({256}, {128});
  auto bad = [&](ParamDecl d) {
    Decl<double> decl;
    static_cast<ParamDecl&>(decl) = std::move(d);
    return refused([&] { trace("k", decl, Out<double>(g), [](P, P) {}); }, "record.cells");
  };
  EXPECT_EQ(bad({Role::Shared, ir::Scalar::F64, g}), "kernel `k`: argument 0 (Shared) is a Shared, which has no cells");
  EXPECT_EQ(bad({Role::In, ir::Scalar::F64, std::nullopt}), "kernel `k`: argument 0 (In) needs cells");
  EXPECT_EQ(
      bad({Role::In, ir::Scalar::F64, cells({256, 256}, {128})}),
      "kernel `k`: argument 0 (In) has cells([256, 256], [128]) with 2 axes: extent, tile and along need one entry "
      "per dimension, 1 to 4 of them");
  EXPECT_EQ(
      bad({Role::In, ir::Scalar::F64, cells({256}, {128}).along({0, 1})}),
      "kernel `k`: argument 0 (In) has cells([256], [128]) with 2 axes: extent, tile and along need one entry per "
      "dimension, 1 to 4 of them");
  EXPECT_EQ(bad({Role::In, ir::Scalar::F64, cells({}, {})}),
            "kernel `k`: argument 0 (In) has cells([], []) with 0 axes: extent, tile and along need one entry per "
            "dimension, 1 to 4 of them");
  EXPECT_EQ(
      bad({Role::In, ir::Scalar::F64, cells({2, 2, 2, 2, 2}, {2, 2, 2, 2, 2})}),
      "kernel `k`: argument 0 (In) has cells([2, 2, 2, 2, 2], [2, 2, 2, 2, 2]) with 5 axes: extent, tile and along "
      "need one entry per dimension, 1 to 4 of them");
  EXPECT_EQ(bad({Role::In, ir::Scalar::F64, cells({0}, {128})}),
            "kernel `k`: argument 0 (In) has extent 0 in dimension 0; an extent is at least 1, or dyn_dim");
  EXPECT_EQ(bad({Role::In, ir::Scalar::F64, cells({256}, {128}).along({3})}),
            "kernel `k`: argument 0 (In) has along 3; grid axes are 0, 1 and 2, or free_axis");
  EXPECT_EQ(bad({Role::In, ir::Scalar::F64, cells({256, 256}, {128, 128}).along({0, 0})}),
            "kernel `k`: argument 0 (In) has two dimensions along grid axis 0");
  EXPECT_EQ(
      bad({Role::In, ir::Scalar::F64, cells({dyn_dim}, {128}).along({free_axis})}),
      "kernel `k`: argument 0 (In) has a dyn_dim extent in dimension 0, which follows no grid axis; the grid gives "
      "a dyn_dim extent");
  EXPECT_EQ(refused([] { trace("k", Out<double>(cells({256}, {128}).along({free_axis})), [](P) {}); }, "record.cells"),
            "kernel `k`: argument 0 (Out) is an Out with a free dimension 0; an Out's cells are the grid, so each "
            "dimension follows a grid axis");
  EXPECT_EQ(refused([] { record_k([](P x, P) {
                           retile(x, {256, 2}, {128});
                         }); }, "record.cells"),
            "kernel `k`: op #3 `retile`: extent and tile need one entry per dimension, 1 to 4 of them");
}

// Seed 04's transpose declared with an Out of its own cells: x's 4 x 2 cells against out's 2 x 4 grid.
TEST(TileRefusals, GridMismatch) {
  auto transpose = [](P x, P out) { store_cell(out, load_cell(x).transpose()); };
  EXPECT_EQ(refused(
                [&] {
                  trace("transpose", In<double>(cells({128, 64}, {32, 32})), Out<double>(cells({64, 128}, {32, 32})),
                        transpose);
                },
                "record.grid_mismatch"),
            "kernel `transpose`: argument 0 (In) has 4 cell(s) in dimension 0, which follows grid axis 0, and the grid "
            "has 2 block(s) there");
  // Declared Shared, the same kernel records: it writes out at addresses it computes.
  Traced t = trace("transpose", In<double>(cells({128, 64}, {32, 32})), Shared<double>(), [](P x, P out) {
    store(out, block_id(1) * (32 * 128) + block_id(0) * 32, load_cell(x), {1, 128});
  });
  EXPECT_FALSE(t.program->grid().has_value());
}

// ---- products -----------------------------------------------------------------------------------

TEST(TileRefusals, MmaFormat) {
  EXPECT_EQ(refused(
                [] {
                  record_k([](P, P) {
                    mma(full<float>({16, 16}, 1.0), full<float>({16, 16}, 1.0), full<double>({16, 16}, 0.0));
                  });
                },
                "record.mma_format"),
            "kernel `k`: op #6 `mmaf`: f32 x f32 into f64 is not a format of mma; it takes f16 x f16 into f16 or f32, "
            "bf16 x bf16 into f32, f32 x f32 into f32 and f64 x f64 into f64 (tf32 and the 8-bit floats f8e4m3 and "
            "f8e5m2 are not kiln element types)");
  EXPECT_EQ(refused(
                [] {
                  record_k([](P, P) {
                    mma(full<int32_t>({16, 16}, 1), full<int32_t>({16, 16}, 1), full<int32_t>({16, 16}, 0));
                  });
                },
                "record.mma_format"),
            "kernel `k`: op #6 `mmai`: i32 x i32 into i32 is not a format of mma; it takes f16 x f16 into f16 or f32, "
            "bf16 x bf16 into f32, f32 x f32 into f32 and f64 x f64 into f64 (tf32 and the 8-bit floats f8e4m3 and "
            "f8e5m2 are not kiln element types)");
}

TEST(TileRefusals, MmaShape) {
  EXPECT_EQ(refused(
                [] {
                  record_k([](P, P) {
                    mma(full<double>({16, 32}, 1.0), full<double>({16, 16}, 1.0), full<double>({16, 16}, 0.0));
                  });
                },
                "record.mma_shape"),
            "kernel `k`: op #6 `mmaf`: lhs is tile<16x32xf64> with k = 32, rhs is tile<16x16xf64> with k = 16");
  EXPECT_EQ(refused(
                [] {
                  record_k([](P, P) {
                    mma(full<double>({16, 8}, 1.0), full<double>({8, 16}, 1.0), full<double>({16, 32}, 0.0));
                  });
                },
                "record.mma_shape"),
            "kernel `k`: op #6 `mmaf`: the accumulator is tile<16x32xf64>, declared tile<16x16xf64>");
}

// ---- indices, strides, dims, axes ---------------------------------------------------------------

TEST(TileRefusals, Dim) {
  EXPECT_EQ(refused([] { record_k([](P, P) {
                           reduce_sum(full<double>({32, 64}, 1.0), {.dim = 2});
                         }); }, "record.dim"),
            "kernel `k`: op #4 `reduce`: dim 2 is not a dimension of tile<32x64xf64>");
  EXPECT_EQ(refused([] { record_k([](P, P) {
                           reduce_sum(full<double>({32, 64}, 1.0), {.dim = -3});
                         }); }, "record.dim"),
            "kernel `k`: op #4 `reduce`: dim -3 is not a dimension of tile<32x64xf64>");
}

TEST(TileRefusals, CellIndex) {
  Cells a = cells({256, 256}, {64, 32}).along({0, free_axis});
  EXPECT_EQ(refused([&] { record_shared(a, [](P x, P) {
                            load_at(x, {Index(0), Index(1), Index(2)});
                          }); },
                    "record.cell_index"),
            "kernel `k`: op #5 `load_at`: takes 1 cell index(es) (one per free dimension) or 2 (one per dimension) for "
            "cells([256, 256], [64, 32]), not 3");
  EXPECT_EQ(
      refused([] { record_k([](P, P out) { store_sub(out, full<double>({64}, 0.0), {}); }); }, "record.cell_index"),
      "kernel `k`: op #4 `store_sub`: takes one part index per dimension of the cell (1), not 0");
  // Seed 04's form names only the free dimension; the full form names every one.
  record_shared(a, [](P x, P) {
    load_at(x, {Index(3)});
    load_at(x, {Index(0), Index(3)});
  });
}

TEST(TileRefusals, Strides) {
  Cells g = cells({128, 64}, {32, 32});
  EXPECT_EQ(
      refused([&] { record_shared(g, [](P x, P out) { store(out, Index(0), load_cell(x), {1}); }); }, "record.strides"),
      "kernel `k`: op #4 `store`: takes one stride per dimension of the tile (2), not 1");
  EXPECT_EQ(
      refused([&] { record_shared(g, [](P, P s) {
                      load(s, Index(0), {32, 32}, {1, 128, 1});
                    }); }, "record.strides"),
      "kernel `k`: op #3 `load`: takes one stride per dimension of the tile (2), not 3");
}

// Addressed accesses' extents, offsets, element types and padding.
TEST(TileRefusals, AddressedAccesses) {
  Cells g = cells({128, 64}, {32, 32});
  EXPECT_EQ(refused([&] { record_shared(g, [](P x, P out) { store(out, Index(0), load_cell(x), {}, {Index(4)}); }); },
                    "record.extent"),
            "kernel `k`: op #5 `store`: takes an extent of one index per dimension of the tile (2) or none, not 1");
  EXPECT_EQ(refused([&] { record_shared(g, [](P, P s) {
                            load(s, Index(0), {32}, {}, {Index(4), Index(5)});
                          }); },
                    "record.extent"),
            "kernel `k`: op #5 `load`: takes an extent of one index per dimension of the tile (1) or none, not 2");
  // Offsets one per value.
  EXPECT_EQ(refused(
                [&] {
                  trace("k", In<int32_t>(cells({128}, {128})), In<double>(g), Shared<double>(),
                        [](Param<int32_t> at, P x, P s) { scatter(s, load_cell(at), load_cell(x)); });
                },
                "record.shape_mismatch"),
            "kernel `k`: op #5 `scatter`: offsets are tile<128xi32>, values tile<32x32xf64>: one offset per value");
  // An In is not written at an address either, by an atomic or a scatter.
  EXPECT_EQ(refused(
                [&] {
                  trace("k", In<int32_t>(cells({128}, {128})), Shared<int32_t>(),
                        [](Param<int32_t> x, Param<int32_t>) { atomic_add(x, load_cell(x), load_cell(x)); });
                },
                "record.in_written"),
            "kernel `k`: op #4 `atomic_add`: parameter 0 is an In, and nothing writes an In");
  // Integers hold no infinity: an integer load pads with zero.
  EXPECT_EQ(refused(
                [&] {
                  trace("k", Shared<int32_t>(),
                        [](Param<int32_t> s) { load(s, Index(0), {32}, {}, {Index(3)}, Pad::neg_inf); });
                },
                "record.type"),
            "kernel `k`: op #3 `load`: pads with neg_inf, which i32 does not hold; integers pad with zero");
  // Below the typed front (whose concepts refuse it at compile time), an atomic on an element type
  // no atomic combines.
  EXPECT_EQ(refused(
                [&] {
                  trace("k", In<double>(cells({128}, {128})), Shared<double>(), [](P x, P s) {
                    detail::atomic(ir::OpKind::TileAtomicMax, s.ref(), Index(0).ref(), load_cell(x).ref(), {});
                  });
                },
                "record.type"),
            "kernel `k`: op #4 `atomic_max`: parameter 1 holds f64, and atomic_max takes i32, u32, i64 and u64");
}

TEST(TileRefusals, Axis) {
  EXPECT_EQ(refused([] { record_k([](P, P) { block_id(3); }); }, "record.axis"),
            "kernel `k`: op #3 `get_tile_block_id`: grid axes are 0, 1 and 2, not 3");
  EXPECT_EQ(refused([] { record_k([](P, P) { block_id(-1); }); }, "record.axis"),
            "kernel `k`: op #3 `get_tile_block_id`: grid axes are 0, 1 and 2, not -1");
}

// A tile op outside trace(): directly, and through a Param that escaped its recording.
// A program's cubes_per_processor outside 0 to Target::kMaxCubesPerProcessor, as K::cubes_per_processor's
// static_assert refuses for a C++ kernel.
TEST(TileRefusals, BadOption) {
  auto body = [](P x, P out) { store_cell(out, load_cell(x)); };
  Cells g = cells({64}, {64});
  EXPECT_EQ(refused([&] { trace("k", Options{.cubes_per_processor = 33}, In<double>(g), Out<double>(g), body); },
                    "record.bad_option"),
            "kernel `k`: Options::cubes_per_processor is 33; it takes 0 (the backend's choice) to 32");
  EXPECT_EQ(refused([&] { trace("k", Options{.cubes_per_processor = -1}, In<double>(g), Out<double>(g), body); },
                    "record.bad_option"),
            "kernel `k`: Options::cubes_per_processor is -1; it takes 0 (the backend's choice) to 32");
  Traced t = trace("k", Options{.cubes_per_processor = 32}, In<double>(g), Out<double>(g), body);
  EXPECT_EQ(t.program->kernel().facts.cubes_per_processor, 32);
}

TEST(TileRefusals, NoContext) {
  const std::string message = "a tile op was used outside trace(): tile ops only record";
  EXPECT_EQ(refused([] { full<double>({32}, 0.0); }, "trace.no_context"), message);
  std::optional<P> escaped;
  record_k([&](P x, P) { escaped = x; });
  EXPECT_EQ(refused([&] { load_cell(*escaped); }, "trace.no_context"), message);
}

// ---- launch checks (CPU device; they run before anything is compiled) ---------------------------

// A buffer filled with a pattern no kernel writes, to check that a refused launch leaves it be.
struct Poisoned {
  Client client;
  Handle handle;
  std::vector<double> before;
  Poisoned(const Client& c, size_t n) : client(c) {
    for (size_t i = 0; i < n; ++i) before.push_back(-7.25 - double(i));
    handle = client.upload(before);
  }
  void expect_unchanged() const {
    EXPECT_EQ(client.read<double>(handle), before) << "a refused launch changed a buffer";
  }
  // After a launch that ran: what it wrote is the new baseline.
  void accept_changes() { before = client.read<double>(handle); }
};

const auto vadd = [](P a, P b, P out) { store_cell(out, load_cell(a) + load_cell(b)); };

Traced vadd_over(Cells g) { return trace("vadd", In<double>(g), In<double>(g), Out<double>(g), vadd); }

// Launches that pass every check run.
void expect_checks_pass(const std::function<void()>& launch) {
  try {
    launch();
  } catch (const Error& e) {
    ADD_FAILURE() << "an accepted launch failed: " << e.kind() << ": " << e.message();
  }
}

TEST(TileLaunchRefusals, Arity) {
  Client c = Device::cpu().client();
  Traced t = vadd_over(cells({256}, {128}));
  Poisoned a(c, 256), b(c, 256);
  EXPECT_EQ(refused(
                [&] {
                  t.entry.launch(c, {a.handle, b.handle});
                },
                "launch.arity"),
            "kernel `vadd`: takes 3 buffer(s), was given 2");
  a.expect_unchanged();
  b.expect_unchanged();
}

TEST(TileLaunchRefusals, InvalidHandle) {
  Client c = Device::cpu().client();
  Traced t = vadd_over(cells({256}, {128}));
  Poisoned a(c, 256), out(c, 256);
  EXPECT_EQ(refused(
                [&] {
                  t.entry.launch(c, {a.handle, Handle(), out.handle});
                },
                "handle.invalid"),
            "kernel `vadd`: argument 1 (In) is an empty handle");
  a.expect_unchanged();
  out.expect_unchanged();
}

TEST(TileLaunchRefusals, TypeMismatch) {
  Client c = Device::cpu().client();
  Traced t = vadd_over(cells({256}, {128}));
  Poisoned a(c, 256), out(c, 256);
  std::vector<float> floats(256, 1.5f);
  Handle f = c.upload(floats);
  EXPECT_EQ(refused(
                [&] {
                  t.entry.launch(c, {a.handle, f, out.handle});
                },
                "launch.type_mismatch"),
            "kernel `vadd`: argument 1 (In) takes f64 and the buffer holds f32");
  Handle raw = c.empty_bytes(256 * sizeof(double));
  EXPECT_EQ(refused(
                [&] {
                  t.entry.launch(c, {a.handle, a.handle, raw});
                },
                "launch.type_mismatch"),
            "kernel `vadd`: argument 2 (Out) takes f64 and the buffer holds raw bytes (view_as<T> first)");
  a.expect_unchanged();
  out.expect_unchanged();
  EXPECT_EQ(c.read<float>(f), floats);
}

// Seed 04: cells([1000], [128]) over a 999-element buffer.
TEST(TileLaunchRefusals, ShortBuffer) {
  Client c = Device::cpu().client();
  Traced t = vadd_over(cells({1000}, {128}));
  Poisoned a(c, 999), b(c, 1000), out(c, 1000);
  EXPECT_EQ(refused(
                [&] {
                  t.entry.launch(c, {a.handle, b.handle, out.handle});
                },
                "launch.short_buffer"),
            "kernel `vadd`: argument 0 (In) holds 999 element(s) and its cells reach 1000");
  a.expect_unchanged();
  b.expect_unchanged();
  out.expect_unchanged();
  // The extent is what a buffer must hold, not the whole tiles: 1000 elements pass.
  Poisoned a2(c, 1000);
  expect_checks_pass([&] { t.entry.launch(c, {a2.handle, b.handle, out.handle}); });
}

// A dyn_dim extent is the grid's blocks x the tile: on 8 blocks of 128 a buffer must hold 1024.
TEST(TileLaunchRefusals, ShortBufferDynDim) {
  Client c = Device::cpu().client();
  Traced t = vadd_over(cells({dyn_dim}, {128}));
  EXPECT_FALSE(t.program->grid().has_value());
  Poisoned a(c, 1024), b(c, 1024), out(c, 1023);
  EXPECT_EQ(refused(
                [&] {
                  t.entry.launch(c, {a.handle, b.handle, out.handle}, Grid{8, 1, 1});
                },
                "launch.short_buffer"),
            "kernel `vadd`: argument 2 (Out) holds 1023 element(s) and its cells reach 1024");
  a.expect_unchanged();
  b.expect_unchanged();
  out.expect_unchanged();
  Poisoned out2(c, 1024);
  expect_checks_pass([&] { t.entry.launch(c, {a.handle, b.handle, out2.handle}, Grid{8, 1, 1}); });
}

TEST(TileLaunchRefusals, GridMismatch) {
  Client c = Device::cpu().client();
  Poisoned a(c, 1024), b(c, 1024), out(c, 1024);
  auto unchanged = [&] {
    a.expect_unchanged();
    b.expect_unchanged();
    out.expect_unchanged();
  };
  // A grid that disagrees with the one the Out cells make.
  Traced fixed = vadd_over(cells({1000}, {128}));
  EXPECT_EQ(refused(
                [&] {
                  fixed.entry.launch(c, {a.handle, b.handle, out.handle}, Grid{4, 1, 1});
                },
                "launch.grid_mismatch"),
            "kernel `vadd`: the Out cells make the grid [8, 1, 1], and the launch gives [4, 1, 1]");
  unchanged();
  // Repeating it is accepted.
  expect_checks_pass([&] { fixed.entry.launch(c, {a.handle, b.handle, out.handle}, Grid{8, 1, 1}); });
  out.accept_changes();
  // No grid where no Out fixes one.
  Traced dynamic = vadd_over(cells({dyn_dim}, {128}));
  EXPECT_EQ(refused(
                [&] {
                  dynamic.entry.launch(c, {a.handle, b.handle, out.handle});
                },
                "launch.grid_mismatch"),
            "kernel `vadd`: no Out fixes the grid (its cells are dyn_dim, or the outputs are Shared): pass one");
  EXPECT_EQ(refused(
                [&] {
                  dynamic.entry.launch(c, {a.handle, b.handle, out.handle}, Grid{0, 1, 1});
                },
                "launch.grid_mismatch"),
            "kernel `vadd`: the grid has an axis of 0 blocks");
  unchanged();
  // An In whose cells disagree with the given grid (the output is Shared, so the launch gives it).
  Traced shared = record_shared(cells({1024}, {128}), [](P x, P out) { store(out, block_id(0) * 128, load_cell(x)); });
  EXPECT_EQ(refused(
                [&] {
                  shared.entry.launch(c, {a.handle, out.handle}, Grid{4, 1, 1});
                },
                "launch.grid_mismatch"),
            "kernel `k`: argument 0 (In) has 8 cell(s) in dimension 0, which follows grid axis 0, and the grid has 4 "
            "block(s) there");
  unchanged();
}

TEST(TileLaunchRefusals, Misaligned) {
  Client c = Device::cpu().client();
  Traced t = vadd_over(cells({256}, {128}));
  Poisoned a(c, 257), b(c, 256), out(c, 256);
  Handle shifted = a.handle.offset_start(8);  // one double in: 256 elements, 8 bytes off 16
  EXPECT_EQ(
      refused(
          [&] {
            t.entry.launch(c, {shifted, b.handle, out.handle});
          },
          "launch.misaligned"),
      "kernel `vadd`: argument 0 (In) starts at an address that is not a multiple of 16 bytes; the program assumes "
      "div_by<16> (start a view on a 16-byte boundary)");
  a.expect_unchanged();
  b.expect_unchanged();
  out.expect_unchanged();
  // Two doubles in is on the boundary.
  Poisoned a2(c, 258);
  expect_checks_pass([&] { t.entry.launch(c, {a2.handle.offset_start(16), b.handle, out.handle}); });
}

// An Out whose buffer overlaps an In's: two views of one allocation.
TEST(TileLaunchRefusals, OutShared) {
  Client c = Device::cpu().client();
  Traced t = vadd_over(cells({256}, {128}));
  Poisoned whole(c, 512), b(c, 256);
  Handle in = whole.handle.offset_end(128 * sizeof(double));     // elements [0, 384)
  Handle out = whole.handle.offset_start(128 * sizeof(double));  // elements [128, 512)
  EXPECT_EQ(refused(
                [&] {
                  t.entry.launch(c, {in, b.handle, out});
                },
                "launch.out_shared"),
            "kernel `vadd`: argument 2 (Out) shares memory with argument 0 (In); an Out's buffer is its own (declare a "
            "parameter written in place Shared)");
  // The same buffer twice.
  EXPECT_EQ(refused(
                [&] {
                  t.entry.launch(c, {b.handle, whole.handle, b.handle});
                },
                "launch.out_shared"),
            "kernel `vadd`: argument 2 (Out) shares memory with argument 0 (In); an Out's buffer is its own (declare a "
            "parameter written in place Shared)");
  whole.expect_unchanged();
  b.expect_unchanged();
  // Two views of one allocation that do not overlap are two buffers.
  Handle low = whole.handle.offset_end(256 * sizeof(double)), high = whole.handle.offset_start(256 * sizeof(double));
  expect_checks_pass([&] { t.entry.launch(c, {low, b.handle, high}); });
}

// Lowering indexes elements with u32: a parameter whose cells reach past 2^32 elements is refused
// before any buffer is looked at (no test machine holds such a buffer, and none needs to).
TEST(TileLaunchRefusals, TooLarge) {
  Client c = Device::cpu().client();
  Poisoned a(c, 256), b(c, 256), out(c, 256);
  Traced big = vadd_over(cells({int64_t(1) << 33}, {128}));
  EXPECT_EQ(refused(
                [&] {
                  big.entry.launch(c, {a.handle, b.handle, out.handle});
                },
                "launch.too_large"),
            "kernel `vadd`: argument 0 (In) reaches 8589934592 elements; a tile kernel indexes at most 4294967296 "
            "(2^32) elements of a parameter");
  // A dyn_dim extent reaches grid x tile: 2^25 blocks of 128 is 2^32, the most there is.
  Traced dynamic = vadd_over(cells({dyn_dim}, {128}));
  EXPECT_EQ(refused(
                [&] {
                  dynamic.entry.launch(c, {a.handle, b.handle, out.handle}, Grid{(1u << 25) + 1, 1, 1});
                },
                "launch.too_large"),
            "kernel `vadd`: argument 0 (In) reaches 4294967424 elements; a tile kernel indexes at most 4294967296 "
            "(2^32) elements of a parameter");
  EXPECT_EQ(refused(
                [&] {
                  dynamic.entry.launch(c, {a.handle, b.handle, out.handle}, Grid{1u << 25, 1, 1});
                },
                "launch.short_buffer"),
            "kernel `vadd`: argument 0 (In) holds 256 element(s) and its cells reach 4294967296");
  a.expect_unchanged();
  b.expect_unchanged();
  out.expect_unchanged();
}

// Two blocks may not write one Out cell: an Out must follow every grid axis that has several blocks.
TEST(TileRefusals, OutsFollowEveryAxisOfSeveralBlocks) {
  auto body = [](P x, P y, P s) {
    store_cell(y, load_cell(x));
    store_cell(s, reduce_sum(load_cell(x), {.dim = 1, .keepdims = true}));
  };
  // Recorded: y's cells make the grid [4, 2]; s has 4 x 1 cells, nothing along axis 1.
  EXPECT_EQ(refused(
                [&] {
                  trace("k", In<double>(cells({128, 64}, {32, 32})), Out<double>(cells({128, 64}, {32, 32})),
                        Out<double>(cells({128, 1}, {32, 1}).along({0, free_axis})), body);
                },
                "record.cells"),
            "kernel `k`: argument 2 (Out) is an Out with a free dimension 1; an Out's cells are the grid, so each "
            "dimension follows a grid axis");
  auto one_dim = [](P x, P y, P s) {
    store_cell(y, load_cell(x));
    store_cell(s, reduce_sum(load_cell(x), {.dim = 1}));
  };
  EXPECT_EQ(refused(
                [&] {
                  trace("k", In<double>(cells({128, 64}, {32, 32})), Out<double>(cells({128, 64}, {32, 32})),
                        Out<double>(cells({128}, {32})), one_dim);
                },
                "record.grid_mismatch"),
            "kernel `k`: argument 2 (Out) has no dimension along grid axis 1, where the grid has 2 blocks: they would "
            "all write the same cells");
  // At launch, where the grid comes from the launch.
  Traced t = trace("k", In<double>(cells({dyn_dim, 64}, {32, 32})), Out<double>(cells({dyn_dim, 64}, {32, 32})),
                   Out<double>(cells({dyn_dim}, {32})), one_dim);
  Client c = Device::cpu().client();
  Poisoned x(c, 4 * 32 * 64), y(c, 4 * 32 * 64), s(c, 128);
  EXPECT_EQ(refused(
                [&] {
                  t.entry.launch(c, {x.handle, y.handle, s.handle}, Grid{4, 2, 1});
                },
                "launch.grid_mismatch"),
            "kernel `k`: argument 2 (Out) has no dimension along grid axis 1, where the grid has 2 blocks: they would "
            "all write the same cells");
  x.expect_unchanged();
  y.expect_unchanged();
  s.expect_unchanged();
}

// A view made inside a loop (a retile) reaches as far as one made at the top: the launch sees it.
TEST(TileLaunchRefusals, ShortBufferForAViewInsideALoop) {
  Traced t = trace("inner", In<double>(cells({128}, {128})), Out<double>(cells({128}, {128})), [](P x, P out) {
    Var<double> acc = zeros(out);
    For(d_range(0, 2), [&](Index k) { acc = acc.get() + load_at(retile(x, {256}, {128}), {k}); });
    store_cell(out, acc);
  });
  Client c = Device::cpu().client();
  Poisoned x(c, 128), out(c, 128);
  EXPECT_EQ(refused(
                [&] {
                  t.entry.launch(c, {x.handle, out.handle});
                },
                "launch.short_buffer"),
            "kernel `inner`: argument 0 (In) holds 128 element(s) and its cells reach 256");
  x.expect_unchanged();
  out.expect_unchanged();
}

}  // namespace
}  // namespace kiln::tile
