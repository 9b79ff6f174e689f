// kiln::Mbarrier: the element type of a shared array of barriers (Hopper's mbarrier object: eight
// bytes of shared memory that count arrivals and bytes in flight, and flip a phase when both are
// done). It is never a value: only the mbarrier ops (kiln/dsl/barrier.h) reach one; a plain load,
// store, atomic or cast of it is refused, and it lives in shared memory alone.
#pragma once

#include <cstdint>

namespace kiln {

struct Mbarrier {
  uint64_t word;  // what the backend keeps in it (the CPU's encoding: src/backends/cpu/barrier.cpp)
};
static_assert(sizeof(Mbarrier) == 8);

}  // namespace kiln
