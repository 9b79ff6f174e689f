// A kernel's cubes_per_processor on CUDA: the second argument of __launch_bounds__, named in the
// source's first line, in place of the emitter's own hint; NVRTC compiles both forms, and holding
// a register-hungry kernel to more cubes a processor changes its code.
#include <gtest/gtest.h>

#include "cuda_test_util.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"

namespace kiln::cuda::testing {
namespace {

// Each unit loads 64 values, then sums exp of each: 64 loads in flight want 64 registers and more.
std::string hungry(int cubes) {
  std::string s =
      "kernel @hungry(%x: buffer<f32, ro>, %y: buffer<f32, rw>) {cube_dim = [256, 1, 1], "
      "mode = unchecked, address = u32, vector = 1" +
      (cubes ? ", cubes_per_processor = " + std::to_string(cubes) : std::string()) + "} {\n";
  s += "  %0 = builtin.absolute_pos : u32\n  %1 = const 262144 : u32\n";
  int v = 2;
  std::vector<int> loaded;
  for (int d = 0; d < 64; ++d) {
    s += "  %" + std::to_string(v) + " = const " + std::to_string(d) + " : u32\n";
    s += "  %" + std::to_string(v + 1) + " = mul %" + std::to_string(v) + ", %1 : u32\n";
    s += "  %" + std::to_string(v + 2) + " = add %0, %" + std::to_string(v + 1) + " : u32\n";
    s += "  %" + std::to_string(v + 3) + " = load %x, %" + std::to_string(v + 2) + " : f32\n";
    loaded.push_back(v + 3);
    v += 4;
  }
  int acc = loaded[0];
  for (size_t i = 1; i < loaded.size(); ++i) {
    s += "  %" + std::to_string(v) + " = exp %" + std::to_string(loaded[i]) + " : f32\n";
    s += "  %" + std::to_string(v + 1) + " = mul %" + std::to_string(acc) + ", %" + std::to_string(v) + " : f32\n";
    acc = v + 1;
    v += 2;
  }
  s += "  store %y, %0, %" + std::to_string(acc) + "\n}\n";
  return s;
}

EmitResult emit_text(const std::string& text) {
  ir::Kernel k = ir::parse(text);
  ir::verify(k, "test");
  return emit_cuda(k);
}

TEST(CubesPerProcessor, IsTheSecondLaunchBound) {
  EmitResult plain = emit_text(hungry(0)), two = emit_text(hungry(2)), eight = emit_text(hungry(8));
  EXPECT_NE(plain.source.find("__launch_bounds__(256) "), std::string::npos);
  EXPECT_NE(two.source.find("__launch_bounds__(256, 2) "), std::string::npos);
  EXPECT_NE(eight.source.find("__launch_bounds__(256, 8) "), std::string::npos);
  const std::string head = eight.source.substr(0, eight.source.find('\n'));
  EXPECT_NE(head.find(", cubes_per_processor = 8)"), std::string::npos) << head;
  EXPECT_EQ(plain.source.substr(0, plain.source.find('\n')).find("cubes_per_processor"), std::string::npos);
}

TEST(CubesPerProcessor, NvrtcHoldsTheRegistersToIt) {
  KILN_REQUIRE_NVRTC();
  const std::vector<std::string> options = default_compile_options(kArch);
  EmitResult plain = emit_text(hungry(0)), eight = emit_text(hungry(8));
  CompileResult a = compile(plain.source, plain.entry, options), b = compile(eight.source, eight.entry, options);
  ASSERT_FALSE(a.cubin.empty());
  ASSERT_FALSE(b.cubin.empty());
  // Eight cubes of 256 units leave 32 registers a unit: not the code of the unbounded kernel.
  EXPECT_NE(a.cubin, b.cubin);
}

}  // namespace
}  // namespace kiln::cuda::testing
