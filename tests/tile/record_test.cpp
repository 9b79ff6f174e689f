// Recording tile kernels: what the recorder accepts and what it refuses, in seed 04's words.
#include <gtest/gtest.h>

#include "kiln/error.h"
#include "kiln/ir/text.h"
#include "kiln/tile.h"

namespace kiln::tile {
namespace {

std::string refusal(const std::function<void()>& f, std::string* kind = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (kind) *kind = e.kind();
    return e.message();
  }
  return "recorded";
}

auto vadd = [](Param<double> a, Param<double> b, Param<double> out) { store_cell(out, load_cell(a) + load_cell(b)); };

TEST(TileRecord, VaddRecordsViewsLoadsAddAndStore) {
  Cells g = cells({256}, {128});
  Traced t = trace("vadd", In<double>(g), In<double>(g), Out<double>(g), vadd);
  std::string text = ir::print(t.program->kernel());
  EXPECT_NE(text.find("tile.view"), std::string::npos) << text;
  EXPECT_NE(text.find("tile.load_cell"), std::string::npos) << text;
  EXPECT_NE(text.find("tile.store_cell"), std::string::npos) << text;
  EXPECT_NE(text.find("add"), std::string::npos) << text;
  ASSERT_TRUE(t.program->grid().has_value());
  EXPECT_EQ((*t.program->grid())[0], 2u);
  // f64 cells of 128 over an extent of 256: two lanes per 16-byte vector.
  EXPECT_EQ(t.program->kernel().params[0].type.width, 2);
}

TEST(TileRecord, SeedRejections) {
  Cells g = cells({256}, {128});
  auto try_record = [&](auto body) { return refusal([&] { trace("k", In<double>(g), Out<double>(g), body); }); };
  EXPECT_EQ(
      try_record([](Param<double> x, Param<double> out) { store_cell(out, load_cell(x) + constant<double>(1.0)); }),
      "recorded");
  std::string kind;
  EXPECT_EQ(refusal(
                [&] {
                  trace("k", In<double>(g), Out<double>(g),
                        [](Param<double> x, Param<double>) { store_cell(x, load_cell(x)); });
                },
                &kind),
            "kernel `k`: op #4 `store_cell`: parameter 0 is an In, and nothing writes an In");
  EXPECT_EQ(kind, "record.in_written");
  EXPECT_EQ(try_record([](Param<double> x, Param<double> out) {
              store_cell(out, load_cell(x) + broadcast(constant<double>(1.0), {64}));
            }),
            "kernel `k`: op #6 `addf`: rhs is tile<64xf64>, declared tile<128xf64>");
  EXPECT_EQ(try_record([](Param<double> x, Param<double> out) { store(out, block_id(0) * 128, load_cell(x)); }),
            "kernel `k`: op #7 `store`: parameter 1 is an Out, which is written through its cells alone (store_cell, "
            "store_sub); a parameter written any other way is a Shared");
}

}  // namespace
}  // namespace kiln::tile
