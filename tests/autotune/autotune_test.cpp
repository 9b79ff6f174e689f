// Autotune on the CPU, whose device clock is the host's: candidates that sleep for known times,
// a results folder of the test's own, and what each call ran.
#include "kiln/autotune.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "autotune/json.h"
#include "autotune/store.h"
#include "kiln/runtime.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class Autotune : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kiln-autotune-test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    ::setenv("KILN_CACHE_DIR", dir_.c_str(), 1);
    ::unsetenv("KILN_AUTOTUNE");
    autotune::set_mode(std::nullopt);
    autotune::reset();
  }
  void TearDown() override {
    autotune::set_mode(std::nullopt);
    autotune::reset();
    ::unsetenv("KILN_CACHE_DIR");
    fs::remove_all(dir_);
  }

  // A candidate that sleeps `d` and notes its name in `ran`.
  autotune::Candidate sleeper(std::string name, std::chrono::microseconds d) {
    return {name, [this, name, d] {
              ran.push_back(name);
              std::this_thread::sleep_for(d);
            }};
  }
  std::string file_text() const {
    std::string tag = autotune::device_tag("cpu", client.device().info());
    std::ifstream f(dir_ / "autotune" / (tag + ".json"));
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  }

  Client client = Device::cpu().client();
  std::vector<std::string> ran;
  fs::path dir_;
  const autotune::Key key{"test_op", "f32 n1024"};
};

TEST_F(Autotune, PicksTheFastestAndRunsItLast) {
  std::vector<autotune::Candidate> c = {sleeper("slow", 4000us), sleeper("fast", 300us), sleeper("middle", 1500us)};
  EXPECT_EQ(autotune::run(client, key, c), 1u);
  ASSERT_FALSE(ran.empty());
  EXPECT_EQ(ran.back(), "fast");  // the op's output is the winner's
  EXPECT_EQ(autotune::stats().tunings, 1u);
  // The slow candidates are not timed as often as the winner: hopeless after one timed run.
  EXPECT_LT(std::count(ran.begin(), ran.end(), "slow"), std::count(ran.begin(), ran.end(), "fast"));
  std::string text = file_text();
  EXPECT_NE(text.find("\"test_op f32 n1024\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"best\": \"fast\""), std::string::npos) << text;
}

TEST_F(Autotune, ASecondCallRunsTheRememberedWinnerOnce) {
  std::vector<autotune::Candidate> c = {sleeper("slow", 3000us), sleeper("fast", 200us)};
  autotune::run(client, key, c);
  ran.clear();
  EXPECT_EQ(autotune::run(client, key, c), 1u);
  EXPECT_EQ(ran, std::vector<std::string>{"fast"});
  EXPECT_EQ(autotune::stats().memory_hits, 1u);
  EXPECT_EQ(autotune::stats().tunings, 1u);
}

TEST_F(Autotune, AFreshProcessReadsTheStoredResult) {
  std::vector<autotune::Candidate> c = {sleeper("slow", 3000us), sleeper("fast", 200us)};
  autotune::run(client, key, c);
  autotune::reset();  // what a new process knows
  ran.clear();
  EXPECT_EQ(autotune::run(client, key, c), 1u);
  EXPECT_EQ(ran, std::vector<std::string>{"fast"});
  EXPECT_EQ(autotune::stats().disk_hits, 1u);
  EXPECT_EQ(autotune::stats().tunings, 0u);
}

TEST_F(Autotune, AnotherCandidateSetTunesAgain) {
  std::vector<autotune::Candidate> c = {sleeper("slow", 3000us), sleeper("fast", 200us)};
  autotune::run(client, key, c);
  autotune::reset();
  c.push_back(sleeper("faster", 20us));
  EXPECT_EQ(autotune::run(client, key, c), 2u);
  EXPECT_EQ(autotune::stats().tunings, 1u);
  EXPECT_EQ(autotune::stats().disk_hits, 0u);
  // The same names in another order are another set too: the checksum is of the list.
  autotune::reset();
  std::swap(c[0], c[1]);
  autotune::run(client, key, c);
  EXPECT_EQ(autotune::stats().tunings, 1u);
}

TEST_F(Autotune, KeysAreTunedApart) {
  std::vector<autotune::Candidate> c = {sleeper("slow", 3000us), sleeper("fast", 200us)};
  autotune::run(client, key, c);
  autotune::run(client, autotune::Key{"test_op", "f32 n2048"}, c);
  EXPECT_EQ(autotune::stats().tunings, 2u);
  std::string text = file_text();
  EXPECT_NE(text.find("n1024"), std::string::npos);
  EXPECT_NE(text.find("n2048"), std::string::npos);
}

TEST_F(Autotune, AFailingCandidateIsInfinitelySlow) {
  std::vector<autotune::Candidate> c = {{"broken", [] { throw Error("launch.bad_dims", "too many units"); }},
                                        sleeper("works", 500us)};
  EXPECT_EQ(autotune::run(client, key, c), 1u);
  EXPECT_NE(file_text().find("\"broken\": null"), std::string::npos) << file_text();
}

TEST_F(Autotune, WhenEveryCandidateFailsTheFallbacksErrorIsThrown) {
  std::vector<autotune::Candidate> c = {{"a", [] { throw Error("launch.bad_dims", "a failed"); }},
                                        {"b", [] { throw Error("tensor.too_large", "b failed"); }}};
  try {
    autotune::run(client, key, c, 1);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "tensor.too_large");
  }
  EXPECT_EQ(autotune::stats().tunings, 0u);
}

TEST_F(Autotune, OffRunsTheFallbackUntimed) {
  autotune::set_mode(autotune::Mode::off);
  std::vector<autotune::Candidate> c = {sleeper("slow", 3000us), sleeper("fast", 200us)};
  EXPECT_EQ(autotune::run(client, key, c, 0), 0u);
  EXPECT_EQ(ran, std::vector<std::string>{"slow"});
  EXPECT_EQ(autotune::stats().untimed, 1u);
  EXPECT_FALSE(fs::exists(dir_ / "autotune"));
}

TEST_F(Autotune, TheEnvironmentChoosesTheMode) {
  ::setenv("KILN_AUTOTUNE", "off", 1);
  EXPECT_EQ(autotune::mode(), autotune::Mode::off);
  ::setenv("KILN_AUTOTUNE", "force", 1);
  EXPECT_EQ(autotune::mode(), autotune::Mode::force);
  ::setenv("KILN_AUTOTUNE", "sometimes", 1);
  try {
    autotune::mode();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "autotune.bad_mode");
    EXPECT_NE(std::string(e.what()).find("off, on or force"), std::string::npos) << e.what();
  }
  autotune::set_mode(autotune::Mode::on);  // an override wins over the environment
  EXPECT_EQ(autotune::mode(), autotune::Mode::on);
  ::unsetenv("KILN_AUTOTUNE");
}

TEST_F(Autotune, ASingleCandidateIsNotTimed) {
  std::vector<autotune::Candidate> c = {sleeper("only", 100us)};
  EXPECT_EQ(autotune::run(client, key, c), 0u);
  EXPECT_EQ(ran, std::vector<std::string>{"only"});
  EXPECT_EQ(autotune::stats().untimed, 1u);
}

TEST_F(Autotune, ForceTunesAgainOncePerProcess) {
  std::vector<autotune::Candidate> c = {sleeper("slow", 3000us), sleeper("fast", 200us)};
  autotune::run(client, key, c);
  autotune::reset();
  autotune::set_mode(autotune::Mode::force);
  autotune::run(client, key, c);  // the stored result is ignored
  EXPECT_EQ(autotune::stats().tunings, 1u);
  autotune::run(client, key, c);  // what it tuned in this process stands
  EXPECT_EQ(autotune::stats().tunings, 1u);
  EXPECT_EQ(autotune::stats().memory_hits, 1u);
}

TEST_F(Autotune, AnUnreadableFileIsTunedOverAndRewritten) {
  std::vector<autotune::Candidate> c = {sleeper("slow", 3000us), sleeper("fast", 200us)};
  autotune::run(client, key, c);
  std::string tag = autotune::device_tag("cpu", client.device().info());
  {
    std::ofstream f(dir_ / "autotune" / (tag + ".json"), std::ios::trunc);
    f << "{\"format\": \"kiln autotune results 1\", \"results\": {\"test_op f32 n1024\": {\"candidates\": ";  // cut
                                                                                                              // short
  }
  autotune::reset();
  EXPECT_EQ(autotune::run(client, key, c), 1u);
  EXPECT_EQ(autotune::stats().tunings, 1u);
  EXPECT_TRUE(autotune::json::parse(file_text()).has_value()) << file_text();
}

TEST_F(Autotune, AStoredWinnerMissingFromTheSetTunesAgain) {
  std::string tag = autotune::device_tag("cpu", client.device().info());
  std::vector<autotune::Candidate> c = {sleeper("slow", 3000us), sleeper("fast", 200us)};
  // A file naming a winner the set lacks, under the set's own checksum (a hand-edited file).
  autotune::ResultFile(tag).put(
      key.text(),
      {autotune::candidate_checksum(std::vector<autotune::Candidate>{{"slow", {}}, {"fast", {}}}), "gone", {}});
  EXPECT_EQ(autotune::run(client, key, c), 1u);
  EXPECT_EQ(autotune::stats().tunings, 1u);
}

TEST_F(Autotune, APinnedCandidateRunsUntimedUntilUnpinned) {
  std::vector<autotune::Candidate> c = {sleeper("slow", 3000us), sleeper("fast", 200us)};
  autotune::pin("test_op", "slow");
  EXPECT_EQ(autotune::run(client, key, c), 0u);
  EXPECT_EQ(ran, std::vector<std::string>{"slow"});
  autotune::pin("other_op", "fast");  // pins are per op
  autotune::pin("test_op", "missing");
  try {
    autotune::run(client, key, c);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "autotune.bad_pin");
    EXPECT_NE(std::string(e.what()).find("it has slow, fast"), std::string::npos) << e.what();
  }
  autotune::pin("test_op", std::nullopt);
  autotune::pin("other_op", std::nullopt);
  ran.clear();
  EXPECT_EQ(autotune::run(client, key, c), 1u);
  EXPECT_EQ(autotune::stats().tunings, 1u);
}

TEST_F(Autotune, NoCandidateOrAFallbackOutsideTheListIsRefused) {
  std::vector<autotune::Candidate> none;
  try {
    autotune::run(client, key, none);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "autotune.no_candidates");
    EXPECT_NE(std::string(e.what()).find("test_op f32 n1024 has no candidate"), std::string::npos) << e.what();
  }
  std::vector<autotune::Candidate> one = {sleeper("only", 10us)};
  try {
    autotune::run(client, key, one, 1);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "autotune.no_candidates");
  }
  EXPECT_TRUE(ran.empty());
}

TEST(AutotuneBucket, RoundsUpToAPowerOfTwo) {
  EXPECT_EQ(autotune::bucket(0), 0);
  EXPECT_EQ(autotune::bucket(1), 1);
  EXPECT_EQ(autotune::bucket(3), 4);
  EXPECT_EQ(autotune::bucket(4096), 4096);
  EXPECT_EQ(autotune::bucket(4097), 8192);
}

TEST(AutotuneJson, ReadsWhatTheWriterWritesAndRefusesTheRest) {
  auto v = autotune::json::parse(R"({"a": [1, 2.5e3, -4], "b": {"c": "x\"y\\z\u00e9"}, "t": true, "n": null})");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->find("a")->items.size(), 3u);
  EXPECT_EQ(v->find("a")->items[1].number, 2500);
  EXPECT_EQ(v->find("b")->find("c")->string, "x\"y\\z\xc3\xa9");
  EXPECT_TRUE(v->find("t")->boolean);
  EXPECT_EQ(v->find("n")->kind, autotune::json::Value::Kind::Null);
  std::string odd = std::string("tab\there \"quoted\" \x01");
  auto back = autotune::json::parse(autotune::json::quote(odd));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->string, odd);
  for (const char* bad : {"", "{", "{\"a\" 1}", "[1,]", "\"open", "{\"a\": 1} x", "tru", "\"\\ud800\""}) {
    EXPECT_FALSE(autotune::json::parse(bad).has_value()) << bad;
  }
  // Numbers are read and written the C locale's way whatever the program's locale.
  EXPECT_EQ(autotune::json::parse("1.5e-05")->number, 1.5e-05);
  EXPECT_FALSE(autotune::json::parse("1,5").has_value());
  std::string deep(200, '[');
  EXPECT_FALSE(autotune::json::parse(deep + std::string(200, ']')).has_value());
}

TEST(ClientDeviceSeconds, MeasuresTheWorkOnTheCpu) {
  Client c = Device::cpu().client();
  double s = c.device_seconds([] { std::this_thread::sleep_for(5ms); });
  EXPECT_GE(s, 0.005);
  EXPECT_LT(s, 1.0);
}

}  // namespace
}  // namespace kiln
