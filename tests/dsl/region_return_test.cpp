// A C++ `return` inside the lambda of If/For/While runs while tracing: it ends the recording of
// that region there (the ops after it are not recorded, for every unit, whatever the run-time
// condition), and the kernel goes on after the region. It is not a run-time early exit; docs/index.md
// says what to write instead (Break, Continue, Terminate, or an If around the rest).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dsl/traced_cases.h"
#include "kiln/ir/text.h"

namespace kiln::test {
namespace {

// The stored constants of each region, as "<where>:<value>", where is "top", "then" or "body".
void stores(const ir::Kernel& k, const ir::Region& r, const std::string& where, std::vector<std::string>& out) {
  for (const ir::Op& op : r.ops) {
    if (op.kind == ir::OpKind::Store) {
      // The stored value is a constant recorded just before: find it.
      for (const ir::Op& c : r.ops) {
        if (c.kind == ir::OpKind::Const && c.result == op.operand(ir::ops::Store::value)) {
          out.push_back(where + ":" + std::to_string(c.attr(ir::AttrKey::Value)->i));
        }
      }
    }
    std::string inner = op.kind == ir::OpKind::If ? "then" : op.kind == ir::OpKind::For ? "body" : where;
    for (const ir::Region& sub : op.regions) stores(k, sub, inner, out);
  }
}
std::vector<std::string> stores(const ir::Kernel& k) {
  std::vector<std::string> out;
  stores(k, k.body, "top", out);
  return out;
}

struct ReturnInIf {
  static constexpr std::string_view name = "return_in_if";
  void operator()(Slice<int32_t> out, Comptime<bool> early) const {
    auto i = absolute_pos();
    If(i < out.len(), [&] {
      out[i] = 1;
      if (early) return;  // a C++ return: leaves the lambda while tracing
      out[i] = 2;
    });
    out[i] = 3;  // recorded either way: the return left the lambda, not the kernel
  }
};

TEST(RegionReturn, AReturnInAnIfBodyEndsTheRecordingOfTheBody) {
  std::vector<ParamDesc> d = param_descs<ReturnInIf>();
  d[1].comptime = comptime_bits(true);
  ir::Kernel k = define<ReturnInIf>(kernel_id<ReturnInIf>(LaunchFacts{{32, 1, 1}}, d));
  // should record the then-region up to the return, and the store after the If
  EXPECT_EQ(stores(k), (std::vector<std::string>{"then:1", "top:3"})) << ir::print(k);

  d[1].comptime = comptime_bits(false);
  ir::Kernel whole = define<ReturnInIf>(kernel_id<ReturnInIf>(LaunchFacts{{32, 1, 1}}, d));
  EXPECT_EQ(stores(whole), (std::vector<std::string>{"then:1", "then:2", "top:3"})) << ir::print(whole);
}

// In a loop body the ops after a return are missing from every iteration: it is neither Break
// nor Continue, which act per unit at run time.
struct ReturnInFor {
  static constexpr std::string_view name = "return_in_for";
  void operator()(Slice<int32_t> out) const {
    For(range(0u, out.len()), [&](Expr<uint32_t> j) {
      out[j] = 4;
      return;
      out[j] = 5;  // never recorded
    });
    out[0u] = 6;
  }
};

TEST(RegionReturn, AReturnInALoopBodyDropsTheRestOfTheBodyFromEveryIteration) {
  ir::Kernel k = define<ReturnInFor>(id_of<ReturnInFor>({32, 1, 1}));
  EXPECT_EQ(stores(k), (std::vector<std::string>{"body:4", "top:6"})) << ir::print(k);
}

}  // namespace
}  // namespace kiln::test
