// The op table, expanded from KILN_IR_OPS.
#include "kiln/ir/op_kinds.h"

#include <iterator>

namespace kiln::ir {

namespace {
constexpr OpInfo kOps[] = {
#define KILN_X(e, text, lo, hi, regions, traits) {text, lo, hi, regions, static_cast<uint32_t>(traits)},
    KILN_IR_OPS(KILN_X)
#undef KILN_X
};
}  // namespace

const OpInfo& op_info(OpKind k) { return kOps[static_cast<size_t>(k)]; }
int op_kind_count() { return static_cast<int>(std::size(kOps)); }

bool parse_op_kind(std::string_view name, OpKind& out) {
  for (size_t i = 0; i < std::size(kOps); ++i) {
    if (kOps[i].name == name) {
      out = static_cast<OpKind>(i);
      return true;
    }
  }
  return false;
}

bool is_compare(OpKind k) { return k >= OpKind::Eq && k <= OpKind::Ge; }
bool is_atomic(OpKind k) { return k >= OpKind::AtomicAdd && k <= OpKind::AtomicCas; }
bool is_float_math(OpKind k) { return k >= OpKind::Exp && k <= OpKind::IsInf; }

}  // namespace kiln::ir
