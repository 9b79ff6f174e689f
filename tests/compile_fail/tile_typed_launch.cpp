// Must not compile: a tile entry's typed launch knows each parameter's element type, so a buffer of
// another type, a wrong count, a raw Handle or an atomic on an element type atomics do not combine
// is a compile error. Each case is one mistake, built with -DKILN_CASE_<name>; the control compiles.
#include "kiln/kiln.h"
#include "kiln/tile.h"

using namespace kiln;
using tile::Param;

int main() {
  Client c = Device::cpu().client();
  tile::Cells g = tile::cells({256}, {128});
  auto vadd = tile::trace("vadd", tile::In<double>(g), tile::In<double>(g), tile::Out<double>(g),
                          [](Param<double> a, Param<double> b, Param<double> out) {
                            tile::store_cell(out, tile::load_cell(a) + tile::load_cell(b));
                          });
  Buffer<double> a = c.buffer<double>(256), out = c.buffer<double>(256);
  Buffer<float> f = c.buffer<float>(256);
  Handle h = c.empty<double>(256);
#if defined(KILN_CASE_wrong_element)
  vadd.entry.launch(c, a, f, out);  // error-here: wrong_element
#elif defined(KILN_CASE_too_few)
  vadd.entry.launch(c, a, out);  // error-here: too_few
#elif defined(KILN_CASE_too_many)
  vadd.entry.launch(c, a, a, out, out);  // error-here: too_many
#elif defined(KILN_CASE_raw_handle)
  vadd.entry.launch(c, a, h, out);  // error-here: raw_handle
#elif defined(KILN_CASE_atomic_max_float)
  tile::trace("m", tile::In<float>(g), tile::Shared<float>(), [](Param<float> x, Param<float> s) {
    tile::atomic_max(s, tile::Index(0), tile::load_cell(x));  // error-here: atomic_max_float
  });
#elif defined(KILN_CASE_atomic_add_half)
  tile::trace("m", tile::In<f16>(g), tile::Shared<f16>(), [](Param<f16> x, Param<f16> s) {
    tile::atomic_add(s, tile::Index(0), tile::load_cell(x));  // error-here: atomic_add_half
  });
#elif defined(KILN_CASE_scatter_float_offsets)
  tile::trace("m", tile::In<float>(g), tile::Shared<float>(), [](Param<float> x, Param<float> s) {
    tile::scatter(s, tile::load_cell(x), tile::load_cell(x));  // error-here: scatter_float_offsets
  });
#else
  vadd.entry.launch(c, a, a, out);
  vadd.entry.launch(c, a, a, out, tile::Grid{2, 1, 1});
  vadd.entry.launch(c, {a, h, out});  // the untyped list form takes handles, checked at run time
  (void)f;
  tile::trace("m", tile::In<int32_t>(g), tile::In<float>(g), tile::Shared<float>(), tile::Shared<uint32_t>(),
              [](Param<int32_t> at, Param<float> x, Param<float> s, Param<uint32_t> u) {
                tile::atomic_add(s, tile::Index(0), tile::load_cell(x));
                tile::atomic_add(s, tile::load_cell(at), tile::load_cell(x));
                tile::atomic_max(u, tile::load_cell(at), tile::full<uint32_t>({128}, 3u));
                tile::scatter(s, tile::load_cell(at), tile::load_cell(x));
              });
#endif
  return 0;
}
