// matmul against a host reference: element types, transposed and sliced operands (read through
// their strides, no copy), batches that broadcast, and an rhs shared by the whole batch.
#include <gtest/gtest.h>

#include "support.h"

namespace kiln::test {
namespace {

// Host product of row-major [..., m, k] x [..., k, n] with broadcast batches, in double, rounded
// to t.
HostTensor host_matmul(DType t, const HostTensor& a, const HostTensor& b) {
  const size_t ra = a.shape.size(), rb = b.shape.size();
  const int64_t m = a.shape[ra - 2], k = a.shape[ra - 1], n = b.shape[rb - 1];
  Shape ba(a.shape.begin(), a.shape.end() - 2), bb(b.shape.begin(), b.shape.end() - 2);
  Shape batch(std::max(ba.size(), bb.size()));
  for (size_t i = 0; i < batch.size(); ++i) {
    auto dim = [&](const Shape& s) { return i + s.size() >= batch.size() ? s[i + s.size() - batch.size()] : 1; };
    batch[i] = std::max(dim(ba), dim(bb));
  }
  int64_t nbatch = 1;
  for (int64_t d : batch) nbatch *= d;
  auto batch_offset = [&](const Shape& s, int64_t index) {
    int64_t off = 0, rest = index, scale = 1;
    for (size_t d = batch.size(); d-- > 0;) {
      int64_t c = rest % batch[d];
      rest /= batch[d];
      if (d + s.size() >= batch.size()) {
        int64_t len = s[d + s.size() - batch.size()];
        off += (len == 1 ? 0 : c) * scale;
        scale *= len;
      }
    }
    return off;
  };
  HostTensor out;
  out.shape = batch;
  out.shape.push_back(m);
  out.shape.push_back(n);
  for (int64_t bi = 0; bi < nbatch; ++bi) {
    const double* pa = a.v.data() + batch_offset(ba, bi) * m * k;
    const double* pb = b.v.data() + batch_offset(bb, bi) * k * n;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t x = 0; x < k; ++x) s += pa[i * k + x] * pb[x * n + j];
        out.v.push_back(s);
      }
    }
  }
  out.v = values(data_of(t, out.shape, out.v));
  return out;
}

struct MatmulCase {
  const char* name;
  Shape a_base, b_base;
  std::function<Tensor(const Tensor&)> a_view, b_view;
};

TEST(TensorMatmul, MatchesTheHostOverTypesViewsAndBatches) {
  auto same = [](const Tensor& t) { return t; };
  auto tr = [](const Tensor& t) { return t.transpose(); };
  std::vector<MatmulCase> cases = {
      {"plain", {5, 7}, {7, 3}, same, same},
      {"transposed rhs", {5, 7}, {3, 7}, same, tr},
      {"transposed lhs", {7, 5}, {7, 3}, tr, same},
      {"both transposed", {7, 5}, {3, 7}, tr, tr},
      {"sliced", {9, 11}, {12, 4}, [](const Tensor& t) { return t.slice(0, 1, 6).slice(1, 2, 9); },
       [](const Tensor& t) { return t.slice(0, 3, 10); }},
      {"batched", {3, 4, 6}, {3, 6, 5}, same, same},
      {"rhs shared by the batch", {2, 3, 4, 6}, {6, 5}, same, same},
      {"lhs shared by the batch", {4, 6}, {3, 6, 5}, same, same},
      {"batches broadcast both ways", {2, 1, 4, 6}, {1, 3, 6, 5}, same, same},
      {"batched transposed rhs", {3, 4, 6}, {3, 5, 6}, same, tr},
      {"one row", {1, 8}, {8, 9}, same, same},
  };
  uint32_t seed = 40;
  for (const Device& dev : devices()) {
    Client c = dev.client();
    for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I32, DType::I64}) {
      for (const MatmulCase& mc : cases) {
        HostTensor ha = random_host(t, mc.a_base, seed++, -3, 3), hb = random_host(t, mc.b_base, seed++, -3, 3);
        Tensor ba = upload(c, t, ha), bb = upload(c, t, hb);
        Tensor va = mc.a_view(ba), vb = mc.b_view(bb);
        HostTensor want = host_matmul(t, host_view(ba, ha, va), host_view(bb, hb, vb));
        uint64_t before = c.stats().launches;
        Tensor got = matmul(va, vb);
        EXPECT_EQ(c.stats().launches - before, 1u) << "one kernel, no copy: " << mc.name;
        EXPECT_EQ(got.shape(), want.shape) << mc.name;
        // f16/bf16 sum in f32 and round once; allow the k-long sum's rounding.
        expect_values(got, want.v, tolerance(t) * 2, dev.name() + " matmul " + std::string(ir::scalar_name(t)) + " " + mc.name);
      }
    }
  }
}

TEST(TensorMatmul, RefusesWhatDoesNotMultiply) {
  Client c = Device::cpu().client();
  Tensor a = Tensor::from_data<float>(c, std::vector<float>(6, 1.f), {2, 3});
  Tensor b = Tensor::from_data<float>(c, std::vector<float>(8, 1.f), {4, 2});
  Error e = expect_error([&] { (void)matmul(a, b); }, "tensor.shape_mismatch");
  EXPECT_NE(std::string(e.what()).find("inner sizes differ: [2, 3] x [4, 2]"), std::string::npos) << e.what();
  Tensor d = Tensor::from_data<double>(c, std::vector<double>(6, 1.0), {3, 2});
  expect_error([&] { (void)matmul(a, d); }, "tensor.dtype_mismatch");
  Tensor v = Tensor::from_data<float>(c, std::vector<float>(3, 1.f), {3});
  expect_error([&] { (void)matmul(a, v); }, "tensor.shape_mismatch");
  Tensor x = Tensor::from_data<float>(c, std::vector<float>(2 * 2 * 3, 1.f), {2, 2, 3});
  Tensor y = Tensor::from_data<float>(c, std::vector<float>(3 * 3 * 2, 1.f), {3, 3, 2});
  e = expect_error([&] { (void)matmul(x, y); }, "tensor.shape_mismatch");
  EXPECT_NE(std::string(e.what()).find("do not broadcast"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace kiln::test
