// Tile layouts in the IR (decision 031): the swizzles' byte offsets against the hardware's
// pattern, what a layout must be on its own and to fit a type, the verifier's and the type
// rules' messages, and the parser's.
#include "kiln/ir/layout.h"

#include <gtest/gtest.h>

#include <set>

#include "kiln/error.h"
#include "kiln/ir/text.h"
#include "kiln/ir/type_rules.h"
#include "kiln/ir/verifier.h"

namespace kiln::ir {
namespace {

// The 128-byte swizzle on rows of 128 bytes (64 bf16): chunk c of row r lands at chunk c ^ (r % 8)
// of its row, the pattern Hopper's bulk copies and warp-group products use.
TEST(SharedLayout, The128ByteSwizzleXorsChunksWithTheRow) {
  SharedLayout s{64, Swizzle::Span128, 1024};
  for (uint64_t r = 0; r < 24; ++r) {
    for (uint64_t c = 0; c < 8; ++c) {
      for (uint64_t e = 0; e < 8; ++e) {  // element e of the chunk keeps its place in it
        EXPECT_EQ(s.byte_offset(r, c * 8 + e, 2), r * 128 + ((c ^ (r % 8)) * 16) + e * 2) << r << " " << c;
      }
    }
  }
}

// The 64-byte swizzle on rows of 64 bytes (16 f32): chunk c of row r at chunk c ^ ((r / 2) % 4),
// and the 32-byte one on rows of 32 bytes: chunk c ^ ((r / 4) % 2). Each maps an aligned run of 8
// spans onto itself.
TEST(SharedLayout, TheNarrowerSwizzlesPermuteEachRunOfEightSpans) {
  SharedLayout s64{16, Swizzle::Span64, 512}, s32{8, Swizzle::Span32, 256};
  for (uint64_t r = 0; r < 32; ++r) {
    for (uint64_t c = 0; c < 4; ++c) EXPECT_EQ(s64.byte_offset(r, c * 4, 4), r * 64 + ((c ^ ((r / 2) % 4)) * 16));
    for (uint64_t c = 0; c < 2; ++c) EXPECT_EQ(s32.byte_offset(r, c * 4, 4), r * 32 + ((c ^ ((r / 4) % 2)) * 16));
  }
  for (const SharedLayout& s : {s64, s32, SharedLayout{64, Swizzle::Span128, 1024}}) {
    const uint64_t run = 8 * uint64_t(s.swizzle), row_bytes = uint64_t(s.pitch) * 4;
    std::set<uint64_t> seen;
    for (uint64_t at = 0; at < run; at += 4) {
      const uint64_t o = s.byte_offset(at / row_bytes, at % row_bytes / 4, 4);
      EXPECT_LT(o, run);
      EXPECT_TRUE(seen.insert(o).second) << "offset " << o << " twice";
    }
  }
  EXPECT_EQ((SharedLayout{72, Swizzle::None, 16}.byte_offset(3, 5, 2)), (3u * 72 + 5) * 2) << "no swizzle: rows apart";
}

TEST(TileLayout, RulesOfItsOwn) {
  EXPECT_EQ(layout_error(TileLayout::of(SharedLayout{64, Swizzle::Span128, 512})),
            "a 128-byte swizzle repeats every 1024 bytes and needs its base aligned to that, not to 512");
  EXPECT_EQ(layout_error(TileLayout::of(SharedLayout{64, Swizzle::None, 24})),
            "a shared layout's alignment is a power of two of 16 bytes or more, not 24");
  EXPECT_EQ(layout_error(TileLayout::of(SharedLayout{0, Swizzle::None, 16})),
            "a shared layout's pitch is at least one element");
  EXPECT_EQ(layout_error(TileLayout::of(SharedLayout{8, Swizzle::Span32, 256})), "");
  FragmentLayout f{2, {4, 8, 0, 0}, {{1, 0}}, {{1, 1}, {1, 2}, {0, 0}, {0, 1}, {}}};
  EXPECT_EQ(layout_error(TileLayout::of(f)), "");
  FragmentLayout twice = f;
  twice.unit[4] = {1, 0};
  EXPECT_EQ(layout_error(TileLayout::of(twice)), "coordinate bit 1:0 is named twice");
  FragmentLayout missing = f;
  missing.unit[3] = {};
  EXPECT_EQ(layout_error(TileLayout::of(missing)), "dimension 0's coordinate bits are not all named");
  FragmentLayout outside = f;
  outside.slot[0] = {0, 2};
  EXPECT_EQ(layout_error(TileLayout::of(outside)), "bit 0:2 is not a coordinate bit of the shape");
  FragmentLayout odd = f;
  odd.shape[1] = 6;
  EXPECT_EQ(layout_error(TileLayout::of(odd)), "a fragment layout's dimensions are powers of two, not 6");
  FragmentLayout copies = f;
  copies.slot.resize(17);
  EXPECT_EQ(layout_error(TileLayout::of(copies)),
            "a fragment layout names 17 slot bits; a unit holds at most 2^16 values of a tile");
  EXPECT_EQ(layout_error(TileLayout::of(SharedLayout{64, Swizzle::None, 2048})),
            "a shared layout's alignment is at most 1024 bytes, not 2048");
}

TEST(TileLayout, WhatFitsWhichType) {
  const TileLayout frag =
      TileLayout::of(FragmentLayout{1, {32, 0, 0, 0}, {}, {{0, 0}, {0, 1}, {0, 2}, {0, 3}, {0, 4}}});
  const TileLayout swz = TileLayout::of(SharedLayout{64, Swizzle::Span128, 1024});
  EXPECT_EQ(layout_fit_error(frag, Type::tile(Scalar::F32, 1, {32, 0, 0, 0})), "");
  EXPECT_EQ(layout_fit_error(frag, Type::tile(Scalar::F32, 1, {64, 0, 0, 0})),
            "the fragment layout's shape is not the tile's");
  EXPECT_EQ(layout_fit_error(swz, Type::tile(Scalar::F32, 1, {32, 0, 0, 0})),
            "a register tile takes a fragment layout");
  EXPECT_EQ(layout_fit_error(frag, Type::shared(Type::scalar_of(Scalar::BF16), 64)),
            "shared memory takes a shared layout");
  EXPECT_EQ(layout_fit_error(swz, Type::shared(Type::scalar_of(Scalar::BF16), 4096)), "");
  EXPECT_EQ(layout_fit_error(swz, Type::tile(Scalar::BF16, 2, {64, 64, 0, 0}, MemorySpace::Shared)), "");
  EXPECT_EQ(layout_fit_error(swz, Type::tile(Scalar::F32, 2, {64, 32, 0, 0}, MemorySpace::Shared)), "")
      << "64 f32 a row: two spans";
  EXPECT_EQ(layout_fit_error(TileLayout::of(SharedLayout{24, Swizzle::Span64, 512}),
                             Type::shared(Type::scalar_of(Scalar::F32), 96)),
            "a 64-byte swizzle permutes chunks within whole spans: rows of 96 bytes are not");
  EXPECT_EQ(layout_fit_error(TileLayout::of(SharedLayout{6, Swizzle::None, 16}),
                             Type::shared(Type::scalar_of(Scalar::F16), 96)),
            "a shared layout's rows are whole 16-byte chunks, not 12 bytes");
  EXPECT_EQ(layout_fit_error(TileLayout::of(SharedLayout{32, Swizzle::None, 16}),
                             Type::tile(Scalar::F32, 2, {8, 64, 0, 0}, MemorySpace::Shared)),
            "the pitch is shorter than the tile's stored rows");
  // Stored as columns (a transposed slot): its stored rows are the tile's columns, 8 long here.
  EXPECT_EQ(layout_fit_error(TileLayout::of(SharedLayout{32, Swizzle::None, 16, true}),
                             Type::tile(Scalar::F32, 2, {8, 64, 0, 0}, MemorySpace::Shared)),
            "");
  EXPECT_EQ(layout_fit_error(TileLayout::of(SharedLayout{32, Swizzle::None, 16, true}),
                             Type::tile(Scalar::F32, 2, {64, 8, 0, 0}, MemorySpace::Shared)),
            "the pitch is shorter than the tile's stored rows");
  EXPECT_EQ(layout_fit_error(TileLayout::of(SharedLayout{32, Swizzle::None, 16}),
                             Type::tile(Scalar::F32, 1, {32, 0, 0, 0}, MemorySpace::Shared)),
            "")
      << "a tile of rank 1 is one row";
  EXPECT_EQ(layout_fit_error(TileLayout::of(SharedLayout{32, Swizzle::None, 16, true}),
                             Type::tile(Scalar::F32, 1, {32, 0, 0, 0}, MemorySpace::Shared)),
            "a tile of rank 1 is one row, not stored as columns");
  EXPECT_EQ(layout_fit_error(TileLayout::of(SharedLayout{32, Swizzle::None, 16, true}),
                             Type::shared(Type::scalar_of(Scalar::F32), 256)),
            "a shared array is rows; only a tile is stored as columns");
  EXPECT_EQ(layout_fit_error(swz, Type::tile(Scalar::BF16, 2, {64, 64, 0, 0}, MemorySpace::Global)),
            "a view of global memory has no layout");
}

std::string verify_error(const std::string& text) {
  try {
    Kernel k = parse(text);
    verify(k, "");
  } catch (const Error& e) {
    return e.kind() + ": " + e.message();
  }
  return "(verified)";
}

const char* kHead =
    "kernel @k(%x: buffer<vector<4 x f32>, ro>, %y: buffer<vector<4 x f32>, rw>) {cube_dim = [32, 1, 1], mode = "
    "unchecked, address = u32, vector = 4} layouts {\n"
    "  #1 = fragment<[16, 16], slot = [1:0, 1:1, 0:3], unit = [1:2, 1:3, 0:0, 0:1, 0:2]>,\n"
    "  #2 = fragment<[16, 16], slot = [0:0, 0:1, 1:3], unit = [0:2, 0:3, 1:0, 1:1, 1:2]>,\n"
    "  #3 = shared<pitch = 64, swizzle = 128, align = 1024>\n"
    "} {\n"
    "  %0 = tile.view %x {extent = [16, 16], tile = [16, 16], along = [0, 1], pad = zero} : tile<[16, 16] x f32, "
    "global>\n"
    "  %1 = tile.load_cell %0 : tile<[16, 16] x f32, registers, #1>\n"
    "  %2 = tile.load_cell %0 : tile<[16, 16] x f32, registers, #2>\n";

// A shared tile transposed is the same memory read the other way round: its layout is the
// operand's with columns toggled.
TEST(TileLayout, ASharedTransposeTogglesColumns) {
  const std::string head =
      "kernel @k(%x: buffer<f32, rw>) {cube_dim = [32, 1, 1], mode = unchecked, address = u32, vector = 1} layouts {\n"
      "  #1 = shared<pitch = 64, swizzle = none, align = 16>,\n"
      "  #2 = shared<pitch = 64, swizzle = none, align = 16, columns>,\n"
      "  #3 = shared<pitch = 72, swizzle = none, align = 16, columns>\n"
      "} {\n"
      "  %0 = shared.alloc : shared<f32, 4096, #1>\n"
      "  %1 = const 0 : u32\n"
      "  %2 = tile.slot %0, %1 : tile<[32, 64] x f32, shared, #1>\n";
  EXPECT_EQ(verify_error(head + "  %3 = tile.transpose %2 : tile<[64, 32] x f32, shared, #2>\n}\n"), "(verified)");
  EXPECT_EQ(verify_error(head + "  %3 = tile.transpose %2 : tile<[64, 32] x f32, shared, #3>\n}\n"),
            "ir.verify: kernel 'k': op #4 'tile.transpose': a transposed shared tile's layout is its operand's with "
            "columns toggled (shared<pitch = 64, swizzle = none, align = 16, columns>), not shared<pitch = 72, "
            "swizzle = none, align = 16, columns>");
  EXPECT_EQ(verify_error(head + "  %3 = tile.transpose %2 : tile<[64, 32] x f32, shared, #1>\n}\n"),
            "ir.verify: kernel 'k': op #4 'tile.transpose': a transposed shared tile's layout is its operand's with "
            "columns toggled (shared<pitch = 64, swizzle = none, align = 16, columns>), not shared<pitch = 64, "
            "swizzle = none, align = 16>");
}

TEST(TileLayout, TheVerifierHoldsValuesToTheirLayouts) {
  EXPECT_EQ(verify_error(std::string(kHead) + "  %3 = add %1, %1 : tile<[16, 16] x f32, registers, #1>\n}\n"),
            "(verified)");
  EXPECT_EQ(verify_error(std::string(kHead) + "  %3 = add %1, %2 : tile<[16, 16] x f32, registers, #1>\n}\n"),
            "ir.verify: kernel 'k': op #4 'add': operands have different layouts: tile<[16, 16] x f32, registers, #1> "
            "and tile<[16, 16] x f32, registers, #2> (a layout changes by tile.convert_layout)");
  EXPECT_EQ(verify_error(std::string(kHead) + "  %3 = add %1, %1 : tile<[16, 16] x f32, registers, #2>\n}\n"),
            "ir.verify: kernel 'k': op #4 'add': result type is tile<[16, 16] x f32, registers, #2>, expected "
            "tile<[16, 16] x f32, registers, #1>");
  EXPECT_EQ(
      verify_error(std::string(kHead) + "  %3 = tile.convert_layout %1 : tile<[16, 16] x f32, registers, #1>\n}\n"),
      "ir.verify: kernel 'k': op #4 'tile.convert_layout': converts tile<[16, 16] x f32, registers, #1> to its "
      "own layout");
  EXPECT_EQ(verify_error(std::string(kHead) + "  %3 = tile.convert_layout %1 : tile<[16, 16] x f32, registers>\n}\n"),
            "ir.verify: kernel 'k': op #4 'tile.convert_layout': converts between two assigned layouts: tile<[16, 16] "
            "x f32, registers, #1> to tile<[16, 16] x f32, registers>");
  EXPECT_EQ(
      verify_error(std::string(kHead) + "  %3 = tile.convert_layout %1 : tile<[16, 16] x f32, registers, #3>\n}\n"),
      "ir.verify: kernel 'k': a value of type tile<[16, 16] x f32, registers, #3> cannot take layout #3 "
      "(shared<pitch = 64, swizzle = 128, align = 1024>): a register tile takes a fragment layout");
  EXPECT_EQ(
      verify_error(std::string(kHead) + "  %3 = tile.convert_layout %1 : tile<[16, 16] x f32, registers, #4>\n}\n"),
      "ir.verify: kernel 'k': a value of type tile<[16, 16] x f32, registers, #4> names layout #4; the kernel "
      "has 3");
  EXPECT_EQ(verify_error(std::string(kHead) + "  %3 = shared.alloc : shared<bf16, 4096, #3>\n}\n"), "(verified)");
  EXPECT_EQ(verify_error(std::string(kHead) + "  %3 = var.decl : var<tile<[16, 16] x f32, registers, #2>>\n}\n"),
            "(verified)")
      << "a var of a tile holds the tile's layout";
  EXPECT_EQ(verify_error(std::string(kHead) + "  %3 = var.decl : var<tile<[8, 16] x f32, registers, #2>>\n}\n"),
            "ir.verify: kernel 'k': a value of type var<tile<[8, 16] x f32, registers, #2>> cannot take layout #2 "
            "(fragment<[16, 16], slot = [0:0, 0:1, 1:3], unit = [0:2, 0:3, 1:0, 1:1, 1:2]>): the fragment layout's "
            "shape is not the tile's");
  EXPECT_EQ(verify_error(std::string(kHead) + "  %3 = shared.alloc : shared<f16, 100, #1>\n}\n"),
            "ir.verify: kernel 'k': a value of type shared<f16, 100, #1> cannot take layout #1 (fragment<[16, 16], "
            "slot = [1:0, 1:1, 0:3], unit = [1:2, 1:3, 0:0, 0:1, 0:2]>): shared memory takes a shared layout");
}

TEST(TileLayout, TheTableIsVerifiedAndParsedInOrder) {
  std::string bad = kHead;
  bad.replace(bad.find("align = 1024"), 12, "align = 256");
  EXPECT_EQ(verify_error(bad + "}\n"),
            "ir.verify: kernel 'k': layout #3 (shared<pitch = 64, swizzle = 128, align = 256>): a 128-byte swizzle "
            "repeats every 1024 bytes and needs its base aligned to that, not to 256");
  std::string skipped = kHead;
  skipped.replace(skipped.find("#3 = "), 2, "#4");
  const std::string e = verify_error(skipped + "}\n");
  EXPECT_EQ(e.substr(0, e.find(':')), "ir.parse") << e;
  EXPECT_NE(e.find("layouts are numbered from #1 in order: expected #3"), std::string::npos) << e;
  std::string swz = kHead;
  swz.replace(swz.find("swizzle = 128"), 13, "swizzle = 48");
  EXPECT_NE(verify_error(swz + "}\n").find("a swizzle is 'none', 32, 64 or 128 bytes"), std::string::npos);
  EXPECT_NE(verify_error(std::string(kHead) + "  %3 = shared.alloc : shared<bf16, 64, #0>\n}\n")
                .find("layouts are numbered from #1 (a type without one names none)"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln::ir
