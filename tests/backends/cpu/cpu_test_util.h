// Running IR on the CPU backend directly (no runtime), with a chosen plan option: the CPU tests
// compare plans with and without uniform values, and look at plans and their analyses.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backends/cpu/cpu_backend.h"
#include "kiln/error.h"
#include "kiln/ir/kernel.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"

namespace kiln::cpu::testing {

// The op with pre-order number n (from 1, as plans and error messages count).
inline const ir::Op& op_number(const ir::Kernel& k, uint32_t n) {
  const ir::Op* found = nullptr;
  uint32_t i = 0;
  ir::walk(k.body, [&](const ir::Op& op) {
    if (++i == n) found = &op;
  });
  if (!found) throw std::runtime_error("no op #" + std::to_string(n));
  return *found;
}

inline ir::Kernel parse_verified(const std::string& text) {
  ir::Kernel k = ir::parse(text);
  ir::verify(k, "test");
  return k;
}

// One argument: a buffer's bytes, or a scalar's (up to 8).
struct Arg {
  std::vector<unsigned char> bytes;
  bool scalar = false;

  template <class T>
  static Arg buffer(const std::vector<T>& v) {
    Arg a;
    a.bytes.resize(v.size() * sizeof(T));
    if (!v.empty()) std::memcpy(a.bytes.data(), v.data(), a.bytes.size());
    return a;
  }
  template <class T>
  static Arg value(T v) {
    Arg a;
    a.scalar = true;
    a.bytes.resize(sizeof(T));
    std::memcpy(a.bytes.data(), &v, sizeof(T));
    return a;
  }
};

// What a launch left: every argument's bytes afterwards, and the error it stopped with.
struct Outcome {
  std::vector<std::vector<unsigned char>> after;
  std::string error_kind, error_message;
  friend bool operator==(const Outcome&, const Outcome&) = default;
};

inline Outcome run(const ir::Kernel& k, const std::vector<Arg>& args, ir::Dim3 count, const PlanOptions& options) {
  auto cpu = make_cpu_backend(options);
  auto stream = cpu->create_stream();
  std::vector<backend::ArgBinding> bound;
  for (size_t i = 0; i < args.size(); ++i) {
    backend::ArgBinding b;
    if (args[i].scalar) {
      b.kind = backend::ArgBinding::Kind::Scalar;
      std::memcpy(b.scalar.data(), args[i].bytes.data(), args[i].bytes.size());
    } else {
      b.kind = backend::ArgBinding::Kind::Buffer;
      b.bytes = args[i].bytes.size();
      b.address = cpu->allocate(b.bytes ? b.bytes : 1);
      b.len = uint32_t(b.bytes / size_t(k.params[i].type.element_bytes()));
      cpu->copy_to_device(*stream, b.address, args[i].bytes.data(), b.bytes);
    }
    bound.push_back(b);
  }
  Outcome out;
  try {
    auto exe = cpu->compile(k);
    cpu->launch(*exe, backend::LaunchDims{count, k.facts.cube_dim}, bound, *stream);
  } catch (const Error& e) {
    out.error_kind = e.kind();
    out.error_message = e.message();
  }
  for (size_t i = 0; i < args.size(); ++i) {
    out.after.push_back(args[i].bytes);
    if (!args[i].scalar) {
      cpu->copy_to_host(*stream, out.after[i].data(), bound[i].address, args[i].bytes.size());
      cpu->deallocate(bound[i].address);
    }
  }
  return out;
}

// Runs k with uniform values and without; both must leave the same bytes and the same error.
inline Outcome run_both(const ir::Kernel& k, const std::vector<Arg>& args, ir::Dim3 count) {
  Outcome with = run(k, args, count, PlanOptions{true});
  Outcome without = run(k, args, count, PlanOptions{false});
  EXPECT_EQ(with.error_kind, without.error_kind) << with.error_message << "\n" << without.error_message;
  EXPECT_EQ(with.error_message, without.error_message);
  for (size_t i = 0; i < with.after.size(); ++i) EXPECT_EQ(with.after[i], without.after[i]) << "argument " << i;
  return with;
}

template <class T>
std::vector<T> as(const std::vector<unsigned char>& bytes) {
  std::vector<T> v(bytes.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
  return v;
}

}  // namespace kiln::cpu::testing
