// Programs recorded at run time, and kernel references: what the compile cache traces or
// specialises on a miss.
#include "kiln/kernel_ref.h"

#include "common/hash.h"
#include "kiln/error.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"

namespace kiln {

namespace {

[[noreturn]] void bad_params(const ir::Kernel& k, const std::string& what) {
  throw Error("program.bad_params", "recorded kernel '" + k.name + "': " + what);
}

}  // namespace

Program::Program(ir::Kernel k) : kernel_(std::move(k)) {
  // The launch decides the facts; a program's identity is its parameters, its body and its own
  // choices of fast math and cubes a processor (kept in its facts when recorded, like
  // K::fast_math and K::cubes_per_processor for a C++ kernel).
  ir::FastMath fast_math = kernel_.facts.fast_math;
  const int cubes_per_processor = kernel_.facts.cubes_per_processor;
  kernel_.facts = ir::KernelFacts{};
  kernel_.facts.fast_math = fast_math;
  kernel_.facts.cubes_per_processor = cubes_per_processor;
  ir::verify(kernel_, "recorded");
  if (kernel_.params.size() > size_t(kMaxParams)) {
    bad_params(kernel_, "it has " + std::to_string(kernel_.params.size()) + " parameters; a kernel takes at most " +
                            std::to_string(kMaxParams));
  }
  text_ = ir::print(kernel_);
  hash_ = common::Hasher{}.text(text_).done();

  sig_.name = kernel_.name;
  sig_.program = this;
  sig_.kernel_hash = hash_;
  sig_.fast_math = fast_math;
  sig_.cubes_per_processor = uint8_t(cubes_per_processor);
  sig_.count = sig_.ir_count = uint8_t(kernel_.params.size());
  for (size_t i = 0; i < kernel_.params.size(); ++i) {
    const ir::Param& p = kernel_.params[i];
    const ir::Type& t = p.type;
    ParamSpec& s = sig_.params[i];
    s.name = p.name.empty() ? "arg" + std::to_string(i) : p.name;
    s.ir_index = int8_t(i);
    s.element = t.scalar;
    s.width = t.width;
    if (t.kind == ir::TypeKind::Buffer || t.kind == ir::TypeKind::Tensor) {
      s.kind = t.kind == ir::TypeKind::Buffer ? ParamKind::Buffer : ParamKind::Tensor;
      s.read_only = t.access == ir::Access::ReadOnly;
      s.rank = t.kind == ir::TypeKind::Tensor ? t.rank : 0;
    } else if (t.kind == ir::TypeKind::Scalar) {
      s.kind = ParamKind::Scalar;
    } else {
      // A launch passes a number of at most 8 bytes for a value parameter.
      bad_params(kernel_, "parameter '" + s.name + "' has type " + ir::to_string(t) +
                              "; a launch binds buffers, tensors and scalars");
    }
  }
}

ir::Kernel Program::define(const KernelId& id) const {
  ir::Kernel k = kernel_;
  k.facts = kernel_facts(id);
  return k;
}

ir::Kernel KernelRef::define(const KernelId& id) const {
  if (program_) return program_->define(id);
  return sig_->define(id);
}

KernelRef kernel_ref(ir::Kernel recorded) { return KernelRef(std::make_shared<const Program>(std::move(recorded))); }

}  // namespace kiln
