// kiln bench: kiln's figures beside the peers' (PyTorch, Triton, raw cuLaunchKernel) measured in
// the same run. The peers' outputs come in as files (--peers), produced by the scripts in
// ../shared/peers run in the same command; every ratio is kiln / peer on this machine, now.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "bench_rows.h"
#include "commands.h"
#include "kernels.h"
#include "kiln/kiln.h"
#include "kiln/runtime/cuda.h"

namespace kiln::tool {

namespace {

struct Tiny {
  static constexpr std::string_view name = "tiny";
  void operator()(Scalar<float> a, Slice<float> y) const {
    If(absolute_pos() < y.len(), [&] { y[absolute_pos()] = y[absolute_pos()] + a; });
  }
};

// A kernel that is new to this process (and to the disk cache) for each salt.
struct Fresh {
  static constexpr std::string_view name = "fresh";
  void operator()(Slice<float> y, Comptime<int64_t> salt) const {
    If(absolute_pos() < y.len(), [&] { y[absolute_pos()] = y[absolute_pos()] * 2.0f + float(salt.get() % 7); });
  }
};

// Compute-bound: kRounds rounds of v = 0.5 sin(v + r/10) + 0.25 exp(-v^2) + 0.1 v + 0.1 / (2 + v^2)
// per element, 8 bytes of memory traffic for about 2000 instructions. The map contracts (its
// derivative stays under 0.85 in magnitude, and |v| < 0.9), so rounding errors do not grow from
// round to round and one host reference serves the exact and the fast kernel. The same body with
// and without fast math (docs/decisions/015-fast-math.md).
template <bool Fast>
struct MathHeavy {
  static constexpr std::string_view name = "math_heavy";
  static constexpr FastMath fast_math{.contract = Fast, .approx = Fast};
  static constexpr int kRounds = 32;
  void operator()(Slice<const float> x, Slice<float> y) const {
    auto i = absolute_pos();
    If(i < x.len(), [&] {
      Expr<float> v = x[i];
      for (int r = 0; r < kRounds; ++r) {  // a C++ loop: unrolled while tracing
        Expr<float> sq = v * v;
        v = 0.5f * sin(v + 0.1f * float(r)) + 0.25f * exp(-sq) + 0.1f * v + 0.1f / (2.0f + sq);
      }
      y[i] = v;
    });
  }
};

double math_heavy_reference(float x) {
  double v = x;
  for (int r = 0; r < MathHeavy<false>::kRounds; ++r) {
    double sq = v * v;
    v = 0.5 * std::sin(v + double(0.1f * float(r))) + 0.25 * std::exp(-sq) + 0.1 * v + 0.1 / (2.0 + sq);
  }
  return v;
}

// Reads "key": number pairs from JSON objects and "key number" pairs from plain lines.
void read_peer_file(const std::string& path, std::map<std::string, double>& out) {
  std::ifstream f(path);
  if (!f) throw Error("tool.bad_option", "cannot read peer file " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string s = ss.str();
  size_t i = 0;
  while ((i = s.find('"', i)) != std::string::npos) {
    size_t j = s.find('"', i + 1);
    if (j == std::string::npos) break;
    std::string key = s.substr(i + 1, j - i - 1);
    size_t colon = s.find_first_not_of(" \t", j + 1);
    i = j + 1;
    if (colon == std::string::npos || s[colon] != ':') continue;
    char* end = nullptr;
    double v = std::strtod(s.c_str() + colon + 1, &end);
    if (end != s.c_str() + colon + 1) out[key] = v;
  }
  std::istringstream lines(s);
  std::string word;
  std::string prev;
  while (lines >> word) {
    char* end = nullptr;
    double v = std::strtod(word.c_str(), &end);
    // Plain "key value" lines (the raw launcher's output): keys are lower-case words with '_'.
    bool key = !prev.empty() && prev.find('_') != std::string::npos &&
               prev.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") == std::string::npos;
    if (key && end && *end == 0) out[prev] = v;
    prev = word;
  }
}

int child_disk_hit(int64_t salt) {
  // A new process: the device and its context first (not part of a launch), then the first launch
  // of a kernel the parent compiled, and a second one.
  Client c = Device::default_device().client();
  Handle y = c.upload(std::vector<float>(1024, 1.0f));
  c.sync();
  uint64_t compiles = c.stats().compilations;
  auto t0 = clock_type::now();
  launch<Fresh>(c, CubeCount{4}, CubeDim{256}, 1, y, comptime(int64_t(salt)));
  c.sync();
  double first = ms_since(t0);
  auto t1 = clock_type::now();
  launch<Fresh>(c, CubeCount{4}, CubeDim{256}, 1, y, comptime(int64_t(salt + 1)));
  c.sync();
  std::printf("disk_hit_first_launch_ms %.4f disk_hit_second_launch_ms %.4f traced %llu\n", first, ms_since(t1),
              static_cast<unsigned long long>(c.stats().compilations - compiles));
  return 0;
}

}  // namespace

int bench(const Args& args) {
  const std::string usage =
      "kiln bench [--device D] [--peers FILE,...] [--json FILE] [--only saxpy,sum,fast_math,launch,tile,tensor"
      "|tensor.add|tensor.tiny|tensor.rows|tensor.sum|tensor.fused|tensor.matmul]";
  std::string device_name, json;
  std::vector<std::string> peers;
  std::vector<std::string> only;  // empty: every benchmark
  const std::vector<std::string> groups{"saxpy",       "sum",        "fast_math",    "launch",
                                        "tile",        "tensor",     "tensor.add",   "tensor.tiny",
                                        "tensor.rows", "tensor.sum", "tensor.fused", "tensor.matmul"};
  for (size_t i = 0; i < args.size(); ++i) {
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) usage_error(args[i] + " needs a value", usage);
      return args[++i];
    };
    if (args[i] == "--device") device_name = value();
    else if (args[i] == "--json") json = value();
    else if (args[i] == "--only") {
      std::stringstream ss(value());
      std::string g;
      while (std::getline(ss, g, ',')) {
        if (std::find(groups.begin(), groups.end(), g) == groups.end()) {
          usage_error("--only: no benchmark group is named '" + g +
                          "' (saxpy, sum, fast_math, launch, tile, tensor, or a part "
                          "of tensor: tensor.add, tensor.tiny, tensor.rows, tensor.sum, tensor.fused, tensor.matmul)",
                      usage);
        }
        only.push_back(g);
      }
    } else if (args[i] == "--peers") {
      std::stringstream ss(value());
      std::string p;
      while (std::getline(ss, p, ',')) {
        if (!p.empty()) peers.push_back(p);
      }
    } else if (args[i] == "--child-disk-hit") return child_disk_hit(std::atoll(value().c_str()));
    else usage_error("unknown option " + args[i], usage);
  }
  // A cache folder of our own: the first-launch figure must miss, the child process must hit.
  std::string cache_dir =
      (std::filesystem::temp_directory_path() / ("kiln-bench-" + std::to_string(::getpid()))).string();
  setenv("KILN_CACHE_DIR", cache_dir.c_str(), 1);
  Device device = device_name.empty() ? Device::default_device() : Device::parse(device_name);
  Client c = device.client();
  bool gpu = device.kind() == DeviceKind::Cuda;
  std::map<std::string, double> peer;
  for (const std::string& p : peers) read_peer_file(p, peer);
  std::vector<Row> rows;
  std::printf("kiln bench on %s (%s)%s\n", device.name().c_str(), device.info().name.c_str(),
              gpu ? "" : ": CPU sizes are reduced; the GPU figures come from cuda:0");
  auto wanted = [&](const std::string& group) {
    return only.empty() || std::find(only.begin(), only.end(), group) != only.end();
  };

  // saxpy f32 over 1 GiB vectors.
  if (wanted("saxpy")) {
    size_t n = gpu ? size_t(1) << 28 : size_t(1) << 22;
    Handle x = c.upload(random_floats(n, 1)), y = c.upload(random_floats(n, 2));
    uint32_t cubes = uint32_t(n / 4 / 256);
    auto run = [&] { launch<gallery::Saxpy<float>>(c, CubeCount{cubes}, CubeDim{256}, 4, 2.0f, x, y); };
    run();
    double ms = median_ms(c, 5, gpu ? 20 : 3, run);
    rows.push_back({"saxpy f32, " + std::to_string(n >> 20) + "M elements", "GB/s", 12.0 * double(n) / ms / 1e6,
                    "triton", peer.count("triton_saxpy_GBps") ? peer["triton_saxpy_GBps"] : NAN, true, 0.98});
  }
  // sum of 256M f32.
  if (wanted("sum")) {
    size_t n = gpu ? size_t(1) << 28 : size_t(1) << 22;
    Handle x = c.upload(random_floats(n, 3));
    uint32_t cubes = gpu ? uint32_t(device.info().multiprocessors) * 8 : 64;
    Handle partial = c.empty<float>(cubes), out = c.empty<float>(1);
    auto run = [&] {
      launch_unchecked<gallery::SumPartials>(c, CubeCount{cubes}, CubeDim{512}, 4, x, partial);
      launch_unchecked<gallery::SumFinal>(c, CubeCount{1}, CubeDim{1024}, 1, partial, out);
    };
    run();
    double ms = median_ms(c, 5, gpu ? 20 : 3, run);
    rows.push_back({"sum f32, " + std::to_string(n >> 20) + "M elements", "GB/s", 4.0 * double(n) / ms / 1e6, "pytorch",
                    peer.count("sum_f32_GBps") ? peer["sum_f32_GBps"] : NAN, true, 1.0});
  }
  // The compute-bound kernel, exact and with fast math: the time of each, their ratio, and each
  // one's largest error against a double-precision host reference on a sample of the elements.
  if (wanted("fast_math")) {
    size_t n = gpu ? size_t(1) << 24 : size_t(1) << 14;
    std::vector<float> xs = random_floats(n, 4);
    Handle x = c.upload(xs), y_exact = c.empty<float>(n), y_fast = c.empty<float>(n);
    uint32_t cubes = uint32_t((n + 255) / 256);
    auto exact = [&] { launch<MathHeavy<false>>(c, CubeCount{cubes}, CubeDim{256}, 1, x, y_exact); };
    auto fast = [&] { launch<MathHeavy<true>>(c, CubeCount{cubes}, CubeDim{256}, 1, x, y_fast); };
    exact();
    fast();
    double exact_ms = median_ms(c, 5, gpu ? 20 : 2, exact), fast_ms = median_ms(c, 5, gpu ? 20 : 2, fast);
    std::vector<float> got_exact = c.read<float>(y_exact), got_fast = c.read<float>(y_fast);
    double err_exact = 0, err_fast = 0;
    for (size_t i = 0; i < n; i += gpu ? 61 : 1) {
      double want = math_heavy_reference(xs[i]);
      err_exact = std::max(err_exact, std::fabs(double(got_exact[i]) - want));
      err_fast = std::max(err_fast, std::fabs(double(got_fast[i]) - want));
    }
    if (std::isnan(got_exact[0]) || std::isnan(got_fast[0])) err_exact = err_fast = NAN;
    std::string size =
        std::to_string(n >> 10) + "K elements x " + std::to_string(MathHeavy<false>::kRounds) + " rounds";
    rows.push_back({"math_heavy f32 exact, " + size, "ms", exact_ms, "", NAN, false, NAN});
    // The CPU is exact either way: its ratio is noise, with no target.
    rows.push_back({"math_heavy f32 fast math, " + size, "ms", fast_ms, "exact", exact_ms, false, gpu ? 1.0 : NAN});
    // Errors against the reference; the bounds are the ones docs/decisions/015-fast-math.md gives.
    rows.push_back({"math_heavy exact, max abs error", "", err_exact, "", NAN, false, 1e-5});
    rows.push_back({"math_heavy fast math, max abs error", "", err_fast, "", NAN, false, 1e-4});
  }
  // Host time of a cached launch (a tiny kernel, like the raw cuLaunchKernel loop).
  if (wanted("launch")) {
    Handle y = c.upload(std::vector<float>(1024, 0.0f));
    auto run = [&] { launch<Tiny>(c, CubeCount{4}, CubeDim{256}, 1, 1.0f, y); };
    for (int i = 0; i < 1000; ++i) run();
    c.sync();
    int n = gpu ? 20000 : 2000;
    auto t0 = clock_type::now();
    for (int i = 0; i < n; ++i) run();
    c.sync();
    double us = ms_since(t0) * 1000.0 / n;
    rows.push_back({"cached launch, host time", "us", us, "cuLaunchKernel",
                    peer.count("culaunch_us") ? peer["culaunch_us"] : NAN, false, 1.3});
  }
  // First launch of a new kernel beyond the raw NVRTC compile of the same source, and a disk
  // cache hit in a new process.
  if (gpu && wanted("launch")) {
    // Five kernels new to this process and to the (fresh) disk cache: each first launch traces,
    // passes, emits, misses the disk cache, compiles with NVRTC, stores, loads and launches. kiln's
    // share is the launch's time less the time NVRTC spent compiling that very source during it.
    int64_t base = int64_t(std::chrono::system_clock::now().time_since_epoch().count() & 0xffffffff) * 16;
    Handle y = c.upload(std::vector<float>(1024, 1.0f));
    std::vector<double> overhead, nvrtc;
    for (int k = 0; k < 5; ++k) {
      double nvrtc0 = nvrtc_compile_milliseconds();
      auto t0 = clock_type::now();
      launch<Fresh>(c, CubeCount{4}, CubeDim{256}, 1, y, comptime(int64_t(base + k)));
      c.sync();
      double total = ms_since(t0), compile = nvrtc_compile_milliseconds() - nvrtc0;
      overhead.push_back(total - compile);
      nvrtc.push_back(compile);
      if (std::getenv("KILN_BENCH_VERBOSE"))
        std::printf("fresh %d: first launch %.3f ms, NVRTC %.3f ms\n", k, total, compile);
    }
    std::sort(overhead.begin(), overhead.end());
    std::sort(nvrtc.begin(), nvrtc.end());
    // The NVRTC time a row of its own: a row's name holds no measurement, so that runs compare.
    rows.push_back({"first launch beyond NVRTC (median of 5)", "ms", overhead[2], "", NAN, false, 2.0});
    rows.push_back({"first launch, NVRTC's compile (median of 5)", "ms", nvrtc[2], "", NAN, false, NAN});
    // A new process launching kernels this one compiled: they come from the disk cache.
    char self[4096] = {};
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    double hit_ms = NAN, second_hit_ms = NAN;
    if (len > 0) {
      std::string cmd = std::string(self, size_t(len)) + " bench --child-disk-hit " + std::to_string(base + 2);
      if (FILE* p = popen(cmd.c_str(), "r")) {
        std::map<std::string, double> child;
        char line[256];
        std::string all;
        while (std::fgets(line, sizeof line, p)) all += line;
        pclose(p);
        std::istringstream ss(all);
        std::string key;
        double v;
        while (ss >> key >> v) child[key] = v;
        hit_ms = child.count("disk_hit_first_launch_ms") ? child["disk_hit_first_launch_ms"] : NAN;
        second_hit_ms = child.count("disk_hit_second_launch_ms") ? child["disk_hit_second_launch_ms"] : NAN;
      }
    }
    rows.push_back({"disk cache hit, first launch in a new process", "ms", hit_ms, "", NAN, false, 2.0});
    rows.push_back({"disk cache hit, second launch in that process", "ms", second_hit_ms, "", NAN, false, 2.0});
  }
  if (wanted("tile")) tile_benchmarks(c, gpu, peer, rows);
  // The tensor group, or parts of it.
  tensor_benchmarks(c, gpu, peer, rows,
                    [&](const std::string& part) { return wanted("tensor") || wanted("tensor." + part); });
  std::error_code ec;
  std::filesystem::remove_all(cache_dir, ec);

  std::printf("%-62s %12s %14s %12s %8s %8s\n", "benchmark", "kiln", "peer", "peer value", "ratio", "target");
  std::string js = "{\n  \"device\": \"" + device.info().name + "\",\n  \"rows\": [\n";
  int missed = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    double ratio = std::isnan(r.peer) ? NAN : r.kiln / r.peer;
    // A target against a peer whose figure is missing can be neither met nor missed.
    const bool unjudged = std::isnan(r.peer) && !r.peer_name.empty();
    bool ok = std::isnan(r.target) || unjudged ? true
              : !std::isnan(ratio)             ? (r.higher_is_better ? ratio >= r.target : ratio <= r.target)
                                               : (r.higher_is_better ? r.kiln >= r.target : r.kiln <= r.target);
    if (!ok) ++missed;
    // Errors are small numbers: those print in scientific notation.
    bool tiny = r.kiln != 0 && std::fabs(r.kiln) < 0.01;
    char target[32], figure[32];
    std::snprintf(target, sizeof target, r.target < 0.01 ? "%s%.0e" : "%s%.2f",
                  r.higher_is_better ? ">=" : "<=", r.target);
    if (std::isnan(r.target)) target[0] = 0;
    std::snprintf(figure, sizeof figure, tiny ? "%8.1e" : "%8.2f", r.kiln);
    std::printf("%-62s %s %-3s %14s %12.2f %8.3f %8s %s\n", r.what.c_str(), figure, r.unit.c_str(), r.peer_name.c_str(),
                r.peer, ratio, target,
                unjudged               ? "(no peer figure)"
                : std::isnan(r.target) ? ""
                : ok                   ? "met"
                                       : "MISSED");
    auto num = [](double v) {
      if (std::isnan(v)) return std::string("null");
      char b[32];
      std::snprintf(b, sizeof b, "%.6g", v);
      return std::string(b);
    };
    js += "    {\"what\": \"" + r.what + "\", \"unit\": \"" + r.unit + "\", \"kiln\": " + num(r.kiln) +
          ", \"peer\": \"" + r.peer_name + "\", \"peer_value\": " + num(r.peer) + ", \"ratio\": " + num(ratio) +
          ", \"target\": \"" + target + "\", \"met\": " +
          (unjudged && !std::isnan(r.target) ? "null"
           : ok                              ? "true"
                                             : "false") +
          "}" + (i + 1 < rows.size() ? "," : "") + "\n";
  }
  js += "  ],\n  \"peers\": {";
  bool first = true;
  for (const auto& [k, v] : peer) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s\n    \"%s\": %.6g", first ? "" : ",", k.c_str(), v);
    js += buf;
    first = false;
  }
  js += "\n  }\n}\n";
  if (!json.empty()) {
    std::ofstream f(json);
    f << js;
  }
  // A missed target is a failure a script should see (the table and the JSON are complete first).
  if (missed > 0) {
    std::fprintf(stderr, "kiln bench: %d target(s) missed\n", missed);
    return 3;
  }
  return 0;
}

}  // namespace kiln::tool
