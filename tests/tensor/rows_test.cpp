// softmax, log_softmax and layer_norm against float64 host references: element types, dims,
// rows shorter and longer than a cube (1, 7, 255, 257, 1000), strided inputs, errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "kiln/autotune.h"
#include "support.h"

namespace kiln::test {
namespace {

// Each row of h along `dim` (h row-major) through `f`, which maps the row's values to the outputs.
HostTensor host_rows(const HostTensor& h, int64_t dim,
                     const std::function<std::vector<double>(const std::vector<double>&)>& f) {
  const size_t rank = h.shape.size(), d = size_t(dim);
  int64_t inner = 1;
  for (size_t i = d + 1; i < rank; ++i) inner *= h.shape[i];
  const int64_t len = h.shape[d];
  int64_t outer = 1;
  for (size_t i = 0; i < d; ++i) outer *= h.shape[i];
  HostTensor out{h.shape, h.v};
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      std::vector<double> row(static_cast<size_t>(len));
      for (int64_t j = 0; j < len; ++j) row[size_t(j)] = h.v[size_t((o * len + j) * inner + in)];
      std::vector<double> r = f(row);
      for (int64_t j = 0; j < len; ++j) out.v[size_t((o * len + j) * inner + in)] = r[size_t(j)];
    }
  }
  return out;
}

// rows.h's formula, exp(x - max) / sum(exp(x - max)): a value equal to a finite maximum adds
// exactly 1 to the sum (exp(0)); a maximum of +inf makes the whole row NaN (inf - inf), as a row of
// -inf alone does (-inf - -inf).
std::vector<double> host_softmax(const std::vector<double>& x, bool log) {
  double m = -INFINITY, s = 0;
  for (double v : x) m = std::max(m, v);
  for (double v : x) s += v == m && std::isfinite(m) ? 1 : std::exp(v - m);
  std::vector<double> r;
  for (double v : x) r.push_back(log ? v - m - std::log(s) : std::exp(v - m) / s);
  return r;
}

// `check` for each kind of row kernel: autotune's choice, then each kernel the length is offered
// pinned (streaming, and resident with cubes of 128 to 1024 units while a unit holds at most 32
// elements of the length's bucket and, beyond 128 units, at least 4; and for strided rows that
// are neighbours in memory, `tiled` of element type t, the split kernel with its two (chunk,
// lag, depth) where the bucket holds more than a chunk, the held kernel with chunks of 256 and 512
// (and 1024 for softmax) where the bucket holds 2 to `at_once` of them (the cubes the device runs at once), and the
// tiled kernel: tiles of 32 bytes with cubes of 256 units, and of 16, 32 and 128 bytes with cubes of 1024).
void each_kernel(const std::string& op, int64_t len, const std::function<void(const std::string&)>& check,
                 std::optional<DType> tiled = std::nullopt, int at_once = 0) {
  std::vector<std::string> kinds = {"", "streaming 256"};
  int64_t bucket = 1;
  while (bucket < len) bucket *= 2;
  if (tiled) {
    for (int64_t chunk : {256, 512}) {
      if (bucket > chunk) kinds.push_back("split " + std::to_string(chunk) + " lag 3 depth 8");
    }
    for (int64_t chunk : {256, 512, 1024}) {
      const int64_t most = (bucket + chunk - 1) / chunk;
      // Softmax in f32 alone keeps elements in shared memory.
      if (chunk > 512 && (op != "softmax" || *tiled == DType::F64)) continue;
      if (most >= 2 && most <= at_once) kinds.push_back("held " + std::to_string(chunk));
    }
    // f32 softmax alone lands its shared part by copy.async.
    for (int64_t chunk : {1024, 1152}) {
      const int64_t most = (bucket + chunk - 1) / chunk;
      if (op == "softmax" && *tiled == DType::F32 && bucket / 2 >= chunk && most <= at_once)
        kinds.push_back("held " + std::to_string(chunk) + " async");
    }
    for (auto [bytes, units] : {std::pair{32, 256}, std::pair{16, 1024}, std::pair{32, 1024}, std::pair{128, 1024}}) {
      kinds.push_back("strided " + std::to_string(std::clamp(bytes / ir::scalar_bytes(*tiled), 1, 32)) + "x" +
                      std::to_string(units));
    }
  }
  for (int64_t units : {128, 256, 512, 1024}) {
    const int64_t most = (bucket + units - 1) / units;
    if (most <= 32 && (units == 128 || most >= 4)) kinds.push_back("resident " + std::to_string(units));
  }
  for (const std::string& kind : kinds) {
    autotune::pin(op, kind.empty() ? std::nullopt : std::optional<std::string>(kind));
    check(kind.empty() ? "autotuned" : kind);
  }
  autotune::pin(op, std::nullopt);
}

TEST(TensorRows, SoftmaxAndLogSoftmaxMatchTheHost) {
  uint32_t seed = 500;
  for (const Device& dev : devices()) {
    Client c = dev.client();
    for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16}) {
      for (int64_t len : {1, 7, 255, 257, 1000, 3000}) {
        for (bool log : {false, true}) {
          HostTensor h = random_host(t, {3, len}, seed++, -6, 6);
          Tensor x = upload(c, t, h);
          std::vector<double> want =
              host_rows(h, 1, [&](const std::vector<double>& r) { return host_softmax(r, log); }).v;
          want = values(data_of(t, {int64_t(want.size())}, want));
          const double tol = tolerance(t) * (t == DType::F32 ? 8 : t == DType::F64 ? 16 : 2);
          each_kernel(log ? "log_softmax" : "softmax", len, [&](const std::string& kind) {
            Tensor got = log ? log_softmax(x, -1) : softmax(x, 1);
            expect_values(got, want, tol,
                          dev.name() + (log ? " log_softmax " : " softmax ") + std::string(ir::scalar_name(t)) +
                              " len " + std::to_string(len) + ", " + kind);
          });
        }
      }
      // Along a dim that is not the last, over a strided view.
      HostTensor h = random_host(t, {5, 4, 6}, seed++, -3, 3);
      Tensor base = upload(c, t, h);
      Tensor v = base.permute({2, 0, 1});  // [6, 5, 4]
      HostTensor hv = host_view(base, h, v);
      std::vector<double> want =
          host_rows(hv, 1, [](const std::vector<double>& r) { return host_softmax(r, false); }).v;
      want = values(data_of(t, {int64_t(want.size())}, want));
      each_kernel(
          "softmax", 5,
          [&](const std::string& kind) {
            expect_values(softmax(v, 1), want, tolerance(t) * 8,
                          dev.name() + " softmax dim 1 of a permuted view, " + kind);
          },
          t);
    }
  }
}

TEST(TensorRows, LayerNormMatchesTheHost) {
  uint32_t seed = 600;
  for (const Device& dev : devices()) {
    Client c = dev.client();
    for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16}) {
      for (int64_t len : {1, 7, 257, 1000, 3000}) {
        for (int with : {0, 1, 2}) {  // no weight or bias; weight; both
          HostTensor h = random_host(t, {4, len}, seed++, -5, 5);
          HostTensor w = random_host(t, {len}, seed++, 0.5, 2), b = random_host(t, {len}, seed++, -1, 1);
          const double eps = 1e-5;
          std::vector<double> want = host_rows(h, 1, [&](const std::vector<double>& r) {
                                       double mean = 0, var = 0;
                                       for (double v : r) mean += v;
                                       mean /= double(r.size());
                                       for (double v : r) var += (v - mean) * (v - mean);
                                       var /= double(r.size());
                                       std::vector<double> o;
                                       for (size_t j = 0; j < r.size(); ++j) {
                                         double y = (r[j] - mean) / std::sqrt(var + eps);
                                         if (with >= 1) y *= w.v[j];
                                         if (with >= 2) y += b.v[j];
                                         o.push_back(y);
                                       }
                                       return o;
                                     }).v;
          want = values(data_of(t, {int64_t(want.size())}, want));
          Tensor x = upload(c, t, h);
          Tensor tw = with >= 1 ? upload(c, t, w) : Tensor(), tb = with >= 2 ? upload(c, t, b) : Tensor();
          each_kernel("layer_norm", len, [&](const std::string& kind) {
            Tensor got = layer_norm(x, tw, tb, eps);
            expect_values(got, want, tolerance(t) * 16,
                          dev.name() + " layer_norm " + std::string(ir::scalar_name(t)) + " len " +
                              std::to_string(len) + " with " + std::to_string(with) + ", " + kind);
          });
        }
      }
    }
  }
}

// Strided rows whose neighbours lie next to each other in memory (the rows of x.transpose()) are
// read by tiles (rows_tiled.cpp): over every float type, row lengths around a plane and a cube
// (1, 31, 33, 127, 129, 1000), row counts that are not a multiple of a tile, the output's rows
// contiguous (written through shared memory) or strided like the input's (softmax over dim 0),
// a rank-3 view, and layer_norm with weight and bias. Each kernel pinned, against the host. A
// test a type, so that CTest runs them side by side (one took 140 s of the sanitizer run).
class TensorRowsStrided : public ::testing::TestWithParam<DType> {};

TEST_P(TensorRowsStrided, ReadByTiles) {
  const DType t = GetParam();
  uint32_t seed = 700 + 1000 * uint32_t(ir::scalar_bytes(t)) + (t == DType::BF16 ? 500 : 0);
  for (const Device& dev : devices()) {
    Client c = dev.client();
    const int at_once = dev.info().multiprocessors;
    {
      const double tol = tolerance(t) * (t == DType::F32 ? 8 : t == DType::F64 ? 16 : 2);
      for (int64_t len : {1, 31, 33, 127, 129, 1000}) {
        for (int64_t rows : {5, 37}) {
          const std::string what = dev.name() + " " + std::string(ir::scalar_name(t)) + " " + std::to_string(rows) +
                                   " rows of " + std::to_string(len);
          HostTensor h = random_host(t, {len, rows}, seed++, -6, 6);
          // Row 1 holds +inf, which makes it NaN throughout by the formula (the running sums of
          // the strided kernels once gave 0 beside it: the fuzzer's tensor seeds 373, 396, 422),
          // and row 2 -inf, which leaves it finite.
          h.v[size_t((len / 2) * rows + 1)] = INFINITY;
          if (len > 1) h.v[size_t((len / 3) * rows + 2)] = -INFINITY;
          Tensor base = upload(c, t, h);
          // softmax and log_softmax over the last dim of base.transpose(): [rows, len], strides [1, rows].
          Tensor x = base.transpose();
          HostTensor hx = host_view(base, h, x);
          for (bool log : {false, true}) {
            std::vector<double> want =
                host_rows(hx, 1, [&](const std::vector<double>& r) { return host_softmax(r, log); }).v;
            want = values(data_of(t, {int64_t(want.size())}, want));
            each_kernel(
                log ? "log_softmax" : "softmax", len,
                [&](const std::string& kind) {
                  Tensor got = log ? log_softmax(x, -1) : softmax(x, -1);
                  EXPECT_TRUE(got.is_contiguous()) << what;
                  expect_values(got, want, tol,
                                what + (log ? " log_softmax" : " softmax") + " of x.transpose(), " + kind);
                },
                len > 1 ? std::optional<DType>(t) : std::nullopt, at_once);
          }
          // Over dim 0 of base itself: rows strided in the input and in the (row-major) output.
          std::vector<double> want =
              host_rows(h, 0, [&](const std::vector<double>& r) { return host_softmax(r, false); }).v;
          want = values(data_of(t, {int64_t(want.size())}, want));
          each_kernel(
              "softmax", len,
              [&](const std::string& kind) {
                expect_values(softmax(base, 0), want, tol, what + " softmax over dim 0, " + kind);
              },
              len > 1 ? std::optional<DType>(t) : std::nullopt, at_once);
        }
      }
      // Rank 3: [2, 6, len] viewed from [2, len, 6] (the outer dims fold around the tile's).
      for (int64_t len : {33, 129}) {
        HostTensor h = random_host(t, {2, len, 6}, seed++, -6, 6);
        Tensor base = upload(c, t, h);
        Tensor x = base.permute({0, 2, 1});
        HostTensor hx = host_view(base, h, x);
        std::vector<double> want =
            host_rows(hx, 2, [&](const std::vector<double>& r) { return host_softmax(r, false); }).v;
        want = values(data_of(t, {int64_t(want.size())}, want));
        each_kernel(
            "softmax", len,
            [&](const std::string& kind) {
              expect_values(softmax(x, -1), want, tol,
                            dev.name() + " " + std::string(ir::scalar_name(t)) + " softmax rank 3, " + kind);
            },
            t);
      }
      // layer_norm over the last dim of a transposed view, with weight and bias.
      for (int64_t len : {33, 1000}) {
        HostTensor h = random_host(t, {len, 37}, seed++, -5, 5);
        HostTensor w = random_host(t, {len}, seed++, 0.5, 2), b = random_host(t, {len}, seed++, -1, 1);
        Tensor base = upload(c, t, h);
        Tensor x = base.transpose();
        HostTensor hx = host_view(base, h, x);
        const double eps = 1e-5;
        std::vector<double> want = host_rows(hx, 1, [&](const std::vector<double>& r) {
                                     double mean = 0, var = 0;
                                     for (double v : r) mean += v;
                                     mean /= double(r.size());
                                     for (double v : r) var += (v - mean) * (v - mean);
                                     var /= double(r.size());
                                     std::vector<double> o;
                                     for (size_t j = 0; j < r.size(); ++j)
                                       o.push_back((r[j] - mean) / std::sqrt(var + eps) * w.v[j] + b.v[j]);
                                     return o;
                                   }).v;
        want = values(data_of(t, {int64_t(want.size())}, want));
        Tensor tw = upload(c, t, w), tb = upload(c, t, b);
        each_kernel(
            "layer_norm", len,
            [&](const std::string& kind) {
              expect_values(layer_norm(x, tw, tb, eps), want, tolerance(t) * 16,
                            dev.name() + " " + std::string(ir::scalar_name(t)) + " layer_norm of x.transpose(), len " +
                                std::to_string(len) + ", " + kind);
            },
            t, at_once);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryFloat, TensorRowsStrided,
                         ::testing::Values(DType::F32, DType::F16, DType::BF16, DType::F64),
                         [](const ::testing::TestParamInfo<DType>& info) {
                           return std::string(ir::scalar_name(info.param));
                         });

// held 1024 (softmax computed in f32 only) keeps half of a unit's 128 elements in shared memory:
// rows of 1500 (two chunks, the last window overlapping both halves of the chunk before) of f32,
// f16 and bf16, 37 of them (a ragged second group), written transposed and strided; f64 is not
// offered it. For f32, also with that half landing by copy.async (held 1024 async), which f16 and
// bf16 are not offered. Pinned alone: every kernel at this length under the sanitizers took minutes of CI.
TEST(TensorRows, HeldRowsKeepHalfInSharedMemory) {
  uint32_t seed = 800;
  for (const Device& dev : devices()) {
    if (dev.info().multiprocessors < 2) continue;  // the held kernels need two chunks at once
    Client c = dev.client();
    for (DType t : {DType::F32, DType::F16, DType::BF16}) {
      const double tol = tolerance(t) * (t == DType::F32 ? 8 : t == DType::F64 ? 16 : 2);
      const std::string what = dev.name() + " " + std::string(ir::scalar_name(t)) + " 37 rows of 1500, held 1024";
      HostTensor h = random_host(t, {1500, 37}, seed++, -6, 6);
      Tensor base = upload(c, t, h);
      Tensor x = base.transpose();
      HostTensor hx = host_view(base, h, x);
      std::vector<double> want =
          host_rows(hx, 1, [](const std::vector<double>& r) { return host_softmax(r, false); }).v;
      std::vector<double> want_dim0 =
          host_rows(h, 0, [](const std::vector<double>& r) { return host_softmax(r, false); }).v;
      std::vector<std::string> kinds = {"held 1024"};
      if (t == DType::F32) kinds.push_back("held 1024 async");
      for (const std::string& kind : kinds) {
        autotune::pin("softmax", kind);
        expect_values(softmax(x, -1), values(data_of(t, {int64_t(want.size())}, want)), tol,
                      what + ", " + kind + ", softmax of x.transpose()");
        expect_values(softmax(base, 0), values(data_of(t, {int64_t(want_dim0.size())}, want_dim0)), tol,
                      what + ", " + kind + ", softmax over dim 0");
      }
      if (t != DType::F32) {
        autotune::pin("softmax", "held 1024 async");  // a copy cannot convert f16 or bf16
        expect_error([&] { (void)softmax(x, -1); }, "autotune.bad_pin");
      }
      autotune::pin("softmax", std::nullopt);
    }
    HostTensor h = random_host(DType::F64, {1500, 37}, seed++, -6, 6);
    Tensor x = upload(c, DType::F64, h).transpose();
    autotune::pin("softmax", "held 1024");
    expect_error([&] { (void)softmax(x, -1); }, "autotune.bad_pin");
    autotune::pin("softmax", std::nullopt);
  }
}

// The split kernel (rows_split.cpp) over many groups and chunks: 200 rows (7 groups of 32, the
// last ragged) of 3000 elements in chunks of 256 (12, the last ragged) or 512, 20 rows of 8192
// (one group of 32 chunks, whose output items are taken right after its stats items, so that on
// the CPU an output item may wait for another thread's stats item; a GPU runs all at once), and 70
// rows of 1000 and 40 of 1500; the held kernel wherever the device runs its chunks at once (on a
// CPU of two threads, 1000 in two chunks of 512 and 1500 in two of 1024, half of each unit's in
// shared memory, the last window overlapping both halves: each cube waits for the other
// thread's). A row holding -inf
// and a row of equal values keep the exp of a difference of infinities out; rows whose first 600
// elements are -inf (whole chunks, and units, whose maximum is -inf), holding +inf, NaN, or -inf
// only, and values 40 apart (every eighth element: a held unit's, whose exp(m - M) is near
// 4e-18; outputs checked to a relative error, which the absolute tolerance of small values would
// not see), give what the other row
// kernels write (the held kernel keeps exp(x - m) for a unit's finite m, and x otherwise). 40 rows
// of 1025 leave the last chunk one element of its own (units whose maximum is -inf beside a row's
// finite one), and 33 of 20000 give a GPU more chunks than a plane folds in one step (79 of 256).
// Every run gives the same bits: the chunks fold in a fixed order.
TEST(TensorRows, SplitRowsCombineChunksInOrder) {
  uint32_t seed = 900;
  for (const Device& dev : devices()) {
    Client c = dev.client();
    auto launches_of = [&](const std::string& name) {
      for (const auto& [n, count] : c.stats().launches_by_kernel) {
        if (n == name) return count;
      }
      return uint64_t(0);
    };
    int held_runs = 0;
    for (auto [rows, len] : {std::pair<int64_t, int64_t>{200, 3000}, std::pair<int64_t, int64_t>{20, 8192},
                             std::pair<int64_t, int64_t>{70, 1000}, std::pair<int64_t, int64_t>{40, 1500},
                             std::pair<int64_t, int64_t>{40, 1025}, std::pair<int64_t, int64_t>{33, 20000}}) {
      HostTensor h = random_host(DType::F32, {len, rows}, seed++, -8, 8);
      for (int64_t j = 0; j < len; ++j) {
        h.v[size_t(j * rows + 3)] = j % 7 == 0 ? -INFINITY : h.v[size_t(j * rows + 3)];
        h.v[size_t(j * rows + 4)] = 2.5;
        if (j < 600) h.v[size_t(j * rows + 5)] = -INFINITY;
        h.v[size_t(j * rows + 7)] = -INFINITY;
        h.v[size_t(j * rows + 9)] = j % 8 == 3 ? -40.0 + h.v[size_t(j * rows + 9)] : h.v[size_t(j * rows + 9)];
      }
      h.v[size_t(100 * rows + 6)] = INFINITY;
      h.v[size_t(700 * rows + 8)] = NAN;
      Tensor base = upload(c, DType::F32, h);
      Tensor x = base.transpose();  // [rows, len], strides [1, rows]
      HostTensor hx = host_view(base, h, x);
      std::vector<double> want =
          host_rows(hx, 1, [&](const std::vector<double>& r) { return host_softmax(r, false); }).v;
      const std::string what =
          dev.name() + " softmax of " + std::to_string(rows) + " x " + std::to_string(len) + " transposed, ";
      std::vector<std::pair<std::string, std::string>> kinds = {{"split 256 lag 3 depth 8", "tensor_softmax_split"},
                                                                {"split 512 lag 3 depth 8", "tensor_softmax_split"}};
      int64_t bucket = 1;
      while (bucket < len) bucket *= 2;
      for (int64_t chunk : {256, 512, 1024}) {
        const int64_t most = (bucket + chunk - 1) / chunk;
        if (most >= 2 && most <= dev.info().multiprocessors)
          kinds.push_back({"held " + std::to_string(chunk), "tensor_softmax_held"});
      }
      for (int64_t chunk : {1024, 1152}) {
        const int64_t most = (bucket + chunk - 1) / chunk;
        if (bucket / 2 >= chunk && most <= dev.info().multiprocessors)
          kinds.push_back({"held " + std::to_string(chunk) + " async", "tensor_softmax_held"});
      }
      for (const auto& [kind, kernel] : kinds) {
        autotune::pin("softmax", kind);
        const uint64_t before = launches_of(kernel);
        Tensor first = softmax(x, -1);
        EXPECT_EQ(launches_of(kernel), before + 1) << what << kind;
        expect_values(first, want, tolerance(DType::F32) * 8, what + kind);
        // Row 9 (every eighth value 40 below the others) to a relative error.
        const std::vector<float> got = first.to_vector<float>();
        for (int64_t j = 0; j < len; ++j) {
          const double w = want[size_t(9 * len + j)], g = got[size_t(9 * len + j)];
          EXPECT_LE(std::fabs(g - w), tolerance(DType::F32) * 8 * std::fabs(w))
              << what << kind << " row 9 element " << j;
        }
        // As bits: the NaN rows compare equal too.
        auto bits_of = [](const Tensor& y) {
          const std::vector<float> v = y.to_vector<float>();
          std::vector<uint32_t> b(v.size());
          std::memcpy(b.data(), v.data(), v.size() * sizeof(float));
          return b;
        };
        const std::vector<uint32_t> bits = bits_of(first);
        for (int run = 0; run < 3; ++run) EXPECT_EQ(bits_of(softmax(x, -1)), bits) << what << kind << " run " << run;
        held_runs += kernel == "tensor_softmax_held";
      }
      autotune::pin("softmax", std::nullopt);
    }
    // A device that runs fewer than two cubes at once offers no held kernel.
    if (dev.info().multiprocessors >= 2) {
      EXPECT_GT(held_runs, 0) << dev.name();
    }
  }
}

TEST(TensorRows, Refusals) {
  Client c = Device::cpu().client();
  Tensor i = Tensor::from_data<int32_t>(c, {1, 2}, {2});
  expect_error([&] { (void)softmax(i, 0); }, "tensor.unsupported_dtype");
  Tensor x = Tensor::from_data<float>(c, {1, 2, 3, 4, 5, 6}, {2, 3});
  expect_error([&] { (void)softmax(x, 2); }, "tensor.bad_dim");
  Tensor w = Tensor::from_data<float>(c, {1, 2}, {2});
  Error e = expect_error([&] { (void)layer_norm(x, w); }, "tensor.shape_mismatch");
  EXPECT_NE(std::string(e.what()).find("must have shape [3]"), std::string::npos) << e.what();
  Tensor wd = Tensor::from_data<double>(c, {1, 2, 3}, {3});
  expect_error([&] { (void)layer_norm(x, wd); }, "tensor.dtype_mismatch");
}

}  // namespace
}  // namespace kiln::test
