// Uniform values compute what varying ones do. Each kernel runs twice on the CPU backend, with
// uniform values (rows, plan.h) and with every value varying (PlanOptions{false}, the form the
// kernel suite has checked against host references all along); the two must leave the same bytes
// in every buffer and stop with the same error. Hand-written kernels mix uniform and varying
// operands in every executor that reads both (vectors, masks, selects, loops, vars, plane ops,
// atomics); a generator then writes a few hundred random ones. Cube sizes are not multiples of
// the row's 16 lanes, so the blocked lane loops' tails run too.
#include <gtest/gtest.h>

#include <random>

#include "cpu_test_util.h"
#include "kiln/passes/passes.h"

namespace kiln::cpu::testing {
namespace {

std::vector<uint32_t> random_u32(std::mt19937& rng, size_t n, uint32_t hi) {
  std::vector<uint32_t> v(n);
  for (uint32_t& x : v) x = rng() % hi;
  return v;
}
std::vector<float> random_f32(std::mt19937& rng, size_t n) {
  std::uniform_real_distribution<float> d(-4, 4);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// Vectors of four lanes whose operands are uniform, varying, or both, in every vector op.
const char* kVectorMix = R"(
kernel @vector_mix(%a: f32, %s: u32, %x: buffer<vector<4 x f32>, ro>, %out: buffer<vector<4 x f32>, rw>, %outs: buffer<u32, rw>) {cube_dim = [37, 1, 1], mode = unchecked, address = u32, vector = 4} {
  %0 = builtin.absolute_pos : u32
  %1 = vector.splat %a : vector<4 x f32>
  %2 = load %x, %0 : vector<4 x f32>
  %3 = mul %1, %2 : vector<4 x f32>
  %4 = sub %2, %1 : vector<4 x f32>
  %5 = const 1.5 : f32
  %6 = vector.insert %1, %5 {lane = 2} : vector<4 x f32>
  %7 = vector.extract %2 {lane = 1} : f32
  %8 = vector.insert %6, %7 {lane = 0} : vector<4 x f32>
  %9 = vector.construct %a, %7, %5, %a : vector<4 x f32>
  %10 = fma %1, %2, %9 : vector<4 x f32>
  %11 = fma %2, %1, %6 : vector<4 x f32>
  %12 = cmp.lt %2, %1 : vector<4 x bool>
  %13 = select %12, %3, %1 : vector<4 x f32>
  %14 = cmp.lt %0, %s : bool
  %15 = select %14, %6, %4 : vector<4 x f32>
  %16 = cmp.gt %a, %5 : bool
  %17 = select %16, %2, %6 : vector<4 x f32>
  %18 = add %3, %4 : vector<4 x f32>
  %19 = add %18, %8 : vector<4 x f32>
  %20 = add %19, %10 : vector<4 x f32>
  %21 = add %20, %11 : vector<4 x f32>
  %22 = add %21, %13 : vector<4 x f32>
  %23 = add %22, %15 : vector<4 x f32>
  %24 = add %23, %17 : vector<4 x f32>
  %25 = vector.construct %5, %5, %a, %5 : vector<4 x f32>
  %26 = pow %24, %25 : vector<4 x f32>
  %27 = max %26, %1 : vector<4 x f32>
  store %out, %0, %27
  %28 = const 3 : u32
  %29 = add %s, %28 : u32
  %30 = rem %0, %29 : u32
  %31 = div %29, %28 : u32
  %32 = shl %31, %30 : u32
  %33 = cast %a : u32
  %34 = sub %33, %0 : u32
  %35 = xor %32, %34 : u32
  store %outs, %0, %35
}
)";

TEST(UniformValues, VectorOpsMixRowsAndUnits) {
  std::mt19937 rng(7);
  ir::Kernel k = parse_verified(kVectorMix);
  const uint32_t cubes = 3, units = 37 * cubes;
  std::vector<float> x = random_f32(rng, units * 4);
  for (float a : {-2.5f, 0.75f, 3.0f}) {
    for (uint32_t s : {0u, 20u, 200u}) {
      SCOPED_TRACE("a = " + std::to_string(a) + ", s = " + std::to_string(s));
      Outcome o = run_both(k,
                           {Arg::value(a), Arg::value(s), Arg::buffer(x), Arg::buffer(std::vector<float>(units * 4)),
                            Arg::buffer(std::vector<uint32_t>(units))},
                           {cubes, 1, 1});
      EXPECT_EQ(o.error_kind, "");
      std::vector<uint32_t> outs = as<uint32_t>(o.after[4]);
      // The integer half by hand: ((s + 3) / 3 << u % (s + 3)) ^ (u32(a) - u), a shift past 31 giving 0.
      for (uint32_t u = 0; u < units; ++u) {
        const uint32_t t = s + 3, amount = u % t;
        const uint32_t shifted = amount >= 32 ? 0 : (t / 3) << amount;
        EXPECT_EQ(outs[u], shifted ^ (uint32_t(a < 0 ? 0.0f : a) - u)) << "unit " << u;
      }
    }
  }
}

// Masks, indices and stored values in either form: a uniform mask on and off, loads of a uniform
// index from a buffer the kernel writes (varying) and one it does not (uniform), masked stores of
// uniform values.
const char* kMasks = R"(
kernel @masks(%s: u32, %x: buffer<u32, ro>, %w: buffer<u32, rw>, %out: buffer<u32, rw>) {cube_dim = [40, 1, 1], mode = unchecked, address = u32, vector = 1} {
  %0 = builtin.absolute_pos : u32
  %1 = const 5 : u32
  %2 = cmp.lt %1, %s : bool
  %3 = load %x, %1, %2 : u32
  %4 = load %w, %1, %2 : u32
  %5 = load %x, %0, %2 : u32
  %6 = builtin.unit_pos : u32
  %7 = const 9 : u32
  %8 = cmp.lt %6, %7 : bool
  %9 = load %x, %1, %8 : u32
  %10 = add %3, %4 : u32
  %11 = add %10, %5 : u32
  %12 = add %11, %9 : u32
  %13 = const 4 : u32
  %14 = mul %0, %13 : u32
  store %out, %14, %12
  %15 = const 1 : u32
  %16 = add %14, %15 : u32
  store %out, %16, %3, %8
  %17 = const 2 : u32
  %18 = add %14, %17 : u32
  store %out, %18, %s, %2
  %19 = const 3 : u32
  %20 = add %14, %19 : u32
  %21 = builtin.cube_pos : u32
  store %out, %20, %21
  %22 = builtin.cube_pos : u32
  store %w, %22, %0, %8
}
)";

TEST(UniformValues, MasksIndicesAndStoredValuesInEitherForm) {
  std::mt19937 rng(11);
  ir::Kernel k = parse_verified(kMasks);
  const uint32_t cubes = 4, units = 40 * cubes;
  std::vector<uint32_t> x = random_u32(rng, units, 1000), w = random_u32(rng, 16, 1000);
  for (uint32_t s : {0u, 5u, 6u}) {
    SCOPED_TRACE("s = " + std::to_string(s));
    Outcome o =
        run_both(k, {Arg::value(s), Arg::buffer(x), Arg::buffer(w), Arg::buffer(std::vector<uint32_t>(units * 4, 7))},
                 {cubes, 1, 1});
    EXPECT_EQ(o.error_kind, "");
    std::vector<uint32_t> out = as<uint32_t>(o.after[3]);
    for (uint32_t u = 0; u < units; ++u) {
      const bool on = 5 < s, low = u % 40 < 9;
      EXPECT_EQ(out[u * 4 + 1], low ? (on ? x[5] : 0u) : 7u) << u;
      EXPECT_EQ(out[u * 4 + 2], on ? s : 7u) << u;
      EXPECT_EQ(out[u * 4 + 3], u / 40) << u;
    }
  }
}

// Loops, ifs and vars: a for of uniform bounds inside a varying if (its induction value is a row)
// with a continue under a varying condition, a for of per-unit bounds, a while, uniform values
// stored into a var under a mask, plane ops and atomics on uniform operands.
const char* kControl = R"(
kernel @control_mix(%n: u32, %x: buffer<u32, ro>, %acc: buffer<u32, rw>, %out: buffer<u32, rw>) {cube_dim = [45, 1, 1], mode = unchecked, address = u32, vector = 1} {
  %0 = builtin.absolute_pos : u32
  %1 = builtin.unit_pos : u32
  %2 = load %x, %0 : u32
  %3 = const 0 : u32
  %4 = const 1 : u32
  %5 = const 3 : u32
  %6 = var.decl : var<u32>
  var.store %6, %n
  %7 = rem %2, %5 : u32
  %8 = cmp.ne %7, %3 : bool
  if %8 {
    for %3, %n, %4 (%9: u32) {
      %10 = and %9, %4 : u32
      %11 = cmp.eq %10, %7 : bool
      if %11 {
        continue
      }
      %12 = var.load %6 : u32
      %13 = mul %9, %5 : u32
      %14 = add %12, %13 : u32
      var.store %6, %14
    }
  } else {
    %15 = add %n, %5 : u32
    var.store %6, %15
  }
  for %3, %7, %4 (%16: u32) {
    %17 = var.load %6 : u32
    %18 = add %17, %n : u32
    var.store %6, %18
  }
  %19 = var.decl : var<u32>
  var.store %19, %3
  while {
    %20 = var.load %19 : u32
    %21 = cmp.lt %20, %n : bool
    condition %21
  } do {
    %22 = var.load %19 : u32
    %23 = add %22, %4 : u32
    var.store %19, %23
  }
  %24 = var.load %19 : u32
  %25 = var.load %6 : u32
  %26 = add %24, %25 : u32
  %27 = cmp.lt %1, %5 : bool
  %28 = const 0 : u32
  if %27 {
    %29 = plane.sum %n : u32
    %30 = add %n, %29 : u32
    var.store %6, %30
  }
  %31 = plane.shuffle_xor %n, %4 : u32
  %32 = plane.ballot %8 : u32
  %33 = atomic.add %acc, %4, %n : u32
  %34 = atomic.add %acc, %3, %2 : u32
  %35 = var.load %6 : u32
  %36 = add %26, %35 : u32
  %37 = add %36, %31 : u32
  %38 = add %37, %32 : u32
  store %out, %0, %38
}
)";

TEST(UniformValues, ControlFlowVarsPlaneOpsAndAtomics) {
  std::mt19937 rng(13);
  ir::Kernel k = parse_verified(kControl);
  const uint32_t cubes = 3, units = 45 * cubes;
  std::vector<uint32_t> x = random_u32(rng, units, 100);
  for (uint32_t n : {0u, 1u, 6u}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    Outcome o = run_both(k,
                         {Arg::value(n), Arg::buffer(x), Arg::buffer(std::vector<uint32_t>{5, 5}),
                          Arg::buffer(std::vector<uint32_t>(units))},
                         {cubes, 1, 1});
    EXPECT_EQ(o.error_kind, "");
    std::vector<uint32_t> acc = as<uint32_t>(o.after[2]);
    uint32_t sum = 5;
    for (uint32_t v : x) sum += v;
    EXPECT_EQ(acc[0], sum);
    EXPECT_EQ(acc[1], 5 + n * units);
  }
}

// A uniform op that fails fails for every active unit alike: the error names the first active
// one, as the unit loop of the varying op does.
const char* kUniformDivision = R"(
kernel @uniform_division(%d: u32, %out: buffer<u32, rw>) {cube_dim = [50, 1, 1], mode = unchecked, address = u32, vector = 1} {
  %0 = builtin.absolute_pos : u32
  %1 = builtin.unit_pos : u32
  %2 = const 7 : u32
  %3 = cmp.gt %1, %2 : bool
  store %out, %0, %0
  if %3 {
    %4 = const 100 : u32
    %5 = div %4, %d : u32
    store %out, %0, %5
  }
}
)";

TEST(UniformValues, AUniformDivisionByZeroNamesTheFirstActiveUnit) {
  ir::Kernel k = parse_verified(kUniformDivision);
  std::vector<uint32_t> before(100, 1);
  Outcome o = run_both(k, {Arg::value(uint32_t(0)), Arg::buffer(before)}, {2, 1, 1});
  EXPECT_EQ(o.error_kind, "arith.division_by_zero");
  EXPECT_EQ(
      o.error_message,
      "kernel 'uniform_division' (unchecked): op #8 'div' in unit 8 of cube (0, 0, 0): division of an integer by zero");
  EXPECT_EQ(as<uint32_t>(o.after[1]), before) << "the failed launch put the buffer back";
  o = run_both(k, {Arg::value(uint32_t(3)), Arg::buffer(before)}, {2, 1, 1});
  EXPECT_EQ(o.error_kind, "");
  std::vector<uint32_t> out = as<uint32_t>(o.after[1]);
  for (uint32_t u = 0; u < 100; ++u) EXPECT_EQ(out[u], u % 50 > 7 ? 33u : u) << u;
}

// ---- random kernels --------------------------------------------------------------------------

// A random kernel over u32, f32, bool and vector<4 x f32> values drawn from uniform sources
// (scalar parameters, constants, cube builtins, len, loads of a read-only buffer at a uniform
// index) and varying ones (positions, loads at them), mixed by every elementwise family, with ifs
// of uniform or varying conditions, fors of uniform or per-unit bounds with break and continue,
// vars, plane ops and atomics. Every value it stores lands in the unit's own slots of %out.
class RandomKernel {
 public:
  explicit RandomKernel(uint32_t seed) : rng_(seed) {
    const uint32_t dims[] = {1, 7, 16, 33, 64};
    dim_ = dims[rng_() % 5];
    body_ += "  %p = builtin.absolute_pos : u32\n";
    scopes_.emplace_back();
    add("u32", "%p");
    add("u32", "%s");
    add("f32", "%a");
    def("u32", "builtin.unit_pos : u32");
    def("u32", "builtin.cube_pos : u32");
    def("u32", "len %x : u32");
    def("u32", "const " + std::to_string(rng_() % 50) + " : u32");
    def("f32", "const 0.5 : f32");
    def("u32", "load %x, " + index("%p") + " : u32");
    def("u32", "load %x, " + index(pick("u32")) + " : u32");
    def("f32", "load %xf, " + index(pick("u32")) + " : f32");
    body_ += "  %var = var.decl : var<u32>\n  var.store %var, %s\n";
    int n = 12 + int(rng_() % 20);
    for (int i = 0; i < n; ++i) step(0);
    store_some();
    body_ += "  %vl = var.load %var : u32\n";
    store("%vl");
  }

  std::string text() const {
    return "kernel @random(%s: u32, %a: f32, %x: buffer<u32, ro>, %xf: buffer<f32, ro>, %acc: buffer<u32, rw>, "
           "%out: buffer<u32, rw>) {cube_dim = [" +
           std::to_string(dim_) + ", 1, 1], mode = unchecked, address = u32, vector = 1} {\n" + body_ + "}\n";
  }
  uint32_t dim() const { return dim_; }
  static constexpr uint32_t kSlots = 24;   // stores per unit
  static constexpr uint32_t kInputs = 64;  // elements of %x and %xf

 private:
  using Pool = std::vector<std::pair<std::string, std::string>>;  // (type, name)

  std::string fresh() { return "%" + std::to_string(next_++); }
  void add(const std::string& type, const std::string& name) { scopes_.back().emplace_back(type, name); }
  std::string def(const std::string& type, const std::string& rhs) {
    std::string name = fresh();
    body_ += indent() + name + " = " + rhs + "\n";
    add(type, name);
    return name;
  }
  std::string indent() const { return std::string(2 * scopes_.size(), ' '); }
  std::string pick(const std::string& type) {
    std::vector<std::string> seen;
    for (const Pool& p : scopes_) {
      for (const auto& [t, n] : p) {
        if (t == type) seen.push_back(n);
      }
    }
    if (seen.empty()) return type == "u32" ? "%s" : make(type);
    return seen[rng_() % seen.size()];
  }
  // A value of `type` when none is in scope.
  std::string make(const std::string& type) {
    if (type == "f32") return "%a";
    if (type == "bool") return def("bool", "cmp.lt " + pick("u32") + ", " + pick("u32") + " : bool");
    return def("vector<4 x f32>", "vector.splat " + pick("f32") + " : vector<4 x f32>");
  }
  // An index into %x / %xf: v % 64.
  std::string index(const std::string& v) {
    std::string m = fresh();
    body_ += indent() + m + " = const " + std::to_string(kInputs) + " : u32\n";
    return def("u32", "rem " + v + ", " + m + " : u32");
  }

  void step(int depth) {
    const uint32_t r = rng_() % 100;
    const std::string u = "u32", f = "f32", b = "bool", v = "vector<4 x f32>";
    if (r < 10) {
      static const char* ops[] = {"add", "sub", "mul", "xor", "and", "or", "min", "max", "shl", "shr"};
      def(u, std::string(ops[rng_() % 10]) + " " + pick(u) + ", " + pick(u) + " : u32");
    } else if (r < 14) {
      std::string one = fresh();
      body_ += indent() + one + " = const 1 : u32\n";
      std::string d = def(u, "or " + pick(u) + ", " + one + " : u32");
      def(u, std::string(rng_() % 2 ? "div " : "rem ") + pick(u) + ", " + d + " : u32");
    } else if (r < 20) {
      static const char* ops[] = {"add", "sub", "mul", "min", "max"};
      def(f, std::string(ops[rng_() % 5]) + " " + pick(f) + ", " + pick(f) + " : f32");
    } else if (r < 23) {
      def(f, "fma " + pick(f) + ", " + pick(f) + ", " + pick(f) + " : f32");
    } else if (r < 26) {
      std::string a = def(f, "abs " + pick(f) + " : f32");
      def(f, "sqrt " + a + " : f32");
    } else if (r < 29) {
      def(f, "cast " + pick(u) + " : f32");
    } else if (r < 32) {
      def(u, "cast " + pick(f) + " : u32");
    } else if (r < 38) {
      static const char* ops[] = {"cmp.lt", "cmp.eq", "cmp.ne", "cmp.ge"};
      bool on_float = rng_() % 3 == 0;
      std::string t = on_float ? f : u;
      def(b, std::string(ops[rng_() % 4]) + " " + pick(t) + ", " + pick(t) + " : bool");
    } else if (r < 41) {
      def(b, std::string(rng_() % 2 ? "and " : "or ") + pick(b) + ", " + pick(b) + " : bool");
    } else if (r < 46) {
      std::string t = rng_() % 2 ? u : f;
      def(t, "select " + pick(b) + ", " + pick(t) + ", " + pick(t) + " : " + t);
    } else if (r < 50) {
      def(v, "vector.splat " + pick(f) + " : vector<4 x f32>");
    } else if (r < 53) {
      def(v, "vector.construct " + pick(f) + ", " + pick(f) + ", " + pick(f) + ", " + pick(f) + " : vector<4 x f32>");
    } else if (r < 56) {
      def(v, "vector.insert " + pick(v) + ", " + pick(f) + " {lane = " + std::to_string(rng_() % 4) +
                 "} : vector<4 x f32>");
    } else if (r < 60) {
      def(v, std::string(rng_() % 2 ? "add " : "mul ") + pick(v) + ", " + pick(v) + " : vector<4 x f32>");
    } else if (r < 63) {
      def(v, "select " + pick(b) + ", " + pick(v) + ", " + pick(v) + " : vector<4 x f32>");
    } else if (r < 67) {
      def(f, "vector.extract " + pick(v) + " {lane = " + std::to_string(rng_() % 4) + "} : f32");
    } else if (r < 70) {
      def(u, "load %x, " + index(pick(u)) + " : u32");
    } else if (r < 72) {
      def(u, "load %x, " + index(pick(u)) + ", " + pick(b) + " : u32");
    } else if (r < 74) {
      static const char* ops[] = {"plane.sum", "plane.max"};
      def(u, std::string(ops[rng_() % 2]) + " " + pick(u) + " : u32");
    } else if (r < 75) {
      std::string one = fresh();
      body_ += indent() + one + " = const " + std::to_string(rng_() % 5) + " : u32\n";
      def(u, "plane.shuffle_xor " + pick(u) + ", " + one + " : u32");
    } else if (r < 77) {
      std::string slot = fresh();
      body_ += indent() + slot + " = const " + std::to_string(rng_() % 4) + " : u32\n";
      body_ += indent() + fresh() + " = atomic.add %acc, " + slot + ", " + pick(u) + " : u32\n";
    } else if (r < 81) {
      body_ += indent() + "var.store %var, " + pick(u) + "\n";
    } else if (r < 83) {
      def(u, "var.load %var : u32");
    } else if (r < 91 && depth < 3) {
      // if of a condition that is uniform or not, whichever pick gives.
      body_ += indent() + "if " + pick(b) + " {\n";
      region(depth, false);
      if (rng_() % 2) {
        body_ += indent() + "} else {\n";
        region(depth, false);
      }
      body_ += indent() + "}\n";
    } else if (depth < 3 && loops_ < 4) {
      ++loops_;
      // for 0 .. v % 4, step 1 or 2: v uniform or not.
      std::string four = fresh(), lo = fresh(), step = fresh();
      body_ += indent() + four + " = const 4 : u32\n";
      body_ += indent() + lo + " = const 0 : u32\n";
      body_ += indent() + step + " = const " + std::to_string(1 + rng_() % 2) + " : u32\n";
      std::string hi = def(u, "rem " + pick(u) + ", " + four + " : u32");
      std::string i = fresh();
      body_ += indent() + "for " + lo + ", " + hi + ", " + step + " (" + i + ": u32) {\n";
      scopes_.emplace_back();
      add(u, i);
      region_body(depth + 1, true);
      scopes_.pop_back();
      body_ += indent() + "}\n";
    }
  }

  void region(int depth, bool in_loop) {
    scopes_.emplace_back();
    region_body(depth + 1, in_loop);
    scopes_.pop_back();
  }
  void region_body(int depth, bool in_loop) {
    int n = 1 + int(rng_() % 5);
    for (int i = 0; i < n; ++i) step(depth);
    store_some();
    if (in_loop && rng_() % 4 == 0) {
      body_ += indent() + "if " + pick("bool") + " {\n" + indent() + "  " + (rng_() % 2 ? "break" : "continue") + "\n" +
               indent() + "}\n";
    }
  }

  // Stores a few values of the innermost scope (as u32 bits) into the unit's slots.
  void store_some() {
    const Pool here = scopes_.back();  // a copy: def() adds to the scope
    for (int i = 0, n = int(rng_() % 3); i < n && !here.empty(); ++i) {
      const auto& [type, name] = here[rng_() % here.size()];
      std::string bits = name;
      if (type == "f32") bits = def("u32", "bitcast " + name + " : u32");
      if (type == "bool") bits = def("u32", "cast " + name + " : u32");
      if (type == "vector<4 x f32>") {
        std::string lane = def("f32", "vector.extract " + name + " {lane = " + std::to_string(rng_() % 4) + "} : f32");
        bits = def("u32", "bitcast " + lane + " : u32");
      }
      store(bits);
    }
  }
  void store(const std::string& bits) {
    std::string k = fresh(), base = fresh(), c = fresh(), at = fresh();
    body_ += indent() + k + " = const " + std::to_string(kSlots) + " : u32\n";
    body_ += indent() + base + " = mul %p, " + k + " : u32\n";
    body_ += indent() + c + " = const " + std::to_string(slot_++ % kSlots) + " : u32\n";
    body_ += indent() + at + " = add " + base + ", " + c + " : u32\n";
    body_ += indent() + "store %out, " + at + ", " + bits + "\n";
  }

  std::mt19937 rng_;
  uint32_t dim_ = 1;
  std::string body_;
  std::vector<Pool> scopes_;
  int next_ = 0;
  int loops_ = 0;
  uint32_t slot_ = 0;
};

class RandomKernels : public ::testing::TestWithParam<int> {};

TEST_P(RandomKernels, UniformAndVaryingPlansAgree) {
  RandomKernel gen{uint32_t(GetParam())};
  SCOPED_TRACE(gen.text());
  ir::Kernel k = parse_verified(gen.text());
  passes::run_pipeline(k);  // as a launch would (fold, cse and dce reshape what is uniform)
  std::mt19937 rng(uint32_t(GetParam()) * 31u + 1u);
  const uint32_t cubes = 3, units = gen.dim() * cubes;
  std::vector<Arg> args = {Arg::value(uint32_t(rng() % 9)),
                           Arg::value(float(int(rng() % 17) - 8) / 4),
                           Arg::buffer(random_u32(rng, RandomKernel::kInputs, 40)),
                           Arg::buffer(random_f32(rng, RandomKernel::kInputs)),
                           Arg::buffer(std::vector<uint32_t>(4)),
                           Arg::buffer(std::vector<uint32_t>(size_t(units) * RandomKernel::kSlots, 0xdeadbeef))};
  Outcome o = run_both(k, args, {cubes, 1, 1});
  EXPECT_EQ(o.error_kind, "") << o.error_message;
  EXPECT_NE(as<uint32_t>(o.after[5]), as<uint32_t>(args[5].bytes)) << "the kernel stored something";
}

INSTANTIATE_TEST_SUITE_P(Seeds, RandomKernels, ::testing::Range(0, 300));

}  // namespace
}  // namespace kiln::cpu::testing
