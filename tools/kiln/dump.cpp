// kiln dump: prints a gallery kernel's IR (a C++ kernel's or a tile program's) at a stage of the
// pipeline, compiled for a target.
#include <cstdio>

#include "commands.h"
#include "gallery.h"
#include "kiln/error.h"
#include "kiln/ir/text.h"
#include "kiln/passes/passes.h"

namespace kiln::tool {

int dump(const Args& args) {
  const std::string usage =
      "kiln dump KERNEL [--comptime NAME=VALUE] [--mode checked|unchecked] [--vector N] "
      "[--target any|cpu|sm_NN[a]] [--stage traced|final|PASS] [--op-numbers]";
  gallery::DumpOptions o;
  std::string kernel, stage = "final";
  ir::PrintOptions print;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) usage_error(a + " needs a value", usage);
      return args[++i];
    };
    if (a == "--comptime") {
      const std::string& kv = value();
      size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) usage_error("--comptime takes NAME=VALUE, not '" + kv + "'", usage);
      o.comptime[kv.substr(0, eq)] = kv.substr(eq + 1);
    } else if (a == "--mode") {
      const std::string& m = value();
      if (m == "checked") o.mode = ir::ExecMode::Checked;
      else if (m == "unchecked") o.mode = ir::ExecMode::Unchecked;
      else usage_error("--mode is checked or unchecked, not '" + m + "'", usage);
    } else if (a == "--vector") {
      const std::string& v = value();
      o.vector = std::atoi(v.c_str());
      if (o.vector != 1 && o.vector != 2 && o.vector != 4 && o.vector != 8 && o.vector != 16) {
        usage_error("--vector is 1, 2, 4, 8 or 16, not '" + v + "'", usage);
      }
    } else if (a == "--target") {
      const std::string& t = value();
      if (!ir::parse_target(t, o.target))
        usage_error("--target is any, cpu or sm_NN[a] (sm_90a), not '" + t + "'", usage);
    } else if (a == "--stage") {
      stage = value();
    } else if (a == "--op-numbers") {
      print.op_numbers = true;
    } else if (!a.empty() && a[0] == '-') {
      usage_error("unknown option " + a, usage);
    } else if (kernel.empty()) {
      kernel = a;
    } else {
      usage_error("one kernel at a time ('" + kernel + "' and '" + a + "')", usage);
    }
  }
  if (kernel.empty()) usage_error("which kernel?", usage);
  const gallery::Entry* e = gallery::find(kernel);
  if (!e) {
    std::string names;
    for (const gallery::Entry& g : gallery::entries()) names += (names.empty() ? "" : ", ") + std::string(g.name);
    usage_error("no gallery kernel is named '" + kernel + "'; kernels: " + names, usage);
  }
  ir::Kernel k = e->define(o);
  passes::PipelineOptions p;
  p.verify_each = true;
  p.target = o.target;
  p.stop_after = stage == "final" ? std::string_view() : std::string_view(stage);
  passes::run_pipeline(k, p);
  std::fputs(ir::print(k, print).c_str(), stdout);
  return 0;
}

}  // namespace kiln::tool
