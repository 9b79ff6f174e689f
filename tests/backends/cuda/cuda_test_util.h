// Helpers shared by the CUDA backend tests: reading the .kir cases, compiling emitted kernels with
// NVRTC for sm_90a (skipping, and saying so, where NVRTC is missing) and counting what compiled.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "backends/cuda/emit.h"
#include "backends/cuda/nvrtc.h"
#include "kiln/error.h"

namespace kiln::cuda::testing {

inline constexpr const char* kArch = "sm_90a";

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open test data " + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Splits text at lines that are exactly `// -----`; drops cases holding no kernel.
inline std::vector<std::string> split_cases(const std::string& text) {
  std::vector<std::string> cases(1);
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line == "// -----") {
      cases.emplace_back();
      continue;
    }
    cases.back() += line + "\n";
  }
  std::vector<std::string> out;
  for (std::string& c : cases) {
    if (c.find("kernel @") != std::string::npos) out.push_back(std::move(c));
  }
  return out;
}

// The name after `kernel @`, for test names.
inline std::string kernel_name(const std::string& text) {
  size_t at = text.find("kernel @");
  if (at == std::string::npos) return "unnamed";
  size_t start = at + 8, end = start;
  while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_')) ++end;
  return text.substr(start, end - start);
}

// Kernels compiled by NVRTC in this process; printed when the tests end.
inline std::atomic<int>& compiled_count() {
  static std::atomic<int> n{0};
  return n;
}

inline std::string skip_message() {
  std::string names;
  for (const std::string& c : nvrtc_candidates()) names += (names.empty() ? "" : ", ") + c;
  return "skipped because NVRTC was not found (tried " + names +
         "); the generated CUDA C++ is not compiled on this machine";
}

// Compiles an emitted kernel for sm_90a and checks that a CUBIN came back. The caller has checked
// that NVRTC is available.
// With KILN_TEST_DUMP=<folder> set, each kernel's source and NVRTC log are written there.
inline void expect_compiles(const EmitResult& r) {
  try {
    CompileResult c = compile(r.source, r.entry, default_compile_options(kArch));
    if (const char* dump = std::getenv("KILN_TEST_DUMP")) {
      std::ofstream(std::string(dump) + "/" + r.entry + ".cu") << r.source;
      if (!c.log.empty()) std::ofstream(std::string(dump) + "/" + r.entry + ".log") << c.log;
    }
    EXPECT_FALSE(c.cubin.empty()) << r.entry;
    // An ELF image: the CUBIN starts with 0x7f 'E' 'L' 'F'.
    ASSERT_GE(c.cubin.size(), 4u);
    EXPECT_EQ(std::string(c.cubin.data() + 1, 3), "ELF") << r.entry;
    ++compiled_count();
  } catch (const Error& e) {
    ADD_FAILURE() << e.what();
  }
}

}  // namespace kiln::cuda::testing

#define KILN_REQUIRE_NVRTC()                                                                     \
  do {                                                                                           \
    if (!::kiln::cuda::nvrtc_available()) GTEST_SKIP() << ::kiln::cuda::testing::skip_message(); \
  } while (0)
