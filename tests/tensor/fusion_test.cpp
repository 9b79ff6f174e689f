// The fusion of elementwise chains (kiln/tensor/fusion.h): one kernel per chain, the same bits as
// the eager ops, results in place by ownership, kept intermediates stored, chains that run before
// their inputs are overwritten, errors at the call, and the switch.
#include <algorithm>
#include <cstdlib>
#include <functional>

#include "support.h"

namespace kiln::test {
namespace {

uint64_t launches(const Client& c) { return c.stats().launches; }

uint64_t launches_of(const Client& c, const std::string& kernel) {
  for (const auto& [name, n] : c.stats().launches_by_kernel) {
    if (name == kernel) return n;
  }
  return 0;
}

// A chain over three operands, and how many ops it has.
struct Chain {
  const char* name;
  int ops;
  std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)> run;
};

std::vector<Chain> chains() {
  return {
      {"gelu(a * w + b)", 3, [](const Tensor& a, const Tensor& w, const Tensor& b) { return gelu(a * w + b); }},
      {"sigmoid(a) * tanh(b) - exp(w / 4)", 6,
       [](const Tensor& a, const Tensor& w, const Tensor& b) { return sigmoid(a) * tanh(b) - exp(w / 4); }},
      {"where(a > w, a * b, -b) + 1", 5,
       [](const Tensor& a, const Tensor& w, const Tensor& b) { return where(gt(a, w), a * b, -b) + 1; }},
      {"exp(w) + a + b (the first op's operand decides the layout)", 3,
       [](const Tensor& a, const Tensor& w, const Tensor& b) { return exp(w) + a + b; }},
      {"a * a + a (one input used thrice)", 2, [](const Tensor& a, const Tensor&, const Tensor&) { return a * a + a; }},
      {"cast(a > 0) * b", 3,
       [](const Tensor& a, const Tensor&, const Tensor& b) { return cast(gt(a, 0), b.dtype()) * b; }},
  };
}

// Every chain, over each float type and operand layouts (contiguous, transposed, sliced, expanded,
// broadcast rows), gives the eager ops' bits in one launch named after its steps.
TEST(TensorFusion, ChainsAreOneKernelWithTheEagerBits) {
  uint32_t seed = 1;
  for (const Device& dev : devices()) {
    Client c = dev.client();
    for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16}) {
      Tensor base = upload(c, t, random_host(t, {9, 14}, seed++));
      Tensor other = upload(c, t, random_host(t, {14, 9}, seed++));
      Tensor row = upload(c, t, random_host(t, {9}, seed++));
      struct Layout {
        const char* name;
        Tensor a, w, b;
      };
      Tensor a = base.slice(1, 2, 11);  // [9, 9], rows 14 apart, starting 2 in
      const Layout layouts[] = {
          {"contiguous", upload(c, t, random_host(t, {9, 9}, seed++)), upload(c, t, random_host(t, {9, 9}, seed++)),
           upload(c, t, random_host(t, {9, 9}, seed++))},
          {"sliced, transposed, broadcast row", a, other.slice(0, 3, 12).transpose(), row},
          {"expanded column, sliced", row.reshape({9, 1}).expand({9, 9}), a, base.slice(1, 0, 9)},
      };
      for (const Layout& l : layouts) {
        for (const Chain& chain : chains()) {
          const std::string what =
              dev.name() + " " + std::string(ir::scalar_name(t)) + " " + chain.name + ", " + l.name;
          TensorData eager;
          Strides eager_strides;
          {
            FusionMode off(false);
            const uint64_t before = launches(c);
            Tensor e = chain.run(l.a, l.w, l.b);
            EXPECT_EQ(launches(c) - before, uint64_t(chain.ops)) << what << ": eager, one launch per op";
            eager = e.to_data();
            eager_strides = e.strides();
          }
          FusionMode on(true);
          const uint64_t before = launches(c);
          Tensor fused = chain.run(l.a, l.w, l.b);
          EXPECT_TRUE(fused.pending()) << what;
          EXPECT_EQ(launches(c), before) << what << ": nothing runs before the value is needed";
          fused.eval();
          EXPECT_EQ(launches(c) - before, 1u) << what << ": one launch for the chain";
          TensorData got = fused.to_data();  // (a copy first, when the result is laid out transposed)
          EXPECT_EQ(got.shape, eager.shape) << what;
          EXPECT_EQ(got.bytes, eager.bytes) << what << ": the fused kernel rounds each step as the eager ops do";
          EXPECT_EQ(fused.strides(), eager_strides) << what << ": laid out as the eager result";
        }
      }
    }
  }
}

// The chain's values against a host reference, and the kernel's name in the client's statistics.
TEST(TensorFusion, GeluChainAgainstTheHost) {
  for (const Device& dev : devices()) {
    Client c = dev.client();
    FusionMode on(true);
    HostTensor ha = random_host(DType::F32, {33, 130}, 5), hw = random_host(DType::F32, {130}, 6),
               hb = random_host(DType::F32, {130}, 7);
    Tensor a = upload(c, DType::F32, ha), w = upload(c, DType::F32, hw), b = upload(c, DType::F32, hb);
    const uint64_t named = launches_of(c, "tensor_fused_mul_add_gelu");
    Tensor y = gelu(a * w + b);
    std::vector<double> want(ha.v.size());
    for (size_t i = 0; i < want.size(); ++i) {
      const double x = double(float(float(ha.v[i] * hw.v[i % 130]) + float(hb.v[i % 130])));
      want[i] = x / 2 * (1 + std::erf(x / std::sqrt(2.0)));
    }
    expect_values(y, want, tolerance(DType::F32) * 4, dev.name() + " gelu(a * w + b)");
    EXPECT_EQ(launches_of(c, "tensor_fused_mul_add_gelu") - named, 1u) << dev.name();
  }
}

// A step that the program keeps is stored by the chain's kernel as a second output; one of
// another shape runs first on its own.
TEST(TensorFusion, KeptStepsAreStoredNotRecomputed) {
  for (const Device& dev : devices()) {
    Client c = dev.client();
    HostTensor ha = random_host(DType::F32, {6, 10}, 8), hw = random_host(DType::F32, {10}, 9);
    Tensor a = upload(c, DType::F32, ha), w = upload(c, DType::F32, hw);
    TensorData want_h, want_y, want_s, want_z;
    {
      FusionMode off(false);
      want_h = (a * w).to_data();
      want_y = exp(a * w - 1).to_data();
      want_s = (w * 2).to_data();
      want_z = (a + w * 2).to_data();
    }
    FusionMode on(true);
    uint64_t before = launches(c);
    Tensor h = a * w;  // kept
    Tensor y = exp(h - 1);
    EXPECT_EQ(y.to_data().bytes, want_y.bytes) << dev.name();
    EXPECT_EQ(launches(c) - before, 1u) << dev.name() << ": h is stored by y's kernel";
    EXPECT_FALSE(h.pending()) << dev.name();  // its value is known, read without a launch
    EXPECT_EQ(h.to_data().bytes, want_h.bytes) << dev.name();
    EXPECT_EQ(launches(c) - before, 1u) << dev.name();

    before = launches(c);
    Tensor s = w * 2;  // kept, and of another shape than the chain's result
    Tensor z = a + s;
    EXPECT_EQ(z.to_data().bytes, want_z.bytes) << dev.name();
    EXPECT_EQ(launches(c) - before, 2u) << dev.name() << ": s runs on its own, then z reads it";
    EXPECT_EQ(s.to_data().bytes, want_s.bytes) << dev.name();
    EXPECT_EQ(launches(c) - before, 2u) << dev.name();
  }
}

// std::move(x) into a chain: the result takes x's memory when x held it alone, as the eager op
// would; a tensor lent, or held elsewhere, keeps its memory.
TEST(TensorFusion, ChainResultsTakeGivenMemory) {
  for (const Device& dev : devices()) {
    Client c = dev.client();
    FusionMode on(true);
    HostTensor hx = random_host(DType::F32, {4, 8}, 10);
    Tensor x = upload(c, DType::F32, hx);
    const uint64_t x_mem = x.handle().memory_id();
    Tensor y = exp(std::move(x) * 2 + 1);
    EXPECT_FALSE(x.defined());
    EXPECT_EQ(y.handle().memory_id(), x_mem) << dev.name();
    EXPECT_TRUE(y.can_mut()) << dev.name() << ": the result holds its memory alone";
    std::vector<double> want(hx.v.size());
    for (size_t i = 0; i < want.size(); ++i) want[i] = double(std::exp(float(float(hx.v[i] * 2) + 1)));
    expect_values(y, want, tolerance(DType::F32) * 2, dev.name() + " exp(x * 2 + 1) in place");

    Tensor lent = upload(c, DType::F32, hx);
    Tensor r = exp(lent * 2 + 1);
    EXPECT_NE(r.handle().memory_id(), lent.handle().memory_id()) << dev.name();
    Tensor held = upload(c, DType::F32, hx);
    Tensor other = held;  // a second handle: not the chain's to overwrite
    r = exp(std::move(held) * 2 + 1);
    EXPECT_NE(r.handle().memory_id(), other.handle().memory_id()) << dev.name();
    expect_values(other, hx.v, 0, dev.name() + " a tensor held elsewhere keeps its values");

    // A long chain runs in parts, each in place: z + 100 in z's memory.
    Tensor z = upload(c, DType::F32, hx);
    const uint64_t z_mem = z.handle().memory_id();
    const uint64_t before = launches(c);
    for (int i = 0; i < 100; ++i) z = std::move(z) + 1;
    std::vector<double> plus(hx.v.size());
    for (size_t i = 0; i < plus.size(); ++i) {
      float v = float(hx.v[i]);
      for (int k = 0; k < 100; ++k) v += 1;
      plus[i] = v;
    }
    expect_values(z, plus, 0, dev.name() + " 100 adds");
    EXPECT_EQ(z.handle().memory_id(), z_mem) << dev.name();
    EXPECT_EQ(launches(c) - before, 3u) << dev.name() << ": 100 steps in chains of at most 48";
  }
}

// A chain's limits count its distinct steps and distinct inputs: y * y reads one chain, so
// y = y * y * 0.5 + 0.75 repeated is a DAG of 3 steps a statement, not a tree that doubles.
TEST(TensorFusion, LimitsCountDistinctStepsAndInputs) {
  uint32_t seed = 900;
  for (const Device& dev : devices()) {
    Client c = dev.client();
    FusionMode on(true);
    // 13 steps: y = x + 0.25, then 4 statements. x is given (256 KiB): the bytes given to the chain
    // count x once too, and the result takes x's memory.
    {
      HostTensor hx = random_host(DType::F32, {256, 256}, seed++, -0.5, 0.5);
      Tensor x = upload(c, DType::F32, hx);
      const uint64_t x_mem = x.handle().memory_id();
      const uint64_t before = launches(c);
      Tensor y = std::move(x) + 0.25;
      for (int k = 0; k < 4; ++k) y = y * y * 0.5 + 0.75;
      EXPECT_EQ(launches(c), before) << dev.name() << ": nothing runs while recording";
      y.eval();
      EXPECT_EQ(launches(c) - before, 1u) << dev.name() << ": a 13-step chain is one kernel";
      EXPECT_EQ(y.handle().memory_id(), x_mem) << dev.name() << ": the result in the given tensor's memory";
      std::vector<double> want(hx.v.size());
      for (size_t i = 0; i < want.size(); ++i) {
        float v = float(hx.v[i]) + 0.25f;
        for (int k = 0; k < 4; ++k) v = float(float(v * v) * 0.5f) + 0.75f;
        want[i] = v;
      }
      expect_values(y, want, tolerance(DType::F32), dev.name() + " 13-step chain");
    }
    // 46 and 49 distinct steps reading x many times (through every path, 2^15 reads and more): one
    // kernel, then two (the first 48 steps, then the last).
    for (int statements : {15, 16}) {
      HostTensor hx = random_host(DType::F32, {5, 7}, seed++, -1, 0.4);
      Tensor x = upload(c, DType::F32, hx);
      const uint64_t before = launches(c);
      Tensor y = x + 0.25;
      for (int k = 0; k < statements; ++k) y = y * y * 0.5 + x;
      y.eval();
      const std::string what = dev.name() + " " + std::to_string(1 + 3 * statements) + " steps";
      EXPECT_EQ(launches(c) - before, statements == 15 ? 1u : 2u) << what;
      std::vector<double> want(hx.v.size());
      for (size_t i = 0; i < want.size(); ++i) {
        float v = float(hx.v[i]) + 0.25f;
        for (int k = 0; k < statements; ++k) v = float(float(v * v) * 0.5f) + float(hx.v[i]);
        want[i] = v;
      }
      expect_values(y, want, tolerance(DType::F32), what);
    }
    // A step of the chain that has run on its own (a kept intermediate, read) no longer counts:
    // 1 + 47 steps recorded, the first then run, and one more is 48 steps to run, one kernel.
    {
      HostTensor hx = random_host(DType::F32, {6}, seed++);
      Tensor x = upload(c, DType::F32, hx);
      Tensor h = x * 2;
      Tensor y = h + 1;
      for (int k = 0; k < 46; ++k) y = std::move(y) + 1;
      h.eval();
      const uint64_t before = launches(c);
      y = std::move(y) + 1;
      EXPECT_EQ(launches(c), before) << dev.name() << ": 48 steps left to run, within the limit";
      y.eval();
      EXPECT_EQ(launches(c) - before, 1u) << dev.name();
      std::vector<double> want(hx.v.size());
      for (size_t i = 0; i < want.size(); ++i) {
        float v = float(hx.v[i]) * 2;
        for (int k = 0; k < 48; ++k) v += 1;
        want[i] = v;
      }
      expect_values(y, want, 0, dev.name() + " a chain past a step that has run");
    }
    // The input budget (96) by distinct inputs: a tree of 48 where() steps over 97 distinct tensors
    // passes it at its last step, whose operands' chain runs at that call; the same tree whose last
    // step reads a tensor the chain already reads (96 distinct) records without running anything.
    for (bool repeat : {false, true}) {
      std::vector<Tensor> conds, vals;
      for (int k = 0; k < 48; ++k) {
        conds.push_back(upload(c, DType::Bool, random_host(DType::Bool, {3}, seed++, 0, 1)));
        vals.push_back(upload(c, DType::F32, random_host(DType::F32, {3}, seed++)));
        vals.push_back(upload(c, DType::F32, random_host(DType::F32, {3}, seed++)));
      }
      Tensor extra = upload(c, DType::F32, random_host(DType::F32, {3}, seed++));
      // 24 leaves where(c, a, b) (72 inputs), 23 joins where(c, acc, leaf) (23 more), then
      // where(c, acc, last): 48 steps, 97 distinct inputs, or 96 when `last` is vals[0].
      auto tree = [&](bool fused, uint64_t* at_last) {
        FusionMode mode(fused);
        std::vector<Tensor> leaves;
        for (size_t k = 0; k < 24; ++k) leaves.push_back(where(conds[k], vals[2 * k], vals[2 * k + 1]));
        Tensor acc = leaves[0];
        leaves[0] = Tensor();
        for (size_t k = 1; k < 24; ++k) acc = where(conds[23 + k], std::move(acc), std::move(leaves[k]));
        const uint64_t before = launches(c);
        Tensor y = where(conds[47], std::move(acc), repeat ? vals[0] : extra);
        if (at_last) *at_last = launches(c) - before;
        return y.to_data();
      };
      const TensorData eager = tree(false, nullptr);
      uint64_t at_last = 0;
      const TensorData fused = tree(true, &at_last);
      EXPECT_EQ(fused.bytes, eager.bytes) << dev.name() << (repeat ? " 96" : " 97") << " distinct inputs";
      if (repeat) {
        EXPECT_EQ(at_last, 0u) << dev.name() << ": 96 distinct inputs (one read twice) are within the budget";
      } else {
        EXPECT_GT(at_last, 0u) << dev.name() << ": 97 distinct inputs pass the budget, the chain so far runs";
      }
    }
  }
}

// What needs a chain's value runs it; a chain nobody uses never runs; sync runs what is pending.
TEST(TensorFusion, ChainsRunWhenTheirValueIsNeeded) {
  for (const Device& dev : devices()) {
    Client c = dev.client();
    FusionMode on(true);
    HostTensor ha = random_host(DType::F32, {5, 7}, 11);
    Tensor a = upload(c, DType::F32, ha);
    uint64_t before = launches(c);
    { Tensor dropped = exp(a) + 1; }
    EXPECT_EQ(launches(c), before) << dev.name() << ": a dropped chain never runs";

    Tensor y = a * 3 - 1;
    c.sync();
    EXPECT_EQ(launches(c) - before, 1u) << dev.name() << ": sync runs the pending chain";
    EXPECT_FALSE(y.pending());
    std::vector<double> want_y(ha.v.size());
    for (size_t i = 0; i < want_y.size(); ++i) want_y[i] = double(float(float(ha.v[i] * 3) - 1));
    expect_values(y, want_y, 0, dev.name() + " a * 3 - 1");
    EXPECT_EQ(launches(c) - before, 1u) << dev.name();

    // A view, a reduction, a row op: each runs the chain first and reads its memory.
    before = launches(c);
    Tensor t = (a * 2).transpose();
    EXPECT_EQ(t.shape(), (Shape{7, 5}));
    EXPECT_EQ(launches(c) - before, 1u) << dev.name();
    std::vector<double> want_t(ha.v.size());
    for (size_t i = 0; i < 7; ++i) {
      for (size_t j = 0; j < 5; ++j) want_t[i * 5 + j] = double(float(ha.v[j * 7 + i] * 2));
    }
    expect_values(t, want_t, 0, dev.name() + " (a * 2).transpose()");
    Tensor s = sum(a + 1, {1});
    std::vector<double> want(5, 0);
    for (size_t i = 0; i < ha.v.size(); ++i) want[i / 7] += double(float(ha.v[i] + 1));
    expect_values(s, want, 1e-5, dev.name() + " sum(a + 1)");
    Tensor p = softmax(a * 0.5, -1);
    TensorData want_p;
    {
      FusionMode off(false);
      want_p = softmax(a * 0.5, -1).to_data();
    }
    EXPECT_EQ(p.to_data().bytes, want_p.bytes) << dev.name() << " softmax(a * 0.5)";
  }
}

// A chain recorded before a write into one of its inputs (assign) reads the values from before
// the write, as the eager ops would have.
TEST(TensorFusion, ChainsRunBeforeTheirInputsAreOverwritten) {
  for (const Device& dev : devices()) {
    Client c = dev.client();
    FusionMode on(true);
    HostTensor hx = random_host(DType::F32, {3, 4}, 12);
    Tensor x = upload(c, DType::F32, hx);
    Tensor y = x * 2 + 1;
    assign(x.slice(0, 0, 1), upload(c, DType::F32, random_host(DType::F32, {1, 4}, 13)));
    std::vector<double> want(hx.v.size());
    for (size_t i = 0; i < want.size(); ++i) want[i] = double(float(float(hx.v[i] * 2) + 1));
    expect_values(y, want, 0, dev.name() + " y from x before the assign");
  }
}

// A chain is a DAG: y = max(y, y) forty times reads one step twice at every level, 2^40 paths
// from its root, and finding whether it reads a tensor's memory (before an assign writes there)
// visits each step once.
TEST(TensorFusion, DeepSharedChainsRunBeforeTheirInputsAreOverwritten) {
  for (const Device& dev : devices()) {
    Client c = dev.client();
    FusionMode on(true);
    HostTensor hx = random_host(DType::F32, {3, 4}, 14);
    Tensor x = upload(c, DType::F32, hx);
    Tensor y = x + 0.5;
    for (int k = 0; k < 40; ++k) y = max(y, y);
    EXPECT_TRUE(y.pending()) << dev.name() << ": 41 steps, one chain";
    // An assign elsewhere: the chain, which does not read that memory, stays pending (finding so
    // walks the whole chain).
    Tensor other = upload(c, DType::F32, random_host(DType::F32, {3, 4}, 16));
    uint64_t before = launches(c);
    assign(other, x);
    EXPECT_EQ(launches(c) - before, 1u) << dev.name() << ": the assign alone";
    EXPECT_TRUE(y.pending()) << dev.name();
    before = launches(c);
    assign(x, upload(c, DType::F32, random_host(DType::F32, {3, 4}, 15)));
    EXPECT_EQ(launches(c) - before, 2u) << dev.name() << ": y's chain, then the assign";
    std::vector<double> want(hx.v.size());
    for (size_t i = 0; i < want.size(); ++i) want[i] = double(float(hx.v[i]) + 0.5f);
    expect_values(y, want, 0, dev.name() + " y from x before the assign");
  }
}

// A chain that reads a tensor through a step that has already run (stored by an earlier chain, or
// kept and read) still runs before that tensor is overwritten.
TEST(TensorFusion, ChainsReadingRunStepsRunBeforeTheyAreOverwritten) {
  for (const Device& dev : devices()) {
    Client c = dev.client();
    FusionMode on(true);
    Tensor a = Tensor::from_data<float>(c, {1, 2, 3, 4}, {4});
    Tensor zeros = Tensor::from_data<float>(c, {0, 0, 0, 0}, {4});
    Tensor h = a * 2;
    Tensor y = h + 1;
    h.eval();
    assign(h, zeros);
    EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{3, 5, 7, 9})) << dev.name();

    Tensor h2 = a * 2;
    Tensor y1 = h2 + 1, y2 = h2 * 3;
    y1.eval();  // stores h2 as y1's second output
    assign(h2, zeros);
    EXPECT_EQ(y2.to_vector<float>(), (std::vector<float>{6, 12, 18, 24})) << dev.name();
  }
}

// A tensor given by std::move and lent in the same call is read, not taken from under itself.
TEST(TensorFusion, ATensorGivenAndLentInOneCall) {
  for (const Device& dev : devices()) {
    Client c = dev.client();
    for (bool fused : {false, true}) {
      FusionMode mode(fused);
      const std::string what = dev.name() + (fused ? " fused" : " eager");
      Tensor z = Tensor::from_data<float>(c, {1, 2, 3, 4}, {4});
      Tensor sq = std::move(z) * z;
      EXPECT_EQ(sq.to_vector<float>(), (std::vector<float>{1, 4, 9, 16})) << what;
      Tensor p = Tensor::from_data<float>(c, {1, 2, 3, 4}, {4}) + 1;  // pending when fused
      Tensor q = std::move(p) * p + 1;
      EXPECT_EQ(q.to_vector<float>(), (std::vector<float>{5, 10, 17, 26})) << what;
      Tensor x = Tensor::from_data<float>(c, {1, -2, 3, -4}, {4});
      Tensor m = gt(x, 0);
      EXPECT_EQ(where(m, std::move(x), x).to_vector<float>(), (std::vector<float>{1, -2, 3, -4})) << what;
    }
  }
}

// A chain holds the tensors given to it; past twice its result's bytes it runs, so that a loop
// over large temporaries keeps a few alive, not all.
TEST(TensorFusion, GivenTemporariesDoNotPileUp) {
  Client c = Device::cpu().client();
  FusionMode on(true);
  const int64_t n = int64_t(1) << 20;  // 4 MiB of f32
  std::vector<float> ones(size_t(n), 1.f);
  Tensor acc = Tensor::from_data(c, ones, {n});
  const uint64_t base = c.stats().memory.in_use_bytes;
  uint64_t peak = 0;
  for (int i = 0; i < 40; ++i) {
    acc = std::move(acc) + Tensor::from_data(c, ones, {n});
    peak = std::max(peak, c.stats().memory.in_use_bytes);
  }
  EXPECT_EQ(acc.to_vector<float>()[size_t(n - 1)], 41.f);
  EXPECT_LE(peak - base, uint64_t(4 * 4 * n)) << "at most a few 4 MiB temporaries alive at once";
}

// Every error of an op is raised at its call, not when the chain runs; nothing is taken from the
// caller and nothing runs.
TEST(TensorFusion, ErrorsComeAtTheCall) {
  for (const Device& dev : devices()) {
    Client c = dev.client();
    FusionMode on(true);
    Tensor a = upload(c, DType::F32, random_host(DType::F32, {2, 3}, 14));
    Tensor pending = a * 2;
    Tensor wrong = upload(c, DType::F32, random_host(DType::F32, {4}, 15));
    const uint64_t before = launches(c);
    expect_error([&] { (void)(std::move(pending) + wrong); }, "tensor.shape_mismatch");
    EXPECT_TRUE(pending.defined() && pending.pending()) << dev.name() << ": a failed op takes nothing";
    Tensor ints = upload(c, DType::I32, HostTensor{{2}, {1, 2}});
    expect_error([&] { (void)(pending + ints); }, "tensor.dtype_mismatch");
    expect_error([&] { (void)(ints * 2.5); }, "tensor.bad_scalar");
    expect_error([&] { (void)exp(ints + 1); }, "tensor.unsupported_dtype");
    EXPECT_EQ(launches(c), before) << dev.name();
    // What only a launch can refuse (a walk of more dims than a kernel takes) runs at the call.
    Shape deep(17, 1);
    deep.back() = 2;
    Tensor d = Tensor::empty(c, deep, DType::F32);
    expect_error([&] { (void)(d + 1); }, "tensor.too_large");
    Shape nine(9, 2);
    Tensor rowm = Tensor::empty(c, nine, DType::F32);
    Tensor rev = Tensor::empty(c, nine, DType::F32).permute({8, 7, 6, 5, 4, 3, 2, 1, 0});
    expect_error([&] { (void)(rowm + rev); }, "tensor.too_large");
  }
}

// The switch: set_enabled, and KILN_FUSION (on, off; another word is an error).
TEST(TensorFusion, Switch) {
  Client c = Device::cpu().client();
  Tensor a = upload(c, DType::F32, random_host(DType::F32, {8}, 16));
  {
    FusionMode off(false);
    const uint64_t before = launches(c);
    Tensor y = exp(a * 2 + 1);
    EXPECT_FALSE(y.pending());
    EXPECT_EQ(launches(c) - before, 3u);
  }
  const char* saved = std::getenv("KILN_FUSION");
  const std::string was = saved ? saved : "";
  // The variable is read once, and again after set_enabled(std::nullopt).
  setenv("KILN_FUSION", "off", 1);
  fusion::set_enabled(std::nullopt);
  EXPECT_FALSE(fusion::enabled());
  setenv("KILN_FUSION", "on", 1);
  EXPECT_FALSE(fusion::enabled()) << "read once";
  fusion::set_enabled(std::nullopt);
  EXPECT_TRUE(fusion::enabled());
  setenv("KILN_FUSION", "sometimes", 1);
  fusion::set_enabled(std::nullopt);
  expect_error([] { (void)fusion::enabled(); }, "fusion.bad_mode");
  fusion::set_enabled(true);  // an override does not read the variable
  EXPECT_TRUE(fusion::enabled());
  if (saved) setenv("KILN_FUSION", was.c_str(), 1);
  else unsetenv("KILN_FUSION");
  fusion::set_enabled(std::nullopt);
}

// Integer and bool chains, and a chain reading more tensors than one kernel takes (it runs in
// parts).
TEST(TensorFusion, IntegerChainsAndWideChains) {
  for (const Device& dev : devices()) {
    Client c = dev.client();
    HostTensor hi = random_host(DType::I32, {4, 6}, 17, -50, 50);
    Tensor i = upload(c, DType::I32, hi);
    std::vector<Tensor> many;
    for (uint32_t k = 0; k < 20; ++k) many.push_back(upload(c, DType::F64, random_host(DType::F64, {3, 5}, 100 + k)));
    TensorData want_i, want_sum;
    {
      FusionMode off(false);
      want_i = where(gt(i % 7, 2), max(i * 3, -20), -i).to_data();
      Tensor acc = many[0];
      for (size_t k = 1; k < many.size(); ++k) acc = acc + many[k];
      want_sum = acc.to_data();
    }
    TensorData want_b;
    {
      FusionMode off(false);
      want_b = (where(gt(i, 0), i * 2, i - 1) + 3).to_data();
    }
    FusionMode on(true);
    const uint64_t before = launches(c);
    EXPECT_EQ(where(gt(i % 7, 2), max(i * 3, -20), -i).to_data().bytes, want_i.bytes) << dev.name();
    EXPECT_EQ(launches(c) - before, 1u) << dev.name();
    // A bool tensor that has its value, read by a chain (one byte an element, beside i32 ones).
    Tensor m = gt(i, 0);
    m.eval();
    const uint64_t with_mask = launches(c);
    EXPECT_EQ((where(m, i * 2, i - 1) + 3).to_data().bytes, want_b.bytes) << dev.name();
    EXPECT_EQ(launches(c) - with_mask, 1u) << dev.name();
    const uint64_t wide = launches(c);
    Tensor acc = many[0];
    for (size_t k = 1; k < many.size(); ++k) acc = acc + many[k];
    EXPECT_EQ(acc.to_data().bytes, want_sum.bytes) << dev.name();
    EXPECT_EQ(launches(c) - wide, 2u) << dev.name()
                                      << ": 20 inputs, a kernel's 16 parameters: the first 14, then the rest";
  }
}

}  // namespace
}  // namespace kiln::test
