// A sweep over every scalar type and the vector widths 1, 2, 4 and 8: for each pair a kernel is
// written as IR text using every op family valid on that type (arithmetic, bitwise, compare,
// select, casts to and from every other scalar, bitcasts, math, vector lanes, plane ops, atomics,
// shared and local arrays, vars), parsed, verified, emitted and compiled with NVRTC for sm_90a.
#include <gtest/gtest.h>

#include <tuple>

#include "cuda_test_util.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"

namespace kiln::cuda::testing {
namespace {

using ir::Scalar;

constexpr Scalar kScalars[] = {Scalar::Bool, Scalar::I8,  Scalar::I16, Scalar::I32, Scalar::I64,
                               Scalar::U8,   Scalar::U16, Scalar::U32, Scalar::U64, Scalar::F16,
                               Scalar::BF16, Scalar::F32, Scalar::F64};

std::string sn(Scalar s) { return std::string(ir::scalar_name(s)); }
std::string vt(Scalar s, int w) { return w == 1 ? sn(s) : "vector<" + std::to_string(w) + " x " + sn(s) + ">"; }

// Appends numbered ops to a kernel body.
struct Body {
  std::string text;
  int next = 0;
  std::string def(const std::string& rhs, const std::string& type) {
    std::string n = "%" + std::to_string(next++);
    text += "  " + n + " = " + rhs + " : " + type + "\n";
    return n;
  }
  void stmt(const std::string& s) { text += "  " + s + "\n"; }
};

std::string one(Scalar s) {
  if (s == Scalar::Bool) return "true";
  return ir::is_float(s) ? "1.5" : "3";
}

std::string sweep_kernel(Scalar s, int w) {
  const std::string T = vt(s, w), B = vt(Scalar::Bool, w), name = "sweep_" + sn(s) + "_v" + std::to_string(w);
  bool is_bool = s == Scalar::Bool, is_f = ir::is_float(s), is_i = ir::is_int(s);
  Body b;
  std::string p = b.def("builtin.absolute_pos", "u32");
  std::string u = b.def("builtin.unit_pos", "u32");
  std::string n = b.def("len %x", "u32");
  std::string m = b.def("cmp.lt " + p + ", " + n, "bool");
  std::string x = b.def("load %x, " + p + ", " + m, T);
  std::string y = b.def("load %y, " + p, T);
  std::string sv = w == 1 ? "%s" : b.def("vector.splat %s", T);
  std::string k = b.def("const " + one(s), T);
  std::string cur = x;
  if (!is_bool) {
    for (const char* op : {"add", "sub", "mul", "div", "rem", "min", "max"})
      cur = b.def(std::string(op) + " " + cur + ", " + y, T);
    cur = b.def("abs " + cur, T);
    if (is_f || ir::is_signed_int(s)) cur = b.def("neg " + cur, T);
    cur = b.def("add " + cur + ", " + sv, T);
    cur = b.def("mul " + cur + ", " + k, T);
  }
  if (is_i || is_bool) {
    for (const char* op : {"and", "or", "xor"}) cur = b.def(std::string(op) + " " + cur + ", " + y, T);
    cur = b.def("not " + cur, T);
  }
  if (is_i) {
    cur = b.def("shl " + cur + ", " + y, T);
    cur = b.def("shr " + cur + ", " + k, T);
    std::string pc = b.def("popcount " + cur, vt(Scalar::U32, w));
    std::string lz = b.def("leading_zeros " + cur, vt(Scalar::U32, w));
    std::string sum = b.def("add " + pc + ", " + lz, vt(Scalar::U32, w));
    cur = b.def("xor " + cur + ", " + b.def("cast " + sum, T), T);
  }
  if (is_f) {
    cur = b.def("fma " + cur + ", " + y + ", " + sv, T);
    for (const char* op : {"exp", "exp2", "log", "log2", "sqrt", "rsqrt", "recip", "sin", "cos", "tan", "tanh", "erf",
                           "floor", "ceil", "round", "trunc"}) {
      cur = b.def(std::string(op) + " " + cur, T);
    }
    cur = b.def("exp " + cur + " {fast_math}", T);
    cur = b.def("pow " + cur + ", " + y, T);
    std::string nan = b.def("isnan " + cur, B);
    std::string inf = b.def("isinf " + cur, B);
    cur = b.def("select " + b.def("or " + nan + ", " + inf, B) + ", " + y + ", " + cur, T);
  }
  std::string last_cmp;
  for (const char* op : {"cmp.eq", "cmp.ne", "cmp.lt", "cmp.le", "cmp.gt", "cmp.ge"}) {
    last_cmp = b.def(std::string(op) + " " + cur + ", " + y, B);
    cur = b.def("select " + last_cmp + ", " + cur + ", " + y, T);
  }
  cur = b.def("select " + m + ", " + cur + ", " + sv, T);
  // Casts to every other scalar and back, folded into the value so that none is dead.
  for (Scalar t : kScalars) {
    if (t == s) continue;
    std::string there = b.def("cast " + cur, vt(t, w));
    std::string back = b.def("cast " + there, T);
    cur = is_bool ? b.def("or " + cur + ", " + back, T) : b.def("max " + cur + ", " + back, T);
  }
  // Bitcasts to every scalar of the same size, and across widths to one wide scalar.
  for (Scalar t : kScalars) {
    if (t == s || ir::scalar_bytes(t) != ir::scalar_bytes(s)) continue;
    std::string there = b.def("bitcast " + cur, vt(t, w));
    cur = b.def("select " + m + ", " + b.def("bitcast " + there, T) + ", " + cur, T);
  }
  int bytes = ir::scalar_bytes(s) * w;
  if (w > 1 && (bytes == 4 || bytes == 8)) {
    std::string wide = b.def("bitcast " + cur, bytes == 4 ? "u32" : "u64");
    cur = b.def("bitcast " + wide, T);
  }
  if (w > 1) {
    std::string e0 = b.def("vector.extract " + cur + " {lane = 0}", sn(s));
    std::string el = b.def("vector.extract " + cur + " {lane = " + std::to_string(w - 1) + "}", sn(s));
    cur = b.def("vector.insert " + cur + ", " + el + " {lane = 0}", T);
    std::string lanes;
    for (int i = 0; i < w; ++i) lanes += (i ? ", " : "") + (i % 2 ? e0 : el);
    std::string built = b.def("vector.construct " + lanes, T);
    std::string eq = b.def("cmp.eq " + built + ", " + cur, B);
    cur = b.def("select " + eq + ", " + built + ", " + cur, T);
  }
  // Plane ops: reductions and scans on numbers, shuffles on everything.
  std::string lane1 = b.def("const 1", "u32");
  if (!is_bool) {
    cur = b.def("plane.sum " + cur, T);
    cur = b.def("plane.max " + cur, T);
    cur = b.def("plane.inclusive_sum " + cur, T);
  }
  cur = b.def("plane.shuffle_xor " + cur + ", " + lane1, T);
  cur = b.def("plane.broadcast " + cur + ", " + lane1, T);
  // Shared and local arrays and a var of the type.
  std::string sh = b.def("shared.alloc", "shared<" + T + ", 128>");
  b.stmt("store " + sh + ", " + u + ", " + cur);
  b.stmt("sync.cube");
  std::string lo = b.def("local.alloc", "local<" + T + ", 4>");
  std::string zero = b.def("const 0", "u32");
  b.stmt("store " + lo + ", " + zero + ", " + b.def("load " + sh + ", " + u, T));
  std::string var = b.def("var.decl", "var<" + T + ">");
  b.stmt("var.store " + var + ", " + b.def("load " + lo + ", " + zero, T));
  cur = b.def("var.load " + var, T);
  // Atomics where the type has them.
  bool atomic_int = s == Scalar::I32 || s == Scalar::U32 || s == Scalar::I64 || s == Scalar::U64;
  if (w == 1 && (atomic_int || s == Scalar::F32 || s == Scalar::F64)) {
    cur = b.def("atomic.add %y, " + p + ", " + cur + ", " + m, T);
    cur = b.def("atomic.exchange %y, " + p + ", " + cur, T);
    if (atomic_int) cur = b.def("atomic.max %y, " + p + ", " + cur, T);
  }
  b.stmt("store %y, " + p + ", " + cur + ", " + m);
  b.stmt("store %c, " + p + ", " + last_cmp + ", " + m);
  return "kernel @" + name + "(%x: buffer<" + T + ", ro>, %y: buffer<" + T + ", rw>, %s: " + sn(s) + ", %c: buffer<" +
         B + ", rw>) {cube_dim = [128, 1, 1], mode = checked, address = u32, vector = " + std::to_string(w) + "} {\n" +
         b.text + "}\n";
}

class Sweep : public ::testing::TestWithParam<std::tuple<Scalar, int>> {};

TEST_P(Sweep, EmitsAndCompiles) {
  auto [s, w] = GetParam();
  std::string text = sweep_kernel(s, w);
  ir::Kernel k;
  try {
    k = ir::parse(text);
    ir::verify(k, "sweep");
  } catch (const Error& e) {
    FAIL() << e.what() << "\n" << text;
  }
  EmitResult r = emit_cuda(k);
  // The entry names the first parameter's element scalar and the vector width.
  EXPECT_EQ(
      r.entry.rfind("sweep_" + sn(s) + "_v" + std::to_string(w) + "_" + sn(s) + "_v" + std::to_string(w) + "_", 0), 0u)
      << r.entry;
  KILN_REQUIRE_NVRTC();
  expect_compiles(r);
}

INSTANTIATE_TEST_SUITE_P(AllScalars, Sweep,
                         ::testing::Combine(::testing::ValuesIn(kScalars), ::testing::Values(1, 2, 4, 8)),
                         [](const ::testing::TestParamInfo<std::tuple<Scalar, int>>& info) {
                           return sn(std::get<0>(info.param)) + "_v" + std::to_string(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace kiln::cuda::testing
