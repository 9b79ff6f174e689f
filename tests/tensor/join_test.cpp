// assign, cat and stack against host references, on every device.
#include <gtest/gtest.h>

#include "support.h"

namespace kiln::test {
namespace {

TEST(TensorJoin, CatAndStackMatchTheHost) {
  uint32_t seed = 700;
  for (const Device& dev : devices()) {
    Client c = dev.client();
    for (DType t : {DType::F32, DType::BF16, DType::I64, DType::Bool}) {
      HostTensor a = random_host(t, {2, 3}, seed++, 0, 1), b = random_host(t, {4, 3}, seed++, 0, 1),
                 e = random_host(t, {3, 2}, seed++, 0, 1);
      Tensor ta = upload(c, t, a), tb = upload(c, t, b), te = upload(c, t, e).transpose();  // [2, 3], strided
      HostTensor he = host_view(upload(c, t, e), e, upload(c, t, e).transpose());
      // cat along dim 0: rows of a, then b.
      std::vector<double> want = a.v;
      want.insert(want.end(), b.v.begin(), b.v.end());
      const uint64_t before = c.stats().launches;
      Tensor r = cat({ta, tb}, 0);
      EXPECT_EQ(c.stats().launches - before, 2u) << "one copy per input";
      EXPECT_EQ(r.shape(), (Shape{6, 3}));
      expect_values(r, want, 0, dev.name() + " cat 0");
      // cat along dim 1 (-1) with a strided input.
      want.clear();
      for (int i = 0; i < 2; ++i) {
        for (int j = 0; j < 3; ++j) want.push_back(a.v[size_t(i * 3 + j)]);
        for (int j = 0; j < 3; ++j) want.push_back(he.v[size_t(i * 3 + j)]);
      }
      Tensor r1 = cat({ta, te}, -1);
      EXPECT_EQ(r1.shape(), (Shape{2, 6}));
      expect_values(r1, want, 0, dev.name() + " cat -1");
      // stack along a new middle dim.
      want.clear();
      for (int i = 0; i < 2; ++i) {
        for (int j = 0; j < 3; ++j) want.push_back(a.v[size_t(i * 3 + j)]);
        for (int j = 0; j < 3; ++j) want.push_back(he.v[size_t(i * 3 + j)]);
      }
      Tensor s = stack({ta, te}, 1);
      EXPECT_EQ(s.shape(), (Shape{2, 2, 3}));
      expect_values(s, want, 0, dev.name() + " stack 1");
    }
  }
}

TEST(TensorJoin, AssignWritesIntoAViewAndBroadcasts) {
  for (const Device& dev : devices()) {
    Client c = dev.client();
    Tensor x = upload(c, DType::F32, HostTensor{{3, 4}, std::vector<double>(12, 0)});
    assign(x.slice(1, 1, 3), upload(c, DType::F32, HostTensor{{3, 1}, {7, 8, 9}}));
    expect_values(x, {0, 7, 7, 0, 0, 8, 8, 0, 0, 9, 9, 0}, 0, dev.name() + " assign a column into a slice");
    assign(x.transpose().slice(0, 3, 4),
           upload(c, DType::I32, HostTensor{{1, 3}, {1, 2, 3}}));  // i32 into f32, converted
    expect_values(x, {0, 7, 7, 1, 0, 8, 8, 2, 0, 9, 9, 3}, 0, dev.name() + " assign through a transposed view");
  }
}

TEST(TensorJoin, AssignFromAnOverlappingViewOfItself) {
  for (const Device& dev : devices()) {
    Client c = dev.client();
    std::vector<double> v(1000);
    for (size_t i = 0; i < v.size(); ++i) v[i] = double(i);
    Tensor x = upload(c, DType::F32, HostTensor{{1000}, v});
    assign(x.slice(0, 1, 1000), x.slice(0, 0, 999));  // a shift by one
    std::vector<double> want = v;
    for (size_t i = 1; i < want.size(); ++i) want[i] = v[i - 1];
    expect_values(x, want, 0, dev.name() + " shift");
  }
}

TEST(TensorJoin, Refusals) {
  Client c = Device::cpu().client();
  Tensor a = Tensor::from_data<float>(c, {1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = Tensor::from_data<float>(c, {1, 2, 3, 4}, {2, 2});
  Error e = expect_error([&] { (void)cat({a, b}, 0); }, "tensor.shape_mismatch");
  EXPECT_NE(std::string(e.what()).find("tensor 1 has shape [2, 2] and tensor 0 [2, 3]"), std::string::npos) << e.what();
  expect_error([&] { (void)cat({a, b}, 2); }, "tensor.bad_dim");
  expect_error([&] { (void)cat({a, Tensor::from_data<double>(c, {1, 2, 3}, {1, 3})}, 0); }, "tensor.dtype_mismatch");
  expect_error([&] { (void)stack({a, b}, 0); }, "tensor.shape_mismatch");
  expect_error([&] { (void)cat({}, 0); }, "tensor.shape_mismatch");
  expect_error([&] { assign(Tensor::from_data<float>(c, {1}, {1}).expand({3}), a.slice(0, 0, 1).reshape({3})); },
               "tensor.overlapping_destination");
  expect_error([&] { assign(a, b); }, "tensor.shape_mismatch");
}

}  // namespace
}  // namespace kiln::test
