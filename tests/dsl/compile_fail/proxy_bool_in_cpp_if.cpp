// Must not compile: a C++ `if` on a proxy bool would pick a branch while tracing and drop the
// other. Built with -DKILN_CONTROL the same kernel uses If() and compiles (the test's control).
#include "kiln/dsl.h"

using namespace kiln;

struct Guarded {
  static constexpr std::string_view name = "guarded";
  void operator()(Slice<const float> x, Slice<float> out) const {
    auto pos = absolute_pos();
#ifdef KILN_CONTROL
    If(pos < x.len(), [&] { out[pos] = x[pos]; });
#else
    if (pos < x.len()) out[pos] = x[pos];
#endif
  }
};

int main() {
  KernelId id = kernel_id_base<Guarded>();
  id.finalize();
  (void)define<Guarded>(id);
}
