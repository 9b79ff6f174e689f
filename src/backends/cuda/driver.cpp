// Loading the CUDA driver at run time.
#include "backends/cuda/driver.h"

#include <dlfcn.h>

#include "kiln/error.h"

namespace kiln::cuda {

namespace {

// Resolves the symbol `symbol`. Where cuda.h maps a name to a versioned symbol (cuMemAlloc to
// cuMemAlloc_v2) kiln asks for that symbol by name: the unversioned one is the oldest ABI, and a
// `_v2` of another function may take other arguments.
template <class F>
bool resolve(void* lib, F& fn, const char* symbol, std::string& missing) {
  void* p = dlsym(lib, symbol);
  const char* name = symbol;
  if (!p) {
    missing += (missing.empty() ? "" : ", ") + std::string(name);
    return false;
  }
  fn = reinterpret_cast<F>(p);
  return true;
}

Driver load() {
  Driver d;
  const char* names[] = {"libcuda.so.1", "libcuda.so"};
  void* lib = nullptr;
  std::string errors;
  for (const char* n : names) {
    lib = dlopen(n, RTLD_LAZY | RTLD_LOCAL);
    if (lib) break;
    const char* e = dlerror();
    errors += (errors.empty() ? "" : "; ") + std::string(e ? e : n);
  }
  if (!lib) {
    d.unavailable = "no CUDA driver: looked for libcuda.so.1 and libcuda.so on the loader path (" + errors + ")";
    return d;
  }
  std::string missing;
  resolve(lib, d.cuInit, "cuInit", missing);
  resolve(lib, d.cuDriverGetVersion, "cuDriverGetVersion", missing);
  resolve(lib, d.cuDeviceGetCount, "cuDeviceGetCount", missing);
  resolve(lib, d.cuDeviceGet, "cuDeviceGet", missing);
  resolve(lib, d.cuDeviceGetName, "cuDeviceGetName", missing);
  resolve(lib, d.cuDeviceGetAttribute, "cuDeviceGetAttribute", missing);
  resolve(lib, d.cuDeviceTotalMem, "cuDeviceTotalMem_v2", missing);
  resolve(lib, d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", missing);
  resolve(lib, d.cuCtxSetCurrent, "cuCtxSetCurrent", missing);
  resolve(lib, d.cuCtxGetCurrent, "cuCtxGetCurrent", missing);
  resolve(lib, d.cuCtxSynchronize, "cuCtxSynchronize", missing);
  resolve(lib, d.cuMemGetInfo, "cuMemGetInfo_v2", missing);
  resolve(lib, d.cuMemAlloc, "cuMemAlloc_v2", missing);
  resolve(lib, d.cuMemFree, "cuMemFree_v2", missing);
  resolve(lib, d.cuMemAllocHost, "cuMemAllocHost_v2", missing);
  resolve(lib, d.cuMemFreeHost, "cuMemFreeHost", missing);
  resolve(lib, d.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", missing);
  resolve(lib, d.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", missing);
  resolve(lib, d.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", missing);
  resolve(lib, d.cuMemsetD8Async, "cuMemsetD8Async", missing);
  resolve(lib, d.cuStreamCreate, "cuStreamCreate", missing);
  resolve(lib, d.cuStreamDestroy, "cuStreamDestroy_v2", missing);
  resolve(lib, d.cuStreamSynchronize, "cuStreamSynchronize", missing);
  resolve(lib, d.cuEventCreate, "cuEventCreate", missing);
  resolve(lib, d.cuEventDestroy, "cuEventDestroy_v2", missing);
  resolve(lib, d.cuEventRecord, "cuEventRecord", missing);
  resolve(lib, d.cuEventSynchronize, "cuEventSynchronize", missing);
  resolve(lib, d.cuEventQuery, "cuEventQuery", missing);
  resolve(lib, d.cuEventElapsedTime, "cuEventElapsedTime", missing);
  resolve(lib, d.cuModuleLoadData, "cuModuleLoadData", missing);
  resolve(lib, d.cuModuleUnload, "cuModuleUnload", missing);
  resolve(lib, d.cuModuleGetFunction, "cuModuleGetFunction", missing);
  resolve(lib, d.cuFuncSetAttribute, "cuFuncSetAttribute", missing);
  resolve(lib, d.cuLaunchKernel, "cuLaunchKernel", missing);
  resolve(lib, d.cuGetErrorName, "cuGetErrorName", missing);
  resolve(lib, d.cuGetErrorString, "cuGetErrorString", missing);
  if (!missing.empty()) {
    d.unavailable = "the CUDA driver (libcuda.so.1) lacks " + missing;
    return d;
  }
  CUresult r = d.cuInit(0);
  if (r != kCudaSuccess) {
    d.unavailable = "the CUDA driver did not initialise: cuInit returned " + d.describe(r);
    return d;
  }
  d.loaded = true;
  return d;
}

}  // namespace

const Driver& Driver::get() {
  // Never destroyed: device states, clients and executables that a program keeps in its own
  // statics call the driver from their destructors at exit, in an order kiln does not control
  // (decision 010).
  static const Driver& d = *new Driver(load());
  return d;
}

std::string Driver::describe(CUresult r) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (cuGetErrorName) cuGetErrorName(r, &name);
  if (cuGetErrorString) cuGetErrorString(r, &text);
  std::string s = name ? name : "CUDA error " + std::to_string(r);
  if (text) s += std::string(" (") + text + ")";
  return s;
}

void Driver::check(CUresult r, const char* call, const char* kind) const {
  if (r != kCudaSuccess) throw Error(kind, std::string(call) + " failed: " + describe(r));
}

}  // namespace kiln::cuda
