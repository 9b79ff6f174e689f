// KernelId: what makes two launches compile differently. Seed 01's quiz (four launches of add
// compile three times), then one field at a time: vector width, cube_dim, the template's element
// type, address type, aliasing, tensor rank, comptime values; a Scalar argument is not in the id.
#include <gtest/gtest.h>

#include <string>
#include <unordered_map>
#include <unordered_set>

#include "dsl/traced_cases.h"
#include "kiln/ir/text.h"

namespace kiln::test {
namespace {

// Equal ids must also hash equal, through the hasher the cache uses.
void expect_same(const KernelId& a, const KernelId& b) {
  EXPECT_TRUE(a == b) << a.to_string() << " vs " << b.to_string();
  EXPECT_EQ(a.hash, b.hash);
  EXPECT_EQ(KernelIdHash{}(a), KernelIdHash{}(b));
}
void expect_different(const KernelId& a, const KernelId& b) {
  EXPECT_FALSE(a == b) << a.to_string() << " vs " << b.to_string();
  EXPECT_FALSE(b == a);
  EXPECT_NE(a.hash, b.hash) << "distinct ids should not collide here";
}

TEST(KernelId, SeedOneFourLaunchesOfAddAreThreeIds) {
  KernelId a = add_id(ir::ExecMode::Checked, false);
  KernelId b = add_id(ir::ExecMode::Unchecked, false);
  KernelId c = add_id(ir::ExecMode::Checked, true);
  KernelId d = add_id(ir::ExecMode::Checked, false);
  expect_same(a, d);
  expect_different(a, b);
  expect_different(a, c);
  expect_different(b, c);

  // A cache keyed by the id traces on a miss only: three traces for the four launches.
  std::unordered_map<KernelId, std::string, KernelIdHash> cache;
  int traces = 0;
  for (const KernelId& id : {a, b, c, d}) {
    if (cache.find(id) == cache.end()) {
      cache.emplace(id, ir::print(define<Add>(id)));
      ++traces;
    }
  }
  EXPECT_EQ(traces, 3);
  EXPECT_EQ(cache.at(a), cache.at(d));
  EXPECT_NE(cache.at(a), cache.at(b)) << "the mode is in the traced kernel's facts";
  EXPECT_NE(cache.at(a), cache.at(c));
}

TEST(KernelId, IdOfAddRecordsItsParameters) {
  KernelId id = add_id(ir::ExecMode::Checked, true);
  EXPECT_EQ(id.name, "add");
  EXPECT_EQ(id.param_count, 4);
  EXPECT_EQ(id.element[0], ir::Scalar::F32);
  EXPECT_EQ(id.element[2], ir::Scalar::F32);
  EXPECT_EQ(id.comptime_count, 1);
  EXPECT_EQ(id.comptime[0].type, ir::Scalar::Bool);
  EXPECT_EQ(id.comptime[0].bits, 1u);
  std::string text = id.to_string();
  EXPECT_EQ(text.rfind("add{mode=checked, cube_dim=[6,1,1], vector=1", 0), 0u) << text;
  EXPECT_NE(text.find("comptime0=true"), std::string::npos) << text;
}

TEST(KernelId, VectorWidthIsPartOfTheId) {
  expect_different(id_of<Saxpy<float>>({4, 1, 1}, 4), id_of<Saxpy<float>>({4, 1, 1}, 2));
  expect_same(id_of<Saxpy<float>>({4, 1, 1}, 4), id_of<Saxpy<float>>({4, 1, 1}, 4));
}

TEST(KernelId, CubeDimIsPartOfTheId) {
  expect_different(id_of<Saxpy<float>>({4, 1, 1}, 4), id_of<Saxpy<float>>({8, 1, 1}, 4));
  expect_different(id_of<Saxpy<float>>({4, 2, 1}, 4), id_of<Saxpy<float>>({2, 4, 1}, 4));
}

TEST(KernelId, TemplateElementTypeIsPartOfTheId) {
  KernelId f = id_of<Saxpy<float>>({4, 1, 1}, 4);
  KernelId d = id_of<Saxpy<double>>({4, 1, 1}, 4);
  expect_different(f, d);
  EXPECT_NE(*f.type, *d.type);
  EXPECT_EQ(f.name, d.name) << "one kernel name, two instantiations";
  EXPECT_EQ(f.element[1], ir::Scalar::F32);
  EXPECT_EQ(d.element[1], ir::Scalar::F64);
  EXPECT_EQ(f.element[0], ir::Scalar::F32) << "a stays Scalar<float> in both";
  // The traced kernels differ in their buffers' element type.
  EXPECT_NE(ir::print(define<Saxpy<float>>(f)), ir::print(define<Saxpy<double>>(d)));
}

TEST(KernelId, ModeAndAddressTypeArePartOfTheId) {
  KernelId base = id_of<Classify>({64, 1, 1});
  KernelId u64 = base;
  u64.address = ir::AddressType::U64;
  u64.finalize();
  expect_different(base, u64);
  expect_different(base, id_of<Classify>({64, 1, 1}, 1, ir::ExecMode::Unchecked));
  EXPECT_EQ(define<Classify>(u64).facts.address, ir::AddressType::U64);
}

TEST(KernelId, AliasingIsPartOfTheId) {
  KernelId plain = add_id(ir::ExecMode::Checked, false);
  KernelId in_place = plain;
  in_place.alias[2] = 1;  // out shares x's memory
  in_place.finalize();
  expect_different(plain, in_place);
  KernelId other_alias = plain;
  other_alias.alias[2] = 2;  // out shares y's memory
  other_alias.finalize();
  expect_different(in_place, other_alias);
}

TEST(KernelId, TensorRankIsPartOfTheId) {
  KernelId rank2 = transpose_id();
  KernelId rank3 = rank2;
  rank3.rank[0] = 3;
  rank3.finalize();
  expect_different(rank2, rank3);
  ir::Kernel k = define<Transpose>(rank3);
  EXPECT_EQ(k.params[0].type.rank, 3);
  EXPECT_EQ(k.params[1].type.rank, 2);
}

TEST(KernelId, KernelTypeIsPartOfTheId) {
  // Same parameters, same launch facts, different kernels.
  expect_different(id_of<Classify>({32, 1, 1}), id_of<LocalSum>({32, 1, 1}));
}

// Comptime values of every kind enter the id by value.
struct Scaled {
  enum class Op : int { Double, Square };
  static constexpr std::string_view name = "scaled";
  static constexpr std::array<std::string_view, 4> param_names{"x", "k", "f", "op"};
  void operator()(Slice<float> x, Comptime<int> k, Comptime<float> f, Comptime<Op> op) const {
    Expr<float> v = x[absolute_pos()];
    Expr<float> scaled = v * static_cast<float>(k.get()) * f.get();
    if (op == Op::Double) x[absolute_pos()] = scaled + scaled;
    else x[absolute_pos()] = scaled * scaled;
  }
};

KernelId scaled_id(int k, float f, Scaled::Op op) {
  KernelId id = kernel_id_base<Scaled>();
  id.comptime_count = 3;
  id.comptime[0] = comptime_bits(k);
  id.comptime[1] = comptime_bits(f);
  id.comptime[2] = comptime_bits(op);
  id.finalize();
  return id;
}

TEST(KernelId, ComptimeIntsFloatsAndEnumsEnterTheIdByValue) {
  KernelId base = scaled_id(3, 1.5f, Scaled::Op::Double);
  expect_same(base, scaled_id(3, 1.5f, Scaled::Op::Double));
  expect_different(base, scaled_id(4, 1.5f, Scaled::Op::Double));
  expect_different(base, scaled_id(3, 2.5f, Scaled::Op::Double));
  expect_different(base, scaled_id(3, 1.5f, Scaled::Op::Square));
  expect_different(scaled_id(0, 0.0f, Scaled::Op::Double), scaled_id(0, -0.0f, Scaled::Op::Double));
  ir::Kernel k = define<Scaled>(base);
  ASSERT_EQ(k.facts.comptime.size(), 3u);
  EXPECT_EQ(k.facts.comptime[0], (std::pair<std::string, std::string>{"k", "3"}));
  EXPECT_EQ(k.facts.comptime[1].first, "f");
  EXPECT_EQ(k.facts.comptime[2], (std::pair<std::string, std::string>{"op", "0"}));
  EXPECT_EQ(ir::print(k).find("const 3.0 : f32") != std::string::npos, true) << "k = 3 is a constant in the IR";
}

TEST(KernelId, ComptimeBitsRoundTrip) {
  EXPECT_EQ(comptime_value<int>(comptime_bits(-7)), -7);
  EXPECT_EQ(comptime_value<uint64_t>(comptime_bits(~uint64_t{0})), ~uint64_t{0});
  EXPECT_EQ(comptime_value<double>(comptime_bits(0.1)), 0.1);
  EXPECT_EQ(comptime_value<bool>(comptime_bits(true)), true);
  EXPECT_EQ(comptime_value<Scaled::Op>(comptime_bits(Scaled::Op::Square)), Scaled::Op::Square);
  EXPECT_TRUE(comptime_bits(Scaled::Op::Square).is_enum);
}

// A Scalar<T> argument is run-time: the id has no slot for its value (only its element type), and
// the traced kernel takes it as a parameter instead of baking it in.
TEST(KernelId, ScalarArgumentIsNotPartOfTheId) {
  KernelId id = id_of<Saxpy<float>>({4, 1, 1}, 4);
  EXPECT_EQ(id.comptime_count, 0);
  EXPECT_EQ(id.element[0], ir::Scalar::F32);
  ir::Kernel k = define<Saxpy<float>>(id);
  ASSERT_FALSE(k.params.empty());
  EXPECT_EQ(k.params[0].name, "a");
  EXPECT_EQ(k.params[0].type, ir::Type::scalar_of(ir::Scalar::F32));
  int uses = 0;
  ir::walk(k.body, [&](const ir::Op& op) {
    for (ir::Value v : op.operands) uses += v == k.params[0].value ? 1 : 0;
    EXPECT_NE(op.kind, ir::OpKind::Const) << "no constant stands for a";
  });
  EXPECT_GE(uses, 1) << "the kernel reads a at run time";
}

}  // namespace
}  // namespace kiln::test
