// Target names: "cpu" and CUDA architectures as NVRTC spells them ("sm_90a").
#include "kiln/ir/target.h"

#include <charconv>

namespace kiln::ir {

std::string Target::vector_widths_text(int least) {
  std::string s;
  for (int w : kVectorWidths) {
    if (w >= least) s += (s.empty() ? "" : ", ") + std::to_string(w);
  }
  return s;
}

std::string to_string(const Target& t) {
  switch (t.kind) {
    case Target::Kind::Any: return "any";
    case Target::Kind::Cpu: return "cpu";
    case Target::Kind::Cuda: return "sm_" + std::to_string(t.sm) + (t.arch_specific ? "a" : "");
  }
  return "?";
}

bool parse_target(std::string_view text, Target& out) {
  if (text == "any" || text == "cpu") {
    out = text == "cpu" ? Target::cpu() : Target{};
    return true;
  }
  if (text.substr(0, 3) != "sm_") return false;
  std::string_view digits = text.substr(3);
  bool arch_specific = !digits.empty() && digits.back() == 'a';
  if (arch_specific) digits.remove_suffix(1);
  int sm = 0;
  auto res = std::from_chars(digits.data(), digits.data() + digits.size(), sm);
  // Two or three digits: sm_50 .. sm_120; a leading zero would print differently.
  if (res.ec != std::errc() || res.ptr != digits.data() + digits.size() || digits.size() < 2 || digits.size() > 3 ||
      digits[0] == '0') {
    return false;
  }
  out = Target::cuda(sm, arch_specific);
  return true;
}

}  // namespace kiln::ir
