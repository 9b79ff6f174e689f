// Autotune's result files: {"format": ..., "device": ..., "results": {key: {"candidates":
// checksum, "best": name, "seconds": {name: median or null for a failure}}}}.
#include "autotune/store.h"

#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "autotune/json.h"
#include "common/hash.h"
#include "common/key.h"
#include "common/log.h"

namespace kiln::autotune {

namespace fs = std::filesystem;

namespace {

constexpr const char* kFormat = "kiln autotune results 1";

// Locale-independent (a program that set LC_NUMERIC must not write "1,5e-05").
std::string number(double s) {
  if (!std::isfinite(s)) return "null";
  char b[32];
  auto r = std::to_chars(b, b + sizeof b, s, std::chars_format::general, 6);
  return std::string(b, r.ptr);
}

}  // namespace

std::string device_tag(std::string_view runtime, const DeviceInfo& info) {
  // The device's key as text ("cuda{device=NVIDIA H200, architecture=sm_90a}"), made fit for a file name.
  std::string tag = device_key_text(runtime, info);
  for (char& c : tag) {
    bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
    if (!safe) c = '_';
  }
  return tag;
}

std::string device_key_text(std::string_view runtime, const DeviceInfo& info) {
  return common::KeyText(runtime)("device", info.name)("architecture", info.architecture).text();
}

// Each name and its line end ("name\n"), hashed in turn: FNV-1a runs on where it stopped.
std::string candidate_checksum(std::span<const Candidate> candidates) {
  uint64_t h = common::fnv1a64(kFormat);
  for (const Candidate& c : candidates) h = common::fnv1a64("\n", common::fnv1a64(c.name, h));
  return common::hex16(h);
}

ResultFile::ResultFile(std::string tag)
    : tag_(std::move(tag)), path_((fs::path(common::cache_dir()) / "autotune" / (tag_ + ".json")).string()) {}

std::map<std::string, Result> ResultFile::read(std::string* why) const {
  std::map<std::string, Result> out;
  auto say = [&](const std::string& w) {
    if (why) *why = w;
    return std::map<std::string, Result>{};
  };
  std::ifstream f(path_, std::ios::binary);
  if (!f) return say("no file");
  std::stringstream text;
  text << f.rdbuf();
  std::optional<json::Value> doc = json::parse(text.str());
  if (!doc || doc->kind != json::Value::Kind::Object) return say("not JSON");
  const json::Value* format = doc->find("format");
  if (!format || format->string != kFormat) return say("another format");
  const json::Value* results = doc->find("results");
  if (!results || results->kind != json::Value::Kind::Object) return say("no results");
  for (const auto& [key, v] : results->members) {
    const json::Value* sum = v.find("candidates");
    const json::Value* best = v.find("best");
    if (!sum || !best || sum->kind != json::Value::Kind::String || best->kind != json::Value::Kind::String) continue;
    Result r{sum->string, best->string, {}};
    if (const json::Value* secs = v.find("seconds"); secs && secs->kind == json::Value::Kind::Object) {
      for (const auto& [name, s] : secs->members) {
        r.seconds.emplace_back(name, s.kind == json::Value::Kind::Number ? s.number : INFINITY);
      }
    }
    out[key] = std::move(r);
  }
  if (why) *why = "read";
  return out;
}

std::optional<Result> ResultFile::find(const std::string& key, std::string* why) const {
  std::map<std::string, Result> all = read(why);
  auto it = all.find(key);
  if (it == all.end()) {
    if (why && *why == "read") *why = "no entry";
    return std::nullopt;
  }
  return it->second;
}

bool ResultFile::put(const std::string& key, const Result& r) const {
  std::map<std::string, Result> all = read(nullptr);
  all[key] = r;
  std::string text =
      "{\n  \"format\": " + json::quote(kFormat) + ",\n  \"device\": " + json::quote(tag_) + ",\n  \"results\": {";
  bool first = true;
  for (const auto& [k, v] : all) {
    text += first ? "\n" : ",\n";
    first = false;
    text += "    " + json::quote(k) + ": {\"candidates\": " + json::quote(v.checksum) +
            ", \"best\": " + json::quote(v.best) + ", \"seconds\": {";
    for (size_t i = 0; i < v.seconds.size(); ++i) {
      text += (i ? ", " : "") + json::quote(v.seconds[i].first) + ": " + number(v.seconds[i].second);
    }
    text += "}}";
  }
  text += "\n  }\n}\n";
  std::error_code ec;
  fs::create_directories(fs::path(path_).parent_path(), ec);
  // A temporary of this process's own, renamed over the file: a reader never sees half of one.
  std::string tmp = path_ + ".tmp" + std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return false;
    f << text;
    if (!f.flush()) return false;
  }
  fs::rename(tmp, path_, ec);
  if (!ec) return true;
  fs::remove(tmp, ec);
  return false;
}

}  // namespace kiln::autotune
