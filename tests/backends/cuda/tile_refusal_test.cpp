// Tiles belong to the tile layer, which lowers them before the backends: until it does, both
// backends refuse a kernel that holds a tile value, whether a parameter, an op's result or a value
// a loop carries, with an error that says so (the IR's text and verifier know tiles already).
#include <gtest/gtest.h>

#include <string>

#include "backends/cpu/cpu_backend.h"
#include "backends/cuda/emit.h"
#include "kiln/error.h"
#include "kiln/ir/text.h"

namespace kiln {
namespace {

constexpr const char* kFacts = "{cube_dim = [32, 1, 1], mode = unchecked, address = u32, vector = 1}";

// A tile parameter that a loop carries.
std::string tile_parameter() {
  return std::string("kernel @tile_param(%t: tile<[16, 16] x f32, registers>, %n: u32) ") + kFacts +
         " {\n  %0 = const 0 : u32\n  %1 = const 1 : u32\n"
         "  %2 = for %0, %n, %1, %t : tile<[16, 16] x f32, registers>"
         " (%3: u32, %4: tile<[16, 16] x f32, registers>) {\n"
         "    yield %4\n  }\n}\n";
}

// A loop that carries a tile made by an op (no op makes one yet; this text types a const so).
std::string carried_tile() {
  return std::string("kernel @carried_tile(%n: u32) ") + kFacts +
         " {\n  %0 = const 0 : u32\n  %1 = const 1 : u32\n  %2 = const 0.0 : tile<[4] x f32, registers>\n"
         "  %3 = for %0, %n, %1, %2 : tile<[4] x f32, registers> (%4: u32, %5: tile<[4] x f32, registers>) {\n"
         "    yield %5\n  }\n}\n";
}

Error error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  return Error("test.no_error", "(no error)");
}

TEST(TileRefusal, TheCudaEmitterRefusesTileParametersAndValues) {
  Error p = error_of([] { cuda::emit_cuda(ir::parse(tile_parameter())); });
  EXPECT_EQ(p.kind(), "emit.unsupported");
  EXPECT_NE(p.message().find("parameter 't' has type tile<[16, 16] x f32, registers>"), std::string::npos)
      << p.message();
  Error v = error_of([] { cuda::emit_cuda(ir::parse(carried_tile())); });
  EXPECT_EQ(v.kind(), "emit.unsupported");
  EXPECT_NE(v.message().find("tile"), std::string::npos) << v.message();
  EXPECT_NE(v.message().find("'carried_tile'"), std::string::npos) << v.message();
}

TEST(TileRefusal, TheCpuBackendRefusesTileParametersAndCarriedTiles) {
  auto cpu = cpu::make_cpu_backend();
  Error p = error_of([&] { cpu->compile(ir::parse(tile_parameter())); });
  EXPECT_EQ(p.kind(), "compile.unsupported");
  EXPECT_NE(p.message().find("parameter 't' has type tile<[16, 16] x f32, registers>"), std::string::npos)
      << p.message();
  Error v = error_of([&] { cpu->compile(ir::parse(carried_tile())); });
  EXPECT_EQ(v.kind(), "compile.unsupported");
  EXPECT_NE(v.message().find("tile<[4] x f32, registers>"), std::string::npos) << v.message();
}

}  // namespace
}  // namespace kiln
