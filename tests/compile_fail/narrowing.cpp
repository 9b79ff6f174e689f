// Must not compile: a C++ number that would change on its way into a proxy's element type (a
// floating-point value into an integer proxy, an integer constant out of the proxy's range, a
// run-time integer whose type may not fit, a bool into a number or a number into a bool). Each
// case is one mistake, built with -DKILN_CASE_<name>; the control writes every allowed form and
// compiles. docs/decisions/026-no-silent-narrowing.md has the rule.
#include "kiln/dsl.h"
#include "kiln/tile.h"

using namespace kiln;

struct Narrowing {
  static constexpr std::string_view name = "narrowing";
  void operator()(Slice<int32_t> y, Slice<uint8_t> b8, Slice<float> f, Slice<f16> h, Slice<bf16> hb, Slice<uint32_t> u,
                  Slice<bool> flags, Scalar<int32_t> s, Comptime<int> k) const {
    auto i = absolute_pos();
    Expr<int32_t> e = y[i];
    Var<int32_t> v = 0;
    int runtime_int = k.get();
    double runtime_double = 0.25 * k.get();
    (void)runtime_int;
    (void)runtime_double;
#if defined(KILN_CASE_var_init_float)
    Var<int32_t> w = 2.5;  // error-here: var_init_float
#elif defined(KILN_CASE_var_assign_float)
    v = 2.5;  // error-here: var_assign_float
#elif defined(KILN_CASE_var_compound_float)
    v += 0.7;  // error-here: var_compound_float
#elif defined(KILN_CASE_element_plus_float)
    y[i] = y[i] + 2.5;  // error-here: element_plus_float
#elif defined(KILN_CASE_element_assign_float)
    y[i] = 2.5f;  // error-here: element_assign_float
#elif defined(KILN_CASE_element_compound_float)
    y[i] *= 1.5;  // error-here: element_compound_float
#elif defined(KILN_CASE_expr_plus_float)
    e = e * 0.5;  // error-here: expr_plus_float
#elif defined(KILN_CASE_float_plus_expr)
    e = 0.5 * e;  // error-here: float_plus_expr
#elif defined(KILN_CASE_expr_init_float)
    Expr<int32_t> g = 2.5;  // error-here: expr_init_float
#elif defined(KILN_CASE_compare_float)
    If(e < 2.5, [] {});  // error-here: compare_float
#elif defined(KILN_CASE_min_float)
    y[i] = min(e, 0.5);  // error-here: min_float
#elif defined(KILN_CASE_runtime_double)
    y[i] = e + runtime_double;  // error-here: runtime_double
#elif defined(KILN_CASE_half_into_int)
    y[i] = e + f16(1.0f);  // error-here: half_into_int
#elif defined(KILN_CASE_u8_literal_300)
    Var<uint8_t> c;
    c = 300;  // error-here: u8_literal_300
#elif defined(KILN_CASE_u8_init_300)
    Var<uint8_t> c = 300;  // error-here: u8_init_300
#elif defined(KILN_CASE_u8_element_300)
    b8[i] = 300;  // error-here: u8_element_300
#elif defined(KILN_CASE_u8_plus_256)
    b8[i] = b8[i] + 256;  // error-here: u8_plus_256
#elif defined(KILN_CASE_u32_minus_one)
    u[i] = u[i] + -1;  // error-here: u32_minus_one
#elif defined(KILN_CASE_i32_plus_big_unsigned)
    y[i] = e + 3000000000u;  // error-here: i32_plus_big_unsigned
#elif defined(KILN_CASE_int_runtime_into_u32)
    u[i] = i + runtime_int;  // error-here: int_runtime_into_u32
#elif defined(KILN_CASE_int_runtime_into_u8_var)
    Var<uint8_t> c;
    c = runtime_int;  // error-here: int_runtime_into_u8_var
#elif defined(KILN_CASE_int_init_u32_var)
    Var<uint32_t> c = 0;  // error-here: int_init_u32_var
#elif defined(KILN_CASE_range_negative_step)
    For(range(0u, i, -1), [](Expr<uint32_t>) {});  // error-here: range_negative_step
#elif defined(KILN_CASE_range_bound_float)
    For(range(0u, 2.5), [](Expr<uint32_t>) {});  // error-here: range_bound_float
#elif defined(KILN_CASE_number_into_bool)
    flags[i] = 1;  // error-here: number_into_bool
#elif defined(KILN_CASE_bool_into_number)
    y[i] = e + true;  // error-here: bool_into_number
#elif defined(KILN_CASE_atomic_float)
    atomic_add(y[i], 1.5);  // error-here: atomic_float
#elif defined(KILN_CASE_select_float)
    y[i] = select(e > 0, e, 0.5);  // error-here: select_float
#elif defined(KILN_CASE_fma_float)
    y[i] = fma(e, e, 0.5);  // error-here: fma_float
#elif defined(KILN_CASE_vector_lane_float)
    (void)vector_of<int32_t>(e, 1, 2.5, e);  // error-here: vector_lane_float
#elif defined(KILN_CASE_plane_lane_negative)
    y[i] = plane_shuffle_xor(e, -1);  // error-here: plane_lane_negative
#else
    // Integer literals beside a float proxy; double literals beside f32, f16 and bf16.
    f[i] = f[i] + 1;
    f[i] = 2 * f[i] + 0.5;
    f[i] *= 2;
    h[i] = h[i] * 0.5 + 1;
    hb[i] = hb[i] * 0.5 + 1;
    h[i] = 1.5;
    Var<float> acc = 0;  // any integer type fits a float proxy, as does a double
    acc += 0.1;
    acc = runtime_double + acc;
    acc += runtime_int;
    f[i] = acc;
    Expr<f16> half = 0.25;
    h[i] = half;
    // In-range integer constants, of any integer type, beside or into integer proxies.
    b8[i] = 255;
    b8[i] = b8[i] + 1;
    b8[i] += 200u;
    u[i] = u[i] * 3 + 0;
    u[i] = min(u[i], 7);
    u[i] = select(u[i] > 4, u[i], 4);
    u[i] = fma(u[i], 2, 1);
    atomic_add(u[i], 1);
    atomic_cas(u[i], 0, 1);
    constexpr int kStride = 16;
    u[i] = u[i] * kStride;
    const int64_t kBig = 1 << 20;
    u[i] = u[i] + kBig;
    y[i] = e + -1;
    y[i] = e + 7u;  // an in-range unsigned constant beside an int32_t
    Var<uint8_t> c;
    c = 200;
    c += 3;
    Var<uint32_t> n = 0u;
    n = 0;
    n += 1;
    // Integer types whose values all fit, also run-time ones.
    int16_t small = static_cast<int16_t>(k.get());
    uint8_t byte = static_cast<uint8_t>(k.get());
    uint32_t runtime_u32 = static_cast<uint32_t>(k.get());
    y[i] = e + small + byte;
    u[i] = i + runtime_u32 + byte;
    v = small;
    v += byte;
    Var<int64_t> wide = runtime_int;
    wide += runtime_u32;
    (void)wide;
    // A run-time int converted explicitly; a float converted explicitly.
    u[i] = i + uint32_t(runtime_int);
    y[i] = e + cast<int32_t>(2.5) + cast<int32_t>(runtime_double);
    y[i] = cast<int32_t>(f[i]);
    // Range bounds: constants take the proxy's type.
    For(range(0, i), [&](Expr<uint32_t> j) { u[j] = 0; });
    For(range(i, 64, 2), [&](Expr<uint32_t> j) { u[j] = 1; });
    For(range(s.get(), 10, 1), [&](Expr<int32_t> j) { y[cast<uint32_t>(j)] = j - 1; });
    For(range(0, 4), [&](Expr<int32_t> j) { y[cast<uint32_t>(j)] = j; });
    // Bools beside bools.
    flags[i] = true;
    flags[i] = flags[i] && true;
    If(e > 0 || false, [&] { y[i] = v; });
    Var<bool> found = false;
    found = e == 3;
    flags[i] = found;
    // Vector lanes, plane lanes.
    Vector<int32_t> lanes = vector_of<int32_t>(e, 1, 2, e);
    y[i] = lanes[0] + plane_shuffle_xor(e, 1) + plane_broadcast(e, 0);
#endif
  }
};

// The tile layer's numbers: `t * 2.0` on a float tile, `t + 2` on an integer one.
inline tile::Traced tiles() {
  using namespace kiln::tile;
  Cells g = cells({64}, {64});
  return trace("tile_narrowing", In<float>(g), In<int32_t>(g), Out<float>(g), Out<int32_t>(g),
               [](Param<float> x, Param<int32_t> n, Param<float> out, Param<int32_t> nout) {
                 Tile<float> t = load_cell(x);
                 Tile<int32_t> m = load_cell(n);
#if defined(KILN_CASE_tile_int_plus_float)
                 m = m + 2.5;  // error-here: tile_int_plus_float
#elif defined(KILN_CASE_tile_float_plus_int_tile)
                 m = 2.5 * m;  // error-here: tile_float_plus_int_tile
#elif defined(KILN_CASE_tile_full_int_float)
                 m = m + full<int32_t>({64}, 2.5);  // error-here: tile_full_int_float
#elif defined(KILN_CASE_tile_int_compare_float)
                 m = where(m > 0.5, m, m);  // error-here: tile_int_compare_float
#elif defined(KILN_CASE_tile_u8_full_300)
                 (void)full<uint8_t>({64}, 300);  // error-here: tile_u8_full_300
#else
                 t = t * 2.0 + 1 - 0.5f;
                 t = 2.0 / t;
                 m = m + 2;
                 m = 3 * m - full<int32_t>({64}, 1) + constant<int32_t>(4);
                 t = where(t > 0.0, t, zeros<float>({64}));
                 m = where(m > 0, m, zeros<int32_t>({64}));
#endif
                 store_cell(out, t);
                 store_cell(nout, m);
               });
}

int main() {
  (void)define<Narrowing>(kernel_id<Narrowing>(LaunchFacts{}, param_descs<Narrowing>()));
  (void)tiles();
}
