// Layouts of tiles (docs/decisions/031-tile-layouts-in-the-ir.md): where a register tile's elements
// sit among a cube's units (a fragment layout: a map of bits), and how a shared tile's elements sit
// in shared memory (a shared layout: a row pitch, a swizzle and a base alignment). A kernel holds
// its layouts in one table (Kernel::layouts); a tile type, or a shared array's, names an entry by
// number (Type::layout: 1 for the first, 0 for none yet), so that values of one layout have equal
// types and a change of layout is an op of its own (tile.convert_layout).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::ir {

struct Type;

// Where one input bit (of a unit's position or of its slot number) goes: bit `bit` of coordinate
// `dim`, or nowhere (dim -1: the units or slots that differ in it hold the same elements).
struct LayoutBit {
  int dim = -1;
  int bit = 0;
  bool none() const { return dim < 0; }
  friend bool operator==(const LayoutBit&, const LayoutBit&) = default;
};

// A register tile spread over a cube's units: every dimension is a power of two, so each bit of a
// unit's position (lane bits first, then plane bits) and each bit of its slot number (the slots
// are the SSA values a unit holds) names one bit of one coordinate, or none (copies: a reduced
// tile's units, a unit's slots of a widened one). Each coordinate bit is named exactly once.
struct FragmentLayout {
  int rank = 0;
  std::array<uint32_t, 4> shape{};
  std::vector<LayoutBit> slot;  // slot bit i
  std::vector<LayoutBit> unit;  // unit bit i
  size_t slots() const { return size_t(1) << slot.size(); }
  friend bool operator==(const FragmentLayout&, const FragmentLayout&) = default;
};

// The swizzle of a shared tile, by the bytes of its span: within each aligned run of 8 x span
// bytes, the 16-byte chunk bits of an offset (bits 4 up, log2(span / 16) of them) are XORed with
// the bits three above them (bits 7 up), as Hopper's bulk copies and warp-group products read it.
enum class Swizzle : uint8_t { None = 0, Span32 = 32, Span64 = 64, Span128 = 128 };
std::string_view to_string(Swizzle s);

// A shared tile of rank 2, or a shared array seen as rows: row r starts `pitch` elements after row
// r - 1; the element's byte offset from the array's start is then swizzled; the array starts at a
// multiple of `align` bytes (16 to 1024).
//
// `columns`: a tile stored as its transpose, its element (r, c) at stored row c, column r: the
// transposed view of a staged tile (x @ w.T reads w's rows as they were copied).
struct SharedLayout {
  uint32_t pitch = 0;  // elements from one row to the next
  Swizzle swizzle = Swizzle::None;
  uint32_t align = 16;  // bytes, a power of two
  bool columns = false;
  // The byte offset of stored row `row`, column `col`, of elements of `element_bytes`.
  uint64_t byte_offset(uint64_t row, uint64_t col, int element_bytes) const;
  friend bool operator==(const SharedLayout&, const SharedLayout&) = default;
};

// The least alignment a swizzle needs: its pattern repeats every 8 x span bytes.
uint32_t swizzle_alignment(Swizzle s);

struct TileLayout {
  enum class Kind : uint8_t { Fragment, Shared };
  Kind kind = Kind::Fragment;
  FragmentLayout fragment;  // Kind::Fragment
  SharedLayout shared;      // Kind::Shared
  static TileLayout of(FragmentLayout f) { return {Kind::Fragment, std::move(f), {}}; }
  static TileLayout of(SharedLayout s) { return {Kind::Shared, {}, s}; }
  friend bool operator==(const TileLayout&, const TileLayout&) = default;
};

// "fragment<[16, 64], slot = [1:0, 1:1], unit = [1:2, 1:3, 1:4, 1:5, 0:0, -]>",
// "shared<pitch = 64, swizzle = 128, align = 1024>", "shared<pitch = 72, swizzle = none, align = 16, columns>".
std::string to_string(const TileLayout& l);
// What is wrong with a layout on its own, or "": a fragment's dimensions (1 to 4, powers of two),
// each coordinate bit named once; a shared layout's alignment (a power of two of 16 or more, and
// what its swizzle needs) and pitch.
std::string layout_error(const TileLayout& l);
// What is wrong with `l` as the layout of `t` (a tile or a shared array), or "": a register tile
// takes a fragment layout of its shape, a shared tile or array a shared layout whose rows are
// whole 16-byte chunks (and whole spans, swizzled); a global tile takes none.
std::string layout_fit_error(const TileLayout& l, const Type& t);

}  // namespace kiln::ir
