// The differential fuzzer's programs (docs/fuzz.md): a kernel in kiln's IR, the launch it runs
// with and the bytes of its inputs. A family's generator makes them from a seed; the evaluator
// (evaluator.cpp, which shares no source with src/backends or src/passes) and a kiln device
// (runner.cpp) each run one; compare.cpp says whether they agree.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kiln/ir/kernel.h"

namespace kiln::fuzz {

enum class Family { Simt };
const char* family_name(Family f);

struct Program {
  Family family = Family::Simt;
  uint64_t seed = 0;
  ir::Kernel kernel;
  uint32_t cubes = 1, units = 1;  // the launch: cubes of units, along x
  bool checked = true;            // the launch's mode
  // Per parameter, in order: its bytes before the launch (an output's are poison).
  std::vector<std::vector<unsigned char>> args;
  std::vector<bool> is_output;
};

// What a run left: every parameter's bytes after it, or the error it stopped with.
struct Outcome {
  std::vector<std::vector<unsigned char>> after;
  std::string error_kind, error_message;
};

// Per output element, how far the evaluator can vouch for it: exact (integers, casts and correctly
// rounded ops give bits), approximate (a float that a transcendental op fed: within the tolerance
// table's bound), unknown (a transcendental result decided a branch, a compare or a cast to an
// integer: not compared).
enum class Trust : uint8_t { Exact, Approximate, Unknown };

struct Evaluation {
  Outcome outcome;
  std::vector<std::vector<Trust>> trust;  // per parameter, per element (outputs only)
};

// The SIMT family (simt_generator.cpp): arithmetic of every element type, casts, compares and
// select, ifs and for loops that carry values, loads and stores in range.
Program generate_simt(uint64_t seed);

// Runs `p` by reading its IR: the oracle that shares no code with the backends or the passes.
Evaluation evaluate(const Program& p);
// The same program with other inputs (a seed's), to find programs whose outputs ignore them.
Program with_other_inputs(const Program& p, uint64_t seed);

// Runs `p` on kiln's device `device` ("cpu", "cuda:0") through the runtime, passes and all.
Outcome run_on_device(const Program& p, const std::string& device);

// Whether `got` agrees with the evaluation; a description of the first disagreement otherwise.
struct Verdict {
  bool agree = true;
  std::string first_difference;
  uint64_t exact = 0, approximate = 0, unknown = 0;  // output elements, by trust
};
Verdict compare(const Program& p, const Evaluation& want, const Outcome& got);

// The reducer (reduce.cpp): whether `p` disagrees on `device`, and a smaller program that still
// does (the same parameters and inputs; fewer ops, one cube, maybe fewer units). `tries`: the
// candidates it ran.
bool disagrees(const Program& p, const std::string& device);
Program reduce(Program p, const std::string& device, int* tries = nullptr);

// A reproducer as text: the IR with the seed and launch in its first lines, which `replay` reads
// back (the inputs come from the seed's generator, the kernel from the text).
std::string reproducer(const Program& p, const std::string& note);
Program replay(const std::string& text);

// The op kinds a kernel holds, counted (for the coverage report).
std::map<ir::OpKind, uint64_t> op_counts(const ir::Kernel& k);

}  // namespace kiln::fuzz
