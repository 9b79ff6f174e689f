// The C-like emitter's state, shared by its two files: emit.cpp (the kernel's frame: names,
// signature, shared memory, regions and control flow) and emit_ops.cpp (what each op becomes).
// Everything target-specific comes from a CStyleTarget.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "backends/cuda/emit.h"
#include "backends/cuda/target.h"
#include "kiln/ir/kernel.h"

namespace kiln::cuda {

class Emitter {
 public:
  Emitter(const ir::Kernel& k, const CStyleTarget& t) : k_(k), t_(t) {}
  EmitResult run();

 private:
  // The C names of one IR parameter (its value, length, shape and strides).
  struct ParamNames {
    std::string value;
    std::string len;
    std::vector<std::string> shape, stride;
  };

  // ---- emit.cpp ----
  void number_values();
  std::string unique_identifier(std::string base);
  void signature(EmitResult& out);
  void shared_memory(EmitResult& out);
  void region(const ir::Region& r);
  void op(const ir::Op& op);
  void control(const ir::Op& op);
  void line(std::string_view text);
  std::string name(ir::Value v) const;             // the C expression of a value
  std::string lane(ir::Value v, int i) const;      // lane i of a value (a scalar's own expression)
  std::string type_name(const ir::Type& t) const;  // the C type of a value or an array's element
  const ir::Type& type(ir::Value v) const { return k_.type_of(v); }
  [[noreturn]] void unsupported(const ir::Op& op, const std::string& why) const;

  // ---- emit_ops.cpp ----
  // A pure op computed lane by lane: declares its result.
  void lanewise(const ir::Op& op);
  std::string lane_expr(const ir::Op& op, int i) const;
  std::string constant(const ir::Op& op) const;
  std::string arith(const ir::Op& op, ir::Scalar s, const std::vector<std::string>& a) const;
  std::string bitwise(const ir::Op& op, ir::Scalar s, const std::vector<std::string>& a) const;
  std::string math(const ir::Op& op, ir::Scalar s, const std::vector<std::string>& a) const;
  std::string cast(ir::Scalar from, ir::Scalar to, const std::string& e) const;
  std::string builtin(const ir::Op& op) const;
  void memory(const ir::Op& op);  // len, tensor meta, load, store, atomics, local arrays, vars
  void plane(const ir::Op& op);
  void debug_print(const ir::Op& op);
  void declare(const ir::Op& op, const std::string& expr);  // `T vN = expr;`

  const ir::Kernel& k_;
  const CStyleTarget& t_;
  std::string body_;
  int depth_ = 1;
  std::unordered_map<ir::Value, std::string> names_;
  std::unordered_map<ir::Value, ParamNames> params_;
  std::unordered_set<std::string> taken_;  // identifiers in use: reserved words and parameters
  std::vector<const ir::Op*> shared_;      // shared.alloc ops, hoisted to the entry's top
};

}  // namespace kiln::cuda
