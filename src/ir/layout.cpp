// Tile layouts: their text, their own rules, and how one fits a type (kiln/ir/layout.h).
#include "kiln/ir/layout.h"

#include "kiln/ir/target.h"
#include "kiln/ir/type.h"

namespace kiln::ir {

namespace {

bool power_of_two(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

// The largest base a shared layout asks for: what a 128-byte swizzle needs, and all that Hopper's
// bulk copies and warp-group products ask.
constexpr uint32_t kMaxSharedAlign = 1024;
// Slot bits of a fragment: 2^16 values a unit is far past any register file.
constexpr size_t kMaxSlotBits = 16;

int log2_of(uint64_t v) {
  int b = 0;
  while ((uint64_t(1) << b) < v) ++b;
  return b;
}

std::string bits_text(const std::vector<LayoutBit>& bits) {
  std::string s = "[";
  for (size_t i = 0; i < bits.size(); ++i) {
    s += i ? ", " : "";
    s += bits[i].none() ? std::string("-") : std::to_string(bits[i].dim) + ":" + std::to_string(bits[i].bit);
  }
  return s + "]";
}

}  // namespace

std::string_view to_string(Swizzle s) {
  switch (s) {
    case Swizzle::None: return "none";
    case Swizzle::Span32: return "32";
    case Swizzle::Span64: return "64";
    case Swizzle::Span128: return "128";
  }
  return "?";
}

uint32_t swizzle_alignment(Swizzle s) { return s == Swizzle::None ? 16 : 8 * uint32_t(s); }

uint64_t SharedLayout::byte_offset(uint64_t row, uint64_t col, int element_bytes) const {
  const uint64_t at = (row * pitch + col) * uint64_t(element_bytes);
  if (swizzle == Swizzle::None) return at;
  // The chunk bits (4 up) XOR the bits three above them, as many as the span has chunks' bits.
  const uint64_t mask = (uint64_t(swizzle) / 16 - 1) << 4;
  return at ^ ((at >> 3) & mask);
}

std::string to_string(const TileLayout& l) {
  if (l.kind == TileLayout::Kind::Shared) {
    return "shared<pitch = " + std::to_string(l.shared.pitch) +
           ", swizzle = " + std::string(to_string(l.shared.swizzle)) + ", align = " + std::to_string(l.shared.align) +
           (l.shared.columns ? ", columns" : "") + ">";
  }
  const FragmentLayout& f = l.fragment;
  std::string s = "fragment<[";
  for (int i = 0; i < f.rank; ++i) s += (i ? ", " : "") + std::to_string(f.shape[size_t(i)]);
  return s + "], slot = " + bits_text(f.slot) + ", unit = " + bits_text(f.unit) + ">";
}

std::string layout_error(const TileLayout& l) {
  if (l.kind == TileLayout::Kind::Shared) {
    const SharedLayout& s = l.shared;
    if (s.pitch == 0) return "a shared layout's pitch is at least one element";
    if (!power_of_two(s.align) || s.align < 16) {
      return "a shared layout's alignment is a power of two of 16 bytes or more, not " + std::to_string(s.align);
    }
    if (s.align > kMaxSharedAlign) {
      return "a shared layout's alignment is at most " + std::to_string(kMaxSharedAlign) + " bytes, not " +
             std::to_string(s.align);
    }
    if (s.align < swizzle_alignment(s.swizzle)) {
      return "a " + std::string(to_string(s.swizzle)) + "-byte swizzle repeats every " +
             std::to_string(swizzle_alignment(s.swizzle)) + " bytes and needs its base aligned to that, not to " +
             std::to_string(s.align);
    }
    return "";
  }
  const FragmentLayout& f = l.fragment;
  if (f.rank < 0 || f.rank > 4) return "a fragment layout has 0 to 4 dimensions, not " + std::to_string(f.rank);
  std::array<uint64_t, 4> named{};  // per dimension, the coordinate bits named so far
  for (int d = 0; d < f.rank; ++d) {
    if (!power_of_two(f.shape[size_t(d)])) {
      return "a fragment layout's dimensions are powers of two, not " + std::to_string(f.shape[size_t(d)]);
    }
  }
  if (f.slot.size() > kMaxSlotBits) {
    return "a fragment layout names " + std::to_string(f.slot.size()) + " slot bits; a unit holds at most 2^" +
           std::to_string(kMaxSlotBits) + " values of a tile";
  }
  if (f.unit.size() > size_t(log2_of(Target::kMaxCubeUnits))) {
    return "a fragment layout names " + std::to_string(f.unit.size()) + " unit bits; a cube has at most " +
           std::to_string(log2_of(Target::kMaxCubeUnits));
  }
  for (const std::vector<LayoutBit>* bits : {&f.slot, &f.unit}) {
    for (const LayoutBit& b : *bits) {
      if (b.none()) continue;
      if (b.dim >= f.rank || b.bit < 0 || (uint64_t(1) << b.bit) >= f.shape[size_t(b.dim)]) {
        return "bit " + std::to_string(b.dim) + ":" + std::to_string(b.bit) + " is not a coordinate bit of the shape";
      }
      if (named[size_t(b.dim)] & (uint64_t(1) << b.bit)) {
        return "coordinate bit " + std::to_string(b.dim) + ":" + std::to_string(b.bit) + " is named twice";
      }
      named[size_t(b.dim)] |= uint64_t(1) << b.bit;
    }
  }
  for (int d = 0; d < f.rank; ++d) {
    if (named[size_t(d)] != f.shape[size_t(d)] - 1) {
      return "dimension " + std::to_string(d) + "'s coordinate bits are not all named";
    }
  }
  return "";
}

std::string layout_fit_error(const TileLayout& l, const Type& t) {
  const bool shared_array = t.kind == TypeKind::Shared;
  if (t.is_tile() && t.space == MemorySpace::Global) return "a view of global memory has no layout";
  if (t.is_register_tile()) {
    if (l.kind != TileLayout::Kind::Fragment) return "a register tile takes a fragment layout";
    if (l.fragment.rank != t.rank || l.fragment.shape != t.shape)
      return "the fragment layout's shape is not the tile's";
    return "";
  }
  if (!shared_array && !(t.is_tile() && t.space == MemorySpace::Shared))
    return "only tiles and shared arrays have layouts";
  if (l.kind != TileLayout::Kind::Shared) return "shared memory takes a shared layout";
  const SharedLayout& s = l.shared;
  const uint64_t row_bytes = uint64_t(s.pitch) * uint64_t(scalar_bytes(t.scalar) * t.width);
  if (row_bytes % 16 != 0)
    return "a shared layout's rows are whole 16-byte chunks, not " + std::to_string(row_bytes) + " bytes";
  if (s.swizzle != Swizzle::None && row_bytes % uint64_t(s.swizzle) != 0) {
    return "a " + std::string(to_string(s.swizzle)) + "-byte swizzle permutes chunks within whole spans: rows of " +
           std::to_string(row_bytes) + " bytes are not";
  }
  if (t.is_tile()) {
    // A tile of rank 1 is one row; one of rank 2 is stored as its rows, or as its columns.
    if (t.rank != 1 && t.rank != 2) return "a shared layout is for tiles of rank 1 or 2";
    if (t.rank == 1 && s.columns) return "a tile of rank 1 is one row, not stored as columns";
    const uint32_t stored_row = t.rank == 1 ? t.shape[0] : s.columns ? t.shape[0] : t.shape[1];
    if (s.pitch < stored_row) return "the pitch is shorter than the tile's stored rows";
  } else if (s.columns) {
    return "a shared array is rows; only a tile is stored as columns";
  }
  return "";
}

}  // namespace kiln::ir
