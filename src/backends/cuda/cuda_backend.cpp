// The CUDA backend: device facts, memory, streams, transfers (large ones through pinned staging
// buffers), compilation (emit, disk cache, NVRTC, module load) and launches (arguments packed by
// the emitter's ABI into one parameter buffer).
#include "backends/cuda/cuda_backend.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <mutex>

#include "backends/cuda/disk_cache.h"
#include "backends/cuda/driver.h"
#include "backends/cuda/emit.h"
#include "backends/cuda/nvrtc.h"
#include "backends/cuda/profiler.h"
#include "common/log.h"
#include "kiln/error.h"
#include "kiln/ir/text.h"

namespace kiln::cuda {

namespace {

constexpr size_t kStagingBytes = size_t(16) << 20;    // each of the two pinned staging buffers
constexpr size_t kDirectCopyBytes = size_t(1) << 20;  // smaller transfers go straight through

class CudaStream : public backend::Stream {
 public:
  explicit CudaStream(CUstream s) : s(s) {}
  ~CudaStream() override {
    const Driver& d = Driver::get();
    d.cuStreamSynchronize(s);
    d.cuStreamDestroy(s);
  }
  CUstream s;
  // The last launches since the stream last synchronised, for the report of a kernel that failed:
  // entry names the backend keeps for its lifetime (CudaBackend::names_). Copies of a client share
  // the stream and may launch from several threads, hence atomics; the report is a best effort.
  static constexpr size_t kRecent = 4;
  std::array<std::atomic<const std::string*>, kRecent> recent{};
  std::atomic<uint64_t> launched{0};  // launches since the last synchronisation
};

CUstream stream_of(backend::Stream& s) { return static_cast<CudaStream&>(s).s; }

class CudaEvent : public backend::Event {
 public:
  ~CudaEvent() override {
    if (e) Driver::get().cuEventDestroy(e);
  }
  CUevent e = nullptr;
};

// Results after which the context is unusable: a kernel faulted, and every later call returns the
// same error until the process ends (cuda.h says so of each).
bool context_lost(CUresult r) {
  switch (r) {
    case 214:  // ECC_UNCORRECTABLE
    case 700:  // ILLEGAL_ADDRESS
    case 702:  // LAUNCH_TIMEOUT
    case 710:  // ASSERT
    case 714:  // HARDWARE_STACK_ERROR
    case 715:  // ILLEGAL_INSTRUCTION
    case 716:  // MISALIGNED_ADDRESS
    case 717:  // INVALID_ADDRESS_SPACE
    case 718:  // INVALID_PC
    case 719:  // LAUNCH_FAILED
      return true;
    default: return false;
  }
}

// One argument of the entry, packed at `offset` of the parameter buffer.
struct Slot {
  AbiArg arg;
  uint32_t offset;
};

class CudaExecutable : public backend::Executable {
 public:
  std::string_view entry_name() const override { return entry; }
  bool takes_error_word() const override { return error_word; }
  std::string entry;
  bool error_word = false;  // EmitResult::error_word
  std::string kernel_name;
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  uint32_t dynamic_shared = 0;
  std::vector<Slot> slots;
  uint32_t param_bytes = 0;
  const std::string* report_name = nullptr;  // the entry name, kept by the backend for reports
  ~CudaExecutable() override {
    if (module) Driver::get().cuModuleUnload(module);
  }
};

std::string architecture(int major, int minor) {
  std::string sm = "sm_" + std::to_string(major) + std::to_string(minor);
  // Hopper and Blackwell datacenter parts: the arch-specific targets unlock wgmma and TMA.
  if ((major == 9 && minor == 0) || (major == 10 && minor == 0)) sm += "a";
  return sm;
}

class CudaBackend : public backend::Backend {
 public:
  explicit CudaBackend(int index) : d_(Driver::get()), device_name_("cuda:" + std::to_string(index)) {
    if (!d_.loaded)
      throw Error("device.unavailable", "cuda:" + std::to_string(index) + " is unavailable: " + d_.unavailable);
    int count = 0;
    check(d_.cuDeviceGetCount(&count), "cuDeviceGetCount", "device.unavailable");
    if (index < 0 || index >= count) {
      throw Error("device.unavailable", "cuda:" + std::to_string(index) + " does not exist: the driver reports " +
                                            std::to_string(count) + " GPU" + (count == 1 ? "" : "s"));
    }
    check(d_.cuDeviceGet(&dev_, index), "cuDeviceGet", "device.unavailable");
    check(d_.cuDevicePrimaryCtxRetain(&ctx_, dev_), "cuDevicePrimaryCtxRetain", "device.unavailable");
    current();
    char name[256] = {};
    d_.cuDeviceGetName(name, sizeof name - 1, dev_);
    info_.name = name;
    int major = attr(kComputeCapabilityMajor), minor = attr(kComputeCapabilityMinor);
    arch_ = architecture(major, minor);
    info_.architecture = arch_;
    target_ = ir::Target::cuda(major * 10 + minor, arch_.back() == 'a');
    info_.target = target_;
    size_t total = 0;
    d_.cuDeviceTotalMem(&total, dev_);
    info_.memory_bytes = total;
    info_.multiprocessors = attr(kMultiprocessorCount);
    info_.max_cube_units = uint32_t(attr(kMaxThreadsPerBlock));
    info_.max_cube_dim = {uint32_t(attr(kMaxBlockDimX)), uint32_t(attr(kMaxBlockDimY)), uint32_t(attr(kMaxBlockDimZ))};
    info_.max_cube_count = {uint32_t(attr(kMaxGridDimX)), uint32_t(attr(kMaxGridDimY)), uint32_t(attr(kMaxGridDimZ))};
    info_.max_shared_bytes = uint32_t(std::max(attr(kMaxSharedMemoryPerBlockOptin), attr(kMaxSharedMemoryPerBlock)));
    info_.plane_dim = uint32_t(attr(kWarpSize));
    // NVRTC is loaded by the first compile that misses the disk cache, on the thread that needs
    // it, never in the background: a library whose initialisers run on another thread while the
    // process exits is destroyed half-built (decision 010).
  }

  ~CudaBackend() override {
    if (d_.cuCtxSetCurrent(ctx_) != kCudaSuccess) return;  // at exit the driver may be gone: leak, do not throw
    profiler_.report(device_name_);
    for (auto& s : staging_) {
      if (s.host) d_.cuMemFreeHost(s.host);
      if (s.done) d_.cuEventDestroy(s.done);
    }
  }

  std::string_view runtime_name() const override { return "cuda"; }
  const DeviceInfo& info() const override { return info_; }
  ir::Target target() const override { return target_; }

  uint64_t allocate(size_t bytes) override {
    usable();
    current();
    CUdeviceptr p = 0;
    CUresult r = d_.cuMemAlloc(&p, bytes);
    if (r == kCudaErrorOutOfMemory) return 0;
    check(r, "cuMemAlloc", "memory.out_of_memory");
    return p;
  }
  // Called from destructors (the last handle to pooled memory, at exit too): never throws. On a lost
  // or shut-down context the memory goes with the process.
  void deallocate(uint64_t address) override {
    if (lost_.load(std::memory_order_relaxed)) return;
    CUcontext now = nullptr;
    if ((d_.cuCtxGetCurrent(&now) != kCudaSuccess || now != ctx_) && d_.cuCtxSetCurrent(ctx_) != kCudaSuccess) return;
    d_.cuMemFree(address);
  }

  std::unique_ptr<backend::Stream> create_stream() override {
    usable();
    current();
    CUstream s = nullptr;
    check(d_.cuStreamCreate(&s, kStreamNonBlocking), "cuStreamCreate");
    return std::make_unique<CudaStream>(s);
  }

  void copy_to_device(backend::Stream& st, uint64_t dst, const void* src, size_t bytes) override {
    usable();
    if (!bytes) return;
    current();
    CUstream s = stream_of(st);
    if (bytes <= kDirectCopyBytes) {
      // From pageable memory the driver copies through its own buffer before returning.
      check(d_.cuMemcpyHtoDAsync(dst, src, bytes, s), "cuMemcpyHtoDAsync", "cuda.driver", &st);
      return;
    }
    std::lock_guard lock(staging_mutex_);
    ensure_staging();
    auto* from = static_cast<const unsigned char*>(src);
    for (size_t off = 0, i = 0; off < bytes; off += kStagingBytes, ++i) {
      Staging& b = staging_[i % 2];
      size_t n = std::min(kStagingBytes, bytes - off);
      check(d_.cuEventSynchronize(b.done), "cuEventSynchronize", "cuda.driver", &st);  // the buffer's last copy is done
      std::memcpy(b.host, from + off, n);
      check(d_.cuMemcpyHtoDAsync(dst + off, b.host, n, s), "cuMemcpyHtoDAsync", "cuda.driver", &st);
      check(d_.cuEventRecord(b.done, s), "cuEventRecord", "cuda.driver", &st);
    }
  }

  void copy_to_host(backend::Stream& st, void* dst, uint64_t src, size_t bytes) override {
    usable();
    if (!bytes) return;
    current();
    CUstream s = stream_of(st);
    if (bytes <= kDirectCopyBytes) {
      check(d_.cuMemcpyDtoHAsync(dst, src, bytes, s), "cuMemcpyDtoHAsync", "cuda.driver", &st);
      return;
    }
    std::lock_guard lock(staging_mutex_);
    ensure_staging();
    auto* to = static_cast<unsigned char*>(dst);
    size_t chunks = (bytes + kStagingBytes - 1) / kStagingBytes;
    auto issue = [&](size_t i) {
      Staging& b = staging_[i % 2];
      size_t off = i * kStagingBytes, n = std::min(kStagingBytes, bytes - off);
      // The buffer may still feed an upload queued on another client's stream.
      check(d_.cuEventSynchronize(b.done), "cuEventSynchronize", "cuda.driver", &st);
      check(d_.cuMemcpyDtoHAsync(b.host, src + off, n, s), "cuMemcpyDtoHAsync", "cuda.driver", &st);
      check(d_.cuEventRecord(b.done, s), "cuEventRecord", "cuda.driver", &st);
    };
    // Two chunks in flight: copy chunk i out of its buffer while chunk i + 1 crosses the bus.
    issue(0);
    for (size_t i = 0; i < chunks; ++i) {
      if (i + 1 < chunks) issue(i + 1);
      Staging& b = staging_[i % 2];
      check(d_.cuEventSynchronize(b.done), "cuEventSynchronize", "cuda.driver", &st);
      size_t off = i * kStagingBytes, n = std::min(kStagingBytes, bytes - off);
      std::memcpy(to + off, b.host, n);
    }
  }

  void copy_on_device(backend::Stream& st, uint64_t dst, uint64_t src, size_t bytes) override {
    usable();
    if (!bytes) return;
    current();
    check(d_.cuMemcpyDtoDAsync(dst, src, bytes, stream_of(st)), "cuMemcpyDtoDAsync", "cuda.driver", &st);
  }

  void fill(backend::Stream& st, uint64_t dst, unsigned char byte, size_t bytes) override {
    usable();
    if (!bytes) return;
    current();
    check(d_.cuMemsetD8Async(dst, byte, bytes, stream_of(st)), "cuMemsetD8Async", "cuda.driver", &st);
  }

  void sync(backend::Stream& st) override {
    usable();
    current();
    check(d_.cuStreamSynchronize(stream_of(st)), "cuStreamSynchronize", "cuda.kernel_failed", &st);
    auto& cs = static_cast<CudaStream&>(st);
    for (auto& e : cs.recent) e.store(nullptr, std::memory_order_relaxed);
    cs.launched.store(0, std::memory_order_relaxed);
  }

  std::unique_ptr<backend::Event> record_event(backend::Stream& st) override {
    usable();
    current();
    auto ev = std::make_unique<CudaEvent>();
    check(d_.cuEventCreate(&ev->e, kEventDefault), "cuEventCreate", "cuda.driver", &st);
    check(d_.cuEventRecord(ev->e, stream_of(st)), "cuEventRecord", "cuda.driver", &st);
    return ev;
  }
  double seconds_between(backend::Event& start, backend::Event& end) override {
    usable();
    current();
    CUevent a = static_cast<CudaEvent&>(start).e, b = static_cast<CudaEvent&>(end).e;
    check(d_.cuEventSynchronize(b), "cuEventSynchronize", "cuda.kernel_failed");
    float ms = 0;
    check(d_.cuEventElapsedTime(&ms, a, b), "cuEventElapsedTime", "cuda.driver");
    return double(ms) / 1e3;
  }

  std::shared_ptr<backend::Executable> compile(const ir::Kernel& k) override {
    usable();
    using clock = std::chrono::steady_clock;
    auto ms = [](clock::time_point a, clock::time_point b) {
      return std::chrono::duration<double, std::milli>(b - a).count();
    };
    auto t_start = clock::now();
    EmitResult e = emit_cuda(k);
    auto t_emitted = clock::now();
    if (e.hopper) require_hopper(k.name);
    if (e.dynamic_shared_bytes > info_.max_shared_bytes) {
      throw Error("launch.bad_dims", "kernel '" + k.name + "' needs " + std::to_string(e.dynamic_shared_bytes) +
                                         " bytes of shared memory per cube; " + device_name_ + " allows " +
                                         std::to_string(info_.max_shared_bytes));
    }
    std::vector<std::string> options = default_compile_options(arch_);
    options.insert(options.end(), e.options.begin(), e.options.end());
    CacheKey key;
    key.source = e.source;
    for (const std::string& o : options) key.options += o + " ";
    key.compiler = compiler_identity();
    key.architecture = arch_;
    common::dump_file(e.entry + ".cu", e.source);
    bool logging = common::log_enabled(common::LogChannel::Compile);
    std::string why;
    std::optional<std::vector<char>> cubin = disk_.load(key, &why);
    auto t_looked = clock::now();
    double nvrtc_ms = 0, store_ms = 0;
    bool fresh = false;
    if (cubin) {
      if (logging) common::log(common::LogChannel::Compile, e.entry + ": disk cache hit (" + disk_.dir() + ")");
    } else {
      auto t0 = clock::now();
      CompileResult c = cuda::compile(e.source, e.entry, options);
      nvrtc_ms = ms(t0, clock::now());
      fresh = true;
      if (logging) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.2f ms", nvrtc_ms);
        common::log(common::LogChannel::Compile,
                    e.entry + ": disk cache " + why + "; NVRTC compiled for " + arch_ + " in " + buf + "\n" + e.source);
      }
      cubin = std::move(c.cubin);
    }
    current();
    auto exe = std::make_shared<CudaExecutable>();
    exe->entry = e.entry;
    exe->kernel_name = k.name;
    {
      std::lock_guard lock(names_mutex_);
      exe->report_name = &names_.emplace_back(e.entry);
    }
    check(d_.cuModuleLoadData(&exe->module, cubin->data()), "cuModuleLoadData", "compile.load");
    check(d_.cuModuleGetFunction(&exe->function, exe->module, e.entry.c_str()), "cuModuleGetFunction", "compile.load");
    if (fresh) {  // stored only once the driver has accepted it
      auto t_store = clock::now();
      disk_.store(key, *cubin);
      store_ms = ms(t_store, clock::now());
    }
    exe->dynamic_shared = e.dynamic_shared_bytes;
    exe->error_word = e.error_word;
    if (logging) {
      char buf[200];
      std::snprintf(buf, sizeof buf,
                    ": emit %.3f ms, disk lookup %.3f ms, NVRTC %.3f ms, disk store %.3f ms, module load %.3f ms",
                    ms(t_start, t_emitted), ms(t_emitted, t_looked), nvrtc_ms, store_ms,
                    ms(t_looked, clock::now()) - nvrtc_ms - store_ms);
      common::log(common::LogChannel::Compile, e.entry + buf);
    }
    if (e.dynamic_shared_bytes > ir::Target::kCudaStaticShared) {
      check(d_.cuFuncSetAttribute(exe->function, kFuncAttributeMaxDynamicSharedSizeBytes, int(e.dynamic_shared_bytes)),
            "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", "launch.bad_dims");
    }
    uint32_t offset = 0;
    for (const AbiArg& a : e.args) {
      offset = (offset + a.align - 1) / a.align * a.align;
      exe->slots.push_back(Slot{a, offset});
      offset += a.bytes;
    }
    exe->param_bytes = offset;
    if (offset > kMaxParamBytes) {
      throw Error("compile.unsupported", "kernel '" + k.name + "' has " + std::to_string(offset) +
                                             " bytes of parameters; the launcher packs at most " +
                                             std::to_string(kMaxParamBytes));
    }
    return exe;
  }

  void launch(backend::Executable& x, const backend::LaunchDims& dims, std::span<const backend::ArgBinding> args,
              backend::Stream& st) override {
    usable();
    auto& exe = static_cast<CudaExecutable&>(x);
    alignas(16) std::array<unsigned char, kMaxParamBytes> params;
    for (const Slot& s : exe.slots) {
      const backend::ArgBinding& b = args[s.arg.param];
      unsigned char* at = params.data() + s.offset;
      switch (s.arg.role) {
        case AbiArg::Role::Pointer: std::memcpy(at, &b.address, 8); break;
        case AbiArg::Role::Len: std::memcpy(at, &b.len, 4); break;
        case AbiArg::Role::Shape: std::memcpy(at, &b.shape[s.arg.dim], 4); break;
        case AbiArg::Role::Stride: std::memcpy(at, &b.stride[s.arg.dim], 4); break;
        case AbiArg::Role::Value: std::memcpy(at, b.scalar.data(), std::min<size_t>(s.arg.bytes, 8)); break;
      }
    }
    size_t size = exe.param_bytes;
    void* extra[] = {reinterpret_cast<void*>(1), params.data(),  // CU_LAUNCH_PARAM_BUFFER_POINTER
                     reinterpret_cast<void*>(2), &size,          // CU_LAUNCH_PARAM_BUFFER_SIZE
                     nullptr};                                   // CU_LAUNCH_PARAM_END
    current();
    CUstream s = stream_of(st);
    Profiler::Mark mark = profiler_.begin(s);
    CUresult r = d_.cuLaunchKernel(exe.function, dims.count.x, dims.count.y, dims.count.z, dims.dim.x, dims.dim.y,
                                   dims.dim.z, exe.dynamic_shared, s, nullptr, extra);
    if (r != kCudaSuccess) {
      profiler_.cancel(mark);
      // A kernel launched earlier may have lost the context; this launch is where it shows.
      if (context_lost(r)) lose(r, "cuLaunchKernel", &st);
      throw Error("launch.cuda", "cuLaunchKernel of " + exe.entry + " failed: " + d_.describe(r));
    }
    profiler_.end(mark, s, exe.entry);
    auto& cs = static_cast<CudaStream&>(st);
    uint64_t n = cs.launched.fetch_add(1, std::memory_order_relaxed);
    cs.recent[n % CudaStream::kRecent].store(exe.report_name, std::memory_order_relaxed);
  }

 private:
  static constexpr size_t kMaxParamBytes = 4096;

  struct Staging {
    void* host = nullptr;
    CUevent done = nullptr;
  };

  // Throws for a failed driver call: Error{kind} naming the call, or, when the result says the
  // context is lost, what lose() throws. `st` is the stream the call worked on, when there is one.
  void check(CUresult r, const char* call, const char* kind = "cuda.driver", backend::Stream* st = nullptr) {
    if (r == kCudaSuccess) return;
    if (context_lost(r)) lose(r, call, st);
    d_.check(r, call, kind);
  }

  // A call returned an error that loses the context (a kernel faulted). The first call that meets
  // it reports cuda.kernel_failed, naming the launches in flight on its stream; the device is lost
  // from then on, and every later operation is cuda.device_lost (usable()), naming the same.
  [[noreturn]] void lose(CUresult r, const char* call, backend::Stream* st) {
    std::string report = std::string(call) + " returned " + d_.describe(r);
    if (st) {
      auto& cs = static_cast<CudaStream&>(*st);
      uint64_t n = cs.launched.load(std::memory_order_relaxed);
      std::string last;
      for (const auto& e : cs.recent) {
        if (const std::string* name = e.load(std::memory_order_relaxed)) last += (last.empty() ? "" : ", ") + *name;
      }
      report += "; " + std::to_string(n) + " kernel launch" + (n == 1 ? "" : "es") +
                " since the failing client last synchronised" + (last.empty() ? "" : " (the last: " + last + ")");
    }
    {
      std::lock_guard lock(lost_mutex_);
      if (!lost_.load()) {
        lost_reason_ = report;
        lost_.store(true);
        throw Error("cuda.kernel_failed", "a kernel failed on " + device_name_ + ": " + report +
                                              ". The GPU context is lost: the contents of " + device_name_ +
                                              "'s buffers are undefined, and every later operation on " + device_name_ +
                                              " is refused (cuda.device_lost); restart the process to use "
                                              "the GPU again");
      }
    }
    usable();
    throw Error("cuda.device_lost", device_name_ + " is unusable");  // not reached: usable() threw
  }

  // Error{cuda.device_lost} once a kernel has failed on the device (see check()).
  void usable() const {
    if (!lost_.load(std::memory_order_relaxed)) return;
    std::lock_guard lock(lost_mutex_);
    throw Error("cuda.device_lost", device_name_ + " is unusable since a kernel failed (" + lost_reason_ +
                                        "); restart the process to use the GPU again");
  }

  // Driver calls act on the calling thread's current context.
  // Asks the driver rather than caching: other code on the thread (another library, the user's
  // own CUDA) may have made another context current.
  void current() {
    CUcontext now = nullptr;
    if (d_.cuCtxGetCurrent(&now) != kCudaSuccess || now != ctx_) check(d_.cuCtxSetCurrent(ctx_), "cuCtxSetCurrent");
  }

  int attr(int a) {
    int v = 0;
    d_.cuDeviceGetAttribute(&v, a, dev_);
    return v;
  }

  void ensure_staging() {
    if (staging_[0].host) return;
    for (Staging& s : staging_) {
      check(d_.cuMemAllocHost(&s.host, kStagingBytes), "cuMemAllocHost (pinned staging)", "memory.out_of_memory");
      check(d_.cuEventCreate(&s.done, kEventDisableTiming), "cuEventCreate");
      check(d_.cuEventRecord(s.done, nullptr), "cuEventRecord");
    }
  }

  const Driver& d_;
  CUdevice dev_ = 0;
  CUcontext ctx_ = nullptr;
  DeviceInfo info_;
  std::string arch_;

  // A kernel with Hopper ops runs on sm_90a alone (sm_100a has no wgmma, and hopper.cuh refuses
  // every other target), compiled by an NVRTC that knows them (12.3: mbarrier.expect_tx and the
  // bulk tensor copies' forms kiln writes).
  void require_hopper(const std::string& kernel) const {
    if (arch_ != "sm_90a") {
      throw Error("compile.unsupported", "kernel '" + kernel +
                                             "' uses Hopper's mbarrier ops, which kiln runs on sm_90a (" +
                                             "H100, H200) and the CPU; " + device_name_ + " is " + arch_);
    }
    const NvrtcVersion v = nvrtc_version();
    if (v.major < 12 || (v.major == 12 && v.minor < 3)) {
      throw Error("compile.unsupported",
                  "kernel '" + kernel + "' uses Hopper's mbarrier ops, which need NVRTC 12.3 or " +
                      "later; the NVRTC loaded is " + std::to_string(v.major) + "." + std::to_string(v.minor));
    }
  }
  ir::Target target_;
  std::string device_name_;
  DiskCache disk_;
  std::mutex staging_mutex_;
  std::array<Staging, 2> staging_{};
  Profiler profiler_;
  std::atomic<bool> lost_{false};
  mutable std::mutex lost_mutex_;
  std::string lost_reason_;
  // Every entry name compiled, for the report of a failed kernel: it must outlive whatever
  // executable launched it, so the backend keeps its own copy (deque: stable addresses).
  std::mutex names_mutex_;
  std::deque<std::string> names_;
};

}  // namespace

int device_count(std::string* why) {
  const Driver& d = Driver::get();
  if (!d.loaded) {
    if (why) *why = d.unavailable;
    return 0;
  }
  int n = 0;
  CUresult r = d.cuDeviceGetCount(&n);
  if (r != kCudaSuccess) {
    if (why) *why = "cuDeviceGetCount failed: " + d.describe(r);
    return 0;
  }
  if (n == 0 && why) *why = "the CUDA driver is loaded but reports no GPU";
  return n;
}

std::unique_ptr<backend::Backend> make_cuda_backend(int index) { return std::make_unique<CudaBackend>(index); }

}  // namespace kiln::cuda
