// Plane ops under divergence, checked without a GPU: random structured kernels (if/else, for with
// per-unit bounds, while, break, continue and terminate around plane ops at any depth, cubes of 8
// to 100 units) run on kiln's CPU backend and, as the CUDA emitter writes them, on its_shim.h, a
// host model of warps under independent thread scheduling that stops on any *_sync call its
// rules forbid and on a deadlock. The outputs must agree byte for byte. This checks the argument
// of docs/decisions/013-plane-masks-on-cuda.md by machine; the suite's plane_masks cases check it
// on a GPU. The model is compiled by the host C++ compiler the tests were built with. The same
// comparison runs the hand-written kernels of carried.kir, whose loops and ifs carry values
// (docs/ir.md), against a reference written from their IR too.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>

#include "backend/backend.h"
#include "backends/cpu/cpu_backend.h"
#include "backends/cuda/emit.h"
#include "cuda_test_util.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"
#include "kiln/passes/passes.h"
#include "support/run_ir_on_cpu.h"

namespace kiln::cuda::testing {
namespace {

// A random kernel over %x (read) and %out (written at the unit's position): nested ifs, fors
// whose bound is x % 3, whiles that count to x % 3 + 1 (some with plane ops in the condition
// region), breaks and continues under an if, terminates, and plane ops (sum, max, scans, ballot,
// any, elect, a broadcast from the highest active lane) whose results feed a var, so that each
// depends on the ones before it. Every value is u32: the model computes those exactly.
class RandomKernel {
 public:
  explicit RandomKernel(uint64_t seed) : rng_(seed) {
    const uint32_t dims[] = {8, 32, 40, 64, 100};
    uint32_t dim = dims[rng_() % 5];
    text_ = "kernel @random" + std::to_string(seed) + "(%x: buffer<u32, ro>, %out: buffer<u32, rw>) {cube_dim = [" +
            std::to_string(dim) + ", 1, 1], mode = unchecked, address = u32, vector = 1} {\n";
    pos_ = def(1, "builtin.absolute_pos : u32");
    x_ = def(1, "load %x, " + pos_ + " : u32");
    c0_ = def(1, "const 0 : u32");
    c1_ = def(1, "const 1 : u32");
    c3_ = def(1, "const 3 : u32");
    var_ = def(1, "var.decl : var<u32>");
    emit(1, "var.store " + var_ + ", " + x_);
    statements(1, false, 5);
    publish(1, def(1, "plane.sum " + x_ + " : u32"));
    text_ += "}\n";
  }
  const std::string& text() const { return text_; }

 private:
  std::string def(int depth, const std::string& rhs) {
    std::string v = "%" + std::to_string(next_++);
    emit(depth, v + " = " + rhs);
    return v;
  }
  void emit(int depth, const std::string& s) { text_ += std::string(size_t(depth) * 2, ' ') + s + "\n"; }
  bool chance(int percent) { return int(rng_() % 100) < percent; }
  std::string load(int d) { return def(d, "var.load " + var_ + " : u32"); }
  // (var % 3) compared with 0 or 1: differs between units.
  std::string condition(int d) {
    std::string m = def(d, "rem " + load(d) + ", " + c3_ + " : u32");
    const char* cmp[] = {"eq", "ne", "gt"};
    return def(d, "cmp." + std::string(cmp[rng_() % 3]) + " " + m + ", " + (chance(50) ? c0_ : c1_) + " : bool");
  }
  // Stores r at the unit's position and folds it into the var.
  void publish(int d, const std::string& r) {
    emit(d, "store %out, " + pos_ + ", " + r);
    emit(d, "var.store " + var_ + ", " + def(d, "add " + r + ", " + c1_ + " : u32"));
  }
  void plane_op(int d) {
    switch (rng_() % 7) {
      case 0: return publish(d, def(d, "plane.sum " + load(d) + " : u32"));
      case 1: return publish(d, def(d, "plane.max " + load(d) + " : u32"));
      case 2: return publish(d, def(d, "plane.inclusive_sum " + load(d) + " : u32"));
      case 3: return publish(d, def(d, "plane.exclusive_sum " + load(d) + " : u32"));
      case 4: return publish(d, def(d, "plane.ballot " + condition(d) + " : u32"));
      case 5: {
        std::string b = def(d, (chance(50) ? "plane.any " + condition(d) : std::string("plane.elect")) + " : bool");
        return publish(d, def(d, "cast " + b + " : u32"));
      }
      default: {
        std::string all = def(d, "plane.ballot " + def(d, "const true : bool") + " : u32");
        std::string zeros = def(d, "leading_zeros " + all + " : u32");
        std::string top = def(d, "sub " + def(d, "const 31 : u32") + ", " + zeros + " : u32");
        return publish(d, def(d, "plane.broadcast " + load(d) + ", " + top + " : u32"));
      }
    }
  }
  void statements(int d, bool in_loop, int budget) {
    for (int n = 1 + int(rng_() % 4); n > 0 && budget > 0; --n) {
      int pick = int(rng_() % 100);
      if (pick < 30) {
        plane_op(d);
      } else if (pick < 50) {
        emit(d, "if " + condition(d) + " {");
        statements(d + 1, in_loop, budget - 1);
        if (chance(50)) {
          emit(d, "} else {");
          statements(d + 1, in_loop, budget - 1);
        }
        emit(d, "}");
      } else if (pick < 62) {
        std::string hi = def(d, "rem " + x_ + ", " + c3_ + " : u32");
        emit(d, "for " + c0_ + ", " + hi + ", " + c1_ + " (%" + std::to_string(next_++) + ": u32) {");
        statements(d + 1, true, budget - 1);
        emit(d, "}");
      } else if (pick < 72) {
        std::string count = def(d, "var.decl : var<u32>");
        emit(d, "var.store " + count + ", " + c0_);
        emit(d, "while {");
        if (chance(50)) statements(d + 1, false, budget - 2);
        std::string k = def(d + 1, "var.load " + count + " : u32");
        std::string rem = def(d + 1, "rem " + x_ + ", " + c3_ + " : u32");
        std::string limit = def(d + 1, "add " + rem + ", " + c1_ + " : u32");
        emit(d + 1, "condition " + def(d + 1, "cmp.lt " + k + ", " + limit + " : bool"));
        emit(d, "} do {");
        std::string k2 = def(d + 1, "var.load " + count + " : u32");
        emit(d + 1, "var.store " + count + ", " + def(d + 1, "add " + k2 + ", " + c1_ + " : u32"));
        statements(d + 1, true, budget - 1);
        emit(d, "}");
      } else if (pick < 85 && in_loop) {
        emit(d, "if " + condition(d) + " {");
        emit(d + 1, chance(50) ? "break" : "continue");
        emit(d, "}");
      } else if (pick < 92) {
        emit(d, "if " + condition(d) + " {");
        emit(d + 1, "terminate");
        emit(d, "}");
      } else {
        emit(d, "store %out, " + pos_ + ", " + load(d));
      }
    }
  }

  std::mt19937_64 rng_;
  std::string text_;
  int next_ = 0;
  std::string pos_, x_, c0_, c1_, c3_, var_;
};

// The emitted source made into a host program: its_shim.h, the kernel with the lane id taken
// from the model, and a main that reads the buffers (u32 count, then per buffer a u64 byte count
// and the bytes) from in.bin, runs `cubes` cubes one after the other with one thread per unit,
// and writes every buffer to out.bin.
std::string model_program(const EmitResult& e, const ir::Kernel& k, uint32_t cubes) {
  std::string src = e.source;
  const std::string lane_asm = "asm(\"mov.u32 %0, %%laneid;\" : \"=r\"(l));";
  size_t at = src.find(lane_asm);
  if (at == std::string::npos) throw std::runtime_error("the prelude's lane id is not where the test expects it");
  src.replace(at, lane_asm.size(), "l = emu_lane();");
  std::string call = e.entry + "(";
  for (size_t i = 0; i < e.args.size(); ++i) {
    std::string b = "bufs[" + std::to_string(e.args[i].param) + "]";
    if (e.args[i].role == AbiArg::Role::Pointer) {
      call += (i ? ", " : "") + ("AnyPtr{" + b + ".data()}");
    } else if (e.args[i].role == AbiArg::Role::Len) {
      call += ", (unsigned)(" + b + ".size() / 4)";
    } else {
      throw std::runtime_error("the model passes only buffers of u32");
    }
  }
  call += ");";
  const ir::Dim3& d = k.facts.cube_dim;
  std::string head = "#include <fstream>\n#include <thread>\n#include \"" + std::string(KILN_TEST_DATA) +
                     "/its_shim.h\"\n" + "#define KILN_PLANE_WIDTH " + std::to_string(ir::Target::kPlaneWidth) +
                     "u\n";  // as NVRTC's options give it
  return head + src + R"(
struct AnyPtr {
  void* p;
  template <class T> operator T*() const { return (T*)p; }
};
std::vector<std::vector<unsigned char>> bufs;
int main() {
  std::ifstream in("in.bin", std::ios::binary);
  unsigned count = 0;
  in.read((char*)&count, 4);
  bufs.resize(count);
  for (auto& b : bufs) {
    unsigned long long n = 0;
    in.read((char*)&n, 8);
    b.resize(n);
    in.read((char*)b.data(), std::streamsize(n));
  }
  blockDim = {)" +
         std::to_string(d.x) + "u, " + std::to_string(d.y) + "u, " + std::to_string(d.z) + R"(u};
  gridDim = {)" +
         std::to_string(cubes) + R"(u, 1u, 1u};
  const unsigned units = blockDim.x * blockDim.y * blockDim.z;
  for (unsigned c = 0; c < gridDim.x; ++c) {
    std::vector<EmuWarp> warps((units + 31) / 32);
    if (units % 32) warps.back().exited = ~((1u << (units % 32)) - 1u);
    emu_warps = &warps;
    EmuBlock block;
    block.live = units;
    emu_block = &block;
    std::vector<std::thread> threads;
    for (unsigned u = 0; u < units; ++u) {
      threads.emplace_back([=] {
        threadIdx = {u % blockDim.x, u / blockDim.x % blockDim.y, u / (blockDim.x * blockDim.y)};
        blockIdx = {c, 0, 0};
        emu_lane_id = u % 32;
        emu_warp_id = u / 32;
        )" +
         call + R"(
        emu_lane_exits();
        emu_thread_exits();
      });
    }
    for (auto& t : threads) t.join();
  }
  std::ofstream out("out.bin", std::ios::binary);
  for (auto& b : bufs) out.write((const char*)b.data(), std::streamsize(b.size()));
}
)";
}

using Buffers = std::vector<std::vector<unsigned char>>;

// Every buffer holds 32-bit words.
Buffers run_on_cpu(const ir::Kernel& k, Buffers bufs, uint32_t cubes) {
  std::vector<uint32_t> lens;
  for (const auto& b : bufs) lens.push_back(uint32_t(b.size() / 4));
  return test::run_kernel_on_cpu(k, std::move(bufs), lens, cubes);
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The kernel's x and out buffers (64 u32 per unit each): x holds values 0..12, so that every
// condition splits units; out is poisoned.
Buffers model_inputs(const ir::Kernel& k, uint32_t cubes, uint64_t seed) {
  size_t n = size_t(k.facts.cube_dim.total()) * cubes * 64;
  std::mt19937_64 rng(seed);
  std::vector<uint32_t> x(n), out(n, 0xffffffffu);
  for (uint32_t& v : x) v = uint32_t(rng() % 13);
  Buffers bufs(2);
  for (auto [b, v] : {std::pair{&bufs[0], &x}, std::pair{&bufs[1], &out}}) {
    b->resize(n * 4);
    std::memcpy(b->data(), v->data(), n * 4);
  }
  return bufs;
}

std::vector<uint32_t> words(const std::vector<unsigned char>& bytes) {
  std::vector<uint32_t> w(bytes.size() / 4);
  std::memcpy(w.data(), bytes.data(), w.size() * 4);
  return w;
}

// Builds the emitted kernel into a host program on the model (model_program), runs it over
// `bufs` and gives back the out buffer; adds a failure and gives back nothing when it does not
// build or stops.
std::optional<std::vector<uint32_t>> run_on_model(const ir::Kernel& k, const Buffers& bufs, uint32_t cubes,
                                                  const std::string& tag) {
  EmitResult e = emit_cuda(k);
  auto dir = std::filesystem::path(::testing::TempDir()) / ("kiln_its_" + std::to_string(getpid()) + "_" + tag);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "model.cpp") << model_program(e, k, cubes);
  std::string build = "cd '" + dir.string() + "' && '" + std::string(KILN_HOST_CXX) +
                      "' -std=c++17 -O1 -w -pthread model.cpp -o model 2> build.log";
  if (std::system(build.c_str()) != 0) {
    ADD_FAILURE() << read_file(dir / "build.log");
    return std::nullopt;
  }
  {
    std::ofstream in(dir / "in.bin", std::ios::binary);
    unsigned count = unsigned(bufs.size());
    in.write(reinterpret_cast<const char*>(&count), 4);
    for (const auto& b : bufs) {
      unsigned long long size = b.size();
      in.write(reinterpret_cast<const char*>(&size), 8);
      in.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
    }
  }
  std::string run = "cd '" + dir.string() + "' && timeout 300 ./model 2> run.log";
  if (std::system(run.c_str()) != 0) {
    ADD_FAILURE() << "the model stopped: " << read_file(dir / "run.log");
    return std::nullopt;
  }
  std::string got = read_file(dir / "out.bin");
  size_t out_bytes = bufs[1].size();
  if (got.size() != bufs[0].size() + out_bytes) {
    ADD_FAILURE() << "the model wrote " << got.size() << " bytes";
    return std::nullopt;
  }
  std::vector<unsigned char> out(got.begin() + std::ptrdiff_t(bufs[0].size()), got.end());
  std::filesystem::remove_all(dir);
  return words(out);
}

class ItsModel : public ::testing::TestWithParam<int> {};

TEST_P(ItsModel, RandomKernelAgreesWithTheCpu) {
  const uint32_t cubes = 2;
  RandomKernel gen{uint64_t(GetParam())};
  SCOPED_TRACE(gen.text());
  ir::Kernel k = ir::parse(gen.text());
  ir::verify(k, "test");
  passes::run_pipeline(k);
  Buffers bufs = model_inputs(k, cubes, uint64_t(GetParam()) * 7919 + 1);
  std::optional<std::vector<uint32_t>> got = run_on_model(k, bufs, cubes, std::to_string(GetParam()));
  ASSERT_TRUE(got);
  std::vector<uint32_t> want = words(run_on_cpu(k, bufs, cubes)[1]);
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ((*got)[i], want[i]) << "out[" << i << "]: the model of the CUDA source, then the CPU";
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, ItsModel, ::testing::Range(0, 16));

// ---- hand-written kernels that carry values (carried.kir) ----------------------------------------

// What each carried.kir kernel leaves in out[unit * 64 ..], from the IR by hand; none for a kernel
// with plane ops, whose reference is the CPU backend (plane_masks cases of the suite check it).
using Reference = std::vector<uint32_t> (*)(const uint32_t* x, uint32_t unit);

std::vector<uint32_t> rotation_ref(const uint32_t* x, uint32_t unit) {
  uint32_t a = x[0], b = unit, c = 7;
  for (uint32_t k = 0; k < x[0]; ++k) {
    if (k % 5 == 2) {
      a = b;
      continue;
    }
    uint32_t next = a * 3 + k;
    if (next % 11 == 0) {
      uint32_t old_a = a;
      a = c;
      b = old_a;
      c = next;
      break;
    }
    std::swap(a, b);
    c = next;
  }
  return {a, b, c};
}

std::vector<uint32_t> while_forward_ref(const uint32_t* x, uint32_t) {
  uint32_t j = 0, p = 1;
  while (true) {
    uint32_t seen = x[j & 63];
    if (!(seen != 0 && p < 30)) return {j, p, seen};
    uint32_t j2 = j + seen, p2 = p * 3;
    if (j2 % 5 == 0) return {j2, p2, seen};
    j = j2;
    if (seen != 7) p = p2;
  }
}

Reference reference_of(const std::string& name) {
  if (name == "rotation") return &rotation_ref;
  if (name == "while_forward") return &while_forward_ref;
  return nullptr;
}

const std::vector<std::string>& carried_cases() {
  static const std::vector<std::string> cases = split_cases(read_text(std::string(KILN_TEST_DATA) + "/carried.kir"));
  return cases;
}

class ItsCarried : public ::testing::TestWithParam<size_t> {};

TEST_P(ItsCarried, CpuModelAndReferenceAgree) {
  const uint32_t cubes = 2;
  const std::string& text = carried_cases().at(GetParam());
  ir::Kernel k = ir::parse(text);
  ir::verify(k, "test input");
  std::string before = ir::print(k);
  passes::run_pipeline(k);
  EXPECT_EQ(ir::print(k), before) << "the case is written as the pipeline leaves it";
  Buffers bufs = model_inputs(k, cubes, 12345 + GetParam());
  std::vector<uint32_t> cpu_out = words(run_on_cpu(k, bufs, cubes)[1]);
  std::optional<std::vector<uint32_t>> model_out = run_on_model(k, bufs, cubes, kernel_name(text));
  ASSERT_TRUE(model_out);
  for (size_t i = 0; i < cpu_out.size(); ++i) {
    ASSERT_EQ((*model_out)[i], cpu_out[i]) << "out[" << i << "]: the model of the CUDA source, then the CPU";
  }
  Reference ref = reference_of(k.name);
  if (!ref) return;
  std::vector<uint32_t> x = words(bufs[0]);
  size_t units = x.size() / 64;
  for (uint32_t u = 0; u < units; ++u) {
    std::vector<uint32_t> want = ref(&x[size_t(u) * 64], u);
    for (size_t j = 0; j < want.size(); ++j) {
      ASSERT_EQ(cpu_out[size_t(u) * 64 + j], want[j])
          << "unit " << u << ", output " << j << ": the CPU, then the reference";
    }
  }
}

TEST_P(ItsCarried, CompilesWithNvrtc) {
  ir::Kernel k = ir::parse(carried_cases().at(GetParam()));
  EmitResult r = emit_cuda(k);
  KILN_REQUIRE_NVRTC();
  expect_compiles(r);
}

INSTANTIATE_TEST_SUITE_P(Kir, ItsCarried, ::testing::Range<size_t>(0, carried_cases().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return kernel_name(carried_cases()[info.param]);
                         });

TEST(ItsCarriedFile, HasItsCases) { EXPECT_EQ(carried_cases().size(), 5u); }

}  // namespace
}  // namespace kiln::cuda::testing
