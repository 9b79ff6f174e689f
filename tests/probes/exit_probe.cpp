// A program that opens a device and exits at once, for the exit loop (exit_loop.sh): a process
// that opened a GPU once crashed in its exit handlers (decision 010), and only short processes
// showed it. Usage: exit_probe open|launch|keep DEVICE [--no-check]
//   open    makes the device's client and returns;
//   launch  also uploads 1000 numbers, launches one kernel, reads the result back and checks it
//           (unless --no-check: the fake driver runs no kernels);
//   keep    as launch, and keeps the client and the handle in the program's own statics, made
//           before kiln's, so that they are destroyed after kiln's device registry.
// Exit status: 0, or 2 for bad usage, 3 for a wrong result, 4 for a kiln::Error, 5 when the
// device (or, for a launch on CUDA, NVRTC) is unavailable on this machine.
#include <cstdio>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include "kiln/kiln.h"

using namespace kiln;

namespace {

struct AddOne {
  static constexpr std::string_view name = "exit_probe_add_one";
  void operator()(Slice<float> y) const {
    If(absolute_pos() < y.len(), [&] { y[absolute_pos()] += 1.0f; });
  }
};

// Made before main, so destroyed after every static kiln makes while the program runs.
std::optional<Client> g_kept_client;
Handle g_kept_handle;

}  // namespace

int main(int argc, char** argv) try {
  std::string_view mode = argc >= 2 ? argv[1] : "";
  if (argc < 3 || (mode != "open" && mode != "launch" && mode != "keep")) {
    std::fprintf(stderr, "usage: exit_probe open|launch|keep DEVICE [--no-check]\n");
    return 2;
  }
  bool check = !(argc > 3 && std::strcmp(argv[3], "--no-check") == 0);
  Client client = Device::parse(argv[2]).client();
  if (mode == "open") return 0;
  std::vector<float> host(1000);
  for (size_t i = 0; i < host.size(); ++i) host[i] = float(i) * 0.5f;
  Handle y = client.upload(host);
  launch<AddOne>(client, CubeCount{4}, CubeDim{256}, 1, y);
  std::vector<float> out = client.read<float>(y);
  if (mode == "keep") {
    g_kept_client = client;
    g_kept_handle = y;
  }
  for (size_t i = 0; check && i < out.size(); ++i) {
    if (out[i] != host[i] + 1.0f) {
      std::fprintf(stderr, "exit_probe: element %zu is %g, expected %g\n", i, double(out[i]), double(host[i] + 1.0f));
      return 3;
    }
  }
  return 0;
} catch (const kiln::Error& e) {
  std::fprintf(stderr, "exit_probe: %s\n", e.what());
  return e.kind() == "device.unavailable" ? 5 : 4;
}
