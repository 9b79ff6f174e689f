// C++ numbers in kernels (docs/decisions/026): the forms the front end allows record the constant
// the number is in the proxy's type (an int beside a float proxy is a float, a double beside f16
// rounds once to f16, an in-range constant of another integer type keeps its value), and
// cast<T>(number) follows the IR's cast rule. tests/compile_fail/narrowing.cpp has the refused forms.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "dsl/traced_cases.h"
#include "kiln/ir/text.h"

namespace kiln::test {
namespace {

// Each constant of the kernel, in order: its type and its value ("f32 1", "u8 255").
std::vector<std::string> constants(const ir::Kernel& k) {
  std::vector<std::string> out;
  ir::walk(k.body, [&](const ir::Op& op) {
    if (op.kind != ir::OpKind::Const) return;
    const ir::AttrValue* v = op.attr(ir::AttrKey::Value);
    std::string text;
    if (v->tag == ir::AttrValue::Tag::Float) {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.17g", v->f);
      text = buf;
    } else if (v->tag == ir::AttrValue::Tag::Bool) {
      text = v->i ? "true" : "false";
    } else {
      text = ir::is_signed_int(op.type.scalar) ? std::to_string(v->i) : std::to_string(static_cast<uint64_t>(v->i));
    }
    out.push_back(ir::to_string(op.type) + " " + text);
  });
  return out;
}

std::string g17(double d) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  return buf;
}

struct AllowedNumbers {
  static constexpr std::string_view name = "allowed_numbers";
  void operator()(Slice<float> f, Slice<f16> h, Slice<bf16> hb, Slice<uint8_t> b, Slice<uint32_t> u, Slice<int32_t> y,
                  Slice<uint64_t> w, Slice<bool> flags) const {
    auto i = absolute_pos();
    f[i] = f[i] + 1;      // an int beside f32: 1.0f
    f[i] = 2 * f[i];      // on the left too
    f[i] = f[i] * 0.1;    // a double beside f32: rounded to float
    h[i] = h[i] * 0.1;    // a double beside f16: rounded once to f16
    h[i] = h[i] + 2049;   // an int beside f16: one rounding, to even (2048)
    hb[i] = hb[i] + 257;  // an int beside bf16: 256
    b[i] = 255;           // the largest u8 constant
    u[i] = u[i] + 7;      // an int constant beside u32
    y[i] = y[i] + 7u;     // an in-range unsigned constant beside i32
    y[i] = y[i] + -1;
    w[i] = w[i] + 0xffffffffffffffffull;
    flags[i] = true;
    y[i] = cast<int32_t>(2.5);  // explicit: truncates toward zero
    y[i] = cast<int32_t>(-2.5);
    y[i] = cast<int32_t>(1e10);  // saturates, as the IR's cast does
    y[i] = cast<int32_t>(-1e10);
    y[i] = cast<int32_t>(std::nan(""));  // NaN gives 0
    u[i] = cast<uint32_t>(-1);           // integers wrap
    b[i] = cast<uint8_t>(300);
  }
};

TEST(Numbers, AllowedFormsRecordTheValueInTheProxysType) {
  ir::Kernel k = define<AllowedNumbers>(id_of<AllowedNumbers>({32, 1, 1}));
  std::vector<std::string> want = {
      "f32 1",
      "f32 2",
      "f32 " + g17(static_cast<double>(0.1f)),
      "f16 " + g17(static_cast<double>(static_cast<float>(f16(0.1)))),
      "f16 2048",
      "bf16 256",
      "u8 255",
      "u32 7",
      "i32 7",
      "i32 -1",
      "u64 18446744073709551615",
      "bool true",
      "i32 2",
      "i32 -2",
      "i32 2147483647",
      "i32 -2147483648",
      "i32 0",
      "u32 4294967295",
      "u8 44",
  };
  EXPECT_EQ(constants(k), want) << ir::print(k);
  // f16(0.1) is not 0.1 as a float: the constant was rounded to f16, not kept as written.
  EXPECT_NE(static_cast<float>(f16(0.1)), 0.1f);
}

// A Var made from a number of a type that fits, then given in-range constants of other types.
struct VarNumbers {
  static constexpr std::string_view name = "var_numbers";
  void operator()(Slice<uint8_t> out) const {
    Var<uint8_t> v;
    v = 200;             // an int constant in u8's range
    v += 55u;            // an unsigned one
    Var<float> acc = 3;  // an int into a float Var
    acc += 0.5;
    out[absolute_pos()] = v;
    out[absolute_pos() + 1u] = cast<uint8_t>(acc.get());
  }
};

TEST(Numbers, VarsTakeConstantsInRange) {
  ir::Kernel k = define<VarNumbers>(id_of<VarNumbers>({32, 1, 1}));
  EXPECT_EQ(constants(k), (std::vector<std::string>{"u8 200", "u8 55", "f32 3", "f32 0.5", "u32 1"})) << ir::print(k);
}

// Range bounds and steps that are C++ numbers take the proxy bound's type.
struct RangeNumbers {
  static constexpr std::string_view name = "range_numbers";
  void operator()(Slice<uint32_t> out, Scalar<int32_t> n) const {
    For(range(0, out.len(), 2), [&](Expr<uint32_t> j) { out[j] = 1u; });
    For(range(n.get(), 100u, 3u), [&](Expr<int32_t> j) { out[cast<uint32_t>(j)] = 2u; });
  }
};

TEST(Numbers, RangeBoundsTakeTheProxysType) {
  ir::Kernel k = define<RangeNumbers>(id_of<RangeNumbers>({32, 1, 1}));
  EXPECT_EQ(constants(k), (std::vector<std::string>{"u32 0", "u32 2", "u32 1", "i32 100", "i32 3", "u32 2"}))
      << ir::print(k);
}

}  // namespace
}  // namespace kiln::test
