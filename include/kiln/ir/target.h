// What a kernel is compiled for: the CPU backend, or a CUDA architecture. The pass pipeline takes it
// and records it in the kernel's facts before the first pass, so that a pass (and the verifier) can
// differ per target: the tile layer lowers to different ops on sm_80 and sm_90a.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::ir {

// The limits below are said here and nowhere else: the IR, the passes, the backends, the runtime's
// device facts and the layers above read them from Target.
struct Target {
  // Units of a plane on every target: a CUDA warp, and the CPU backend's planes of consecutive
  // units, which run plane ops in the same groups (docs/ir.md, "plane").
  static constexpr uint32_t kPlaneWidth = 32;
  static constexpr uint32_t kPlaneLaneBits = 5;  // log2(kPlaneWidth): a unit's lane is its low bits
  // Units of one cube, at most, and per axis (CUDA's block limits; the CPU backend keeps the same).
  static constexpr uint32_t kMaxCubeUnits = 1024;
  static constexpr std::array<uint32_t, 3> kMaxCubeDim = {1024, 1024, 64};
  // The vector widths a value or an array element may have.
  static constexpr std::array<int, 5> kVectorWidths = {1, 2, 4, 8, 16};
  static constexpr bool valid_vector_width(int w) {
    for (int v : kVectorWidths) {
      if (v == w) return true;
    }
    return false;
  }
  // "1, 2, 4, 8, 16" (the widths from `least` on), for messages.
  static std::string vector_widths_text(int least = 1);
  // Bytes of shared memory a CUDA kernel may declare statically; past it, its shared arrays are
  // carved from one dynamic buffer and the launch opts in to the larger size.
  static constexpr uint32_t kCudaStaticShared = 48 * 1024;
  // The most cubes a kernel may ask to share one processor (KernelFacts::cubes_per_processor):
  // the resident-cube limit of the largest CUDA processors (32 on sm_80 and sm_90; 16 on sm_75
  // and sm_86, 24 on sm_89, where ptxas ignores a larger ask).
  static constexpr int kMaxCubesPerProcessor = 32;

  enum class Kind : uint8_t {
    Any,   // not known (hand-written IR, tests): passes assume nothing about the target
    Cpu,   // the CPU backend
    Cuda,  // an NVIDIA GPU of compute capability `sm`
  };
  Kind kind = Kind::Any;
  int sm = 0;                  // CUDA: major * 10 + minor (90 for sm_90)
  bool arch_specific = false;  // CUDA: the 'a' suffix, features of exactly this architecture (sm_90a's wgmma)

  static Target cpu() { return {Kind::Cpu, 0, false}; }
  static Target cuda(int sm, bool arch_specific = false) { return {Kind::Cuda, sm, arch_specific}; }
  bool known() const { return kind != Kind::Any; }
  bool is_cpu() const { return kind == Kind::Cpu; }
  bool is_cuda() const { return kind == Kind::Cuda; }
  // Whether the target is a CUDA GPU of compute capability `sm_min` or later.
  bool cuda_at_least(int sm_min) const { return is_cuda() && sm >= sm_min; }

  friend bool operator==(const Target&, const Target&) = default;
};

// "any", "cpu", "sm_90", "sm_90a".
std::string to_string(const Target& t);
// Parses what to_string writes; false when `text` names no target.
bool parse_target(std::string_view text, Target& out);

}  // namespace kiln::ir
