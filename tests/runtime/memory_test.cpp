// The memory pool: freed memory is reused, large allocations get pages of their own, running out
// of memory is an error after which the client still works; handles' views and ownership.
#include <gtest/gtest.h>

#include <cstring>

#include "kiln/kiln.h"

using namespace kiln;

namespace {

TEST(MemoryPool, FreedSmallSlicesAreReused) {
  Client c = Device::cpu().client();
  MemoryStats s0 = c.stats().memory;
  {
    Handle a = c.empty_bytes(1000);
    Handle b = c.empty_bytes(5000);
  }
  MemoryStats s1 = c.stats().memory;
  EXPECT_EQ(s1.allocations - s0.allocations, 2u);
  EXPECT_EQ(s1.in_use_bytes, s0.in_use_bytes);
  EXPECT_EQ(s1.frees - s0.frees, 2u);
  uint64_t reserved = s1.reserved_bytes;
  for (int i = 0; i < 100; ++i) Handle h = c.empty_bytes(3000);
  MemoryStats s2 = c.stats().memory;
  EXPECT_EQ(s2.reserved_bytes, reserved) << "the pool reserved more memory for allocations it could reuse";
  EXPECT_GE(s2.reused - s1.reused, 100u);
}

TEST(MemoryPool, LargeAllocationsReusePages) {
  Client c = Device::cpu().client();
  size_t big = size_t(16) << 20;
  { Handle h = c.empty_bytes(big); }
  MemoryStats s1 = c.stats().memory;
  { Handle h = c.empty_bytes(big - 4096); }
  MemoryStats s2 = c.stats().memory;
  EXPECT_EQ(s2.reserved_bytes, s1.reserved_bytes);
  EXPECT_EQ(s2.pages, s1.pages);
  EXPECT_EQ(s2.reused - s1.reused, 1u);
}

TEST(MemoryPool, NeighboursMergeWhenFreed) {
  Client c = Device::cpu().client();
  // The CPU pool's pages are 8 MiB: 64 slices of 128 KiB fill one exactly.
  std::vector<Handle> hs;
  for (int i = 0; i < 64; ++i) hs.push_back(c.empty_bytes(128 * 1024));
  MemoryStats full = c.stats().memory;
  ASSERT_EQ(full.pages, 1u);
  // Free eight neighbours: only if they merge can they serve one allocation of 1 MiB.
  for (int i = 10; i < 18; ++i) hs[size_t(i)] = Handle();
  Handle merged = c.empty_bytes(1024 * 1024);
  MemoryStats after = c.stats().memory;
  EXPECT_EQ(after.pages, 1u) << "freed neighbours did not merge";
  EXPECT_EQ(after.reserved_bytes, full.reserved_bytes);
  EXPECT_EQ(merged.address(), hs[9].address() + 128 * 1024);
}

TEST(MemoryPool, OutOfMemoryIsAnErrorAndTheClientStillWorks) {
  Client c = Device::cpu().client();
  Handle small = c.upload(std::vector<float>{1, 2, 3});
  try {
    (void)c.empty_bytes(size_t(1) << 50);  // a petabyte
    FAIL() << "expected memory.out_of_memory";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "memory.out_of_memory");
    EXPECT_NE(e.message().find("could not allocate 1125899906842624 bytes"), std::string::npos) << e.message();
  }
  EXPECT_EQ(c.read<float>(small), (std::vector<float>{1, 2, 3}));
  Handle again = c.upload(std::vector<float>{4, 5});
  EXPECT_EQ(c.read<float>(again), (std::vector<float>{4, 5}));
}

TEST(Handles, ViewsAndOwnership) {
  Client c = Device::cpu().client();
  Handle h = c.upload(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_TRUE(h.can_mut());
  Handle six = h.offset_end(8);
  EXPECT_FALSE(h.can_mut());
  EXPECT_EQ(six.size_in_used(), 24u);
  EXPECT_EQ(c.read<float>(six), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  Handle tail = h.offset_start(20);
  EXPECT_EQ(c.read<float>(tail), (std::vector<float>{6, 7, 8}));
  EXPECT_EQ(tail.memory_id(), h.memory_id());
  EXPECT_EQ(tail.offset(), 20u);
  try {
    (void)h.offset_end(100);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "handle.bad_offset");
  }
  c.write(six, std::vector<float>{9, 9});
  EXPECT_EQ(c.read<float>(h)[1], 9.0f);
  EXPECT_EQ(c.read<float>(h)[2], 3.0f);
}

TEST(Handles, KnowTheirElementType) {
  Client c = Device::cpu().client();
  EXPECT_EQ(c.upload(std::vector<float>{1}).element(), ir::Scalar::F32);
  EXPECT_EQ(c.upload(std::vector<int64_t>{1}).element(), ir::Scalar::I64);
  EXPECT_EQ(c.upload(std::vector<f16>{f16(1.0f)}).element(), ir::Scalar::F16);
  EXPECT_EQ(c.empty<bf16>(3).element(), ir::Scalar::BF16);
  EXPECT_EQ(c.empty<bf16>(3).size_in_used(), 6u);
  EXPECT_FALSE(c.empty_bytes(12).element().has_value());
  // empty_bytes counts bytes, empty<T> elements: the spellings cannot be confused (an untyped
  // empty(n) does not compile, tests/compile_fail/client_empty.cpp).
  EXPECT_EQ(c.empty_bytes(12).size_in_used(), 12u);
  EXPECT_EQ(c.empty_bytes(12).view_as(ir::Scalar::F32).size_in_used(), 12u);
  EXPECT_EQ(c.empty<float>(12).size_in_used(), 48u);
  // Integer types the fixed-width names are not take the element of their width and sign.
  EXPECT_EQ(c.upload(std::vector<long long>{1}).element(), ir::Scalar::I64);
  EXPECT_EQ(c.upload(std::vector<unsigned long long>{1}).element(), ir::Scalar::U64);
  EXPECT_EQ(c.read<long long>(c.upload(std::vector<int64_t>{-5}))[0], -5);
  // char and structs are not kiln element types: their bytes upload raw.
  EXPECT_FALSE(c.upload(std::vector<char>{'a'}).element().has_value());
  struct Pair {
    int32_t a, b;
  };
  EXPECT_FALSE(c.upload(std::vector<Pair>{{1, 2}}).element().has_value());
  // Views keep the type; as_bytes drops it.
  Handle h = c.upload(std::vector<uint16_t>{1, 2, 3, 4});
  EXPECT_EQ(h.offset_start(2).element(), ir::Scalar::U16);
  EXPECT_EQ(h.offset_end(2).element(), ir::Scalar::U16);
  EXPECT_FALSE(h.as_bytes().element().has_value());
  // A typed view moves by whole elements; raw bytes move by bytes.
  try {
    (void)h.offset_start(1);
    ADD_FAILURE() << "expected Error{handle.bad_offset}";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "handle.bad_offset") << e.what();
    EXPECT_NE(e.message().find("offset_start(1) on a handle of uint16_t elements is not a whole number of 2-byte"),
              std::string::npos)
        << e.message();
  }
  EXPECT_EQ(h.as_bytes().offset_start(1).size_in_used(), 7u);
}

TEST(Handles, ViewAsChecksSizeAndAlignment) {
  Client c = Device::cpu().client();
  Handle h = c.upload(std::vector<uint16_t>{1, 2, 3, 4, 5, 6});  // 12 bytes
  EXPECT_EQ(h.view_as<float>().element(), ir::Scalar::F32);
  EXPECT_EQ(c.read<float>(h.view_as<float>()).size(), 3u);
  auto expect_bad_view = [&](const Handle& v, const std::string& text) {
    try {
      (void)v.view_as<double>();
      ADD_FAILURE() << "expected Error{handle.bad_view}";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), "handle.bad_view") << e.what();
      EXPECT_NE(e.message().find(text), std::string::npos) << e.message();
    }
  };
  // 12 bytes are not a whole number of doubles; 8 bytes starting 2 bytes in are not on a boundary.
  expect_bad_view(h, "12 bytes, which is not a whole number of 8-byte elements");
  expect_bad_view(h.offset_start(2).offset_end(2), "starts 2 bytes into its memory, not on a 8-byte boundary");
  EXPECT_EQ(h.offset_end(4).view_as<double>().size_in_used(), 8u);
}

TEST(Handles, ReadsAndWritesCheckTheElementType) {
  Client c = Device::cpu().client();
  Handle h = c.upload(std::vector<float>{1.5f, -2.0f});
  try {
    (void)c.read<int32_t>(h);
    ADD_FAILURE() << "expected Error{handle.type_mismatch}";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "handle.type_mismatch");
    EXPECT_NE(e.message().find("read of int32_t elements from a handle that holds float elements"), std::string::npos)
        << e.message();
    EXPECT_NE(e.message().find("view_as<int32_t>()"), std::string::npos) << e.message();
  }
  try {
    c.write(h, std::vector<double>{1.0});
    ADD_FAILURE() << "expected Error{handle.type_mismatch}";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "handle.type_mismatch") << e.what();
  }
  EXPECT_EQ(c.read<float>(h), (std::vector<float>{1.5f, -2.0f}));
  // Explicit reinterpretation reads the bits.
  uint32_t bits = 0;
  float v = 1.5f;
  std::memcpy(&bits, &v, 4);
  EXPECT_EQ(c.read<uint32_t>(h.view_as<uint32_t>())[0], bits);
  // Raw bytes read as anything; a bool buffer reads as uint8_t (std::vector<bool> holds no bools).
  EXPECT_EQ(c.read<uint8_t>(h.as_bytes()).size(), 8u);
  Handle flags = c.upload(std::vector<uint8_t>{1, 0, 1}).view_as<bool>();
  EXPECT_EQ(c.read<uint8_t>(flags), (std::vector<uint8_t>{1, 0, 1}));
  // std::vector<bool> uploads and reads as a bool handle.
  Handle bools = c.upload(std::vector<bool>{true, false, false, true});
  EXPECT_EQ(bools.element(), ir::Scalar::Bool);
  EXPECT_EQ(bools.size_in_used(), 4u);
  EXPECT_EQ(c.read<bool>(bools), (std::vector<bool>{true, false, false, true}));
  c.write(bools, std::vector<bool>{false, true, true, false});
  EXPECT_EQ(c.read<bool>(bools), (std::vector<bool>{false, true, true, false}));
}

}  // namespace
