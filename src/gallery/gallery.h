// The gallery: named kernels that `kiln dump` prints and `kiln demo` runs and checks. Each entry
// knows how to trace its kernel for dump options and how to run it against a host reference.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/kernel.h"
#include "kiln/runtime/client.h"

namespace kiln::gallery {

struct DumpOptions {
  ir::ExecMode mode = ir::ExecMode::Checked;
  ir::Target target;  // a tile program's units are chosen for it (Target::Kind::Any: every target's count)
  int vector = 0;     // 0: the entry's default
  std::map<std::string, std::string> comptime;  // NAME -> VALUE from --comptime NAME=VALUE
};

struct DemoResult {
  bool ok = false;
  std::string detail;  // what was checked, or the first mismatch
  double ms = 0;       // one warm launch (after a first launch that compiles), synchronised
};

struct Entry {
  std::string_view name;
  std::string_view summary;
  std::function<ir::Kernel(const DumpOptions&)> define;
  std::function<DemoResult(const Client&)> demo;
};

const std::vector<Entry>& entries();
// nullptr when no entry has this name.
const Entry* find(std::string_view name);

}  // namespace kiln::gallery
