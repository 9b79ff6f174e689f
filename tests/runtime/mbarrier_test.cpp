// The mbarrier ops from the kernel language (kiln/dsl/barrier.h): a cube that
// sets a barrier up, counts its units' arrivals and waits for the phase in a loop sees the data
// written before it; a wait that no arrival can end fails as barrier.deadlock, naming the kernel,
// the barrier and its state, with the output as it was (whichever cube fails first is named).
// The first runs on an sm_90a GPU too; the deadlock, which would hang a GPU, on the CPU alone.
#include <gtest/gtest.h>

#include "kiln/kiln.h"

using namespace kiln;

namespace {

// Each unit writes its number into shared memory and arrives; after the phase of parity 0
// completes, each unit reads its neighbour's number. Twice, the second round on parity 1, to show
// the barrier's next phase. `arrivals` is what init counts: the cube's units, or one more than
// come (a deadlock).
struct Neighbours {
  static constexpr std::string_view name = "neighbours";
  static constexpr std::array<std::string_view, 2> param_names{"out", "arrivals"};
  void operator()(Slice<uint32_t> out, Scalar<uint32_t> arrivals) const {
    SharedArray<Mbarrier> bars(1);
    SharedArray<uint32_t> numbers(64);
    If(unit_pos() == 0u, [&] { mbarrier_init(bars, 0u, arrivals); });
    sync_cube();
    for (uint32_t round = 0; round < 2; ++round) {
      numbers[unit_pos()] = unit_pos() * 10u + round;
      mbarrier_arrive(bars, 0u);
      mbarrier_wait(bars, 0u, round);
      out[absolute_pos() * 2u + round] = numbers[(unit_pos() + 1u) % 64u];
      sync_cube();
    }
  }
};

// On every device that runs mbarriers: the CPU, and an sm_90a GPU (H100, H200).
TEST(MbarrierDsl, ArrivalsCompleteAPhaseAndTheWaitSeesWhatCameBefore) {
  int ran = 0;
  for (const Device& dev : Device::all()) {
    if (dev.kind() == DeviceKind::Cuda && dev.info().architecture != "sm_90a") continue;
    ++ran;
    Client c = dev.client();
    Handle out = c.upload(std::vector<uint32_t>(2 * 128, 7));
    launch<Neighbours>(c, CubeCount{2}, CubeDim{64}, 1, out, 64u);
    std::vector<uint32_t> got = c.read<uint32_t>(out);
    for (uint32_t cube = 0; cube < 2; ++cube) {
      for (uint32_t u = 0; u < 64; ++u) {
        for (uint32_t round = 0; round < 2; ++round) {
          EXPECT_EQ(got[(cube * 64 + u) * 2 + round], ((u + 1) % 64) * 10 + round)
              << dev.name() << " cube " << cube << " unit " << u;
        }
      }
    }
  }
  EXPECT_GE(ran, 1);
}

TEST(MbarrierDsl, AWaitNoArrivalCanEndFailsAndLeavesTheOutput) {
  Client c = Device::cpu().client();
  const std::vector<uint32_t> before(2 * 128, 7);
  Handle out = c.upload(before);
  try {
    launch<Neighbours>(c, CubeCount{2}, CubeDim{64}, 1, out, 65u);
    FAIL() << "expected barrier.deadlock";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "barrier.deadlock");
    EXPECT_NE(e.message().find("kernel 'neighbours' (checked): op #15 'mbarrier.try_wait' in unit 0 of cube ("),
              std::string::npos)
        << e.message();
    EXPECT_NE(e.message().find("barrier 0 of the shared array of op #3 never completes its phase: phase parity 0, 1 of "
                               "65 arrivals to come, 0 bytes awaited"),
              std::string::npos)
        << e.message();
  }
  EXPECT_EQ(c.read<uint32_t>(out), before);
}

}  // namespace
