// Seed 03's experiment with kiln's tensors: a = [[1, 2, 3], [4, 5, 6]], b = 10 a. For each step,
// the tensors' shape, strides, contiguity and can_mut, whose memory they use, and the kernels the
// step launched, by name. Ownership decides in-place writes: std::move(a) + b writes into a's
// memory; c + b with c still held gets new memory. Views launch nothing; matmul reads a transposed
// operand through its strides. Last, a chain of elementwise ops that runs as one fused kernel when
// its value is read.
#include <cstdio>
#include <map>
#include <string>

#include "example_support.h"
#include "kiln/tensor.h"

using kiln::Client;
using kiln::Tensor;

namespace {

// Names memories by the first tensor seen in them, so that each line can say whose memory a
// tensor uses.
struct Memories {
  std::map<uint64_t, std::string> owner;
  std::string of(const std::string& name, const Tensor& t) {
    auto [it, fresh] = owner.emplace(t.handle().memory_id(), name);
    return fresh ? "new memory" : "the memory of " + it->second;
  }
};

std::string dims(const std::vector<int64_t>& v) { return kiln::to_string(v); }

void show(Memories& m, const std::string& name, const Tensor& t) {
  std::printf("%-3s shape=%s strides=%s contiguous=%s can_mut=%s, %s\n", name.c_str(), dims(t.shape()).c_str(),
              dims(t.strides()).c_str(), t.is_contiguous() ? "true" : "false", t.can_mut() ? "true" : "false",
              m.of(name, t).c_str());
}

// Launches since the last call, by kernel name.
struct Launches {
  const Client& client;
  std::map<std::string, uint64_t> seen;
  explicit Launches(const Client& c) : client(c) { (void)since(); }
  std::string since() {
    std::string out;
    for (const auto& [name, n] : client.stats().launches_by_kernel) {
      uint64_t before = seen[name];
      if (n > before) out += (out.empty() ? "" : ", ") + name + ": " + std::to_string(n - before);
      seen[name] = n;
    }
    return "launches {" + out + "}";
  }
};

// With fusion on, an elementwise op's result is pending until its value is needed (fusion.h): a
// pending result holds its operands, so that they are not theirs alone. Each step but the last
// computes its result at once, to show what the op's own kernel does.
Tensor computed(Tensor t) {
  t.eval();
  return t;
}

}  // namespace

int main(int argc, char** argv) try {
  Client client = example::device_from_args(argc, argv).client();
  std::printf("device %s\n", client.device().name().c_str());
  Launches launches(client);
  Memories mem;

  std::printf("--- a = [[1, 2, 3], [4, 5, 6]]; b = 10 * a\n");
  Tensor a = Tensor::from_data<float>(client, {1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = computed(10 * a);
  show(mem, "a", a);
  show(mem, "b", b);
  std::printf("%s\n", launches.since().c_str());

  std::printf("--- c = std::move(a) + b (a given, its only holder)\n");
  Tensor c = computed(std::move(a) + b);
  show(mem, "c", c);
  std::printf("%s\n", launches.since().c_str());

  std::printf("--- d = c + b (c still held)\n");
  Tensor d = computed(c + b);
  show(mem, "c", c);
  show(mem, "d", d);
  std::printf("%s\n", launches.since().c_str());

  std::printf("--- t = d.swap_dims(0, 1)\n");
  Tensor t = d.swap_dims(0, 1);
  show(mem, "t", t);
  std::printf("%s\n", launches.since().c_str());

  std::printf("--- tc = into_contiguous(t)\n");
  Tensor tc = into_contiguous(t);
  show(mem, "tc", tc);
  std::printf("%s\n", launches.since().c_str());

  std::printf("--- t.to_data()\n");
  std::printf("t data %s\n", t.to_data().to_string().c_str());
  std::printf("%s\n", launches.since().c_str());

  std::printf("--- m = matmul(d, t) ([2, 3] x [3, 2], rhs a transposed view)\n");
  Tensor m = kiln::matmul(d, t);
  show(mem, "m", m);
  std::printf("%s\n", launches.since().c_str());
  std::printf("m data %s\n", m.to_data().to_string().c_str());
  (void)launches.since();

  std::printf("--- s = t + std::move(t2) (t2: a transposed view over memory of its own)\n");
  Tensor t2 = Tensor::from_data(client, d.to_data()).swap_dims(0, 1);
  show(mem, "t2", t2);
  (void)launches.since();
  Tensor s = computed(t + std::move(t2));
  show(mem, "s", s);
  std::printf("%s\n", launches.since().c_str());
  std::printf("s data %s\n", s.to_data().to_string().c_str());
  std::printf("s = %s\n", s.to_string().c_str());
  (void)launches.since();

  std::printf("--- y = gelu(t * 0.01 - 1): pending until read, then one fused kernel\n");
  Tensor y = gelu(t * 0.01 - 1);
  std::printf("y   shape=%s pending=%s\n", dims(y.shape()).c_str(), y.pending() ? "true" : "false");
  std::printf("while y is pending: %s\n", launches.since().c_str());
  std::printf("y = %s\n", y.to_string().c_str());
  std::printf("%s\n", launches.since().c_str());
  show(mem, "y", y);
  return 0;
} catch (const kiln::Error& e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1;
}
