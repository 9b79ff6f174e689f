// gather, scatter, select and select_assign against host references; indices out of range found
// on the device and reported with the op, dim, index and size, nothing written.
#include <gtest/gtest.h>

#include "support.h"

namespace kiln::test {
namespace {

TEST(TensorIndexing, GatherAndSelectMatchTheHost) {
  for (const Device& dev : devices()) {
    Client c = dev.client();
    for (DType it : {DType::I64, DType::I32}) {
      HostTensor h = random_host(DType::F32, {3, 4}, 11);
      Tensor t = upload(c, DType::F32, h);
      // gather along dim 1: out[i][j] = t[i][idx[i][j]].
      HostTensor idx{{3, 2}, {3, 0, 1, 1, 2, 3}};
      std::vector<double> want;
      for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 2; ++j) want.push_back(h.v[size_t(i * 4 + int(idx.v[size_t(i * 2 + j)]))]);
      }
      Tensor g = gather(t, 1, upload(c, it, idx));
      EXPECT_EQ(g.shape(), (Shape{3, 2}));
      expect_values(g, want, 0, dev.name() + " gather dim 1");
      // gather along dim 0 of a transposed view.
      Tensor tt = t.transpose();  // [4, 3]
      HostTensor htt = host_view(t, h, tt);
      HostTensor idx0{{2, 3}, {0, 3, 2, 1, 1, 0}};
      want.clear();
      for (int i = 0; i < 2; ++i) {
        for (int j = 0; j < 3; ++j) want.push_back(htt.v[size_t(int(idx0.v[size_t(i * 3 + j)]) * 3 + j)]);
      }
      expect_values(gather(tt, 0, upload(c, it, idx0)), want, 0, dev.name() + " gather dim 0 of a view");
      // select (index_select) along dim 0 and -1, with repeats.
      HostTensor rows{{3}, {2, 0, 2}};
      want.clear();
      for (double r : rows.v)
        for (int j = 0; j < 4; ++j) want.push_back(h.v[size_t(int(r) * 4 + j)]);
      Tensor s = select(t, 0, upload(c, it, rows));
      EXPECT_EQ(s.shape(), (Shape{3, 4}));
      expect_values(s, want, 0, dev.name() + " select dim 0");
      HostTensor cols{{2}, {3, 1}};
      want.clear();
      for (int i = 0; i < 3; ++i)
        for (double col : cols.v) want.push_back(h.v[size_t(i * 4 + int(col))]);
      expect_values(index_select(t, -1, upload(c, it, cols)), want, 0, dev.name() + " index_select dim -1");
    }
  }
}

TEST(TensorIndexing, ScatterAndSelectAssignAddTheirValues) {
  for (const Device& dev : devices()) {
    Client c = dev.client();
    HostTensor h = random_host(DType::F64, {3, 4}, 12);
    Tensor t = upload(c, DType::F64, h);
    // scatter along dim 1 with a repeated position: both values land.
    HostTensor idx{{2, 3}, {1, 1, 3, 0, 2, 0}}, vals{{2, 3}, {10, 20, 30, 40, 50, 60}};
    std::vector<double> want = h.v;
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 3; ++j) want[size_t(i * 4 + int(idx.v[size_t(i * 3 + j)]))] += vals.v[size_t(i * 3 + j)];
    }
    Tensor r = scatter(t, 1, upload(c, DType::I64, idx), upload(c, DType::F64, vals));
    expect_values(r, want, 1e-15, dev.name() + " scatter dim 1");
    expect_values(t, h.v, 0, dev.name() + " scatter leaves its input alone");
    // select_assign along dim 0: rows 2 and 0 (twice) get the value rows added.
    HostTensor rows{{3}, {2, 0, 0}};
    HostTensor add = random_host(DType::F64, {3, 4}, 13);
    want = h.v;
    for (int k = 0; k < 3; ++k)
      for (int j = 0; j < 4; ++j) want[size_t(int(rows.v[size_t(k)]) * 4 + j)] += add.v[size_t(k * 4 + j)];
    expect_values(select_assign(t, 0, upload(c, DType::I32, rows), upload(c, DType::F64, add)), want, 1e-15,
                  dev.name() + " select_assign dim 0");
  }
}

// Seed 02's experiment: a [3, 2] zero tensor, select_assign along dim 1 with index 2, adding 1.
TEST(TensorIndexing, AnIndexOutOfRangeIsAnErrorOnEveryDeviceAndNothingIsWritten) {
  for (const Device& dev : devices()) {
    Client c = dev.client();
    Tensor zeros = upload(c, DType::F32, HostTensor{{3, 2}, std::vector<double>(6, 0)});
    Tensor ones = upload(c, DType::F32, HostTensor{{3, 1}, {1, 1, 1}});
    Tensor idx = upload(c, DType::I64, HostTensor{{1}, {2}});
    Error e = expect_error(
        [&] {
          Tensor r = select_assign(zeros, 1, idx, ones);
          (void)r.to_data();  // on a GPU the error comes at the next read or sync
        },
        "tensor.index_out_of_range");
    EXPECT_NE(std::string(e.what()).find("select_assign: index 2 is out of range for dim 1 of size 2"),
              std::string::npos)
        << e.what();
    expect_values(zeros, std::vector<double>(6, 0), 0, dev.name() + " the destination is unchanged");
    // Reported once: the client goes on, and a good op works.
    expect_values(select_assign(zeros, 1, upload(c, DType::I64, HostTensor{{1}, {1}}), ones), {0, 1, 0, 1, 0, 1}, 0,
                  dev.name() + " after the error");
    // Negative indices, and each op.
    Tensor neg = upload(c, DType::I32, HostTensor{{1}, {-1}});
    e = expect_error([&] { (void)select(zeros, 0, neg).to_data(); }, "tensor.index_out_of_range");
    EXPECT_NE(std::string(e.what()).find("select: index -1 is out of range for dim 0 of size 3"), std::string::npos)
        << e.what();
    expect_error(
        [&] {
          (void)gather(zeros, 0, upload(c, DType::I64, HostTensor{{1, 2}, {0, 3}})).to_data();
        },
        "tensor.index_out_of_range");
    expect_error(
        [&] {
          (void)scatter(zeros, 1, upload(c, DType::I64, HostTensor{{1, 1}, {5}}),
                        upload(c, DType::F32, HostTensor{{1, 1}, {1}}));
          c.sync();
        },
        "tensor.index_out_of_range");
    expect_values(zeros, std::vector<double>(6, 0), 0, dev.name() + " still unchanged");
  }
}

// An error waiting to be reported does not stop later ops: each is judged by its own indices.
TEST(TensorIndexing, LaterOpsAreJudgedByTheirOwnIndices) {
  if (devices().size() == 1)
    GTEST_SKIP() << "needs a GPU: on the CPU an index error is reported at once, so none waits";
  for (const Device& dev : devices()) {
    if (dev.kind() == DeviceKind::Cpu) continue;
    Client c = dev.client();
    Tensor t = upload(c, DType::F32, HostTensor{{3, 2}, {1, 2, 3, 4, 5, 6}});
    Tensor bad = upload(c, DType::I64, HostTensor{{1}, {7}}), good = upload(c, DType::I64, HostTensor{{2}, {2, 0}});
    Tensor a = select(t, 0, bad);
    Tensor b = select(t, 0, good);
    Tensor e = select(t, 1, upload(c, DType::I64, HostTensor{{1}, {-3}}));
    Error err = expect_error([&] { c.sync(); }, "tensor.index_out_of_range");
    EXPECT_NE(std::string(err.what()).find("select: index 7 is out of range for dim 0 of size 3"), std::string::npos)
        << err.what();
    EXPECT_NE(std::string(err.what()).find("and 1 later index op(s)"), std::string::npos) << err.what();
    expect_values(b, {5, 6, 1, 2}, 0, dev.name() + " the good op between two bad ones");
  }
}

TEST(TensorIndexing, HostSideRefusals) {
  Client c = Device::cpu().client();
  Tensor t = Tensor::from_data<float>(c, {1, 2, 3, 4}, {2, 2});
  expect_error([&] { (void)select(t, 0, Tensor::from_data<float>(c, {0}, {1})); }, "tensor.unsupported_dtype");
  expect_error([&] { (void)select(t, 2, Tensor::from_data<int64_t>(c, {0}, {1})); }, "tensor.bad_dim");
  expect_error([&] { (void)select(t, 0, Tensor::from_data<int64_t>(c, {0, 1}, {1, 2})); }, "tensor.shape_mismatch");
  expect_error([&] { (void)gather(t, 0, Tensor::from_data<int64_t>(c, {0, 1}, {2})); }, "tensor.shape_mismatch");
  expect_error(
      [&] {
        (void)scatter(t, 0, Tensor::from_data<int64_t>(c, {0}, {1, 1}), Tensor::from_data<double>(c, {1}, {1, 1}));
      },
      "tensor.dtype_mismatch");
  expect_error(
      [&] {
        (void)select_assign(t, 0, Tensor::from_data<int64_t>(c, {0}, {1}),
                            Tensor::from_data<float>(c, {1, 2, 3}, {1, 3}));
      },
      "tensor.shape_mismatch");
  // A code no site registered, written into the word by hand.
  std::vector<uint32_t> bogus(8, 0);
  bogus[0] = 1u << 30;
  c.write(c.device_error_word(), bogus);
  expect_error([&] { c.check_device_error(); }, "device.error_word");
}

}  // namespace
}  // namespace kiln::test
