// What a kernel is compiled for: the CPU backend, or a CUDA architecture. The pass pipeline takes it
// and records it in the kernel's facts before the first pass, so that a pass (and the verifier) can
// differ per target: the tile layer lowers to different ops on sm_80 and sm_90a.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::ir {

struct Target {
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
