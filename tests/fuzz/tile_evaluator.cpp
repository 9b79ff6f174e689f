// The tile family's oracle: an interpreter of recorded tile IR (tile ops, before lower_tiles),
// written from docs/tile.md and docs/ir.md. It shares no source with src/backends, src/passes or
// the tile layer's lowering: each block of the grid runs the kernel once, a tile is a whole array
// of elements, a cell is read and written by its coordinates, a reduction or a product is summed
// exactly in long double.
//
// Each element carries what the evaluator can vouch for (docs/fuzz.md's tolerance table): Exact
// bits; an Approximate value with an absolute bound (a transcendental op's result; a sum or a
// product whose order of additions can change its rounding, unless every order gives the same
// exact value); Unknown (what an approximate value decided: a compare, a cast to an integer, a
// floor; a race).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "numbers.h"
#include "tile_program.h"

namespace kiln::fuzz {

namespace {

using ir::AttrKey;
using ir::OpKind;
using ir::Scalar;

struct Elem {
  uint64_t bits = 0;
  Trust trust = Trust::Exact;
  long double bound = 0;  // for an Approximate value: how far a device's value may be
};

struct TileValue {
  Scalar s = Scalar::I32;
  std::vector<uint32_t> shape;  // empty: a scalar (or a rank-0 tile)
  std::vector<Elem> e;
};

uint64_t count(const std::vector<uint32_t>& shape) {
  uint64_t n = 1;
  for (uint32_t d : shape) n *= d;
  return n;
}

struct Failure {
  std::string kind, message;
};

// An element whose value is `x` in type s, vouched for as `t` within `bound`: where the bound
// reaches past the largest finite value, overflow may or may not happen, and nothing is vouched.
Elem make_float(Scalar s, long double x, Trust t, long double bound) {
  Elem e{round_to(s, x), t, 0};
  if (t == Trust::Approximate) {
    e.bound = bound + ulp_of(s, x);
    if (!std::isfinite(x) || std::fabs(x) + e.bound >= largest_finite(s)) e.trust = Trust::Unknown;
  }
  return e;
}

// The exponent of the lowest power of two that divides a finite nonzero x.
int quantum(long double x) {
  int e;
  const long double m = std::frexp(std::fabs(x), &e);  // x = m 2^e, m in [0.5, 1)
  const uint64_t bits = uint64_t(std::ldexp(m, 64));   // long double's 64 significand bits
  return e - 64 + std::countr_zero(bits);
}

// A sum of terms in type s whose order of additions is not the evaluator's to know: exact when every
// order gives the same value (all terms multiples of one power of two 2^q, and the sum of their
// magnitudes below 2^(precision + q), so no partial sum rounds), else approximate by the classic
// bound n x eps x sum |term|. NaNs and infinities give what any order gives, when that is one value.
Elem sum_of(Scalar s, const std::vector<long double>& terms, Trust t, long double bound) {
  // A term not vouched for (an Unknown element's bits mean nothing) leaves the sum unvouched.
  if (t == Trust::Unknown) return {0, Trust::Unknown, 0};
  bool nan = false, pos_inf = false, neg_inf = false;
  long double sum = 0, magnitude = 0;
  int q = std::numeric_limits<int>::max();
  for (long double x : terms) {
    if (std::isnan(x)) nan = true;
    else if (std::isinf(x)) (x > 0 ? pos_inf : neg_inf) = true;
    else {
      sum += x;
      magnitude += std::fabs(x);
      if (x != 0) q = std::min(q, quantum(x));
    }
  }
  if (nan || (pos_inf && neg_inf)) return {round_to(s, NAN), t, 0};
  // Partial sums in some order may pass the largest finite value where the whole does not.
  if (magnitude + bound >= largest_finite(s)) return {0, Trust::Unknown, 0};
  if (pos_inf || neg_inf) {
    return {round_to(s, pos_inf ? INFINITY : -INFINITY), t, 0};
  }
  const bool exact = magnitude == 0 || (q != std::numeric_limits<int>::max() &&
                                        std::ldexp(magnitude, -q) < std::ldexp(1.0L, precision_of(s)));
  if (exact && t == Trust::Exact) {
    Elem e{round_to(s, sum), t, 0};
    // A zero sum's sign: -0 when every term is -0, which a sum that starts from +0 (an identity
    // element) does not give; the tolerance table leaves it unvouched.
    if (sum == 0) {
      for (long double x : terms) {
        if (std::signbit(x)) e.trust = Trust::Unknown;
      }
    }
    return e;
  }
  const long double eps = std::ldexp(1.0L, 1 - precision_of(s));
  // Sums of f16 and bf16 may round at f32 or at their own precision; tensor cores may flush what
  // falls below the smallest normal: one smallest normal a term on top.
  const long double floor_per_term = smallest_normal(s);
  return make_float(s, sum, Trust::Approximate, bound + (long double)terms.size() * (eps * magnitude + floor_per_term));
}

class TileInterpreter {
 public:
  TileInterpreter(const TileCase& c, TileEvaluation& out)
      : c_(c), k_(c.program->kernel()), out_(out), writer_(c.args.size()) {
    for (size_t i = 0; i < k_.params.size(); ++i) param_of_[k_.params[i].value] = i;
  }

  void run_block(uint32_t x, uint32_t y, uint32_t z) {
    block_ = {x, y, z};
    values_.clear();
    vars_.clear();
    region(k_.body);
  }

  void finish_atomics() {
    for (auto& [at, acc] : float_sums_) {
      Elem e = sum_of(acc.s, acc.terms, acc.trust, acc.bound);
      // An f32 atomic add on CUDA flushes subnormal inputs and results to zero (docs/ir.md): each
      // term and each partial sum may lose up to one smallest normal.
      if (acc.s == Scalar::F32 && e.trust != Trust::Unknown && std::isfinite(float_value(acc.s, e.bits))) {
        const long double flush = 2 * (long double)acc.terms.size() * smallest_normal(acc.s);
        bool subnormal = std::fabs(float_value(acc.s, e.bits)) < flush;
        for (long double x : acc.terms) subnormal = subnormal || (x != 0 && std::fabs(x) < smallest_normal(acc.s));
        if (subnormal) e = {e.bits, Trust::Approximate, e.bound + flush};
      }
      put(at.first, at.second, e);
    }
  }

 private:
  struct View {
    size_t param;
    std::vector<int64_t> extent, tile, along;
    ir::Pad pad;
  };
  struct FloatSum {
    Scalar s;
    std::vector<long double> terms;
    Trust trust = Trust::Exact;
    long double bound = 0;
  };

  // ---- memory -------------------------------------------------------------------------------

  uint64_t length(size_t param) const {
    return c_.args[param].size() / size_t(ir::scalar_bytes(k_.params[param].type.scalar));
  }
  Elem get_mem(size_t param, uint64_t i) const {
    const int bytes = ir::scalar_bytes(k_.params[param].type.scalar);
    uint64_t v = 0;
    std::memcpy(&v, out_.outcome.after[param].data() + i * uint64_t(bytes), size_t(bytes));
    return {v, Trust::Exact, 0};
  }
  void put(size_t param, uint64_t i, const Elem& e) {
    const int bytes = ir::scalar_bytes(k_.params[param].type.scalar);
    std::memcpy(out_.outcome.after[param].data() + i * uint64_t(bytes), &e.bits, size_t(bytes));
    out_.trust[param][i] = e.trust;
    out_.bound[param][i] = e.bound;
  }
  // A plain store: two different writers of one element race (which lands is not ours to say),
  // unless they write the same bits.
  void store(size_t param, uint64_t i, const Elem& e, uint64_t writer) {
    if (i >= length(param)) throw Failure{"bounds.out_of_range", "a store past the end of a parameter"};
    auto [it, first] = writer_[param].emplace(i, std::make_pair(writer, e.bits));
    Elem v = e;
    if (!first && it->second.first != writer && it->second.second != e.bits) v.trust = Trust::Unknown;
    if (!first && out_.trust[param][i] == Trust::Unknown) v.trust = Trust::Unknown;
    it->second = {writer, e.bits};
    put(param, i, v);
  }
  uint64_t block_number() const { return (uint64_t(block_[2]) * c_.grid[1] + block_[1]) * c_.grid[0] + block_[0]; }

  // ---- values -------------------------------------------------------------------------------

  const TileValue& get(ir::Value v) const { return values_.at(v); }
  int64_t index(ir::Value v) const {
    const TileValue& t = get(v);
    if (t.e.front().trust != Trust::Exact)
      throw Failure{"fuzz.inexact_index", "an index the evaluator cannot vouch for"};
    return signed_value(t.s, t.e.front().bits);
  }
  TileValue scalar(Scalar s, uint64_t bits) { return {s, {}, {Elem{bits & mask_of(s), Trust::Exact, 0}}}; }

  Elem pad_of(Scalar s, ir::Pad pad) const {
    if (!ir::is_float(s)) return {0, Trust::Exact, 0};
    switch (pad) {
      case ir::Pad::zero: return {round_to(s, 0.0L), Trust::Exact, 0};
      case ir::Pad::neg_zero: return {round_to(s, -0.0L), Trust::Exact, 0};
      case ir::Pad::pos_inf: return {round_to(s, INFINITY), Trust::Exact, 0};
      case ir::Pad::neg_inf: return {round_to(s, -INFINITY), Trust::Exact, 0};
      case ir::Pad::nan: return {round_to(s, NAN), Trust::Exact, 0};
    }
    return {};
  }

  // ---- the walk -----------------------------------------------------------------------------

  void region(const ir::Region& r) {
    for (const ir::Op& op : r.ops) {
      if (op.kind == OpKind::Yield) return;
      step(op);
    }
  }

  void step(const ir::Op& op) {
    switch (op.kind) {
      case OpKind::TileBlockId:
        values_[op.result] = scalar(Scalar::I32, block_[size_t(op.get<AttrKey::Axis>())]);
        return;
      case OpKind::Const: values_[op.result] = constant(op, op.type.scalar, {}); return;
      case OpKind::TileFull: {
        std::vector<uint32_t> shape(op.type.shape.begin(), op.type.shape.begin() + op.type.rank);
        values_[op.result] = constant(op, op.type.scalar, shape);
        return;
      }
      case OpKind::TileView: {
        auto ints = [](std::span<const int64_t> s) { return std::vector<int64_t>(s.begin(), s.end()); };
        views_[op.result] = View{param_of_.at(op.operand(ir::ops::Array::array)), ints(op.get<AttrKey::Extent>()),
                                 ints(op.get<AttrKey::Tile>()), ints(op.get<AttrKey::Along>()), op.get<AttrKey::Pad>()};
        return;
      }
      case OpKind::TileLoadCell:
        values_[op.result] = load_cell(op, views_.at(op.operand(ir::ops::TileLoadCell::view)), {});
        return;
      case OpKind::TileLoadAt: {
        std::vector<int64_t> cell;
        for (ir::Value v : op.operands_from(ir::ops::TileLoadAt::cell)) cell.push_back(index(v));
        values_[op.result] = load_cell(op, views_.at(op.operand(ir::ops::TileLoadAt::view)), cell);
        return;
      }
      case OpKind::TileStoreCell: store_cell(op); return;
      case OpKind::TileStoreSub: store_sub(op); return;
      case OpKind::TileLoad: values_[op.result] = load(op); return;
      case OpKind::TileStore:
      case OpKind::TileAtomicAdd:
      case OpKind::TileAtomicMax:
      case OpKind::TileAtomicMin: store_at_offset(op); return;
      case OpKind::TileScatter:
      case OpKind::TileScatterAdd:
      case OpKind::TileScatterMax:
      case OpKind::TileScatterMin: scatter(op); return;
      case OpKind::TileBroadcast: values_[op.result] = broadcast(get(op.operand(ir::ops::TileUnary::tile)), op); return;
      case OpKind::TileReduceSum:
      case OpKind::TileReduceMax:
      case OpKind::TileReduceMin: values_[op.result] = reduce(op); return;
      case OpKind::TileTranspose: values_[op.result] = transpose(get(op.operand(ir::ops::TileUnary::tile))); return;
      case OpKind::TileMma: values_[op.result] = mma(op); return;
      case OpKind::VarDecl: vars_[op.result] = TileValue{}; return;
      case OpKind::VarStore:
        vars_[op.operand(ir::ops::VarStore::var)] = get(op.operand(ir::ops::VarStore::value));
        return;
      case OpKind::VarLoad: values_[op.result] = vars_.at(op.operand(ir::ops::VarLoad::var)); return;
      case OpKind::For: {
        const int64_t lo = index(op.operand(ir::ops::For::lower_bound));
        const int64_t hi = index(op.operand(ir::ops::For::upper_bound));
        const int64_t st = index(op.operand(ir::ops::For::step));
        if (st <= 0) throw Failure{"fuzz.runaway", "a loop whose step is not positive"};
        const ir::Region& body = op.regions.front();
        const Scalar s = get(op.operand(ir::ops::For::lower_bound)).s;
        for (int64_t i = lo; i < hi; i += st) {
          values_[body.args.front()] = scalar(s, uint64_t(i));
          region(body);
        }
        return;
      }
      default: break;
    }
    if (op.result == ir::kNoValue) throw Failure{"fuzz.unknown_op", std::string(ir::op_name(op.kind))};
    values_[op.result] = elementwise(op);
  }

  TileValue constant(const ir::Op& op, Scalar s, const std::vector<uint32_t>& shape) {
    const ir::AttrValue* a = op.attr(AttrKey::Value);
    Elem e;
    if (s == Scalar::Bool) e.bits = a->i ? 1 : 0;
    else if (ir::is_float(s))
      e.bits = round_to(s, a->tag == ir::AttrValue::Tag::Float ? (long double)a->f : (long double)a->i);
    else e.bits = uint64_t(a->tag == ir::AttrValue::Tag::Float ? int64_t(a->f) : a->i) & mask_of(s);
    return {s, shape, std::vector<Elem>(count(shape), e)};
  }

  // Element (i0, i1, ...) of a tile of `shape` at flat position `flat`.
  static std::vector<uint32_t> coords(const std::vector<uint32_t>& shape, uint64_t flat) {
    std::vector<uint32_t> c(shape.size());
    for (size_t d = shape.size(); d-- > 0;) {
      c[d] = uint32_t(flat % shape[d]);
      flat /= shape[d];
    }
    return c;
  }

  // The cell a load_cell (no indices) or load_at reads: the block's position along each grid axis,
  // the given index on a free dimension (or on every one, when one is given per dimension).
  std::vector<int64_t> cell_of(const View& v, const std::vector<int64_t>& given) const {
    std::vector<int64_t> cell(v.extent.size());
    size_t next = 0;
    for (size_t d = 0; d < cell.size(); ++d) {
      if (given.size() == cell.size()) cell[d] = given[d];
      else if (v.along[d] < 0) cell[d] = given.at(next++);
      else cell[d] = block_[size_t(v.along[d])];
    }
    return cell;
  }

  // The element of the parameter a view's coordinate names, or -1 past its extent.
  int64_t element_of(const View& v, const std::vector<int64_t>& cell, const std::vector<uint32_t>& at) const {
    int64_t flat = 0;
    for (size_t d = 0; d < at.size(); ++d) {
      const int64_t g = cell[d] * v.tile[d] + at[d];
      if (g < 0 || g >= v.extent[d]) return -1;
      flat = flat * v.extent[d] + g;
    }
    return flat;
  }

  TileValue load_cell(const ir::Op& op, const View& v, const std::vector<int64_t>& given) {
    TileValue t{op.type.scalar, std::vector<uint32_t>(v.tile.begin(), v.tile.end()), {}};
    const std::vector<int64_t> cell = cell_of(v, given);
    const uint64_t n = count(t.shape);
    t.e.resize(n);
    for (uint64_t f = 0; f < n; ++f) {
      const int64_t g = element_of(v, cell, coords(t.shape, f));
      t.e[f] = g < 0 ? pad_of(t.s, v.pad) : get_mem(v.param, uint64_t(g));
    }
    return t;
  }

  void store_cell(const ir::Op& op) {
    const View& v = views_.at(op.operand(ir::ops::TileStoreCell::view));
    const TileValue& t = get(op.operand(ir::ops::TileStoreCell::tile));
    const std::vector<int64_t> cell = cell_of(v, {});
    for (uint64_t f = 0; f < t.e.size(); ++f) {
      const int64_t g = element_of(v, cell, coords(t.shape, f));
      if (g >= 0) store(v.param, uint64_t(g), t.e[f], block_number());
    }
  }

  // Part `part` of the block's cell, the cell cut into tiles of the stored tile's shape.
  void store_sub(const ir::Op& op) {
    const View& v = views_.at(op.operand(ir::ops::TileStoreSub::view));
    const TileValue& t = get(op.operand(ir::ops::TileStoreSub::tile));
    const std::vector<int64_t> cell = cell_of(v, {});
    std::vector<int64_t> part;
    for (ir::Value p : op.operands_from(ir::ops::TileStoreSub::part)) part.push_back(index(p));
    for (uint64_t f = 0; f < t.e.size(); ++f) {
      const std::vector<uint32_t> at = coords(t.shape, f);
      int64_t flat = 0;
      bool inside = true;
      for (size_t d = 0; d < at.size(); ++d) {
        const int64_t g = cell[d] * v.tile[d] + part[d] * int64_t(t.shape[d]) + at[d];
        inside = inside && g < v.extent[d];
        flat = flat * v.extent[d] + g;
      }
      if (inside) store(v.param, uint64_t(flat), t.e[f], block_number());
    }
  }

  // Where element `at` of a tile addressed at an offset with strides lies (row-major over the
  // tile's shape without strides), and whether the extent keeps it.
  struct Place {
    int64_t element;
    bool kept;
  };
  Place place(const ir::Op& op, int64_t offset, const std::vector<uint32_t>& shape, std::span<const ir::Value> extent,
              const std::vector<uint32_t>& at) {
    std::span<const int64_t> strides = op.get<AttrKey::Strides>();
    int64_t e = offset, row_major = 1;
    bool kept = true;
    for (size_t d = shape.size(); d-- > 0;) {
      const int64_t stride = strides.empty() ? row_major : strides[d];
      row_major *= shape[d];
      e += int64_t(at[d]) * stride;
      if (!extent.empty() && int64_t(at[d]) >= index(extent[d])) kept = false;
    }
    return {e, kept};
  }

  TileValue load(const ir::Op& op) {
    const size_t param = param_of_.at(op.operand(ir::ops::TileLoad::array));
    const int64_t offset = index(op.operand(ir::ops::TileLoad::offset));
    TileValue t{op.type.scalar, std::vector<uint32_t>(op.type.shape.begin(), op.type.shape.begin() + op.type.rank), {}};
    const std::span<const ir::Value> extent = op.operands_from(ir::ops::TileLoad::extent);
    const Elem pad = pad_of(t.s, op.get<AttrKey::Pad>());
    t.e.resize(count(t.shape));
    for (uint64_t f = 0; f < t.e.size(); ++f) {
      const Place p = place(op, offset, t.shape, extent, coords(t.shape, f));
      if (!p.kept) {
        t.e[f] = pad;
        continue;
      }
      if (p.element < 0 || uint64_t(p.element) >= length(param)) {
        throw Failure{"bounds.out_of_range", "a load past the end of a parameter"};
      }
      t.e[f] = get_mem(param, uint64_t(p.element));
    }
    return t;
  }

  void store_at_offset(const ir::Op& op) {
    const size_t param = param_of_.at(op.operand(ir::ops::TileStore::array));
    const int64_t offset = index(op.operand(ir::ops::TileStore::offset));
    const TileValue& t = get(op.operand(ir::ops::TileStore::tile));
    const std::span<const ir::Value> extent = op.operands_from(ir::ops::TileStore::extent);
    for (uint64_t f = 0; f < t.e.size(); ++f) {
      const Place p = place(op, offset, t.shape, extent, coords(t.shape, f));
      if (!p.kept) continue;
      if (p.element < 0 || uint64_t(p.element) >= length(param)) {
        throw Failure{"bounds.out_of_range", "a store past the end of a parameter"};
      }
      if (op.kind == OpKind::TileStore) store(param, uint64_t(p.element), t.e[f], block_number() << 32 | f);
      else combine(op.kind, param, uint64_t(p.element), t.s, t.e[f]);
    }
  }

  void scatter(const ir::Op& op) {
    const size_t param = param_of_.at(op.operand(ir::ops::TileScatter::array));
    const TileValue& offsets = get(op.operand(ir::ops::TileScatter::offsets));
    const TileValue& t = get(op.operand(ir::ops::TileScatter::values));
    const std::span<const ir::Value> extent = op.operands_from(ir::ops::TileScatter::extent);
    for (uint64_t f = 0; f < t.e.size(); ++f) {
      const std::vector<uint32_t> at = coords(t.shape, f);
      bool kept = true;
      for (size_t d = 0; d < at.size() && !extent.empty(); ++d) kept = kept && int64_t(at[d]) < index(extent[d]);
      if (!kept) continue;
      if (offsets.e[f].trust != Trust::Exact) throw Failure{"fuzz.inexact_index", "a scatter offset not vouched for"};
      const int64_t i = signed_value(Scalar::I32, offsets.e[f].bits);
      if (i < 0 || uint64_t(i) >= length(param)) throw Failure{"bounds.out_of_range", "a scatter past the end"};
      if (op.kind == OpKind::TileScatter) {
        store(param, uint64_t(i), t.e[f], block_number() << 32 | f);
      } else {
        const OpKind k = op.kind == OpKind::TileScatterAdd   ? OpKind::TileAtomicAdd
                         : op.kind == OpKind::TileScatterMax ? OpKind::TileAtomicMax
                                                             : OpKind::TileAtomicMin;
        combine(k, param, uint64_t(i), t.s, t.e[f]);
      }
    }
  }

  // An atomic: integers combine exactly in any order; float sums are summed when the run ends.
  void combine(OpKind k, size_t param, uint64_t i, Scalar s, const Elem& v) {
    if (ir::is_float(s)) {
      auto [it, first] = float_sums_.emplace(std::make_pair(param, i), FloatSum{s, {}, Trust::Exact, 0});
      if (first) it->second.terms.push_back(float_value(s, get_mem(param, i).bits));
      it->second.terms.push_back(float_value(s, v.bits));
      it->second.trust = std::max(it->second.trust, v.trust);
      it->second.bound += v.bound;
      return;
    }
    const Elem old = get_mem(param, i);
    const int64_t a = signed_value(s, old.bits), b = signed_value(s, v.bits);
    const bool sig = ir::is_signed_int(s);
    uint64_t r;
    if (k == OpKind::TileAtomicAdd) r = (old.bits + v.bits) & mask_of(s);
    else if (k == OpKind::TileAtomicMax) r = (sig ? a < b : old.bits < v.bits) ? v.bits : old.bits;
    else r = (sig ? a < b : old.bits < v.bits) ? old.bits : v.bits;
    put(param, i, {r, std::max(out_.trust[param][i], v.trust), 0});
  }

  TileValue broadcast(const TileValue& t, const ir::Op& op) {
    std::span<const int64_t> shape = op.get<AttrKey::Shape>();
    TileValue r{t.s, std::vector<uint32_t>(shape.begin(), shape.end()), {}};
    r.e.resize(count(r.shape));
    for (uint64_t f = 0; f < r.e.size(); ++f) r.e[f] = t.e[source_of(t.shape, r.shape, f)];
    return r;
  }
  // The element of a tile of `from` (rank 0, or length 1 where it widens) that element f of a
  // tile of `to` takes.
  static uint64_t source_of(const std::vector<uint32_t>& from, const std::vector<uint32_t>& to, uint64_t f) {
    if (from.empty()) return 0;
    const std::vector<uint32_t> at = coords(to, f);
    uint64_t s = 0;
    for (size_t d = 0; d < from.size(); ++d) s = s * from[d] + (from[d] == 1 ? 0 : at[d]);
    return s;
  }

  TileValue transpose(const TileValue& t) {
    TileValue r{t.s, {t.shape[1], t.shape[0]}, std::vector<Elem>(t.e.size())};
    for (uint32_t i = 0; i < t.shape[0]; ++i) {
      for (uint32_t j = 0; j < t.shape[1]; ++j) r.e[uint64_t(j) * t.shape[0] + i] = t.e[uint64_t(i) * t.shape[1] + j];
    }
    return r;
  }

  TileValue reduce(const ir::Op& op) {
    const TileValue& t = get(op.operand(ir::ops::TileUnary::tile));
    const size_t dim = size_t(op.get<AttrKey::Dim>());
    std::vector<uint32_t> shape = t.shape;
    shape[dim] = 1;
    TileValue r{t.s, shape, std::vector<Elem>(count(shape))};
    for (uint64_t f = 0; f < r.e.size(); ++f) {
      std::vector<uint32_t> at = coords(shape, f);
      std::vector<Elem> line;
      for (uint32_t i = 0; i < t.shape[dim]; ++i) {
        at[dim] = i;
        uint64_t flat = 0;
        for (size_t d = 0; d < at.size(); ++d) flat = flat * t.shape[d] + at[d];
        line.push_back(t.e[flat]);
      }
      r.e[f] = reduce_line(op.kind, t.s, line);
    }
    if (!op.flag(AttrKey::Keepdims)) r.shape.erase(r.shape.begin() + std::ptrdiff_t(dim));
    return r;
  }

  Elem reduce_line(OpKind k, Scalar s, const std::vector<Elem>& line) {
    Trust t = Trust::Exact;
    long double bound = 0;
    for (const Elem& e : line) {
      t = std::max(t, e.trust);
      bound += e.bound;
    }
    if (t == Trust::Unknown) return {0, Trust::Unknown, 0};
    if (!ir::is_float(s)) {
      uint64_t acc = line.front().bits;
      for (size_t i = 1; i < line.size(); ++i) {
        const uint64_t v = line[i].bits;
        const bool less = ir::is_signed_int(s) ? signed_value(s, v) < signed_value(s, acc) : v < acc;
        if (k == OpKind::TileReduceSum) acc = (acc + v) & mask_of(s);
        else if (k == OpKind::TileReduceMax) acc = less ? acc : v;
        else acc = less ? v : acc;
      }
      return {acc, t, 0};
    }
    std::vector<long double> xs;
    for (const Elem& e : line) xs.push_back(float_value(s, e.bits));
    if (k == OpKind::TileReduceSum) return sum_of(s, xs, t, bound);
    // max and min skip NaNs (docs/ir.md: the other operand), NaN only when all are.
    long double best = NAN;
    long double most_bound = 0;
    for (const Elem& e : line) most_bound = std::max(most_bound, e.bound);
    for (long double x : xs) {
      if (std::isnan(x)) continue;
      if (std::isnan(best) || (k == OpKind::TileReduceMax ? x > best : x < best)) best = x;
    }
    Elem r{round_to(s, best), t, t == Trust::Approximate ? most_bound : 0};
    if (best == 0) {  // +0 and -0 tie: either may come back
      bool plus = false, minus = false;
      for (long double x : xs) {
        if (x == 0) (std::signbit(x) ? minus : plus) = true;
      }
      if (plus && minus) r.trust = Trust::Unknown;
    }
    return r;
  }

  TileValue mma(const ir::Op& op) {
    const TileValue& a = get(op.operand(ir::ops::TileMma::a));
    const TileValue& b = get(op.operand(ir::ops::TileMma::b));
    const TileValue& c = get(op.operand(ir::ops::TileMma::c));
    const uint32_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
    TileValue r{c.s, c.shape, std::vector<Elem>(c.e.size())};
    for (uint32_t i = 0; i < m; ++i) {
      for (uint32_t j = 0; j < n; ++j) {
        const Elem& acc = c.e[uint64_t(i) * n + j];
        Trust t = acc.trust;
        std::vector<long double> terms = {float_value(c.s, acc.bits)};
        for (uint32_t kk = 0; kk < k; ++kk) {
          const Elem& x = a.e[uint64_t(i) * k + kk];
          const Elem& y = b.e[uint64_t(kk) * n + j];
          t = std::max({t, x.trust, y.trust});
          terms.push_back(float_value(a.s, x.bits) * float_value(a.s, y.bits));
        }
        if (t == Trust::Unknown) {
          r.e[uint64_t(i) * n + j] = {0, Trust::Unknown, 0};
          continue;
        }
        // Products of f64 need 106 bits, past long double's 64: not exact, unless small.
        r.e[uint64_t(i) * n + j] = sum_of(c.s, terms, t, acc.bound);
      }
    }
    return r;
  }

  // ---- elementwise ------------------------------------------------------------------------

  TileValue elementwise(const ir::Op& op) {
    std::vector<const TileValue*> xs;
    std::vector<uint32_t> shape;
    for (ir::Value v : op.operands) {
      xs.push_back(&get(v));
      if (xs.back()->shape.size() > shape.size()) shape = xs.back()->shape;
    }
    const Scalar from = xs.front()->s;
    const Scalar in = op.kind == OpKind::Select ? xs[1]->s : from;
    TileValue r{op.type.scalar, shape, std::vector<Elem>(count(shape))};
    std::vector<Elem> args(xs.size());
    for (uint64_t f = 0; f < r.e.size(); ++f) {
      for (size_t i = 0; i < xs.size(); ++i) args[i] = xs[i]->e[source_of(xs[i]->shape, shape, f)];
      r.e[f] = element_op(op.kind, in, r.s, args);
    }
    return r;
  }

  static bool is_transcendental(OpKind k) {
    switch (k) {
      case OpKind::Exp:
      case OpKind::Exp2:
      case OpKind::Log:
      case OpKind::Log2:
      case OpKind::Rsqrt:
      case OpKind::Tanh:
      case OpKind::Erf:
      case OpKind::Sin:
      case OpKind::Cos:
      case OpKind::Pow: return true;
      default: return false;
    }
  }

  Elem element_op(OpKind k, Scalar s, Scalar to, const std::vector<Elem>& a) {
    if (k == OpKind::Select) {
      const Elem& chosen = a[0].bits ? a[1] : a[2];
      if (a[0].trust != Trust::Exact) return {chosen.bits, Trust::Unknown, 0};
      return chosen;
    }
    Trust t = Trust::Exact;
    for (const Elem& e : a) t = std::max(t, e.trust);
    if (t == Trust::Unknown) return {0, Trust::Unknown, 0};
    if (k == OpKind::Cast) return cast(s, to, a[0]);
    if (ir::op_info(k).family == ir::OpFamily::Compare) {
      bool r;
      if (ir::is_float(s)) {
        const long double x = float_value(s, a[0].bits), y = float_value(s, a[1].bits);
        r = compare(k, x, y);
      } else if (ir::is_signed_int(s)) {
        r = compare(k, signed_value(s, a[0].bits), signed_value(s, a[1].bits));
      } else {
        r = compare(k, a[0].bits & mask_of(s), a[1].bits & mask_of(s));
      }
      return {r ? 1u : 0u, t == Trust::Exact ? t : Trust::Unknown, 0};
    }
    if (ir::is_float(s)) return float_op(k, s, a, t);
    return int_op(k, s, a, t);
  }

  template <class X>
  static bool compare(OpKind k, X x, X y) {
    switch (k) {
      case OpKind::Eq: return x == y;
      case OpKind::Ne: return x != y;
      case OpKind::Lt: return x < y;
      case OpKind::Le: return x <= y;
      case OpKind::Gt: return x > y;
      default: return x >= y;
    }
  }

  Elem cast(Scalar from, Scalar to, const Elem& a) {
    const bool exact = a.trust == Trust::Exact;
    // signed_value gives an unsigned integer's (or a bool's) value as it is.
    const long double x = ir::is_float(from) ? float_value(from, a.bits) : (long double)signed_value(from, a.bits);
    if (to == Scalar::Bool) return {(x != 0 || std::isnan(x)) ? 1u : 0u, exact ? Trust::Exact : Trust::Unknown, 0};
    if (ir::is_float(to)) return make_float(to, x, a.trust, a.bound);
    if (!exact) return {0, Trust::Unknown, 0};
    if (!ir::is_float(from)) return {uint64_t(signed_value(from, a.bits)) & mask_of(to), Trust::Exact, 0};
    // Float to integer: toward zero, saturating, NaN to 0 (docs/ir.md).
    if (std::isnan(x)) return {0, Trust::Exact, 0};
    const long double w = std::trunc(x);
    if (ir::is_signed_int(to)) {
      const long double lo = -std::ldexp(1.0L, bits_of(to) - 1), hi = std::ldexp(1.0L, bits_of(to) - 1) - 1;
      const int64_t v = w < lo ? int64_t(lo) : w > hi ? int64_t(hi) : int64_t(w);
      return {uint64_t(v) & mask_of(to), Trust::Exact, 0};
    }
    const long double hi = std::ldexp(1.0L, bits_of(to)) - 1;
    return {w < 0 ? 0 : w > hi ? mask_of(to) : uint64_t(w), Trust::Exact, 0};
  }

  // f16 and bf16 compute in f32, f32 in float, f64 in double; the result rounds once into s.
  template <class C>
  static long double calc(OpKind k, C x, C y) {
    switch (k) {
      case OpKind::Add: return C(x + y);
      case OpKind::Sub: return C(x - y);
      case OpKind::Mul: return C(x * y);
      case OpKind::Div: return C(x / y);
      case OpKind::Min: return std::isnan(x) ? y : std::isnan(y) ? x : C(std::fmin(x, y));
      case OpKind::Max: return std::isnan(x) ? y : std::isnan(y) ? x : C(std::fmax(x, y));
      case OpKind::Neg: return C(-x);
      case OpKind::Abs: return C(std::fabs(x));
      case OpKind::Sqrt: return C(std::sqrt(x));
      case OpKind::Floor: return C(std::floor(x));
      case OpKind::Ceil: return C(std::ceil(x));
      case OpKind::Exp: return C(std::exp(x));
      case OpKind::Exp2: return C(std::exp2(x));
      case OpKind::Log: return C(std::log(x));
      case OpKind::Log2: return C(std::log2(x));
      case OpKind::Rsqrt: return C(1 / std::sqrt(x));
      case OpKind::Tanh: return C(std::tanh(x));
      case OpKind::Erf: return C(std::erf(x));
      case OpKind::Sin: return C(std::sin(x));
      case OpKind::Cos: return C(std::cos(x));
      case OpKind::Pow: return C(std::pow(x, y));
      default: throw Failure{"fuzz.unknown_op", std::string(ir::op_name(k))};
    }
  }

  Elem float_op(OpKind k, Scalar s, const std::vector<Elem>& a, Trust t) {
    const long double x = float_value(s, a[0].bits), y = a.size() > 1 ? float_value(s, a[1].bits) : 0.0L;
    const long double r = s == Scalar::F64 ? calc<double>(k, double(x), double(y)) : calc<float>(k, float(x), float(y));
    // min and max of +0 and -0 may give either (docs/ir.md).
    if ((k == OpKind::Min || k == OpKind::Max) && x == 0 && y == 0 && std::signbit(x) != std::signbit(y)) {
      return {0, Trust::Unknown, 0};
    }
    if (t == Trust::Exact) {
      if (!is_transcendental(k)) return {round_to(s, r), Trust::Exact, 0};
      // What the op's accuracy allows; NaN and infinities from the op's edges are exact.
      if (!std::isfinite(r)) return std::isnan(r) ? Elem{round_to(s, r), Trust::Exact, 0} : Elem{0, Trust::Unknown, 0};
      return make_float(s, r, Trust::Approximate, approximate_tolerance(s) * std::max(std::fabs(r), 1.0L));
    }
    // An approximate operand: the bound carried through the ops whose error is bounded by their
    // operands', nothing through the others.
    const long double ea = a[0].bound, eb = a.size() > 1 ? a[1].bound : 0.0L;
    if (!std::isfinite(x) || !std::isfinite(y) || !std::isfinite(r)) return {0, Trust::Unknown, 0};
    long double bound;
    switch (k) {
      case OpKind::Add:
      case OpKind::Sub: bound = ea + eb; break;
      case OpKind::Mul: bound = std::fabs(y) * ea + std::fabs(x) * eb + ea * eb; break;
      case OpKind::Div:
        if (eb != 0 || y == 0) return {0, Trust::Unknown, 0};
        bound = ea / std::fabs(y);
        break;
      case OpKind::Min:
      case OpKind::Max: bound = std::max(ea, eb); break;
      case OpKind::Neg:
      case OpKind::Abs: bound = ea; break;
      default: return {0, Trust::Unknown, 0};
    }
    return make_float(s, r, Trust::Approximate, bound);
  }

  Elem int_op(OpKind k, Scalar s, const std::vector<Elem>& a, Trust t) {
    if (t != Trust::Exact) return {0, Trust::Unknown, 0};
    const uint64_t m = mask_of(s);
    const uint64_t x = a[0].bits & m, y = a.size() > 1 ? a[1].bits & m : 0;
    const int64_t sx = signed_value(s, x), sy = signed_value(s, y);
    const bool sig = ir::is_signed_int(s);
    switch (k) {
      case OpKind::Add: return {(x + y) & m, t, 0};
      case OpKind::Sub: return {(x - y) & m, t, 0};
      case OpKind::Mul: return {(x * y) & m, t, 0};
      case OpKind::Div:
        if (y == 0) throw Failure{"arith.division_by_zero", "an integer divided by zero"};
        if (sig) {
          if (sy == -1) return {(0 - x) & m, t, 0};
          return {uint64_t(sx / sy) & m, t, 0};
        }
        return {x / y, t, 0};
      case OpKind::Min: return {(sig ? sx < sy : x < y) ? x : y, t, 0};
      case OpKind::Max: return {(sig ? sx < sy : x < y) ? y : x, t, 0};
      case OpKind::Neg: return {(0 - x) & m, t, 0};
      case OpKind::Abs: return {sig && sx < 0 ? (0 - x) & m : x, t, 0};
      case OpKind::And: return {x & y, t, 0};
      case OpKind::Or: return {x | y, t, 0};
      case OpKind::Xor: return {x ^ y, t, 0};
      case OpKind::Not: return {s == Scalar::Bool ? x ^ 1 : ~x & m, t, 0};
      default: throw Failure{"fuzz.unknown_op", std::string(ir::op_name(k))};
    }
  }

  const TileCase& c_;
  const ir::Kernel& k_;
  TileEvaluation& out_;
  std::map<ir::Value, size_t> param_of_;
  std::map<ir::Value, View> views_;
  std::map<ir::Value, TileValue> values_, vars_;
  std::vector<std::map<uint64_t, std::pair<uint64_t, uint64_t>>> writer_;  // per element: writer, bits
  std::map<std::pair<size_t, uint64_t>, FloatSum> float_sums_;
  std::array<uint32_t, 3> block_{};
};

}  // namespace

TileEvaluation evaluate_tile(const TileCase& c) {
  TileEvaluation e;
  e.outcome.after = c.args;
  const ir::Kernel& k = c.program->kernel();
  for (size_t i = 0; i < c.args.size(); ++i) {
    const size_t n = c.args[i].size() / size_t(ir::scalar_bytes(k.params[i].type.scalar));
    e.trust.emplace_back(n, Trust::Exact);
    e.bound.emplace_back(n, 0.0L);
  }
  TileInterpreter run(c, e);
  try {
    for (uint32_t z = 0; z < c.grid[2]; ++z) {
      for (uint32_t y = 0; y < c.grid[1]; ++y) {
        for (uint32_t x = 0; x < c.grid[0]; ++x) run.run_block(x, y, z);
      }
    }
    run.finish_atomics();
  } catch (const Failure& f) {
    e.outcome.error_kind = f.kind;
    e.outcome.error_message = f.message;
  }
  return e;
}

}  // namespace kiln::fuzz
