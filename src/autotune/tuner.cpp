// autotune::run: look up the key (this process, then the device's results file), else time every
// candidate and keep the fastest.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>

#include "autotune/store.h"
#include "common/log.h"
#include "kiln/autotune.h"
#include "kiln/error.h"

namespace kiln::autotune {

namespace {

// A candidate that takes this many times the best so far after its warm-up is not timed further.
constexpr double kHopeless = 8.0;
// Timed runs per sample: enough for a sample to last about this long (a launch is microseconds).
constexpr double kSampleSeconds = 1e-3;
constexpr int kMaxRunsPerSample = 50;

struct State {
  std::recursive_mutex
      m;  // held while a key is looked up or tuned: one tuning at a time (a candidate may itself call run)
  std::optional<Mode> mode;
  std::map<std::string, Result> results;    // device tag + key: this process's
  std::set<std::string> forced;             // keys Mode::force has tuned in this process
  std::map<std::string, std::string> pins;  // op: candidate name
  Stats stats;
};

State& state() {
  static State& s = *new State;  // lives to exit: a tensor op may run from a static's destructor
  return s;
}

// device_tag() for the client's device, made once per device: it is on every tuned call's path.
// Found by the device's state, which lives for the process (runtime/device.cpp, cuda_devices.cpp),
// so that a tuned call builds no text.
std::string cached_device_tag(const Client& client) {
  static std::mutex m;
  static auto* tags = new std::vector<std::pair<const void*, std::string>>();  // lives to exit, as the state does
  const Device device = client.device();  // held: info() refers into it (GCC 13 warns otherwise)
  const void* state = device.state().get();
  std::lock_guard lock(m);
  for (const auto& [s, tag] : *tags) {
    if (s == state) return tag;
  }
  tags->emplace_back(state, device_tag(client.runtime_name(), device.info()));
  return tags->back().second;
}

Mode mode_from_env() {
  const char* v = std::getenv("KILN_AUTOTUNE");
  if (!v || !*v) return Mode::on;
  std::string w(v);
  if (w == "on") return Mode::on;
  if (w == "off") return Mode::off;
  if (w == "force") return Mode::force;
  throw Error("autotune.bad_mode", "KILN_AUTOTUNE is '" + w + "'; it takes off, on or force");
}

void log(const std::string& message) {
  if (common::log_enabled(common::LogChannel::Autotune)) common::log(common::LogChannel::Autotune, message);
}

std::string duration(double s) {
  char b[32];
  if (!std::isfinite(s)) return "failed";
  if (s >= 1) std::snprintf(b, sizeof b, "%.2f s", s);
  else if (s >= 1e-3) std::snprintf(b, sizeof b, "%.3f ms", s * 1e3);
  else std::snprintf(b, sizeof b, "%.2f us", s * 1e6);
  return b;
}

// The candidate's median seconds per run: a warm-up (which compiles), one timed run, then (unless
// it is hopeless against `best`) up to five samples of enough runs to last about a millisecond.
double measure(const Client& c, const Candidate& cand, double best, std::string* note) {
  cand.run();
  double first = c.device_seconds(cand.run);
  if (first > kHopeless * best) {
    *note = "1 run, not timed further";
    return first;
  }
  int runs = std::clamp(int(std::ceil(kSampleSeconds / std::max(first, 1e-9))), 1, kMaxRunsPerSample);
  int samples = first > 0.1 ? 1 : first > 0.02 ? 3 : 5;
  std::vector<double> per_run;
  for (int s = 0; s < samples; ++s) {
    double t = c.device_seconds([&] {
      for (int r = 0; r < runs; ++r) cand.run();
    });
    per_run.push_back(t / runs);
  }
  std::sort(per_run.begin(), per_run.end());
  *note = "median of " + std::to_string(samples) + " x " + std::to_string(runs) + " runs";
  return per_run[per_run.size() / 2];
}

size_t index_of(std::span<const Candidate> candidates, const std::string& name) {
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i].name == name) return i;
  }
  return candidates.size();
}

// Times every candidate; the winner runs last, so that the output is its.
Result tune(const Client& c, const std::string& key, std::span<const Candidate> candidates, size_t fallback) {
  const bool tty = ::isatty(2) != 0;
  std::vector<double> secs(candidates.size(), INFINITY);
  std::optional<Error> fallback_error;  // when every candidate fails, the fallback's is thrown
  double best = INFINITY;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (tty) {
      std::fprintf(stderr, "\rkiln autotune: %s: candidate %zu of %zu (%s)\033[K", key.c_str(), i + 1,
                   candidates.size(), candidates[i].name.c_str());
      std::fflush(stderr);
    }
    std::string note;
    try {
      secs[i] = measure(c, candidates[i], best, &note);
      best = std::min(best, secs[i]);
      log(key + ": " + candidates[i].name + " " + duration(secs[i]) + " (" + note + ")");
    } catch (const Error& e) {
      log(key + ": " + candidates[i].name + " failed: " + e.what());
      if (i == fallback) fallback_error = e;
    }
  }
  size_t win = size_t(std::min_element(secs.begin(), secs.end()) - secs.begin());
  if (!std::isfinite(secs[win])) {
    if (tty) std::fprintf(stderr, "\r\033[K");
    throw *fallback_error;
  }
  candidates[win].run();
  Result r;
  for (const Candidate& cand : candidates) r.seconds.emplace_back(cand.name, secs[size_t(&cand - candidates.data())]);
  r.best = candidates[win].name;
  return r;
}

}  // namespace

Mode mode() {
  State& s = state();
  {
    std::lock_guard lock(s.m);
    if (s.mode) return *s.mode;
  }
  return mode_from_env();
}

void set_mode(std::optional<Mode> m) {
  std::lock_guard lock(state().m);
  state().mode = m;
}

int64_t bucket(int64_t n) {
  if (n <= 0) return 0;
  int64_t b = 1;
  while (b < n && b < (int64_t(1) << 62)) b <<= 1;
  return b;
}

void pin(const std::string& op, std::optional<std::string> candidate) {
  std::lock_guard lock(state().m);
  if (candidate) {
    state().pins[op] = *candidate;
  } else {
    state().pins.erase(op);
  }
}

Stats stats() {
  std::lock_guard lock(state().m);
  return state().stats;
}

void reset() {
  std::lock_guard lock(state().m);
  state().results.clear();
  state().forced.clear();
  state().stats = Stats{};
}

size_t run(const Client& client, const Key& key, std::span<const Candidate> candidates, size_t fallback) {
  if (candidates.empty()) throw Error("autotune.no_candidates", "autotune: " + key.text() + " has no candidate");
  if (fallback >= candidates.size()) {
    throw Error("autotune.no_candidates", "autotune: " + key.text() + ": fallback " + std::to_string(fallback) +
                                              " of " + std::to_string(candidates.size()) + " candidates");
  }
  State& s = state();
  std::optional<std::string> pinned;
  {
    std::lock_guard lock(s.m);
    if (auto it = s.pins.find(key.op); it != s.pins.end()) pinned = it->second;
  }
  if (pinned) {
    size_t i = index_of(candidates, *pinned);
    if (i == candidates.size()) {
      std::string names;
      for (const Candidate& c : candidates) names += (names.empty() ? "" : ", ") + c.name;
      throw Error("autotune.bad_pin", "autotune: " + key.op + " is pinned to '" + *pinned + "', which " + key.text() +
                                          " does not have; it has " + names);
    }
    candidates[i].run();
    return i;
  }
  const Mode m = mode();
  if (m == Mode::off || candidates.size() == 1) {
    {
      std::lock_guard lock(s.m);
      ++s.stats.untimed;
    }
    candidates[fallback].run();
    return fallback;
  }
  const std::string checksum = candidate_checksum(candidates);
  const std::string tag = cached_device_tag(client);
  const std::string text = key.text();
  const std::string slot = tag + "\n" + text;

  std::unique_lock lock(s.m);
  // This process's result, when the set is the same (force: only one this process tuned).
  if (auto it = s.results.find(slot);
      it != s.results.end() && it->second.checksum == checksum && (m != Mode::force || s.forced.count(slot))) {
    size_t i = index_of(candidates, it->second.best);
    if (i < candidates.size()) {
      ++s.stats.memory_hits;
      lock.unlock();
      candidates[i].run();
      return i;
    }
  }
  ResultFile file(tag);
  if (m == Mode::on) {
    std::string why;
    std::optional<Result> stored = file.find(text, &why);
    if (stored && stored->checksum != checksum) why = "another candidate set";
    size_t i = stored && stored->checksum == checksum ? index_of(candidates, stored->best) : candidates.size();
    if (i < candidates.size()) {
      log(text + ": " + stored->best + " from " + file.path());
      s.results[slot] = *stored;
      ++s.stats.disk_hits;
      lock.unlock();
      candidates[i].run();
      return i;
    }
    log(text + ": not in " + file.path() + " (" + why + ")");
  }
  auto t0 = std::chrono::steady_clock::now();
  Result r = tune(client, text, candidates, fallback);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.checksum = checksum;
  s.results[slot] = r;
  if (m == Mode::force) s.forced.insert(slot);
  ++s.stats.tunings;
  s.stats.tuning_seconds += took;
  const bool stored = file.put(text, r);
  log(text + ": " + (stored ? "stored in " : "could not write ") + file.path());
  double best = INFINITY;
  for (const auto& [n, t] : r.seconds) best = std::min(best, t);
  std::fprintf(stderr, "%skiln autotune: %s: %s, %s, best of %zu candidates (tuned in %s)\n",
               ::isatty(2) ? "\r\033[K" : "", text.c_str(), r.best.c_str(), duration(best).c_str(), candidates.size(),
               duration(took).c_str());
  return index_of(candidates, r.best);
}

}  // namespace kiln::autotune
