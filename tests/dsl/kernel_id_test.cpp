// KernelId: what makes two launches compile differently. Seed 01's quiz (four launches of add
// compile three times), then one field at a time: vector width, cube_dim, the template's element
// type, address type, aliasing, tensor rank, comptime values; a Scalar argument is not in the id.
#include <gtest/gtest.h>

#include <string>
#include <unordered_map>
#include <unordered_set>

#include "dsl/traced_cases.h"
#include "kiln/ir/text.h"
#include "support/expect_error.h"

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
  EXPECT_EQ(id.param_count, 3) << "x, y, out: relu is a comptime value, no kernel parameter";
  EXPECT_EQ(id.element[0], ir::Scalar::F32);
  EXPECT_EQ(id.element[2], ir::Scalar::F32);
  EXPECT_EQ(id.comptime_count, 1);
  EXPECT_EQ(id.comptime[0].type, ir::Scalar::Bool);
  EXPECT_EQ(id.comptime[0].bits, 1u);
  std::string text = id.to_string();
  EXPECT_EQ(text.rfind("add{kernel_hash=", 0), 0u) << text;
  for (const char* part :
       {"cube_dim=[6, 1, 1], mode=checked, address=u32", "vector_width=1, param_count=3, comptime_count=1",
        "element=[f32, f32, f32]", "comptime=[true]", ", hash="}) {
    EXPECT_NE(text.find(part), std::string::npos) << part << " in " << text;
  }
  EXPECT_EQ(text.find("alias"), std::string::npos) << "an array with nothing set is left out: " << text;
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
  KernelId u64 = kernel_id<Classify>(LaunchFacts{{64, 1, 1}, ir::ExecMode::Checked, ir::AddressType::U64},
                                     param_descs<Classify>());
  expect_different(base, u64);
  expect_different(base, id_of<Classify>({64, 1, 1}, 1, ir::ExecMode::Unchecked));
  EXPECT_EQ(define<Classify>(u64).facts.address, ir::AddressType::U64);
}

TEST(KernelId, AliasingIsPartOfTheId) {
  // Aliasing comes from the memory the descriptors show: parameters whose byte ranges overlap in
  // one memory record the lowest other one.
  auto with_memory = [](std::array<uint64_t, 3> memory, std::array<uint64_t, 3> begin) {
    std::vector<ParamDesc> d = add_descs(false);
    for (size_t i = 0; i < 3; ++i) {
      d[i].memory = memory[i];
      d[i].begin = begin[i];
      d[i].end = begin[i] + 24;
    }
    return kernel_id<Add>(LaunchFacts{{6, 1, 1}}, d);
  };
  KernelId plain = add_id(ir::ExecMode::Checked, false);
  expect_same(plain, with_memory({1, 2, 3}, {0, 0, 0}));
  KernelId in_place = with_memory({1, 2, 1}, {0, 0, 0});  // out shares x's memory
  expect_different(plain, in_place);
  EXPECT_EQ(in_place.alias[0], 3);
  EXPECT_EQ(in_place.alias[1], 0);
  EXPECT_EQ(in_place.alias[2], 1);
  KernelId other_alias = with_memory({1, 2, 2}, {0, 0, 0});  // out shares y's memory
  expect_different(in_place, other_alias);
  EXPECT_EQ(other_alias.alias[2], 2);
  // One memory, ranges that only touch: no aliasing.
  expect_same(plain, with_memory({1, 1, 1}, {0, 24, 48}));
  // Overlapping by one element is aliasing.
  EXPECT_EQ(with_memory({1, 1, 1}, {0, 20, 48}).alias[1], 1);
}

TEST(KernelId, TensorRankIsPartOfTheId) {
  KernelId rank2 = transpose_id();
  KernelId rank3 = transpose_id(3);
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
  std::vector<ParamDesc> d = param_descs<Scaled>();
  d[1].comptime = comptime_bits(k);
  d[2].comptime = comptime_bits(f);
  d[3].comptime = comptime_bits(op);
  return kernel_id<Scaled>(LaunchFacts{}, d);
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

// The id's parameter arrays are by kernel parameter: a comptime parameter before a buffer takes
// no slot (the bug f552bf0 fixed was a binding shifted by one).
struct ComptimeBetween {
  static constexpr std::string_view name = "comptime_between";
  void operator()(Comptime<int> scale, TensorArg<const double> x, Comptime<bool> negate, Slice<float> y) const {
    Expr<double> v = x[absolute_pos() * x.stride(1)] * double(scale.get());
    y[absolute_pos()] = cast<float>(negate ? -v : v);
  }
};

TEST(KernelId, ParametersAreIndexedByKernelParameter) {
  const KernelSignature& sig = signature_of<ComptimeBetween>();
  EXPECT_EQ(sig.count, 4);
  EXPECT_EQ(sig.ir_count, 2);
  EXPECT_EQ(sig.params[1].ir_index, 0);
  EXPECT_EQ(sig.params[3].ir_index, 1);
  EXPECT_EQ(sig.params[0].ir_index, -1);
  std::vector<ParamDesc> d = param_descs<ComptimeBetween>(4);
  d[0].comptime = comptime_bits(3);
  d[1].rank = 2;
  d[2].comptime = comptime_bits(true);
  d[1].memory = d[3].memory = 9;
  d[1].end = d[3].end = 64;
  KernelId id = kernel_id<ComptimeBetween>(LaunchFacts{{32, 1, 1}}, d);
  EXPECT_EQ(id.param_count, 2);
  EXPECT_EQ(id.element[0], ir::Scalar::F64);
  EXPECT_EQ(id.element[1], ir::Scalar::F32);
  EXPECT_EQ(id.rank[0], 2);
  EXPECT_EQ(id.rank[1], 0);
  EXPECT_EQ(id.alias[0], 2);
  EXPECT_EQ(id.alias[1], 1);
  EXPECT_EQ(id.comptime_count, 2);
  EXPECT_EQ(id.comptime[0], comptime_bits(int64_t(3)));
  EXPECT_EQ(id.comptime[1], comptime_bits(true));
  // The traced kernel takes its facts by kernel parameter, with no translation.
  ir::Kernel k = define<ComptimeBetween>(id);
  ASSERT_EQ(k.params.size(), 2u);
  EXPECT_EQ(k.params[0].type.rank, 2);
  EXPECT_EQ(k.facts.alias, (std::vector<uint8_t>{2, 1}));
}

// Descriptors that disagree with the signature are refused, naming the parameter.
TEST(KernelId, DescriptorsMustMatchTheSignature) {
  std::vector<ParamDesc> d = add_descs(false);
  d.pop_back();
  Error e = expect_error([&] { kernel_id<Add>(LaunchFacts{}, d); }, "launch.arity");
  EXPECT_NE(e.message().find("kernel 'add' takes 4 arguments (x: Slice<const f32>, y: Slice<const f32>, "
                             "out: Slice<f32>, relu: Comptime<bool>), 3 were given"),
            std::string::npos)
      << e.message();
  d = add_descs(false);
  d[3].kind = ParamKind::Scalar;
  e = expect_error([&] { kernel_id<Add>(LaunchFacts{}, d); }, "launch.kind_mismatch");
  EXPECT_NE(e.message().find("argument 3 (relu: Comptime<bool>): described as a scalar, the parameter is a comptime "
                             "value"),
            std::string::npos)
      << e.message();
  d = add_descs(false);
  d[1].element = ir::Scalar::F64;
  e = expect_error([&] { kernel_id<Add>(LaunchFacts{}, d); }, "launch.type_mismatch");
  EXPECT_NE(e.message().find("argument 1 (y: Slice<const f32>): described as f64, the parameter takes f32"),
            std::string::npos)
      << e.message();
  // A vector parameter's width is the launch's.
  std::vector<ParamDesc> s = param_descs<Saxpy<float>>(4);
  EXPECT_NO_THROW(kernel_id<Saxpy<float>>(LaunchFacts{{4, 1, 1}, ir::ExecMode::Checked, ir::AddressType::U32, 4}, s));
  const LaunchFacts width2{{4, 1, 1}, ir::ExecMode::Checked, ir::AddressType::U32, 2};
  e = expect_error([&] { kernel_id<Saxpy<float>>(width2, s); }, "launch.type_mismatch");
  EXPECT_NE(e.message().find("described as vector<4 x f32>, the parameter takes vector<2 x f32>"), std::string::npos)
      << e.message();
}

}  // namespace
}  // namespace kiln::test
