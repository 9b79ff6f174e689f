// The CUDA backend: device facts, memory, streams, transfers (large ones through pinned staging
// buffers), compilation (emit, disk cache, NVRTC, module load) and launches (arguments packed by
// the emitter's ABI into one parameter buffer).
#include "backends/cuda/cuda_backend.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
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

constexpr size_t kStagingBytes = size_t(16) << 20;  // each of the two pinned staging buffers
constexpr size_t kDirectCopyBytes = size_t(1) << 20;  // smaller transfers go straight through
constexpr uint32_t kStaticSharedLimit = 48 * 1024;

class CudaStream : public runtime::Stream {
 public:
  explicit CudaStream(CUstream s) : s(s) {}
  ~CudaStream() override {
    const Driver& d = Driver::get();
    d.cuStreamSynchronize(s);
    d.cuStreamDestroy(s);
  }
  CUstream s;
};

CUstream stream_of(runtime::Stream& s) { return static_cast<CudaStream&>(s).s; }

// One argument of the entry, packed at `offset` of the parameter buffer.
struct Slot {
  AbiArg arg;
  uint32_t offset;
};

class CudaExecutable : public runtime::Executable {
 public:
  std::string_view entry_name() const override { return entry; }
  std::string entry;
  std::string kernel_name;
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  uint32_t dynamic_shared = 0;
  std::vector<Slot> slots;
  uint32_t param_bytes = 0;
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

class CudaBackend : public runtime::Backend {
 public:
  explicit CudaBackend(int index) : d_(Driver::get()) {
    if (!d_.loaded) throw Error("device.unavailable", "cuda:" + std::to_string(index) + " is unavailable: " + d_.unavailable);
    int count = 0;
    d_.check(d_.cuDeviceGetCount(&count), "cuDeviceGetCount", "device.unavailable");
    if (index < 0 || index >= count) {
      throw Error("device.unavailable", "cuda:" + std::to_string(index) + " does not exist: the driver reports " +
                                            std::to_string(count) + " GPU" + (count == 1 ? "" : "s"));
    }
    d_.check(d_.cuDeviceGet(&dev_, index), "cuDeviceGet", "device.unavailable");
    d_.check(d_.cuDevicePrimaryCtxRetain(&ctx_, dev_), "cuDevicePrimaryCtxRetain", "device.unavailable");
    current();
    char name[256] = {};
    d_.cuDeviceGetName(name, sizeof name - 1, dev_);
    info_.name = name;
    int major = attr(kComputeCapabilityMajor), minor = attr(kComputeCapabilityMinor);
    arch_ = architecture(major, minor);
    info_.architecture = arch_;
    size_t total = 0;
    d_.cuDeviceTotalMem(&total, dev_);
    info_.memory_bytes = total;
    info_.multiprocessors = attr(kMultiprocessorCount);
    info_.max_cube_units = uint32_t(attr(kMaxThreadsPerBlock));
    info_.max_cube_dim = {uint32_t(attr(kMaxBlockDimX)), uint32_t(attr(kMaxBlockDimY)), uint32_t(attr(kMaxBlockDimZ))};
    info_.max_cube_count = {uint32_t(attr(kMaxGridDimX)), uint32_t(attr(kMaxGridDimY)), uint32_t(attr(kMaxGridDimZ))};
    info_.max_shared_bytes = uint32_t(std::max(attr(kMaxSharedMemoryPerBlockOptin), attr(kMaxSharedMemoryPerBlock)));
    info_.plane_dim = uint32_t(attr(kWarpSize));
    device_name_ = "cuda:" + std::to_string(index);
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

  uint64_t allocate(size_t bytes) override {
    current();
    CUdeviceptr p = 0;
    CUresult r = d_.cuMemAlloc(&p, bytes);
    if (r == kCudaErrorOutOfMemory) return 0;
    d_.check(r, "cuMemAlloc", "memory.out_of_memory");
    return p;
  }
  void deallocate(uint64_t address) override {
    current();
    d_.cuMemFree(address);
  }

  std::unique_ptr<runtime::Stream> create_stream() override {
    current();
    CUstream s = nullptr;
    d_.check(d_.cuStreamCreate(&s, kStreamNonBlocking), "cuStreamCreate");
    return std::make_unique<CudaStream>(s);
  }

  void copy_to_device(runtime::Stream& st, uint64_t dst, const void* src, size_t bytes) override {
    if (!bytes) return;
    current();
    CUstream s = stream_of(st);
    if (bytes <= kDirectCopyBytes) {
      // From pageable memory the driver copies through its own buffer before returning.
      d_.check(d_.cuMemcpyHtoDAsync(dst, src, bytes, s), "cuMemcpyHtoDAsync");
      return;
    }
    std::lock_guard lock(staging_mutex_);
    ensure_staging();
    auto* from = static_cast<const unsigned char*>(src);
    for (size_t off = 0, i = 0; off < bytes; off += kStagingBytes, ++i) {
      Staging& b = staging_[i % 2];
      size_t n = std::min(kStagingBytes, bytes - off);
      d_.check(d_.cuEventSynchronize(b.done), "cuEventSynchronize");  // the buffer's last copy is done
      std::memcpy(b.host, from + off, n);
      d_.check(d_.cuMemcpyHtoDAsync(dst + off, b.host, n, s), "cuMemcpyHtoDAsync");
      d_.check(d_.cuEventRecord(b.done, s), "cuEventRecord");
    }
  }

  void copy_to_host(runtime::Stream& st, void* dst, uint64_t src, size_t bytes) override {
    if (!bytes) return;
    current();
    CUstream s = stream_of(st);
    if (bytes <= kDirectCopyBytes) {
      d_.check(d_.cuMemcpyDtoHAsync(dst, src, bytes, s), "cuMemcpyDtoHAsync");
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
      d_.check(d_.cuEventSynchronize(b.done), "cuEventSynchronize");
      d_.check(d_.cuMemcpyDtoHAsync(b.host, src + off, n, s), "cuMemcpyDtoHAsync");
      d_.check(d_.cuEventRecord(b.done, s), "cuEventRecord");
    };
    // Two chunks in flight: copy chunk i out of its buffer while chunk i + 1 crosses the bus.
    issue(0);
    for (size_t i = 0; i < chunks; ++i) {
      if (i + 1 < chunks) issue(i + 1);
      Staging& b = staging_[i % 2];
      d_.check(d_.cuEventSynchronize(b.done), "cuEventSynchronize");
      size_t off = i * kStagingBytes, n = std::min(kStagingBytes, bytes - off);
      std::memcpy(to + off, b.host, n);
    }
  }

  void copy_on_device(runtime::Stream& st, uint64_t dst, uint64_t src, size_t bytes) override {
    if (!bytes) return;
    current();
    d_.check(d_.cuMemcpyDtoDAsync(dst, src, bytes, stream_of(st)), "cuMemcpyDtoDAsync");
  }

  void fill(runtime::Stream& st, uint64_t dst, unsigned char byte, size_t bytes) override {
    if (!bytes) return;
    current();
    d_.check(d_.cuMemsetD8Async(dst, byte, bytes, stream_of(st)), "cuMemsetD8Async");
  }

  void sync(runtime::Stream& st) override {
    current();
    d_.check(d_.cuStreamSynchronize(stream_of(st)), "cuStreamSynchronize (a kernel on this stream failed)",
             "cuda.kernel_failed");
  }

  std::shared_ptr<runtime::Executable> compile(const ir::Kernel& k) override {
    using clock = std::chrono::steady_clock;
    auto ms = [](clock::time_point a, clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
    auto t_start = clock::now();
    EmitResult e = emit_cuda(k);
    auto t_emitted = clock::now();
    if (e.dynamic_shared_bytes > info_.max_shared_bytes) {
      throw Error("launch.bad_dims", "kernel '" + k.name + "' needs " + std::to_string(e.dynamic_shared_bytes) +
                                         " bytes of shared memory per cube; " + device_name_ + " allows " +
                                         std::to_string(info_.max_shared_bytes));
    }
    std::vector<std::string> options = default_compile_options(arch_);
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
        common::log(common::LogChannel::Compile, e.entry + ": disk cache " + why + "; NVRTC compiled for " + arch_ +
                                                     " in " + buf + "\n" + e.source);
      }
      cubin = std::move(c.cubin);
    }
    current();
    auto exe = std::make_shared<CudaExecutable>();
    exe->entry = e.entry;
    exe->kernel_name = k.name;
    d_.check(d_.cuModuleLoadData(&exe->module, cubin->data()), "cuModuleLoadData", "compile.load");
    d_.check(d_.cuModuleGetFunction(&exe->function, exe->module, e.entry.c_str()), "cuModuleGetFunction",
             "compile.load");
    if (fresh) {  // stored only once the driver has accepted it
      auto t_store = clock::now();
      disk_.store(key, *cubin);
      store_ms = ms(t_store, clock::now());
    }
    exe->dynamic_shared = e.dynamic_shared_bytes;
    if (logging) {
      char buf[200];
      std::snprintf(buf, sizeof buf, ": emit %.3f ms, disk lookup %.3f ms, NVRTC %.3f ms, disk store %.3f ms, module load %.3f ms",
                    ms(t_start, t_emitted), ms(t_emitted, t_looked), nvrtc_ms, store_ms,
                    ms(t_looked, clock::now()) - nvrtc_ms - store_ms);
      common::log(common::LogChannel::Compile, e.entry + buf);
    }
    if (e.dynamic_shared_bytes > kStaticSharedLimit) {
      d_.check(d_.cuFuncSetAttribute(exe->function, kFuncAttributeMaxDynamicSharedSizeBytes,
                                     int(e.dynamic_shared_bytes)),
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

  void launch(runtime::Executable& x, const runtime::LaunchDims& dims, std::span<const runtime::ArgBinding> args,
              runtime::Stream& st) override {
    auto& exe = static_cast<CudaExecutable&>(x);
    alignas(16) std::array<unsigned char, kMaxParamBytes> params;
    for (const Slot& s : exe.slots) {
      const runtime::ArgBinding& b = args[s.arg.param];
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
                     nullptr};                                    // CU_LAUNCH_PARAM_END
    current();
    CUstream s = stream_of(st);
    Profiler::Mark mark = profiler_.begin(s);
    CUresult r = d_.cuLaunchKernel(exe.function, dims.count.x, dims.count.y, dims.count.z, dims.dim.x, dims.dim.y,
                                   dims.dim.z, exe.dynamic_shared, s, nullptr, extra);
    if (r != kCudaSuccess) {
      profiler_.cancel(mark);
      throw Error("launch.cuda", "cuLaunchKernel of " + exe.entry + " failed: " + d_.describe(r));
    }
    profiler_.end(mark, s, exe.entry);
  }

 private:
  static constexpr size_t kMaxParamBytes = 4096;

  struct Staging {
    void* host = nullptr;
    CUevent done = nullptr;
  };

  // Driver calls act on the calling thread's current context.
  // Asks the driver rather than caching: other code on the thread (another library, the user's
  // own CUDA) may have made another context current.
  void current() {
    CUcontext now = nullptr;
    if (d_.cuCtxGetCurrent(&now) != kCudaSuccess || now != ctx_) d_.check(d_.cuCtxSetCurrent(ctx_), "cuCtxSetCurrent");
  }

  int attr(int a) {
    int v = 0;
    d_.cuDeviceGetAttribute(&v, a, dev_);
    return v;
  }

  void ensure_staging() {
    if (staging_[0].host) return;
    for (Staging& s : staging_) {
      d_.check(d_.cuMemAllocHost(&s.host, kStagingBytes), "cuMemAllocHost (pinned staging)", "memory.out_of_memory");
      d_.check(d_.cuEventCreate(&s.done, kEventDisableTiming), "cuEventCreate");
      d_.check(d_.cuEventRecord(s.done, nullptr), "cuEventRecord");
    }
  }

  const Driver& d_;
  CUdevice dev_ = 0;
  CUcontext ctx_ = nullptr;
  DeviceInfo info_;
  std::string arch_;
  std::string device_name_;
  DiskCache disk_;
  std::mutex staging_mutex_;
  std::array<Staging, 2> staging_{};
  Profiler profiler_;
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

std::unique_ptr<runtime::Backend> make_cuda_backend(int index) { return std::make_unique<CudaBackend>(index); }

}  // namespace kiln::cuda
