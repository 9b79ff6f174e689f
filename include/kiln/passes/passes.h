// The IR passes and the pipeline that runs them. Each pass is a free function in its own file
// under src/passes/, returns whether it changed the kernel, and says in its file why it exists.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/kernel.h"

namespace kiln::passes {

// Mutable locals (var.decl/load/store) become SSA values: a Var assigned in a loop is carried by
// it (a loop argument and result), one assigned in an if is a result of the if. A Var read where
// it may be unassigned stays in memory.
bool promote_vars(ir::Kernel& k);
// The tile layer's ops become the ops above (docs/decisions/019-tile-layer.md): each register tile
// is spread over the cube's units by a layout, loads and stores of cells become masked vector
// accesses with the padding value, reductions plane shuffles and shared memory, block ids cube
// positions. Needs facts.cube_dim = [tile_units(k), 1, 1]; a kernel without tile ops is unchanged.
bool lower_tiles(ir::Kernel& k);
// The plane split of each tile product (planes = [pm, pn] on tile.mma, a_fragments where a is
// read from registers), chosen from what the program does with the product's result: whole rows a
// plane where it is reduced along rows or feeds another product's a, else the square split.
// Needs facts.cube_dim as lower_tiles does; lower_tiles lowers what it wrote.
bool place_products(ir::Kernel& k);
// Loops with prefetch_stages copy their tile loads into rings in shared memory, iterations ahead,
// and a product's factor from before a loop is written into shared memory once: both as tile ops
// (shared.alloc, tile.copy_cell, tile.slot, tile.read, tile.stage, the target's commit and wait)
// that lower_tiles lowers. Needs facts.cube_dim and the products placed (place_products).
bool pipeline_loops(ir::Kernel& k);
// Every register tile's layout written into its type (the lowering's own choices, found by
// lowering a copy), and a tile.convert_layout wherever an op needs an operand in another layout;
// lower_tiles then places each tile where its type says. Needs what lower_tiles needs.
bool assign_layouts(ir::Kernel& k);
// The units of one cube that lower_tiles spreads a tile kernel's tiles over, for `target` (the
// launch's device; they are part of what it compiles): chosen from its largest tile, a power of
// two from 32 to 256. Every target takes the same count today, so that the CPU runs the very
// layouts a GPU does; a target whose products want other cubes (Hopper's warp groups) will differ.
uint32_t tile_units(const ir::Kernel& k, const ir::Target& target);
// Loops marked {vectorize = W} run W iterations at a time on vector<W x T> values, with wide loads
// and stores, then the iterations that remain as they were: loops of step 1 over an unsigned
// index, carrying nothing, whose straight-line body of scalars reads and writes global buffers at
// the induction value (plus a loop-invariant offset) and no iteration sees another's writes. In
// checked mode the vector loop runs behind one test that its range is in bounds, else the loop
// runs as it was. Other loops stay; KILN_LOG=compile says why (docs/decisions/027).
bool vectorize(ir::Kernel& k);
// Why vectorize leaves `loop`, a for of `k`, as it is: empty when it vectorises it (or when the
// loop has no vectorize attribute).
std::string vectorize_refusal(const ir::Kernel& k, const ir::Op& loop);
// Checked mode (seed 02 done right): every global buffer access flagged `checked` gets
// `index < len` added to its mask, so an index at or past len() reads zero and writes nothing.
// In unchecked mode the flags are dropped and accesses stay raw. A loop marked at_least_once gets
// a check.trips of its bounds before it in checked mode (a launch where it would run zero times
// fails with loop.zero_trips) and loses the mark, so that it keeps its first test; in unchecked
// mode it keeps the mark, and the promise is the caller's.
bool checked_io(ir::Kernel& k);
// Constant folding and algebraic identities that need no knowledge of values (x + 0, x * 1, a
// cast to the same type, a select or if on a constant).
bool fold(ir::Kernel& k);
// Common subexpression elimination of pure ops, respecting region scoping.
bool cse(ir::Kernel& k);
// Dead code elimination: pure ops whose results are unused, vars never read, empty ifs.
bool dce(ir::Kernel& k);

struct Pass {
  std::string_view name;
  bool (*run)(ir::Kernel&);
};

// The default pipeline, in order; one flat list.
const std::vector<Pass>& default_pipeline();

struct PipelineOptions {
  // What the kernel is compiled for: recorded in the kernel's facts before the first pass, where
  // passes read it. Target::Kind::Any (the default) leaves the facts as they are.
  ir::Target target;
  // Verify after every pass (always in debug builds and tests; off in release by default).
  bool verify_each = false;
  // Called with "traced" before the first pass and with each pass's name after it runs.
  std::function<void(std::string_view stage, const ir::Kernel&)> dump;
  // Stop after the pass of this name ("traced" runs none); empty runs them all.
  std::string_view stop_after;
};

// Runs the default pipeline for options.target; throws Error{ir.verify} when a pass produces invalid IR and
// Error{passes.unknown_stage} for a stop_after that names no pass.
void run_pipeline(ir::Kernel& k, const PipelineOptions& options = {});

}  // namespace kiln::passes
