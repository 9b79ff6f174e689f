// The NVRTC loader and compile(): the version, a CUBIN for sm_90a, the compile.nvrtc error with
// its log and the written source, and the device.unavailable error naming what was tried.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "cuda_test_util.h"

namespace kiln::cuda::testing {
namespace {

TEST(Nvrtc, CandidatesStartWithTheSonamesThenTheToolkitFolders) {
  std::vector<std::string> c = nvrtc_candidates();
  ASSERT_GE(c.size(), 6u);
  EXPECT_EQ(c[0], "libnvrtc.so.13");
  EXPECT_EQ(c[1], "libnvrtc.so.12");
  EXPECT_EQ(c[2], "libnvrtc.so");
  EXPECT_EQ(c.back(), "/usr/local/cuda/lib64/libnvrtc.so");
}

TEST(Nvrtc, CudaHomeIsTriedBeforeTheDefaultFolder) {
  const char* old = std::getenv("CUDA_HOME");
  std::string saved = old ? old : "";
  setenv("CUDA_HOME", "/opt/kiln-test-cuda", 1);
  std::vector<std::string> c = nvrtc_candidates();
  if (old) setenv("CUDA_HOME", saved.c_str(), 1);
  else unsetenv("CUDA_HOME");
  ASSERT_GE(c.size(), 9u);
  EXPECT_EQ(c[3], "/opt/kiln-test-cuda/lib64/libnvrtc.so.13");
  EXPECT_EQ(c[6], "/usr/local/cuda/lib64/libnvrtc.so.13");
}

TEST(Nvrtc, MissingLibraryIsDeviceUnavailableNamingWhatWasTried) {
  try {
    detail::load_nvrtc_from({"libnvrtc-kiln-missing.so.99", "/nonexistent/lib64/libnvrtc.so"});
    FAIL() << "loading a library that does not exist succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "device.unavailable");
    EXPECT_NE(e.message().find("libnvrtc-kiln-missing.so.99: not loaded ("), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("/nonexistent/lib64/libnvrtc.so: not loaded ("), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("CUDA_HOME"), std::string::npos) << e.message();
  }
}

TEST(Nvrtc, ALibraryWithoutTheEntryPointsIsRejected) {
  // libdl/libc open fine but have no nvrtc symbols.
  try {
    detail::load_nvrtc_from({"libc.so.6"});
    FAIL() << "libc was accepted as NVRTC";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "device.unavailable");
    EXPECT_NE(e.message().find("libc.so.6: opened, but lacks nvrtcGetErrorString"), std::string::npos) << e.message();
  }
}

TEST(Nvrtc, VersionIsTwelveOrLater) {
  KILN_REQUIRE_NVRTC();
  NvrtcVersion v = nvrtc_version();
  EXPECT_GE(v.major, 12);
  std::cout << "[ nvrtc    ] version " << v.major << "." << v.minor << "\n";
}

TEST(Nvrtc, CompilesACubinForSm90a) {
  KILN_REQUIRE_NVRTC();
  CompileResult r = compile("extern \"C\" __global__ void k(float* p) { p[threadIdx.x] *= 2.0f; }", "k",
                            default_compile_options("sm_90a"));
  ASSERT_GE(r.cubin.size(), 4u);
  EXPECT_EQ(std::string(r.cubin.data(), 4),
            "\x7f"
            "ELF");
}

TEST(Nvrtc, WarningsComeBackInTheLog) {
  KILN_REQUIRE_NVRTC();
  CompileResult r = compile("extern \"C\" __global__ void k(float* p) { int unused = 1; p[0] = 1.0f; }", "k",
                            default_compile_options("sm_90a"));
  EXPECT_FALSE(r.cubin.empty());
  EXPECT_NE(r.log.find("unused"), std::string::npos) << r.log;
}

TEST(Nvrtc, InvalidSourceIsCompileNvrtcWithTheLogAndTheWrittenSource) {
  KILN_REQUIRE_NVRTC();
  const std::string source = "extern \"C\" __global__ void broken(float* p) { p[0] = kiln_no_such_function(1); }\n";
  try {
    compile(source, "broken", default_compile_options("sm_90a"));
    FAIL() << "an invalid source compiled";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "compile.nvrtc");
    const std::string& m = e.message();
    EXPECT_NE(m.find("'broken'"), std::string::npos) << m;
    // The log names the problem.
    EXPECT_NE(m.find("identifier \"kiln_no_such_function\" is undefined"), std::string::npos) << m;
    // The source is written where a person can read it, and the message says where.
    size_t at = m.find("source written to ");
    ASSERT_NE(at, std::string::npos) << m;
    std::string path = m.substr(at + 18);
    path = path.substr(0, path.find('\n'));
    EXPECT_NE(path.find("kiln-nvrtc-"), std::string::npos) << path;
    EXPECT_EQ(path.substr(path.size() - 3), ".cu");
    ASSERT_TRUE(std::filesystem::exists(path)) << path;
    EXPECT_EQ(read_text(path), source);
    std::filesystem::remove(path);
  }
}

TEST(Nvrtc, AVirtualArchitectureGivesNoCubinAndSaysSo) {
  KILN_REQUIRE_NVRTC();
  try {
    compile("extern \"C\" __global__ void k() {}", "k", {"--gpu-architecture=compute_90"});
    FAIL() << "a CUBIN came back for a virtual architecture";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "compile.nvrtc");
    EXPECT_NE(e.message().find("real architecture"), std::string::npos) << e.message();
  }
}

}  // namespace
}  // namespace kiln::cuda::testing
