// Must not compile: a shared array of barriers is reached by the mbarrier ops only (kiln/dsl/
// barrier.h), so indexing one, to load, store or take an atomic of a barrier, does not compile.
// The control sets one up and waits on it.
#include "kiln/dsl.h"

using namespace kiln;

void kernel(Slice<uint32_t> out) {
  SharedArray<Mbarrier> bars(1);
  If(unit_pos() == 0u, [&] { mbarrier_init(bars, 0u, 1u); });
  sync_cube();
#if defined(KILN_CASE_index)
  auto b = bars[0u];  // error-here: index
  (void)b;
#else
  mbarrier_arrive(bars, 0u);
  mbarrier_wait(bars, 0u, 0u);
#endif
  out[unit_pos()] = 1u;
}

int main() { (void)&kernel; }
