// Layouts written in a tile kernel's IR (decision 031): tile.convert_layout lowered and run on the
// CPU (into a layout of all 32 units, and into one of 16 whose other 16 hold copies), the same
// kernels compiled with NVRTC for sm_90a, and a swizzled shared array placed on its alignment by
// both backends.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backends/cuda/emit.h"
#include "backends/cuda/nvrtc.h"
#include "support/compile_for_sm90.h"
#include "support/run_ir_on_cpu.h"

namespace kiln::tile {
namespace {

// y = x (a 16 x 16 f32 cell, loaded in layout #1) converted to `to`, plus itself.
std::string converting(const std::string& to) {
  return "kernel @convert(%x: buffer<vector<4 x f32>, ro>, %y: buffer<vector<4 x f32>, rw>) {cube_dim = [32, 1, 1], "
         "mode = unchecked, address = u32, vector = 4} layouts {\n"
         "  #1 = fragment<[16, 16], slot = [1:0, 1:1, 0:3], unit = [1:2, 1:3, 0:0, 0:1, 0:2]>,\n"
         "  #2 = " +
         to +
         "\n} {\n"
         "  %0 = tile.view %x {extent = [16, 16], tile = [16, 16], along = [0, 1], pad = zero} : tile<[16, 16] x f32, "
         "global>\n"
         "  %1 = tile.view %y {extent = [16, 16], tile = [16, 16], along = [0, 1], pad = zero} : tile<[16, 16] x f32, "
         "global>\n"
         "  %2 = tile.load_cell %0 : tile<[16, 16] x f32, registers, #1>\n"
         "  %3 = tile.convert_layout %2 : tile<[16, 16] x f32, registers, #2>\n"
         "  %4 = add %3, %3 : tile<[16, 16] x f32, registers, #2>\n"
         "  tile.store_cell %1, %4\n"
         "}\n";
}

const char* kColumns = "fragment<[16, 16], slot = [0:0, 0:1, 1:3], unit = [0:2, 0:3, 1:0, 1:1, 1:2]>";
const char* kHalfTheUnits = "fragment<[16, 16], slot = [0:0, 0:1, 1:3, 1:2], unit = [0:2, 0:3, 1:0, 1:1, -]>";

TEST(TileLayouts, ConvertLayoutRunsOnTheCpu) {
  std::mt19937 rng(31);
  std::uniform_real_distribution<float> d(-4, 4);
  std::vector<float> x(256);
  for (float& v : x) v = d(rng);
  for (const char* to : {kColumns, kHalfTheUnits}) {
    std::vector<unsigned char> xb(x.size() * 4), yb(x.size() * 4);
    std::memcpy(xb.data(), x.data(), xb.size());
    std::vector<float> poison(256, std::nanf(""));
    std::memcpy(yb.data(), poison.data(), yb.size());
    auto out = kiln::test::run_ir_on_cpu(converting(to), {xb, yb}, {64, 64}, 1);
    std::vector<float> y(256);
    std::memcpy(y.data(), out[1].data(), out[1].size());
    for (size_t i = 0; i < 256; ++i) EXPECT_EQ(y[i], x[i] + x[i]) << to << " element " << i;
  }
}

TEST(TileLayouts, ConvertLayoutCompilesWithNvrtc) {
  if (!cuda::nvrtc_available()) GTEST_SKIP() << "skipped: NVRTC was not found, so the CUDA sources were not compiled";
  for (const char* to : {kColumns, kHalfTheUnits}) {
    ir::Kernel k = ir::parse(converting(to));
    ir::verify(k, "test");
    EXPECT_NO_THROW(kiln::test::compile_for_sm90a(k, ir::Dim3{32, 1, 1}, ir::ExecMode::Unchecked)) << to;
  }
}

// A 160-byte array, then a swizzled one on a 1024-byte base: CUDA carves both from the dynamic
// buffer (a static array aligned past 16 bytes might be placed otherwise than planned), from its
// first 1024-byte boundary, asking for 1008 bytes more; the CPU plan puts it at the same offset.
// The parameter is named like the raw buffer, which the emitter renames.
std::string swizzled(uint32_t length) {
  return "kernel @swizzled(%kiln_smem_raw: buffer<f32, rw>) {cube_dim = [32, 1, 1], mode = unchecked, address = u32, "
         "vector = 1} "
         "layouts {\n  #1 = shared<pitch = 64, swizzle = 128, align = 1024>\n} {\n"
         "  %0 = shared.alloc : shared<f32, 40>\n"
         "  %1 = shared.alloc : shared<bf16, " +
         std::to_string(length) +
         ", #1>\n"
         "  %2 = builtin.unit_pos : u32\n"
         "  %3 = cast %2 : f32\n"
         "  store %0, %2, %3\n"
         "  %4 = cast %3 : bf16\n"
         "  store %1, %2, %4\n"
         "  sync.cube\n"
         "  %5 = load %1, %2 : bf16\n"
         "  %6 = cast %5 : f32\n"
         "  store %kiln_smem_raw, %2, %6\n"
         "}\n";
}

TEST(TileLayouts, ASwizzledSharedArrayStartsOnItsAlignment) {
  for (uint32_t length : {4096u, 40960u}) {
    ir::Kernel k = ir::parse(swizzled(length));
    ir::verify(k, "test");
    cuda::EmitResult e = cuda::emit_cuda(k);
    EXPECT_NE(e.source.find("u8* kiln_smem = kiln_smem_raw + ((1024u - "), std::string::npos) << e.source;
    EXPECT_NE(e.source.find("reinterpret_cast<bf16*>(kiln_smem + 1024)"), std::string::npos) << e.source;
    EXPECT_EQ(e.static_shared_bytes, 0u);
    EXPECT_EQ(e.dynamic_shared_bytes, 1024u + length * 2 + 1024 - 16) << "the array's end, and room to align the base";
    if (cuda::nvrtc_available()) {
      EXPECT_NO_THROW((void)cuda::compile(e.source, e.entry, cuda::default_compile_options("sm_90a"))) << length;
    }
    std::vector<unsigned char> yb(32 * 4, 0xff);
    auto out = kiln::test::run_ir_on_cpu(swizzled(length), {yb}, {32}, 1);
    std::vector<float> y(32);
    std::memcpy(y.data(), out[0].data(), out[0].size());
    for (uint32_t u = 0; u < 32; ++u) EXPECT_EQ(y[u], float(u)) << u;
  }
}

}  // namespace
}  // namespace kiln::tile
