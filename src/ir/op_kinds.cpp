// The op table, expanded from KILN_IR_OPS and KILN_IR_SIGNATURES; operand counts, the mask's
// position, operand names and attribute masks are derived from the rows, so that no second list
// can disagree with them, and a row that names an unknown letter or attribute fails the build.
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
    if (l == '*' || l == '+') {
      // The letter before repeats: it was counted as required once.
      if (l == '*') --c.min;
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

// The names of "(a, b, c)" one at a time.
constexpr std::string_view nth_name(std::string_view list, size_t n) {
  if (list.size() >= 2 && list.front() == '(' && list.back() == ')') list = list.substr(1, list.size() - 2);
  for (size_t i = 0;; ++i) {
    size_t start = list.find_first_not_of(", ");
    if (start == std::string_view::npos) return {};
    list = list.substr(start);
    size_t end = list.find(',');
    std::string_view word = list.substr(0, end);
    while (!word.empty() && word.back() == ' ') word.remove_suffix(1);
    if (i == n) return word;
    if (end == std::string_view::npos) return {};
    list = list.substr(end);
  }
}

constexpr size_t count_names(std::string_view list) {
  size_t n = 0;
  while (!nth_name(list, n).empty()) ++n;
  return n;
}

constexpr size_t count_letters(std::string_view letters) {
  size_t n = 0;
  for (char l : letters) n += (l != '*' && l != '+');
  return n;
}

constexpr SignatureInfo make_signature(std::string_view name, std::string_view kinds, std::string_view names) {
  OperandCounts c = count_operands(kinds);
  return SignatureInfo{name, kinds, names, c.min, c.max, c.mask};
}

constexpr SignatureInfo kSignatures[] = {
#define KILN_X(name, kinds, names) make_signature(#name, kinds, #names),
    KILN_IR_SIGNATURES(KILN_X)
#undef KILN_X
};

// The letters a signature may use, one name per letter; a typo in a row fails the build here.
constexpr bool valid_signature(const SignatureInfo& s) {
  for (size_t i = 0; i < s.kinds.size(); ++i) {
    char l = s.kinds[i];
    bool last = i + 1 == s.kinds.size();
    if ((l == '*' || l == '+') && (!last || i == 0)) return false;
    if (l == 'm' && !last) return false;
    if (std::string_view("viubaxmct*+").find(l) == std::string_view::npos) return false;
  }
  return count_names(s.names) == count_letters(s.kinds);
}
constexpr bool valid_signatures() {
  for (const SignatureInfo& s : kSignatures) {
    if (!valid_signature(s)) return false;
  }
  return true;
}
static_assert(valid_signatures(),
              "a signature in op_kinds.h uses an unknown letter, or its names and letters differ in number");

constexpr std::string_view kAttrTexts[] = {
#define KILN_X(e, text, type) text,
    KILN_IR_ATTRS(KILN_X)
#undef KILN_X
};

// A row's attribute list as masks: "dim keepdims?" takes dim and keepdims and needs dim. A word
// that names no key gives all bits (which valid_row refuses).
struct AttrMasks {
  uint64_t takes = 0;
  uint64_t needs = 0;
};
constexpr AttrMasks attr_masks(std::string_view list) {
  AttrMasks m;
  while (!list.empty()) {
    size_t start = list.find_first_not_of(' ');
    if (start == std::string_view::npos) break;
    list = list.substr(start);
    size_t end = list.find(' ');
    std::string_view word = list.substr(0, end);
    list = end == std::string_view::npos ? std::string_view() : list.substr(end);
    bool optional = !word.empty() && word.back() == '?';
    if (optional) word.remove_suffix(1);
    uint64_t bit = ~uint64_t(0);
    for (size_t k = 0; k < std::size(kAttrTexts); ++k) {
      if (kAttrTexts[k] == word) bit = uint64_t(1) << k;
    }
    m.takes |= bit;
    if (!optional) m.needs |= bit;
  }
  return m;
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

constexpr OpInfo make_info(std::string_view name, OpFamily family, Signature signature, std::string_view result,
                           std::string_view attrs, std::string_view regions, uint32_t traits) {
  AttrMasks a = attr_masks(attrs);
  return OpInfo{name, family, signature, result, a.takes, a.needs, regions, traits, count_words(regions)};
}

constexpr OpInfo kOps[] = {
#define KILN_X(e, text, family, signature, result, attrs, rule, regions, traits) \
  make_info(text, OpFamily::family, Signature::signature, result, attrs, regions, static_cast<uint32_t>(traits)),
    KILN_IR_OPS(KILN_X)
#undef KILN_X
};

constexpr bool valid_row(const OpInfo& info) {
  if (info.result.size() > 1 || std::string_view("vaxtc").find(info.result) == std::string_view::npos) return false;
  uint64_t known = kAttrKeyCount == 64 ? ~uint64_t(0) : (uint64_t(1) << kAttrKeyCount) - 1;
  return (info.attrs & ~known) == 0;
}
constexpr bool valid_table() {
  for (const OpInfo& info : kOps) {
    if (!valid_row(info)) return false;
  }
  return true;
}
static_assert(valid_table(),
              "an op row uses a result letter or an attribute name that op_kinds.h and attr.h do not define");

constexpr std::string_view kFamilyNames[] = {
#define KILN_X(e, text) text,
    KILN_IR_FAMILIES(KILN_X)
#undef KILN_X
};

// The position of operand i in a signature's letters and names (past a repeated last letter,
// the repeated one's).
size_t letter_at(const SignatureInfo& s, size_t i) {
  std::string_view letters = s.kinds;
  if (!letters.empty() && (letters.back() == '*' || letters.back() == '+')) {
    size_t repeated = letters.size() - 2;
    return i >= repeated ? repeated : i;
  }
  return i;
}

}  // namespace

char SignatureInfo::operand_kind(size_t i) const {
  size_t at = letter_at(*this, i);
  return at < kinds.size() ? kinds[at] : '\0';
}

std::string_view SignatureInfo::operand_name(size_t i) const { return nth_name(names, letter_at(*this, i)); }

const SignatureInfo& signature_info(Signature s) { return kSignatures[static_cast<size_t>(s)]; }

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
