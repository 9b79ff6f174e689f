// Seed 04's record-time refusals: a kernel that records, then three that the recorder refuses
// before any code exists (writing an In, adding tiles of two shapes, writing an Out other than
// through its cells), each printed as its message.
#include <cstdio>
#include <functional>

#include "kiln/error.h"
#include "kiln/tile.h"

using namespace kiln::tile;

using Body = std::function<void(Param<double>, Param<double>)>;

std::string try_record(const Body& body) {
  Cells g = cells({256}, {128});
  try {
    trace("k", In<double>(g), Out<double>(g), body);
  } catch (const kiln::Error& e) {
    return e.message();
  }
  return "recorded";
}

int main() {
  Body adds_one = [](Param<double> x, Param<double> out) { store_cell(out, load_cell(x) + constant<double>(1.0)); };
  Body writes_its_input = [](Param<double> x, Param<double>) { store_cell(x, load_cell(x)); };
  Body adds_two_shapes = [](Param<double> x, Param<double> out) {
    store_cell(out, load_cell(x) + broadcast(constant<double>(1.0), {64}));
  };
  Body stores_by_pointer = [](Param<double> x, Param<double> out) { store(out, block_id(0) * 128, load_cell(x)); };
  for (const Body* b : {&adds_one, &writes_its_input, &adds_two_shapes, &stores_by_pointer}) {
    std::printf("%s\n", try_record(*b).c_str());
  }
  return 0;
}
