// The runtime's extension surface (kiln/runtime/extension.h), as a layer over the runtime uses it:
// runners of held-back work that Client::sync runs first, and the launch's number conversion.
#include "kiln/runtime/extension.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>

#include "kiln/kiln.h"

using namespace kiln;

namespace {

// What the runners saw: the client they were asked to run for, how often, and whether to throw.
std::atomic<uint64_t> g_watched{0};
std::atomic<int> g_runs{0}, g_other_runs{0};
std::atomic<bool> g_throw{false};

void counting_runner(uint64_t client_id) {
  if (client_id != g_watched.load()) return;
  g_runs.fetch_add(1);
}

// A second layer's runner: both run at each sync; this one may fail.
void failing_runner(uint64_t client_id) {
  if (client_id != g_watched.load()) return;
  g_other_runs.fetch_add(1);
  if (g_throw.load()) throw Error("test.deferred", "held-back work failed");
}

TEST(RuntimeExtension, SyncRunsEveryRegisteredRunnerForItsClient) {
  Client c = Device::cpu().client(), other = Device::cpu().client();
  g_watched = c.id();
  runtime::register_deferred_runner(&counting_runner);
  runtime::register_deferred_runner(&counting_runner);  // again: still one
  runtime::register_deferred_runner(&failing_runner);
  g_runs = 0, g_other_runs = 0;
  c.sync();
  EXPECT_EQ(g_runs.load(), 1) << "a runner registered twice runs once";
  EXPECT_EQ(g_other_runs.load(), 1);
  other.sync();  // runs for `other`'s id, which these runners ignore
  EXPECT_EQ(g_runs.load(), 1);

  // A runner that throws: the others still run, sync still waits, and the error comes after.
  Handle h = c.upload(std::vector<float>{1, 2, 3});
  g_throw = true;
  try {
    c.sync();
    ADD_FAILURE() << "sync did not rethrow the runner's error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "test.deferred");
  }
  g_throw = false;
  EXPECT_EQ(g_runs.load(), 2);
  EXPECT_EQ(g_other_runs.load(), 2);
  EXPECT_EQ(c.read<float>(h), (std::vector<float>{1, 2, 3}));
  g_watched = 0;
}

TEST(RuntimeExtension, ConvertScalarKeepsValuesOrRefuses) {
  ScalarValue out;
  ASSERT_TRUE(runtime::convert_scalar(ScalarValue::of(int32_t(200)), ir::Scalar::U8, out));
  EXPECT_EQ(out.type, ir::Scalar::U8);
  EXPECT_EQ(out.bits[0], 200);
  EXPECT_FALSE(runtime::convert_scalar(ScalarValue::of(int32_t(300)), ir::Scalar::U8, out));
  EXPECT_FALSE(runtime::convert_scalar(ScalarValue::of(2.5), ir::Scalar::I32, out));
  ASSERT_TRUE(runtime::convert_scalar(ScalarValue::of(2.5), ir::Scalar::F16, out));
  f16 h;
  std::memcpy(&h, out.bits.data(), sizeof h);
  EXPECT_EQ(float(h), 2.5f);
  EXPECT_FALSE(runtime::convert_scalar(ScalarValue::of(1.0), ir::Scalar::Bool, out));
}

}  // namespace
