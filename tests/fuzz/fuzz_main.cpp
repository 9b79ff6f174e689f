// kiln_fuzz: random programs run by the evaluator and by a kiln device, compared (docs/fuzz.md).
//   kiln_fuzz [--family simt|tile|tensor] [--seed S] [--count N] [--device cpu|cuda:0] [--against evaluator|cpu]
//             [--out DIR] [--known FILE] [--reduce]
//   kiln_fuzz --replay FILE... [--device D]
// --against cpu compares the device with the CPU backend (on a GPU machine: CUDA against the
// CPU) where the default compares it with the evaluator; the evaluator still says which outputs
// are exact. Program i has seed S + i: a run is repeated by its seeds. Prints the counts by family, the
// coverage per op kind and the share of programs that were trivial (their outputs ignore their
// inputs) or refused; writes each disagreement's program as IR text under DIR. Exits 1 when a
// program disagrees, 2 when too many programs are trivial or refused (a generator that makes
// them mostly is a defect), 3 on a bad argument, 77 when the device is not here (CTest's skip). FILE lists seeds that
// disagree and are not yet understood ("FAMILY SEED DEVICE: why", one a line): they are reported as known, and one that
// agrees again fails the run too, so that the list holds only open cases. --reduce shrinks each disagreement
// (reduce.cpp) and writes the result beside it as a reproducer; --replay runs reproducers (tests/fuzz/regressions) and
// exits 1 when one disagrees.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "kiln/error.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"
#include "kiln/runtime/client.h"
#include "kiln/runtime/device.h"
#include "program.h"

using namespace kiln;
using namespace kiln::fuzz;

namespace {

using CaseFn = CaseReport (*)(uint64_t, const RunOptions&);

CaseFn case_of(const std::string& family) {
  if (family == "simt") return run_simt_case;
  if (family == "tile") return run_tile_case;
  if (family == "tensor") return run_tensor_case;
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  std::string family = "simt", device = "cpu", out_dir = "fuzz-out", known_file, against = "evaluator";
  uint64_t seed = 1, count = 100;
  bool reduce_them = false;
  std::vector<std::string> replays;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "kiln_fuzz: %s needs a value\n", a.c_str());
        std::exit(3);
      }
      return argv[++i];
    };
    if (a == "--family") family = next();
    else if (a == "--seed") seed = std::stoull(next());
    else if (a == "--count") count = std::stoull(next());
    else if (a == "--device") device = next();
    else if (a == "--against") against = next();
    else if (a == "--out") out_dir = next();
    else if (a == "--known") known_file = next();
    else if (a == "--reduce") reduce_them = true;
    else if (a == "--replay") {
      while (i + 1 < argc && argv[i + 1][0] != '-') replays.push_back(argv[++i]);
    } else {
      std::fprintf(stderr, "kiln_fuzz: unknown argument %s\n", a.c_str());
      return 3;
    }
  }
  // A device that is not here (no CUDA driver, no GPU): exit 77, which CTest takes for skipped.
  try {
    Device::parse(device).client();
  } catch (const Error& e) {
    if (e.kind() != "device.unavailable") throw;
    std::printf("kiln_fuzz: skipped: %s\n", e.what());
    return 77;
  }
  if (!replays.empty()) {
    int bad = 0;
    for (const std::string& path : replays) {
      std::ifstream f(path);
      std::stringstream text;
      text << f.rdbuf();
      try {
        const Program p = replay(text.str());
        const Verdict v = compare(p, evaluate(p), run_on_device(p, device));
        std::printf("%s %s%s%s\n", v.agree ? "agrees   " : "DISAGREES", path.c_str(), v.agree ? "" : ": ",
                    v.first_difference.c_str());
        bad += !v.agree;
      } catch (const Error& e) {
        std::printf("DISAGREES %s: %s\n", path.c_str(), e.what());
        ++bad;
      }
    }
    std::printf("kiln_fuzz: %zu reproducers on %s, %d disagree\n", replays.size(), device.c_str(), bad);
    return bad ? 1 : 0;
  }
  if (against != "evaluator" && against != "cpu") {
    std::fprintf(stderr, "kiln_fuzz: --against takes evaluator or cpu, not %s\n", against.c_str());
    return 3;
  }
  const CaseFn run_case = case_of(family);
  if (!run_case) {
    std::fprintf(stderr, "kiln_fuzz: unknown family %s (simt, tile or tensor)\n", family.c_str());
    return 3;
  }
  std::set<uint64_t> known;
  if (!known_file.empty()) {
    std::ifstream f(known_file);
    if (!f) {
      std::fprintf(stderr, "kiln_fuzz: cannot read %s\n", known_file.c_str());
      return 3;
    }
    for (std::string line; std::getline(f, line);) {
      std::istringstream in(line);
      std::string of, on;
      uint64_t s;
      if (line.empty() || line[0] == '#' || !(in >> of >> s >> on)) continue;
      if (of == family && on == device + ":") known.insert(s);
    }
  }
  uint64_t known_seen = 0, known_fixed = 0;
  const auto t0 = std::chrono::steady_clock::now();
  uint64_t agreed = 0, disagreed = 0, refused = 0, trivial = 0, evaluator_errors = 0;
  uint64_t exact = 0, approximate = 0, unknown = 0;
  std::map<std::string, uint64_t> programs_with;
  const RunOptions options{device, against, reduce_them};
  for (uint64_t n = 0; n < count; ++n) {
    const uint64_t s = seed + n;
    CaseReport r;
    try {
      r = run_case(s, options);
    } catch (const std::exception& e) {  // a case that throws past its family's own handling is a defect
      r.status = CaseReport::Status::Disagree;
      r.difference = std::string("the case threw: ") + e.what();
    }
    if (r.status == CaseReport::Status::Refused) {
      ++refused;
      std::printf("refused  seed %llu: %s\n", (unsigned long long)s, r.difference.c_str());
      continue;
    }
    for (const std::string& what : r.coverage) ++programs_with[what];
    trivial += r.trivial;
    evaluator_errors += r.both_failed;
    exact += r.exact;
    approximate += r.approximate;
    unknown += r.unknown;
    if (r.status == CaseReport::Status::Agree) {
      ++agreed;
      if (known.count(s)) {
        ++known_fixed;
        std::printf("FIXED    seed %llu agrees now: take it off %s\n", (unsigned long long)s, known_file.c_str());
      }
      continue;
    }
    if (known.count(s)) {
      ++known_seen;
      std::printf("known    seed %llu on %s: %s\n", (unsigned long long)s, device.c_str(), r.difference.c_str());
      continue;
    }
    ++disagreed;
    std::filesystem::create_directories(out_dir);
    const std::string path = out_dir + "/" + family + "-" + std::to_string(s) + ".kir";
    std::ofstream(path) << r.text;
    std::printf("MISMATCH seed %llu on %s: %s (%s)\n", (unsigned long long)s, device.c_str(), r.difference.c_str(),
                path.c_str());
    if (!r.reduced.empty()) {
      const std::string reduced = out_dir + "/" + family + "-" + std::to_string(s) + ".reduced.kir";
      std::ofstream(reduced) << r.reduced;
      std::printf("         reduced: %s\n", reduced.c_str());
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const uint64_t ran = count - refused;
  std::printf(
      "kiln_fuzz: family %s, device %s, seeds %llu..%llu: %llu programs, %llu agree, %llu disagree, %llu refused "
      "(%.1f%%), %llu trivial (%.1f%%), %llu ended in an error on both sides; in %.1f s\n",
      family.c_str(), device.c_str(), (unsigned long long)seed, (unsigned long long)(seed + count - 1),
      (unsigned long long)count, (unsigned long long)agreed, (unsigned long long)disagreed, (unsigned long long)refused,
      count ? 100.0 * double(refused) / double(count) : 0.0, (unsigned long long)trivial,
      ran ? 100.0 * double(trivial) / double(ran) : 0.0, (unsigned long long)evaluator_errors, seconds);
  if (!known.empty()) {
    std::printf("kiln_fuzz: %llu known disagreements seen (%s), %llu of them agree now\n",
                (unsigned long long)known_seen, known_file.c_str(), (unsigned long long)known_fixed);
  }
  std::printf("kiln_fuzz: output elements compared: %llu bit for bit, %llu within the tolerance, %llu not compared\n",
              (unsigned long long)exact, (unsigned long long)approximate, (unsigned long long)unknown);
  std::printf("kiln_fuzz: programs holding each op kind:");
  int column = 0;
  for (const auto& [what, c] : programs_with) {
    std::printf("%s%s %llu", column++ % 8 == 0 ? "\n  " : ", ", what.c_str(), (unsigned long long)c);
  }
  std::printf("\n");
  if (disagreed > 0 || known_fixed > 0) return 1;
  if (count > 0 && (refused * 20 > count || trivial * 4 > ran)) {
    std::printf("kiln_fuzz: the generator makes too many refused (over 5%%) or trivial (over 25%%) programs\n");
    return 2;
  }
  return 0;
}
