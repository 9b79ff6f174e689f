// KILN_PROFILE=1: every launch is bracketed by two device events; the times are collected
// without blocking launches (completed events are harvested as they accumulate) and a table of
// per-kernel times is printed to stderr when the device goes away at exit.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "backends/cuda/driver.h"

namespace kiln::cuda {

class Profiler {
 public:
  Profiler();
  ~Profiler();
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;

  bool enabled() const { return enabled_; }

  struct Mark {
    CUevent start = nullptr;
  };
  Mark begin(CUstream s);
  void end(const Mark& m, CUstream s, const std::string& kernel);
  // The launch did not happen: the mark's event goes back to the free list.
  void cancel(const Mark& m);
  // Waits for the recorded launches and prints the table (nothing when disabled or empty).
  void report(const std::string& device);

 private:
  struct Pending {
    std::string kernel;
    CUevent start, end;
  };
  struct Totals {
    uint64_t launches = 0;
    double total_ms = 0, min_ms = 1e300, max_ms = 0;
  };
  CUevent take();
  void harvest(bool wait);

  bool enabled_ = false;
  std::mutex m_;
  std::vector<CUevent> free_;
  std::vector<Pending> pending_;
  std::map<std::string, Totals> totals_;
};

}  // namespace kiln::cuda
