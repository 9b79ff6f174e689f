// The NVRTC loader and compile(): dlopen/dlsym of the handful of NVRTC entry points kiln uses,
// declared here with their C signatures so that no toolkit header is needed.
#include "backends/cuda/nvrtc.h"

#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "common/hash.h"
#include "kiln/error.h"
#include "kiln/ir/target.h"

namespace kiln::cuda {

namespace {

// NVRTC's C interface, as its header declares it: results are an int enum (0 is success),
// programs an opaque pointer.
using NvrtcResult = int;
constexpr NvrtcResult kNvrtcSuccess = 0;
struct NvrtcProgramImpl;
using NvrtcProgram = NvrtcProgramImpl*;

struct NvrtcApi {
  void* handle = nullptr;
  std::string path;
  const char* (*get_error_string)(NvrtcResult) = nullptr;
  NvrtcResult (*version)(int*, int*) = nullptr;
  NvrtcResult (*create_program)(NvrtcProgram*, const char*, const char*, int, const char* const*,
                                const char* const*) = nullptr;
  NvrtcResult (*destroy_program)(NvrtcProgram*) = nullptr;
  NvrtcResult (*compile_program)(NvrtcProgram, int, const char* const*) = nullptr;
  NvrtcResult (*get_program_log_size)(NvrtcProgram, size_t*) = nullptr;
  NvrtcResult (*get_program_log)(NvrtcProgram, char*) = nullptr;
  NvrtcResult (*get_cubin_size)(NvrtcProgram, size_t*) = nullptr;
  NvrtcResult (*get_cubin)(NvrtcProgram, char*) = nullptr;
  NvrtcResult (*get_ptx_size)(NvrtcProgram, size_t*) = nullptr;
  NvrtcResult (*get_ptx)(NvrtcProgram, char*) = nullptr;
};

template <class F>
bool bind(void* handle, const char* symbol, F& fn, std::string& missing) {
  void* p = dlsym(handle, symbol);
  if (!p) {
    missing += (missing.empty() ? "" : ", ") + std::string(symbol);
    return false;
  }
  fn = reinterpret_cast<F>(p);
  return true;
}

// Loads the first candidate that opens and has every entry point. On failure `error` says what was
// tried and why each failed.
bool load(const std::vector<std::string>& candidates, NvrtcApi& api, std::string& error) {
  std::string tried;
  for (const std::string& name : candidates) {
    // Lazy binding: NVRTC is a large library and kiln calls a handful of its functions; resolving
    // every symbol up front made the first load several milliseconds longer.
    void* h = dlopen(name.c_str(), RTLD_LAZY | RTLD_LOCAL);
    if (!h) {
      const char* why = dlerror();  // names the file again; keep only the reason after it
      std::string reason = why ? why : "not found";
      if (size_t colon = reason.rfind(": "); colon != std::string::npos) reason = reason.substr(colon + 2);
      tried += "\n  " + name + ": not loaded (" + reason + ")";
      continue;
    }
    NvrtcApi a;
    a.handle = h;
    a.path = name;
    std::string missing;
    bool ok = bind(h, "nvrtcGetErrorString", a.get_error_string, missing);
    ok = bind(h, "nvrtcVersion", a.version, missing) && ok;
    ok = bind(h, "nvrtcCreateProgram", a.create_program, missing) && ok;
    ok = bind(h, "nvrtcDestroyProgram", a.destroy_program, missing) && ok;
    ok = bind(h, "nvrtcCompileProgram", a.compile_program, missing) && ok;
    ok = bind(h, "nvrtcGetProgramLogSize", a.get_program_log_size, missing) && ok;
    ok = bind(h, "nvrtcGetProgramLog", a.get_program_log, missing) && ok;
    ok = bind(h, "nvrtcGetCUBINSize", a.get_cubin_size, missing) && ok;
    ok = bind(h, "nvrtcGetCUBIN", a.get_cubin, missing) && ok;
    ok = bind(h, "nvrtcGetPTXSize", a.get_ptx_size, missing) && ok;
    ok = bind(h, "nvrtcGetPTX", a.get_ptx, missing) && ok;
    if (!ok) {
      tried += "\n  " + name + ": opened, but lacks " + missing;
      dlclose(h);
      continue;
    }
    api = a;
    return true;
  }
  error =
      "NVRTC (the CUDA run-time compiler) could not be loaded; set CUDA_HOME or put libnvrtc on the "
      "loader path. Tried:" +
      tried;
  return false;
}

// The process-wide library, loaded once by the first thread that needs it; never closed and never
// destroyed (compiles may run from destructors at exit; decision 010).
struct Loaded {
  NvrtcApi api;
  std::string error;
  bool ok = false;
};

std::atomic<bool> g_loaded{false};  // set once loaded() has loaded NVRTC successfully

const Loaded& loaded() {
  static const Loaded& l = *[] {
    auto* r = new Loaded;
    r->ok = load(nvrtc_candidates(), r->api, r->error);
    if (r->ok) g_loaded.store(true, std::memory_order_release);
    return r;
  }();
  return l;
}

const NvrtcApi& api() {
  const Loaded& l = loaded();
  if (!l.ok) throw Error("device.unavailable", l.error);
  return l.api;
}

std::string result_text(const NvrtcApi& a, NvrtcResult r) {
  const char* s = a.get_error_string ? a.get_error_string(r) : nullptr;
  return (s ? std::string(s) : "NVRTC error") + " (" + std::to_string(r) + ")";
}

// Writes the source that failed to compile where a person can open it; returns the path, or a
// note saying why it could not be written.
std::string write_failed_source(std::string_view source) {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  std::filesystem::path path = dir / ("kiln-nvrtc-" + common::hex16(common::fnv1a64(source)) + ".cu");
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(source.data(), static_cast<std::streamsize>(source.size()));
  out.close();
  if (!out) return "(could not write the source to " + path.string() + ")";
  return path.string();
}

// Frees the program on every path out of compile().
struct ProgramGuard {
  const NvrtcApi& a;
  NvrtcProgram p = nullptr;
  ~ProgramGuard() {
    if (p) a.destroy_program(&p);
  }
};

}  // namespace

std::vector<std::string> nvrtc_candidates() {
  const char* names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
  std::vector<std::string> out(std::begin(names), std::end(names));
  std::vector<std::string> dirs;
  if (const char* home = std::getenv("CUDA_HOME"); home && *home) dirs.push_back(std::string(home) + "/lib64");
  dirs.push_back("/usr/local/cuda/lib64");
  for (const std::string& d : dirs) {
    for (const char* n : names) out.push_back(d + "/" + n);
  }
  return out;
}

bool nvrtc_available() { return loaded().ok; }

NvrtcVersion nvrtc_version() {
  const NvrtcApi& a = api();
  NvrtcVersion v;
  NvrtcResult r = a.version(&v.major, &v.minor);
  if (r != kNvrtcSuccess) throw Error("device.unavailable", "nvrtcVersion failed: " + result_text(a, r));
  return v;
}

std::vector<std::string> default_compile_options(std::string_view arch) {
  // The plane width the device library's plane helpers and products assume: ir::Target's, given to
  // the source rather than written in it.
  return {"--gpu-architecture=" + std::string(arch), "--std=c++17",
          "-DKILN_PLANE_WIDTH=" + std::to_string(ir::Target::kPlaneWidth) + "u"};
}

namespace {
std::atomic<uint64_t> g_compile_ns{0};

// Adds the time between its construction and destruction to g_compile_ns.
struct CompileTimer {
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  ~CompileTimer() {
    g_compile_ns +=
        uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
  }
};
}  // namespace

double compile_milliseconds() { return double(g_compile_ns.load()) / 1e6; }

namespace {
// "realpath size mtime" of a library file, or empty.
std::string file_identity(const std::string& path) {
  std::error_code ec;
  std::filesystem::path real = std::filesystem::canonical(path, ec);
  if (ec) return "";
  auto size = std::filesystem::file_size(real, ec);
  if (ec) return "";
  auto mtime = std::filesystem::last_write_time(real, ec);
  if (ec) return "";
  return real.string() + " " + std::to_string(size) + " " + std::to_string(mtime.time_since_epoch().count());
}
}  // namespace

std::string compiler_identity() {
  // Already loaded (a compile has missed the disk cache in this process): the file the loader picked.
  if (g_loaded.load(std::memory_order_acquire)) {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(api().version), &info) && info.dli_fname) {
      std::string id = file_identity(info.dli_fname);
      if (!id.empty()) return id;
    }
  }
  // Not loaded: find the file the loader would pick without loading it (about 5 ms of dlopen a
  // disk-cache hit does not need). If this search picks another file than the loader would, the
  // key differs and the kernel is compiled again: never a wrong cubin, only a slower first launch.
  std::vector<std::string> dirs;
  if (const char* lp = std::getenv("LD_LIBRARY_PATH")) {
    std::string all(lp);
    for (size_t at = 0; at <= all.size();) {
      size_t end = all.find(':', at);
      if (end == std::string::npos) end = all.size();
      if (end > at) dirs.push_back(all.substr(at, end - at));
      at = end + 1;
    }
  }
  if (const char* home = std::getenv("CUDA_HOME"); home && *home) dirs.push_back(std::string(home) + "/lib64");
  for (const char* d : {"/usr/local/cuda/lib64", "/usr/local/cuda/lib", "/usr/lib/x86_64-linux-gnu", "/usr/lib64",
                        "/lib/x86_64-linux-gnu", "/usr/lib"}) {
    dirs.push_back(d);
  }
  for (const char* name : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}) {
    for (const std::string& d : dirs) {
      std::string id = file_identity(d + "/" + name);
      if (!id.empty()) return id;
    }
  }
  NvrtcVersion v = nvrtc_version();  // loads it; then the loaded file names the compiler
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(api().version), &info) && info.dli_fname) return file_identity(info.dli_fname);
  return "nvrtc " + std::to_string(v.major) + "." + std::to_string(v.minor);
}

namespace {
// Creates and compiles the program held by `prog`; its log goes to `log`. Throws Error{compile.nvrtc}
// with the log and the written source when NVRTC refuses it.
void compile_program(const NvrtcApi& a, ProgramGuard& prog, std::string_view source, std::string_view name,
                     const std::vector<std::string>& options, std::string& log) {
  CompileTimer timer;
  std::string src(source);
  std::string prog_name = std::string(name) + ".cu";
  NvrtcResult r = a.create_program(&prog.p, src.c_str(), prog_name.c_str(), 0, nullptr, nullptr);
  if (r != kNvrtcSuccess) {
    throw Error("compile.nvrtc", "nvrtcCreateProgram failed for '" + std::string(name) + "': " + result_text(a, r) +
                                     "; source written to " + write_failed_source(source));
  }
  std::vector<const char*> opts;
  opts.reserve(options.size());
  for (const std::string& o : options) opts.push_back(o.c_str());
  NvrtcResult compiled = a.compile_program(prog.p, static_cast<int>(opts.size()), opts.data());

  size_t log_size = 0;
  if (a.get_program_log_size(prog.p, &log_size) == kNvrtcSuccess && log_size > 1) {
    log.resize(log_size);
    if (a.get_program_log(prog.p, log.data()) != kNvrtcSuccess) log.clear();
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  }
  if (compiled != kNvrtcSuccess) {
    std::string opt_text;
    for (const std::string& o : options) opt_text += " " + o;
    throw Error("compile.nvrtc", "NVRTC could not compile kernel '" + std::string(name) + "' (" +
                                     result_text(a, compiled) + ", options:" + opt_text + "):\n" + log +
                                     "\nsource written to " + write_failed_source(source));
  }
}
}  // namespace

CompileResult compile(std::string_view source, std::string_view name, const std::vector<std::string>& options) {
  const NvrtcApi& a = api();
  ProgramGuard prog{a};
  CompileResult out;
  compile_program(a, prog, source, name, options, out.log);
  size_t cubin_size = 0;
  NvrtcResult r = a.get_cubin_size(prog.p, &cubin_size);
  if (r != kNvrtcSuccess || cubin_size == 0) {
    throw Error("compile.nvrtc", "NVRTC compiled kernel '" + std::string(name) +
                                     "' but gave no CUBIN (the options must name a real architecture, "
                                     "-arch=sm_XX, not compute_XX): " +
                                     result_text(a, r));
  }
  out.cubin.resize(cubin_size);
  r = a.get_cubin(prog.p, out.cubin.data());
  if (r != kNvrtcSuccess) throw Error("compile.nvrtc", "nvrtcGetCUBIN failed: " + result_text(a, r));
  return out;
}

std::string compile_ptx(std::string_view source, std::string_view name, const std::vector<std::string>& options) {
  const NvrtcApi& a = api();
  ProgramGuard prog{a};
  std::string log;
  compile_program(a, prog, source, name, options, log);
  size_t size = 0;
  NvrtcResult r = a.get_ptx_size(prog.p, &size);
  if (r != kNvrtcSuccess || size == 0) {
    throw Error("compile.nvrtc",
                "NVRTC compiled kernel '" + std::string(name) + "' but gave no PTX: " + result_text(a, r));
  }
  std::string ptx(size, '\0');
  r = a.get_ptx(prog.p, ptx.data());
  if (r != kNvrtcSuccess) throw Error("compile.nvrtc", "nvrtcGetPTX failed: " + result_text(a, r));
  while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
  return ptx;
}

namespace detail {
void load_nvrtc_from(const std::vector<std::string>& candidates) {
  NvrtcApi a;
  std::string error;
  if (!load(candidates, a, error)) throw Error("device.unavailable", error);
  dlclose(a.handle);  // reference counted: the process-wide library keeps its own reference
}
}  // namespace detail

}  // namespace kiln::cuda
