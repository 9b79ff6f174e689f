// A stand-in for the CUDA driver (built as libcuda.so.1) for machines without a GPU. kiln loads
// the driver with dlopen, so a test that puts this library first on LD_LIBRARY_PATH gets one
// "GPU" whose memory is host memory and which runs no kernel: cuLaunchKernel only counts launches
// and keeps the last one's parameter buffer.
// It exists to test what kiln does around the driver where CI has no GPU: a process that opens a
// GPU and exits at once, large transfers through the staging buffers, and every driver failure
// path (a test makes any entry point fail with kiln_fake_cuda_fail).
//
// Only the entry points kiln's loader resolves are defined, with the driver's C signatures.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

using CUresult = int;
constexpr CUresult kSuccess = 0;
constexpr CUresult kOutOfMemory = 2;
constexpr CUresult kNotInitialized = 3;

// Failures a test asked for: entry point name -> result it returns from now on.
std::mutex g_mutex;
std::map<std::string, CUresult>& failures() {
  static auto* m = new std::map<std::string, CUresult>;
  return *m;
}
std::atomic<bool> g_initialised{false};
std::atomic<uint64_t> g_launches{0};
std::vector<unsigned char>& last_params() {  // of the last cuLaunchKernel, under g_mutex
  static auto* p = new std::vector<unsigned char>;
  return *p;
}
int g_context;  // the one context's identity
thread_local void* g_current = nullptr;
uint64_t g_memory_limit = uint64_t(16) << 30;
std::atomic<uint64_t> g_memory_used{0};
std::mutex g_alloc_mutex;
std::map<uint64_t, size_t>& allocations() {
  static auto* m = new std::map<uint64_t, size_t>;
  return *m;
}

// KILN_FAKE_CUDA_FAIL="cuLaunchKernel=701,cuModuleLoadData=200" presets failures for a whole
// process (a child process a test starts); kiln_fake_cuda_fail sets them from inside one.
void read_environment() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* v = std::getenv("KILN_FAKE_CUDA_FAIL");
    if (!v) return;
    std::string s(v);
    for (size_t at = 0; at < s.size();) {
      size_t end = s.find(',', at);
      if (end == std::string::npos) end = s.size();
      std::string item = s.substr(at, end - at);
      if (size_t eq = item.find('='); eq != std::string::npos) {
        failures()[item.substr(0, eq)] = std::atoi(item.c_str() + eq + 1);
      }
      at = end + 1;
    }
  });
}

// The result a call returns when a test made it fail, else success.
CUresult injected(const char* call) {
  read_environment();
  std::lock_guard lock(g_mutex);
  auto it = failures().find(call);
  return it == failures().end() ? kSuccess : it->second;
}

#define KILN_FAKE_ENTER(name) \
  if (CUresult r_ = injected(name); r_ != kSuccess) return r_

const char* error_name(CUresult r) {
  switch (r) {
    case 0: return "CUDA_SUCCESS";
    case 1: return "CUDA_ERROR_INVALID_VALUE";
    case 2: return "CUDA_ERROR_OUT_OF_MEMORY";
    case 3: return "CUDA_ERROR_NOT_INITIALIZED";
    case 200: return "CUDA_ERROR_INVALID_IMAGE";
    case 209: return "CUDA_ERROR_NO_BINARY_FOR_GPU";
    case 700: return "CUDA_ERROR_ILLEGAL_ADDRESS";
    case 701: return "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
    case 710: return "CUDA_ERROR_ASSERT";
    case 719: return "CUDA_ERROR_LAUNCH_FAILED";
    default: return nullptr;
  }
}

}  // namespace

extern "C" {

// Test control: from now on `call` returns `result` (0 clears the failure). Returns the number of
// kernels launched so far.
uint64_t kiln_fake_cuda_fail(const char* call, int result) {
  read_environment();
  std::lock_guard lock(g_mutex);
  if (result == kSuccess) {
    failures().erase(call);
  } else {
    failures()[call] = result;
  }
  return g_launches.load();
}

uint64_t kiln_fake_cuda_launches() { return g_launches.load(); }

// The parameter buffer of the last launch: copies up to `cap` bytes into `out`, returns its size.
size_t kiln_fake_cuda_last_params(void* out, size_t cap) {
  std::lock_guard lock(g_mutex);
  std::memcpy(out, last_params().data(), std::min(cap, last_params().size()));
  return last_params().size();
}

CUresult cuInit(unsigned) {
  KILN_FAKE_ENTER("cuInit");
  g_initialised = true;
  return kSuccess;
}
CUresult cuDriverGetVersion(int* v) {
  *v = 13000;
  return kSuccess;
}
CUresult cuDeviceGetCount(int* n) {
  KILN_FAKE_ENTER("cuDeviceGetCount");
  if (!g_initialised) return kNotInitialized;
  *n = 1;
  return kSuccess;
}
CUresult cuDeviceGet(int* d, int i) {
  KILN_FAKE_ENTER("cuDeviceGet");
  *d = i;
  return kSuccess;
}
CUresult cuDeviceGetName(char* s, int n, int) {
  std::strncpy(s, "kiln fake GPU (no kernels run)", size_t(n));
  return kSuccess;
}
CUresult cuDeviceGetAttribute(int* v, int attribute, int) {
  switch (attribute) {
    case 1: *v = 1024; break;  // max threads per block
    case 2:
    case 3: *v = 1024; break;        // max block dims x, y
    case 4: *v = 64; break;          // max block dim z
    case 5: *v = 0x7fffffff; break;  // max grid dim x
    case 6:
    case 7: *v = 65535; break;        // max grid dims y, z
    case 8: *v = 48 * 1024; break;    // shared memory per block
    case 10: *v = 32; break;          // warp size
    case 16: *v = 132; break;         // multiprocessors
    case 75: *v = 9; break;           // compute capability major
    case 76: *v = 0; break;           // minor
    case 97: *v = 227 * 1024; break;  // shared memory per block, opt-in
    default: *v = 0; break;
  }
  return kSuccess;
}
CUresult cuDeviceTotalMem_v2(size_t* total, int) {
  *total = size_t(g_memory_limit);
  return kSuccess;
}
CUresult cuDevicePrimaryCtxRetain(void** ctx, int) {
  KILN_FAKE_ENTER("cuDevicePrimaryCtxRetain");
  *ctx = &g_context;
  return kSuccess;
}
CUresult cuCtxSetCurrent(void* ctx) {
  KILN_FAKE_ENTER("cuCtxSetCurrent");
  g_current = ctx;
  return kSuccess;
}
CUresult cuCtxGetCurrent(void** ctx) {
  *ctx = g_current;
  return kSuccess;
}
CUresult cuCtxSynchronize() {
  KILN_FAKE_ENTER("cuCtxSynchronize");
  return kSuccess;
}
CUresult cuMemGetInfo_v2(size_t* free_bytes, size_t* total) {
  *total = size_t(g_memory_limit);
  *free_bytes = size_t(g_memory_limit - g_memory_used.load());
  return kSuccess;
}
CUresult cuMemAlloc_v2(unsigned long long* p, size_t bytes) {
  KILN_FAKE_ENTER("cuMemAlloc");
  if (g_memory_used.load() + bytes > g_memory_limit) return kOutOfMemory;
  void* m = std::malloc(bytes ? bytes : 1);
  if (!m) return kOutOfMemory;
  std::lock_guard lock(g_alloc_mutex);
  allocations()[uint64_t(reinterpret_cast<uintptr_t>(m))] = bytes;
  g_memory_used += bytes;
  *p = uint64_t(reinterpret_cast<uintptr_t>(m));
  return kSuccess;
}
CUresult cuMemFree_v2(unsigned long long p) {
  std::lock_guard lock(g_alloc_mutex);
  auto it = allocations().find(p);
  if (it == allocations().end()) return 1;  // not an allocation: CUDA_ERROR_INVALID_VALUE
  g_memory_used -= it->second;
  allocations().erase(it);
  std::free(reinterpret_cast<void*>(uintptr_t(p)));
  return kSuccess;
}
CUresult cuMemAllocHost_v2(void** p, size_t bytes) {
  KILN_FAKE_ENTER("cuMemAllocHost");
  *p = std::malloc(bytes);
  return *p ? kSuccess : kOutOfMemory;
}
CUresult cuMemFreeHost(void* p) {
  std::free(p);
  return kSuccess;
}
CUresult cuMemcpyHtoDAsync_v2(unsigned long long dst, const void* src, size_t n, void*) {
  KILN_FAKE_ENTER("cuMemcpyHtoDAsync");
  std::memcpy(reinterpret_cast<void*>(uintptr_t(dst)), src, n);
  return kSuccess;
}
CUresult cuMemcpyDtoHAsync_v2(void* dst, unsigned long long src, size_t n, void*) {
  KILN_FAKE_ENTER("cuMemcpyDtoHAsync");
  std::memcpy(dst, reinterpret_cast<const void*>(uintptr_t(src)), n);
  return kSuccess;
}
CUresult cuMemcpyDtoDAsync_v2(unsigned long long dst, unsigned long long src, size_t n, void*) {
  KILN_FAKE_ENTER("cuMemcpyDtoDAsync");
  std::memmove(reinterpret_cast<void*>(uintptr_t(dst)), reinterpret_cast<const void*>(uintptr_t(src)), n);
  return kSuccess;
}
CUresult cuMemsetD8Async(unsigned long long dst, unsigned char byte, size_t n, void*) {
  KILN_FAKE_ENTER("cuMemsetD8Async");
  std::memset(reinterpret_cast<void*>(uintptr_t(dst)), byte, n);
  return kSuccess;
}
CUresult cuStreamCreate(void** s, unsigned) {
  KILN_FAKE_ENTER("cuStreamCreate");
  *s = std::malloc(1);
  return kSuccess;
}
CUresult cuStreamDestroy_v2(void* s) {
  std::free(s);
  return kSuccess;
}
CUresult cuStreamSynchronize(void*) {
  KILN_FAKE_ENTER("cuStreamSynchronize");
  return kSuccess;
}
CUresult cuEventCreate(void** e, unsigned) {
  KILN_FAKE_ENTER("cuEventCreate");
  *e = std::malloc(1);
  return kSuccess;
}
CUresult cuEventDestroy_v2(void* e) {
  std::free(e);
  return kSuccess;
}
CUresult cuEventRecord(void*, void*) {
  KILN_FAKE_ENTER("cuEventRecord");
  return kSuccess;
}
CUresult cuEventSynchronize(void*) {
  KILN_FAKE_ENTER("cuEventSynchronize");
  return kSuccess;
}
CUresult cuEventQuery(void*) { return kSuccess; }
CUresult cuEventElapsedTime(float* ms, void*, void*) {
  *ms = 0.001f;
  return kSuccess;
}
CUresult cuModuleLoadData(void** m, const void*) {
  KILN_FAKE_ENTER("cuModuleLoadData");
  *m = std::malloc(1);
  return kSuccess;
}
CUresult cuModuleUnload(void* m) {
  std::free(m);
  return kSuccess;
}
CUresult cuModuleGetFunction(void** f, void* m, const char*) {
  KILN_FAKE_ENTER("cuModuleGetFunction");
  *f = m;
  return kSuccess;
}
CUresult cuFuncSetAttribute(void*, int, int) {
  KILN_FAKE_ENTER("cuFuncSetAttribute");
  return kSuccess;
}
CUresult cuLaunchKernel(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**,
                        void** extra) {
  KILN_FAKE_ENTER("cuLaunchKernel");
  ++g_launches;
  // kiln packs its arguments in one buffer: CU_LAUNCH_PARAM_BUFFER_POINTER (1), then _SIZE (2).
  if (extra && extra[0] == reinterpret_cast<void*>(1) && extra[2] == reinterpret_cast<void*>(2)) {
    const auto* bytes = static_cast<const unsigned char*>(extra[1]);
    std::lock_guard lock(g_mutex);
    last_params().assign(bytes, bytes + *static_cast<const size_t*>(extra[3]));
  }
  return kSuccess;
}
// NVRTC itself opens libcuda.so.1 while compiling and asks for the driver's private export
// tables; a fake has none, as a missing driver has none.
CUresult cuGetExportTable(const void** table, const void*) {
  *table = nullptr;
  return 500;  // CUDA_ERROR_NOT_FOUND
}
CUresult cuGetErrorName(CUresult r, const char** s) {
  *s = error_name(r);
  return *s ? kSuccess : 1;
}
CUresult cuGetErrorString(CUresult r, const char** s) {
  *s = error_name(r) ? "injected by the fake driver" : nullptr;
  return *s ? kSuccess : 1;
}

}  // extern "C"
