// Reductions against a host reference: every reduction, element types, dims (one, several, all,
// negative), keepdim, strided views, NaN, ties, empty reductions, and their errors.
#include <gtest/gtest.h>

#include <functional>

#include "support.h"

namespace kiln::test {
namespace {

enum class Op { Sum, Prod, Mean, Max, Min, ArgMax, ArgMin };

// Host reduction of `h` (row-major, shape h.shape) over `dims` (sorted, non-negative), as doubles;
// positions as indices along the single dim.
HostTensor host_reduce(Op op, const HostTensor& h, const std::vector<int64_t>& dims, bool keepdim) {
  const size_t rank = h.shape.size();
  std::vector<bool> red(rank, false);
  for (int64_t d : dims) red[size_t(d)] = true;
  HostTensor out;
  Shape kept;
  for (size_t i = 0; i < rank; ++i) {
    if (!red[i]) kept.push_back(h.shape[i]);
    if (!red[i] || keepdim) out.shape.push_back(red[i] ? 1 : h.shape[i]);
  }
  int64_t n_out = 1;
  for (int64_t d : kept) n_out *= d;
  std::vector<std::vector<double>> groups(static_cast<size_t>(n_out));
  int64_t n = 1;
  for (int64_t d : h.shape) n *= d;
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, o = 0, scale = 1;
    for (size_t d = rank; d-- > 0;) {
      int64_t c = rest % h.shape[d];
      rest /= h.shape[d];
      if (!red[d]) o += c * scale, scale *= h.shape[d];
    }
    groups[size_t(o)].push_back(h.v[size_t(i)]);
  }
  for (const auto& g : groups) {
    double r = 0;
    switch (op) {
      case Op::Sum:
        for (double x : g) r += x;
        break;
      case Op::Mean:
        for (double x : g) r += x;
        r /= double(g.size());
        break;
      case Op::Prod:
        r = 1;
        for (double x : g) r *= x;
        break;
      case Op::Max:
      case Op::Min:
      case Op::ArgMax:
      case Op::ArgMin: {
        const bool larger = op == Op::Max || op == Op::ArgMax;
        size_t best = 0;
        for (size_t i = 1; i < g.size(); ++i) {
          if (std::isnan(g[best])) break;
          if (std::isnan(g[i]) || (larger ? g[i] > g[best] : g[i] < g[best])) best = i;
        }
        r = op == Op::Max || op == Op::Min ? g[best] : double(best);
      }
    }
    out.v.push_back(r);
  }
  return out;
}

Tensor run(Op op, const Tensor& t, const std::vector<int64_t>& dims, bool keepdim) {
  switch (op) {
    case Op::Sum: return sum(t, dims, keepdim);
    case Op::Prod: return prod(t, dims, keepdim);
    case Op::Mean: return mean(t, dims, keepdim);
    case Op::Max: return amax(t, dims, keepdim);
    case Op::Min: return amin(t, dims, keepdim);
    case Op::ArgMax: return argmax(t, dims[0], keepdim);
    case Op::ArgMin: return argmin(t, dims[0], keepdim);
  }
  return Tensor();
}

const char* name(Op op) {
  const char* names[] = {"sum", "prod", "mean", "amax", "amin", "argmax", "argmin"};
  return names[int(op)];
}

TEST(TensorReduce, MatchesTheHostOverTypesDimsAndViews) {
  struct Case {
    std::vector<int64_t> dims;  // as given
    std::vector<int64_t> sorted;
  };
  const std::vector<Case> cases = {{{1}, {1}},       {{-1}, {2}},     {{0}, {0}},
                                   {{0, 2}, {0, 2}}, {{}, {0, 1, 2}}, {{2, 1}, {1, 2}}};
  uint32_t seed = 300;
  for (const Device& dev : devices()) {
    Client c = dev.client();
    for (Op op : {Op::Sum, Op::Prod, Op::Mean, Op::Max, Op::Min, Op::ArgMax, Op::ArgMin}) {
      for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I32, DType::I64, DType::U8}) {
        if (op == Op::Mean && !ir::is_float(t)) continue;
        for (const Case& cs : cases) {
          if ((op == Op::ArgMax || op == Op::ArgMin) && cs.dims.size() != 1) continue;
          for (bool keepdim : {false, true}) {
            for (bool transposed : {false, true}) {
              // Products of small values stay exact; sums of integers too.
              const double lo = op == Op::Prod ? 1 : (t == DType::U8 ? 0 : -9), hi = op == Op::Prod ? 2 : 9;
              HostTensor base = random_host(t, {4, 3, 5}, seed++, lo, hi);
              Tensor x = upload(c, t, base);
              // Strided: the same shape over a layout whose last dim is the outermost in memory.
              HostTensor tb = random_host(t, {5, 3, 4}, seed++, lo, hi);
              if (transposed) base = tb, x = upload(c, t, tb);
              Tensor v = transposed ? x.permute({2, 1, 0}) : x;
              HostTensor h = host_view(x, base, v);
              std::vector<int64_t> sorted = cs.sorted;
              HostTensor want = host_reduce(op, h, sorted, keepdim);
              Tensor got = run(op, v, cs.dims, keepdim);
              const std::string what = dev.name() + " " + name(op) + " " + std::string(ir::scalar_name(t)) + " dims " +
                                       to_string(cs.dims) + (keepdim ? " keepdim" : "") +
                                       (transposed ? " strided" : "");
              EXPECT_EQ(got.shape(), want.shape) << what;
              const bool arg = op == Op::ArgMax || op == Op::ArgMin;
              if (arg || (!ir::is_float(t) && (op == Op::Sum || op == Op::Prod))) {
                EXPECT_EQ(got.dtype(), DType::I64) << what;
              }
              // Float sums round each step: allow the elements' count of ulps.
              double tol = arg ? 0 : tolerance(t) * (op == Op::Sum || op == Op::Mean || op == Op::Prod ? 30 : 1);
              if (!arg && ir::is_float(t)) want.v = values(data_of(t, want.shape, want.v));
              expect_values(got, want.v, tol, what);
            }
          }
        }
      }
    }
  }
}

// Few outputs of many elements: the reduction splits each output over cubes (a part per cube, then
// the parts combined), or one cube per output when an output has too few elements for parts.
TEST(TensorReduce, LongReductionsSplitOverCubes) {
  struct Case {
    Shape shape;
    std::vector<int64_t> dims;
    bool transposed;  // the tensor built [shape reversed] and permuted back: reduced elements strided
    uint64_t launches;
  };
  const std::vector<Case> cases = {{{3, 70000}, {1}, false, 2},  // 8 parts per output, then their combination
                                   {{200000}, {}, false, 2},     // 24 parts
                                   {{2, 5000}, {-1}, false, 1},  // one cube per output
                                   {{3, 9000}, {1}, true, 1}};   // strided elements
  uint32_t seed = 700;
  for (const Device& dev : devices()) {
    Client c = dev.client();
    for (Op op : {Op::Sum, Op::Mean, Op::Max, Op::Min, Op::Prod, Op::ArgMax, Op::ArgMin}) {
      for (DType t : {DType::F32, DType::F64, DType::BF16, DType::I32, DType::U8}) {
        if ((op == Op::Mean && !ir::is_float(t)) || (op == Op::Prod && t == DType::U8)) continue;
        for (const Case& cs : cases) {
          // Positions along one dim (integers tie often: the first position wins).
          if ((op == Op::ArgMax || op == Op::ArgMin) && cs.dims.size() != 1) continue;
          // Products of +-1 stay exact; sums of integers too.
          const double lo = op == Op::Prod   ? -1
                            : t == DType::U8 ? 0
                                             : -4,
                       hi = op == Op::Prod   ? 1
                            : t == DType::U8 ? 200
                                             : 4;
          Shape stored(cs.shape.rbegin(), cs.shape.rend());
          HostTensor base = random_host(t, cs.transposed ? stored : cs.shape, seed++, lo, hi);
          if (op == Op::Prod) {
            for (double& v : base.v) v = v < 0 ? -1 : 1;
          }
          Tensor x = upload(c, t, base);
          Tensor v = cs.transposed ? x.transpose() : x;
          HostTensor h = host_view(x, base, v);
          std::vector<int64_t> sorted;
          for (int64_t d : cs.dims) sorted.push_back(d < 0 ? d + int64_t(cs.shape.size()) : d);
          if (cs.dims.empty()) {
            for (size_t d = 0; d < cs.shape.size(); ++d) sorted.push_back(int64_t(d));
          }
          HostTensor want = host_reduce(op, h, sorted, false);
          const uint64_t before = c.stats().launches;
          Tensor got = run(op, v, cs.dims, false);
          const uint64_t launches = c.stats().launches - before;
          const std::string what = dev.name() + " " + name(op) + " " + std::string(ir::scalar_name(t)) + " " +
                                   to_string(cs.shape) + (cs.transposed ? " strided" : "");
          // Sums of n values: the parts' rounding grows as sqrt(n) ulps of the sum of magnitudes.
          const bool arg = op == Op::ArgMax || op == Op::ArgMin;
          double tol = arg || !ir::is_float(t) || op == Op::Max || op == Op::Min || op == Op::Prod ? 0
                       : t == DType::F64                                                           ? 1e-13
                                                                                                   : 2e-5;
          if (ir::is_float(t) && !arg) want.v = values(data_of(t, want.shape, want.v));
          if (t == DType::BF16 && (op == Op::Sum || op == Op::Mean)) tol = 1.6e-2;
          expect_values(got, want.v, tol, what);
          EXPECT_EQ(launches, cs.launches) << what;
        }
      }
    }
  }
}

// NaN wins through the parts of a split reduction too (a NaN in one part, the others plain).
TEST(TensorReduce, NanWinsInSplitReductions) {
  for (const Device& dev : devices()) {
    Client c = dev.client();
    for (DType t : {DType::F32, DType::F16}) {
      HostTensor h = random_host(t, {2, 40000}, 77, -3, 3);
      h.v[size_t(31000)] = NAN;  // row 0, in a later part
      Tensor x = upload(c, t, h);
      for (Tensor r : {amax(x, {1}), amin(x, {1}), sum(x, {1})}) {
        std::vector<double> got = values(r.to_data());
        EXPECT_TRUE(std::isnan(got[0])) << dev.name() << " " << ir::scalar_name(t);
        EXPECT_FALSE(std::isnan(got[1])) << dev.name() << " " << ir::scalar_name(t);
      }
      Tensor whole = amax(x);
      EXPECT_TRUE(std::isnan(values(whole.to_data())[0])) << dev.name() << " whole";
      for (Tensor r : {argmax(x, 1), argmin(x, 1)}) {
        EXPECT_EQ(values(r.to_data())[0], 31000) << dev.name() << " " << ir::scalar_name(t) << ": the NaN's position";
      }
    }
  }
}

// Contiguous elements are read as 16-byte vectors: a whole-tensor sum, and rows of a matrix.
TEST(TensorReduce, ContiguousSplitsReadVectors) {
  Client c = Device::cpu().client();
  auto launches_of = [&](const std::string& name) {
    for (const auto& [n, count] : c.stats().launches_by_kernel) {
      if (n == name) return count;
    }
    return uint64_t(0);
  };
  Tensor whole = upload(c, DType::F32, random_host(DType::F32, {200000}, 3));
  uint64_t before = launches_of("tensor_sum_split_vec4");
  (void)sum(whole).to_data();
  EXPECT_EQ(launches_of("tensor_sum_split_vec4"), before + 1) << "a whole-tensor sum";
  Tensor rows = upload(c, DType::F64, random_host(DType::F64, {3, 70000}, 4));
  before = launches_of("tensor_amax_split_vec2");
  (void)amax(rows, {1}).to_data();
  EXPECT_EQ(launches_of("tensor_amax_split_vec2"), before + 1) << "rows of f64";
  // Elements two apart: scalar loads.
  Tensor tall = upload(c, DType::F64, random_host(DType::F64, {20000, 2}, 5));
  before = launches_of("tensor_amax_split");
  uint64_t vec_before = launches_of("tensor_amax_split_vec2");
  (void)amax(tall, {0}).to_data();
  EXPECT_EQ(launches_of("tensor_amax_split"), before + 1) << "strided elements";
  EXPECT_EQ(launches_of("tensor_amax_split_vec2"), vec_before);
}

TEST(TensorReduce, NanWinsAndTiesGoToTheFirst) {
  for (const Device& dev : devices()) {
    Client c = dev.client();
    Tensor x = upload(c, DType::F32, HostTensor{{2, 4}, {1, NAN, 3, 3, 5, 2, 5, 0}});
    expect_values(amax(x, {1}), {NAN, 5}, 0, dev.name() + " amax");
    expect_values(amin(x, {1}), {NAN, 0}, 0, dev.name() + " amin");
    expect_values(argmax(x, 1), {1, 0}, 0, dev.name() + " argmax: NaN's place, then the first 5");
    expect_values(argmin(x, 1), {1, 3}, 0, dev.name() + " argmin");
    expect_values(sum(x, {0}), {6, NAN, 8, 3}, 0, dev.name() + " sum");
  }
}

TEST(TensorReduce, EmptyReductions) {
  Client c = Device::cpu().client();
  Tensor e = Tensor::empty(c, {3, 0}, DType::F32);
  expect_values(sum(e, {1}), {0, 0, 0}, 0, "sum of nothing");
  expect_values(prod(e, {1}), {1, 1, 1}, 0, "prod of nothing");
  expect_values(mean(e, {1}), {NAN, NAN, NAN}, 0, "mean of nothing");
  EXPECT_EQ(sum(e, {0}).shape(), (Shape{0}));
  Error err = expect_error([&] { (void)amax(e, {1}); }, "tensor.empty_reduction");
  EXPECT_NE(std::string(err.what()).find("amax: the reduced dims of [3, 0] hold no element"), std::string::npos)
      << err.what();
  expect_error([&] { (void)argmin(e, 1); }, "tensor.empty_reduction");
}

TEST(TensorReduce, RefusesBadDimsAndTypes) {
  Client c = Device::cpu().client();
  Tensor x = Tensor::from_data<int32_t>(c, {1, 2, 3, 4}, {2, 2});
  expect_error([&] { (void)sum(x, {2}); }, "tensor.bad_dim");
  expect_error([&] { (void)sum(x, {1, -1}); }, "tensor.bad_dim");
  Error e = expect_error([&] { (void)mean(x, {0}); }, "tensor.unsupported_dtype");
  EXPECT_NE(std::string(e.what()).find("mean takes floating-point tensors"), std::string::npos) << e.what();
  EXPECT_EQ(sum(x).shape(), Shape{});
  expect_values(sum(x), {10}, 0, "sum of all");
  expect_values(sum(x, {}, true), {10}, 0, "sum of all, kept");
  EXPECT_EQ(sum(x, {}, true).shape(), (Shape{1, 1}));
}

}  // namespace
}  // namespace kiln::test
