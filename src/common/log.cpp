// Logging and dumps, configured by environment variables.
#include "common/log.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>

namespace kiln::common {

namespace {

struct LogConfig {
  unsigned channels = 0;
  FILE* out = stderr;
  std::mutex m;

  LogConfig() {
    const char* v = std::getenv("KILN_LOG");
    if (v) {
      std::string s(v);
      size_t start = 0;
      while (start <= s.size()) {
        size_t end = s.find(',', start);
        if (end == std::string::npos) end = s.size();
        std::string w = s.substr(start, end - start);
        if (w == "compile") channels |= unsigned(LogChannel::Compile);
        else if (w == "launch") channels |= unsigned(LogChannel::Launch);
        else if (w == "memory") channels |= unsigned(LogChannel::Memory);
        else if (w == "autotune") channels |= unsigned(LogChannel::Autotune);
        else if (w == "all") channels = ~0u;
        else if (!w.empty())
          std::fprintf(stderr, "kiln: KILN_LOG: unknown channel '%s' (compile, launch, memory, autotune, all)\n",
                       w.c_str());
        start = end + 1;
      }
    }
    if (const char* f = std::getenv("KILN_LOG_FILE")) {
      if (FILE* file = std::fopen(f, "a")) out = file;
    }
  }
};

// Never destroyed: objects torn down at exit may still log (decision 010).
LogConfig& config() {
  static LogConfig& c = *new LogConfig;
  return c;
}

const char* channel_name(LogChannel c) {
  switch (c) {
    case LogChannel::Compile: return "compile";
    case LogChannel::Launch: return "launch";
    case LogChannel::Memory: return "memory";
    case LogChannel::Autotune: return "autotune";
  }
  return "?";
}

}  // namespace

bool log_enabled(LogChannel c) { return (config().channels & unsigned(c)) != 0; }

void log(LogChannel c, const std::string& message) {
  LogConfig& cfg = config();
  if (!(cfg.channels & unsigned(c))) return;
  std::lock_guard lock(cfg.m);
  std::fprintf(cfg.out, "kiln[%s] %s\n", channel_name(c), message.c_str());
  std::fflush(cfg.out);
}

std::string cache_dir() {
  if (const char* d = std::getenv("KILN_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/kiln";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/kiln";
  return (std::filesystem::temp_directory_path() / "kiln-cache").string();
}

const std::optional<std::string>& dump_dir() {
  static const std::optional<std::string> dir = []() -> std::optional<std::string> {
    const char* v = std::getenv("KILN_DUMP");
    if (!v || !*v) return std::nullopt;
    std::error_code ec;
    std::filesystem::create_directories(v, ec);
    return std::string(v);
  }();
  return dir;
}

void dump_file(const std::string& file, std::string_view text) {
  const auto& dir = dump_dir();
  if (!dir) return;
  std::ofstream f(std::filesystem::path(*dir) / file, std::ios::binary);
  f.write(text.data(), std::streamsize(text.size()));
}

}  // namespace kiln::common
