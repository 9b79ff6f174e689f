// The machinery of lower_tiles (passes/tile/lower_tiles.cpp, which says what the pass does): the bit
// layouts of register tiles, a lowered tile, and the Lowerer that rewrites one kernel. Its parts
// live by concern: lowerer.cpp (emitting, shared arrays, block order, coordinates), present.cpp
// (a tile in another layout), ops.cpp (elementwise, reductions, transposes, products), cells.cpp
// (loads and stores), loops.cpp (regions, loops, shared tiles: slots, reads, copies, staged rows).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "kiln/ir/builder.h"
#include "kiln/ir/kernel.h"
#include "kiln/ir/mma.h"
#include "passes/tile/placement.h"

namespace kiln::passes::tile_lowering {

using namespace ir;
using K = OpKind;

constexpr uint32_t kLaneBits = ir::Target::kPlaneLaneBits;  // a unit's lane in its plane: its low bits

inline int log2_of(uint64_t v) {
  int b = 0;
  while ((uint64_t(1) << b) < v) ++b;
  return b;
}

// The IR's fragment layouts (kiln/ir/layout.h): a register tile's bits over units and slots.
using Target = ir::LayoutBit;
using Layout = ir::FragmentLayout;

// Row-major over `shape`, the last dimension fastest: `vec` consecutive elements of a row in one
// unit's first slots (one vector access), then the lanes, then the planes, then the unit's further
// slots. Units past the tile's elements repeat it (their bits name nothing).
Layout blocked(const Type& t, uint32_t units, int vec);

// A lowered register tile.
struct Tiled {
  Type type;
  bool splat = false;  // every element is slots[0] (a constant tile)
  Layout layout;
  std::vector<Value> slots;
  // A widening (tile.broadcast) not yet placed: it takes the layout its user wants.
  std::shared_ptr<Tiled> widen_of;
  // A factor a pipelined loop copied into shared memory (rows `pitch` elements apart, from element
  // `offset` of `array`): mma reads it there; anything else reads it into registers. `columns`: what
  // is stored is the tile's transpose (element (r, c) at c * pitch + r), as when a transposed view
  // of a loaded tile is the factor.
  struct Staged {
    Value array;
    Value offset;
    uint32_t pitch;
    bool columns = false;
    int vec = 1;  // the loaded view's vector width: a load of it would have been blocked(.., vec)
  };
  std::optional<Staged> staged;
  // A loop's guess: the layout it carries a tile in whose initial value was a constant, before the
  // body said otherwise. An elementwise op with an operand of a layout not guessed takes that one.
  bool guessed = false;
};

// Whether a tile's values sit in its layout's slots (not a constant, a pending widening, or a
// factor staged in shared memory).
inline bool placed(const Tiled& t) { return !t.splat && !t.widen_of && !t.staged; }

class Lowerer {
 public:
  Lowerer(Kernel& k, uint32_t units) : k_(k), b_(k), units_(units), unit_bits_(log2_of(units)) {}

  void run();
  // The layout each register tile of the kernel was placed in (by its value), after run(): what
  // assign_layouts writes into the types.
  std::unordered_map<Value, Layout> placed_layouts() const;

 private:
  // ---- emitting ----------------------------------------------------------------------------

  static Type u32() { return Type::scalar_of(Scalar::U32); }

  Value emit(OpKind kind, std::initializer_list<Value> operands, std::vector<Attr> attrs = {},
             Type stated = Type::none());
  Value emit_span(OpKind kind, std::span<const Value> operands, std::vector<Attr> attrs = {},
                  Type stated = Type::none());
  Value constant(Scalar s, double v);
  Value c32(uint64_t v) { return b_.const_int(Scalar::U32, int64_t(v)); }
  Value add(Value a, Value b) { return emit(K::Add, {a, b}); }
  Value mul(Value a, Value b) { return emit(K::Mul, {a, b}); }
  Value as_u32(Value v);

  // Scratch shared memory, one array per element type, shared by every layout change and
  // reduction (each use is fenced by barriers, so they can reuse it).
  struct Scratch {
    Value array;
    uint32_t length = 0;
    // The rings whose loops had ended when this array was first used: it may share their bytes.
    std::vector<Value> after_rings;
  };
  // A shared array of its own (a pipeline's ring), not shared with other uses while its loop runs.
  struct Owned {
    Scalar scalar;
    Value array;
    uint32_t length;
    bool top_level = false;  // its loop stands in the kernel's body, so it runs once
    bool ended = false;      // that loop is lowered, and the copies into it waited for
    bool declared = false;   // a shared.alloc of the kernel's own (a ring pipeline_loops made)
  };
  Value own_shared(Scalar s, uint64_t length);
  Value scratch(Scalar s, uint64_t length);
  std::unordered_map<Value, int64_t> plan_overlays() const;
  void block_positions();
  // Triton's default group height; 4 and 8 measured alike on the H200 (docs/perf.md).
  static constexpr uint32_t kBlockGroupRows = 8;
  static uint32_t group_rows(const Region& r);

  // ---- coordinates --------------------------------------------------------------------------

  Value unit_coord(const Layout& l, int dim);
  static uint32_t slot_coord(const Layout& l, size_t slot, int dim);
  Value owner(const Layout& l);
  Value both(Value a, Value b);

  // ---- presenting a tile in a layout --------------------------------------------------------

  static bool free_widen(const Layout& from, const Layout& want, std::vector<size_t>& slot_of);
  Tiled in_slots(const Tiled& t);
  Layout loaded_layout(const Type& t, const Tiled::Staged& st) const;
  std::vector<Value> present(const Tiled& t, const Layout& want);
  std::vector<Value> present_widened(const Tiled& src, const Layout& want);
  std::vector<Value> relayout(const Tiled& t, const Layout& want);
  std::vector<Value> read_staged(const Tiled::Staged& st, const Layout& want);
  static std::array<uint32_t, 4> row_major(const Type& t);
  static std::pair<std::array<uint32_t, 4>, uint64_t> row_major_padded(const Type& t);
  Value unit_linear(const Layout& l, const std::array<uint32_t, 4>& stride, std::optional<Type> within = std::nullopt);
  static uint32_t slot_linear(const Layout& l, size_t slot, const std::array<uint32_t, 4>& stride);

  // ---- the ops ------------------------------------------------------------------------------

  Tiled& tile(Value v);
  // The fragment layout a register tile's type names (assign_layouts wrote it), over the cube's
  // units; none when it names none.
  std::optional<Layout> named_layout(const Type& t) const;
  // The op's result: placed in the layout its type names where it names one (a value computed
  // in another is presented in it), else as computed.
  void set_result(const Op& op, Tiled r);
  std::optional<Layout> common_layout(std::span<const Value> operands);
  void elementwise(const Op& op);
  void full(const Op& op);
  void widen(const Op& op);
  void transpose(const Op& op);
  void convert_layout(const Op& op);
  Value combine(OpKind k, Value a, Value b);
  void reduce(const Op& op);
  static Layout mma_layout(const MmaInstruction& in, const Type& t, int wm, int wn);

  // Where a product runs (passes/tile/placement.h): the planes place_products wrote on it, or the
  // square split.
  using MmaPlan = passes::tile::ProductPlan;
  MmaPlan plan_mma(const Op& product) const { return passes::tile::plan_of(k_, product, units_); }
  void mma(const Op& op);
  std::vector<Value> exact_product(const std::vector<Value>& acc, const Layout& lc, Value sa, Value a_off, Value sb,
                                   Value b_off, uint32_t lda, uint32_t ldb, uint32_t kk, Scalar cs, bool b_columns);
  Value stage(const Tiled& t0, uint64_t at, uint32_t pitch, bool first = false);
  void write_rows(const Tiled& t0, Value buf, Value at, uint32_t pitch);

  // ---- cells --------------------------------------------------------------------------------

  struct CellAccess {
    Value array;
    int vec;
    std::vector<int64_t> extent, tile, along;
    Pad pad = Pad::zero;
  };
  CellAccess cell_access(Value view);
  Value extent_of(const CellAccess& c, size_t d);
  static double pad_value(Pad pad);

  // Element index of each slot and the mask (kNoValue: always in range) of each vector chunk.
  struct Addressing {
    std::vector<Value> chunk_index;  // in vectors of the array's width
    std::vector<Value> chunk_mask;
  };
  Addressing address(const CellAccess& c, const Layout& l, std::span<const Value> cell,
                     std::span<const Value> sub_offset);
  std::vector<Value> cell_indices(const Op& op, const CellAccess& c);
  void load_cell(const Op& op);
  void store_cell(const Op& op);
  std::vector<Value> pointer_index(const Op& op, const Type& t, const Layout& l, Value offset);
  struct ExtentBounds {
    std::vector<Value> unit, bound;
  };
  ExtentBounds extent_bounds(const Layout& l, std::span<const Value> extent);
  Value extent_mask(const Layout& l, const ExtentBounds& b, size_t slot);
  void write_elements(OpKind kind, Value array, const Layout& l, const std::vector<Value>& idx,
                      const std::vector<Value>& values, std::span<const Value> extent);
  void pointer_load(const Op& op);
  void pointer_store(const Op& op);
  void scatter(const Op& op);

  // ---- regions and control flow -------------------------------------------------------------

  static bool is_tile_type(const Type& t) { return t.is_tile(); }

  void region(const Region& r);
  void one(const Op& op);
  void copy(const Op& op);

  // ---- shared tiles (passes/tile/pipeline_loops writes them) -----------------------------------

  void unswizzled(const TileLayout& l, const char* op) const;
  void slot(const Op& op);
  void read(const Op& op);
  void copy_cell(const Op& op);
  void stage_rows(const Op& op);

  // ---- loops ----------------------------------------------------------------------------------

  void lower_for(const Op& op);

  // The layouts a loop carries its tiles in: each yielded tile's own, found by lowering the body
  // once with a guess (the init's layout, or a blocked one for a constant) and again when the
  // yield disagrees; a value that still disagrees is converted at the yield.
  std::vector<std::optional<Layout>> trial_yield_layouts(const Op& op, const std::vector<std::optional<Layout>>& layout,
                                                         const std::vector<bool>& guessed);
  void pass_on(const Op& op);
  Kernel& k_;
  Builder b_;
  uint32_t units_;
  int unit_bits_;
  Value unit_ = kNoValue;
  std::array<Value, 3> block_pos_{kNoValue, kNoValue, kNoValue};
  std::unordered_map<Value, Tiled> tiles_;
  std::unordered_map<Value, const Op*> views_;
  std::map<Scalar, Scratch> scratch_;
  std::vector<Owned> own_;
  std::vector<std::vector<std::optional<Layout>>> loop_layouts_;
  bool trial_ = false;
};

// The layout each register tile of `k` takes when lower_tiles lowers it (the lowering's own choices,
// made on this copy): assign_layouts writes them into the types.
std::unordered_map<Value, Layout> lowered_layouts(Kernel k);

}  // namespace kiln::passes::tile_lowering
