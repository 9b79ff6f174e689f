// The op table, expanded from KILN_IR_OPS; operand counts and the mask's position are derived
// from the operand letters, so that no second list can disagree with the row.
#include "kiln/ir/op_kinds.h"

#include <iterator>

namespace kiln::ir {

namespace {

struct OperandCounts {
  int min = 0;
  int max = 0;
  int mask = -1;
};

constexpr OperandCounts count_operands(std::string_view letters) {
  OperandCounts c;
  for (size_t i = 0; i < letters.size(); ++i) {
    char l = letters[i];
    if (l == '*') {
      // The letter before repeats any number of times: it was counted as required once.
      --c.min;
      c.max = -1;
    } else if (l == 'm') {
      c.mask = static_cast<int>(i);
      if (c.max >= 0) ++c.max;
    } else {
      ++c.min;
      if (c.max >= 0) ++c.max;
    }
  }
  return c;
}

constexpr int count_words(std::string_view s) {
  int n = 0;
  bool in_word = false;
  for (char c : s) {
    if (c != ' ' && !in_word) ++n;
    in_word = c != ' ';
  }
  return n;
}

constexpr OpInfo make_info(std::string_view name, OpFamily family, std::string_view operands, std::string_view result,
                           std::string_view regions, uint32_t traits) {
  OperandCounts c = count_operands(operands);
  return OpInfo{name, family, operands, result, regions, traits, c.min, c.max, c.mask, count_words(regions)};
}

constexpr OpInfo kOps[] = {
#define KILN_X(e, text, family, operands, result, rule, regions, traits) \
  make_info(text, OpFamily::family, operands, result, regions, static_cast<uint32_t>(traits)),
    KILN_IR_OPS(KILN_X)
#undef KILN_X
};

// The letters a row may use; a typo in a row fails the build here.
constexpr bool valid_row(const OpInfo& info) {
  for (size_t i = 0; i < info.operands.size(); ++i) {
    char l = info.operands[i];
    bool last = i + 1 == info.operands.size();
    if (l == '*' && (!last || i == 0)) return false;
    if (l == 'm' && !last) return false;
    if (std::string_view("viubaxmct*").find(l) == std::string_view::npos) return false;
  }
  if (info.result.size() > 1 || std::string_view("vaxtc").find(info.result) == std::string_view::npos) return false;
  return true;
}
constexpr bool valid_table() {
  for (const OpInfo& info : kOps) {
    if (!valid_row(info)) return false;
  }
  return true;
}
static_assert(valid_table(), "an op row uses an operand or result letter that op_kinds.h does not define");

constexpr std::string_view kFamilyNames[] = {
#define KILN_X(e, text) text,
    KILN_IR_FAMILIES(KILN_X)
#undef KILN_X
};

}  // namespace

char OpInfo::operand_kind(size_t i) const {
  std::string_view letters = operands;
  if (!letters.empty() && letters.back() == '*') {
    size_t repeated = letters.size() - 2;
    return i >= repeated ? letters[repeated] : letters[i];
  }
  return i < letters.size() ? letters[i] : '\0';
}

std::string_view OpInfo::region_label(size_t i) const {
  std::string_view rest = region_labels;
  for (size_t n = 0;; ++n) {
    size_t start = rest.find_first_not_of(' ');
    if (start == std::string_view::npos) return {};
    rest = rest.substr(start);
    size_t end = rest.find(' ');
    std::string_view word = rest.substr(0, end);
    if (n == i) return word;
    if (end == std::string_view::npos) return {};
    rest = rest.substr(end);
  }
}

const OpInfo& op_info(OpKind k) { return kOps[static_cast<size_t>(k)]; }
int op_kind_count() { return static_cast<int>(std::size(kOps)); }
std::string_view family_name(OpFamily f) { return kFamilyNames[static_cast<size_t>(f)]; }

bool parse_op_kind(std::string_view name, OpKind& out) {
  for (size_t i = 0; i < std::size(kOps); ++i) {
    if (kOps[i].name == name) {
      out = static_cast<OpKind>(i);
      return true;
    }
  }
  return false;
}

}  // namespace kiln::ir
