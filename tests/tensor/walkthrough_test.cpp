// Seed 03's experiment: a = [[1, 2, 3], [4, 5, 6]], b = 10 a; what each step's tensors are, whose
// memory they use and which kernels it launched.
#include <gtest/gtest.h>

#include "kiln/runtime.h"
#include "kiln/tensor.h"

namespace kiln {
namespace {

std::map<std::string, uint64_t> launches(const Client& c) {
  std::map<std::string, uint64_t> m;
  for (const auto& [name, n] : c.stats().launches_by_kernel) m[name] = n;
  return m;
}

// Launches since `before`, by kernel name.
std::map<std::string, uint64_t> since(const Client& c, const std::map<std::string, uint64_t>& before) {
  std::map<std::string, uint64_t> now = launches(c), d;
  for (const auto& [name, n] : now) {
    uint64_t b = before.count(name) ? before.at(name) : 0;
    if (n > b) d[name] = n - b;
  }
  return d;
}

TEST(TensorWalkthrough, SeedThreeOnTheCpu) {
  Client c = Device::cpu().client();
  Tensor a = Tensor::from_data<float>(c, {1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = Tensor::from_data<float>(c, {10, 20, 30, 40, 50, 60}, {2, 3});
  EXPECT_EQ(a.shape(), (Shape{2, 3}));
  EXPECT_EQ(a.strides(), (Strides{3, 1}));
  EXPECT_TRUE(a.is_contiguous());
  EXPECT_TRUE(a.can_mut());

  const uint64_t a_memory = a.handle().memory_id();
  auto before = launches(c);
  Tensor t_c = std::move(a) + b;
  EXPECT_EQ(t_c.handle().memory_id(), a_memory) << "c = move(a) + b writes into a's memory";
  EXPECT_EQ(since(c, before), (std::map<std::string, uint64_t>{{"tensor_add", 1}}));

  before = launches(c);
  Tensor d = t_c + b;
  EXPECT_NE(d.handle().memory_id(), a_memory) << "c is still held: d gets new memory";
  EXPECT_TRUE(t_c.can_mut());
  EXPECT_EQ(since(c, before).size(), 1u);

  before = launches(c);
  Tensor t = d.swap_dims(0, 1);
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  EXPECT_EQ(t.strides(), (Strides{1, 3}));
  EXPECT_EQ(t.handle().memory_id(), d.handle().memory_id());
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_FALSE(t.can_mut());
  EXPECT_TRUE(since(c, before).empty());

  before = launches(c);
  Tensor tc = into_contiguous(t);
  EXPECT_EQ(tc.strides(), (Strides{2, 1}));
  EXPECT_TRUE(tc.is_contiguous());
  EXPECT_NE(tc.handle().memory_id(), d.handle().memory_id());
  EXPECT_EQ(since(c, before), (std::map<std::string, uint64_t>{{"tensor_copy", 1}}));
  EXPECT_EQ(t.to_data().to_string(), "[21.0, 84.0, 42.0, 105.0, 63.0, 126.0]");

  Tensor t2 = Tensor::from_data(c, d.to_data()).swap_dims(0, 1);  // a second transposed view, memory of its own
  ASSERT_TRUE(t2.can_mut());
  const uint64_t t2_memory = t2.handle().memory_id();
  before = launches(c);
  Tensor s = t + std::move(t2);
  EXPECT_EQ(s.strides(), (Strides{1, 3}));
  EXPECT_EQ(s.handle().memory_id(), t2_memory);
  EXPECT_EQ(since(c, before), (std::map<std::string, uint64_t>{{"tensor_add", 1}}));
  EXPECT_EQ(s.to_data().to_string(), "[42.0, 168.0, 84.0, 210.0, 126.0, 252.0]");
}

}  // namespace
}  // namespace kiln
