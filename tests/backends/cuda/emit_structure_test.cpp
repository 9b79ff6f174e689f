// The structure of emitted CUDA C++: the ABI of the entry, masked accesses, shared memory placement,
// the entry's name, exact constants, loop pragmas and the intrinsics that keep the IR's rounding.
// These run without NVRTC.
#include <gtest/gtest.h>

#include <regex>

#include "backends/cuda/emit.h"
#include "kiln/error.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"

namespace kiln::cuda {
namespace {

const char* kHeader = "{cube_dim = [256, 1, 1], mode = unchecked, address = u32, vector = 1}";

EmitResult emit_text(const std::string& text) {
  ir::Kernel k = ir::parse(text);
  ir::verify(k, "test");
  return emit_cuda(k);
}

// The kernel's part of the source (after the prelude).
std::string entry_text(const EmitResult& r) { return r.source.substr(r.source.find("extern \"C\" __global__")); }

bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

const std::string kSaxpy =
    R"(kernel @saxpy(%a: f32, %x: buffer<vector<4 x f32>, ro>, %y: buffer<vector<4 x f32>, rw>) {cube_dim = [256, 1, 1], mode = checked, address = u32, vector = 4} {
  %0 = builtin.absolute_pos : u32
  %1 = len %x : u32
  %2 = cmp.lt %0, %1 : bool
  %3 = load %x, %0, %2 : vector<4 x f32>
  %4 = vector.splat %a : vector<4 x f32>
  %5 = load %y, %0 : vector<4 x f32>
  %6 = mul %4, %3 : vector<4 x f32>
  %7 = add %6, %5 : vector<4 x f32>
  store %y, %0, %7, %2
}
)";

TEST(EmitStructure, MaskedLoadIsAConditionalThatLeavesMemoryAlone) {
  std::string s = entry_text(emit_text(kSaxpy));
  // should read x only where the mask holds, and give zero elsewhere
  EXPECT_TRUE(has(s, "kiln_vec<f32, 4> v3 = v2 ? x[v0] : kiln_vec<f32, 4>{};")) << s;
  // should read y unconditionally: that load has no mask
  EXPECT_TRUE(has(s, "kiln_vec<f32, 4> v5 = y[v0];")) << s;
}

TEST(EmitStructure, MaskedStoreIsGuardedByAnIf) {
  std::string s = entry_text(emit_text(kSaxpy));
  EXPECT_TRUE(has(s, "if (v2) y[v0] = v7;")) << s;
}

TEST(EmitStructure, BuffersThatAliasNothingAreRestrict) {
  std::string s = entry_text(emit_text(kSaxpy));
  EXPECT_TRUE(has(s, "const kiln_vec<f32, 4>* __restrict__ x,")) << s;
  EXPECT_TRUE(has(s, "    kiln_vec<f32, 4>* __restrict__ y,")) << s;
}

TEST(EmitStructure, AliasedBuffersAreNotRestrict) {
  // An in-place launch: y (parameter 2) shares memory with x (parameter 1).
  std::string text = kSaxpy;
  text.replace(text.find("vector = 4}"), 11, "vector = 4, alias = [0, 0, 2]}");
  std::string s = entry_text(emit_text(text));
  // should drop __restrict__ from both sides of the overlap, so x gets no read-only data path
  EXPECT_TRUE(has(s, "const kiln_vec<f32, 4>* x,")) << s;
  EXPECT_TRUE(has(s, "    kiln_vec<f32, 4>* y,")) << s;
  EXPECT_FALSE(has(s, "__restrict__")) << s;
}

TEST(EmitStructure, AbiIsPointerThenLengthPerBufferAndTheValueForAScalar) {
  EmitResult r = emit_text(kSaxpy);
  using R = AbiArg::Role;
  ASSERT_EQ(r.args.size(), 5u);
  EXPECT_EQ(r.args[0].role, R::Value);
  EXPECT_EQ(r.args[0].bytes, 4u);
  EXPECT_EQ(r.args[1].role, R::Pointer);
  EXPECT_EQ(r.args[1].param, 1u);
  EXPECT_EQ(r.args[1].bytes, 8u);
  EXPECT_EQ(r.args[2].role, R::Len);
  EXPECT_EQ(r.args[2].bytes, 4u);
  EXPECT_EQ(r.args[3].role, R::Pointer);
  EXPECT_EQ(r.args[4].role, R::Len);
  EXPECT_EQ(r.args[4].param, 2u);
  std::string s = entry_text(r);
  EXPECT_TRUE(has(s,
                  "(\n    f32 a,\n    const kiln_vec<f32, 4>* __restrict__ x,\n    u32 x_len,\n"
                  "    kiln_vec<f32, 4>* __restrict__ y,\n    u32 y_len) {"))
      << s;
}

TEST(EmitStructure, TensorsPassLengthShapesThenStrides) {
  EmitResult r = emit_text(std::string("kernel @t(%t: tensor<f16, 3, ro>, %h: f16, %b: bool) ") + kHeader + R"( {
  %0 = tensor.stride %t {dim = 2} : u32
  %1 = tensor.shape %t {dim = 1} : u32
}
)");
  using R = AbiArg::Role;
  std::vector<R> roles;
  for (const AbiArg& a : r.args) roles.push_back(a.role);
  EXPECT_EQ(roles, (std::vector<R>{R::Pointer, R::Len, R::Shape, R::Shape, R::Shape, R::Stride, R::Stride, R::Stride,
                                   R::Value, R::Value}));
  EXPECT_EQ(r.args[7].dim, 2u);
  EXPECT_EQ(r.args[8].bytes, 2u);  // f16 as its 16 bits
  EXPECT_EQ(r.args[9].bytes, 1u);  // bool as one byte
  std::string s = entry_text(r);
  EXPECT_TRUE(has(s,
                  "const f16* __restrict__ t,\n    u32 t_len,\n    u32 t_shape_0,\n    u32 t_shape_1,\n"
                  "    u32 t_shape_2,\n    u32 t_stride_0,\n    u32 t_stride_1,\n    u32 t_stride_2,\n"
                  "    f16 h,\n    u8 b)"))
      << s;
  EXPECT_TRUE(has(s, "u32 v0 = t_stride_2;")) << s;
  EXPECT_TRUE(has(s, "u32 v1 = t_shape_1;")) << s;
}

TEST(EmitStructure, EntryNameIsKernelScalarWidthAndIrHash) {
  ir::Kernel k = ir::parse(kSaxpy);
  EmitResult r = emit_cuda(k);
  EXPECT_TRUE(std::regex_match(r.entry, std::regex("saxpy_f32_v4_[0-9a-f]{16}"))) << r.entry;
  EXPECT_EQ(r.entry, entry_name(k));
  EXPECT_TRUE(has(r.source, "extern \"C\" __global__ void __launch_bounds__(256) " + r.entry + "("));
  // The same IR, reparsed, has the same name; a different cube_dim is a different kernel.
  EXPECT_EQ(entry_name(ir::parse(ir::print(k))), r.entry);
  ir::Kernel other = k;
  other.facts.cube_dim = {128, 1, 1};
  EXPECT_NE(entry_name(other), r.entry);
  EXPECT_EQ(entry_name(other).substr(0, 13), "saxpy_f32_v4_");
}

TEST(EmitStructure, EmittingIsDeterministic) { EXPECT_EQ(emit_text(kSaxpy).source, emit_text(kSaxpy).source); }

std::string shared_kernel(uint32_t floats) {
  return "kernel @sh(%y: buffer<f32, rw>) " + std::string(kHeader) +
         " {\n  %0 = builtin.unit_pos : u32\n"
         "  %1 = shared.alloc : shared<f32, " +
         std::to_string(floats) +
         ">\n"
         "  %2 = load %1, %0 : f32\n  sync.cube\n  store %y, %0, %2\n}\n";
}

TEST(EmitStructure, SixteenKiBOfSharedIsStatic) {
  EmitResult r = emit_text(shared_kernel(4096));
  EXPECT_EQ(r.static_shared_bytes, 16384u);
  EXPECT_EQ(r.dynamic_shared_bytes, 0u);
  std::string s = entry_text(r);
  EXPECT_TRUE(has(s, "__shared__ __align__(16) f32 v1[4096];")) << s;
  EXPECT_FALSE(has(s, "extern __shared__")) << s;
}

TEST(EmitStructure, SixtyFourKiBOfSharedIsOneDynamicBufferWhoseSizeIsReported) {
  EmitResult r = emit_text(shared_kernel(16384));
  EXPECT_EQ(r.static_shared_bytes, 0u);
  EXPECT_EQ(r.dynamic_shared_bytes, 65536u);
  std::string s = entry_text(r);
  EXPECT_TRUE(has(s, "extern __shared__ __align__(16) u8 kiln_smem[];")) << s;
  EXPECT_TRUE(has(s, "f32* v1 = reinterpret_cast<f32*>(kiln_smem + 0);")) << s;
}

TEST(EmitStructure, FortyEightKiBIsTheLastStaticSize) {
  EXPECT_EQ(emit_text(shared_kernel(12288)).static_shared_bytes, 49152u);
  EmitResult over = emit_text(shared_kernel(12289));
  EXPECT_EQ(over.static_shared_bytes, 0u);
  EXPECT_EQ(over.dynamic_shared_bytes, 49168u);  // rounded up to 16 bytes
}

TEST(EmitStructure, DynamicSharedOffsetsAreSixteenByteAligned) {
  EmitResult r = emit_text(
      "kernel @sh(%y: buffer<u8, rw>) {cube_dim = [64, 1, 1], mode = unchecked, address = u32, "
      "vector = 1} {\n  %0 = builtin.unit_pos : u32\n  %1 = const true : bool\n  if %1 {\n"
      "    %2 = shared.alloc : shared<u8, 3>\n    %3 = load %2, %0 : u8\n    store %y, %0, %3\n"
      "  }\n  %4 = shared.alloc : shared<vector<4 x f32>, 4000>\n}\n");
  EXPECT_EQ(r.dynamic_shared_bytes, 16u + 64000u);
  std::string s = entry_text(r);
  // The array allocated inside the if is declared at the top of the entry, before any statement.
  size_t first_statement = s.find("u32 v0 =");
  EXPECT_LT(s.find("u8* v2 = reinterpret_cast<u8*>(kiln_smem + 0);"), first_statement) << s;
  EXPECT_LT(s.find("kiln_vec<f32, 4>* v4 = reinterpret_cast<kiln_vec<f32, 4>*>(kiln_smem + 16);"), first_statement)
      << s;
}

// Arrays of one overlay group start at the same byte and take their largest member's room; the
// rest follow. Overlays always live in the dynamic buffer, where arrays of two types can alias.
TEST(EmitStructure, OverlayGroupsShareTheirFirstByte) {
  EmitResult r = emit_text(
      "kernel @sh(%y: buffer<f32, rw>) " + std::string(kHeader) +
      " {\n  %0 = builtin.unit_pos : u32\n"
      "  %1 = shared.alloc {overlay = 0} : shared<f32, 1000>\n"
      "  %2 = shared.alloc : shared<u8, 100>\n"
      "  %3 = shared.alloc {overlay = 0} : shared<bf16, 5000>\n"
      "  %4 = load %1, %0 : f32\n  %5 = load %2, %0 : u8\n  %6 = load %3, %0 : bf16\n  store %y, %0, %4\n}\n");
  EXPECT_EQ(r.dynamic_shared_bytes, 10000u + 112u);
  std::string s = entry_text(r);
  EXPECT_TRUE(has(s, "f32* v1 = reinterpret_cast<f32*>(kiln_smem + 0);")) << s;
  EXPECT_TRUE(has(s, "u8* v2 = reinterpret_cast<u8*>(kiln_smem + 10000);")) << s;
  EXPECT_TRUE(has(s, "bf16* v3 = reinterpret_cast<bf16*>(kiln_smem + 0);")) << s;
}

// The occupancy hint: on sm_90 (228 KiB of shared memory per SM) 100 KiB admits two cubes of 128
// units, which leaves each unit 256 registers, so ptxas is told; 60 KiB admits three (170
// registers each), which would cap registers, so it is not.
TEST(EmitStructure, SharedMemoryThatCapsCubesPerSmBecomesALaunchBoundsHint) {
  auto kernel = [](uint32_t floats, const char* target) {
    return "kernel @sh(%y: buffer<f32, rw>) {cube_dim = [128, 1, 1], mode = unchecked, address = u32, vector = 1, "
           "target = " +
           std::string(target) +
           "} {\n  %0 = builtin.unit_pos : u32\n"
           "  %1 = shared.alloc : shared<f32, " +
           std::to_string(floats) +
           ">\n"
           "  %2 = load %1, %0 : f32\n  store %y, %0, %2\n}\n";
  };
  EXPECT_TRUE(has(entry_text(emit_text(kernel(25600, "sm_90a"))), "__launch_bounds__(128, 2)"));
  EXPECT_TRUE(has(entry_text(emit_text(kernel(15360, "sm_90a"))), "__launch_bounds__(128) "));
  // sm_86 has 100 KiB per SM: 60 KiB admits one cube.
  EXPECT_TRUE(has(entry_text(emit_text(kernel(15360, "sm_86"))), "__launch_bounds__(128, 1)"));
}

// Registers go to whole planes: 48 units hold two planes' registers, so five cubes of them (44
// KiB each) would leave 204 a unit, and there is no hint; a cube of one unit that shared memory
// would admit 224 times is past the 32 resident cubes sm_90 allows, so shared memory caps nothing.
TEST(EmitStructure, TheOccupancyHintCountsWholePlanesAndTheResidentCubeLimit) {
  auto kernel = [](uint32_t units, uint32_t floats) {
    return "kernel @sh(%y: buffer<f32, rw>) {cube_dim = [" + std::to_string(units) +
           ", 1, 1], mode = unchecked, address = u32, vector = 1, target = sm_90a} {\n"
           "  %0 = builtin.unit_pos : u32\n  %1 = shared.alloc : shared<f32, " +
           std::to_string(floats) +
           ">\n"
           "  %2 = load %1, %0 : f32\n  store %y, %0, %2\n}\n";
  };
  EXPECT_TRUE(has(entry_text(emit_text(kernel(48, 11264))), "__launch_bounds__(48) "));
  EXPECT_TRUE(has(entry_text(emit_text(kernel(1, 1))), "__launch_bounds__(1) "));
}

TEST(EmitStructure, CubeDimIsACompileTimeConstant) {
  EmitResult r = emit_text(
      "kernel @b(%y: buffer<u32, rw>) {cube_dim = [8, 32, 1], mode = unchecked, address = u32, "
      "vector = 1} {\n  %0 = builtin.cube_dim : u32\n  %1 = builtin.cube_dim {axis = 1} : u32\n"
      "  %2 = builtin.unit_pos : u32\n  %3 = builtin.absolute_pos {axis = 1} : u32\n}\n");
  std::string s = entry_text(r);
  EXPECT_TRUE(has(s, "__launch_bounds__(256)")) << s;
  EXPECT_TRUE(has(s, "u32 v0 = 256u;")) << s;
  EXPECT_TRUE(has(s, "u32 v1 = 32u;")) << s;
  EXPECT_TRUE(has(s, "u32 v2 = (threadIdx.x + threadIdx.y * 8u);")) << s;
  EXPECT_TRUE(has(s, "u32 v3 = (blockIdx.y * 32u + threadIdx.y);")) << s;
}

TEST(EmitStructure, FloatConstantsAreExact) {
  EmitResult r = emit_text(std::string("kernel @c(%y: buffer<f32, rw>) ") + kHeader + R"( {
  %0 = const 0.1 : f32
  %1 = const inf : f32
  %2 = const nan : f64
  %3 = const 1.0 : f16
  %4 = const -2.5 : bf16
  %5 = const 0.1 : f64
  %6 = const -9223372036854775808 : i64
  %7 = const 4294967295 : u32
  %8 = const 1e-45 : f32
}
)");
  std::string s = entry_text(r);
  EXPECT_TRUE(has(s, "f32 v0 = 0.1f;")) << s;
  EXPECT_TRUE(has(s, "f32 v1 = __int_as_float((i32)0x7f800000u);")) << s;
  EXPECT_TRUE(has(s, "f64 v2 = __longlong_as_double(0x7ff8000000000000ll);")) << s;
  EXPECT_TRUE(has(s, "f16 v3 = f16{(u16)0x3c00};")) << s;
  EXPECT_TRUE(has(s, "bf16 v4 = bf16{(u16)0xc020};")) << s;
  EXPECT_TRUE(has(s, "f64 v5 = 0.1;")) << s;
  EXPECT_TRUE(has(s, "i64 v6 = (i64)(-9223372036854775807ll - 1);")) << s;
  EXPECT_TRUE(has(s, "u32 v7 = (u32)4294967295u;")) << s;
  EXPECT_TRUE(has(s, "f32 v8 = __int_as_float((i32)0x1u);")) << s;  // the smallest subnormal, by its bits
}

TEST(EmitStructure, SixteenBitFloatConstantsRoundOnceFromTheF64Value) {
  // 1 + 2^-11 + 2^-40 is just above the midpoint between 1 and the next f16: it rounds up. Rounding
  // to f32 first would land on the midpoint and then round to even (down), a different result.
  EmitResult r = emit_text(std::string("kernel @c(%y: buffer<f32, rw>) ") + kHeader +
                           " {\n  %0 = const 1.0004882812509095 : f16\n}\n");
  EXPECT_TRUE(has(entry_text(r), "f16 v0 = f16{(u16)0x3c01};")) << entry_text(r);
}

TEST(EmitStructure, FloatMultiplyCannotBeContractedIntoAnFma) {
  std::string s = entry_text(emit_text(kSaxpy));
  EXPECT_TRUE(has(s, "__fmul_rn(v4.v[0], v3.v[0])")) << s;
}

TEST(EmitStructure, FastMathPicksTheIntrinsicAndF64TheDoubleFunction) {
  EmitResult r = emit_text(std::string("kernel @m(%y: buffer<f32, rw>, %d: f64, %h: f16) ") + kHeader + R"( {
  %0 = const 1.0 : f32
  %1 = exp %0 {fast_math} : f32
  %2 = exp %0 : f32
  %3 = exp %d : f64
  %4 = sin %h : f16
  %5 = isnan %h : bool
}
)");
  std::string s = entry_text(r);
  EXPECT_TRUE(has(s, "f32 v1 = __expf(v0);")) << s;
  EXPECT_TRUE(has(s, "f32 v2 = expf(v0);")) << s;
  EXPECT_TRUE(has(s, "f64 v3 = exp(d);")) << s;
  EXPECT_TRUE(has(s, "f16 v4 = kiln_f16(sinf(kiln_f32(h)));")) << s;  // computed in f32, rounded back
  EXPECT_TRUE(has(s, "bool v5 = kiln_isnan(kiln_f32(h));")) << s;
}

TEST(EmitStructure, CastsUseTheSaturatingAndSingleRoundingHelpers) {
  EmitResult r = emit_text(std::string("kernel @c(%f: f32, %d: f64, %i: i64) ") + kHeader + R"( {
  %0 = cast %f : i32
  %1 = cast %d : u8
  %2 = cast %d : f16
  %3 = cast %i : bf16
  %4 = cast %f : bool
  %5 = cast %i : i8
}
)");
  std::string s = entry_text(r);
  EXPECT_TRUE(has(s, "i32 v0 = kiln_ftoi_i32(f);")) << s;
  EXPECT_TRUE(has(s, "u8 v1 = kiln_ftoi_u8(d);")) << s;
  EXPECT_TRUE(has(s, "f16 v2 = kiln_f16(kiln_f32_odd(d));")) << s;
  EXPECT_TRUE(has(s, "bf16 v3 = kiln_bf16(kiln_f32_odd(i));")) << s;
  EXPECT_TRUE(has(s, "bool v4 = (f != 0);")) << s;
  EXPECT_TRUE(has(s, "i8 v5 = (i8)i;")) << s;
}

TEST(EmitStructure, LoopAttributesBecomePragmas) {
  EmitResult r = emit_text(std::string("kernel @l(%n: u32) ") + kHeader + R"( {
  %0 = const 0 : u32
  %1 = const 1 : u32
  for %0, %n, %1 {unroll = 4} (%2: u32) {
  }
  for %0, %n, %1 {unroll_full} (%3: u32) {
  }
  for %0, %n, %1 {prefetch_stages = 3} (%4: u32) {
  }
  %5 = const 0 : i32
  %6 = const 9 : i32
  %7 = const 2 : i32
  for %5, %6, %7 (%8: i32) {
  }
}
)");
  std::string s = entry_text(r);
  EXPECT_TRUE(has(s, "  #pragma unroll 4\n  for (u32 v2 = v0; v2 < n; v2 += v1) {")) << s;
  EXPECT_TRUE(has(s, "  #pragma unroll\n  for (u32 v3 = v0; v3 < n; v3 += v1) {")) << s;
  EXPECT_TRUE(has(s, "// prefetch_stages = 3 (pipeline_loops pipelines the tile loads it can)")) << s;
  // A signed induction variable steps with wrapping arithmetic (no signed overflow in C++).
  EXPECT_TRUE(has(s, "for (i32 v8 = v5; v8 < v6; v8 = kiln_add(v8, v7)) {")) << s;
}

TEST(EmitStructure, WhileBreakContinueTerminate) {
  EmitResult r = emit_text(std::string("kernel @w(%n: u32) ") + kHeader + R"( {
  %0 = const 0 : u32
  while {
    %1 = cmp.lt %0, %n : bool
    condition %1
  } do {
    %2 = cmp.eq %0, %n : bool
    if %2 {
      break
    } else {
      continue
    }
  }
  terminate
}
)");
  std::string s = entry_text(r);
  EXPECT_TRUE(has(s,
                  "  while (true) {\n    bool v1 = (v0 < n);\n    if (!v1) break;\n    bool v2 = (v0 == n);\n"
                  "    if (v2) {\n      break;\n    } else {\n      continue;\n    }\n  }\n  return;\n"))
      << s;
}

TEST(EmitStructure, SyncAndPlaneOps) {
  EmitResult r = emit_text(std::string("kernel @p(%x: f32, %b: bool) ") + kHeader + R"( {
  sync.cube
  sync.plane
  %0 = plane.sum %x : f32
  %1 = plane.ballot %b : u32
  %2 = plane.shuffle_down %x, %1 : f32
  %3 = plane.exclusive_sum %x : f32
}
)");
  std::string s = entry_text(r);
  EXPECT_TRUE(has(s, "__syncthreads();\n  __syncwarp();")) << s;
  // should start from every lane of a full plane (256 units: no partial plane)
  EXPECT_TRUE(has(s, "u32 kiln_m0 = 0xffffffffu;")) << s;
  EXPECT_TRUE(has(s, "f32 v0 = kiln_plane_reduce<kiln_op_add>(kiln_m0, x);")) << s;
  EXPECT_TRUE(has(s, "u32 v1 = kiln_plane_ballot(kiln_m0, (b != 0));")) << s;
  EXPECT_TRUE(has(s, "f32 v2 = kiln_shfl_down(kiln_m0, x, v1);")) << s;
  EXPECT_TRUE(has(s, "f32 v3 = kiln_plane_scan(kiln_m0, x, false);")) << s;
}

// ---- plane ops take the IR's active lanes (docs/decisions/013-plane-masks-on-cuda.md) ----

TEST(EmitStructure, PlaneOpsTakeTheirRegionsMaskAndNeverActivemask) {
  EmitResult r = emit_text(std::string("kernel @p(%x: u32, %c: bool) ") + kHeader + R"( {
  if %c {
    %0 = plane.sum %x : u32
  } else {
    %1 = plane.elect : bool
    %2 = plane.ballot %1 : u32
  }
  %3 = plane.broadcast %x, %x : u32
}
)");
  // should derive every mask from the regions, in the prelude too
  EXPECT_FALSE(has(r.source, "__activemask")) << r.source;
  std::string s = entry_text(r);
  EXPECT_TRUE(has(s,
                  "  u32 kiln_m1 = __ballot_sync(kiln_m0, (c != 0));\n"
                  "  if ((c != 0)) {\n"
                  "    u32 v0 = kiln_plane_reduce<kiln_op_add>(kiln_m1, x);\n"
                  "  } else {\n"
                  "    u32 kiln_m2 = kiln_m0 & ~kiln_m1;\n"
                  "    bool v1 = kiln_plane_elect(kiln_m2);\n"
                  "    u32 v2 = kiln_plane_ballot(kiln_m2, v1);\n"
                  "  }\n"
                  "  u32 v3 = kiln_shfl_idx(kiln_m0, x, x);\n"))
      << s;
}

TEST(EmitStructure, APartialPlaneStartsWithTheLanesThatExist) {
  const std::string body = " {\n  %0 = plane.sum %x : u32\n}\n";
  std::string s = entry_text(
      emit_text("kernel @p(%x: u32) {cube_dim = [40, 1, 1], mode = unchecked, address = u32, vector = 1}" + body));
  EXPECT_TRUE(has(s, "u32 kiln_m0 = kiln_plane_lanes(threadIdx.x, 40u);")) << s;
  // a plane spans rows: the lanes come from the linear unit position
  s = entry_text(
      emit_text("kernel @p(%x: u32) {cube_dim = [8, 5, 1], mode = unchecked, address = u32, vector = 1}" + body));
  EXPECT_TRUE(has(s, "u32 kiln_m0 = kiln_plane_lanes((threadIdx.x + threadIdx.y * 8u), 40u);")) << s;
}

TEST(EmitStructure, AForLoopNarrowsItsMaskAtEachTestAndBreakAndContinueAreFlags) {
  EmitResult r = emit_text(std::string("kernel @l(%n: u32, %x: u32) ") + kHeader + R"( {
  %0 = const 0 : u32
  %1 = const 1 : u32
  for %0, %n, %1 (%2: u32) {
    %3 = cmp.eq %2, %x : bool
    if %3 {
      continue
    }
    %4 = cmp.gt %2, %x : bool
    if %4 {
      break
    }
    %5 = plane.sum %2 : u32
  }
  %6 = plane.sum %x : u32
}
)");
  std::string s = entry_text(r);
  // should test in a ballot over the units still looping; a unit that broke votes "done" there;
  // after an `if` that may break or continue, the iteration's mask drops the units that did, and
  // they skip the rest; after the loop every unit is back
  EXPECT_TRUE(has(s,
                  "  u32 kiln_m1 = kiln_m0;  // the units that run the loop's test\n"
                  "  bool kiln_broke1 = false;\n"
                  "  for (u32 v2 = v0; kiln_narrow(kiln_m1, !kiln_broke1 && v2 < n); v2 += v1) {\n"
                  "    bool kiln_skip1 = false;\n"
                  "    u32 kiln_m2 = kiln_m1;\n"
                  "    bool v3 = (v2 == x);\n"
                  "    if (v3) {\n"
                  "      kiln_skip1 = true;  // continue\n"
                  "    }\n"
                  "    kiln_m2 = __ballot_sync(kiln_m2, !kiln_skip1);  // without the units that left\n"
                  "    if (!kiln_skip1) {\n"
                  "      bool v4 = (v2 > x);\n"
                  "      if (v4) {\n"
                  "        kiln_broke1 = kiln_skip1 = true;  // break\n"
                  "      }\n"
                  "      kiln_m2 = __ballot_sync(kiln_m2, !kiln_skip1);  // without the units that left\n"
                  "      if (!kiln_skip1) {\n"
                  "        u32 v5 = kiln_plane_reduce<kiln_op_add>(kiln_m2, v2);\n"
                  "      }\n"
                  "    }\n"
                  "  }\n"
                  "  u32 v6 = kiln_plane_reduce<kiln_op_add>(kiln_m0, x);\n"))
      << s;
  EXPECT_FALSE(has(s, "break;")) << s;     // no C break leaves the body: the test is the only exit
  EXPECT_FALSE(has(s, "continue;")) << s;  // and no C continue skips a ballot
}

TEST(EmitStructure, AWhileLoopNarrowsAtItsConditionAndUnitsThatBrokeLeaveAtTheTop) {
  EmitResult r = emit_text(std::string("kernel @w(%x: u32) ") + kHeader + R"( {
  %0 = const 1 : u32
  %1 = var.decl : var<u32>
  var.store %1, %x
  while {
    %2 = var.load %1 : u32
    %3 = plane.max %2 : u32
    %4 = cmp.gt %2, %0 : bool
    condition %4
  } do {
    %5 = var.load %1 : u32
    %6 = shr %5, %0 : u32
    var.store %1, %6
    %7 = cmp.eq %6, %x : bool
    if %7 {
      break
    }
  }
}
)");
  std::string s = entry_text(r);
  EXPECT_TRUE(has(s,
                  "  u32 kiln_m1 = kiln_m0;  // the units that run the condition region\n"
                  "  bool kiln_broke1 = false;\n"
                  "  while (true) {\n"
                  "    if (!kiln_narrow(kiln_m1, !kiln_broke1)) break;\n"
                  "    u32 v2 = v1;\n"
                  "    u32 v3 = kiln_plane_reduce<kiln_op_max>(kiln_m1, v2);\n"
                  "    bool v4 = (v2 > v0);\n"
                  "    if (!kiln_narrow(kiln_m1, v4)) break;\n"))
      << s;
  // the body has no plane op and nothing after its `if`: the break only sets the loop's flag
  EXPECT_TRUE(has(s, "    if (v7) {\n      kiln_broke1 = true;  // break\n    }\n  }\n")) << s;
}

TEST(EmitStructure, TerminateReturnsAndTheMaskIsRebuiltBeforeTheNextPlaneOp) {
  EmitResult r = emit_text(std::string("kernel @t(%x: u32, %c: bool) ") + kHeader + R"( {
  if %c {
    terminate
  }
  %0 = plane.sum %x : u32
}
)");
  std::string s = entry_text(r);
  // a unit that returned votes nothing: the ballot leaves it out
  EXPECT_TRUE(has(s,
                  "  if ((c != 0)) {\n    return;\n  }\n"
                  "  kiln_m0 = __ballot_sync(kiln_m0, true);  // without the units that left\n"
                  "  u32 v0 = kiln_plane_reduce<kiln_op_add>(kiln_m0, x);\n"))
      << s;
}

TEST(EmitStructure, ControlFlowWithoutPlaneOpsStaysPlainCInAKernelWithPlaneOps) {
  EmitResult r = emit_text(std::string("kernel @c(%n: u32, %x: u32) ") + kHeader + R"( {
  %0 = const 0 : u32
  %1 = const 1 : u32
  for %0, %n, %1 (%2: u32) {
    %3 = cmp.eq %2, %x : bool
    if %3 {
      break
    }
  }
  %4 = plane.sum %x : u32
}
)");
  std::string s = entry_text(r);
  EXPECT_TRUE(
      has(s, "  for (u32 v2 = v0; v2 < n; v2 += v1) {\n    bool v3 = (v2 == x);\n    if (v3) {\n      break;\n"))
      << s;
  EXPECT_FALSE(has(s, "__ballot_sync")) << s;
}

// A kernel without plane ops: the source its body had before plane ops took masks, byte for byte.
TEST(EmitStructure, AKernelWithoutPlaneOpsIsEmittedAsBefore) {
  EmitResult r = emit_text(
      R"(kernel @no_plane(%x: buffer<u32, ro>, %out: buffer<u32, rw>) {cube_dim = [40, 1, 1], mode = unchecked, address = u32, vector = 1} {
  %0 = builtin.absolute_pos : u32
  %1 = load %x, %0 : u32
  %2 = var.decl : var<u32>
  %3 = const 0 : u32
  var.store %2, %3
  %4 = const 1 : u32
  %5 = const 3 : u32
  for %3, %1, %4 (%6: u32) {
    %7 = rem %6, %5 : u32
    %8 = cmp.eq %7, %3 : bool
    if %8 {
      continue
    }
    %9 = cmp.gt %6, %5 : bool
    if %9 {
      terminate
    }
    %10 = var.load %2 : u32
    %11 = add %10, %6 : u32
    var.store %2, %11
  }
  sync.cube
  while {
    %12 = var.load %2 : u32
    %13 = cmp.gt %12, %4 : bool
    condition %13
  } do {
    %14 = var.load %2 : u32
    %15 = shr %14, %4 : u32
    var.store %2, %15
    %16 = cmp.eq %15, %5 : bool
    if %16 {
      break
    } else {
      sync.plane
    }
  }
  %17 = var.load %2 : u32
  store %out, %0, %17
}
)");
  EXPECT_EQ(entry_text(r), R"(extern "C" __global__ void __launch_bounds__(40) no_plane_u32_v1_d48d883effede56b(
    const u32* __restrict__ x,
    u32 x_len,
    u32* __restrict__ out,
    u32 out_len) {
  u32 v0 = ((blockIdx.x + blockIdx.y * gridDim.x + blockIdx.z * gridDim.x * gridDim.y) * 40u + threadIdx.x);
  u32 v1 = x[v0];
  u32 v2;
  u32 v3 = (u32)0u;
  v2 = v3;
  u32 v4 = (u32)1u;
  u32 v5 = (u32)3u;
  for (u32 v6 = v3; v6 < v1; v6 += v4) {
    u32 v7 = (v6 % v5);
    bool v8 = (v7 == v3);
    if (v8) {
      continue;
    }
    bool v9 = (v6 > v5);
    if (v9) {
      return;
    }
    u32 v10 = v2;
    u32 v11 = (v10 + v6);
    v2 = v11;
  }
  __syncthreads();
  while (true) {
    u32 v12 = v2;
    bool v13 = (v12 > v4);
    if (!v13) break;
    u32 v14 = v2;
    u32 v15 = kiln_shr(v14, v4);
    v2 = v15;
    bool v16 = (v15 == v5);
    if (v16) {
      break;
    } else {
      __syncwarp();
    }
  }
  u32 v17 = v2;
  out[v0] = v17;
}
)");
}

TEST(EmitStructure, MaskedAtomicSkipsAndGivesZero) {
  EmitResult r = emit_text(std::string("kernel @a(%y: buffer<i64, rw>, %m: bool) ") + kHeader + R"( {
  %0 = const 0 : u32
  %1 = const 5 : i64
  %2 = atomic.add %y, %0, %1, %m : i64
  %3 = atomic.cas %y, %0, %1, %2 : i64
}
)");
  std::string s = entry_text(r);
  EXPECT_TRUE(has(s, "i64 v2 = (m != 0) ? kiln_atomic_add(&y[v0], v1) : i64{};")) << s;
  EXPECT_TRUE(has(s, "i64 v3 = kiln_atomic_cas(&y[v0], v1, v2);")) << s;
}

TEST(EmitStructure, DebugPrintPromotesAsVarargs) {
  EmitResult r = emit_text(std::string("kernel @d(%f: f32, %h: bf16, %b: bool, %s: i16) ") + kHeader +
                           " {\n  debug.print %f, %h, %b, %s {format = \"%f %f %d %d\\n\"}\n}\n");
  EXPECT_TRUE(has(entry_text(r), "printf(\"%f %f %d %d\\n\", (double)f, (double)kiln_f32(h), (int)(b != 0), (int)s);"))
      << entry_text(r);
}

TEST(EmitStructure, ParameterNamesThatClashAreRenamed) {
  EmitResult r = emit_text(std::string("kernel @c(%float: buffer<f32, rw>, %float_len: u32, %v3: f32, %kiln_add: i32, "
                                       "%threadIdx: u32, %u32: u32) ") +
                           kHeader + " {\n}\n");
  std::string s = entry_text(r);
  EXPECT_TRUE(
      has(s,
          "f32* __restrict__ float_,\n    u32 float_len,\n    u32 float_len_,\n    f32 v3_,\n    i32 p_kiln_add,\n"
          "    u32 threadIdx_,\n    u32 u32_)"))
      << s;
}

TEST(EmitStructure, CheckedAccessesAreRejected) {
  try {
    emit_text(std::string("kernel @c(%y: buffer<f32, rw>) ") + kHeader +
              " {\n  %0 = const 0 : u32\n  %1 = load %y, %0 {checked} : f32\n}\n");
    FAIL() << "a checked access was emitted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "emit.unsupported");
    EXPECT_TRUE(has(e.message(), "checked_io")) << e.message();
  }
}

}  // namespace
}  // namespace kiln::cuda
