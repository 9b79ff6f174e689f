// Must not compile: C++ control flow on a proxy bool would pick one path while tracing and drop the
// other. Each case is one mistake, built with -DKILN_CASE_<name>; the control builds the same
// kernel with If() and kiln's For, and compiles.
#include "kiln/dsl.h"

using namespace kiln;

struct Guarded {
  static constexpr std::string_view name = "guarded";
  void operator()(Slice<const float> x, Slice<float> out) const {
    auto pos = absolute_pos();
#if defined(KILN_CASE_cpp_if)
    if (pos < x.len()) out[pos] = x[pos];  // error-here: cpp_if
#elif defined(KILN_CASE_cpp_for)
    for (auto i = pos; i < x.len(); i += 1u) out[i] = x[i];  // error-here: cpp_for
#elif defined(KILN_CASE_cpp_while)
    while (pos < x.len()) out[pos] = x[pos];  // error-here: cpp_while
#else
    If(pos < x.len(), [&] { out[pos] = x[pos]; });
    For(range(pos, x.len(), 1u), [&](auto i) { out[i] = x[i]; });
#endif
  }
};

int main() { (void)define<Guarded>(kernel_id<Guarded>(LaunchFacts{}, param_descs<Guarded>())); }
