// The typing rules (ir/type_rules.h) on their own: the schema's operand letters, the result each
// rule gives, and the words of its refusals, which the tracer and the verifier both report.
#include "kiln/ir/type_rules.h"

#include <gtest/gtest.h>

#include <array>
#include <set>
#include <vector>

namespace kiln::ir {
namespace {

Type f32() { return Type::scalar_of(Scalar::F32); }
Type i32() { return Type::scalar_of(Scalar::I32); }
Type u32() { return Type::scalar_of(Scalar::U32); }
Type boolean() { return Type::scalar_of(Scalar::Bool); }

TypeResult typed(OpKind k, std::vector<Type> operands, std::vector<Attr> attrs = {}, Type stated = Type::none()) {
  return result_type(TypeQuery{k, operands, attrs, stated, {}});
}

TEST(TypeRules, ResultsFollowTheOperands) {
  EXPECT_EQ(typed(OpKind::Add, {f32(), f32()}).type, f32());
  EXPECT_EQ(typed(OpKind::Lt, {Type::vector_of(Scalar::I32, 4), Type::vector_of(Scalar::I32, 4)}).type,
            Type::vector_of(Scalar::Bool, 4));
  EXPECT_EQ(typed(OpKind::Popcount, {Type::vector_of(Scalar::U8, 2)}).type, Type::vector_of(Scalar::U32, 2));
  EXPECT_EQ(typed(OpKind::IsNan, {f32()}).type, boolean());
  EXPECT_EQ(typed(OpKind::Load, {Type::buffer(f32(), Access::ReadOnly), u32()}).type, f32());
  EXPECT_EQ(typed(OpKind::Load, {Type::buffer(f32(), Access::ReadOnly), u32(), boolean()}).type, f32());
  EXPECT_TRUE(typed(OpKind::Store, {Type::buffer(f32(), Access::ReadWrite), u32(), f32()}).type.is_none());
  EXPECT_EQ(typed(OpKind::CubePos, {}).type, u32());
}

TEST(TypeRules, StatedResultsAreChecked) {
  EXPECT_EQ(typed(OpKind::Cast, {f32()}, {}, i32()).type, i32());
  EXPECT_EQ(typed(OpKind::Cast, {f32()}, {}, Type::vector_of(Scalar::I32, 2)).error,
            "casts f32 to vector<2 x i32>: lanes must agree");
  EXPECT_EQ(typed(OpKind::Const, {}, {Attr{AttrKey::Value, AttrValue::of_int(3)}}, f32()).error,
            "value does not match type f32");
  EXPECT_EQ(typed(OpKind::SharedAlloc, {}, {}, Type::shared(f32(), 0)).error,
            "result must be a shared array of length > 0");
}

TEST(TypeRules, TheSchemaChecksCountsAndOperandKinds) {
  EXPECT_EQ(typed(OpKind::Add, {f32()}).error, "takes 2 operands, has 1");
  EXPECT_EQ(typed(OpKind::Load, {Type::buffer(f32(), Access::ReadOnly)}).error, "takes 2 to 3 operands, has 1");
  EXPECT_EQ(typed(OpKind::VectorConstruct, {}).error, "takes 1 or more operands, has 0");
  EXPECT_EQ(typed(OpKind::VectorConstruct, {f32()}).error, "takes one of 2, 4, 8, 16 lanes, has 1");
  EXPECT_EQ(typed(OpKind::Load, {Type::buffer(f32(), Access::ReadOnly), f32()}).error,
            "the index must be a scalar integer, is f32");
  EXPECT_EQ(typed(OpKind::Load, {Type::buffer(f32(), Access::ReadOnly), u32(), u32()}).error,
            "the mask must be bool, is u32");
  EXPECT_EQ(typed(OpKind::PlaneShuffle, {f32(), i32()}).error, "the lane must be u32, is i32");
  EXPECT_EQ(typed(OpKind::VarLoad, {f32()}).error, "takes a var, not f32");
  EXPECT_EQ(typed(OpKind::Len, {f32()}).error, "takes an array (buffer, tensor, shared or local), not f32");
  EXPECT_EQ(typed(OpKind::Neg, {Type::buffer(f32(), Access::ReadOnly)}).error,
            "operand 0 is buffer<f32, ro>, not a value");
  // An operand is named after its place in the op's signature.
  EXPECT_EQ(typed(OpKind::For, {f32(), u32(), u32()}).error, "the lower bound must be a scalar integer, is f32");
  EXPECT_EQ(typed(OpKind::For, {u32(), u32(), f32()}).error, "the step must be a scalar integer, is f32");
  EXPECT_EQ(typed(OpKind::PlaneAll, {u32()}).error, "the predicate must be bool, is u32");
  EXPECT_EQ(typed(OpKind::CopyAsync, {Type::shared(f32(), 16), f32(),
                                      Type::buffer(Type::vector_of(Scalar::F32, 4), Access::ReadOnly), u32()})
                .error,
            "the shared index must be a scalar integer, is f32");
}

// Each op takes the attributes its row declares, each of its key's type, and needs those it does
// not mark optional.
TEST(TypeRules, AttributesAreWhatTheRowDeclares) {
  Type ro = Type::buffer(f32(), Access::ReadOnly);
  Type tensor = Type::tensor(f32(), 2, Access::ReadOnly);
  EXPECT_TRUE(typed(OpKind::Load, {ro, u32()}, {attr<AttrKey::Checked>(true)}).ok());
  EXPECT_EQ(typed(OpKind::Add, {f32(), f32()}, {attr<AttrKey::Dim>(1)}).error, "takes no attribute 'dim'");
  EXPECT_EQ(typed(OpKind::Load, {ro, u32()}, {attr<AttrKey::Lane>(0)}).error, "takes no attribute 'lane'");
  EXPECT_EQ(typed(OpKind::TensorShape, {tensor}).error, "needs the attribute 'dim'");
  EXPECT_EQ(typed(OpKind::TensorShape, {tensor}, {attr<AttrKey::Dim>(1)}).type, u32());
  EXPECT_EQ(typed(OpKind::Load, {ro, u32()}, {Attr{AttrKey::Checked, AttrValue::of_int(1)}}).error,
            "attribute 'checked' must be a flag");
  EXPECT_EQ(typed(OpKind::TensorShape, {tensor}, {Attr{AttrKey::Dim, AttrValue::of_ints({1})}}).error,
            "attribute 'dim' must be an integer");
  EXPECT_EQ(typed(OpKind::DebugPrint, {f32()}, {Attr{AttrKey::Format, AttrValue::of_int(3)}}).error,
            "attribute 'format' must be a string");
  EXPECT_EQ(typed(OpKind::DebugPrint, {f32()}).error, "needs the attribute 'format'");
  EXPECT_EQ(typed(OpKind::Const, {}, {}, f32()).error, "needs the attribute 'value'");
}

TEST(TypeRules, TypedAttributeAccessors) {
  Op op;
  op.kind = OpKind::TileView;
  op.set_attr(attr<AttrKey::Pad>(Pad::neg_inf));
  op.set_attr(attr<AttrKey::Extent>({1000, -1}));
  op.set_attr(attr<AttrKey::Checked>(false));
  EXPECT_EQ(op.get<AttrKey::Pad>(), Pad::neg_inf);
  EXPECT_EQ(std::vector<int64_t>(op.get<AttrKey::Extent>().begin(), op.get<AttrKey::Extent>().end()),
            (std::vector<int64_t>{1000, -1}));
  EXPECT_FALSE(op.get<AttrKey::Checked>());
  EXPECT_EQ(op.get<AttrKey::Dim>(7), 7) << "an absent attribute reads as the fallback";
  EXPECT_TRUE(op.get<AttrKey::Tile>().empty());
  Pad p = Pad::zero;
  EXPECT_TRUE(parse_pad("pos_inf", p));
  EXPECT_EQ(p, Pad::pos_inf);
  EXPECT_FALSE(parse_pad("inf", p));
  EXPECT_EQ(to_string(Pad::neg_zero), "neg_zero");
  EXPECT_FALSE(attr_value_fits(AttrType::Pad, AttrValue::of_int(5))) << "five padding values, numbered 0 to 4";
  EXPECT_FALSE(attr_value_fits(AttrType::Pad, AttrValue::of_string("zero")));
}

// Named operands read the operand their signature names, and the mask only where the op has one.
TEST(TypeRules, NamedOperands) {
  Op store;
  store.kind = OpKind::Store;
  store.operands = {10, 11, 12};
  EXPECT_EQ(store.operand(ops::Store::array), 10u);
  EXPECT_EQ(store.operand(ops::Store::index), 11u);
  EXPECT_EQ(store.operand(ops::Store::value), 12u);
  EXPECT_EQ(store.mask(), kNoValue);
  EXPECT_EQ(store.operand_or_none(ops::Store::mask), kNoValue);
  store.operands.push_back(13);
  EXPECT_EQ(store.mask(), 13u);
  EXPECT_EQ(written_array(store), 10u);
  Op loop;
  loop.kind = OpKind::For;
  loop.operands = {1, 2, 3, 4, 5};
  EXPECT_EQ(loop.operand(ops::For::step), 3u);
  EXPECT_EQ(std::vector<Value>(loop.operands_from(ops::For::inits).begin(), loop.operands_from(ops::For::inits).end()),
            (std::vector<Value>{4, 5}));
  EXPECT_EQ(std::vector<Value>(loop_inits(loop).begin(), loop_inits(loop).end()), (std::vector<Value>{4, 5}));
  // Positions line up across signatures where the names do: every access has array, index first.
  EXPECT_TRUE(slot_fits(OpKind::AtomicCas, ops::Store::index));
  EXPECT_TRUE(slot_fits(OpKind::TileLoadCell, ops::TileLoadAt::view));
  EXPECT_FALSE(slot_fits(OpKind::AtomicCas, ops::Store::value)) << "a cas's third operand is `expected`";
  EXPECT_FALSE(slot_fits(OpKind::Neg, ops::Binary::lhs)) << "a unary op's operand is `x`";
}

TEST(TypeRules, RulesRefuseInTheirOwnTerms) {
  EXPECT_EQ(typed(OpKind::Add, {f32(), i32()}).error, "operands have different types: f32 and i32");
  EXPECT_EQ(typed(OpKind::Shl, {f32(), f32()}).error, "takes integers, not f32");
  EXPECT_EQ(typed(OpKind::Exp, {i32()}).error, "takes floats, not i32");
  EXPECT_EQ(typed(OpKind::Neg, {u32()}).error, "not defined on u32");
  EXPECT_EQ(typed(OpKind::Store, {Type::buffer(f32(), Access::ReadOnly), u32(), f32()}).error,
            "writes read-only buffer<f32, ro>");
  EXPECT_EQ(result_type(TypeQuery{OpKind::Store,
                                  std::vector<Type>{Type::buffer(f32(), Access::ReadOnly), u32(), f32()},
                                  {},
                                  Type::none(),
                                  "x"})
                .error,
            "writes read-only buffer<f32, ro> 'x'");
}

// Every row's result letter agrees with what its rule gives for operands its schema accepts.
TEST(TypeRules, EveryRowHasARuleAndASchema) {
  for (int i = 0; i < op_kind_count(); ++i) {
    const OpInfo& info = op_info(static_cast<OpKind>(i));
    EXPECT_GE(info.min_operands(), 0) << info.name;
    EXPECT_EQ(info.has_mask(), info.operands().kinds.find('m') != std::string_view::npos) << info.name;
    // Every operand position has a name, and a signature's names differ from each other.
    const SignatureInfo& sig = info.operands();
    std::set<std::string_view> names;
    for (size_t j = 0; j < sig.kinds.size(); ++j) {
      if (sig.kinds[j] == '*' || sig.kinds[j] == '+') continue;
      EXPECT_FALSE(sig.operand_name(j).empty()) << info.name << " operand " << j;
      EXPECT_TRUE(names.insert(sig.operand_name(j)).second)
          << info.name << ": two operands named " << sig.operand_name(j);
    }
    if (info.has_mask()) {
      EXPECT_EQ(sig.operand_name(size_t(info.mask_operand())), "mask") << info.name;
    }
    EXPECT_EQ(info.region_label(static_cast<size_t>(info.regions)), "") << info.name;
    if (info.regions > 0) {
      EXPECT_NE(info.region_label(static_cast<size_t>(info.regions) - 1), "") << info.name;
    }
  }
}

// ---- the tile layer ----------------------------------------------------------------------------

Type reg(Scalar s, int rank, std::array<uint32_t, 4> shape) { return Type::tile(s, rank, shape); }
Type f32_tile(int rank, std::array<uint32_t, 4> shape) { return reg(Scalar::F32, rank, shape); }
Type global(Scalar s, int rank, std::array<uint32_t, 4> shape) {
  return Type::tile(s, rank, shape, MemorySpace::Global);
}
Attr ints(AttrKey k, std::vector<int64_t> v) { return Attr{k, AttrValue::of_ints(std::move(v))}; }
std::vector<Attr> view_attrs(std::vector<int64_t> extent, std::vector<int64_t> tile, std::vector<int64_t> along) {
  return {ints(AttrKey::Extent, std::move(extent)), ints(AttrKey::Tile, std::move(tile)),
          ints(AttrKey::Along, std::move(along)), attr<AttrKey::Pad>(Pad::zero)};
}

// Elementwise ops over register tiles of one shape: the element rule, lifted.
TEST(TileRules, ElementwiseOpsLiftToTiles) {
  Type t = f32_tile(2, {32, 64});
  EXPECT_EQ(typed(OpKind::Add, {t, t}).type, t);
  EXPECT_EQ(typed(OpKind::Exp, {t}).type, t);
  EXPECT_EQ(typed(OpKind::Lt, {t, t}).type, reg(Scalar::Bool, 2, {32, 64}));
  EXPECT_EQ(typed(OpKind::Select, {reg(Scalar::Bool, 2, {32, 64}), t, t}).type, t);
  EXPECT_EQ(typed(OpKind::Cast, {t}, {}, reg(Scalar::BF16, 2, {32, 64})).type, reg(Scalar::BF16, 2, {32, 64}));
  EXPECT_EQ(typed(OpKind::Add, {f32_tile(0, {}), f32_tile(0, {})}).type, f32_tile(0, {}));
}

TEST(TileRules, LiftingRefusesWhatTheRecorderWidens) {
  Type t = f32_tile(2, {32, 64});
  EXPECT_EQ(typed(OpKind::Add, {t, f32_tile(2, {32, 1})}).error,
            "operands have different shapes: tile<[32, 64] x f32, registers> and tile<[32, 1] x f32, registers>");
  EXPECT_EQ(typed(OpKind::Add, {f32_tile(1, {32}), t}).error,
            "operands have different shapes: tile<[32] x f32, registers> and tile<[32, 64] x f32, registers>");
  EXPECT_EQ(typed(OpKind::Add, {t, f32()}).error, "operand 1 is f32, not a tile like the others");
  EXPECT_EQ(typed(OpKind::Add, {t, reg(Scalar::F64, 2, {32, 64})}).error, "operands have different types: f32 and f64");
  EXPECT_EQ(typed(OpKind::Exp, {reg(Scalar::I32, 1, {64})}).error, "takes floats, not i32");
  EXPECT_EQ(typed(OpKind::Cast, {t}, {}, reg(Scalar::I32, 2, {64, 32})).error,
            "gives tile<[64, 32] x i32, registers> from tile<[32, 64] x f32, registers>");
  EXPECT_EQ(typed(OpKind::Add, {global(Scalar::F32, 1, {64}), global(Scalar::F32, 1, {64})}).error,
            "operand 0 is tile<[64] x f32, global>, not a value");
  // Ops that are not elementwise take no tile where a value goes.
  EXPECT_EQ(typed(OpKind::VectorSplat, {t}, {}, Type::vector_of(Scalar::F32, 4)).error,
            "operand 0 is tile<[32, 64] x f32, registers>, not a value");
}

TEST(TileRules, ViewsLoadsAndStores) {
  Type buf = Type::buffer(Type::scalar_of(Scalar::F64), Access::ReadOnly);
  Type view = global(Scalar::F64, 1, {128});
  EXPECT_EQ(typed(OpKind::TileView, {buf}, view_attrs({1000}, {128}, {0}), view).type, view);
  EXPECT_EQ(typed(OpKind::TileView, {buf}, view_attrs({-1}, {128}, {0}), view).type, view);
  EXPECT_EQ(typed(OpKind::TileView, {buf}, view_attrs({1000}, {128}, {0}), global(Scalar::F32, 1, {128})).error,
            "a view of buffer<f64, ro> is a global tile of f64, not tile<[128] x f32, global>");
  EXPECT_EQ(typed(OpKind::TileView, {buf}, view_attrs({1000}, {100}, {0}), global(Scalar::F64, 1, {100})).error,
            "tile dimensions are powers of two; [100] is not");
  EXPECT_EQ(typed(OpKind::TileView, {buf}, view_attrs({1000}, {64}, {0}), view).error,
            "tile 64 in dimension 0 is not the view's");
  EXPECT_EQ(typed(OpKind::TileView, {buf}, view_attrs({-1}, {128}, {-1}), view).error,
            "a dimension whose extent the grid gives must follow a grid axis");
  EXPECT_EQ(typed(OpKind::TileView, {buf}, view_attrs({1000}, {128}, {3}), view).error,
            "along names grid axis 0, 1 or 2, or -1 (free), not 3");
  EXPECT_EQ(typed(OpKind::TileLoadCell, {view}).type, reg(Scalar::F64, 1, {128}));
  EXPECT_EQ(typed(OpKind::TileLoadCell, {reg(Scalar::F64, 1, {128})}).error,
            "loads from a view (a global tile), not tile<[128] x f64, registers>");
  Type v2 = global(Scalar::F64, 2, {64, 32});
  EXPECT_EQ(typed(OpKind::TileLoadAt, {v2, i32(), i32()}).type, reg(Scalar::F64, 2, {64, 32}));
  EXPECT_EQ(typed(OpKind::TileLoadAt, {v2, i32()}).error,
            "takes one cell index per dimension of tile<[64, 32] x f64, global> (those that follow the grid are "
            "ignored), has 1");
  EXPECT_TRUE(typed(OpKind::TileStoreCell, {view, reg(Scalar::F64, 1, {128})}).type.is_none());
  EXPECT_TRUE(typed(OpKind::TileStoreCell, {view, reg(Scalar::F64, 1, {128})}).ok());
  EXPECT_EQ(typed(OpKind::TileStoreCell, {view, reg(Scalar::F64, 1, {64})}).error,
            "stores tile<[64] x f64, registers> into a cell of tile<[128] x f64, global>");
  EXPECT_EQ(typed(OpKind::TileStoreCell, {view, reg(Scalar::F32, 1, {128})}).error,
            "stores tile<[128] x f32, registers> into tile<[128] x f64, global>");
  EXPECT_TRUE(typed(OpKind::TileStoreSub, {view, reg(Scalar::F64, 1, {64}), i32()}).ok());
  EXPECT_EQ(typed(OpKind::TileStoreSub, {view, reg(Scalar::F64, 1, {256}), i32()}).error,
            "stores tile<[256] x f64, registers>, larger than a cell of tile<[128] x f64, global>");
  Type rw = Type::buffer(Type::scalar_of(Scalar::F64), Access::ReadWrite);
  Type t = reg(Scalar::F64, 2, {32, 32});
  EXPECT_EQ(typed(OpKind::TileLoad, {rw, i32()}, {ints(AttrKey::Strides, {1, 128})}, t).type, t);
  EXPECT_EQ(typed(OpKind::TileLoad, {rw, i32()}, {ints(AttrKey::Strides, {1})}, t).error,
            "strides need one entry per dimension of tile<[32, 32] x f64, registers>");
  EXPECT_TRUE(typed(OpKind::TileStore, {rw, i32(), t}, {ints(AttrKey::Strides, {1, 128})}).ok());
  EXPECT_EQ(typed(OpKind::TileStore, {buf, i32(), t}).error, "writes a read-write global array, not buffer<f64, ro>");
}

TEST(TileRules, ValuesReductionsAndProducts) {
  Type t = f32_tile(2, {32, 64});
  EXPECT_EQ(typed(OpKind::TileFull, {}, {Attr{AttrKey::Value, AttrValue::of_float(0.0)}}, t).type, t);
  EXPECT_EQ(typed(OpKind::TileFull, {}, {Attr{AttrKey::Value, AttrValue::of_int(0)}}, t).error,
            "value does not match type tile<[32, 64] x f32, registers>");
  EXPECT_EQ(typed(OpKind::TileBroadcast, {f32_tile(2, {32, 1})}, {ints(AttrKey::Shape, {32, 64})}).type, t);
  EXPECT_EQ(typed(OpKind::TileBroadcast, {f32_tile(0, {})}, {ints(AttrKey::Shape, {32, 64})}).type, t);
  EXPECT_EQ(typed(OpKind::TileBroadcast, {f32_tile(1, {32})}, {ints(AttrKey::Shape, {32, 64})}).error,
            "widens tile<[32] x f32, registers> to [32, 64]: ranks differ");
  EXPECT_EQ(typed(OpKind::TileBroadcast, {f32_tile(2, {2, 64})}, {ints(AttrKey::Shape, {32, 64})}).error,
            "widens tile<[2, 64] x f32, registers> to [32, 64]: only length-1 dimensions widen");
  auto reduce = [&](int64_t dim, bool keep) {
    return typed(OpKind::TileReduceMax, {t},
                 {Attr{AttrKey::Dim, AttrValue::of_int(dim)}, Attr{AttrKey::Keepdims, AttrValue::of_bool(keep)}});
  };
  EXPECT_EQ(reduce(1, true).type, f32_tile(2, {32, 1}));
  EXPECT_EQ(reduce(1, false).type, f32_tile(1, {32}));
  EXPECT_EQ(reduce(0, false).type, f32_tile(1, {64}));
  EXPECT_EQ(reduce(2, false).error, "dim 2 is not a dimension of tile<[32, 64] x f32, registers>");
  EXPECT_EQ(typed(OpKind::TileReduceSum, {f32_tile(0, {})}, {attr<AttrKey::Dim>(0)}).error,
            "reduces a register tile of rank 1 or more, not tile<[] x f32, registers>");
  EXPECT_EQ(typed(OpKind::TileTranspose, {t}).type, f32_tile(2, {64, 32}));
  EXPECT_EQ(typed(OpKind::TileTranspose, {f32_tile(1, {32})}).error,
            "transposes a register or shared tile of rank 2, not tile<[32] x f32, registers>");
  Type a16 = reg(Scalar::F16, 2, {64, 32}), b16 = reg(Scalar::F16, 2, {32, 16});
  EXPECT_EQ(typed(OpKind::TileMma, {a16, b16, f32_tile(2, {64, 16})}).type, f32_tile(2, {64, 16}));
  EXPECT_EQ(typed(OpKind::TileMma, {a16, b16, reg(Scalar::F16, 2, {64, 16})}).type, reg(Scalar::F16, 2, {64, 16}));
  EXPECT_EQ(typed(OpKind::TileMma, {a16, b16, reg(Scalar::F64, 2, {64, 16})}).error,
            "takes f16 x f16 into f64; the formats are f16 x f16 into f16 or f32, bf16 x bf16 into f32, f32 x f32 into "
            "f32 and f64 x f64 into f64 (tf32 and the 8-bit floats are not kiln element types)");
  EXPECT_EQ(typed(OpKind::TileMma, {a16, reg(Scalar::F16, 2, {16, 16}), f32_tile(2, {64, 16})}).error,
            "lhs tile<[64, 32] x f16, registers> has k = 32 and rhs tile<[16, 16] x f16, registers> has k = 16");
  EXPECT_EQ(typed(OpKind::TileMma, {a16, b16, f32_tile(2, {64, 64})}).error,
            "the accumulator tile<[64, 64] x f32, registers> is not m x n = 64 x 16");
  EXPECT_EQ(typed(OpKind::TileBlockId, {}, {Attr{AttrKey::Axis, AttrValue::of_int(1)}}).type, i32());
  EXPECT_EQ(typed(OpKind::TileBlockId, {}, {Attr{AttrKey::Axis, AttrValue::of_int(3)}}).error, "needs axis 0, 1 or 2");
}

// pipeline_loops' ops: a slot takes its array's shared layout, a read gives a register tile, copies
// and stages write arrays of their element with a shared layout, and products read shared factors.
TEST(TileRules, StagedTiles) {
  const Type u = Type::scalar_of(Scalar::U32), i = Type::scalar_of(Scalar::I32), b = Type::scalar_of(Scalar::Bool);
  const Type ring = Type::shared(Type::scalar_of(Scalar::BF16), 9216).with_layout(1);
  const Type slot = Type::tile(Scalar::BF16, 2, {64, 64, 0, 0}, MemorySpace::Shared).with_layout(1);
  EXPECT_EQ(typed(OpKind::TileSlot, {ring, u}, {}, slot).type, slot);
  EXPECT_EQ(typed(OpKind::TileSlot, {ring, u}, {}, slot.with_layout(2)).error,
            "a slot takes its array's shared layout: tile<[64, 64] x bf16, shared, #2> of shared<bf16, 9216, #1>");
  EXPECT_EQ(typed(OpKind::TileSlot, {ring, u}, {}, reg(Scalar::BF16, 2, {64, 64})).error,
            "a slot of shared<bf16, 9216, #1> is a shared tile of bf16 of rank 1 or 2, not tile<[64, 64] x bf16, "
            "registers>");
  EXPECT_EQ(typed(OpKind::TileRead, {slot}, {attr<AttrKey::Lanes>(8)}).type, reg(Scalar::BF16, 2, {64, 64}));
  EXPECT_EQ(typed(OpKind::TileRead, {slot}, {attr<AttrKey::Lanes>(3)}).error,
            "lanes is a vector width (1, 2, 4, 8, 16), not 3");
  EXPECT_EQ(typed(OpKind::TileRead, {reg(Scalar::BF16, 2, {64, 64})}).error,
            "reads a shared tile, not tile<[64, 64] x bf16, registers>");
  const Type view = Type::tile(Scalar::BF16, 2, {64, 64, 0, 0}, MemorySpace::Global);
  EXPECT_TRUE(typed(OpKind::TileCopyCell, {ring, u, view, b, i, i}).ok());
  EXPECT_EQ(typed(OpKind::TileCopyCell, {ring, u, view, b, i}).error,
            "takes one cell index per dimension of tile<[64, 64] x bf16, global>, has 1");
  EXPECT_EQ(typed(OpKind::TileCopyCell, {ring.with_layout(0), u, view, b, i, i}).error,
            "writes tile<[64, 64] x bf16, global> into a shared array of its element with a shared layout, not "
            "shared<bf16, 9216>");
  EXPECT_TRUE(typed(OpKind::TileStage, {ring, u, reg(Scalar::BF16, 2, {64, 64})}).ok());
  EXPECT_EQ(typed(OpKind::TileStage, {ring, u, slot}).error,
            "stages a register tile, not tile<[64, 64] x bf16, shared, #1>");
  EXPECT_EQ(typed(OpKind::TileMma, {slot, slot, f32_tile(2, {64, 64})}).type, f32_tile(2, {64, 64}));
  EXPECT_EQ(typed(OpKind::TileMma, {slot, slot, slot}).error,
            "accumulates into a register tile of rank 2, not tile<[64, 64] x bf16, shared, #1>");
  EXPECT_EQ(typed(OpKind::TileTranspose, {slot}).error,
            "transposes a shared tile into the stated shared tile's layout, stated none");
}

TEST(TileRules, VarsHoldRegisterTiles) {
  Type t = f32_tile(2, {64, 64});
  Type var = Type::var(t);
  EXPECT_EQ(typed(OpKind::VarLoad, {var}).type, t);
  EXPECT_TRUE(typed(OpKind::VarStore, {var, t}).ok());
  EXPECT_EQ(typed(OpKind::VarStore, {var, f32_tile(2, {64, 32})}).error,
            "stores tile<[64, 32] x f32, registers> into var<tile<[64, 64] x f32, registers>>");
}

// The mbarrier ops take a shared array of barriers, an index and a u32; a barrier is never a
// value, and only they reach one (docs/ir.md).
TEST(TypeRules, BarriersAreReachedByTheMbarrierOpsOnly) {
  const Type bars = Type::shared(Type::scalar_of(Scalar::Barrier), 4);
  EXPECT_TRUE(typed(OpKind::MbarrierInit, {bars, u32(), u32()}).type.is_none());
  EXPECT_TRUE(typed(OpKind::MbarrierArrive, {bars, u32()}).type.is_none());
  EXPECT_EQ(typed(OpKind::MbarrierTryWait, {bars, u32(), u32()}).type, boolean());
  EXPECT_EQ(typed(OpKind::MbarrierInit, {Type::shared(Type::scalar_of(Scalar::U64), 4), u32(), u32()}).error,
            "takes a shared array of barrier, not shared<u64, 4>");
  EXPECT_EQ(typed(OpKind::MbarrierArriveExpectTx, {bars, u32(), i32()}).error, "the count must be u32, is i32");
  EXPECT_EQ(typed(OpKind::MbarrierArrive, {Type::shared(Type::vector_of(Scalar::Barrier, 2), 4), u32()}).error,
            "takes a shared array of barrier, not shared<vector<2 x barrier>, 4>");
  EXPECT_EQ(typed(OpKind::MbarrierTryWait, {bars, u32(), i32()}).error, "the parity must be u32, is i32");
  const std::string refused = "a barrier is reached by the mbarrier ops only, not loaded, stored or atomically changed";
  EXPECT_EQ(typed(OpKind::Load, {bars, u32()}).error, refused);
  EXPECT_EQ(typed(OpKind::Store, {bars, u32(), Type::scalar_of(Scalar::U64)}).error, refused);
  EXPECT_EQ(typed(OpKind::Cast, {u32()}, {}, Type::scalar_of(Scalar::Barrier)).error,
            "gives barrier: a barrier is never a value, and its arrays are shared ones only");
  EXPECT_EQ(typed(OpKind::LocalAlloc, {}, {}, Type::local(Type::scalar_of(Scalar::Barrier), 2)).error,
            "gives local<barrier, 2>: a barrier is never a value, and its arrays are shared ones only");
  EXPECT_TRUE(typed(OpKind::SharedAlloc, {}, {}, bars).error.empty());
}

// The warp-group product: two shared arrays of one factor format, integer offsets, shape
// [64, n, k] with n 8 to 256 by 8 and k whole 32-byte steps, acc each unit's n / 2 f32; the fence
// and the wait name local f32 arrays (docs/ir.md, wgmma.*).
TEST(TypeRules, WarpGroupProducts) {
  const Type a = Type::shared(Type::scalar_of(Scalar::BF16), 4096), acc = Type::local(f32(), 32);
  auto shape = [](int64_t n, int64_t k) {
    return std::vector<Attr>{Attr{AttrKey::Shape, AttrValue::of_ints({64, n, k})}};
  };
  EXPECT_TRUE(typed(OpKind::WgmmaMmaAsync, {a, u32(), a, i32(), acc}, shape(64, 32)).error.empty());
  EXPECT_TRUE(typed(OpKind::WgmmaMmaAsync,
                    {Type::shared(Type::scalar_of(Scalar::F8E4M3), 64), u32(),
                     Type::shared(Type::scalar_of(Scalar::F8E4M3), 64), u32(), acc},
                    shape(64, 64))
                  .error.empty());
  EXPECT_EQ(typed(OpKind::WgmmaMmaAsync, {a, u32(), Type::shared(Type::scalar_of(Scalar::F16), 64), u32(), acc},
                  shape(64, 16))
                .error,
            "multiplies two shared arrays of one of bf16, f16, f32 (as tf32), f8e4m3 or f8e5m2, not shared<bf16, 4096> "
            "and shared<f16, 64>");
  EXPECT_EQ(typed(OpKind::WgmmaMmaAsync, {a, f32(), a, u32(), acc}, shape(64, 16)).error,
            "the a offset must be a scalar integer, is f32");
  EXPECT_EQ(typed(OpKind::WgmmaMmaAsync, {a, u32(), a, u32(), acc}, shape(64, 24)).error,
            "needs shape = [64, n, k] with n 8 to 256 in steps of 8 and k a multiple of 16 (32 bytes of bf16)");
  EXPECT_EQ(typed(OpKind::WgmmaMmaAsync, {a, u32(), a, u32(), acc}, shape(264, 16)).error,
            "needs shape = [64, n, k] with n 8 to 256 in steps of 8 and k a multiple of 16 (32 bytes of bf16)");
  EXPECT_EQ(typed(OpKind::WgmmaMmaAsync, {a, u32(), a, u32(), acc}, shape(128, 16)).error,
            "accumulates into each unit's local array of 64 f32, not local<f32, 32>");
  const Type frag = Type::local(Type::scalar_of(Scalar::BF16), 8);
  EXPECT_TRUE(typed(OpKind::WgmmaMmaAsyncFragA, {frag, a, u32(), acc}, shape(64, 16)).error.empty());
  EXPECT_EQ(typed(OpKind::WgmmaMmaAsyncFragA, {frag, a, u32(), acc}, shape(64, 32)).error,
            "each unit holds 16 elements of a (8 per 16 of k), not 8");
  EXPECT_EQ(
      typed(OpKind::WgmmaMmaAsyncFragA, {Type::local(f32(), 4), Type::shared(f32(), 64), u32(), acc}, shape(64, 8))
          .error,
      "multiplies a local array by a shared array, both of bf16 or f16, not local<f32, 4> and shared<f32, 64>");
  EXPECT_TRUE(typed(OpKind::WgmmaFence, {acc, frag}).error.empty());
  EXPECT_EQ(typed(OpKind::WgmmaWaitGroup, {frag}, {Attr{AttrKey::Pending, AttrValue::of_int(0)}}).error,
            "names accumulator arrays (local arrays of f32), not local<bf16, 8>");
  EXPECT_EQ(typed(OpKind::WgmmaWaitGroup, {acc}, {Attr{AttrKey::Pending, AttrValue::of_int(8)}}).error,
            "needs pending = 0 to 7");
  EXPECT_EQ(typed(OpKind::WgmmaWaitGroup, {a}, {Attr{AttrKey::Pending, AttrValue::of_int(0)}}).error,
            "names accumulator arrays (local arrays of f32), not shared<bf16, 4096>");
}

}  // namespace
}  // namespace kiln::ir
