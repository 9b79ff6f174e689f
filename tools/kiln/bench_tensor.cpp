// kiln bench's tensor group: the tensor library's ops as a user calls them. Elementwise add f32
// over 1 GiB against PyTorch's `x + y`; the host time of one tiny op (PyTorch's `z.add_(1)`);
// matmul bf16 8192^3 through the tensor API against cuBLAS. Each result is checked on a sample.
#include <cmath>
#include <cstdio>

#include "bench_rows.h"
#include "kiln/tensor.h"

namespace kiln::tool {

namespace {

void add_f32(const Client& c, bool gpu, const std::map<std::string, double>& peer, std::vector<Row>& rows) {
  const int64_t n = gpu ? int64_t(1) << 28 : int64_t(1) << 20;
  std::vector<float> xs = random_floats(size_t(n), 31), ys = random_floats(size_t(n), 32);
  Tensor x = Tensor::from_data(c, xs, {n}), y = Tensor::from_data(c, ys, {n});
  Tensor z = x + y;
  std::vector<float> got = z.to_vector<float>();
  double worst = 0;
  for (int64_t i = 0; i < n; i += 4099) worst = std::max(worst, double(std::fabs(got[size_t(i)] - (xs[size_t(i)] + ys[size_t(i)]))));
  z = Tensor();
  double ms = median_ms(c, 5, gpu ? 10 : 1, [&] { Tensor r = x + y; });
  rows.push_back({"tensor add f32, 1 GiB operands (x + y, new memory)", "GB/s", 3.0 * 4 * double(n) / ms / 1e6, "pytorch",
                  peer_of(peer, "add_f32_GBps"), true, 1.0});
  rows.push_back({"tensor add f32, max abs error", "", worst, "", NAN, false, 0.0});
}

void tiny_op(const Client& c, const std::map<std::string, double>& peer, std::vector<Row>& rows) {
  Tensor z = Tensor::from_data<float>(c, {0.f}, {1});
  for (int i = 0; i < 1000; ++i) z = std::move(z) + 1;
  c.sync();
  const int reps = 10000;
  auto t0 = clock_type::now();
  for (int i = 0; i < reps; ++i) z = std::move(z) + 1;
  c.sync();
  double us = ms_since(t0) * 1000 / reps;
  rows.push_back({"tensor tiny op host time (z = std::move(z) + 1)", "us", us, "pytorch", peer_of(peer, "torch_tiny_op_us"),
                  false, 0.5});
  float want = 11000.f, got = z.to_vector<float>()[0];
  rows.push_back({"tensor tiny op, result error", "", double(std::fabs(got - want)), "", NAN, false, 0.0});
}

void matmul_bf16(const Client& c, bool gpu, const std::map<std::string, double>& peer, std::vector<Row>& rows) {
  const int64_t n = gpu ? 8192 : 128;
  std::vector<float> af = random_floats(size_t(n * n), 41), bf = random_floats(size_t(n * n), 42);
  std::vector<bf16> a(af.begin(), af.end()), b(bf.begin(), bf.end());
  Tensor ta = Tensor::from_data(c, a, {n, n}), tb = Tensor::from_data(c, b, {n, n});
  Tensor m = matmul(ta, tb);
  const double worst = matmul_error(a, b, m.to_vector<bf16>(), n, 16);
  double ms = median_ms(c, 3, 1, [&] { Tensor r = matmul(ta, tb); });
  rows.push_back({"tensor matmul bf16 " + std::to_string(n) + "^3 (before autotune: one unit per element)", "TFLOP/s",
                  2.0 * double(n) * double(n) * double(n) / ms / 1e9, "cublas",
                  peer_of(peer, "matmul_bf16_" + std::to_string(n) + "_TFLOPs"), true, NAN});
  rows.push_back({"tensor matmul bf16, max rel. error (16 samples)", "", worst, "", NAN, false, 1e-2});
}

}  // namespace

void tensor_benchmarks(const Client& c, bool gpu, const std::map<std::string, double>& peer, std::vector<Row>& rows) {
  add_f32(c, gpu, peer, rows);
  tiny_op(c, peer, rows);
  matmul_bf16(c, gpu, peer, rows);
}

}  // namespace kiln::tool
