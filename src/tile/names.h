// How the tile layer names things in messages and in render(): cuda_tile's op names and tile types.
#pragma once

#include <string>

#include "kiln/ir/kernel.h"

namespace kiln::tile {

// "tile<128xf64>", "tile<32x64xf32>", "tile<f64>" for rank 0.
std::string tile_text(const ir::Type& t);
// The cuda_tile name of an op recorded with element type `s` ("addf", "addi", "subf", "exp",
// "mmaf", "reduce", "load_view_tko", ...). For a cast, `s` is the source and `to` the target.
std::string cuda_tile_name(ir::OpKind k, ir::Scalar s, ir::Scalar to = ir::Scalar::Bool);

}  // namespace kiln::tile
