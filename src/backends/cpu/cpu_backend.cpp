// The CPU backend: host memory, plan compilation, and launches. A launch of a kernel that can fail
// midway (failures.cpp) first copies the buffers the kernel writes and puts them back when it
// fails, so a failed launch leaves every buffer as it was (decision 005).
#include "backends/cpu/cpu_backend.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <mutex>
#include <new>
#include <optional>
#include <thread>

#include "backends/cpu/exec.h"
#include "backends/cpu/thread_pool.h"
#include "kiln/error.h"

namespace kiln::cpu {

namespace {

constexpr size_t kAlign = 64;

struct AlignedBytes {
  unsigned char* p = nullptr;
  size_t n = 0;
  explicit AlignedBytes(size_t bytes) : n(bytes) {
    if (bytes) p = static_cast<unsigned char*>(::operator new(bytes, std::align_val_t(kAlign)));
  }
  ~AlignedBytes() {
    if (p) ::operator delete(p, std::align_val_t(kAlign));
  }
  AlignedBytes(const AlignedBytes&) = delete;
  AlignedBytes& operator=(const AlignedBytes&) = delete;
};

// Everything one cube needs while it runs; reused across cubes and launches.
struct CubeState {
  AlignedBytes regs, shared, masks;
  AsyncCopies copies;
  BarrierWatch barriers;
  WarpGroupProducts products;
  explicit CubeState(const Plan& p)
      : regs(p.register_bytes), shared(p.shared_bytes), masks(size_t(p.units) * (2 + 3 * p.frame_depth)) {
    for (const Plan::Constant& c : p.constants) std::memcpy(regs.p + c.slot, c.bytes.data(), c.bytes.size());
  }
};

// At most this many host threads run a launch (thread_count's limit).
constexpr unsigned kMaxThreads = 1024;

class CpuExecutable : public backend::Executable {
 public:
  explicit CpuExecutable(Plan p) : plan(std::move(p)) {}
  std::string_view entry_name() const override { return plan.kernel_name; }

  // Takes n cube states (making the ones missing) into out[0..n), before any cube runs: running
  // out of memory for them then fails the launch before anything is written.
  void take(unsigned n, CubeState** out) {
    unsigned have = 0;
    {
      std::lock_guard lock(m_);
      // Room for every state out now to come back: give() runs in a destructor and must not throw.
      free_.reserve(free_.size() + out_ + n);
      out_ += n;
      while (have < n && !free_.empty()) {
        out[have++] = free_.back().release();
        free_.pop_back();
      }
    }
    try {
      for (; have < n; ++have) out[have] = new CubeState(plan);
    } catch (...) {
      give(have, out);
      std::lock_guard lock(m_);
      out_ -= n - have;
      throw;
    }
  }
  void give(unsigned n, CubeState** states) {
    std::lock_guard lock(m_);
    for (unsigned i = 0; i < n; ++i) free_.emplace_back(states[i]);
    out_ -= n;
  }

  Plan plan;

 private:
  std::mutex m_;
  std::vector<std::unique_ptr<CubeState>> free_;
  size_t out_ = 0;  // states taken and not given back
};

void run_cube(const Plan& p, CubeState& s, const backend::ArgBinding* args, uint64_t index, const ir::Dim3& count,
              const std::atomic<uint64_t>* failed_cube) {
  const ir::Dim3 pos{uint32_t(index % count.x), uint32_t((index / count.x) % count.y),
                     uint32_t(index / (uint64_t(count.x) * count.y))};
  Exec e;
  e.failed_cube = failed_cube;
  e.cube_index = index;
  e.plan = &p;
  e.args = args;
  e.regs = s.regs.p;
  e.shared = s.shared.p;
  e.units = p.units;
  e.cur = s.masks.p;
  e.terminated = e.cur + p.units;
  e.frames = e.terminated + p.units;
  // Copies a cube left in flight (a kernel that never waits) die with it, as on a GPU.
  s.copies.pending.clear();
  s.copies.commits.assign(p.units, 0);
  e.copies = &s.copies;
  s.barriers.changes = 0;
  s.barriers.failed_at.assign(p.wait_loops, ~uint64_t(0));
  e.barriers = &s.barriers;
  // Products a cube left in flight die with it, as copies do.
  s.products.pending.clear();
  s.products.commits.assign(p.warp_groups, 0);
  s.products.fenced.assign(p.warp_groups, {});
  e.products = &s.products;
  e.cube_pos = pos;
  e.cube_count = count;
  e.cube_dim = p.facts.cube_dim;
  std::memset(e.cur, 1, p.units);
  std::memset(e.terminated, 0, p.units);
  e.all_active = true;
  // Shared and local arrays start with unspecified contents: fill them with 0xff bytes so that a
  // kernel reading before writing sees NaNs and huge integers rather than plausible zeros.
  for (auto [off, bytes] : p.shared_arrays) std::memset(e.shared + off, 0xff, bytes);
  for (auto [off, bytes] : p.local_arrays) std::memset(e.regs + off, 0xff, bytes);
  for (const Plan::ScalarParam& sp : p.scalar_params) {
    const ir::Type& t = p.params[sp.param].type;
    const size_t b = size_t(t.element_bytes());
    const uint32_t copies = sp.slot.uniform ? kRowLanes / t.width : p.units;
    unsigned char* d = e.regs + sp.slot.slot;
    for (uint32_t c = 0; c < copies; ++c) std::memcpy(d + c * b, args[sp.param].scalar.data(), b);
  }
  const Instr* code = p.code.data();
  uint32_t n = uint32_t(p.code.size());
  uint32_t pc = 0;
  while (pc < n) pc = code[pc].fn(e, code[pc], pc);
}

struct CpuEvent : backend::Event {
  std::chrono::steady_clock::time_point at = std::chrono::steady_clock::now();
};

class CpuBackend : public backend::Backend {
 public:
  explicit CpuBackend(const PlanOptions& options) : options_(options), pool_(thread_count() - 1) {
    info_.name = cpu_name();
    info_.target = ir::Target::cpu();
#if defined(__x86_64__)
    info_.architecture = "x86_64";
#elif defined(__aarch64__)
    info_.architecture = "aarch64";
#else
    info_.architecture = "unknown";
#endif
    info_.multiprocessors = int(pool_.size());
    info_.memory_bytes = host_memory();
    info_.max_cube_units = ir::Target::kMaxCubeUnits;
    info_.max_cube_dim = ir::Target::kMaxCubeDim;
    info_.max_shared_bytes = 1u << 20;
  }

  std::string_view runtime_name() const override { return "cpu"; }
  const DeviceInfo& info() const override { return info_; }
  ir::Target target() const override { return ir::Target::cpu(); }

  uint64_t allocate(size_t bytes) override {
    void* p = ::operator new(bytes, std::align_val_t(256), std::nothrow);
    return reinterpret_cast<uint64_t>(p);
  }
  void deallocate(uint64_t address) override {
    ::operator delete(reinterpret_cast<void*>(address), std::align_val_t(256));
  }

  std::unique_ptr<backend::Stream> create_stream() override { return std::make_unique<backend::Stream>(); }
  void copy_to_device(backend::Stream&, uint64_t dst, const void* src, size_t bytes) override {
    if (bytes) std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
  }
  void copy_to_host(backend::Stream&, void* dst, uint64_t src, size_t bytes) override {
    if (bytes) std::memcpy(dst, reinterpret_cast<const void*>(src), bytes);
  }
  void copy_on_device(backend::Stream&, uint64_t dst, uint64_t src, size_t bytes) override {
    if (bytes) std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes);
  }
  void fill(backend::Stream&, uint64_t dst, unsigned char byte, size_t bytes) override {
    if (bytes) std::memset(reinterpret_cast<void*>(dst), byte, bytes);
  }
  void sync(backend::Stream&) override {}
  // Launches and copies have run when they return: a mark is the host clock.
  std::unique_ptr<backend::Event> record_event(backend::Stream&) override { return std::make_unique<CpuEvent>(); }
  double seconds_between(backend::Event& start, backend::Event& end) override {
    return std::chrono::duration<double>(static_cast<CpuEvent&>(end).at - static_cast<CpuEvent&>(start).at).count();
  }

  std::shared_ptr<backend::Executable> compile(const ir::Kernel& k) override {
    return std::make_shared<CpuExecutable>(build_plan(k, options_));
  }

  void launch(backend::Executable& exe, const backend::LaunchDims& dims, std::span<const backend::ArgBinding> args,
              backend::Stream&) override {
    auto& x = static_cast<CpuExecutable&>(exe);
    const Plan& p = x.plan;
    if (args.size() != p.params.size()) {  // the runtime binds one argument per kernel parameter
      throw Error("launch.bad_argument", "kernel '" + p.kernel_name + "' has " + std::to_string(p.params.size()) +
                                             " parameters; " + std::to_string(args.size()) + " arguments were bound");
    }
    uint64_t cubes = dims.count.total();
    if (cubes == 0) return;

    unsigned parallelism = unsigned(std::min<uint64_t>(cubes, pool_.size()));
    CubeState* states[kMaxThreads];
    x.take(parallelism, states);
    struct GiveBack {
      CpuExecutable& x;
      unsigned n;
      CubeState** states;
      ~GiveBack() { x.give(n, states); }
    } give_back{x, parallelism, states};

    // Copy the buffers the kernel writes when it can stop midway (decision 005).
    std::vector<std::pair<size_t, std::vector<unsigned char>>> saved;
    for (uint32_t i : p.restore_params) {
      if (args[i].bytes == 0) continue;
      const auto* b = reinterpret_cast<const unsigned char*>(args[i].address);
      saved.emplace_back(i, std::vector<unsigned char>(b, b + args[i].bytes));
    }

    std::atomic<uint64_t> next{0};
    // The lowest failing cube, and its error: the launch's error whichever thread ran which cube.
    std::atomic<uint64_t> failed_cube{~uint64_t(0)};
    std::mutex error_mutex;
    std::exception_ptr error;
    const backend::ArgBinding* a = args.data();
    const ir::Dim3 count = dims.count;
    auto body = [&](unsigned worker) {
      CubeState& s = *states[worker];
      for (;;) {
        uint64_t c = next.fetch_add(1, std::memory_order_relaxed);
        if (c >= cubes || c > failed_cube.load(std::memory_order_relaxed)) break;
        try {
          run_cube(p, s, a, c, count, &failed_cube);
        } catch (const Stopped&) {
          break;  // an earlier cube failed, and its error is the launch's
        } catch (...) {
          // Cubes are claimed in order, and one before a failed cube runs on to its end (up to a
          // bound on its while loops, exec.h): the lowest failing cube is the same on every run.
          std::lock_guard lock(error_mutex);
          if (c < failed_cube.load(std::memory_order_relaxed)) {
            failed_cube = c;
            error = std::current_exception();
          }
        }
      }
    };
    pool_.run(parallelism, ThreadPool::body_of(body));
    if (error) {
      for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
        std::memcpy(reinterpret_cast<void*>(args[it->first].address), it->second.data(), it->second.size());
      }
      std::rethrow_exception(error);
    }
  }

 private:
  // KILN_CPU_THREADS, else one thread per hardware thread.
  static unsigned thread_count() {
    if (const char* v = std::getenv("KILN_CPU_THREADS")) {
      int n = std::atoi(v);
      if (n >= 1 && n <= int(kMaxThreads)) return unsigned(n);
    }
    return std::clamp(std::thread::hardware_concurrency(), 1u, kMaxThreads);
  }
  static std::string cpu_name() {
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line)) {
      if (line.rfind("model name", 0) == 0) {
        size_t colon = line.find(':');
        if (colon != std::string::npos) return line.substr(colon + 2);
      }
    }
    return "host CPU";
  }
  static uint64_t host_memory() {
    std::ifstream f("/proc/meminfo");
    std::string key;
    uint64_t kb = 0;
    while (f >> key >> kb) {
      if (key == "MemTotal:") return kb * 1024;
      f.ignore(256, '\n');
    }
    return 0;
  }

  PlanOptions options_;
  DeviceInfo info_;
  ThreadPool pool_;
};

}  // namespace

std::unique_ptr<backend::Backend> make_cpu_backend(const PlanOptions& options) {
  return std::make_unique<CpuBackend>(options);
}

}  // namespace kiln::cpu
