#include "kiln/tile/cells.h"

#include "kiln/error.h"

namespace kiln::tile {

Cells::Cells(std::vector<int64_t> extent, std::vector<int64_t> tile)
    : extent_(std::move(extent)), tile_(std::move(tile)) {
  for (size_t i = 0; i < extent_.size(); ++i) along_.push_back(static_cast<int>(i));
}

Cells Cells::pad(Pad p) const {
  Cells c = *this;
  c.pad_ = p;
  return c;
}

Cells Cells::along(std::vector<int> axes) const {
  Cells c = *this;
  c.along_ = std::move(axes);
  return c;
}

int64_t Cells::count(int d) const {
  int64_t e = extent_.at(size_t(d)), t = tile_.at(size_t(d));
  if (e == dyn_dim || t <= 0) return 0;
  return (e + t - 1) / t;
}

static std::string list_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + (v[i] == dyn_dim ? std::string("dyn_dim") : std::to_string(v[i]));
  return s + "]";
}

std::string Cells::text() const { return "cells(" + list_text(extent_) + ", " + list_text(tile_) + ")"; }

}  // namespace kiln::tile
