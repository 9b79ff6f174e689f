// How a pipelined loop's copies into its shared ring are issued and waited for (pipeline_loops).
// The loop's shape does not depend on it: copies for iteration i + S - 1 start while iteration i
// computes, the iteration waits for its own and passes a barrier before reading its slot. A kind
// says what a copy is and what waiting means:
//   - AsyncCopyRing (CUDA sm_80+): cp.async copies (tile.copy_cell {async}), committed as one
//     group an iteration, waited for with S - 2 groups still in flight (copy.async.wait);
//   - PlainRing (every other target, the CPU's included): loads and stores that are done when
//     issued, so nothing to commit or wait for.
// Hopper's ring (bulk tensor copies arriving on an mbarrier, waited for by phase) is a third kind.
#pragma once

#include <cstdint>
#include <string_view>

#include "kiln/ir/builder.h"
#include "kiln/ir/target.h"

namespace kiln::passes::tile {

class RingKind {
 public:
  virtual ~RingKind() = default;
  virtual std::string_view name() const = 0;
  // Whether copies stay in flight after they are issued (tile.copy_cell's async flag).
  virtual bool async() const = 0;
  // After one iteration's copies: they form one group.
  virtual void commit(ir::Builder& b) const = 0;
  // Until at most `pending` of the latest groups are still in flight.
  virtual void wait(ir::Builder& b, int64_t pending) const = 0;
};

// The kind a loop of a kernel for `target` uses.
const RingKind& ring_kind_for(const ir::Target& target);

}  // namespace kiln::passes::tile
