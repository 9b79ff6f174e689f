// kiln: the command-line tool. `kiln dump`, `kiln info`, `kiln demo`.
#include <cstdio>
#include <cstring>

#include "commands.h"
#include "kiln/error.h"

namespace {

const char* kUsage =
    "usage: kiln COMMAND [ARGS]\n"
    "  dump KERNEL [--comptime NAME=VALUE] [--mode checked|unchecked] [--vector N] [--stage traced|final|PASS]\n"
    "              [--target any|cpu|sm_NN[a]] [--op-numbers]\n"
    "                                  print a gallery kernel's IR (C++ kernels and tile programs)\n"
    "  info                            list devices and their facts\n"
    "  demo [--device D]               run each gallery kernel, check it against its host reference\n"
    "  cache path|ls|clear             the on-disk cache of compiled kernels\n"
    "  bench [--device D] [--peers FILE,...] [--json FILE]\n"
    "                                  benchmarks beside the peers' figures measured in the same run\n";

}  // namespace

namespace kiln::tool {

void usage_error(const std::string& what, const std::string& usage) {
  throw Error("tool.bad_option", what + "\nusage: " + usage);
}

}  // namespace kiln::tool

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  std::string command = argv[1];
  kiln::tool::Args args(argv + 2, argv + argc);
  try {
    if (command == "dump") return kiln::tool::dump(args);
    if (command == "info") return kiln::tool::info(args);
    if (command == "demo") return kiln::tool::demo(args);
    if (command == "cache") return kiln::tool::cache(args);
    if (command == "bench") return kiln::tool::bench(args);
    std::fprintf(stderr, "kiln: unknown command '%s'\n%s", command.c_str(), kUsage);
    return 2;
  } catch (const kiln::Error& e) {
    std::fprintf(stderr, "kiln %s: %s\n", command.c_str(), e.what());
    return e.kind() == "tool.bad_option" ? 2 : 1;
  }
}
