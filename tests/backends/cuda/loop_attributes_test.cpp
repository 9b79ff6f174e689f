// The loop attributes vectorize and at_least_once on CUDA, as the pipeline and the emitter leave
// them: a vectorised loop moves whole vectors (kiln_load_wide / kiln_store_wide, and in the PTX
// 128-bit loads and stores where a scalar loop has 32-bit ones); an unchecked at_least_once loop
// is a do-while with no test before its first trip; a checked one keeps its test and reports a
// broken promise through the two hidden parameters of the device error word (emit.h's ABI). The
// suite's loop_attributes cases run them on a GPU.
#include <gtest/gtest.h>

#include <regex>

#include "cuda_test_util.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"
#include "kiln/passes/passes.h"

namespace kiln::cuda::testing {
namespace {

// y[i] = x[i] * a over [0, n), with `attrs` on the loop, in `mode`.
std::string scale_kernel(const std::string& attrs, const std::string& mode) {
  return "kernel @scale(%x: buffer<f32, ro>, %y: buffer<f32, rw>, %a: f32, %n: u32) {cube_dim = [128, 1, 1], mode = " +
         mode +
         ", address = u32, vector = 1} {\n"
         "  %0 = const 0 : u32\n"
         "  %1 = const 1 : u32\n"
         "  for %0, %n, %1" +
         (attrs.empty() ? "" : " {" + attrs + "}") +
         " (%2: u32) {\n"
         "    %3 = load %x, %2 {checked} : f32\n"
         "    %4 = mul %3, %a : f32\n"
         "    store %y, %2, %4 {checked}\n"
         "  }\n"
         "}\n";
}

// Through the pipeline, as the runtime compiles it.
EmitResult emitted(const std::string& text) {
  ir::Kernel k = ir::parse(text);
  ir::verify(k, "test");
  passes::PipelineOptions options;
  options.verify_each = true;
  passes::run_pipeline(k, options);
  return emit_cuda(k);
}

std::string entry_text(const EmitResult& r) { return r.source.substr(r.source.find("extern \"C\" __global__")); }
bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }
size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(LoopAttributes, VectorisedLoopMovesWholeVectorsThenTheRestOneByOne) {
  for (const char* mode : {"unchecked", "checked"}) {
    SCOPED_TRACE(mode);
    std::string s = entry_text(emitted(scale_kernel("vectorize = 4", mode)));
    // should load and store four elements at a time, on the vector type, and multiply by a splat
    EXPECT_TRUE(std::regex_search(s, std::regex(R"(kiln_vec<f32, 4> v\d+ = kiln_load_wide<f32, 4>\(x \+ v\d+\);)")))
        << s;
    EXPECT_TRUE(std::regex_search(s, std::regex(R"(kiln_store_wide<f32, 4>\(y \+ v\d+, v\d+\);)"))) << s;
    EXPECT_TRUE(std::regex_search(s, std::regex(R"(for \(u32 v\d+ = v\d+; v\d+ < v\d+; v\d+ \+= v\d+\))"))) << s;
    EXPECT_EQ(count(s, "kiln_load_wide"), 1u) << s;
    // should leave the rest (and, checked, the loop behind the failed bounds test) scalar
    EXPECT_TRUE(std::regex_search(s, std::regex(R"(f32 v\d+ = .*x\[v\d+\])"))) << s;
  }
  std::string plain = entry_text(emitted(scale_kernel("", "unchecked")));
  EXPECT_FALSE(has(plain, "kiln_load_wide")) << "a loop without vectorize stays scalar\n" << plain;
}

TEST(LoopAttributes, CheckedVectorLoopHasNoGuardOnItsWideAccesses) {
  std::string s = entry_text(emitted(scale_kernel("vectorize = 4", "checked")));
  // The wide accesses sit in the then-branch of the one bounds test, unguarded; each scalar access
  // of the other loops is guarded by its own mask.
  EXPECT_FALSE(std::regex_search(s, std::regex(R"(\? kiln_load_wide)"))) << s;
  EXPECT_FALSE(std::regex_search(s, std::regex(R"(if \(v\d+\) kiln_store_wide)"))) << s;
  EXPECT_EQ(count(s, "? x["), 2u) << "the rest and the fallback load x under a mask\n" << s;
  EXPECT_EQ(count(s, ") y["), 2u) << "the rest and the fallback store y under a mask\n" << s;
}

TEST(LoopAttributes, UncheckedAtLeastOnceLoopIsADoWhileWithoutItsFirstTest) {
  EmitResult r = emitted(scale_kernel("at_least_once", "unchecked"));
  std::string s = entry_text(r);
  EXPECT_TRUE(has(s, "do {")) << s;
  EXPECT_TRUE(std::regex_search(s, std::regex(R"(\} while \(v(\d+) \+= v\d+, v\1 < n\);)"))) << s;
  EXPECT_FALSE(has(s, "for (")) << "no loop with a test before its first trip\n" << s;
  EXPECT_FALSE(r.error_word) << "unchecked: the promise is the caller's, nothing is checked";
  EXPECT_FALSE(has(s, "kiln_error_word")) << s;
  // A loop of a narrower or signed type steps through kiln_add, as a for does.
  std::string narrow = scale_kernel("at_least_once, unroll = 4", "unchecked");
  for (const char* from : {"%0 = const 0 : u32", "%1 = const 1 : u32", "(%2: u32)"}) {
    std::string to = std::regex_replace(from, std::regex("u32"), "i32");
    narrow.replace(narrow.find(from), std::string(from).size(), to);
  }
  narrow.replace(narrow.find("%n: u32"), 7, "%n: i32");
  std::string n = entry_text(emitted(narrow));
  EXPECT_TRUE(std::regex_search(n, std::regex(R"(#pragma unroll 4\n\s*do \{)"))) << "the pragma stays on the loop\n"
                                                                                 << n;
  EXPECT_TRUE(std::regex_search(n, std::regex(R"(\} while \(v(\d+) = kiln_add\(v\1, v\d+\), v\1 < n\);)"))) << n;
}

TEST(LoopAttributes, CheckedAtLeastOnceKeepsItsTestAndReportsThroughTheErrorWord) {
  EmitResult r = emitted(scale_kernel("at_least_once", "checked"));
  std::string s = entry_text(r);
  EXPECT_FALSE(has(s, "do {")) << "checked: a broken promise must run no iteration\n" << s;
  EXPECT_TRUE(std::regex_search(s, std::regex(R"(for \(u32 v(\d+) = v\d+; v\1 < n;)"))) << s;
  EXPECT_TRUE(std::regex_search(
      s,
      std::regex(
          R"(if \(!\(v\d+ < n\)\) kiln_report_error\(kiln_error_word, kiln_error_site, 1u, \(u64\)v\d+, \(u64\)n, )")))
      << s;
  // The two hidden parameters come last, bound from the binding after the kernel's parameters.
  EXPECT_TRUE(has(s, "    u32 n,\n    u32* kiln_error_word,\n    u32 kiln_error_site) {")) << s;
  ASSERT_TRUE(r.error_word);
  ASSERT_GE(r.args.size(), 2u);
  const AbiArg& word = r.args[r.args.size() - 2];
  const AbiArg& site = r.args.back();
  EXPECT_EQ(word.role, AbiArg::Role::Pointer);
  EXPECT_EQ(word.param, 4u) << "after the kernel's four parameters";
  EXPECT_EQ(site.role, AbiArg::Role::Value);
  EXPECT_EQ(site.param, 4u);
  EXPECT_EQ(site.bytes, 4u);
  // A kernel without a check has neither.
  EmitResult plain = emitted(scale_kernel("", "checked"));
  EXPECT_FALSE(plain.error_word);
  EXPECT_EQ(plain.args.back().param, 3u);
}

TEST(LoopAttributes, SignedBoundsReachTheReportSignExtended) {
  std::string text = scale_kernel("at_least_once", "checked");
  for (const char* from : {"%0 = const 0 : u32", "%1 = const 1 : u32", "(%2: u32)"}) {
    std::string to = std::regex_replace(from, std::regex("u32"), "i64");
    text.replace(text.find(from), std::string(from).size(), to);
  }
  text.replace(text.find("%n: u32"), 7, "%n: i64");
  std::string s = entry_text(emitted(text));
  EXPECT_TRUE(has(s, ", (u64)(i64)n, ")) << s;
}

TEST(LoopAttributes, NvrtcCompilesThemAndThePtxMovesVectors) {
  KILN_REQUIRE_NVRTC();
  for (const char* mode : {"unchecked", "checked"}) {
    for (const char* attrs : {"vectorize = 4", "at_least_once", "vectorize = 16, at_least_once", ""}) {
      SCOPED_TRACE(std::string(mode) + ", " + attrs);
      expect_compiles(emitted(scale_kernel(attrs, mode)));
    }
  }
  // A vector of four f32 is one 16-byte move where the address allows; the scalar loop has none.
  EmitResult v = emitted(scale_kernel("vectorize = 4", "unchecked"));
  std::string ptx = compile_ptx(v.source, v.entry, default_compile_options("compute_90"));
  EXPECT_TRUE(std::regex_search(ptx, std::regex(R"(ld\.global(\.nc)?\.v4\.f32)"))) << ptx;
  EXPECT_TRUE(std::regex_search(ptx, std::regex(R"(st\.global\.v4\.f32)"))) << ptx;
  EmitResult s = emitted(scale_kernel("", "unchecked"));
  std::string scalar = compile_ptx(s.source, s.entry, default_compile_options("compute_90"));
  EXPECT_FALSE(std::regex_search(scalar, std::regex(R"(\.v4\.f32)"))) << scalar;
}

}  // namespace
}  // namespace kiln::cuda::testing
