// The kernel cache: lock-free lookups, single-flight compiles.
#include "runtime/kernel_cache.h"

#include <chrono>
#include <cstdio>
#include <map>

#include "common/log.h"
#include "kiln/error.h"
#include "kiln/ir/text.h"
#include "kiln/passes/passes.h"
#include "kiln/runtime/client.h"

namespace kiln::runtime {

namespace {

// The device error site of a compiled kernel whose check.trips report through the error word:
// its message names the kernel, and reads the loop's number, its bounds and where it ran from the
// numbers the kernel wrote (backends/cuda/device/errors.cuh).
uint32_t register_checks(const ir::Kernel& k) {
  std::vector<ir::Scalar> types;  // each checked loop's bound type, by its number - 1
  ir::walk(k.body, [&](const ir::Op& op) {
    if (op.kind != ir::OpKind::CheckTrips) return;
    const size_t n = size_t(op.get<ir::AttrKey::Loop>());
    if (types.size() < n) types.resize(n, ir::Scalar::U32);
    types[n - 1] = k.type_of(op.operand(ir::ops::Bounds::lower_bound)).scalar;
  });
  const std::string name = k.name;
  return Client::register_device_error_site(
      {"loop.zero_trips", [name, types](const std::array<uint32_t, Client::kDeviceErrorValues>& v) {
         const bool is_signed = v[0] >= 1 && v[0] <= types.size() && ir::is_signed_int(types[v[0] - 1]);
         auto text = [&](uint32_t low, uint32_t high) {
           const uint64_t x = uint64_t(low) | uint64_t(high) << 32;
           return is_signed ? std::to_string(int64_t(x)) : std::to_string(x);
         };
         return "kernel '" + name + "' (checked): the at_least_once loop #" + std::to_string(v[0]) +
                " of the kernel starts with lo = " + text(v[1], v[2]) + " and hi = " + text(v[3], v[4]) + " in unit " +
                std::to_string(v[6]) + " of cube " + std::to_string(v[5]) +
                " (linear), which give it zero trips; at_least_once promises lo < hi (drop the promise where the range "
                "may be empty)";
       }});
}

}  // namespace

KernelCache::Table::Table(size_t capacity) : mask(capacity - 1), slots(new std::atomic<CacheEntry*>[capacity]) {
  for (size_t i = 0; i < capacity; ++i) slots[i].store(nullptr, std::memory_order_relaxed);
}

KernelCache::KernelCache() {
  tables_.push_back(std::make_unique<Table>(64));
  table_.store(tables_.back().get(), std::memory_order_release);
}

KernelCache::~KernelCache() = default;

CacheEntry* KernelCache::find(const KernelId& id) const {
  const Table* t = table_.load(std::memory_order_acquire);
  for (size_t i = id.hash & t->mask;; i = (i + 1) & t->mask) {
    CacheEntry* e = t->slots[i].load(std::memory_order_acquire);
    if (!e) return nullptr;
    if (e->id == id) return e;
  }
}

void KernelCache::insert_locked(CacheEntry* e) {
  Table* t = table_.load(std::memory_order_relaxed);
  // Keep the table at most half full; grow by publishing a new table with every entry.
  // `e` is not in entries_ yet: the rebuild places the others, the probe below places `e`.
  if ((entries_.size() + 1) * 2 > t->mask + 1) {
    auto bigger = std::make_unique<Table>((t->mask + 1) * 2);
    for (const auto& old : entries_) {
      for (size_t i = old->id.hash & bigger->mask;; i = (i + 1) & bigger->mask) {
        if (!bigger->slots[i].load(std::memory_order_relaxed)) {
          bigger->slots[i].store(old.get(), std::memory_order_relaxed);
          break;
        }
      }
    }
    t = bigger.get();
    tables_.push_back(std::move(bigger));
    table_.store(t, std::memory_order_release);
  }
  for (size_t i = e->id.hash & t->mask;; i = (i + 1) & t->mask) {
    if (!t->slots[i].load(std::memory_order_relaxed)) {
      t->slots[i].store(e, std::memory_order_release);
      return;
    }
  }
}

CacheEntry& KernelCache::get(const KernelId& id, const KernelRef& kernel, backend::Backend& backend) {
  if (CacheEntry* e = find(id)) return *e;
  return compile(id, kernel, backend);
}

CacheEntry& KernelCache::compile(const KernelId& id, const KernelRef& kernel, backend::Backend& backend) {
  std::promise<CacheEntry*> promise;
  {
    std::unique_lock lock(m_);
    if (CacheEntry* e = find(id)) return *e;
    auto it = in_flight_.find(id);
    if (it != in_flight_.end()) {
      std::shared_future<CacheEntry*> f = it->second;
      lock.unlock();
      return *f.get();  // rethrows the compiling thread's error
    }
    in_flight_.emplace(id, promise.get_future().share());
  }
  // Publishes the entry (or only forgets the in-flight compile) in one critical section, so that a
  // table rebuilt by insert_locked sees each entry exactly once.
  auto finish = [&](std::unique_ptr<CacheEntry> entry) {
    std::lock_guard lock(m_);
    in_flight_.erase(id);
    if (!entry) return static_cast<CacheEntry*>(nullptr);
    CacheEntry* e = entry.get();
    insert_locked(e);
    entries_.push_back(std::move(entry));
    return e;
  };
  try {
    using clock = std::chrono::steady_clock;
    auto t0 = clock::now();
    ir::Kernel k = kernel.define(id);
    auto t1 = clock::now();
    std::string stem = std::string(id.name) + "-" + [&] {
      char buf[20];
      std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(id.hash));
      return std::string(buf);
    }();
    passes::PipelineOptions options;
    options.target = backend.target();
#ifndef NDEBUG
    options.verify_each = true;
#endif
    if (common::dump_dir()) {
      options.dump = [&](std::string_view stage, const ir::Kernel& kk) {
        if (stage == "traced" || stage == passes::default_pipeline().back().name) {
          common::dump_file(stem + (stage == "traced" ? ".traced.kir" : ".final.kir"), ir::print(kk));
        }
      };
    }
    passes::run_pipeline(k, options);
    auto t2 = clock::now();
    std::shared_ptr<backend::Executable> exe = backend.compile(k);
    auto t3 = clock::now();
    // The entry's id points into `kernel` (its name; a program), which the entry keeps.
    std::unique_ptr<CacheEntry> entry(new CacheEntry{id, kernel, {}, {}, {}});
    entry->name = std::string(id.name);
    entry->exe = std::move(exe);
    if (entry->exe->takes_error_word()) entry->error_site = register_checks(k);
    CacheEntry* e = entry.get();
    compilations_.fetch_add(1, std::memory_order_relaxed);
    if (common::log_enabled(common::LogChannel::Compile)) {
      auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
      char buf[160];
      std::snprintf(buf, sizeof buf, " as %s: trace %.3f ms, passes %.3f ms, %s compile %.3f ms",
                    std::string(e->exe->entry_name()).c_str(), ms(t0, t1), ms(t1, t2),
                    std::string(backend.runtime_name()).c_str(), ms(t2, t3));
      common::log(common::LogChannel::Compile, "compiled " + id.to_string() + buf);
    }
    finish(std::move(entry));
    promise.set_value(e);
    return *e;
  } catch (...) {
    finish(nullptr);
    promise.set_exception(std::current_exception());
    throw;
  }
}

std::vector<std::pair<KernelId, KernelRef>> KernelCache::kernels() const {
  std::lock_guard lock(m_);
  std::vector<std::pair<KernelId, KernelRef>> out;
  for (const auto& e : entries_) out.emplace_back(e->id, e->kernel);
  return out;
}

uint64_t KernelCache::launches() const {
  std::lock_guard lock(m_);
  uint64_t n = 0;
  for (const auto& e : entries_) n += e->launches.load(std::memory_order_relaxed);
  return n;
}

std::vector<std::pair<std::string, uint64_t>> KernelCache::launches_by_kernel() const {
  std::lock_guard lock(m_);
  std::map<std::string, uint64_t> by;
  for (const auto& e : entries_) by[e->name] += e->launches.load(std::memory_order_relaxed);
  return {by.begin(), by.end()};
}

}  // namespace kiln::runtime
