// The row ops' kernel for long strided rows, read once from memory: softmax over the last dim of
// x.transpose() (x contiguous 32768 x 4096: 4096 rows of 32768 elements, each 16 KiB from the
// next) as a column softmax of x. A group is 32 neighbouring rows (32 columns of x: a plane reads
// 32 consecutive elements, a 128-byte line for f32), cut along the row into chunks of `chunk`
// elements. Two kinds of work item, a cube each:
//   stats (g, c): reads chunk c of group g and publishes the chunk's partial statistics per row
//     (RowStats), then counts itself in work[1 + g]; the group's last stats item folds the
//     chunks' partials in a fixed order into the rows' statistics, publishes them and counts once
//     more;
//   output (g, c): waits for that last count, reads the rows' statistics, reads chunk c again and
//     writes it, through a shared tile when the output's rows are contiguous.
// The second read finds the chunk in L2 when it follows the first closely: a group's output items
// come `lag` groups of stats items after its own (enough for the group to be done by then, few
// enough that its chunks are still in L2), so memory sees one read and one write, where a cube
// holding whole rows (rows_tiled.cpp) must read twice.
//
// The held kernel (s.held, decision 030) reads a chunk once and keeps it (in registers, and for
// softmax past 64 elements a unit in shared memory): see its branch below.
//
// Waiting is safe because a cube takes its item from an atomic counter (work[0]), and items are
// handed out so that an output item comes after every stats item of its group: stats(0 .. L-1),
// then stats(L), output(0), stats(L + 1), output(1), ..., then the last L groups' output items.
// An output item waits only for stats items taken before it, by cubes that are running (they took
// theirs) and wait for nothing. No cube waits for one that may not have started, on a GPU of any
// size, or on the CPU backend, whose threads run cubes to the end in the order they take them.
#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "kiln/dsl/trace.h"
#include "tensor/kernels.h"
#include "tensor/row_spec.h"
#include "tensor/row_stats.h"

namespace kiln::tensor {

namespace {

using dsl::Tracer;
using dsl::ValueRef;
using K = ir::OpKind;

constexpr uint32_t kPlane = ir::Target::kPlaneWidth;
// Held: the elements a unit writes a span (through the shared tile: 32 x (8 planes + 1) a cube).
constexpr uint32_t kHeldStep = 8;
// Held softmax: the elements a unit keeps in registers; past them (held 1024), in shared memory.
constexpr uint32_t kHeldInRegisters = 64;
// The partials a plane has in flight when a cube folds its row's chunks.
constexpr uint32_t kFoldLoads = 8;

}  // namespace

ir::Kernel record_split_rows(const RowSpec& s) {
  const DType acc = ir::compute_scalar(s.dtype);
  ir::Kernel k;
  k.name = std::string("tensor_") + name_of(s.op) + (s.held ? "_held" : "_split");
  // Two cubes an SM are what the held softmax's shared part is sized for (86 KiB a cube of
  // held 1024). With its copies in flight beside the register loads, ptxas would otherwise
  // take 220 registers a unit, one cube's worth: holding it to two cubes' 128 spills about
  // 28 values a unit.
  if (s.async) k.facts.cubes_per_processor = 2;
  Tracer t(k);
  const int rank = s.outer_rank + 1, tdim = s.outer_rank - 1;  // tdim: the group's dim
  const ir::Type elem = ir::Type::scalar_of(s.dtype);
  const RowParams params = declare_row_params(t, s, rank);
  const ValueRef &in = params.in, &out = params.out, &cols = params.cols;
  ValueRef chunk = t.param("chunk", ir::Type::scalar_of(ir::Scalar::U32));
  ValueRef chunks = t.param("chunks", ir::Type::scalar_of(ir::Scalar::U32));
  ValueRef lag = t.param("lag", ir::Type::scalar_of(ir::Scalar::U32));
  ValueRef work = t.param("work", ir::Type::tensor(ir::Type::scalar_of(ir::Scalar::U32), 1, ir::Access::ReadWrite));
  ValueRef partials = t.param("partials", ir::Type::tensor(ir::Type::scalar_of(acc), 1, ir::Access::ReadWrite));

  auto u32 = [&](int64_t v) { return constant(t, DType::U32, double(v)); };
  auto bin = [&](K kind, const ValueRef& a, const ValueRef& b) { return t.binary(kind, a, b); };
  auto add = [&](const ValueRef& a, const ValueRef& b) { return bin(K::Add, a, b); };
  auto sub = [&](const ValueRef& a, const ValueRef& b) { return bin(K::Sub, a, b); };
  auto mul = [&](const ValueRef& a, const ValueRef& b) { return bin(K::Mul, a, b); };
  auto div = [&](const ValueRef& a, const ValueRef& b) { return bin(K::Div, a, b); };
  auto eq = [&](const ValueRef& a, const ValueRef& b) { return bin(K::Eq, a, b); };
  auto lt = [&](const ValueRef& a, const ValueRef& b) { return bin(K::Lt, a, b); };
  auto meta = [&](K kind, const ValueRef& x, int d) { return t.tensor_meta(kind, x, d); };

  // kDepth: loads a unit has in flight, a stats item's unroll and an output item's elements a step.
  const uint32_t units = s.units, planes = units / kPlane, kDepth = uint32_t(s.depth);
  ValueRef unit = t.builtin(K::UnitPos, -1);
  ValueRef lane = bin(K::Rem, unit, u32(kPlane)), plane = div(unit, u32(kPlane));
  ValueRef first_unit = eq(unit, u32(0));

  // Unit 0 does an atomic on work[at] and the cube reads its result from shared memory. `release`:
  // unit 0 fences first, so that what the cube wrote before the barrier that precedes this is seen
  // before the count: the barrier orders the writers' stores before unit 0's fence, which is
  // cumulative, so the writers need no fence of their own (a grid barrier works the same way).
  ValueRef said = t.alloc(K::SharedAlloc, ir::Type::scalar_of(ir::Scalar::U32), 1);
  auto atomic_for_cube = [&](const ValueRef& at, bool release) {
    size_t one = t.begin_if(first_unit);
    if (release) t.sync(K::FenceDevice);
    t.store(said, u32(0), t.atomic(K::AtomicAdd, work, at, u32(1)));
    t.end_then(one);
    t.sync(K::SyncCube);
    ValueRef v = t.load(said, u32(0));
    t.sync(K::SyncCube);  // `said` is written again by the next one
    return v;
  };
  ValueRef item = atomic_for_cube(u32(0), false);

  // Held (decision 030): item i is chunk i % chunks of group i / chunks. Split: block b of
  // `chunks` items, L = min(lag, G): b < L is stats(b); past them, q = b - L: while q < 2 (G - L),
  // an even q is stats(L + q / 2) and an odd one output(q / 2); then output(q - G + L).
  ValueRef b = div(item, chunks), c = bin(K::Rem, item, chunks);
  ValueRef groups, g, is_output;
  if (s.held) {
    groups = div(t.builtin(K::CubeCount, -1), chunks);
    g = b;
  } else {
    groups = div(t.builtin(K::CubeCount, -1), mul(chunks, u32(2)));
    ValueRef early_count = bin(K::Min, lag, groups);
    ValueRef early = lt(b, early_count);
    ValueRef q = sub(b, early_count);  // wraps where early (not used there)
    ValueRef mid = lt(q, mul(sub(groups, early_count), u32(2)));
    ValueRef odd = eq(bin(K::And, q, u32(1)), u32(1));
    is_output = bin(K::And, t.unary(K::Not, early), bin(K::Or, t.unary(K::Not, mid), odd));
    ValueRef half = div(q, u32(2));
    g = t.select(early, b,
                 t.select(mid, t.select(odd, half, add(early_count, half)), sub(q, sub(groups, early_count))));
  }

  // The group's rows: group `g % per_pick` of the group dim, the other outer dims from what is left.
  ValueRef len = meta(K::TensorShape, in, tdim);
  ValueRef per_pick = div(add(len, u32(kPlane - 1)), u32(kPlane));
  std::vector<ValueRef> outer = coordinates(t, div(g, per_pick), in, 0, tdim);
  ValueRef first_row = mul(bin(K::Rem, g, per_pick), u32(kPlane));
  ValueRef row = add(first_row, lane);
  // A lane past the dim's end reads the last row (in bounds) and writes nothing.
  ValueRef read_row = bin(K::Min, row, sub(len, u32(1)));
  ValueRef in_base = add(offset(t, in, outer, 0, ValueRef{}), mul(read_row, meta(K::TensorStride, in, tdim)));
  ValueRef in_step = meta(K::TensorStride, in, rank - 1);
  auto read_at = [&](const ValueRef& index) {
    ValueRef x = t.load(in, index);
    return x.type.scalar == acc ? x : t.cast(x, acc);
  };
  auto read = [&](const ValueRef& j) { return read_at(add(in_base, mul(j, in_step))); };
  ValueRef begin = mul(c, chunk), end = bin(K::Min, cols, add(begin, chunk));  // the chunk's elements

  RowStats stats(t, s.op, acc);
  const int n = stats.count();
  // partials: chunk cc's statistics of row `lane` at ((g * chunks + cc) * 32 + lane) * n; past all
  // chunks' (groups * chunks * 32 * n), the rows' statistics at (g * 32 + lane) * n.
  auto partial_at = [&](const ValueRef& cc, int kk) {
    return add(mul(add(mul(add(mul(g, chunks), cc), u32(kPlane)), lane), u32(n)), u32(kk));
  };
  auto row_at = [&](int kk) {
    ValueRef all = mul(mul(mul(groups, chunks), u32(kPlane)), u32(n));
    return add(all, add(mul(add(mul(g, u32(kPlane)), lane), u32(n)), u32(kk)));
  };
  ValueRef count_at = add(g, u32(1));        // work[1 + g]: g's stats items done, then one
  ValueRef published = add(chunks, u32(1));  // more once the rows' statistics are out
  // The plane-0 units publish `v` (n values a row) at `at(kk)`; a barrier and unit 0's fence
  // come before the count that follows.
  auto publish = [&](const RowStats::Values& v, const std::function<ValueRef(int)>& at) {
    size_t publisher = t.begin_if(lt(unit, u32(kPlane)));
    for (int kk = 0; kk < n; ++kk) t.store(partials, at(kk), v[size_t(kk)]);
    t.end_then(publisher);
  };

  // Unit 0 waits until work[1 + g] reaches `count`; then the cube may read what the count stands
  // for: unit 0's fence orders the count before what the cube reads after the barrier.
  auto wait_until = [&](const ValueRef& count) {
    t.begin_while();
    t.while_condition(lt(t.atomic(K::AtomicAdd, work, count_at, u32(0)), count));
    t.end_while();
    t.sync(K::FenceDevice);
  };
  auto wait_for = [&](const ValueRef& count) {
    size_t waiter = t.begin_if(first_unit);
    wait_until(count);
    t.end_then(waiter);
    t.sync(K::SyncCube);
  };
  // Every chunk's partial of row `lane` folded: plane p folds chunks p, p + planes, ..., then the
  // planes fold in plane order. A fixed order (not the chunks' own), so every run and every cube
  // that folds them gets the same bits. A step loads kFoldLoads of a plane's partials before it
  // folds any: a cube waits on this, every partial an L2 round trip, so they go out together (one
  // load a step made the fold a chain of round trips, longer than the cube's own reads), and
  // folds them in a tree (fold_tree). A load past the last chunk reads the last one and counts as
  // an empty partial.
  auto fold_chunks = [&] {
    RowStats::Values folded = stats.declare();
    ValueRef base = t.begin_for(plane, chunks, u32(planes * kFoldLoads), dsl::LoopAttrs{});
    std::vector<ValueRef> present;
    std::vector<RowStats::Values> parts;
    for (uint32_t k = 0; k < kFoldLoads; ++k) {
      ValueRef cc = add(base, u32(k * planes));
      present.push_back(lt(cc, chunks));
      ValueRef at = bin(K::Min, cc, sub(chunks, u32(1)));
      parts.emplace_back();
      for (int kk = 0; kk < n; ++kk) parts.back().push_back(t.load(partials, partial_at(at, kk)));
    }
    const RowStats::Values empty = stats.empty();
    for (uint32_t k = 0; k < kFoldLoads; ++k) {
      for (int kk = 0; kk < n; ++kk)
        parts[k][size_t(kk)] = t.select(present[k], parts[k][size_t(kk)], empty[size_t(kk)]);
    }
    stats.store(folded,
                stats.combine(stats.load(folded), stats.fold_tree(kFoldLoads, [&](uint32_t k) { return parts[k]; })));
    t.end_for();
    return stats.fold_planes(stats.load(folded), planes, kPlane, plane, lane, lane, true);
  };
  auto stored = [&](ValueRef y) { return y.type.scalar == s.dtype ? y : t.cast(y, s.dtype); };

  // Writing: a span is ys.size() elements of the row a plane, ys[d] unit (lane, plane)'s element
  // js[d] = first_col + d * planes + plane of row `lane`. Every unit writes every span (the shared
  // tile's barriers need them all). `half`: the half of a two-span tile this span goes through
  // (held: spans alternate halves, so a unit that fills a half again has passed the barrier of
  // the span between, which every unit reaches after its reads of that half: one barrier a span),
  // or -1: a one-span tile, with a second barrier before it is filled again.
  const uint32_t span_values = s.held ? std::min(kDepth, kHeldStep) : kDepth;
  ValueRef out_outer = offset(t, out, outer, 0, ValueRef{});
  ValueRef out_row = meta(K::TensorStride, out, tdim), out_step = meta(K::TensorStride, out, rank - 1);
  // A row of the shared tile, one element past the span: a plane's stores (32 rows, one column)
  // fall in 32 banks.
  const uint32_t pitch = span_values * planes + 1;
  ValueRef tile_mem;
  const uint32_t halves = s.held ? 2 : 1;
  if (s.transpose) tile_mem = t.alloc(K::SharedAlloc, elem, int64_t(halves) * kPlane * pitch);
  auto in_chunk = [&](const ValueRef& j) { return bin(K::And, bin(K::Ge, j, begin), lt(j, end)); };
  auto write_span = [&](const ValueRef& first_col, const std::vector<ValueRef>& js, const std::vector<ValueRef>& ys,
                        int half) {
    const uint32_t count = uint32_t(ys.size()), span = count * planes;
    if (s.transpose) {
      // Through the shared tile: unit (lane, plane) puts its values at [lane][d * planes + plane];
      // then consecutive units write consecutive elements of one output row: unit u takes element
      // e = u + d * units of the span, d < count, at row e / span and column e % span. Where units
      // is a multiple of span (the kernels' spans of 8 values: 64 elements a row, 4 rows of 256
      // units a pass), a unit's column, and its places in the tile and in the output, are found
      // once a span; a pass further is a constant further in the tile and out_row rows further
      // in the output.
      const uint32_t base = uint32_t(std::max(half, 0)) * kPlane * pitch;
      for (uint32_t d = 0; d < count; ++d)
        t.store(tile_mem, add(mul(lane, u32(pitch)), add(u32(base + d * planes), plane)), ys[d]);
      t.sync(K::SyncCube);
      ValueRef rows_left = sub(len, first_row);
      auto write = [&](const ValueRef& wr, const ValueRef& col_inside, const ValueRef& from, const ValueRef& at) {
        size_t inside = t.begin_if(bin(K::And, lt(wr, rows_left), col_inside));
        t.store(out, at, t.load(tile_mem, from));
        t.end_then(inside);
      };
      auto at_of = [&](const ValueRef& wr, const ValueRef& col) {
        return add(add(out_outer, mul(add(first_row, wr), out_row)), mul(col, out_step));
      };
      if (units % span == 0) {
        const uint32_t rows_a_pass = units / span;
        ValueRef wr = div(unit, u32(span)), wc = bin(K::Rem, unit, u32(span)), col = add(first_col, wc);
        ValueRef col_inside = in_chunk(col), at = at_of(wr, col), from = add(mul(wr, u32(pitch)), add(wc, u32(base)));
        for (uint32_t d = 0; d < count; ++d) {
          const uint32_t r = d * rows_a_pass;
          if (d == 0) write(wr, col_inside, from, at);
          else write(add(wr, u32(r)), col_inside, add(from, u32(r * pitch)), add(at, mul(u32(r), out_row)));
        }
      } else {
        for (uint32_t d = 0; d < count; ++d) {
          ValueRef e = add(unit, u32(d * units));
          ValueRef wr = div(e, u32(span)), wc = bin(K::Rem, e, u32(span)), col = add(first_col, wc);
          write(wr, in_chunk(col), add(mul(wr, u32(pitch)), add(wc, u32(base))), at_of(wr, col));
        }
      }
      if (half < 0) t.sync(K::SyncCube);
    } else {
      ValueRef row_valid = lt(row, len);
      for (uint32_t d = 0; d < count; ++d) {
        size_t inside = t.begin_if(bin(K::And, row_valid, in_chunk(js[d])));
        t.store(out, add(add(out_outer, mul(row, out_row)), mul(js[d], out_step)), ys[d]);
        t.end_then(inside);
      }
    }
  };
  if (s.held) {
    // held (g, c): unit (lane, plane) loads its kDepth elements of the chunk (chunk = kDepth *
    // planes) and keeps them; publishes the chunk's partials and counts itself; waits for the
    // group's other chunks; folds every chunk's partials; writes what it kept. Softmax keeps up
    // to kHeldInRegisters a unit in registers and the rest (held 1024) in shared memory, which
    // the other ops do not use (the host offers them no more than registers hold).
    // The last chunk's window is the row's last `chunk` elements (the host gives cols >= chunk),
    // overlapping the chunk before; a unit counts and writes only its elements from `begin` on. So
    // every element a unit loads is in the row, with no clamp an element.
    ValueRef window = bin(K::Min, begin, sub(cols, chunk));
    ValueRef skip = sub(begin, window);  // the window's elements before `begin`: the chunk before's
    ValueRef first_j = add(window, plane), first_at = add(in_base, mul(first_j, in_step));
    ValueRef step = mul(in_step, u32(planes));
    std::vector<ValueRef> js;
    for (uint32_t d = 0; d < kDepth; ++d) js.push_back(d == 0 ? first_j : add(first_j, u32(d * planes)));
    auto load_values = [&](uint32_t from, uint32_t to) {
      std::vector<ValueRef> xs;
      for (uint32_t d = from; d < to; ++d) xs.push_back(read_at(d == 0 ? first_at : add(first_at, mul(u32(d), step))));
      return xs;
    };
    // Element d is the cube's where d * planes + plane >= skip (skip is 0 but in a last chunk that
    // overlaps the one before). Softmax's other elements become -inf, which adds nothing to a sum
    // (where the maximum is finite; where it is -inf, every output of the row is NaN whatever the
    // sum), only in a cube whose skip is not 0: then no flag an element stays live, and no select
    // an element runs where none is needed. layer_norm counts its elements, so it keeps the flags.
    auto mine_at = [&](uint32_t d) { return bin(K::Ge, add(u32(d * planes), plane), skip); };
    auto mask_overlap = [&](std::vector<ValueRef>& xs, uint32_t from) {
      std::vector<ValueRef> vars;
      for (size_t i = 0; i < xs.size(); ++i) {
        vars.push_back(t.var_decl(ir::Type::scalar_of(acc)));
        t.var_store(vars[i], xs[i]);
      }
      size_t overlaps = t.begin_if(lt(u32(0), skip));
      for (size_t i = 0; i < xs.size(); ++i) {
        t.var_store(vars[i], t.select(mine_at(from + uint32_t(i)), t.var_load(vars[i]), constant(t, acc, -INFINITY)));
      }
      t.end_then(overlaps);
      for (size_t i = 0; i < xs.size(); ++i) xs[i] = t.var_load(vars[i]);
    };
    // After the partials: unit 0 counts the chunk (a release, as atomic_for_cube's) and, unless it
    // counted the group's last one, waits for the others'; then one barrier, and every chunk's
    // partials folded into the rows' statistics.
    auto publish_and_fold = [&](const RowStats::Values& mine) {
      publish(stats.fold_planes(mine, planes, kPlane, plane, lane, lane, true),
              [&](int kk) { return partial_at(c, kk); });
      t.sync(K::SyncCube);
      size_t counter = t.begin_if(first_unit);
      t.sync(K::FenceDevice);
      ValueRef before = t.atomic(K::AtomicAdd, work, count_at, u32(1));
      size_t others = t.begin_if(lt(add(before, u32(1)), chunks));
      wait_until(chunks);
      t.end_then(others);
      t.begin_else(others);
      t.sync(K::FenceDevice);  // the counts before the partials they stand for
      t.end_else(others);
      t.end_then(counter);
      t.sync(K::SyncCube);
      return fold_chunks();
    };
    auto write_spans = [&](const std::function<std::vector<ValueRef>(uint32_t, uint32_t)>& outputs) {
      for (uint32_t first = 0; first < kDepth; first += span_values) {
        const uint32_t count = std::min(span_values, kDepth - first);
        std::vector<ValueRef> span_js(js.begin() + first, js.begin() + first + count), ys;
        for (const ValueRef& y : outputs(first, first + count)) ys.push_back(stored(y));
        write_span(add(window, u32(first * planes)), span_js, ys, int(first / span_values % 2));
      }
    };
    if (s.op == RowOp::Softmax) {
      // Elements d < in_shared wait in shared memory at d * units + unit (consecutive units,
      // consecutive banks), loaded and stored before the ones kept in registers are loaded, so
      // that no more than a register's share is in flight at once.
      const uint32_t in_registers = kHeldInRegisters;
      const uint32_t in_shared = kDepth > in_registers ? kDepth - in_registers : 0;
      ValueRef hold;
      if (in_shared > 0) hold = t.alloc(K::SharedAlloc, ir::Type::scalar_of(acc), int64_t(in_shared) * units);
      auto hold_at = [&](uint32_t d) { return add(unit, u32(d * units)); };
      ValueRef m_parked;
      if (s.async && in_shared > 0) {
        // The shared half as copies (s.async: f32, which needs no conversion on the way), then
        // the register half's loads: both in flight at once, the copies holding no register.
        for (uint32_t d = 0; d < in_shared; ++d) {
          t.record(K::CopyAsync, {{hold, hold_at(d), in, d == 0 ? first_at : add(first_at, mul(u32(d), step))}},
                   ir::Type::none());
        }
        t.record(K::CopyAsyncCommit, {}, ir::Type::none());
      } else {
        std::vector<ValueRef> parked = load_values(0, in_shared);
        mask_overlap(parked, 0);
        for (uint32_t d = 0; d < in_shared; ++d) t.store(hold, hold_at(d), parked[d]);
        if (in_shared > 0) m_parked = stats.maximum(parked);  // before they die
        // No load moves above a barrier: without it, the compiler issues the registers' loads
        // before the shared ones land, with both in flight (220 registers a unit, one cube an SM).
        if (in_shared > 0) t.sync(K::SyncCube);
      }
      std::vector<ValueRef> xs = load_values(in_shared, kDepth);
      mask_overlap(xs, in_shared);
      if (s.async && in_shared > 0) {
        // A unit reads only the elements it copied: its own wait shows them to it, no barrier.
        // The overlap's elements become -inf in place, in the one cube of a row that has them.
        t.record(K::CopyAsyncWait, {}, ir::Type::none(), {ir::attr<ir::AttrKey::Pending>(0)});
        size_t overlaps = t.begin_if(lt(u32(0), skip));
        for (uint32_t d = 0; d < in_shared; ++d) {
          t.store(hold, hold_at(d), t.select(mine_at(d), t.load(hold, hold_at(d)), constant(t, acc, -INFINITY)));
        }
        t.end_then(overlaps);
        std::vector<ValueRef> parked;
        for (uint32_t d = 0; d < in_shared; ++d) parked.push_back(t.load(hold, hold_at(d)));
        m_parked = stats.maximum(parked);
      }
      ValueRef m = stats.maximum(xs);
      if (in_shared > 0) m = bin(K::Max, m_parked, m);
      // exp(x - m) for the output (one exp an element), in place of x.
      const RowStats::HeldShift shift = stats.held_shift(m);
      std::vector<ValueRef> es, kept;
      for (uint32_t d = 0; d < in_shared; ++d) {
        ValueRef x = t.load(hold, hold_at(d));
        es.push_back(stats.held_exp(shift, x));
        t.store(hold, hold_at(d), stats.held_keep(shift, es.back(), x));
      }
      for (const ValueRef& x : xs) {
        es.push_back(stats.held_exp(shift, x));
        kept.push_back(stats.held_keep(shift, es.back(), x));
      }
      RowStats::Values row_stats = publish_and_fold({m, stats.total(es)});
      write_spans([&](uint32_t from, uint32_t to) {
        std::vector<ValueRef> span_kept;
        for (uint32_t d = from; d < to; ++d)
          span_kept.push_back(d < in_shared ? t.load(hold, hold_at(d)) : kept[d - in_shared]);
        return stats.held_outputs(shift, row_stats, span_kept);
      });
    } else {
      std::vector<ValueRef> xs = load_values(0, kDepth), valid;
      if (s.op == RowOp::LayerNorm) {
        for (uint32_t d = 0; d < kDepth; ++d) valid.push_back(mine_at(d));
      } else {
        mask_overlap(xs, 0);
      }
      auto output =
          stats.output(publish_and_fold(stats.of_values(xs, valid)), cols, params.eps, params.weight, params.bias);
      write_spans([&](uint32_t from, uint32_t to) {
        std::vector<ValueRef> ys;
        for (uint32_t d = from; d < to; ++d) ys.push_back(output(xs[d], js[d]));
        return ys;
      });
    }
    t.finish();
    return k;
  }

  ValueRef last_col = sub(end, u32(1));
  size_t kind = t.begin_if(t.unary(K::Not, is_output));
  {
    // stats: plane p reads the chunk's elements begin + p, begin + p + planes, ...
    RowStats::Values running = stats.declare();
    dsl::LoopAttrs attrs;
    attrs.unroll = kDepth;  // loads of several elements in flight (none depends on the statistics)
    ValueRef j = t.begin_for(add(begin, plane), end, u32(planes), attrs);
    stats.add(running, read(j));
    t.end_for();
    RowStats::Values mine = stats.fold_planes(stats.load(running), planes, kPlane, plane, lane, lane);
    publish(mine, [&](int kk) { return partial_at(c, kk); });
    t.sync(K::SyncCube);
    ValueRef before = atomic_for_cube(count_at, true);
    // The group's last stats item: every chunk's partial is out; it folds them into the rows'
    // statistics once, for the group's output items.
    size_t last = t.begin_if(eq(before, sub(chunks, u32(1))));
    t.sync(K::FenceDevice);  // the count before the partials it stands for
    publish(fold_chunks(), row_at);
    t.sync(K::SyncCube);
    size_t counter = t.begin_if(first_unit);
    t.sync(K::FenceDevice);  // the statistics, written by plane 0 before the barrier, before the count
    t.atomic(K::AtomicAdd, work, count_at, u32(1));
    t.end_then(counter);
    t.end_then(last);
  }
  t.end_then(kind);
  t.begin_else(kind);
  {
    // output: wait for the rows' statistics, whose stats items were all taken before this one.
    wait_for(published);
    RowStats::Values row_stats;
    for (int kk = 0; kk < n; ++kk) row_stats.push_back(t.load(partials, row_at(kk)));
    auto output = stats.output(row_stats, cols, params.eps, params.weight, params.bias);
    // A step takes kDepth elements of the row a plane (span a cube), all loaded before any is written.
    const uint32_t span = kDepth * planes;
    ValueRef steps = div(add(sub(end, begin), u32(span - 1)), u32(span));
    ValueRef i = t.begin_for(u32(0), steps, u32(1), dsl::LoopAttrs{});
    ValueRef first_col = add(begin, mul(i, u32(span)));
    std::vector<ValueRef> js, xs, ys;
    for (uint32_t d = 0; d < kDepth; ++d) {
      js.push_back(add(first_col, add(u32(d * planes), plane)));
      xs.push_back(read(bin(K::Min, js[d], last_col)));  // a plane past the chunk's end reads its last element
    }
    for (uint32_t d = 0; d < kDepth; ++d) ys.push_back(stored(output(xs[d], bin(K::Min, js[d], last_col))));
    write_span(first_col, js, ys, -1);
    t.end_for();
  }
  t.end_else(kind);
  t.finish();
  return k;
}

}  // namespace kiln::tensor
