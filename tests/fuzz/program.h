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

namespace kiln {
class Client;
class Handle;
}  // namespace kiln

namespace kiln::fuzz {

enum class Family { Simt, Tile, Tensor };
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
  // Per parameter: whether its length is a count per unit of the launch (an output each unit
  // stores its slots in), so that a launch of other units resizes it; atomics' targets are not.
  std::vector<bool> per_unit;
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
// select, vectors, ifs, for and while loops that carry values (with break and continue), loads
// and stores in range (checked and unchecked, wide ones too), shared memory behind barriers,
// plane ops and atomics.
Program generate_simt(uint64_t seed);

// Runs `p` by reading its IR: the oracle that shares no code with the backends or the passes.
Evaluation evaluate(const Program& p);
// The relative tolerance of an Approximate float (compare.cpp's table, docs/fuzz.md), which the
// evaluator's bounds on sums and products must fit.

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

struct RunOptions;
// What `p` is compared with: the evaluator's run, or (against "cpu") the CPU backend's outcome
// with the evaluator's trust. On a device other than the CPU an integer division by zero and an
// access out of range are unspecified (docs/ir.md): a program the evaluator sees end in one has
// no output the comparison may hold the device to, nor an error it must report.
// `evaluated` is evaluate(p), which the caller may have at hand.
Evaluation expected(const Program& p, const RunOptions& o, Evaluation evaluated);
void relax_for_device(Evaluation& want, const Outcome& got, const std::string& device);

// The reducer (reduce.cpp): whether `p` disagrees as `o` compares, and a smaller program that
// still does (the same parameters and inputs; fewer ops, one cube, maybe fewer units). `tries`:
// the candidates it ran.
bool disagrees(const Program& p, const RunOptions& o);
Program reduce(Program p, const RunOptions& o, int* tries = nullptr);

// A reproducer as text: the IR with the seed and launch in its first lines, which `replay` reads
// back (the inputs come from the seed's generator, the kernel from the text).
std::string reproducer(const Program& p, const std::string& note);
Program replay(const std::string& text);

// The op kinds a kernel holds, counted (for the coverage report).
std::map<ir::OpKind, uint64_t> op_counts(const ir::Kernel& k);

// How a run compares: the device under test, and what it is compared with ("evaluator": the
// family's own oracle, which shares no source with the backends or the passes; "cpu": the CPU
// backend, the evaluator still saying which outputs it vouches for).
struct RunOptions {
  std::string device = "cpu";
  std::string against = "evaluator";
  bool reduce = false;  // shrink a disagreement (where the family has a reducer)
};

// What one case of a family (one seed) came to, for the driver (fuzz_main.cpp) to count, report
// and write out.
struct CaseReport {
  enum class Status { Agree, Disagree, Refused };
  Status status = Status::Agree;
  bool trivial = false;                              // its outputs do not change when its inputs do
  bool both_failed = false;                          // it ended in the same error on both sides
  std::string difference;                            // the first disagreement, or why it was refused
  uint64_t exact = 0, approximate = 0, unknown = 0;  // output elements compared, by trust
  std::vector<std::string> coverage;                 // what it exercises (op kinds, by name), once each
  std::string text;                                  // the case as text (IR, a chain), for a disagreement
  std::string reduced;                               // a reproducer, where --reduce made one
};

// What the families' cases share (case_support.cpp): one client per device for the process (a
// client holds the device's context, pool and compiled kernels, which thousands of small runs
// should share); buffers uploaded as their parameters' types and read back into an Outcome.
const Client& client_for(const std::string& device);
std::vector<Handle> upload(const Client& client, const std::vector<ir::Param>& params,
                           const std::vector<std::vector<unsigned char>>& args);
void read_back(const Client& client, const std::vector<Handle>& handles,
               const std::vector<std::vector<unsigned char>>& args, Outcome& o);
// Whether the device refused a program the evaluator ran (a compile, trace, verifier, emit or
// record error, as opposed to one it ran into): r says so.
bool refused_by_device(const Outcome& want, const Outcome& got, CaseReport& r);
// Whether the two ended in different errors (or one in none): v says which.
bool errors_differ(const Outcome& want, const Outcome& got, Verdict& v);
// v's counts and, where it disagrees, its difference into r; whether it disagrees.
bool settle(CaseReport& r, const Verdict& v);

// One case of each family, from its seed.
CaseReport run_simt_case(uint64_t seed, const RunOptions& o);
CaseReport run_tile_case(uint64_t seed, const RunOptions& o);
CaseReport run_tensor_case(uint64_t seed, const RunOptions& o);

}  // namespace kiln::fuzz
