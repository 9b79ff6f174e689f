// The mbarrier ops on the CPU backend (barrier.cpp): a phase completes when its arrivals and its
// awaited bytes are all in, the parity flips and the arrivals start again; try_wait tells whether
// the phase of a parity has completed; and a barrier that cannot complete is an error, not a hang:
// barrier.deadlock (arrivals that never come), barrier.expect_tx (bytes announced and landed that
// differ), barrier.divergent (arrivals from units the lockstep cube cannot run meanwhile), with the
// buffers the launch wrote put back; barrier.uninitialised, barrier.count, barrier.arrivals,
// bounds.out_of_range. A try_wait that is not a wait loop's condition only tells.
#include <gtest/gtest.h>

#include "cpu_test_util.h"

namespace kiln::cpu::testing {
namespace {

// 64 units. Unit 0 sets barrier 1 up for 64 arrivals; then, twice: each unit records whether the
// phase of parity 0 and of parity 1 have completed (into out[u], bit 0 and bit 1), all arrive,
// and each records again (bits 2, 3). Round one: nothing, then parity 0 done. Round two: parity
// 0 still done (the current phase is 1's), then parity 1 done and 0 not (phase 2 has parity 0).
const char* kPhases = R"(
kernel @phases(%out: buffer<u32, rw>) {cube_dim = [64, 1, 1], mode = unchecked, address = u32, vector = 1} {
  %bars = shared.alloc : shared<barrier, 2>
  %u = builtin.unit_pos : u32
  %z = const 0 : u32
  %one = const 1 : u32
  %two = const 2 : u32
  %four = const 4 : u32
  %eight = const 8 : u32
  %n = const 64 : u32
  %first = cmp.eq %u, %z : bool
  if %first {
    mbarrier.init %bars, %one, %n
  }
  sync.cube
  for %z, %two, %one (%round: u32) {
    %a = mbarrier.try_wait %bars, %one, %z : bool
    %b = mbarrier.try_wait %bars, %one, %one : bool
    mbarrier.arrive %bars, %one
    %c = mbarrier.try_wait %bars, %one, %z : bool
    %d = mbarrier.try_wait %bars, %one, %one : bool
    %a1 = select %a, %one, %z : u32
    %b1 = select %b, %two, %z : u32
    %c1 = select %c, %four, %z : u32
    %d1 = select %d, %eight, %z : u32
    %ab = or %a1, %b1 : u32
    %cd = or %c1, %d1 : u32
    %bits = or %ab, %cd : u32
    %sixteen = const 16 : u32
    %shift = mul %round, %sixteen : u32
    %moved = shl %bits, %shift : u32
    %old = load %out, %u : u32
    %new = or %old, %moved : u32
    store %out, %u, %new
    sync.cube
  }
}
)";

TEST(Mbarrier, PhasesCompleteWithTheirArrivalsAndFlipTheParity) {
  ir::Kernel k = parse_verified(kPhases);
  Outcome o = run_both(k, {Arg::buffer(std::vector<uint32_t>(64, 0))}, {3, 1, 1});
  ASSERT_EQ(o.error_kind, "") << o.error_message;
  const std::vector<uint32_t> out = as<uint32_t>(o.after[0]);
  for (uint32_t u = 0; u < 64; ++u) {
    // Round one: before the arrivals neither parity's phase is done (parity 1 names the phase
    // before the first, which never ran: it reads as done, as on a GPU); after, parity 0's is.
    // Round two: before, parity 0's phase is done; after, parity 1's, and 0 names the new phase.
    const uint32_t round_one = uint32_t(0b0110), round_two = uint32_t(0b1001);
    // Units arrive in unit order: unit 63's arrival completes the phase, so every unit's record
    // after the arrive op sees it complete.
    EXPECT_EQ(out[u], round_one | (round_two << 16)) << "unit " << u;
  }
}

// One unit announces 128 bytes with its arrival; the phase then waits for them: 64 bytes land,
// it still waits; 64 more, it completes. Bytes may also land before they are announced.
const char* kBytes = R"(
kernel @bytes(%out: buffer<u32, rw>) {cube_dim = [1, 1, 1], mode = unchecked, address = u32, vector = 1} {
  %bars = shared.alloc : shared<barrier, 1>
  %z = const 0 : u32
  %one = const 1 : u32
  %b64 = const 64 : u32
  %b128 = const 128 : u32
  mbarrier.init %bars, %z, %one
  mbarrier.arrive_expect_tx %bars, %z, %b128
  %w0 = mbarrier.try_wait %bars, %z, %z : bool
  mbarrier.complete_tx %bars, %z, %b64
  %w1 = mbarrier.try_wait %bars, %z, %z : bool
  mbarrier.complete_tx %bars, %z, %b64
  %w2 = mbarrier.try_wait %bars, %z, %z : bool
  mbarrier.complete_tx %bars, %z, %b64
  mbarrier.expect_tx %bars, %z, %b64
  %w3 = mbarrier.try_wait %bars, %z, %one : bool
  mbarrier.arrive %bars, %z
  %w4 = mbarrier.try_wait %bars, %z, %one : bool
  fence.proxy.async
  %r0 = select %w0, %one, %z : u32
  %r1 = select %w1, %one, %z : u32
  %r2 = select %w2, %one, %z : u32
  %r3 = select %w3, %one, %z : u32
  %r4 = select %w4, %one, %z : u32
  %i1 = const 1 : u32
  %i2 = const 2 : u32
  %i3 = const 3 : u32
  %i4 = const 4 : u32
  store %out, %z, %r0
  store %out, %i1, %r1
  store %out, %i2, %r2
  store %out, %i3, %r3
  store %out, %i4, %r4
}
)";

TEST(Mbarrier, APhaseWaitsForTheBytesItExpects) {
  ir::Kernel k = parse_verified(kBytes);
  Outcome o = run_both(k, {Arg::buffer(std::vector<uint32_t>(5, 7))}, {1, 1, 1});
  ASSERT_EQ(o.error_kind, "") << o.error_message;
  EXPECT_EQ(as<uint32_t>(o.after[0]), (std::vector<uint32_t>{0, 0, 1, 0, 1}));
}

// The kernels of the errors: `BODY` after unit 0 has set barrier 0 up for two arrivals, with out
// written first (a launch that fails puts it back).
std::string failing(const std::string& body, int units = 32) {
  return R"(
kernel @failing(%out: buffer<u32, rw>) {cube_dim = [)" +
         std::to_string(units) + R"(, 1, 1], mode = unchecked, address = u32, vector = 1} {
  %bars = shared.alloc : shared<barrier, 2>
  %u = builtin.unit_pos : u32
  %z = const 0 : u32
  %one = const 1 : u32
  %two = const 2 : u32
  %b64 = const 64 : u32
  %b32 = const 32 : u32
  store %out, %u, %two
  %first = cmp.eq %u, %z : bool
)" + body +
         "}\n";
}

const char* kInitTwo = "  if %first {\n    mbarrier.init %bars, %z, %two\n  }\n  sync.cube\n";
const char* kWaitLoop =
    "  while {\n    %w = mbarrier.try_wait %bars, %z, %z : bool\n    %nw = not %w : bool\n    condition %nw\n  } do "
    "{\n  }\n";

Outcome run_failing(const std::string& body) {
  ir::Kernel k = parse_verified(failing(body));
  return run_both(k, {Arg::buffer(std::vector<uint32_t>(32, 9))}, {2, 1, 1});
}

TEST(Mbarrier, AWaitNoArrivalCanEndIsADeadlock) {
  // Only unit 0 arrives; the phase needs two arrivals.
  Outcome o = run_failing(std::string(kInitTwo) + "  if %first {\n    mbarrier.arrive %bars, %z\n  }\n" + kWaitLoop);
  EXPECT_EQ(o.error_kind, "barrier.deadlock");
  EXPECT_NE(
      o.error_message.find(
          "barrier 0 of the shared array of op #1 never completes its phase: phase parity 0, 1 of 2 arrivals to come"),
      std::string::npos)
      << o.error_message;
  EXPECT_EQ(as<uint32_t>(o.after[0]), std::vector<uint32_t>(32, 9)) << "the buffer the launch wrote is put back";
}

TEST(Mbarrier, AWaitOnUnitsTheLockstepCubeCannotRunIsDivergent) {
  // Units 0-15 wait for the arrivals of units 16-31, which an else branch gives: a GPU runs both
  // sides; the lockstep cube runs the then branch first and cannot, and says so.
  Outcome o = run_failing(
      "  %sixteen = const 16 : u32\n  if %first {\n    mbarrier.init %bars, %z, %sixteen\n  }\n"
      "  sync.cube\n  %low = cmp.lt %u, %sixteen : bool\n  if %low {\n" +
      std::string(kWaitLoop) + "  } else {\n    mbarrier.arrive %bars, %z\n  }\n");
  EXPECT_EQ(o.error_kind, "barrier.divergent");
  EXPECT_NE(o.error_message.find("16 of the cube's 32 units (unit 16 of cube (0, 0, 0) the first) are elsewhere in the "
                                 "kernel"),
            std::string::npos)
      << o.error_message;
  EXPECT_EQ(as<uint32_t>(o.after[0]), std::vector<uint32_t>(32, 9));
}

TEST(Mbarrier, ATryWaitOutsideAWaitLoopOnlyTells) {
  // Twice with nothing changed between, not as a while's condition: a test, not a wait; it gives
  // false both times and the launch goes on.
  Outcome o = run_failing(std::string(kInitTwo) +
                          "  %t1 = mbarrier.try_wait %bars, %z, %z : bool\n"
                          "  %t2 = mbarrier.try_wait %bars, %z, %z : bool\n"
                          "  %both = or %t1, %t2 : bool\n  %r = select %both, %one, %z : u32\n  store %out, %u, %r\n");
  EXPECT_EQ(o.error_kind, "") << o.error_message;
  EXPECT_EQ(as<uint32_t>(o.after[0]), std::vector<uint32_t>(32, 0));
}

TEST(Mbarrier, BytesThatNeverLandAreAnExpectTxError) {
  // Both arrivals come, one announcing 64 bytes; 32 land.
  Outcome o =
      run_failing(std::string(kInitTwo) +
                  "  if %first {\n    mbarrier.arrive_expect_tx %bars, %z, %b64\n    mbarrier.arrive %bars, %z\n"
                  "    mbarrier.complete_tx %bars, %z, %b32\n  }\n" +
                  kWaitLoop);
  EXPECT_EQ(o.error_kind, "barrier.expect_tx");
  EXPECT_NE(o.error_message.find("0 of 2 arrivals to come, 32 bytes awaited, and every arrival is in"),
            std::string::npos)
      << o.error_message;
  EXPECT_EQ(as<uint32_t>(o.after[0]), std::vector<uint32_t>(32, 9));
}

TEST(Mbarrier, ABarrierNoInitSetUpIsRefused) {
  Outcome o = run_failing("  mbarrier.arrive %bars, %one\n");
  EXPECT_EQ(o.error_kind, "barrier.uninitialised");
  EXPECT_NE(o.error_message.find("barrier 1 of the shared array of op #1 has not been set up by mbarrier.init"),
            std::string::npos)
      << o.error_message;
  EXPECT_EQ(as<uint32_t>(o.after[0]), std::vector<uint32_t>(32, 9));
}

TEST(Mbarrier, CountsOutsideTheHardwaresRangeAreRefused) {
  Outcome zero = run_failing("  mbarrier.init %bars, %z, %z\n");
  EXPECT_EQ(zero.error_kind, "barrier.count");
  EXPECT_NE(zero.error_message.find("is given a count of 0 arrivals; a count is 1 to 1048575"), std::string::npos)
      << zero.error_message;
  Outcome big = run_failing(
      "  %big = const 1048576 : u32\n  if %first {\n    mbarrier.init %bars, %z, %one\n"
      "    mbarrier.expect_tx %bars, %z, %big\n  }\n");
  EXPECT_EQ(big.error_kind, "barrier.expect_tx");
  EXPECT_NE(big.error_message.find("would await 1048576 bytes"), std::string::npos) << big.error_message;
}

TEST(Mbarrier, AnArrivalPastThePhasesCountIsRefused) {
  // One arrival completes the arrivals (the phase still awaits 64 bytes); a second is one too many.
  Outcome o = run_failing(
      "  if %first {\n    mbarrier.init %bars, %z, %one\n    mbarrier.arrive_expect_tx %bars, %z, %b64\n"
      "    mbarrier.arrive %bars, %z\n  }\n");
  EXPECT_EQ(o.error_kind, "barrier.arrivals");
  EXPECT_NE(o.error_message.find("has all 1 arrivals of its phase and is awaiting bytes"), std::string::npos)
      << o.error_message;
}

TEST(Mbarrier, AnIndexPastTheArrayIsOutOfRange) {
  Outcome o = run_failing("  %far = const 2 : u32\n  mbarrier.init %bars, %far, %one\n");
  EXPECT_EQ(o.error_kind, "bounds.out_of_range");
  EXPECT_NE(o.error_message.find("index 2 is out of range of the shared array of op #1 (length 2)"), std::string::npos)
      << o.error_message;
}

}  // namespace
}  // namespace kiln::cpu::testing
