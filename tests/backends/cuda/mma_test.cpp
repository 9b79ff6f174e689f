// The tensor-core product of the device library (src/backends/cuda/device/mma.cuh), checked without
// a GPU: its accumulator layout covers each element of the tile once (lower_tiles mirrors it); its
// ldmatrix addressing, run on the host against PTX's fragment layouts, computes A x B; and the
// lowering's 128 x 128 x 32 instantiation compiles to tensor-core instructions with no spills.
#include "kiln/ir/mma.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <sstream>
#include <vector>

#include "backends/cuda/target.h"
#include "cuda_test_util.h"

namespace kiln::cuda::testing {
namespace {

struct Shape {
  int m, n, k, wm, wn;
  constexpr int mt() const { return m / wm / 16; }
  constexpr int nt() const { return n / wn / 8; }
  constexpr int slots() const { return mt() * nt() * 4; }
  constexpr int units() const { return 32 * wm * wn; }
};

// The contract's layout (ir/mma.h's definition): where slot j of unit u lies in the M x N
// accumulator tile.
struct Cell {
  int row, col;
};
Cell slot_cell(const Shape& s, int u, int j) {
  ir::MmaElement e = ir::mma_sync_element(ir::kMmaSyncM16N8K16, uint32_t(s.m), uint32_t(s.n), uint32_t(s.wm),
                                          uint32_t(s.wn), uint32_t(u), uint32_t(j));
  return {int(e.row), int(e.col)};
}

const Shape kShapes[] = {
    {128, 128, 32, 2, 4}, {64, 64, 16, 2, 2},  {16, 8, 16, 1, 1},
    {32, 24, 16, 2, 1},   {64, 128, 48, 1, 4}, {256, 64, 16, 4, 2},
};

TEST(MmaLayout, EveryElementOfTheTileIsOneSlotOfOneUnit) {
  for (const Shape& s : kShapes) {
    SCOPED_TRACE(std::to_string(s.m) + "x" + std::to_string(s.n) + " over " + std::to_string(s.wm) + "x" +
                 std::to_string(s.wn) + " warps");
    std::vector<int> seen(size_t(s.m) * s.n, 0);
    for (int u = 0; u < s.units(); ++u) {
      for (int j = 0; j < s.slots(); ++j) {
        Cell c = slot_cell(s, u, j);
        ASSERT_TRUE(c.row >= 0 && c.row < s.m && c.col >= 0 && c.col < s.n) << "unit " << u << " slot " << j;
        ++seen[size_t(c.row) * s.n + c.col];
      }
    }
    for (int r = 0; r < s.m; ++r) {
      for (int c = 0; c < s.n; ++c) ASSERT_EQ(seen[size_t(r) * s.n + c], 1) << "element (" << r << ", " << c << ")";
    }
  }
}

// ---- kiln_mma_sync's addressing on the host, against PTX's fragment layouts ----

// Shared memory as element indices: ldmatrix's lanes give addresses, here indices into `smem`.
using Regs = std::vector<std::array<int, 2>>;  // per lane, a register's two 16-bit halves (element indices)

// ldmatrix .m8n8 with `count` matrices: lane 8q + r gives the address of row r of matrix q; without
// .trans, lane t receives in register q the elements 2(t%4) and 2(t%4)+1 of row t/4; with .trans,
// element t/4 of rows 2(t%4) and 2(t%4)+1.
std::vector<Regs> ldmatrix(const std::vector<int>& lane_addr, int count, bool trans) {
  std::vector<Regs> out(size_t(count), Regs(32));
  for (int q = 0; q < count; ++q) {
    for (int t = 0; t < 32; ++t) {
      for (int h = 0; h < 2; ++h) {
        out[q][t][h] = trans ? lane_addr[8 * q + 2 * (t % 4) + h] + t / 4 : lane_addr[8 * q + t / 4] + 2 * (t % 4) + h;
      }
    }
  }
  return out;
}

// mma.sync m16n8k16 .row.col, as PTX lays out its fragments (g = lane / 4, t = lane % 4): A's
// register i holds row g + 8 (i & 1), columns 2t + 8 (i >> 1) + {0, 1}; B's register i holds rows
// 2t + 8 i + {0, 1} of column g; C's element i is row g + 8 (i >> 1), column 2t + (i & 1).
void mma_16816(const std::vector<double>& smem, const std::vector<Regs>& a, const std::vector<Regs>& b,
               std::vector<std::vector<double>>& acc, int base) {
  double am[16][16], bm[16][8];
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, t = lane % 4;
    for (int i = 0; i < 4; ++i) {
      for (int h = 0; h < 2; ++h) am[g + 8 * (i & 1)][2 * t + 8 * (i >> 1) + h] = smem[size_t(a[i][lane][h])];
    }
    for (int i = 0; i < 2; ++i) {
      for (int h = 0; h < 2; ++h) bm[2 * t + 8 * i + h][g] = smem[size_t(b[i][lane][h])];
    }
  }
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, t = lane % 4;
    for (int i = 0; i < 4; ++i) {
      double sum = 0;
      for (int kk = 0; kk < 16; ++kk) sum += am[g + 8 * (i >> 1)][kk] * bm[kk][2 * t + (i & 1)];
      acc[size_t(lane)][size_t(base + i)] += sum;
    }
  }
}

// One warp of kiln_mma_sync: the lane addresses and per-block offsets mma.cuh computes, in elements.
void warp_product(const Shape& s, int lda, int ldb, int b_at, int wm, int wn, const std::vector<double>& smem,
                  std::vector<std::vector<double>>& acc) {
  std::vector<int> a_lane(32), b_lane(32);
  for (int l = 0; l < 32; ++l) {
    const int r = l % 16, c = (l / 16) * 8;
    a_lane[size_t(l)] = (wm * (s.m / s.wm) + r) * lda + c;
    b_lane[size_t(l)] = b_at + r * ldb + wn * (s.n / s.wn) + c;
  }
  auto moved = [](std::vector<int> v, int by) {
    for (int& x : v) x += by;
    return v;
  };
  for (int ks = 0; ks < s.k / 16; ++ks) {
    std::vector<std::vector<Regs>> a(size_t(s.mt())), b(size_t(s.nt()));
    for (int mt = 0; mt < s.mt(); ++mt) a[size_t(mt)] = ldmatrix(moved(a_lane, mt * 16 * lda + ks * 16), 4, false);
    for (int nt = 0; nt + 1 < s.nt(); nt += 2) {
      std::vector<Regs> r = ldmatrix(moved(b_lane, ks * 16 * ldb + nt * 8), 4, true);
      b[size_t(nt)] = {r[0], r[1]};
      b[size_t(nt) + 1] = {r[2], r[3]};
    }
    if (s.nt() % 2 == 1) b[size_t(s.nt()) - 1] = ldmatrix(moved(b_lane, ks * 16 * ldb + (s.nt() - 1) * 8), 2, true);
    for (int mt = 0; mt < s.mt(); ++mt) {
      for (int nt = 0; nt < s.nt(); ++nt) mma_16816(smem, a[size_t(mt)], b[size_t(nt)], acc, 4 * (nt + s.nt() * mt));
    }
  }
}

TEST(MmaAddressing, LdmatrixFragmentsMultiplyTheTiles) {
  for (const Shape& s : kShapes) {
    SCOPED_TRACE(std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + " over " +
                 std::to_string(s.wm) + "x" + std::to_string(s.wn) + " warps");
    const int lda = s.k + 8, ldb = s.n + 8, b_at = s.m * lda;  // lower_tiles' padded staging
    // Small integers: every product and sum is exact in double, so any misplaced element shows.
    std::vector<double> smem(size_t(b_at + s.k * ldb), -1000.0);
    for (int r = 0; r < s.m; ++r) {
      for (int c = 0; c < s.k; ++c) smem[size_t(r * lda + c)] = double((r * 7 + c * 3) % 11 - 5);
    }
    for (int r = 0; r < s.k; ++r) {
      for (int c = 0; c < s.n; ++c) smem[size_t(b_at + r * ldb + c)] = double((r * 5 + c * 13) % 9 - 4);
    }
    for (int warp = 0; warp < s.wm * s.wn; ++warp) {
      std::vector<std::vector<double>> acc(32, std::vector<double>(size_t(s.slots()), 0.0));
      warp_product(s, lda, ldb, b_at, warp / s.wn, warp % s.wn, smem, acc);
      for (int lane = 0; lane < 32; ++lane) {
        for (int j = 0; j < s.slots(); ++j) {
          Cell c = slot_cell(s, warp * 32 + lane, j);
          double want = 0;
          for (int kk = 0; kk < s.k; ++kk)
            want += smem[size_t(c.row * lda + kk)] * smem[size_t(b_at + kk * ldb + c.col)];
          ASSERT_EQ(acc[size_t(lane)][size_t(j)], want)
              << "unit " << warp * 32 + lane << " slot " << j << " = (" << c.row << ", " << c.col << ")";
        }
      }
    }
  }
}

// ---- the lowering's instantiation, compiled ----

// 256 units (8 warps as 2 x 4) multiply 128 x 128 x 32 factors staged as lower_tiles stages them
// (rows padded by 8 elements); the accumulators live across the call, as the lowering's do.
std::string product_kernel(const std::string& t) {
  return std::string(cuda_prelude()) + R"(
extern "C" __global__ void __launch_bounds__(256) mma_)" +
         t + R"((const )" + t + R"(* in, f32* out) {
  __shared__ kiln_vec<u16, 8> buf[(128 * 40 + 32 * 136) / 8];
  )" + t +
         R"(* s = reinterpret_cast<)" + t + R"(*>(buf);
  f32 acc[64];
  for (int j = 0; j < 64; ++j) acc[j] = out[j * 256 + threadIdx.x];
  for (u32 i = threadIdx.x; i < 128 * 40 + 32 * 136; i += 256u) s[i] = in[i];
  __syncthreads();
  kiln_mma_sync<128, 128, 32, 2, 4, 40, 136>(s, s + 128 * 40, acc);
  __syncthreads();
  for (int j = 0; j < 64; ++j) out[j * 256 + threadIdx.x] = acc[j];
}
)";
}

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// Per warp and k-step: MT = 4 A fragments (ldmatrix .x4) and NT / 2 = 2 pairs of B fragments
// (.x4.trans), then MT x NT = 16 products; two k-steps.
constexpr size_t kLdmatrix = 2 * (4 + 2), kMma = 2 * 4 * 4;

TEST(MmaCompiled, PtxHoldsOneLdmatrixPerFragmentBlockAndOneMmaPerTile) {
  KILN_REQUIRE_NVRTC();
  for (const std::string t : {"bf16", "f16"}) {
    std::string ptx = compile_ptx(product_kernel(t), "mma_" + t, default_compile_options(kArch));
    EXPECT_EQ(count(ptx, "mma.sync.aligned.m16n8k16.row.col.f32." + t + "." + t + ".f32"), kMma) << t;
    EXPECT_EQ(count(ptx, "ldmatrix.sync.aligned.m8n8.x4.shared.b16"), 2 * 4u) << t;
    EXPECT_EQ(count(ptx, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"), 2 * 2u) << t;
    EXPECT_EQ(count(ptx, "ldmatrix"), kLdmatrix) << t;
  }
}

// ptxas's report (through NVRTC): registers, and no spills to local memory.
TEST(MmaCompiled, NoSpillsAndTheRegisterCount) {
  KILN_REQUIRE_NVRTC();
  std::vector<std::string> options = default_compile_options(kArch);
  options.push_back("--ptxas-options=-v");
  for (const std::string t : {"bf16", "f16"}) {
    CompileResult r = compile(product_kernel(t), "mma_" + t, options);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.log, m, std::regex("Used ([0-9]+) registers"))) << r.log;
    std::cout << "[ mma      ] 128x128x32 over 2x4 warps, " << t << ": " << m[1] << " registers\n";
    EXPECT_NE(r.log.find("0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"), std::string::npos) << r.log;
  }
}

// cuobjdump where the toolkit has one: the first that exists of $CUDA_HOME/bin, /usr/local/cuda/bin,
// then PATH.
std::string find_cuobjdump() {
  std::vector<std::filesystem::path> candidates;
  if (const char* home = std::getenv("CUDA_HOME")) candidates.push_back(std::filesystem::path(home) / "bin/cuobjdump");
  candidates.push_back("/usr/local/cuda/bin/cuobjdump");
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
      if (!dir.empty()) candidates.push_back(std::filesystem::path(dir) / "cuobjdump");
    }
  }
  for (const auto& c : candidates) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(c, ec)) return c.string();
  }
  return "";
}

// Counts SASS instructions by opcode (the name before the first '.'), from cuobjdump -sass lines
// such as `/*0190*/  @P0 HMMA.16816.F32.BF16 R4, R8, R12, R4 ;`.
std::map<std::string, int> sass_opcodes(const std::string& sass) {
  std::map<std::string, int> n;
  std::regex line(R"(/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[0-9T]+\s+)?([A-Z0-9_]+)[.\s;])");
  for (std::sregex_iterator it(sass.begin(), sass.end(), line), end; it != end; ++it) ++n[(*it)[1]];
  return n;
}

// The counter on lines as cuobjdump prints them (predicated, dotted, bare), so that a skipped
// disassembly here still leaves the parsing checked.
TEST(MmaCompiled, SassOpcodesAreCountedByName) {
  const std::string sass = R"(
        /*0080*/                   LDSM.16.M88.4 R8, [R2] ;                         /* 0x000000000208783b */
        /*0090*/                   LDSM.16.MT88.4 R12, [R3+0x880] ;                  /* 0x000000000303783b */
        /*00a0*/                   HMMA.16816.F32.BF16 R16, R8, R12, R16 ;          /* 0x0000000c0810723c */
        /*00b0*/               @!P0 HMMA.16816.F32.BF16 R20, R8, R14, R20 ;          /* 0x0000000e0814723c */
        /*00c0*/                   STL.64 [R1], R4 ;                                /* 0x0000000401007387 */
        /*00d0*/                   LDS.U16 R5, [R2] ;                               /* 0x0000000002057984 */
        /*00e0*/                   EXIT ;                                           /* 0x000000000000794d */
)";
  std::map<std::string, int> ops = sass_opcodes(sass);
  EXPECT_EQ(ops["LDSM"], 2);
  EXPECT_EQ(ops["HMMA"], 2);
  EXPECT_EQ(ops["STL"], 1);
  EXPECT_EQ(ops["LDS"], 1);
  EXPECT_EQ(ops["EXIT"], 1);
  EXPECT_EQ(ops["LDL"], 0);
}

TEST(MmaCompiled, SassHasTensorCoreOpsAndNoLocalMemory) {
  KILN_REQUIRE_NVRTC();
  std::string tool = find_cuobjdump();
  if (tool.empty())
    GTEST_SKIP() << "skipped because cuobjdump was not found (CUDA_HOME/bin, /usr/local/cuda/bin, PATH)";
  CompileResult r = compile(product_kernel("bf16"), "mma_bf16", default_compile_options(kArch));
  std::filesystem::path cubin =
      std::filesystem::temp_directory_path() / ("kiln_mma_test_" + std::to_string(::getpid()) + ".cubin");
  std::ofstream(cubin, std::ios::binary).write(r.cubin.data(), std::streamsize(r.cubin.size()));
  std::string sass;
  {
    std::unique_ptr<FILE, int (*)(FILE*)> p(::popen((tool + " -sass " + cubin.string() + " 2>&1").c_str(), "r"),
                                            ::pclose);
    ASSERT_TRUE(p) << tool;
    char chunk[4096];
    for (size_t got; (got = std::fread(chunk, 1, sizeof chunk, p.get())) > 0;) sass.append(chunk, got);
  }
  std::filesystem::remove(cubin);
  std::map<std::string, int> ops = sass_opcodes(sass);
  ASSERT_FALSE(ops.empty()) << tool << " printed no instructions:\n" << sass;
  std::cout << "[ mma      ] 128x128x32 over 2x4 warps, bf16 SASS: HMMA " << ops["HMMA"] << ", LDSM " << ops["LDSM"]
            << ", STL " << ops["STL"] << ", LDL " << ops["LDL"] << "\n";
  // One HMMA.16816 per m16n8k16 product and one LDSM per ldmatrix.
  EXPECT_EQ(size_t(ops["HMMA"]), kMma) << sass;
  EXPECT_EQ(size_t(ops["LDSM"]), kLdmatrix) << sass;
  EXPECT_EQ(ops["STL"], 0) << sass;
  EXPECT_EQ(ops["LDL"], 0) << sass;
}

}  // namespace
}  // namespace kiln::cuda::testing
