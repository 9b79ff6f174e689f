// Every elementwise op against a host reference, over element types, broadcast shapes and views
// (transposed, sliced, expanded, offset), on every device; and where the result goes.
#include <gtest/gtest.h>

#include <functional>

#include "support.h"

namespace kiln::test {
namespace {

using BinaryFn = std::function<Tensor(Operand, Operand)>;
using HostBinary = std::function<double(double, double)>;

// The host result of a binary op on broadcast operands, rounded to `t`.
HostTensor host_binary(DType t, const HostTensor& a, const HostTensor& b, const HostBinary& f) {
  Shape shape(std::max(a.shape.size(), b.shape.size()));
  for (size_t i = 0; i < shape.size(); ++i) {
    auto dim = [&](const Shape& s) { return i + s.size() >= shape.size() ? s[i + s.size() - shape.size()] : 1; };
    shape[i] = std::max(dim(a.shape), dim(b.shape));
  }
  auto at = [&](const HostTensor& h, const std::vector<int64_t>& coord) {
    int64_t off = 0;
    for (size_t d = 0; d < h.shape.size(); ++d) {
      int64_t c = coord[d + coord.size() - h.shape.size()];
      off = off * h.shape[d] + (h.shape[d] == 1 ? 0 : c);
    }
    return h.v[size_t(off)];
  };
  HostTensor out{shape, {}};
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<int64_t> coord(shape.size());
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i;
    for (size_t d = shape.size(); d-- > 0;) coord[d] = rest % shape[d], rest /= shape[d];
    out.v.push_back(f(at(a, coord), at(b, coord)));
  }
  out.v = values(data_of(t, shape, out.v));
  return out;
}

struct BinaryCase {
  const char* name;
  BinaryFn fn;
  HostBinary host;
  bool floats_only;
  bool positive;  // operands drawn from [1, 6]: division, remainder, powers
};

std::vector<BinaryCase> binary_cases() {
  return {
      {"add", [](Operand a, Operand b) { return add(std::move(a), std::move(b)); },
       [](double x, double y) { return x + y; }, false, false},
      {"sub", [](Operand a, Operand b) { return sub(std::move(a), std::move(b)); },
       [](double x, double y) { return x - y; }, false, false},
      {"mul", [](Operand a, Operand b) { return mul(std::move(a), std::move(b)); },
       [](double x, double y) { return x * y; }, false, false},
      {"div", [](Operand a, Operand b) { return div(std::move(a), std::move(b)); },
       [](double x, double y) { return x / y; }, true, true},
      {"div_int", [](Operand a, Operand b) { return div(std::move(a), std::move(b)); },
       [](double x, double y) { return std::trunc(x / y); }, false, true},
      {"rem", [](Operand a, Operand b) { return rem(std::move(a), std::move(b)); },
       [](double x, double y) { return std::fmod(x, y); }, false, true},
      {"pow", [](Operand a, Operand b) { return pow(std::move(a), std::move(b)); },
       [](double x, double y) { return std::pow(x, y); }, true, true},
      {"max", [](Operand a, Operand b) { return max(std::move(a), std::move(b)); },
       [](double x, double y) { return std::max(x, y); }, false, false},
      {"min", [](Operand a, Operand b) { return min(std::move(a), std::move(b)); },
       [](double x, double y) { return std::min(x, y); }, false, false},
  };
}

const std::vector<DType> kNumberTypes = {DType::F32, DType::F64, DType::F16, DType::BF16,
                                         DType::I32, DType::I64, DType::U8};

// Broadcast shapes and views, each as (lhs, rhs) made from fresh uploads.
struct Layout {
  const char* name;
  Shape a_base, b_base;
  std::function<Tensor(const Tensor&)> a_view, b_view;
};

std::vector<Layout> layouts() {
  auto same = [](const Tensor& t) { return t; };
  return {
      {"contiguous", {6, 7}, {6, 7}, same, same},
      {"broadcast", {4, 1, 5}, {3, 5}, same, same},
      {"rank0 rhs", {3, 4}, {}, same, same},
      {"transposed lhs", {7, 6}, {6, 7}, [](const Tensor& t) { return t.transpose(); }, same},
      {"both transposed",
       {7, 6},
       {7, 6},
       [](const Tensor& t) { return t.transpose(); },
       [](const Tensor& t) { return t.transpose(); }},
      {"sliced rhs (offset)", {6, 7}, {9, 10}, same, [](const Tensor& t) { return t.slice(0, 2, 8).slice(1, 3, 10); }},
      {"expanded rhs",
       {5, 6},
       {1, 6},
       same,
       [](const Tensor& t) {
         return t.expand({5, 6});
       }},
      {"permuted rank 3",
       {2, 3, 4},
       {4, 2, 3},
       same,
       [](const Tensor& t) {
         return t.permute({1, 2, 0});
       }},
      {"ragged 129", {129}, {129}, same, same},
  };
}

TEST(TensorOps, BinaryOpsMatchTheHostOverTypesShapesAndViews) {
  uint32_t seed = 1;
  for (const Device& dev : devices()) {
    Client c = dev.client();
    for (const BinaryCase& op : binary_cases()) {
      for (DType t : kNumberTypes) {
        const bool is_float = ir::is_float(t);
        if (op.floats_only && !is_float) continue;
        if (std::string(op.name) == "div_int" && is_float) continue;
        if (t == DType::U8 && (std::string(op.name) == "sub")) continue;  // wraps; not a host double
        for (const Layout& l : layouts()) {
          const double lo = op.positive ? 1 : (t == DType::U8 ? 0 : -4),
                       hi = op.positive ? 6 : (t == DType::U8 ? 10 : 4);
          HostTensor ha = random_host(t, l.a_base, seed++, lo, hi), hb = random_host(t, l.b_base, seed++, lo, hi);
          Tensor ba = upload(c, t, ha), bb = upload(c, t, hb);
          Tensor va = l.a_view(ba), vb = l.b_view(bb);
          HostTensor want = host_binary(t, host_view(ba, ha, va), host_view(bb, hb, vb), op.host);
          Tensor got = op.fn(va, vb);
          EXPECT_EQ(got.shape(), want.shape) << op.name << " " << l.name;
          expect_values(got, want.v, tolerance(t) * (std::string(op.name) == "pow" ? 4 : 1),
                        dev.name() + " " + op.name + " " + std::string(ir::scalar_name(t)) + " " + l.name);
        }
      }
    }
  }
}

TEST(TensorOps, NumbersMeetTensorsOnEitherSide) {
  for (const Device& dev : devices()) {
    Client c = dev.client();
    HostTensor h = random_host(DType::F32, {3, 5}, 7);
    Tensor a = upload(c, DType::F32, h);
    std::vector<double> twice, minus, shifted;
    for (double x : h.v) {
      twice.push_back(double(float(x * 2.5)));
      minus.push_back(double(float(10.0 - x)));
      shifted.push_back(double(float(x + 1)));
    }
    expect_values(a * 2.5, twice, 0, dev.name() + " a * 2.5");
    expect_values(10 - a, minus, 0, dev.name() + " 10 - a");
    expect_values(a + 1, shifted, 0, dev.name() + " a + 1");
    Tensor i = upload(c, DType::I32, HostTensor{{4}, {1, 2, 3, 4}});
    expect_values(i * 3, {3, 6, 9, 12}, 0, dev.name() + " i32 * 3");
    test::expect_error([&] { (void)(i * 2.5); }, "tensor.bad_scalar");
  }
}

TEST(TensorOps, ComparisonsGiveBoolTensors) {
  for (const Device& dev : devices()) {
    Client c = dev.client();
    Tensor a = upload(c, DType::F32, HostTensor{{2, 3}, {1, 5, 3, -2, 0, 7}});
    Tensor b = upload(c, DType::F32, HostTensor{{3}, {1, 4, 9}});
    Tensor r = lt(a, b);
    EXPECT_EQ(r.dtype(), DType::Bool);
    expect_values(r, {0, 0, 1, 1, 1, 1}, 0, dev.name() + " lt");
    expect_values(eq(a, b), {1, 0, 0, 0, 0, 0}, 0, dev.name() + " eq");
    expect_values(ge(a, 3), {0, 1, 1, 0, 0, 1}, 0, dev.name() + " ge 3");
    expect_values(ne(a, b), {0, 1, 1, 1, 1, 1}, 0, dev.name() + " ne");
    expect_values(gt(a, b), {0, 1, 0, 0, 0, 0}, 0, dev.name() + " gt");
    expect_values(le(a, b), {1, 0, 1, 1, 1, 1}, 0, dev.name() + " le");
  }
}

// The comparison operators are the comparison ops: bool tensors, tensor against tensor (broadcast),
// tensor against number and number against tensor, fused and eager.
TEST(TensorOps, ComparisonOperatorsGiveBoolTensors) {
  uint32_t seed = 1400;
  for (const Device& dev : devices()) {
    Client c = dev.client();
    for (DType t : {DType::F32, DType::I32, DType::BF16}) {
      HostTensor ha = random_host(t, {4, 5}, seed++, -3, 3), hb = random_host(t, {5}, seed++, -3, 3);
      Tensor a = upload(c, t, ha), b = upload(c, t, hb);
      struct Case {
        const char* name;
        std::function<Tensor()> got;
        std::function<bool(double, double)> host;  // of a's element and the other side's
        bool number;                               // the other side is the number 1
        bool number_first;                         // the number on the left: host(1, a)
      };
      const Case cases[] = {
          {"a < b", [&] { return a < b; }, [](double x, double y) { return x < y; }, false, false},
          {"a <= b", [&] { return a <= b; }, [](double x, double y) { return x <= y; }, false, false},
          {"a > b", [&] { return a > b; }, [](double x, double y) { return x > y; }, false, false},
          {"a >= b", [&] { return a >= b; }, [](double x, double y) { return x >= y; }, false, false},
          {"a == b", [&] { return a == b; }, [](double x, double y) { return x == y; }, false, false},
          {"a != b", [&] { return a != b; }, [](double x, double y) { return x != y; }, false, false},
          {"a < 1", [&] { return a < 1; }, [](double x, double y) { return x < y; }, true, false},
          {"a == 1", [&] { return a == 1; }, [](double x, double y) { return x == y; }, true, false},
          {"a != 1", [&] { return a != 1; }, [](double x, double y) { return x != y; }, true, false},
          {"1 < a", [&] { return 1 < a; }, [](double x, double y) { return x < y; }, true, true},
          {"1 >= a", [&] { return 1 >= a; }, [](double x, double y) { return x >= y; }, true, true},
          {"1 == a", [&] { return 1 == a; }, [](double x, double y) { return x == y; }, true, true},
      };
      for (bool fused : {true, false}) {
        FusionMode mode(fused);
        for (const Case& k : cases) {
          const std::string what =
              dev.name() + " " + std::string(ir::scalar_name(t)) + (fused ? " fused " : " eager ") + k.name;
          std::vector<double> want(ha.v.size());
          for (size_t i = 0; i < want.size(); ++i) {
            const double other = k.number ? 1.0 : hb.v[i % 5];
            want[i] = k.number_first ? k.host(other, ha.v[i]) : k.host(ha.v[i], other);
          }
          Tensor r = k.got();
          EXPECT_EQ(r.dtype(), DType::Bool) << what;
          EXPECT_EQ(r.shape(), (Shape{4, 5})) << what;
          expect_values(r, want, 0, what);
        }
      }
      // The operators are the named ops, bit for bit, also over a transposed view.
      Tensor at = upload(c, t, random_host(t, {5, 4}, seed++, -3, 3)).transpose();
      EXPECT_EQ((at <= a).to_data().bytes, le(at, a).to_data().bytes) << dev.name();
      EXPECT_EQ((at == a).to_data().bytes, eq(at, a).to_data().bytes) << dev.name();
    }
  }
}

// where(condition, a, b) over element types, broadcast shapes, a transposed value, numbers, and
// the contiguous (vector) walk; and its refusals.
TEST(TensorOps, WhereMatchesTheHost) {
  uint32_t seed = 1500;
  for (const Device& dev : devices()) {
    Client c = dev.client();
    for (DType t : {DType::F32, DType::BF16, DType::F64, DType::I32, DType::U8}) {
      const double lo = t == DType::U8 ? 0 : -9;
      // Broadcast: condition [3, 1, 5], a [4, 5] transposed from [5, 4], b a number.
      HostTensor hc = random_host(DType::F32, {3, 1, 5}, seed++, -1, 1);
      HostTensor ha = random_host(t, {5, 4}, seed++, lo, 9);
      Tensor cond = gt(upload(c, DType::F32, hc), 0);
      Tensor base = upload(c, t, ha), a = base.transpose();
      HostTensor hav = host_view(base, ha, a);
      std::vector<double> want;
      for (int64_t i = 0; i < 3; ++i) {
        for (int64_t j = 0; j < 4; ++j) {
          for (int64_t k = 0; k < 5; ++k) want.push_back(hc.v[size_t(i * 5 + k)] > 0 ? hav.v[size_t(j * 5 + k)] : 7.0);
        }
      }
      Tensor got = where(cond, a, 7);
      EXPECT_EQ(got.shape(), (Shape{3, 4, 5})) << dev.name();
      EXPECT_EQ(got.dtype(), t);
      expect_values(got, want, 0, dev.name() + " where " + std::string(ir::scalar_name(t)) + ", broadcast");
      // Contiguous, same shapes: the vector walk.
      HostTensor hx = random_host(t, {64}, seed++, lo, 9), hy = random_host(t, {64}, seed++, lo, 9);
      HostTensor hm = random_host(DType::F32, {64}, seed++, -1, 1);
      Tensor m = lt(upload(c, DType::F32, hm), 0);
      std::vector<double> want2;
      for (size_t i = 0; i < 64; ++i) want2.push_back(hm.v[i] < 0 ? hx.v[i] : hy.v[i]);
      expect_values(where(m, upload(c, t, hx), upload(c, t, hy)), want2, 0,
                    dev.name() + " where " + std::string(ir::scalar_name(t)) + ", contiguous");
    }
    Tensor x = upload(c, DType::F32, HostTensor{{2}, {1, 2}});
    expect_error([&] { (void)where(x, x, x); }, "tensor.dtype_mismatch");
    expect_error(
        [&] {
          (void)where(gt(x, 1), x, upload(c, DType::F64, HostTensor{{2}, {1, 2}}));
        },
        "tensor.dtype_mismatch");
    Error e = expect_error(
        [&] {
          (void)where(gt(x, 1), x, upload(c, DType::F32, HostTensor{{3}, {1, 2, 3}}));
        },
        "tensor.shape_mismatch");
    EXPECT_NE(std::string(e.what()).find("[2]"), std::string::npos) << e.what();
    expect_error([&] { (void)where(gt(x, 1), 1, 2); }, "tensor.undefined");
  }
}

struct UnaryCase {
  const char* name;
  std::function<Tensor(Operand)> fn;
  std::function<double(double)> host;
  double lo, hi;
};

TEST(TensorOps, UnaryOpsMatchTheHost) {
  std::vector<UnaryCase> cases = {
      {"neg", [](Operand a) { return neg(std::move(a)); }, [](double x) { return -x; }, -4, 4},
      {"abs", [](Operand a) { return abs(std::move(a)); }, [](double x) { return std::fabs(x); }, -4, 4},
      {"exp", [](Operand a) { return exp(std::move(a)); }, [](double x) { return std::exp(x); }, -4, 4},
      {"log", [](Operand a) { return log(std::move(a)); }, [](double x) { return std::log(x); }, 0.1, 8},
      {"sqrt", [](Operand a) { return sqrt(std::move(a)); }, [](double x) { return std::sqrt(x); }, 0, 8},
      {"tanh", [](Operand a) { return tanh(std::move(a)); }, [](double x) { return std::tanh(x); }, -4, 4},
      {"erf", [](Operand a) { return erf(std::move(a)); }, [](double x) { return std::erf(x); }, -3, 3},
      {"sigmoid", [](Operand a) { return sigmoid(std::move(a)); }, [](double x) { return 1 / (1 + std::exp(-x)); }, -6,
       6},
      {"relu", [](Operand a) { return relu(std::move(a)); }, [](double x) { return std::max(x, 0.0); }, -4, 4},
      {"gelu", [](Operand a) { return gelu(std::move(a)); },
       [](double x) { return x / 2 * (1 + std::erf(x / std::sqrt(2.0))); }, -4, 4},
  };
  uint32_t seed = 100;
  for (const Device& dev : devices()) {
    Client c = dev.client();
    for (const UnaryCase& u : cases) {
      for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16}) {
        HostTensor h = random_host(t, {9, 13}, seed++, u.lo, u.hi);
        Tensor base = upload(c, t, h);
        Tensor view = base.transpose().slice(0, 1, 12);  // strided and offset
        HostTensor in = host_view(base, h, view);
        std::vector<double> want;
        for (double x : in.v) want.push_back(u.host(x));
        want = values(data_of(t, in.shape, want));
        // exp, erf and the rest on the GPU are within a few ulps of the correctly rounded value.
        double tol = tolerance(t) * (t == DType::F32 ? 4 : t == DType::F64 ? 8 : 1);
        expect_values(u.fn(view), want, tol, dev.name() + " " + u.name + " " + std::string(ir::scalar_name(t)));
      }
    }
    HostTensor hi = random_host(DType::I32, {10}, seed++);
    std::vector<double> want;
    for (double x : hi.v) want.push_back(std::fabs(x));
    expect_values(abs(upload(c, DType::I32, hi)), want, 0, dev.name() + " abs i32");
  }
}

TEST(TensorOps, CastConvertsEveryPair) {
  const std::vector<DType> types = {DType::F32, DType::F64, DType::F16, DType::BF16,
                                    DType::I32, DType::I64, DType::U8,  DType::Bool};
  for (const Device& dev : devices()) {
    Client c = dev.client();
    for (DType from : types) {
      for (DType to : types) {
        HostTensor h = random_host(from, {2, 7}, 5, 0, 9);
        Tensor x = upload(c, from, h).transpose();
        std::vector<double> in = values(x.to_data());
        std::vector<double> want;
        for (double v : in) want.push_back(to == DType::Bool ? double(v != 0) : ir::is_int(to) ? std::trunc(v) : v);
        want = values(data_of(to, {int64_t(want.size())}, want));
        Tensor y = cast(x, to);
        EXPECT_EQ(y.dtype(), to);
        expect_values(
            y, want, tolerance(to),
            dev.name() + " cast " + std::string(ir::scalar_name(from)) + " -> " + std::string(ir::scalar_name(to)));
      }
    }
  }
}

// Launches of every kernel on c so far.
uint64_t launch_count(const Client& c) { return c.stats().launches; }

TEST(TensorInPlace, AGivenOperandTakesTheResultWhenItCan) {
  for (bool fused : {true, false})
    for (const Device& dev : devices()) {
      FusionMode mode(fused);
      SCOPED_TRACE(dev.name() + (fused ? ", fused" : ", fusion off"));
      Client c = dev.client();
      HostTensor ha = random_host(DType::F32, {4, 5}, 1), hb = random_host(DType::F32, {4, 5}, 2),
                 hr = random_host(DType::F32, {5}, 3);
      std::vector<double> sum;
      for (size_t i = 0; i < ha.v.size(); ++i) sum.push_back(double(float(ha.v[i] + hb.v[i])));

      // Left given and sole owner: into it.
      Tensor a = upload(c, DType::F32, ha), b = upload(c, DType::F32, hb);
      uint64_t a_mem = a.handle().memory_id();
      Tensor r = std::move(a) + b;
      EXPECT_EQ(r.handle().memory_id(), a_mem);
      expect_values(r, sum, 0, "into lhs");

      // Left lent, right given: into the right one.
      a = upload(c, DType::F32, ha);
      b = upload(c, DType::F32, hb);
      uint64_t b_mem = b.handle().memory_id();
      r = a + std::move(b);
      EXPECT_EQ(r.handle().memory_id(), b_mem);
      expect_values(r, sum, 0, "into rhs");

      // Given but shared (a view is alive): new memory.
      a = upload(c, DType::F32, ha);
      Tensor view = a.slice(0, 0, 2);
      a_mem = a.handle().memory_id();
      r = std::move(a) + upload(c, DType::F32, hb);
      EXPECT_NE(r.handle().memory_id(), a_mem);
      expect_values(r, sum, 0, "shared lhs");

      // Given but smaller than the result (it broadcasts): the other one, or new memory.
      Tensor row = upload(c, DType::F32, hr);
      uint64_t row_mem = row.handle().memory_id();
      r = std::move(row) + upload(c, DType::F32, ha);
      EXPECT_NE(r.handle().memory_id(), row_mem);

      // Given but overlapping itself (expanded): new memory, and the operand is untouched.
      Tensor col = upload(c, DType::F32, HostTensor{{4, 1}, {1, 2, 3, 4}});
      Tensor keep = col;
      uint64_t col_mem = col.handle().memory_id();
      keep = Tensor();  // col is the sole owner again
      r = std::move(col).expand({4, 5}) + upload(c, DType::F32, hb);
      EXPECT_NE(r.handle().memory_id(), col_mem);

      // Given with another element type than the result (a comparison): new memory.
      a = upload(c, DType::F32, ha);
      a_mem = a.handle().memory_id();
      r = lt(std::move(a), 0.0);
      EXPECT_NE(r.handle().memory_id(), a_mem);

      // Unary ops too: exp(std::move(x)) writes into x.
      Tensor x = upload(c, DType::F32, ha);
      uint64_t x_mem = x.handle().memory_id();
      uint64_t before = launch_count(c);
      Tensor e = exp(std::move(x));
      EXPECT_EQ(e.handle().memory_id(), x_mem);
      EXPECT_EQ(launch_count(c) - before, 1u);

      // Given, empty and expanded (stride 0 beside a dim of 0: row-major by the rule, yet it reaches
      // its one position twice over): new memory, which a later assign may write.
      Tensor empty = Tensor::empty(c, {1, 0}, DType::F32).expand({2, 0});
      const uint64_t empty_mem = empty.handle().memory_id();
      Tensor z = std::move(empty) + 1;
      EXPECT_NE(z.handle().memory_id(), empty_mem);
      EXPECT_EQ(z.shape(), (Shape{2, 0}));
      assign(z, upload(c, DType::F32, HostTensor{{2, 0}, {}}));
    }
}

TEST(TensorOps, NewMemoryFollowsTheOperandsMemoryOrder) {
  for (const Device& dev : devices()) {
    Client c = dev.client();
    Tensor a = upload(c, DType::F32, random_host(DType::F32, {2, 3, 4}, 1))
                   .permute({2, 0, 1});  // [4, 2, 3], strides [1, 12, 4]
    Tensor b = upload(c, DType::F32, random_host(DType::F32, {2, 3, 4}, 2)).permute({2, 0, 1});
    Tensor r = a + b;
    EXPECT_EQ(r.strides(), a.strides()) << "the result is laid out as its operands";
    // A broadcast operand does not vote: the full-size one decides.
    Tensor s = a + upload(c, DType::F32, random_host(DType::F32, {3}, 3));
    EXPECT_EQ(s.strides(), a.strides());
    // Operands that disagree, as many bytes each: a tie keeps row-major, whichever side.
    Tensor row_major = upload(c, DType::F32, random_host(DType::F32, {4, 2, 3}, 4));
    EXPECT_EQ((row_major + a).strides(), row_major.strides());
    EXPECT_EQ((a + row_major).strides(), row_major.strides());
  }
}

// Seed 03's vote: the operands of the result's shape vote their bytes for their memory order; the
// most bytes win, a tie keeps row-major; broadcast and expanded operands do not vote. The fused
// path lays a result out as the eager one does; the values are the host's either way.
TEST(TensorOps, NewMemoryIsVotedByBytesATieKeepsRowMajor) {
  uint32_t seed = 1700;
  for (const Device& dev : devices()) {
    Client c = dev.client();
    // [4, 5] tensors of type t: row-major, and transposed (strides [1, 4]).
    auto rm = [&](DType t) {
      HostTensor h = random_host(t, {4, 5}, seed++, -3, 3);
      return std::make_pair(upload(c, t, h), h);
    };
    auto tr = [&](DType t) {
      HostTensor h = random_host(t, {5, 4}, seed++, -3, 3);
      Tensor base = upload(c, t, h);
      Tensor v = base.transpose();
      return std::make_pair(v, host_view(base, h, v));
    };
    // [2, 3, 4] tensors in three memory orders: row-major, last two dims swapped, fully reversed.
    auto p3 = [&](DType t, int which) {
      const Shape base_shape = which == 0 ? Shape{2, 3, 4} : which == 1 ? Shape{2, 4, 3} : Shape{4, 3, 2};
      HostTensor h = random_host(t, base_shape, seed++, -3, 3);
      Tensor base = upload(c, t, h);
      Tensor v = which == 0 ? base : which == 1 ? base.permute({0, 2, 1}) : base.permute({2, 1, 0});
      return std::make_pair(v, host_view(base, h, v));
    };
    const Strides kRowMajor{5, 1}, kTransposed{1, 4};
    struct Case {
      std::string name;
      std::function<Tensor()> run;
      std::vector<double> want;
      Strides strides;  // of the result
    };
    std::vector<Case> cases;
    {
      auto t_pair = tr(DType::F32);
      Tensor t = t_pair.first;
      HostTensor ht = t_pair.second;
      auto r_pair = rm(DType::F32);
      Tensor r = r_pair.first;
      HostTensor hr = r_pair.second;
      std::vector<double> sum(ht.v.size());
      for (size_t i = 0; i < sum.size(); ++i) sum[i] = double(float(ht.v[i] + hr.v[i]));
      cases.push_back({"t + row_major (a tie)", [t, r] { return t + r; }, sum, kRowMajor});
      cases.push_back({"row_major + t (a tie)", [t, r] { return r + t; }, sum, kRowMajor});
      std::vector<double> prod(ht.v.size());
      for (size_t i = 0; i < prod.size(); ++i) prod[i] = double(float(float(ht.v[i] + hr.v[i]) * 2));
      cases.push_back({"(t + row_major) * 2 (a tie, then one voter)", [t, r] { return (t + r) * 2; }, prod, kRowMajor});
    }
    for (DType t : {DType::F64, DType::F32, DType::F16}) {
      // Bytes, not elements: a row-major bool condition (1 byte an element) against a transposed
      // value of t. By elements the two tie (and the first operand's order used to win).
      const std::string tn(ir::scalar_name(t));
      auto cond_pair = rm(DType::Bool);
      Tensor cond = cond_pair.first;
      HostTensor hc = cond_pair.second;
      auto v_pair = tr(t);
      Tensor v = v_pair.first;
      HostTensor hv = v_pair.second;
      std::vector<double> want(hv.v.size());
      for (size_t i = 0; i < want.size(); ++i) want[i] = hc.v[i] != 0 ? hv.v[i] : 2.0;
      cases.push_back({"where(row-major bool, transposed " + tn + ", 2)", [cond, v] { return where(cond, v, 2); }, want,
                       kTransposed});
      auto ct_pair = tr(DType::Bool);
      Tensor ct = ct_pair.first;
      HostTensor hct = ct_pair.second;
      auto w_pair = rm(t);
      Tensor w = w_pair.first;
      HostTensor hw = w_pair.second;
      for (size_t i = 0; i < want.size(); ++i) want[i] = hct.v[i] != 0 ? hw.v[i] : 2.0;
      cases.push_back(
          {"where(transposed bool, row-major " + tn + ", 2)", [ct, w] { return where(ct, w, 2); }, want, kRowMajor});
    }
    {
      // Three operands in three orders: the two f32 values tie (4 bytes an element each) above the
      // bool condition (1): row-major. The condition joining one of them breaks the tie.
      auto c2_pair = p3(DType::Bool, 2);
      Tensor c2 = c2_pair.first;
      HostTensor hc2 = c2_pair.second;
      auto c1_pair = p3(DType::Bool, 1);
      Tensor c1 = c1_pair.first;
      HostTensor hc1 = c1_pair.second;
      auto a1_pair = p3(DType::F32, 1);
      Tensor a1 = a1_pair.first;
      HostTensor ha1 = a1_pair.second;
      auto b0_pair = p3(DType::F32, 0);
      Tensor b0 = b0_pair.first;
      HostTensor hb0 = b0_pair.second;
      std::vector<double> want(ha1.v.size());
      for (size_t i = 0; i < want.size(); ++i) want[i] = hc2.v[i] != 0 ? ha1.v[i] : hb0.v[i];
      cases.push_back({"where(reversed bool, swapped f32, row-major f32)", [c2, a1, b0] { return where(c2, a1, b0); },
                       want, Strides{12, 4, 1}});
      for (size_t i = 0; i < want.size(); ++i) want[i] = hc1.v[i] != 0 ? ha1.v[i] : hb0.v[i];
      cases.push_back({"where(swapped bool, swapped f32, row-major f32)", [c1, a1, b0] { return where(c1, a1, b0); },
                       want, Strides{12, 1, 3}});
    }
    {
      // Operands not of the result's shape do not vote: a broadcast row, an expanded column.
      auto t_pair = tr(DType::F32);
      Tensor t = t_pair.first;
      HostTensor ht = t_pair.second;
      HostTensor hrow = random_host(DType::F32, {5}, seed++, -3, 3);
      Tensor row = upload(c, DType::F32, hrow);
      std::vector<double> want(ht.v.size());
      for (size_t i = 0; i < want.size(); ++i) want[i] = double(float(ht.v[i] + hrow.v[i % 5]));
      cases.push_back({"t + a broadcast row", [t, row] { return t + row; }, want, kTransposed});
      cases.push_back({"an expanded row + t",
                       [t, row] {
                         return row.reshape({1, 5}).expand({4, 5}) + t;
                       },
                       want, kTransposed});
    }
    for (const Case& k : cases) {
      Strides eager_strides;
      for (bool fused : {false, true}) {
        FusionMode mode(fused);
        const std::string what = dev.name() + (fused ? " fused " : " eager ") + k.name;
        Tensor r = k.run();
        EXPECT_EQ(r.strides(), k.strides) << what;
        expect_values(r, k.want, tolerance(r.dtype()), what);
        if (!fused) eager_strides = r.strides();
        else EXPECT_EQ(r.strides(), eager_strides) << what << ": the fused layout is the eager one";
      }
    }
  }
}

}  // namespace
}  // namespace kiln::test

namespace kiln::test {
namespace {

// Contiguous views that start off a vector boundary, or end before their memory does: the vector
// kernel narrows its width or its handle, and every element still comes out right.
TEST(TensorOps, ContiguousViewsOffVectorBoundaries) {
  for (bool fused : {true, false})
    for (const Device& dev : devices()) {
      FusionMode mode(fused);
      Client c = dev.client();
      for (DType t : {DType::F32, DType::F16, DType::F64, DType::U8}) {
        HostTensor h = random_host(t, {1001}, 77, 0, 9), g = random_host(t, {1001}, 78, 0, 9);
        Tensor a = upload(c, t, h), b = upload(c, t, g);
        for (auto [start, end] : {std::pair{1, 1001}, std::pair{2, 998}, std::pair{0, 996}, std::pair{3, 4}}) {
          std::vector<double> want;
          for (int i = start; i < end; ++i) want.push_back(h.v[size_t(i)] + g.v[size_t(i)]);
          want = values(data_of(t, {int64_t(want.size())}, want));
          const std::string what = dev.name() + (fused ? " fused " : " eager ") + std::string(ir::scalar_name(t)) +
                                   " [" + std::to_string(start) + ", " + std::to_string(end) + ")";
          expect_values(a.slice(0, start, end) + b.slice(0, start, end), want, tolerance(t), what);
          // In place into a slice given by move (its handle shows more than the walked elements).
          Tensor x = upload(c, t, h);
          Tensor part = x.slice(0, start, end);
          x = Tensor();  // part is the sole owner now
          const uint64_t part_mem = part.handle().memory_id();
          Tensor r = std::move(part) + b.slice(0, start, end);
          expect_values(r, want, tolerance(t), what + " in place");
          EXPECT_EQ(r.handle().memory_id(), part_mem) << what;
        }
      }
    }
}

// A walk that cannot fold into one dim but steps through its innermost dim by 1 in every tensor
// (a row broadcast over a matrix, rows of a slice) reads vectors along that dim when its length,
// its outer strides and every view's start allow; else one element at a time. Every case against
// the host, eager and fused, with offsets that allow 4, 2 and 1 lanes.
TEST(TensorOps, RowBroadcastsWalkInVectorsWhereTheyCan) {
  uint32_t seed = 300;
  for (const Device& dev : devices()) {
    Client c = dev.client();
    for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I32, DType::U8}) {
      for (int64_t cols : {8, 16, 6, 7}) {
        HostTensor hb = random_host(t, {5, cols + 4}, seed++, 0, 9), hw = random_host(t, {cols}, seed++, 0, 9);
        Tensor base = upload(c, t, hb), w = upload(c, t, hw);
        for (int64_t start : {0, 1, 2, 4}) {
          Tensor a = base.slice(1, start, start + cols);  // rows cols + 4 apart, `start` elements in
          std::vector<double> want;
          for (int64_t r = 0; r < 5; ++r) {
            for (int64_t j = 0; j < cols; ++j) {
              const double x = hb.v[size_t(r * (cols + 4) + start + j)], y = hw.v[size_t(j)];
              want.push_back(x + (t == DType::U8 ? y : y * 2));
            }
          }
          want = values(data_of(t, {int64_t(want.size())}, want));
          for (bool fused : {false, true}) {
            fusion::set_enabled(fused);
            const std::string what = dev.name() + " " + std::string(ir::scalar_name(t)) + " cols " +
                                     std::to_string(cols) + " start " + std::to_string(start) + (fused ? " fused" : "");
            Tensor r = t == DType::U8 ? a + w : a + w * 2;
            expect_values(r, want, tolerance(t) * 2, what);
          }
          fusion::set_enabled(std::nullopt);
        }
      }
    }
  }
}

}  // namespace
}  // namespace kiln::test
