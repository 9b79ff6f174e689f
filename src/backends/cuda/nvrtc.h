// NVRTC, loaded at run time: kiln builds and runs without a CUDA toolkit, so it never includes
// <nvrtc.h> nor links libnvrtc; it dlopens the library on first use and declares the few entry
// points it calls itself.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kiln::cuda {

struct NvrtcVersion {
  int major = 0;
  int minor = 0;
};

// True when an NVRTC library could be loaded (the first call tries; later calls are cheap).
bool nvrtc_available();

// The loaded NVRTC's version. Throws Error{device.unavailable} when NVRTC is missing.
NvrtcVersion nvrtc_version();

// The file names the loader tries, in order (for messages and tests).
std::vector<std::string> nvrtc_candidates();

// The options kiln compiles with for `arch` ("sm_90a"): the architecture and the language level.
// The generated source of an exact kernel does not depend on the math flags (it spells IEEE
// rounding with intrinsics), so none are passed; a kernel that allows contraction adds --fmad=true
// (EmitResult::options).
std::vector<std::string> default_compile_options(std::string_view arch);

struct CompileResult {
  std::vector<char> cubin;  // the CUBIN for the architecture the options name
  std::string log;          // NVRTC's log (warnings), possibly empty
};

// Compiles CUDA C++ `source` to a CUBIN. `name` is the program's name in messages (the kernel
// entry). The options must name a real architecture (-arch=sm_XX), since a CUBIN is asked for.
// Throws Error{compile.nvrtc} with the log and the path of a file holding the failing source, or
// Error{device.unavailable} when NVRTC cannot be loaded.
CompileResult compile(std::string_view source, std::string_view name, const std::vector<std::string>& options);

// Compiles `source` to PTX, the text of what the compiler made of it: for tests that check the
// instructions a kernel becomes (an fma where a kernel allows contraction, none where it does not).
// Errors as compile().
std::string compile_ptx(std::string_view source, std::string_view name, const std::vector<std::string>& options);

// Names the NVRTC build that compiles (the library file's real path, size and time), for the
// disk cache's key. It does not load NVRTC when it is not loaded yet: a disk-cache hit in a new
// process needs no compiler.
std::string compiler_identity();

// Milliseconds spent in compile() by this process, in all: lets a benchmark tell NVRTC's share of
// a first launch from kiln's own.
double compile_milliseconds();

namespace detail {
// Loads NVRTC from exactly `candidates`, uncached, and unloads it again: for tests of the
// missing-library path. Throws the Error{device.unavailable} that compile() would throw.
void load_nvrtc_from(const std::vector<std::string>& candidates);
}  // namespace detail

}  // namespace kiln::cuda
