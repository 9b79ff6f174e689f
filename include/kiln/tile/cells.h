// Cells: where the shape of a tile kernel's work lives. A parameter's cells cut its tensor (a
// row-major array of `extent` elements) into tiles of `tile` elements; each dimension follows a
// grid axis (block i of that axis takes cell i) or is free (the kernel picks the cell: load_at).
// Lanes past the extent read the padding value and are never written.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/attr.h"

namespace kiln::tile {

// The value a lane past the extent reads (cuda_tile's padding_value): the IR's own enum, which the
// recorded view carries as its `pad` attribute and the lowering reads back.
using Pad = ir::Pad;

// An extent the launch's grid gives: grid blocks x tile elements.
inline constexpr int64_t dyn_dim = -1;
// A dimension that follows no grid axis: the kernel picks its cell (load_at).
inline constexpr int free_axis = -1;

class Cells {
 public:
  // Dimension i follows grid axis i, and pads with zero.
  Cells(std::vector<int64_t> extent, std::vector<int64_t> tile);

  Cells pad(Pad p) const;
  // One grid axis (0, 1, 2) or free_axis per dimension.
  Cells along(std::vector<int> axes) const;

  int rank() const { return static_cast<int>(extent_.size()); }
  const std::vector<int64_t>& extent() const { return extent_; }
  const std::vector<int64_t>& tile() const { return tile_; }
  const std::vector<int>& axes() const { return along_; }
  Pad padding() const { return pad_; }
  // Cells in dimension d (the extent rounded up to whole tiles); 0 for a dyn_dim extent.
  int64_t count(int d) const;
  // "cells([1000], [128])": how messages show them.
  std::string text() const;

 private:
  std::vector<int64_t> extent_;
  std::vector<int64_t> tile_;
  std::vector<int> along_;
  Pad pad_ = Pad::zero;
};

inline Cells cells(std::vector<int64_t> extent, std::vector<int64_t> tile) {
  return Cells(std::move(extent), std::move(tile));
}

}  // namespace kiln::tile
