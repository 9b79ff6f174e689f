// MemoryManager: strategy choice, statistics, and the out-of-memory retry.
#include "runtime/memory/memory_manager.h"

#include "backend/backend.h"
#include "common/log.h"
#include "kiln/error.h"
#include "runtime/device_state.h"

namespace kiln::runtime {

MemoryManager::MemoryManager(std::shared_ptr<DeviceState> device, size_t small_page)
    : device_(std::move(device)),
      device_name_(device_->name),
      small_page_(small_page),
      source_{[this](size_t n) { return device_->backend->allocate(n); },
              [this](uint64_t a) { device_->backend->deallocate(a); }},
      small_(0, small_page),
      large_(1) {}

MemoryManager::~MemoryManager() {
  small_.release_unused(source_);
  large_.release_unused(source_);
}

static std::string mib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", double(bytes) / (1024.0 * 1024.0));
  return buf;
}

Slice MemoryManager::alloc(size_t bytes) {
  if (bytes > (size_t(1) << 62)) {  // also keeps the rounding below from wrapping
    throw Error("memory.out_of_memory", "could not allocate " + std::to_string(bytes) + " bytes on " + device_name_ +
                                            ": no device has that much memory (a negative size converted to size_t?)");
  }
  size_t size = (std::max<size_t>(bytes, 1) + kAlignment - 1) / kAlignment * kAlignment;
  std::lock_guard lock(m_);
  PoolStrategy& pool = size <= small_limit() ? static_cast<PoolStrategy&>(small_) : large_;
  bool reused = false;
  std::optional<Slice> s = pool.alloc(size, source_, reused);
  if (!s) {
    // Give cached pages back to the device, then try once more.
    uint64_t released = small_.release_unused(source_) + large_.release_unused(source_);
    if (common::log_enabled(common::LogChannel::Memory))
      common::log(common::LogChannel::Memory, "out of memory for " + std::to_string(bytes) + " bytes on " +
                                                  device_name_ + ": released " + mib(released) +
                                                  " of cached pages, retrying");
    s = pool.alloc(size, source_, reused);
  }
  if (!s) {
    throw Error("memory.out_of_memory",
                "could not allocate " + std::to_string(bytes) + " bytes (" + mib(bytes) + ") on " + device_name_ +
                    "; this client's pool holds " + mib(small_.reserved_bytes() + large_.reserved_bytes()) + " (" +
                    mib(stats_.in_use_bytes) + " in use) and the device has " +
                    mib(device_->backend->info().memory_bytes) + "; free handles you no longer need or allocate less");
  }
  ++stats_.allocations;
  stats_.reused += reused ? 1 : 0;
  stats_.in_use_bytes += s->size;
  if (common::log_enabled(common::LogChannel::Memory)) {
    common::log(common::LogChannel::Memory, "alloc " + std::to_string(bytes) + " bytes on " + device_name_ +
                                                (reused ? " (reused pool memory)" : " (new page)"));
  }
  return *s;
}

void MemoryManager::free(const Slice& s) {
  std::lock_guard lock(m_);
  (s.strategy == 0 ? static_cast<PoolStrategy&>(small_) : large_).free(s);
  stats_.in_use_bytes -= s.size;
  ++stats_.frees;
}

MemoryStats MemoryManager::stats() const {
  std::lock_guard lock(m_);
  MemoryStats out = stats_;
  out.reserved_bytes = small_.reserved_bytes() + large_.reserved_bytes();
  out.pages = small_.page_count() + large_.page_count();
  return out;
}

}  // namespace kiln::runtime
