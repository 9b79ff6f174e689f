// What a program meets when a kernel faults on a device: fault_probe DEVICE launches, unchecked, a
// kernel that stores 16 GiB past its buffer, then synchronises, reads, and opens another client.
// On a GPU (or the stand-in driver told to fail cuStreamSynchronize) the fault must be reported
// once, as cuda.kernel_failed, and every later operation refused as cuda.device_lost. On the CPU
// the store is bounds.out_of_range before anything is written, and the client goes on.
// Prints what happened; exits 0 when it is what kiln promises, 1 when not, 5 when the device is
// unavailable here. A process of its own: a lost GPU context stays lost until the process ends.
#include <cstdio>
#include <string>
#include <vector>

#include "kiln/kiln.h"

using namespace kiln;

namespace {

struct StoreFarAway {
  static constexpr std::string_view name = "fault_probe_store_far_away";
  void operator()(Slice<float> y) const {
    If(absolute_pos() == 0u, [&] { y[0xfffffff0u] = 1.0f; });
  }
};

// Runs `fn` and returns the kind of the kiln::Error it throws ("" when none), printing it.
template <class Fn>
std::string kind_of(const char* what, Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    std::printf("%s: %s\n", what, e.what());
    return e.kind();
  }
  std::printf("%s: no error\n", what);
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fault_probe DEVICE\n");
    return 2;
  }
  Device device = Device::cpu();
  try {
    device = Device::parse(argv[1]);
  } catch (const Error& e) {
    std::printf("fault_probe: %s\n", e.what());
    return e.kind() == "device.unavailable" ? 5 : 1;
  }
  Client client = device.client();
  std::vector<float> host(256, 3.0f);
  Handle y = client.upload(host);
  bool ok = true;
  auto expect = [&](const std::string& got, const std::string& want) {
    if (got != want) {
      std::printf("  expected %s\n", want.empty() ? "no error" : want.c_str());
      ok = false;
    }
  };
  std::string first = kind_of("launch and sync", [&] {
    launch_unchecked<StoreFarAway>(client, CubeCount{1}, CubeDim{32}, 1, y);
    client.sync();
  });
  if (first == "device.unavailable") return 5;  // no NVRTC to compile the kernel with, here
  if (device.kind() == DeviceKind::Cpu) {
    expect(first, "bounds.out_of_range");
    expect(kind_of("read after",
                   [&] {
                     if (client.read<float>(y) != host) throw Error("probe.changed", "the buffer changed");
                   }),
           "");
  } else {
    // The fault may surface at the launch (a later launch) or at the sync: one report either way.
    expect(first, "cuda.kernel_failed");
    expect(kind_of("sync again", [&] { client.sync(); }), "cuda.device_lost");
    expect(kind_of("read", [&] { (void)client.read<float>(y); }), "cuda.device_lost");
    expect(kind_of("another client", [&] { (void)device.client(); }), "cuda.device_lost");
    expect(kind_of("a CPU client",
                   [&] {
                     Client cpu = Device::cpu().client();
                     if (cpu.read<float>(cpu.upload(host)) != host)
                       throw Error("probe.changed", "the CPU copy differs");
                   }),
           "");
  }
  std::printf("fault_probe on %s: %s\n", device.name().c_str(), ok ? "as promised" : "NOT as promised");
  return ok ? 0 : 1;
}
