// Runs emitted kernels on a GPU and checks the IR's semantics where CUDA C++ differs from it
// (saturating casts, single rounding to 16-bit floats, shifts past the width, MIN / -1, plane ops
// over the active lanes, masked tails, dynamic shared memory past 48 KiB). The driver is reached
// through a small test-local dlopen shim packing arguments by EmitResult::args, as a launcher
// does. Skips, saying so, where there is no driver or no GPU.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "cuda_test_util.h"
#include "kiln/half.h"
#include "kiln/ir/mma.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"

namespace kiln::cuda::testing {
namespace {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
constexpr int kMaxDynamicSharedAttribute = 8;  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES

// The driver entry points this test uses.
struct Driver {
  bool ok = false;
  std::string why;
  CUresult (*init)(unsigned) = nullptr;
  CUresult (*device_get_count)(int*) = nullptr;
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*primary_ctx_retain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*ctx_set_current)(CUcontext) = nullptr;
  CUresult (*module_load_data)(CUmodule*, const void*) = nullptr;
  CUresult (*module_get_function)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*module_unload)(CUmodule) = nullptr;
  CUresult (*func_set_attribute)(CUfunction, int, int) = nullptr;
  CUresult (*mem_alloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*mem_free)(CUdeviceptr) = nullptr;
  CUresult (*htod)(CUdeviceptr, const void*, size_t) = nullptr;
  CUresult (*dtoh)(void*, CUdeviceptr, size_t) = nullptr;
  CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**,
                     void**) = nullptr;
  CUresult (*synchronize)() = nullptr;

  static Driver& get() {
    static Driver d = [] {
      Driver d;
      void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
      if (!h) {
        d.why = "no CUDA driver (libcuda.so.1 not found)";
        return d;
      }
      auto sym = [&](auto& fn, const char* name) {
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
      };
      sym(d.init, "cuInit");
      sym(d.device_get_count, "cuDeviceGetCount");
      sym(d.device_get, "cuDeviceGet");
      sym(d.primary_ctx_retain, "cuDevicePrimaryCtxRetain");
      sym(d.ctx_set_current, "cuCtxSetCurrent");
      sym(d.module_load_data, "cuModuleLoadData");
      sym(d.module_get_function, "cuModuleGetFunction");
      sym(d.module_unload, "cuModuleUnload");
      sym(d.func_set_attribute, "cuFuncSetAttribute");
      sym(d.mem_alloc, "cuMemAlloc_v2");
      sym(d.mem_free, "cuMemFree_v2");
      sym(d.htod, "cuMemcpyHtoD_v2");
      sym(d.dtoh, "cuMemcpyDtoH_v2");
      sym(d.launch, "cuLaunchKernel");
      sym(d.synchronize, "cuCtxSynchronize");
      int count = 0;
      CUdevice dev = 0;
      CUcontext ctx = nullptr;
      if (!d.init || d.init(0) != 0 || d.device_get_count(&count) != 0 || count == 0) {
        d.why = "a CUDA driver but no usable GPU";
        return d;
      }
      if (d.device_get(&dev, 0) != 0 || d.primary_ctx_retain(&ctx, dev) != 0 || d.ctx_set_current(ctx) != 0) {
        d.why = "a GPU whose context could not be made current";
        return d;
      }
      d.ok = true;
      return d;
    }();
    return d;
  }
};

#define KILN_REQUIRE_GPU()                                                                                   \
  do {                                                                                                       \
    KILN_REQUIRE_NVRTC();                                                                                    \
    if (!Driver::get().ok) GTEST_SKIP() << "skipped: " << Driver::get().why << "; kernels are not run here"; \
  } while (0)

void check(CUresult r, const char* what) {
  if (r != 0) throw std::runtime_error(std::string(what) + " failed with CUresult " + std::to_string(r));
}

// A device buffer holding a copy of `host`, shown to the kernel with `len` elements.
struct DeviceBuffer {
  CUdeviceptr ptr = 0;
  size_t bytes = 0;
  uint32_t len = 0;
  template <class T>
  DeviceBuffer(const std::vector<T>& host, uint32_t shown) : bytes(host.size() * sizeof(T)), len(shown) {
    check(Driver::get().mem_alloc(&ptr, bytes), "cuMemAlloc");
    check(Driver::get().htod(ptr, host.data(), bytes), "cuMemcpyHtoD");
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { Driver::get().mem_free(ptr); }
  template <class T>
  std::vector<T> read() const {
    std::vector<T> out(bytes / sizeof(T));
    check(Driver::get().dtoh(out.data(), ptr, bytes), "cuMemcpyDtoH");
    return out;
  }
};

// One IR parameter's launch value: a buffer, or a scalar's bytes.
struct Arg {
  const DeviceBuffer* buffer = nullptr;
  std::vector<unsigned char> bytes;
  template <class T>
  static Arg scalar(T v) {
    Arg a;
    a.bytes.resize(sizeof(T));
    std::memcpy(a.bytes.data(), &v, sizeof(T));
    return a;
  }
  static Arg of(const DeviceBuffer& b) {
    Arg a;
    a.buffer = &b;
    return a;
  }
};

// Emits, compiles, loads and launches `text` on `cubes` cubes; packs arguments by r.args.
void run(const std::string& text, uint32_t cubes, const std::vector<Arg>& args) {
  ir::Kernel k = ir::parse(text);
  ir::verify(k, "gpu test");
  EmitResult r = emit_cuda(k);
  CompileResult c = compile(r.source, r.entry, default_compile_options(kArch));
  Driver& d = Driver::get();
  CUmodule mod = nullptr;
  CUfunction fn = nullptr;
  check(d.module_load_data(&mod, c.cubin.data()), "cuModuleLoadData");
  check(d.module_get_function(&fn, mod, r.entry.c_str()), "cuModuleGetFunction");
  if (r.dynamic_shared_bytes > ir::Target::kCudaStaticShared) {
    check(d.func_set_attribute(fn, kMaxDynamicSharedAttribute, static_cast<int>(r.dynamic_shared_bytes)),
          "cuFuncSetAttribute");
  }
  std::vector<std::vector<unsigned char>> storage;
  storage.reserve(r.args.size());
  for (const AbiArg& a : r.args) {
    const Arg& v = args.at(a.param);
    std::vector<unsigned char> blob;
    if (a.role == AbiArg::Role::Pointer) {
      blob.resize(8);
      std::memcpy(blob.data(), &v.buffer->ptr, 8);
    } else if (a.role == AbiArg::Role::Len) {
      blob.resize(4);
      std::memcpy(blob.data(), &v.buffer->len, 4);
    } else if (a.role == AbiArg::Role::Value) {
      blob = v.bytes;
      EXPECT_EQ(blob.size(), a.bytes);
    } else {
      throw std::runtime_error("these tests pass no tensors");
    }
    storage.push_back(std::move(blob));
  }
  std::vector<void*> params;
  for (auto& s : storage) params.push_back(s.data());
  const ir::Dim3& cd = k.facts.cube_dim;
  check(d.launch(fn, cubes, 1, 1, cd.x, cd.y, cd.z, r.dynamic_shared_bytes, nullptr, params.data(), nullptr),
        "cuLaunchKernel");
  check(d.synchronize(), "cuCtxSynchronize");
  d.module_unload(mod);
  ++compiled_count();
}

TEST(GpuRun, SaxpyMaskedTailLeavesThePastTheEndElementsAlone) {
  KILN_REQUIRE_GPU();
  const uint32_t shown = 250;  // vectors of 4 floats; 256 units run
  std::vector<float> x(256 * 4), y(256 * 4);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = 0.37f * float(i) - 11.0f;
    y[i] = i < shown * 4 ? 1.0f / float(i + 1) : -777.0f;
  }
  DeviceBuffer dx(x, shown), dy(y, shown);
  run(R"(kernel @saxpy(%a: f32, %x: buffer<vector<4 x f32>, ro>, %y: buffer<vector<4 x f32>, rw>) {cube_dim = [64, 1, 1], mode = checked, address = u32, vector = 4} {
  %0 = builtin.absolute_pos : u32
  %1 = len %x : u32
  %2 = cmp.lt %0, %1 : bool
  %3 = load %x, %0, %2 : vector<4 x f32>
  %4 = vector.splat %a : vector<4 x f32>
  %5 = load %y, %0, %2 : vector<4 x f32>
  %6 = mul %4, %3 : vector<4 x f32>
  %7 = add %6, %5 : vector<4 x f32>
  store %y, %0, %7, %2
}
)",
      4, {Arg::scalar(1.7f), Arg::of(dx), Arg::of(dy)});
  std::vector<float> out = dy.read<float>();
  for (size_t i = 0; i < out.size(); ++i) {
    float want = i < shown * 4 ? 1.7f * x[i] + y[i] : -777.0f;  // rounded twice: no fma on either side
    ASSERT_EQ(std::bit_cast<uint32_t>(out[i]), std::bit_cast<uint32_t>(want)) << "element " << i;
  }
}

TEST(GpuRun, FloatToIntCastsTruncateSaturateAndSendNanToZero) {
  KILN_REQUIRE_GPU();
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> in = {std::nanf(""), inf, -inf, 3e9f, -3e9f, 1.9f, -1.9f, 300.0f, -300.0f, 70000.0f, 0.0f, -0.5f};
  uint32_t n = static_cast<uint32_t>(in.size());
  std::vector<int32_t> i32(n, 99), i8(n, 99);
  std::vector<uint32_t> u32(n, 99), u8(n, 99);
  DeviceBuffer din(in, n), di32(i32, n), du32(u32, n), di8(i8, n), du8(u8, n);
  run(R"(kernel @casts(%x: buffer<f32, ro>, %a: buffer<i32, rw>, %b: buffer<u32, rw>, %c: buffer<i32, rw>, %d: buffer<u32, rw>) {cube_dim = [32, 1, 1], mode = checked, address = u32, vector = 1} {
  %0 = builtin.absolute_pos : u32
  %1 = len %x : u32
  %2 = cmp.lt %0, %1 : bool
  %3 = load %x, %0, %2 : f32
  %4 = cast %3 : i32
  store %a, %0, %4, %2
  %5 = cast %3 : u32
  store %b, %0, %5, %2
  %6 = cast %3 : i8
  %7 = cast %6 : i32
  store %c, %0, %7, %2
  %8 = cast %3 : u8
  %9 = cast %8 : u32
  store %d, %0, %9, %2
}
)",
      1, {Arg::of(din), Arg::of(di32), Arg::of(du32), Arg::of(di8), Arg::of(du8)});
  std::vector<int32_t> want_i32 = {0, INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN, 1, -1, 300, -300, 70000, 0, 0};
  std::vector<uint32_t> want_u32 = {0, UINT32_MAX, 0, 3000000000u, 0, 1, 0, 300, 0, 70000, 0, 0};
  std::vector<int32_t> want_i8 = {0, 127, -128, 127, -128, 1, -1, 127, -128, 127, 0, 0};
  std::vector<uint32_t> want_u8 = {0, 255, 0, 255, 0, 1, 0, 255, 0, 255, 0, 0};
  EXPECT_EQ(di32.read<int32_t>(), want_i32);
  EXPECT_EQ(du32.read<uint32_t>(), want_u32);
  EXPECT_EQ(di8.read<int32_t>(), want_i8);
  EXPECT_EQ(du8.read<uint32_t>(), want_u8);
}

TEST(GpuRun, CastsToSixteenBitFloatsRoundOnce) {
  KILN_REQUIRE_GPU();
  // f64 -> f16: above the midpoint, exactly on it (ties to even, twice), past the largest half.
  std::vector<double> d = {1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40),
                           1.0 + std::ldexp(1.0, -11),
                           1.0 + 3 * std::ldexp(1.0, -11),
                           65520.0,
                           65519.99,
                           -0.0};
  // i64 -> bf16: 2^40 + 2^32 + 1 is just above a bf16 midpoint; through f32 it would land on it.
  std::vector<int64_t> l = {(int64_t(1) << 40) + (int64_t(1) << 32) + 1, (int64_t(1) << 40) + (int64_t(1) << 32), -3};
  std::vector<uint16_t> h(d.size(), 0xdead), b(l.size(), 0xdead);
  DeviceBuffer dd(d, uint32_t(d.size())), dl(l, uint32_t(l.size())), dh(h, uint32_t(h.size())),
      db(b, uint32_t(b.size()));
  run(R"(kernel @round_once(%d: buffer<f64, ro>, %l: buffer<i64, ro>, %h: buffer<f16, rw>, %b: buffer<bf16, rw>) {cube_dim = [32, 1, 1], mode = checked, address = u32, vector = 1} {
  %0 = builtin.absolute_pos : u32
  %1 = len %d : u32
  %2 = cmp.lt %0, %1 : bool
  %3 = load %d, %0, %2 : f64
  %4 = cast %3 : f16
  store %h, %0, %4, %2
  %5 = len %l : u32
  %6 = cmp.lt %0, %5 : bool
  %7 = load %l, %0, %6 : i64
  %8 = cast %7 : bf16
  store %b, %0, %8, %6
}
)",
      1, {Arg::of(dd), Arg::of(dl), Arg::of(dh), Arg::of(db)});
  EXPECT_EQ(dh.read<uint16_t>(), (std::vector<uint16_t>{0x3c01, 0x3c00, 0x3c02, 0x7c00, 0x7bff, 0x8000}));
  EXPECT_EQ(db.read<uint16_t>(), (std::vector<uint16_t>{0x5381, 0x5380, 0xc040}));
}

TEST(GpuRun, HalfArithmeticIsF32RoundedBackAfterEachOp) {
  KILN_REQUIRE_GPU();
  const uint32_t n = 256;
  std::vector<uint16_t> a(n), b(n), sum(n), prod(n), quot(n);
  for (uint32_t i = 0; i < n; ++i) {
    a[i] = f16(0.01f * float(i) - 1.3f).bits;
    b[i] = f16(1.0f + 0.0013f * float(i * 7 % 97)).bits;
  }
  DeviceBuffer da(a, n), db(b, n), ds(sum, n), dp(prod, n), dq(quot, n);
  run(R"(kernel @half_ops(%a: buffer<f16, ro>, %b: buffer<f16, ro>, %s: buffer<f16, rw>, %p: buffer<f16, rw>, %q: buffer<f16, rw>) {cube_dim = [128, 1, 1], mode = unchecked, address = u32, vector = 1} {
  %0 = builtin.absolute_pos : u32
  %1 = load %a, %0 : f16
  %2 = load %b, %0 : f16
  %3 = add %1, %2 : f16
  store %s, %0, %3
  %4 = mul %1, %2 : f16
  store %p, %0, %4
  %5 = div %1, %2 : f16
  store %q, %0, %5
}
)",
      2, {Arg::of(da), Arg::of(db), Arg::of(ds), Arg::of(dp), Arg::of(dq)});
  std::vector<uint16_t> s = ds.read<uint16_t>(), p = dp.read<uint16_t>(), q = dq.read<uint16_t>();
  for (uint32_t i = 0; i < n; ++i) {
    float x = float(f16::from_bits(a[i])), y = float(f16::from_bits(b[i]));
    ASSERT_EQ(s[i], f16(x + y).bits) << i;
    ASSERT_EQ(p[i], f16(x * y).bits) << i;
    ASSERT_EQ(q[i], f16(x / y).bits) << i;
  }
}

TEST(GpuRun, IntegerEdgesFollowTheIr) {
  KILN_REQUIRE_GPU();
  std::vector<int32_t> out(12, 12345);
  DeviceBuffer dout(out, 12);
  run(R"(kernel @ints(%o: buffer<i32, rw>) {cube_dim = [1, 1, 1], mode = unchecked, address = u32, vector = 1} {
  %0 = const -2147483648 : i32
  %1 = const -1 : i32
  %2 = const 32 : i32
  %3 = const 0 : u32
  %4 = div %0, %1 : i32
  store %o, %3, %4
  %5 = const 1 : u32
  %6 = rem %0, %1 : i32
  store %o, %5, %6
  %7 = const 2 : u32
  %8 = shl %1, %2 : i32
  store %o, %7, %8
  %9 = const 3 : u32
  %10 = shr %0, %2 : i32
  store %o, %9, %10
  %11 = const 4 : u32
  %12 = shr %0, %1 : i32
  store %o, %11, %12
  %13 = const 5 : u32
  %14 = abs %0 : i32
  store %o, %13, %14
  %15 = const 6 : u32
  %16 = const -1 : i8
  %17 = popcount %16 : u32
  %18 = cast %17 : i32
  store %o, %15, %18
  %19 = const 7 : u32
  %20 = leading_zeros %16 : u32
  %21 = const 0 : i8
  %22 = leading_zeros %21 : u32
  %23 = add %20, %22 : u32
  %24 = cast %23 : i32
  store %o, %19, %24
  %25 = const 8 : u32
  %26 = const 65535 : u16
  %27 = mul %26, %26 : u16
  %28 = cast %27 : i32
  store %o, %25, %28
  %29 = const 9 : u32
  %30 = const 4294967295 : u32
  %31 = const 33 : u32
  %32 = shr %30, %31 : u32
  %33 = cast %32 : i32
  store %o, %29, %33
  %34 = const 10 : u32
  %35 = const -7 : i32
  %36 = const 2 : i32
  %37 = div %35, %36 : i32
  store %o, %34, %37
  %38 = const 11 : u32
  %39 = rem %35, %36 : i32
  store %o, %38, %39
}
)",
      1, {Arg::of(dout)});
  EXPECT_EQ(dout.read<int32_t>(), (std::vector<int32_t>{INT32_MIN, 0, 0, -1, -1, INT32_MIN, 8, 8, 1, 0, -3, -1}));
}

TEST(GpuRun, PlaneOpsOverAFullPlane) {
  KILN_REQUIRE_GPU();
  std::vector<int32_t> x(32), out(32 * 32, -1);
  for (int i = 0; i < 32; ++i) x[i] = i + 1;
  DeviceBuffer dx(x, 32), dout(out, uint32_t(out.size()));
  run(R"(kernel @plane_full(%x: buffer<i32, ro>, %o: buffer<i32, rw>) {cube_dim = [32, 1, 1], mode = unchecked, address = u32, vector = 1} {
  %0 = builtin.unit_pos : u32
  %1 = load %x, %0 : i32
  %2 = const 32 : u32
  %3 = const 1 : u32
  %4 = const 2 : u32
  %5 = const 31 : u32
  %6 = const 5 : u32
  %7 = plane.sum %1 : i32
  %8 = plane.inclusive_sum %1 : i32
  %9 = plane.exclusive_sum %1 : i32
  %10 = const 3 : u32
  %11 = rem %0, %10 : u32
  %12 = const 0 : u32
  %13 = cmp.eq %11, %12 : bool
  %14 = plane.ballot %13 : u32
  %15 = cast %14 : i32
  %16 = plane.elect : bool
  %17 = cast %16 : i32
  %18 = plane.shuffle_xor %1, %3 : i32
  %19 = plane.shuffle_up %1, %4 : i32
  %20 = plane.shuffle_down %1, %5 : i32
  %21 = plane.broadcast %1, %6 : i32
  %22 = plane.max %1 : i32
  %23 = mul %0, %2 : u32
  store %o, %23, %7
  %24 = add %23, %3 : u32
  store %o, %24, %8
  %25 = add %23, %4 : u32
  store %o, %25, %9
  %26 = add %23, %10 : u32
  store %o, %26, %15
  %27 = const 4 : u32
  %28 = add %23, %27 : u32
  store %o, %28, %17
  %29 = add %23, %6 : u32
  store %o, %29, %18
  %30 = const 6 : u32
  %31 = add %23, %30 : u32
  store %o, %31, %19
  %32 = const 7 : u32
  %33 = add %23, %32 : u32
  store %o, %33, %20
  %34 = const 8 : u32
  %35 = add %23, %34 : u32
  store %o, %35, %21
  %36 = const 9 : u32
  %37 = add %23, %36 : u32
  store %o, %37, %22
}
)",
      1, {Arg::of(dx), Arg::of(dout)});
  std::vector<int32_t> o = dout.read<int32_t>();
  int32_t ballot = 0;
  for (int l = 0; l < 32; l += 3) ballot |= int32_t(1u << l);
  for (int l = 0; l < 32; ++l) {
    SCOPED_TRACE("lane " + std::to_string(l));
    const int32_t* r = &o[size_t(l) * 32];
    int32_t v = l + 1;
    EXPECT_EQ(r[0], 528);
    EXPECT_EQ(r[1], v * (v + 1) / 2);
    EXPECT_EQ(r[2], l * (l + 1) / 2);
    EXPECT_EQ(r[3], ballot);
    EXPECT_EQ(r[4], l == 0 ? 1 : 0);
    EXPECT_EQ(r[5], (l ^ 1) + 1);
    EXPECT_EQ(r[6], l >= 2 ? l - 1 : v);  // lane - 2 exists from lane 2 on; below, its own value
    EXPECT_EQ(r[7], l == 0 ? 32 : v);     // lane + 31 exists only for lane 0
    EXPECT_EQ(r[8], 6);
    EXPECT_EQ(r[9], 32);
  }
}

TEST(GpuRun, PlaneOpsUnderDivergenceSeeOnlyTheActiveLanes) {
  KILN_REQUIRE_GPU();
  std::vector<int32_t> x(32), out(32 * 5, -1);
  for (int i = 0; i < 32; ++i) x[i] = i + 1;
  DeviceBuffer dx(x, 32), dout(out, uint32_t(out.size()));
  run(R"(kernel @plane_odd(%x: buffer<i32, ro>, %o: buffer<i32, rw>) {cube_dim = [32, 1, 1], mode = unchecked, address = u32, vector = 1} {
  %0 = builtin.unit_pos : u32
  %1 = const 2 : u32
  %2 = rem %0, %1 : u32
  %3 = const 1 : u32
  %4 = cmp.eq %2, %3 : bool
  if %4 {
    %5 = load %x, %0 : i32
    %6 = plane.sum %5 : i32
    %7 = plane.inclusive_sum %5 : i32
    %8 = plane.exclusive_sum %5 : i32
    %9 = plane.elect : bool
    %10 = cast %9 : i32
    %11 = const true : bool
    %12 = plane.ballot %11 : u32
    %13 = cast %12 : i32
    %14 = const 5 : u32
    %15 = mul %0, %14 : u32
    store %o, %15, %6
    %16 = add %15, %3 : u32
    store %o, %16, %7
    %17 = add %15, %1 : u32
    store %o, %17, %8
    %18 = const 3 : u32
    %19 = add %15, %18 : u32
    store %o, %19, %10
    %20 = const 4 : u32
    %21 = add %15, %20 : u32
    store %o, %21, %13
  }
}
)",
      1, {Arg::of(dx), Arg::of(dout)});
  std::vector<int32_t> o = dout.read<int32_t>();
  int32_t total = 0;
  for (int l = 1; l < 32; l += 2) total += l + 1;
  int32_t before = 0;
  for (int l = 0; l < 32; ++l) {
    SCOPED_TRACE("lane " + std::to_string(l));
    const int32_t* r = &o[size_t(l) * 5];
    if (l % 2 == 0) {
      for (int j = 0; j < 5; ++j) EXPECT_EQ(r[j], -1);  // inactive: nothing written
      continue;
    }
    EXPECT_EQ(r[0], total);
    EXPECT_EQ(r[1], before + l + 1);
    EXPECT_EQ(r[2], before);
    EXPECT_EQ(r[3], l == 1 ? 1 : 0);
    EXPECT_EQ(static_cast<uint32_t>(r[4]), 0xaaaaaaaau);
    before += l + 1;
  }
}

TEST(GpuRun, SixtyFourKiBOfDynamicSharedMemory) {
  KILN_REQUIRE_GPU();
  const uint32_t n = 16384;
  std::vector<float> x(n), y(n, 0.0f);
  for (uint32_t i = 0; i < n; ++i) x[i] = float(i) * 0.5f;
  DeviceBuffer dx(x, n), dy(y, n);
  run(R"(kernel @reverse(%x: buffer<f32, ro>, %y: buffer<f32, rw>) {cube_dim = [256, 1, 1], mode = unchecked, address = u32, vector = 1} {
  %0 = builtin.unit_pos : u32
  %1 = shared.alloc : shared<f32, 16384>
  %2 = const 0 : u32
  %3 = const 64 : u32
  %4 = const 1 : u32
  %5 = const 256 : u32
  for %2, %3, %4 (%6: u32) {
    %7 = mul %6, %5 : u32
    %8 = add %7, %0 : u32
    %9 = load %x, %8 : f32
    store %1, %8, %9
  }
  sync.cube
  %10 = const 16383 : u32
  for %2, %3, %4 (%11: u32) {
    %12 = mul %11, %5 : u32
    %13 = add %12, %0 : u32
    %14 = sub %10, %13 : u32
    %15 = load %1, %14 : f32
    store %y, %13, %15
  }
}
)",
      1, {Arg::of(dx), Arg::of(dy)});
  std::vector<float> out = dy.read<float>();
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(out[i], x[n - 1 - i]) << i;
}

TEST(GpuRun, MaskedAtomicsSkipAndSixtyFourBitAtomicsAdd) {
  KILN_REQUIRE_GPU();
  std::vector<int64_t> acc = {100};
  std::vector<double> dacc = {0.0};
  std::vector<int64_t> old(512, 7);
  DeviceBuffer da(acc, 1), dd(dacc, 1), dold(old, 512);
  run(R"(kernel @atomics(%a: buffer<i64, rw>, %d: buffer<f64, rw>, %old: buffer<i64, rw>) {cube_dim = [256, 1, 1], mode = unchecked, address = u32, vector = 1} {
  %0 = builtin.absolute_pos : u32
  %1 = const 0 : u32
  %2 = const -1 : i64
  %3 = const 3 : u32
  %4 = rem %0, %3 : u32
  %5 = cmp.ne %4, %1 : bool
  %6 = atomic.add %a, %1, %2, %5 : i64
  store %old, %0, %6
  %7 = const 0.5 : f64
  %8 = atomic.add %d, %1, %7 : f64
}
)",
      2, {Arg::of(da), Arg::of(dd), Arg::of(dold)});
  int64_t adders = 0;
  for (uint32_t i = 0; i < 512; ++i) adders += i % 3 != 0;
  EXPECT_EQ(da.read<int64_t>()[0], 100 - adders);
  EXPECT_EQ(dd.read<double>()[0], 256.0);
  std::vector<int64_t> o = dold.read<int64_t>();
  for (uint32_t i = 0; i < 512; i += 3) EXPECT_EQ(o[i], 0) << "a masked-off atomic gives zero (unit " << i << ")";
}

// The accumulator layout that lower_tiles builds from (ir/mma.h's mma_sync_element) is where the
// tensor cores and the device library's kiln_mma_sync leave each product: A holds its row in column
// 0 and 1 in column 1, B holds 1 in row 0 and 256 x its column in row 1, so C[r][c] = r + 256 c,
// and every unit writes what each of its slots holds.
std::string mma_layout_kernel(uint32_t m, uint32_t n, uint32_t k, uint32_t wm, uint32_t wn) {
  const uint32_t lda = k + 8, ldb = n + 8, na = m * lda, nb = k * ldb, units = 32 * wm * wn;
  const uint32_t slots = ir::mma_sync_slots(ir::kMmaSyncM16N8K16, m, n, wm, wn);
  auto u = [](uint32_t v) { return std::to_string(v); };
  return "kernel @mma_layout(%ga: buffer<f16, ro>, %gb: buffer<f16, ro>, %out: buffer<f32, rw>) {cube_dim = [" +
         u(units) +
         ", 1, 1], mode = unchecked, address = u32, vector = 1} {\n"
         "  %0 = shared.alloc : shared<f16, " +
         u(na + nb) +
         ">\n"
         "  %1 = local.alloc : local<f32, " +
         u(slots) +
         ">\n"
         "  %2 = builtin.unit_pos : u32\n"
         "  %3 = const " +
         u(units) +
         " : u32\n"
         "  %4 = const " +
         u(na) +
         " : u32\n"
         "  %5 = const " +
         u(nb) +
         " : u32\n"
         "  for %2, %4, %3 (%6: u32) {\n"
         "    %7 = load %ga, %6 : f16\n"
         "    store %0, %6, %7\n"
         "  }\n"
         "  for %2, %5, %3 (%8: u32) {\n"
         "    %9 = load %gb, %8 : f16\n"
         "    %10 = add %8, %4 : u32\n"
         "    store %0, %10, %9\n"
         "  }\n"
         "  %11 = const 0 : u32\n"
         "  %12 = const " +
         u(slots) +
         " : u32\n"
         "  %13 = const 1 : u32\n"
         "  %14 = const 0.0 : f32\n"
         "  for %11, %12, %13 (%15: u32) {\n"
         "    store %1, %15, %14\n"
         "  }\n"
         "  sync.cube\n"
         "  mma.sync %0, %11, %0, %4, %1 {planes = [" +
         u(wm) + ", " + u(wn) + "], shape = [" + u(m) + ", " + u(n) + ", " + u(k) + "], pitches = [" + u(lda) + ", " +
         u(ldb) +
         "]}\n"
         "  %16 = mul %2, %12 : u32\n"
         "  for %11, %12, %13 (%17: u32) {\n"
         "    %18 = load %1, %17 : f32\n"
         "    %19 = add %16, %17 : u32\n"
         "    store %out, %19, %18\n"
         "  }\n"
         "}\n";
}

TEST(GpuRun, MmaLayoutIsWhatTheHardwareReturns) {
  KILN_REQUIRE_GPU();
  struct Case {
    uint32_t m, n, k, wm, wn;
  };
  for (Case c : {Case{64, 64, 16, 2, 2}, Case{16, 8, 16, 1, 1}, Case{128, 64, 32, 4, 1}, Case{32, 128, 16, 1, 4}}) {
    SCOPED_TRACE(std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + " over " +
                 std::to_string(c.wm) + "x" + std::to_string(c.wn) + " planes");
    const uint32_t lda = c.k + 8, ldb = c.n + 8, units = 32 * c.wm * c.wn;
    const uint32_t slots = ir::mma_sync_slots(ir::kMmaSyncM16N8K16, c.m, c.n, c.wm, c.wn);
    std::vector<f16> a(size_t(c.m) * lda, f16(0.0f)), b(size_t(c.k) * ldb, f16(0.0f));
    for (uint32_t r = 0; r < c.m; ++r) a[size_t(r) * lda] = f16(float(r)), a[size_t(r) * lda + 1] = f16(1.0f);
    for (uint32_t col = 0; col < c.n; ++col) b[col] = f16(1.0f), b[ldb + col] = f16(256.0f * float(col));
    std::vector<float> poison(size_t(units) * slots, -1.0f);
    DeviceBuffer da(a, uint32_t(a.size())), db(b, uint32_t(b.size())), dout(poison, uint32_t(poison.size()));
    run(mma_layout_kernel(c.m, c.n, c.k, c.wm, c.wn), 1, {Arg::of(da), Arg::of(db), Arg::of(dout)});
    std::vector<float> out = dout.read<float>();
    for (uint32_t unit = 0; unit < units; ++unit) {
      for (uint32_t j = 0; j < slots; ++j) {
        ir::MmaElement e = ir::mma_sync_element(ir::kMmaSyncM16N8K16, c.m, c.n, c.wm, c.wn, unit, j);
        ASSERT_EQ(out[size_t(unit) * slots + j], float(e.row) + 256.0f * float(e.col))
            << "unit " << unit << " slot " << j << " should hold (" << e.row << ", " << e.col << ")";
      }
    }
  }
}

}  // namespace
}  // namespace kiln::cuda::testing
