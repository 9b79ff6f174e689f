// kiln demo: runs every gallery kernel on a device, checks it against its host reference and
// prints a table. Exit status 1 when a check fails.
#include <cstdio>

#include "commands.h"
#include "gallery.h"
#include "kiln/runtime.h"

namespace kiln::tool {

int demo(const Args& args) {
  const std::string usage = "kiln demo [--device D]";
  Device device = Device::default_device();
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--device" && i + 1 < args.size()) device = Device::parse(args[++i]);
    else usage_error("unknown option " + args[i], usage);
  }
  Client client = device.client();
  std::printf("%-16s %-8s %-6s %11s  %s\n", "kernel", "device", "check", "time", "what");
  int failed = 0;
  for (const gallery::Entry& e : gallery::entries()) {
    gallery::DemoResult r;
    try {
      r = e.demo(client);
    } catch (const Error& err) {
      r.ok = false;
      r.detail = err.what();
    }
    failed += r.ok ? 0 : 1;
    std::printf("%-16s %-8s %-6s %8.3f ms  %s\n", std::string(e.name).c_str(), device.name().c_str(),
                r.ok ? "ok" : "FAIL", r.ms, r.detail.c_str());
  }
  if (failed) std::printf("%d of %zu kernels failed their check\n", failed, gallery::entries().size());
  return failed ? 1 : 0;
}

}  // namespace kiln::tool
