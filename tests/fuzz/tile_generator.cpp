// The tile family: random tile kernels recorded through the tile layer's untyped core (the
// functions tile::trace's typed front calls), in four shapes:
//   elementwise  chains of arithmetic, math, compares and where, casts, reductions with keepdims
//                widened back, constants and explicit broadcasts, over cells of rank 1 or 2 with
//                ragged last cells and every padding value, into two Outs;
//   rows         a row (padded to a power of two) reduced without keepdims into an Out of rank
//                1, and a softmax-like use of the reductions kept, into another;
//   mma          c = a x b (+ c0), walking K cells in a run-time loop with prefetch_stages 1-4 or
//                none, at every format of the table, b read as it is or as a transpose, ragged m,
//                n and k, an epilogue after it;
//   shared       Shared parameters: a transposed store bounded by cell_extent, scatters and
//                atomics at data-driven offsets, loads with an extent and a padding value.
// Sizes come from {1, 31, 33, 127, 129, 1000} and powers of two; inputs are ordinary values with
// special ones among them (±0, ±inf, NaN, denormals, the largest finite floats, integer extremes).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>

#include "kiln/error.h"
#include "kiln/tile.h"
#include "numbers.h"
#include "tile_program.h"

namespace kiln::fuzz {

namespace {

using ir::OpKind;
using ir::Scalar;
using tile::detail::ValueRef;

class Rng {
 public:
  explicit Rng(uint64_t seed) : g_(seed * 0x9e3779b97f4a7c15ull + 0x7f4a7c15ull) {}
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(g_); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(g_) < p; }
  template <class T, size_t N>
  T of(const T (&a)[N]) {
    return a[pick(0, int(N) - 1)];
  }
  template <class T>
  T of(const std::vector<T>& v) {
    return v[size_t(pick(0, int(v.size()) - 1))];
  }
  uint64_t bits() { return g_(); }
  std::mt19937_64& engine() { return g_; }

 private:
  std::mt19937_64 g_;
};

const int64_t kSizes[] = {1, 31, 33, 127, 129, 1000};
const Scalar kTypes[] = {Scalar::F32, Scalar::F64, Scalar::F16, Scalar::BF16, Scalar::I32,
                         Scalar::I64, Scalar::U32, Scalar::U8,  Scalar::I16};
const tile::Pad kPads[] = {tile::Pad::zero, tile::Pad::neg_zero, tile::Pad::pos_inf, tile::Pad::neg_inf,
                           tile::Pad::nan};

int64_t next_pow2(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

// How an input's elements are drawn.
enum class Style {
  Ordinary,   // values of a few significant bits, specials among them
  SmallInts,  // small integers and halves, whose sums are exact in any order (products)
  Offsets,    // i32 offsets around [0, n): a scatter's
};

// One element's bits.
uint64_t element(Rng& r, Scalar s, Style style, int64_t n) {
  if (style == Style::Offsets) return uint64_t(int64_t(r.pick(-2, int(n) + 1))) & mask_of(s);
  if (ir::is_float(s)) {
    if (style == Style::SmallInts) return round_to(s, (long double)r.pick(-6, 6) / (r.chance(0.3) ? 2 : 1));
    if (r.chance(0.1)) {
      const long double specials[] = {0.0L,   -0.0L,   INFINITY, -INFINITY, NAN, largest_finite(s), -largest_finite(s),
                                      1e-40L, -1e-40L, 6e-8L,    1e-310L,   1.0L};
      return round_to(s, r.of(specials));
    }
    // A value of 1 to 11 significant bits between 2^-6 and 2^6: sums and products often exact.
    const long double m = (long double)r.pick(-1024, 1024);
    return round_to(s, std::ldexp(m, r.pick(-16, -4)));
  }
  if (r.chance(0.1)) {
    const uint64_t top = 1ull << (bits_of(s) - 1);
    const uint64_t specials[] = {0, 1, mask_of(s), top, top - 1, 2};
    return r.of(specials) & mask_of(s);
  }
  if (style == Style::SmallInts) return uint64_t(int64_t(r.pick(-6, 6))) & mask_of(s);
  return uint64_t(int64_t(r.pick(-300, 300))) & mask_of(s);
}

std::vector<unsigned char> draw(Rng& r, Scalar s, int64_t elements, Style style, int64_t n = 0) {
  const int bytes = ir::scalar_bytes(s);
  std::vector<unsigned char> out(size_t(elements) * size_t(bytes));
  for (int64_t i = 0; i < elements; ++i) {
    const uint64_t v = element(r, s, style, n);
    std::memcpy(out.data() + i * bytes, &v, size_t(bytes));
  }
  return out;
}

// A value the recording holds: its IR value, element type and shape.
struct Tv {
  ValueRef ref;
  Scalar s;
  std::vector<uint32_t> shape;
};

class TileGenerator {
 public:
  TileGenerator(uint64_t seed, uint64_t input_seed) : r_(seed), inputs_(input_seed) { c_.seed = seed; }

  TileCase make() {
    const int k = r_.pick(0, 10);
    if (k < 4) elementwise();
    else if (k < 6) rows();
    else if (k < 8) mma();
    else if (k < 9) cells_loop();
    else shared();
    return std::move(c_);
  }

 private:
  // ---- parameters and recording --------------------------------------------------------------

  int param(tile::Role role, Scalar s, std::optional<tile::Cells> cells, std::vector<unsigned char> bytes) {
    decls_.push_back(tile::ParamDecl{role, s, std::move(cells)});
    c_.args.push_back(std::move(bytes));
    c_.is_output.push_back(role != tile::Role::In);
    return int(decls_.size()) - 1;
  }
  static int64_t elements(const std::vector<int64_t>& extent) {
    int64_t n = 1;
    for (int64_t e : extent) n *= e;
    return n;
  }
  int in(Scalar s, const tile::Cells& cells, Style style = Style::Ordinary) {
    return param(tile::Role::In, s, cells, draw(inputs_, s, elements(cells.extent()), style));
  }
  int out(Scalar s, const tile::Cells& cells) {
    // Poison: 0xa5 in every byte, never a value a program stores by chance alone.
    return param(tile::Role::Out, s, cells,
                 std::vector<unsigned char>(size_t(elements(cells.extent()) * ir::scalar_bytes(s)), 0xa5));
  }
  int shared_param(Scalar s, int64_t n, Style style = Style::Ordinary) {
    return param(tile::Role::Shared, s, std::nullopt, draw(inputs_, s, n, style));
  }

  // Records `body` over the parameters declared so far; a refusal is kept, not thrown.
  void record(const std::string& name, const std::function<void(tile::detail::TraceScope&)>& body) {
    c_.shape = name;
    try {
      tile::detail::TraceScope scope("fuzz_tile_" + name, decls_);
      body(scope);
      c_.program = scope.close().program;
    } catch (const Error& e) {
      c_.refused = e.kind() + ": " + e.what();
    }
  }

  // A padding value for a view of s: any for floats, zero for integers (the only one they take).
  tile::Pad pad_for(Scalar s) {
    const tile::Pad p = ir::is_float(s) ? r_.of(kPads) : tile::Pad::zero;
    c_.tags.push_back("pad " + std::string(ir::to_string(p)));
    return p;
  }

  // ---- values -----------------------------------------------------------------------------------

  Tv constant(Scalar s) {
    ir::AttrValue v;
    if (ir::is_float(s)) {
      const double specials[] = {0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 3.0, -1.5, 0.0625};
      const double edges[] = {INFINITY, -INFINITY, NAN, double(largest_finite(s)), 1e-40, 6e-8};
      v = ir::AttrValue::of_float(r_.chance(0.15) ? r_.of(edges) : r_.of(specials));
    } else {
      const uint64_t top = 1ull << (bits_of(s) - 1);
      const uint64_t values[] = {0, 1, 2, 3, 7, mask_of(s), top, top - 1};
      uint64_t x = r_.of(values) & mask_of(s);
      v = ir::AttrValue::of_int(signed_value(s, x));
    }
    return {tile::detail::full(s, {}, v), s, {}};
  }

  static bool widens(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
    if (a.empty() || b.empty()) return true;
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i] != b[i] && a[i] != 1 && b[i] != 1) return false;
    }
    return true;
  }
  static std::vector<uint32_t> widened(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
    if (a.empty()) return b;
    if (b.empty()) return a;
    std::vector<uint32_t> s(a.size());
    for (size_t i = 0; i < a.size(); ++i) s[i] = std::max(a[i], b[i]);
    return s;
  }

  // A pool entry of type s that widens with `shape`, or a constant.
  Tv partner(Scalar s, const std::vector<uint32_t>& shape) {
    std::vector<Tv> fits;
    for (const Tv& v : pool_) {
      if (v.s == s && widens(v.shape, shape)) fits.push_back(v);
    }
    if (fits.empty() || r_.chance(0.25)) return constant(s);
    return r_.of(fits);
  }

  Tv binary(OpKind k, const Tv& a, const Tv& b) {
    ValueRef ops[] = {a.ref, b.ref};
    return {tile::detail::elementwise(k, ops), a.s, widened(a.shape, b.shape)};
  }
  Tv unary(OpKind k, const Tv& a) {
    ValueRef ops[] = {a.ref};
    return {tile::detail::elementwise(k, ops), a.s, a.shape};
  }

  // An integer divisor that is never 0 (nor -1, whose quotient of the minimum overflows).
  Tv safe_divisor(const Tv& d) {
    Tv x = d;
    for (int64_t bad : {int64_t(0), int64_t(-1)}) {
      if (bad < 0 && !ir::is_signed_int(d.s)) continue;
      Tv badc{tile::detail::full(d.s, {}, ir::AttrValue::of_int(bad)), d.s, {}};
      Tv one{tile::detail::full(d.s, {}, ir::AttrValue::of_int(1)), d.s, {}};
      ValueRef eq[] = {x.ref, badc.ref};
      ValueRef c = tile::detail::elementwise(OpKind::Eq, eq);
      ValueRef sel[] = {c, one.ref, x.ref};
      x = {tile::detail::elementwise(OpKind::Select, sel), d.s, x.shape};
    }
    return x;
  }

  // One random op over the pool; its result joins the pool.
  void grow(const std::vector<Scalar>& types) {
    const Tv a = r_.of(pool_);
    const int what = r_.pick(0, 9);
    const bool f = ir::is_float(a.s);
    if (what <= 3) {  // binary arithmetic
      const OpKind fk[] = {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Max, OpKind::Min, OpKind::Pow};
      const OpKind ik[] = {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Max, OpKind::Min, OpKind::Div};
      const OpKind k = f ? r_.of(fk) : r_.of(ik);
      Tv b = partner(a.s, a.shape);
      if (!f && k == OpKind::Div) b = safe_divisor(b);
      pool_.push_back(binary(k, a, b));
    } else if (what <= 5) {  // unary
      const OpKind fk[] = {OpKind::Exp,   OpKind::Exp2, OpKind::Log,   OpKind::Log2, OpKind::Sqrt,
                           OpKind::Rsqrt, OpKind::Tanh, OpKind::Erf,   OpKind::Sin,  OpKind::Cos,
                           OpKind::Abs,   OpKind::Neg,  OpKind::Floor, OpKind::Ceil};
      const OpKind ik[] = {OpKind::Abs, OpKind::Neg};
      if (f || ir::is_signed_int(a.s)) pool_.push_back(unary(f ? r_.of(fk) : r_.of(ik), a));
    } else if (what == 6) {  // compare, then where
      const OpKind ck[] = {OpKind::Lt, OpKind::Le, OpKind::Gt, OpKind::Ge, OpKind::Eq, OpKind::Ne};
      const Tv b = partner(a.s, a.shape);
      const Tv cond = binary(r_.of(ck), a, b);
      const Tv x = partner(a.s, cond.shape), y = partner(a.s, cond.shape);
      ValueRef ops[] = {cond.ref, x.ref, y.ref};
      pool_.push_back(
          {tile::detail::elementwise(OpKind::Select, ops), a.s, widened(cond.shape, widened(x.shape, y.shape))});
    } else if (what == 7) {  // a cast
      const Scalar to = r_.of(types);
      if (to != a.s) pool_.push_back({tile::detail::cast(a.ref, to), to, a.shape});
    } else if (what == 8 && !a.shape.empty()) {  // a reduction kept as length 1, to widen back
      const OpKind rk[] = {OpKind::TileReduceSum, OpKind::TileReduceMax, OpKind::TileReduceMin};
      const int dim = r_.pick(0, int(a.shape.size()) - 1);
      std::vector<uint32_t> s = a.shape;
      s[size_t(dim)] = 1;
      pool_.push_back({tile::detail::reduce(r_.of(rk), a.ref, dim, true), a.s, s});
    } else if (!a.shape.empty()) {  // an explicit broadcast of a narrow value to the full shape
      std::vector<Tv> narrow;
      for (const Tv& v : pool_) {
        if (v.shape != full_ && widens(v.shape, full_)) narrow.push_back(v);
      }
      if (!narrow.empty()) {
        const Tv n = r_.of(narrow);
        pool_.push_back({tile::detail::broadcast(n.ref, full_), n.s, full_});
      }
    }
  }

  // A pool entry of the full shape and type s (widened and cast as needed).
  Tv result(Scalar s) {
    std::vector<Tv> full;
    for (const Tv& v : pool_) {
      if (v.shape == full_) full.push_back(v);
    }
    Tv v = full.empty() ? pool_.back() : (r_.chance(0.6) ? full.back() : r_.of(full));
    if (v.shape != full_) v = {tile::detail::broadcast(v.ref, full_), v.s, full_};
    if (v.s != s) v = {tile::detail::cast(v.ref, s), s, full_};
    return v;
  }

  std::vector<Scalar> some_types(int n) {
    std::vector<Scalar> t;
    while (int(t.size()) < n) {
      const Scalar s = r_.of(kTypes);
      if (std::find(t.begin(), t.end(), s) == t.end()) t.push_back(s);
    }
    return t;
  }

  // ---- the shapes -------------------------------------------------------------------------------

  // Cells of rank 1 or 2 with a ragged last cell most of the time.
  std::pair<std::vector<int64_t>, std::vector<int64_t>> some_cells(int64_t most_elements) {
    if (r_.chance(0.3)) {
      const int64_t e = r_.of(kSizes), t = std::min<int64_t>(int64_t(1) << r_.pick(0, 10), most_elements);
      return {{e}, {t}};
    }
    const int64_t rows_[] = {1, 31, 33, 127, 129};
    const int64_t e0 = r_.of(rows_), e1 = r_.of(kSizes);
    int64_t t1 = int64_t(1) << r_.pick(3, 8), t0 = int64_t(1) << r_.pick(0, 5);
    while (t0 * t1 > most_elements) t0 > 1 ? t0 /= 2 : t1 /= 2;
    return {{e0, e1}, {t0, t1}};
  }

  void elementwise() {
    const std::vector<Scalar> types = some_types(r_.pick(1, 3));
    const auto cut = some_cells(2048);  // not a structured binding: the recording lambda captures them
    const std::vector<int64_t>& extent = cut.first;
    const std::vector<int64_t>& tl = cut.second;
    const tile::Cells cells = tile::cells(extent, tl).pad(pad_for(types[0]));
    const int x = in(types[0], cells);
    // A second input: another type of the same cells, or (rank 2) one column widened along rows.
    const bool column = extent.size() == 2 && r_.chance(0.4);
    const Scalar ys = r_.of(types);
    const int y = column ? in(ys, tile::cells({extent[0], 1}, {tl[0], 1}).pad(pad_for(ys)).along({0, tile::free_axis}))
                         : in(ys, tile::cells(extent, tl).pad(pad_for(ys)));
    if (column) c_.tags.push_back("a column widened");
    const int z = out(r_.of(types), tile::cells(extent, tl));
    const int w = out(r_.of(types), tile::cells(extent, tl));
    const int ops = r_.pick(3, 12);
    record("elementwise", [&](tile::detail::TraceScope& scope) {
      full_.assign(tl.begin(), tl.end());
      pool_ = {{tile::detail::load_cell(scope.param(x)), types[0], full_}};
      std::vector<uint32_t> ys_shape = full_;
      if (column) ys_shape[1] = 1;
      if (column) {
        const ValueRef zero[] = {tile::detail::index_constant(0)};
        pool_.push_back({tile::detail::load_at(scope.param(y), zero), ys, ys_shape});
      } else {
        pool_.push_back({tile::detail::load_cell(scope.param(y)), ys, ys_shape});
      }
      for (int i = 0; i < ops; ++i) grow(types);
      const Scalar zs = decls_[size_t(z)].element, ws = decls_[size_t(w)].element;
      tile::detail::store_cell(scope.param(z), result(zs).ref);
      // The second output: another value, so both ends of the chain show.
      std::swap(pool_.back(), pool_[size_t(r_.pick(0, int(pool_.size()) - 1))]);
      tile::detail::store_cell(scope.param(w), result(ws).ref);
    });
  }

  void rows() {
    const std::vector<Scalar> types = some_types(r_.pick(1, 2));
    const Scalar s = types[0];
    const int64_t rows_[] = {1, 31, 33, 127, 129};
    const int64_t e0 = r_.of(rows_), e1 = r_.of(kSizes), t1 = next_pow2(e1);
    int64_t t0 = int64_t(1) << r_.pick(0, 4);
    while (t0 * t1 > 4096 && t0 > 1) t0 /= 2;
    const int x = in(s, tile::cells({e0, e1}, {t0, t1}).pad(pad_for(s)));
    const int red = out(s, tile::cells({e0}, {t0}));
    const int soft = out(s, tile::cells({e0, e1}, {t0, t1}));
    const OpKind rk[] = {OpKind::TileReduceSum, OpKind::TileReduceMax, OpKind::TileReduceMin};
    const OpKind kind = r_.of(rk);
    const int ops = r_.pick(0, 4);
    record("rows", [&](tile::detail::TraceScope& scope) {
      full_ = {uint32_t(t0), uint32_t(t1)};
      pool_ = {{tile::detail::load_cell(scope.param(x)), s, full_}};
      for (int i = 0; i < ops; ++i) grow(types);
      const Tv v = result(s);
      tile::detail::store_cell(scope.param(red), tile::detail::reduce(kind, v.ref, 1, false));
      if (ir::is_float(s)) {  // v - max, exp, over the sum: the softmax a row op computes
        const Tv m{tile::detail::reduce(OpKind::TileReduceMax, v.ref, 1, true), s, {uint32_t(t0), 1}};
        const Tv e = unary(OpKind::Exp, binary(OpKind::Sub, v, m));
        const Tv sum{tile::detail::reduce(OpKind::TileReduceSum, e.ref, 1, true), s, {uint32_t(t0), 1}};
        tile::detail::store_cell(scope.param(soft), binary(OpKind::Div, e, sum).ref);
      } else {
        const Tv m{tile::detail::reduce(OpKind::TileReduceMin, v.ref, 1, true), s, {uint32_t(t0), 1}};
        tile::detail::store_cell(scope.param(soft), binary(OpKind::Sub, v, m).ref);
      }
    });
  }

  void mma() {
    struct Format {
      Scalar ab, c;
    };
    const Format formats[] = {{Scalar::F16, Scalar::F16},
                              {Scalar::F16, Scalar::F32},
                              {Scalar::BF16, Scalar::F32},
                              {Scalar::F32, Scalar::F32},
                              {Scalar::F64, Scalar::F64}};
    const Format f = r_.of(formats);
    const int64_t mn[] = {1, 16, 31, 33, 64, 127, 129};
    const int64_t ks[] = {16, 31, 33, 64, 127, 129, 1000};
    const int64_t m = r_.of(mn), n = r_.of(mn);
    int64_t k = r_.of(ks);
    while (m * n * k > (int64_t(1) << 22) && k > 16) k /= 2;
    const int64_t tm = int64_t(16) << r_.pick(0, 2), tn = int64_t(16) << r_.pick(0, 2),
                  tk = int64_t(16) << r_.pick(0, 1);
    const Style style = r_.chance(0.7) ? Style::SmallInts : Style::Ordinary;
    // K's padding must be zero for the sum to mean the product; m's and n's may be anything.
    const int a = in(f.ab, tile::cells({m, k}, {tm, tk}).along({0, tile::free_axis}), style);
    const bool transposed = r_.chance(0.4);
    const int b = transposed ? in(f.ab, tile::cells({n, k}, {tn, tk}).along({1, tile::free_axis}), style)
                             : in(f.ab, tile::cells({k, n}, {tk, tn}).along({tile::free_axis, 1}), style);
    const bool with_c0 = r_.chance(0.5);
    const int c0 = with_c0 ? in(f.c, tile::cells({m, n}, {tm, tn}), style) : -1;
    const Scalar out_s = r_.chance(0.7) ? f.c : r_.of(kTypes);
    const int c = out(out_s, tile::cells({m, n}, {tm, tn}));
    const int64_t cells_k = (k + tk - 1) / tk;
    const int stages = r_.pick(0, 4);  // 0: no prefetch_stages attribute
    const bool epilogue = r_.chance(0.5);
    c_.tags.push_back("mma " + std::string(ir::scalar_name(f.ab)) + " into " + std::string(ir::scalar_name(f.c)));
    c_.tags.push_back(stages ? "prefetch_stages " + std::to_string(stages) : "no prefetch_stages");
    if (transposed) c_.tags.push_back("mma of a transposed b");
    record("mma", [&](tile::detail::TraceScope& scope) {
      const uint32_t sm = uint32_t(tm), sn = uint32_t(tn);
      const ValueRef init = with_c0 ? tile::detail::load_cell(scope.param(c0))
                                    : tile::detail::full(f.c, std::vector<uint32_t>{sm, sn},
                                                         ir::AttrValue::of_float(r_.chance(0.5) ? 0.0 : 1.0));
      const ValueRef acc = tile::detail::var_decl(init);
      auto step = [&](const tile::Index& kk) {
        ValueRef ai[] = {kk.ref()};
        const ValueRef av = tile::detail::load_at(scope.param(a), ai);
        ValueRef bv = tile::detail::load_at(scope.param(b), ai);
        if (transposed) bv = tile::detail::transpose(bv);
        tile::detail::var_store(acc, tile::detail::mma(av, bv, tile::detail::var_load(acc)));
      };
      auto range = tile::d_range(0, int32_t(cells_k));
      if (stages > 0) range = range.prefetch_stages(stages);
      tile::For(range, [&](tile::Index kk) { step(kk); });
      Tv v{tile::detail::var_load(acc), f.c, {sm, sn}};
      if (epilogue) {
        full_ = {sm, sn};
        pool_ = {v};
        grow({f.c});
        grow({f.c});
        v = result(f.c);
      }
      if (out_s != f.c) v = {tile::detail::cast(v.ref, out_s), out_s, v.shape};
      tile::detail::store_cell(scope.param(c), v.ref);
    });
  }

  // A run-time loop over the free cells of a row of cells, folding each into a carried tile; and
  // the first cells cut in halves by a second view (retile), each half stored as a part of an
  // Out's cell (store_sub).
  void cells_loop() {
    const std::vector<Scalar> types = some_types(r_.pick(1, 2));
    const Scalar s = types[0];
    const int64_t rows_[] = {1, 31, 33, 127, 129};
    const int64_t e0 = r_.of(rows_), e1 = r_.of(kSizes);
    const int64_t t1 = int64_t(16) << r_.pick(0, 3);
    int64_t t0 = int64_t(1) << r_.pick(0, 4);
    while (t0 * t1 > 2048) t0 /= 2;
    const int x = in(s, tile::cells({e0, e1}, {t0, t1}).along({0, tile::free_axis}).pad(pad_for(s)));
    const int folded = out(s, tile::cells({e0, t1}, {t0, t1}));
    const int halves = out(s, tile::cells({e0, t1}, {t0, t1}));
    const int64_t n = (e1 + t1 - 1) / t1;
    const OpKind fold_kinds[] = {OpKind::Add, OpKind::Max, OpKind::Min};
    const OpKind fold = r_.of(fold_kinds);
    const int stages = r_.pick(0, 4);
    c_.tags.push_back("fold cells by " + std::string(ir::op_name(fold)));
    c_.tags.push_back("store_sub of a retile");
    const int ops = r_.pick(0, 3);
    record("cells", [&](tile::detail::TraceScope& scope) {
      full_ = {uint32_t(t0), uint32_t(t1)};
      const ValueRef first[] = {tile::detail::index_constant(0)};
      const ValueRef acc = tile::detail::var_decl(tile::detail::load_at(scope.param(x), first));
      auto range = tile::d_range(1, int32_t(n));
      if (stages > 0) range = range.prefetch_stages(stages);
      tile::For(range, [&](tile::Index k) {
        const ValueRef at[] = {k.ref()};
        pool_ = {{tile::detail::load_at(scope.param(x), at), s, full_}};
        for (int i = 0; i < ops; ++i) grow(types);
        const Tv v = result(s);
        const Tv sofar{tile::detail::var_load(acc), s, full_};
        tile::detail::var_store(acc, binary(fold, sofar, v).ref);
      });
      tile::detail::store_cell(scope.param(folded), tile::detail::var_load(acc));
      const tile::detail::ParamRef half = tile::detail::retile(scope.param(x), {e0, e1}, {t0, t1 / 2});
      for (int j = 0; j < 2; ++j) {
        const ValueRef at[] = {tile::detail::index_constant(j)};
        const ValueRef part[] = {tile::detail::index_constant(0), tile::detail::index_constant(j)};
        Tv h{tile::detail::load_at(half, at), s, {uint32_t(t0), uint32_t(t1 / 2)}};
        if ((ir::is_float(s) || ir::is_signed_int(s)) && r_.chance(0.5)) h = unary(OpKind::Abs, h);
        tile::detail::store_sub(scope.param(halves), h.ref, part);
      }
    });
  }

  void shared() {
    const int kind = r_.pick(0, 2);
    if (kind == 0) transposed_store();
    else if (kind == 1) scatter();
    else shared_load();
  }

  // The recipe of docs/tile.md: each cell stored transposed at an offset, bounded by cell_extent;
  // sometimes an atomic add in the store's place.
  void transposed_store() {
    const std::vector<Scalar> types = some_types(1);
    const Scalar s = types[0];
    const int64_t rows_[] = {1, 31, 33, 127, 129};
    const int64_t e0 = r_.of(rows_), e1 = r_.of(kSizes);
    const int64_t t0 = int64_t(1) << r_.pick(0, 5), t1 = int64_t(8) << r_.pick(0, 3);
    const int x = in(s, tile::cells({e0, e1}, {t0, t1}).pad(pad_for(s)));
    const int o = shared_param(s, e0 * e1);
    const bool atomic = ir::atomic_takes(OpKind::TileAtomicAdd, s) && r_.chance(0.4);
    c_.tags.push_back(atomic ? "transposed atomic_add" : "transposed store");
    c_.grid = {uint32_t((e0 + t0 - 1) / t0), uint32_t((e1 + t1 - 1) / t1), 1};
    const int ops = r_.pick(0, 4);
    record("shared", [&](tile::detail::TraceScope& scope) {
      full_ = {uint32_t(t0), uint32_t(t1)};
      pool_ = {{tile::detail::load_cell(scope.param(x)), s, full_}};
      for (int i = 0; i < ops; ++i) grow(types);
      const tile::Index at = tile::block_id(1) * int32_t(t1 * e0) + tile::block_id(0) * int32_t(t0);
      const std::vector<ValueRef> extent = tile::detail::cell_extent(scope.param(x), {});
      const int64_t strides[] = {1, e0};
      if (atomic) {
        tile::detail::atomic(OpKind::TileAtomicAdd, scope.param(o), at.ref(), result(s).ref, strides, extent);
      } else {
        tile::detail::store(scope.param(o), at.ref(), result(s).ref, strides, extent);
      }
    });
  }

  // Values at offsets the data gives: a scatter (where two lanes meet, one lands) or an atomic.
  void scatter() {
    const int64_t e = r_.of(kSizes), t = int64_t(16) << r_.pick(0, 6);
    const int64_t bins = r_.of(kSizes);
    const Scalar vs_choices[] = {Scalar::I32, Scalar::U32, Scalar::I64, Scalar::U64,
                                 Scalar::F32, Scalar::F64, Scalar::F16, Scalar::I16};
    const Scalar vs = r_.of(vs_choices);
    std::vector<OpKind> kinds = {OpKind::TileScatter};
    for (OpKind k : {OpKind::TileScatterAdd, OpKind::TileScatterMax, OpKind::TileScatterMin}) {
      const OpKind at = k == OpKind::TileScatterAdd   ? OpKind::TileAtomicAdd
                        : k == OpKind::TileScatterMax ? OpKind::TileAtomicMax
                                                      : OpKind::TileAtomicMin;
      if (ir::atomic_takes(at, vs)) kinds.push_back(k);
    }
    const OpKind kind = r_.of(kinds);
    c_.tags.push_back(std::string(ir::op_name(kind)) + " " + std::string(ir::scalar_name(vs)));
    const tile::Cells cells = tile::cells({e}, {t});
    const int offsets = in(Scalar::I32, cells, Style::Offsets);
    c_.args.back() = draw(inputs_, Scalar::I32, e, Style::Offsets, bins);
    const int values = in(vs, tile::cells({e}, {t}));
    const int hist = shared_param(vs, bins);
    c_.grid = {uint32_t((e + t - 1) / t), 1, 1};
    record("shared", [&](tile::detail::TraceScope& scope) {
      // Offsets clamped into [0, bins): the ones drawn outside land on the ends.
      Tv off{tile::detail::load_cell(scope.param(offsets)), Scalar::I32, {uint32_t(t)}};
      const Tv lo{tile::detail::full(Scalar::I32, {}, ir::AttrValue::of_int(0)), Scalar::I32, {}};
      const Tv hi{tile::detail::full(Scalar::I32, {}, ir::AttrValue::of_int(bins - 1)), Scalar::I32, {}};
      off = binary(OpKind::Min, binary(OpKind::Max, off, lo), hi);
      const std::vector<ValueRef> extent = tile::detail::cell_extent(scope.param(offsets), {});
      tile::detail::scatter(kind, scope.param(hist), off.ref, tile::detail::load_cell(scope.param(values)), extent);
    });
  }

  // A Shared parameter read as cells by hand: at an offset, with an extent and a padding value,
  // whose padded lanes a reduction kept as length 1 sees.
  void shared_load() {
    const std::vector<Scalar> types = some_types(r_.pick(1, 2));
    const Scalar s = types[0];
    const int64_t rows_[] = {1, 31, 33, 127, 129};
    const int64_t e0 = r_.of(rows_), e1 = r_.of(kSizes);
    const int64_t t0 = int64_t(1) << r_.pick(0, 4), t1 = int64_t(8) << r_.pick(0, 4);
    const tile::Pad pad = pad_for(s);
    const int src = shared_param(s, e0 * e1);
    const int z = out(s, tile::cells({e0, e1}, {t0, t1}));
    const int ops = r_.pick(1, 5);
    record("shared", [&](tile::detail::TraceScope& scope) {
      full_ = {uint32_t(t0), uint32_t(t1)};
      const tile::Index at = tile::block_id(0) * int32_t(t0 * e1) + tile::block_id(1) * int32_t(t1);
      const std::vector<ValueRef> extent = tile::detail::cell_extent(scope.param(z), {});
      const int64_t strides[] = {e1, 1};
      pool_ = {{tile::detail::load(scope.param(src), at.ref(), full_, strides, extent, pad), s, full_}};
      for (int i = 0; i < ops; ++i) grow(types);
      tile::detail::store_cell(scope.param(z), result(s).ref);
    });
  }

  Rng r_, inputs_;
  TileCase c_;
  std::vector<tile::ParamDecl> decls_;
  std::vector<Tv> pool_;
  std::vector<uint32_t> full_;
};

}  // namespace

TileCase generate_tile(uint64_t seed, uint64_t input_seed) {
  TileCase c = TileGenerator(seed, input_seed).make();
  if (c.program && c.program->grid()) c.grid = *c.program->grid();
  return c;
}

}  // namespace kiln::fuzz
