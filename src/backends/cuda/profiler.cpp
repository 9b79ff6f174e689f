// The KILN_PROFILE launch timer.
#include "backends/cuda/profiler.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace kiln::cuda {

Profiler::Profiler() {
  const char* v = std::getenv("KILN_PROFILE");
  enabled_ = v && *v && std::strcmp(v, "0") != 0;
}

Profiler::~Profiler() {
  const Driver& d = Driver::get();
  for (CUevent e : free_) d.cuEventDestroy(e);
}

CUevent Profiler::take() {
  if (!free_.empty()) {
    CUevent e = free_.back();
    free_.pop_back();
    return e;
  }
  CUevent e = nullptr;
  Driver::get().cuEventCreate(&e, kEventDefault);
  return e;
}

Profiler::Mark Profiler::begin(CUstream s) {
  if (!enabled_) return {};
  std::lock_guard lock(m_);
  Mark m{take()};
  Driver::get().cuEventRecord(m.start, s);
  return m;
}

void Profiler::end(const Mark& m, CUstream s, const std::string& kernel) {
  if (!enabled_ || !m.start) return;
  std::lock_guard lock(m_);
  CUevent e = take();
  Driver::get().cuEventRecord(e, s);
  pending_.push_back(Pending{kernel, m.start, e});
  if (pending_.size() >= 1024 && pending_.size() % 256 == 0) harvest(false);
}

void Profiler::cancel(const Mark& m) {
  if (!enabled_ || !m.start) return;
  std::lock_guard lock(m_);
  free_.push_back(m.start);
}

void Profiler::harvest(bool wait) {
  const Driver& d = Driver::get();
  std::vector<Pending> left;
  for (Pending& p : pending_) {
    if (!wait && d.cuEventQuery(p.end) == kCudaErrorNotReady) {
      left.push_back(p);
      continue;
    }
    if (wait) d.cuEventSynchronize(p.end);
    float ms = 0;
    if (d.cuEventElapsedTime(&ms, p.start, p.end) == kCudaSuccess) {
      Totals& t = totals_[p.kernel];
      ++t.launches;
      t.total_ms += ms;
      t.min_ms = std::min(t.min_ms, double(ms));
      t.max_ms = std::max(t.max_ms, double(ms));
    }
    free_.push_back(p.start);
    free_.push_back(p.end);
  }
  pending_ = std::move(left);
}

void Profiler::report(const std::string& device) {
  if (!enabled_) return;
  std::lock_guard lock(m_);
  harvest(true);
  if (totals_.empty()) return;
  std::fprintf(stderr, "kiln profile (%s, device time per launch, from events)\n", device.c_str());
  std::fprintf(stderr, "%-44s %9s %12s %12s %12s %12s\n", "kernel", "launches", "total ms", "mean us", "min us",
               "max us");
  for (const auto& [name, t] : totals_) {
    std::fprintf(stderr, "%-44s %9llu %12.3f %12.2f %12.2f %12.2f\n", name.c_str(),
                 static_cast<unsigned long long>(t.launches), t.total_ms, 1000 * t.total_ms / double(t.launches),
                 1000 * t.min_ms, 1000 * t.max_ms);
  }
}

}  // namespace kiln::cuda
