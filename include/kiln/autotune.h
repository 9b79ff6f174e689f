// Autotune: an operation with several kernels that can do its work (its candidates) runs the one
// that was fastest for calls like this one on this device. The first such call times every
// candidate with device events (Client::device_seconds) and remembers the winner, in memory and in
// the cache folder (KILN_CACHE_DIR/autotune/<device>.json, with a checksum of the candidate set:
// a changed set tunes again). KILN_AUTOTUNE: `on` (the default), `off` (no timing: the operation's
// own default), `force` (tune each key again once in this process, replacing what is stored).
// Tuning prints one line on stderr; KILN_LOG=autotune tells every measurement and lookup.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "kiln/runtime/client.h"

namespace kiln::autotune {

enum class Mode : uint8_t { off, on, force };
// KILN_AUTOTUNE (on when unset; an unknown word is an Error{autotune.bad_mode}), unless
// set_mode() has chosen one.
Mode mode();
// Overrides KILN_AUTOTUNE in this process; nullopt goes back to it.
void set_mode(std::optional<Mode> m);

// One kernel (or sequence of kernels) that does the operation's work. `run` launches it on the
// tuned client and writes only the operation's own output, so that running it again is harmless.
// `name` is stable and says what varies (the persisted result names the winner by it).
struct Candidate {
  std::string name;
  std::function<void()> run;
};

// What a result is remembered under: the operation, and the facts of a call that decide which
// candidate wins (element types, sizes rounded by bucket(), layout, alignment). Calls with equal
// keys share one tuning.
struct Key {
  std::string op;
  std::string facts;
  std::string text() const { return op + " " + facts; }
};

// n rounded up to a power of two (0 stays 0): sizes that land in one bucket share a result.
int64_t bucket(int64_t n);

// Runs the operation once with the best candidate for `key` on the client's device and answers
// its index. The best is the remembered one (this process's, then the cache folder's when its
// candidate set is the same), else the fastest after timing each: a warm-up run (which compiles),
// then the median of up to five timed runs; a candidate that throws counts as infinitely slow. With
// Mode::off, or a single candidate, candidates[fallback] runs untimed. When every candidate fails,
// the fallback's error is thrown.
size_t run(const Client& client, const Key& key, std::span<const Candidate> candidates, size_t fallback = 0);

// Pins operation `op` (a Key's op) to the candidate named `candidate` in this process: run() then
// runs that one untimed, or throws Error{autotune.bad_pin} (naming those there are) when the call
// has none of that name. nullopt unpins. For tests that check each kernel, and for a user who
// suspects one.
void pin(const std::string& op, std::optional<std::string> candidate);

// What this process's calls of run() did, for tools and tests.
struct Stats {
  uint64_t tunings = 0;       // keys timed
  uint64_t memory_hits = 0;   // answered from this process's results
  uint64_t disk_hits = 0;     // answered from the cache folder
  uint64_t untimed = 0;       // Mode::off or a single candidate
  double tuning_seconds = 0;  // wall time spent tuning, compiles included
};
Stats stats();
// Forgets this process's results and statistics (the cache folder keeps its own): a test or a
// tool's way to see what a fresh process would.
void reset();

}  // namespace kiln::autotune
