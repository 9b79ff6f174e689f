// The tile family's programs (docs/fuzz.md): a tile kernel recorded through kiln's tile layer
// (tile::trace's untyped core), the grid it runs on and the bytes of its buffers. The evaluator
// (tile_evaluator.cpp) reads the recorded IR, tile ops and all, before any pass lowers it; a kiln
// device runs it through tile::Entry, lower_tiles and the backend.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/tile/program.h"
#include "program.h"

namespace kiln::fuzz {

struct TileCase {
  uint64_t seed = 0;
  std::string shape;  // which kind of program: "elementwise", "rows", "mma", "shared"
  std::shared_ptr<const tile::Program> program;
  tile::Grid grid{1, 1, 1};
  std::vector<std::vector<unsigned char>> args;  // per parameter, its bytes before the launch
  std::vector<bool> is_output;                   // Out and Shared parameters
  std::string refused;                           // the recorder's refusal, when it refused
  std::vector<std::string> tags;                 // what it exercises beyond its op kinds (coverage)
};

// Records the tile program of `seed`; inputs drawn from `input_seed` (the seed itself, or another
// to find programs whose outputs ignore their inputs).
TileCase generate_tile(uint64_t seed, uint64_t input_seed);

// Per output element what the evaluator vouches for: its bits, its trust, and for an Approximate
// one the absolute bound a device's value must be within.
struct TileEvaluation {
  Outcome outcome;
  std::vector<std::vector<Trust>> trust;
  std::vector<std::vector<long double>> bound;
};
TileEvaluation evaluate_tile(const TileCase& c);

// The case on a kiln device ("cpu", "cuda:0"): every parameter's bytes after one launch.
Outcome run_tile_on_device(const TileCase& c, const std::string& device);

}  // namespace kiln::fuzz
