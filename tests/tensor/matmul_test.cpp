// matmul against a host reference: element types, transposed and sliced operands (read through
// their strides, no copy), batches that broadcast, and an rhs shared by the whole batch.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "kiln/autotune.h"
#include "support.h"
#include "tensor/matmul_plan.h"

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

// A case's operands (fresh random values in [-range, range], viewed) and the host's product.
struct Operands {
  Tensor a, b;
  HostTensor want;
};
Operands operands(const Client& c, DType t, const MatmulCase& mc, uint32_t& seed, double range) {
  HostTensor ha = random_host(t, mc.a_base, seed++, -range, range),
             hb = random_host(t, mc.b_base, seed++, -range, range);
  Tensor ba = upload(c, t, ha), bb = upload(c, t, hb);
  Tensor va = mc.a_view(ba), vb = mc.b_view(bb);
  return {va, vb, host_matmul(t, host_view(ba, ha, va), host_view(bb, hb, vb))};
}

TEST(TensorMatmul, MatchesTheHostOverTypesViewsAndBatches) {
  auto same = [](const Tensor& t) { return t; };
  auto tr = [](const Tensor& t) { return t.transpose(); };
  std::vector<MatmulCase> cases = {
      {"plain", {5, 7}, {7, 3}, same, same},
      {"transposed rhs", {5, 7}, {3, 7}, same, tr},
      {"transposed lhs", {7, 5}, {7, 3}, tr, same},
      {"both transposed", {7, 5}, {3, 7}, tr, tr},
      {"sliced",
       {9, 11},
       {12, 4},
       [](const Tensor& t) { return t.slice(0, 1, 6).slice(1, 2, 9); },
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
        auto [va, vb, want] = operands(c, t, mc, seed, 3);
        uint64_t before = c.stats().launches;
        Tensor got = matmul(va, vb);
        EXPECT_EQ(c.stats().launches - before, 1u) << "one kernel, no copy: " << mc.name;
        EXPECT_EQ(got.shape(), want.shape) << mc.name;
        // f16/bf16 sum in f32 and round once; allow the k-long sum's rounding.
        expect_values(got, want.v, tolerance(t) * 2,
                      dev.name() + " matmul " + std::string(ir::scalar_name(t)) + " " + mc.name);
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

// Every variant of calls that the tile products take (ragged sizes, transposed factors, batches,
// an rhs shared by the batch) against the host, on every device.
TEST(TensorMatmul, EveryVariantMatchesTheHost) {
  auto same = [](const Tensor& t) { return t; };
  auto tr = [](const Tensor& t) { return t.transpose(); };
  std::vector<MatmulCase> cases = {
      {"ragged", {70, 40}, {40, 90}, same, same},
      {"transposed rhs", {33, 48}, {72, 48}, same, tr},
      {"transposed lhs", {48, 40}, {48, 24}, tr, same},
      {"batched", {3, 32, 48}, {3, 48, 24}, same, same},
      {"rhs shared by the batch", {2, 3, 20, 32}, {32, 40}, same, same},
  };
  uint32_t seed = 900;
  for (const Device& dev : devices()) {
    Client c = dev.client();
    for (DType t : {DType::BF16, DType::F16, DType::F32, DType::F64}) {
      const double tol = t == DType::F32 ? 5e-5 : t == DType::F64 ? 1e-13 : tolerance(t) * 2;
      for (const MatmulCase& mc : cases) {
        auto [va, vb, want] = operands(c, t, mc, seed, 2);
        std::vector<std::string> variants = matmul_variants(va, vb);
        ASSERT_GE(variants.size(), 2u) << mc.name;
        EXPECT_EQ(variants.back(), "naive");
        EXPECT_EQ(variants.front().rfind("tile ", 0), 0u) << variants.front();
        for (const std::string& v : variants) {
          expect_values(matmul(va, vb, v), want.v, tol,
                        dev.name() + " matmul " + std::string(ir::scalar_name(t)) + " " + mc.name + " by " + v);
        }
      }
    }
  }
}

// Batches whose products are stacked in memory (or share a factor), with blocks that never
// straddle two products: each tile variant runs the whole batch in one launch.
TEST(TensorMatmul, StackedBatchesRunInOneLaunch) {
  auto same = [](const Tensor& t) { return t; };
  auto tr = [](const Tensor& t) { return t.transpose(); };
  std::vector<MatmulCase> cases = {
      {"batched", {4, 64, 64}, {4, 64, 96}, same, same},
      {"batched, transposed rhs (q @ k.T)", {3, 64, 32}, {3, 64, 32}, same, tr},
      {"batched, transposed lhs", {2, 32, 64}, {2, 32, 64}, tr, same},
      {"lhs shared by the batch", {64, 32}, {2, 32, 64}, same, same},
  };
  uint32_t seed = 1200;
  for (const Device& dev : devices()) {
    Client c = dev.client();
    for (DType t : {DType::BF16, DType::F32}) {
      const double tol = t == DType::F32 ? 5e-5 : tolerance(t) * 2;
      for (const MatmulCase& mc : cases) {
        auto [va, vb, want] = operands(c, t, mc, seed, 2);
        std::vector<std::string> variants = matmul_variants(va, vb);
        ASSERT_GE(variants.size(), 2u) << mc.name;
        for (const std::string& v : variants) {
          const std::string what =
              dev.name() + " matmul " + std::string(ir::scalar_name(t)) + " " + mc.name + " by " + v;
          uint64_t before = c.stats().launches;
          Tensor got = matmul(va, vb, v);
          EXPECT_EQ(c.stats().launches - before, 1u) << what;
          expect_values(got, want.v, tol, what);
        }
      }
    }
  }
}

TEST(TensorMatmul, OnlyTheNaiveKernelTakesWhatTheTilesCannot) {
  Client c = Device::cpu().client();
  auto ones = [&](DType t, Shape s) { return upload(c, t, random_host(t, s, 5)); };
  const std::vector<std::string> naive = {"naive"};
  EXPECT_EQ(matmul_variants(ones(DType::F32, {5, 7}), ones(DType::F32, {7, 3})), naive) << "small";
  EXPECT_EQ(matmul_variants(ones(DType::I32, {32, 32}), ones(DType::I32, {32, 32})), naive) << "integers";
  // Columns 1..33 of a [40, 40]: neither dense rows nor dense columns.
  EXPECT_EQ(matmul_variants(ones(DType::F32, {40, 40}).slice(1, 1, 33), ones(DType::F32, {32, 32})), naive)
      << "strided";
  // Rows starting at element 20 (80 bytes) ... 16-byte aligned; at 17 floats, not.
  Tensor flat = ones(DType::F32, {17 + 32 * 32});
  EXPECT_EQ(matmul_variants(flat.slice(0, 17, 17 + 32 * 32).reshape({32, 32}), ones(DType::F32, {32, 32})), naive)
      << "misaligned";
  EXPECT_GT(matmul_variants(flat.slice(0, 16, 16 + 32 * 32).reshape({32, 32}), ones(DType::F32, {32, 32})).size(), 1u)
      << "aligned";
}

TEST(TensorMatmul, AnUnknownVariantIsRefusedWithTheOnesThereAre) {
  Client c = Device::cpu().client();
  Tensor a = upload(c, DType::F32, random_host(DType::F32, {32, 32}, 1));
  Error e = expect_error([&] { (void)matmul(a, a, "tile 8x8 k8 s9"); }, "tensor.bad_variant");
  EXPECT_NE(std::string(e.what()).find("this call has tile 32x32 k32 s2, naive"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("naive"), std::string::npos) << e.what();
  // Checked before anything is skipped: an empty product or an inner size of 0.
  Tensor none = upload(c, DType::F32, random_host(DType::F32, {0, 32}, 2));
  expect_error([&] { (void)matmul(none, a, "tile 8x8 k8 s9"); }, "tensor.bad_variant");
  Tensor thin = upload(c, DType::F32, random_host(DType::F32, {32, 0}, 3)),
         flat = upload(c, DType::F32, random_host(DType::F32, {0, 32}, 4));
  expect_error([&] { (void)matmul(thin, flat, "tile 8x8 k8 s9"); }, "tensor.bad_variant");
  expect_values(matmul(thin, flat, "naive"), std::vector<double>(32 * 32, 0.0), 0, "k = 0 gives zeros");
}

// Autotune times the naive kernel only where it may win: small products, or where no tile product
// applies; a large product tunes its tile products alone.
TEST(TensorMatmul, NaiveIsTimedOnlyWhereItMayWin) {
  Client c = Device::cpu().client();
  auto plan = [&](const Shape& a, const Shape& b) {
    Tensor x = Tensor::empty(c, a, DType::BF16), y = Tensor::empty(c, b, DType::BF16);
    Shape out = a;
    out.back() = b.back();
    return tensor::plan_matmul(x, y, out);
  };
  EXPECT_TRUE(tensor::naive_is_tuned(plan({64, 96}, {96, 48}), 2)) << "small: every variant is timed";
  EXPECT_FALSE(tensor::naive_is_tuned(plan({512, 256}, {256, 128}), 4)) << "2^24 multiply-adds, tile products apply";
  EXPECT_FALSE(tensor::naive_is_tuned(plan({8, 256, 64}, {64, 256}), 4)) << "a batch counts whole";
  EXPECT_TRUE(tensor::naive_is_tuned(plan({512, 256}, {256, 128}), 0)) << "no tile product: naive is all there is";
}

TEST(TensorMatmul, AutotunedOnceThenRemembered) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("kiln-matmul-autotune-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const char* was = std::getenv("KILN_CACHE_DIR");
  const std::optional<std::string> previous = was ? std::optional<std::string>(was) : std::nullopt;
  ::setenv("KILN_CACHE_DIR", dir.c_str(), 1);
  autotune::reset();
  for (const Device& dev : devices()) {
    Client c = dev.client();
    HostTensor ha = random_host(DType::BF16, {64, 96}, 71, -2, 2), hb = random_host(DType::BF16, {96, 48}, 72, -2, 2);
    Tensor a = upload(c, DType::BF16, ha), b = upload(c, DType::BF16, hb);
    HostTensor want = host_matmul(DType::BF16, ha, hb);
    autotune::Stats before = autotune::stats();
    expect_values(matmul(a, b), want.v, tolerance(DType::BF16) * 2, dev.name() + " tuned");
    EXPECT_EQ(autotune::stats().tunings, before.tunings + 1);
    uint64_t launches = c.stats().launches;
    expect_values(matmul(a, b), want.v, tolerance(DType::BF16) * 2, dev.name() + " remembered");
    EXPECT_EQ(autotune::stats().memory_hits, before.memory_hits + 1);
    EXPECT_EQ(c.stats().launches - launches, 1u) << "the remembered winner, one launch";
  }
  bool found = false;
  for (const auto& f : fs::directory_iterator(dir / "autotune")) {
    std::ifstream in(f.path());
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    found = found || text.find("\"matmul {dtype=bf16, batch=1, m=64, n=64, k=128, lhs=rows, rhs=rows, variants=2}") !=
                         std::string::npos;
  }
  EXPECT_TRUE(found) << "a result file under " << dir;
  autotune::reset();
  if (previous) {
    ::setenv("KILN_CACHE_DIR", previous->c_str(), 1);
  } else {
    ::unsetenv("KILN_CACHE_DIR");
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kiln::test
