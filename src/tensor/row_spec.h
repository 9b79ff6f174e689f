// What makes one row kernel (softmax, log_softmax, layer_norm) differ from another: the op, the
// element type, the rank, weight and bias, the cube and how a cube takes its rows. Shared by the
// row ops (rows.cpp) and the tiled kernel for strided rows (rows_tiled.cpp).
#pragma once

#include <cstdint>
#include <string>

#include "common/key.h"
#include "kiln/ir/kernel.h"
#include "kiln/tensor/tensor.h"

namespace kiln::tensor {

enum class RowOp { Softmax, LogSoftmax, LayerNorm };

inline const char* name_of(RowOp op) {
  return op == RowOp::Softmax ? "softmax" : op == RowOp::LogSoftmax ? "log_softmax" : "layer_norm";
}

// The running statistics a row op keeps: softmax's (maximum, sum of exp), layer_norm's Welford
// (count, mean, squared deviations). RowStats (row_stats.h) keeps them; the split kernel's
// partials hold this many a row.
inline int statistics_of(RowOp op) { return op == RowOp::LayerNorm ? 3 : 2; }

struct RowSpec {
  RowOp op;
  DType dtype;
  int outer_rank;  // dims that pick the row (the row itself is the last dim)
  bool weight, bias;
  uint32_t units = 256;  // of the cube
  int resident = 0;      // elements a unit holds (0: streaming)
  // Tiled (rows_tiled.cpp): a cube takes `tile` neighbouring rows along the innermost outer dim,
  // which steps by one element in memory; 0: a cube takes one row. `transpose`: the output's row
  // is contiguous, written through shared memory along the row.
  int tile = 0;
  bool transpose = false;
  // Split (rows_split.cpp): cubes take chunks of a tile of 32 rows and publish partial statistics
  // that later cubes combine; with `tile` unused and `transpose` as above.
  bool split = false;
  int depth = 0;  // split: loads a unit has in flight; held: elements a unit keeps
  // Held (with split): each cube keeps its chunk in registers and waits for its group's other
  // chunks' statistics, so the row is read once without L2's help (decision 030).
  bool held = false;
  // Held softmax of f32 past the registers: the shared half lands by copy.async, in flight
  // together with the register half's loads (decision 030).
  bool async = false;

  // What makes two specs the same kernel (built on every call: it fits a key's inline bytes).
  common::Key key() const {
    common::Key k;
    k("kernel", std::string_view("row"))("op", op)("dtype", dtype)("outer_rank", outer_rank)("weight", weight)(
        "bias", bias)("units", units)("resident", resident)("tile", tile)("transpose", transpose)("split", split)(
        "depth", depth)("held", held)("async", async);
    return k;
  }
};

// The tiled kernel of `s` (s.tile > 0): the parameters of every row kernel (in, weight, bias, out,
// cols, eps), a cube per `tile` rows of the innermost outer dim (which the launch must give unit
// stride in `in`), the cube count being the other outer dims' product times ceil(len / tile).
ir::Kernel record_tiled_rows(const RowSpec& s);

// The split kernel of `s` (s.split): the row kernel's parameters, then `chunk` (u32: a chunk's
// elements of a row), `chunks` (u32: chunks a row), `lag` (u32: groups of stats items before a
// group's output items), `work` (u32[1 + groups], zero at launch) and `partials`
// (acc[groups * (chunks + 1) * 32 * statistics]: each chunk's, then each row's); 2 * groups *
// chunks cubes, a group being 32 neighbouring rows of the innermost outer dim (unit stride in
// `in`) of one pick of the others. Held (s.held): chunk = s.depth * s.units / 32, groups * chunks
// cubes, `lag` unused, partials acc[groups * chunks * 32 * statistics]; a launch must have
// chunks of no more than the device runs cubes at once (decision 030).
ir::Kernel record_split_rows(const RowSpec& s);

}  // namespace kiln::tensor
