// What a launch names as its kernel: a C++ kernel type (kernel_ref<K>(), in kiln/dsl/kernel.h), or
// a Program, an ir::Kernel recorded at run time (by the tracer, by hand with ir::Builder, later by
// the tile layer). Both launch through the same entry and the same compile cache.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "kiln/ir/kernel.h"
#include "kiln/kernel_id.h"

namespace kiln {

// A kernel recorded at run time, ready to launch. Made once: verified, printed and hashed. Its id
// holds the content hash of its text, and equal ids need equal text, so two different programs
// never share a compiled kernel and two equal ones (made apart) always do. The launch supplies the
// facts (cube dim, mode, vector width, aliasing): whatever facts the recorded kernel carried are
// cleared, and are not part of its text here.
class Program {
 public:
  // Error{ir.verify} when the kernel breaks an IR rule; Error{program.bad_params} when a parameter
  // cannot be launched (a vector-typed value) or there are more than kMaxParams.
  explicit Program(ir::Kernel k);
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  const ir::Kernel& kernel() const { return kernel_; }
  // The IR text (ir::print, facts cleared) that the content hash covers and ids compare.
  const std::string& text() const { return text_; }
  uint64_t content_hash() const { return hash_; }
  const KernelSignature& signature() const { return sig_; }
  // The kernel specialised for a launch: the recorded body with the id's facts.
  ir::Kernel define(const KernelId& id) const;

 private:
  ir::Kernel kernel_;
  std::string text_;
  uint64_t hash_ = 0;
  KernelSignature sig_;
};

// A kernel to launch: cheap to copy. The compile cache keeps the one it compiled from, so that a
// tool can trace a cached kernel again (for another backend) from its id.
class KernelRef {
 public:
  // A C++ kernel, through its signature (signature_of<K>(), which lives as long as the program).
  explicit KernelRef(const KernelSignature& sig) : sig_(&sig) {}
  explicit KernelRef(std::shared_ptr<const Program> p) : sig_(&p->signature()), program_(std::move(p)) {}

  const KernelSignature& signature() const { return *sig_; }
  // Null for a C++ kernel.
  const std::shared_ptr<const Program>& program() const { return program_; }
  // Traces the C++ kernel, or specialises the program, for `id`.
  ir::Kernel define(const KernelId& id) const;
  ir::Kernel operator()(const KernelId& id) const { return define(id); }

 private:
  const KernelSignature* sig_;
  std::shared_ptr<const Program> program_;
};

// A recorded kernel as a kernel reference: builds its Program (verify, print, hash) once; keep the
// reference to launch the program again without doing that again.
KernelRef kernel_ref(ir::Kernel recorded);

}  // namespace kiln
