// Views change shape and strides only (no launch); reshape copies only where strides cannot show
// the new shape; printing; every error kind of the tensor library.
#include <gtest/gtest.h>

#include "support.h"

namespace kiln::test {
namespace {

TEST(TensorViews, LaunchNothingAndShareMemory) {
  Client c = Device::cpu().client();
  HostTensor h = random_host(DType::F32, {2, 3, 4}, 1);
  Tensor t = upload(c, DType::F32, h);
  const uint64_t before = c.stats().launches;
  Tensor p = t.permute({2, 0, 1});
  EXPECT_EQ(p.shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(p.strides(), (Strides{1, 12, 4}));
  Tensor s = t.swap_dims(-1, 0);
  EXPECT_EQ(s.shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(s.strides(), (Strides{1, 4, 12}));
  Tensor sl = t.slice(1, 1, 3);
  EXPECT_EQ(sl.shape(), (Shape{2, 2, 4}));
  EXPECT_EQ(sl.handle().offset() - t.handle().offset(), 4 * sizeof(float));
  Tensor n = t.narrow(2, 1, 2);
  EXPECT_EQ(n.shape(), (Shape{2, 3, 2}));
  Tensor e = upload(c, DType::F32, random_host(DType::F32, {3, 1}, 2)).expand({2, 3, 5});
  EXPECT_EQ(e.strides(), (Strides{0, 1, 0}));
  Tensor r = t.reshape({6, -1});
  EXPECT_EQ(r.shape(), (Shape{6, 4}));
  EXPECT_EQ(r.handle().memory_id(), t.handle().memory_id());
  // Splitting and merging dims of a permuted view where its strides allow: still a view.
  Tensor pr = p.reshape({2, 2, 2, 3});
  EXPECT_EQ(pr.strides(), (Strides{2, 1, 12, 4}));
  EXPECT_EQ(c.stats().launches, before);
  // The values read through the views are the host's.
  expect_values(p, host_view(t, h, p).v, 0, "permute");
  expect_values(sl, host_view(t, h, sl).v, 0, "slice");
  expect_values(pr, host_view(t, h, p).v, 0, "reshaped view");
}

// slice with a step (x[start:end:step]) is a view: the dim's stride times the step, nothing
// launched; ops read it through its strides on every device.
TEST(TensorViews, SliceWithAStep) {
  uint32_t seed = 40;
  for (const Device& dev : devices()) {
    Client c = dev.client();
    for (DType t : {DType::F32, DType::F16, DType::I64}) {
      const std::string what = dev.name() + " " + std::string(ir::scalar_name(t));
      HostTensor h = random_host(t, {7, 9}, seed++);
      Tensor x = upload(c, t, h);
      const uint64_t before = c.stats().launches;
      Tensor cols = x.slice(1, 1, 9, 3);  // columns 1, 4, 7
      EXPECT_EQ(cols.shape(), (Shape{7, 3})) << what;
      EXPECT_EQ(cols.strides(), (Strides{9, 3})) << what;
      EXPECT_EQ(cols.handle().memory_id(), x.handle().memory_id()) << what;
      EXPECT_EQ(cols.handle().offset() - x.handle().offset(), size_t(ir::scalar_bytes(t))) << what;
      Tensor rows = x.slice(0, 0, 7, 2);  // rows 0, 2, 4, 6 (the range does not divide by the step)
      EXPECT_EQ(rows.shape(), (Shape{4, 9})) << what;
      EXPECT_EQ(rows.strides(), (Strides{18, 1})) << what;
      Tensor past = x.slice(0, 2, 7, 10);  // a step past the dim's length: the first element alone
      EXPECT_EQ(past.shape(), (Shape{1, 9})) << what;
      Tensor none = x.slice(1, 4, 4, 2);
      EXPECT_EQ(none.shape(), (Shape{7, 0})) << what;
      Tensor both = x.slice(0, 1, 7, 2).slice(1, 0, 9, 4).transpose();  // [3, 3], strides [4, 18]
      EXPECT_EQ(both.strides(), (Strides{4, 18})) << what;
      EXPECT_EQ(c.stats().launches, before) << what << ": views launch nothing";

      for (const Tensor* v : {&cols, &rows, &past, &both}) {
        HostTensor hv = host_view(x, h, *v);
        expect_values(*v, hv.v, 0, what + " values of " + to_string(v->shape()));
        // An op on the stepped view, fused and eager, against the host.
        std::vector<double> want(hv.v.size());
        for (size_t i = 0; i < want.size(); ++i) want[i] = hv.v[i] * 2 + 1;
        want = values(data_of(t, {int64_t(want.size())}, want));
        for (bool fused : {true, false}) {
          FusionMode mode(fused);
          expect_values(*v * 2 + 1, want, tolerance(t),
                        what + (fused ? " fused" : " eager") + " v * 2 + 1 over " + to_string(v->shape()));
        }
        // A reduction along the stepped dim.
        std::vector<double> row_sums(size_t(v->shape()[0]), 0);
        for (size_t i = 0; i < hv.v.size(); ++i) row_sums[i / size_t(v->shape()[1])] += hv.v[i];
        if (ir::is_float(t)) {
          expect_values(sum(*v, {1}), row_sums, tolerance(t) * 16, what + " sum over a stepped view");
        } else {
          expect_values(sum(*v, {1}), row_sums, 0, what + " sum over a stepped view");
        }
      }
      expect_values(into_contiguous(cols), host_view(x, h, cols).v, 0, what + " into_contiguous of a stepped view");
      expect_values(cols.reshape({21}), host_view(x, h, cols).v, 0, what + " reshape of a stepped view");
    }
  }
  Client c = Device::cpu().client();
  Tensor x = Tensor::from_data<float>(c, {1, 2, 3, 4}, {4});
  Error e = expect_error([&] { (void)x.slice(0, 0, 4, 0); }, "tensor.bad_step");
  EXPECT_NE(std::string(e.what()).find("step 0 of dim 0"), std::string::npos) << e.what();
  expect_error([&] { (void)x.slice(0, 0, 4, -1); }, "tensor.bad_step");
  expect_error([&] { (void)x.slice(0, 0, 5, 2); }, "tensor.index_out_of_range");
}

// A bool tensor reads as a std::vector<bool> (one byte an element on the device), strided views too.
TEST(TensorViews, BoolTensorsReadAsVectorBool) {
  for (const Device& dev : devices()) {
    Client c = dev.client();
    const std::vector<bool> bits = {true, false, false, true, true, true, false, false, true, false, true, false};
    Tensor b = Tensor::from_data(c, bits, {3, 4});
    EXPECT_EQ(b.to_vector<bool>(), bits) << dev.name();
    std::vector<bool> transposed;
    for (size_t j = 0; j < 4; ++j) {
      for (size_t i = 0; i < 3; ++i) transposed.push_back(bits[i * 4 + j]);
    }
    EXPECT_EQ(b.transpose().to_vector<bool>(), transposed) << dev.name() << " a transposed view";
    EXPECT_EQ(b.slice(1, 1, 4, 2).to_vector<bool>(), (std::vector<bool>{false, true, true, false, false, false}))
        << dev.name();
    // A comparison's result, as the ops make bool tensors.
    Tensor x = Tensor::from_data<float>(c, {1, -2, 3, -4, 5, 0}, {2, 3});
    EXPECT_EQ(gt(x, 0).to_vector<bool>(), (std::vector<bool>{true, false, true, false, true, false})) << dev.name();
    EXPECT_EQ(gt(x.transpose(), 0).to_vector<bool>(), (std::vector<bool>{true, false, false, true, true, false}))
        << dev.name();
    expect_error([&] { (void)x.to_vector<bool>(); }, "tensor.dtype_mismatch");
    expect_error([&] { (void)b.to_vector<uint8_t>(); }, "tensor.dtype_mismatch");
  }
}

TEST(TensorViews, ReshapeCopiesWhereStridesCannotShowTheShape) {
  Client c = Device::cpu().client();
  HostTensor h = random_host(DType::F64, {3, 4}, 3);
  Tensor t = upload(c, DType::F64, h);
  Tensor tt = t.transpose();
  const uint64_t before = c.stats().launches;
  Tensor flat = tt.reshape({12});
  EXPECT_EQ(c.stats().launches - before, 1u);
  EXPECT_NE(flat.handle().memory_id(), t.handle().memory_id());
  expect_values(flat, host_view(t, h, tt).v, 0, "reshape of a transpose");
  expect_error([&] { (void)t.reshape({5, -1}); }, "tensor.shape_mismatch");
  Tensor e = Tensor::empty(c, {0, 3}, DType::F32);
  expect_error([&] { (void)e.reshape({-1, 0}); }, "tensor.shape_mismatch");
  EXPECT_EQ(e.reshape({3, -1}).shape(), (Shape{3, 0}));
  expect_error([&] { (void)Tensor::empty(c, {2, -1}, DType::F32); }, "tensor.shape_mismatch");
}

TEST(TensorViews, IntoContiguousLeavesAContiguousTensorAlone) {
  Client c = Device::cpu().client();
  Tensor t = upload(c, DType::I32, random_host(DType::I32, {3, 4}, 4));
  const uint64_t before = c.stats().launches;
  Tensor same = into_contiguous(t);
  EXPECT_EQ(same.handle().memory_id(), t.handle().memory_id());
  EXPECT_EQ(c.stats().launches, before);
}

TEST(TensorPrint, AsPyTorchPrintsIt) {
  Client c = Device::cpu().client();
  Tensor a = Tensor::from_data<float>(c, {1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(a.to_string(), "tensor([[1., 2., 3.],\n        [4., 5., 6.]])");
  Tensor b = Tensor::from_data<double>(c, {0.5, -1.25, 10}, {3});
  EXPECT_EQ(b.to_string(), "tensor([ 0.5000, -1.2500, 10.0000], dtype=f64)");
  Tensor i = Tensor::from_data<int32_t>(c, {1, -20, 300}, {3});
  EXPECT_EQ(i.to_string(), "tensor([  1, -20, 300], dtype=i32)");
  Tensor t3 = Tensor::from_data<float>(c, {1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2});
  EXPECT_EQ(t3.to_string(), "tensor([[[1., 2.],\n         [3., 4.]],\n\n        [[5., 6.],\n         [7., 8.]]])");
  EXPECT_EQ(Tensor::from_data<float>(c, {21, 84, 42}, {3}).to_data().to_string(), "[21.0, 84.0, 42.0]");
  // Past 1000 elements, as PyTorch: the first and last 3 of each long dim around "...", the
  // widths and the notation from the elements shown.
  std::vector<float> counting(2000);
  for (size_t k = 0; k < counting.size(); ++k) counting[k] = float(k);
  EXPECT_EQ(Tensor::from_data<float>(c, counting, {40, 50}).to_string(),
            "tensor([[   0.,    1.,    2.,  ...,   47.,   48.,   49.],\n"
            "        [  50.,   51.,   52.,  ...,   97.,   98.,   99.],\n"
            "        [ 100.,  101.,  102.,  ...,  147.,  148.,  149.],\n"
            "        ...,\n"
            "        [1850., 1851., 1852.,  ..., 1897., 1898., 1899.],\n"
            "        [1900., 1901., 1902.,  ..., 1947., 1948., 1949.],\n"
            "        [1950., 1951., 1952.,  ..., 1997., 1998., 1999.]])");
  EXPECT_EQ(Tensor::from_data<float>(c, counting, {2000}).to_string(),
            "tensor([   0.,    1.,    2.,  ..., 1997., 1998., 1999.])");
  EXPECT_EQ(Tensor::from_data<float>(c, std::vector<float>(1000, 0.5f), {1000}).to_string().size(),
            8u + 1000 * 6 + 999 * 2 + 2)
      << "1000 elements print whole";
  EXPECT_EQ(Tensor::from_data<f16>(c, {f16(0.1), f16(1.0), f16(-2.5)}, {3}).to_data().to_string(), "[0.1, 1.0, -2.5]");
  EXPECT_EQ(Tensor::from_data<bf16>(c, {bf16(0.1), bf16(3.0)}, {2}).to_data().to_string(), "[0.1, 3.0]");
}

TEST(TensorErrors, EachKindSaysWhatIsWrong) {
  Client c = Device::cpu().client();
  Tensor a = Tensor::from_data<float>(c, std::vector<float>(6, 1.f), {2, 3});
  Tensor b = Tensor::from_data<float>(c, std::vector<float>(8, 1.f), {2, 4});
  Error e = expect_error([&] { (void)(a + b); }, "tensor.shape_mismatch");
  EXPECT_NE(std::string(e.what()).find("add: shapes [2, 3] and [2, 4] do not broadcast"), std::string::npos)
      << e.what();
  Tensor d = Tensor::from_data<double>(c, std::vector<double>(6, 1.0), {2, 3});
  e = expect_error([&] { (void)(a * d); }, "tensor.dtype_mismatch");
  EXPECT_NE(std::string(e.what()).find("mul: operands are f32 and f64"), std::string::npos) << e.what();
  Tensor i = Tensor::from_data<int32_t>(c, {1, 2}, {2});
  e = expect_error([&] { (void)exp(i); }, "tensor.unsupported_dtype");
  EXPECT_NE(std::string(e.what()).find("exp takes floating-point tensors"), std::string::npos) << e.what();
  expect_error([&] { (void)Tensor::from_data<uint16_t>(c, {1, 2}, {2}); }, "tensor.unsupported_dtype");
  e = expect_error([&] { (void)neg(Tensor::from_data<uint8_t>(c, {1, 2}, {2})); }, "tensor.unsupported_dtype");
  EXPECT_NE(std::string(e.what()).find("neg takes signed numbers"), std::string::npos) << e.what();
  expect_error(
      [&] {
        (void)(Tensor::from_data(c, std::vector<bool>{true, false}, {2}) + 1);
      },
      "tensor.unsupported_dtype");
  expect_error([&] { (void)Tensor::from_data<float>(c, {1, 2, 3}, {2, 2}); }, "tensor.shape_mismatch");
  expect_error([&] { (void)a.swap_dims(0, 2); }, "tensor.bad_dim");
  expect_error([&] { (void)a.permute({0, 0}); }, "tensor.bad_dim");
  expect_error([&] { (void)a.slice(1, 2, 4); }, "tensor.index_out_of_range");
  expect_error([&] { (void)a.expand({2, 5}); }, "tensor.shape_mismatch");
  Tensor moved = std::move(a);
  expect_error([&] { (void)(a + moved); }, "tensor.undefined");
  expect_error([&] { (void)a.to_data(); }, "tensor.undefined");
  expect_error([&] { (void)moved.to_data().values<double>(); }, "tensor.dtype_mismatch");
  Tensor other = Tensor::from_data<float>(Device::cpu().client(), {1, 2}, {2});  // another client
  e = expect_error([&] { (void)(other + Tensor::from_data<float>(c, {1, 2}, {2})); }, "tensor.device_mismatch");
  EXPECT_NE(std::string(e.what()).find("different clients"), std::string::npos) << e.what();
  // A walk of more dims than kernels take: 9 dims that two layouts keep from folding.
  Shape nine(9, 2);
  Tensor rowm = Tensor::empty(c, nine, DType::F32);
  Tensor rev = Tensor::empty(c, nine, DType::F32).permute({8, 7, 6, 5, 4, 3, 2, 1, 0});
  e = expect_error([&] { (void)(rowm + rev); }, "tensor.too_large");
  EXPECT_NE(std::string(e.what()).find("kernels take at most 8 dims"), std::string::npos) << e.what();
  // A failed op leaves a tensor given to it as it was.
  Tensor given = Tensor::from_data<int32_t>(c, {1, 2, 3}, {3});
  expect_error([&] { (void)(std::move(given) * 2.5); }, "tensor.bad_scalar");
  ASSERT_TRUE(given.defined());
  EXPECT_EQ(given.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3}));
}

TEST(TensorDevices, ToDeviceKeepsTheValues) {
  for (const Device& dev : devices()) {
    Client c = Device::cpu().client();
    HostTensor h = random_host(DType::BF16, {3, 5}, 9);
    Tensor t = upload(c, DType::BF16, h).transpose();
    Tensor there = t.to_device(dev.client());
    EXPECT_EQ(there.shape(), (Shape{5, 3}));
    expect_values(there, host_view(upload(c, DType::BF16, h), h, upload(c, DType::BF16, h).transpose()).v, 0,
                  dev.name());
  }
}

}  // namespace
}  // namespace kiln::test
