// The IR parser: reads the text form print() writes. It resolves value names and builds the
// kernel; types and rules are the verifier's business.
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "kiln/error.h"
#include "kiln/ir/text.h"

namespace kiln::ir {

namespace {

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  Kernel run() {
    expect_word("kernel");
    skip();
    expect('@');
    k_.name = ident();
    expect('(');
    if (!peek(')')) {
      do {
        expect('%');
        size_t at = pos_ - 1;
        std::string name = ident();
        expect(':');
        Type t = type();
        Value v = k_.new_value(t);
        k_.params.push_back(Param{name, t, v});
        bind("%" + name, v, at);
      } while (accept(','));
    }
    expect(')');
    facts();
    if (accept_word("comptime")) {
      expect('{');
      if (!peek('}')) {
        do {
          std::string name = ident();
          expect('=');
          k_.facts.comptime.emplace_back(name, raw_word());
        } while (accept(','));
      }
      expect('}');
    }
    if (accept_word("layouts")) layouts();
    expect('{');
    region_body(k_.body);
    skip();
    if (pos_ != s_.size()) fail("text after the kernel's closing brace");
    return std::move(k_);
  }

 private:
  [[noreturn]] void fail(const std::string& what) { fail_at(pos_, what); }
  // Reports a problem at `at`: the start of the offending token, where a person looks for it.
  [[noreturn]] void fail_at(size_t at, const std::string& what) {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < at && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    throw Error("ir.parse", "line " + std::to_string(line) + ", column " + std::to_string(col) + ": " + what);
  }

  void skip() {
    while (pos_ < s_.size()) {
      if (std::isspace(static_cast<unsigned char>(s_[pos_]))) {
        ++pos_;
      } else if (s_.compare(pos_, 2, "//") == 0) {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }

  bool peek(char c) {
    skip();
    return pos_ < s_.size() && s_[pos_] == c;
  }
  bool accept(char c) {
    if (peek(c)) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!accept(c)) fail(std::string("expected '") + c + "'");
  }

  static bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

  std::string ident() {
    skip();
    size_t start = pos_;
    token_ = start;
    while (pos_ < s_.size() && word_char(s_[pos_])) ++pos_;
    if (start == pos_) fail("expected a name");
    return std::string(s_.substr(start, pos_ - start));
  }

  // A literal or word up to the next ',' '}' ']' or space: comptime values, constants.
  std::string raw_word() {
    skip();
    size_t start = pos_;
    token_ = start;
    while (pos_ < s_.size() && (word_char(s_[pos_]) || s_[pos_] == '-' || s_[pos_] == '+')) ++pos_;
    if (start == pos_) fail("expected a value");
    return std::string(s_.substr(start, pos_ - start));
  }

  bool accept_word(std::string_view w) {
    skip();
    if (s_.compare(pos_, w.size(), w) == 0 && (pos_ + w.size() == s_.size() || !word_char(s_[pos_ + w.size()]))) {
      pos_ += w.size();
      return true;
    }
    return false;
  }
  bool peek_word(std::string_view w) {
    size_t at = pos_;
    bool found = accept_word(w);
    pos_ = at;
    return found;
  }
  void expect_word(std::string_view w) {
    if (!accept_word(w)) fail("expected '" + std::string(w) + "'");
  }

  // A whole number no greater than `max` (the field it fills would wrap a larger one).
  uint64_t unsigned_number(uint64_t max) {
    std::string w = raw_word();
    uint64_t v = 0;
    auto res = std::from_chars(w.data(), w.data() + w.size(), v);
    if (res.ec != std::errc() || res.ptr != w.data() + w.size())
      fail_at(token_, "expected a whole number, not '" + w + "'");
    if (v > max) fail_at(token_, "the number " + w + " is too large here (at most " + std::to_string(max) + ")");
    return v;
  }
  static constexpr uint64_t kU8Max = 0xff, kU32Max = 0xffffffffull, kIntMax = 0x7fffffff, kLayoutMax = 0xffff;

  Scalar scalar() {
    std::string w = ident();
    Scalar s;
    if (!parse_scalar(w, s)) fail_at(token_, "unknown scalar type '" + w + "'");
    return s;
  }

  // element := scalar | vector<N x scalar>
  Type element() {
    skip();
    if (accept_word("vector")) {
      expect('<');
      uint64_t n = unsigned_number(kIntMax);
      size_t n_at = token_;
      expect_word("x");
      Scalar s = scalar();
      expect('>');
      try {
        return Type::vector_of(s, static_cast<int>(n));
      } catch (const Error& e) {
        fail_at(n_at, e.message());
      }
    }
    return Type::scalar_of(scalar());
  }

  Access access() {
    std::string w = ident();
    if (w == "ro") return Access::ReadOnly;
    if (w == "rw") return Access::ReadWrite;
    fail_at(token_, "expected 'ro' or 'rw', not '" + w + "'");
  }

  Type type() {
    skip();
    if (accept_word("buffer")) {
      expect('<');
      Type e = element();
      expect(',');
      Access a = access();
      expect('>');
      return Type::buffer(e, a);
    }
    if (accept_word("tensor")) {
      expect('<');
      Type e = element();
      expect(',');
      int rank = static_cast<int>(unsigned_number(kU8Max));
      expect(',');
      Access a = access();
      expect('>');
      return Type::tensor(e, rank, a);
    }
    if (accept_word("shared") || accept_word("local")) {
      bool shared = s_[pos_ - 1] == 'd';
      expect('<');
      Type e = element();
      expect(',');
      uint32_t len = static_cast<uint32_t>(unsigned_number(kU32Max));
      uint16_t layout = shared ? layout_ref() : 0;
      expect('>');
      return shared ? Type::shared(e, len).with_layout(layout) : Type::local(e, len);
    }
    if (accept_word("var")) {
      expect('<');
      Type e = peek_word("tile") ? type() : element();
      expect('>');
      return Type::var(e);
    }
    if (accept_word("tile")) {
      expect('<');
      expect('[');
      std::array<uint32_t, 4> shape{};
      int rank = 0;
      if (!peek(']')) {
        do {
          uint32_t extent = static_cast<uint32_t>(unsigned_number(kU32Max));
          if (rank == 4) fail_at(token_, "a tile has at most 4 dimensions");
          shape[static_cast<size_t>(rank++)] = extent;
        } while (accept(','));
      }
      expect(']');
      expect_word("x");
      Scalar s = scalar();
      expect(',');
      std::string w = ident();
      MemorySpace space;
      if (!parse_memory_space(w, space)) {
        fail_at(token_, "a tile's memory space is 'registers', 'shared' or 'global', not '" + w + "'");
      }
      uint16_t layout = layout_ref();
      expect('>');
      return Type::tile(s, rank, shape, space).with_layout(layout);
    }
    return element();
  }

  // ", #N" naming entry N of the kernel's layout table, or nothing (0).
  uint16_t layout_ref() {
    if (!accept(',')) return 0;
    expect('#');
    size_t at = token_;
    uint64_t n = unsigned_number(kLayoutMax);
    if (n == 0) fail_at(at, "layouts are numbered from #1 (a type without one names none)");
    return static_cast<uint16_t>(n);
  }

  // The kernel's layout table: "layouts {#1 = fragment<...>, #2 = shared<...>}", numbered in order.
  void layouts() {
    expect('{');
    if (!peek('}')) {
      do {
        expect('#');
        size_t at = token_;
        uint64_t n = unsigned_number(kLayoutMax);
        if (n != k_.layouts.size() + 1) {
          fail_at(at, "layouts are numbered from #1 in order: expected #" + std::to_string(k_.layouts.size() + 1));
        }
        expect('=');
        k_.layouts.push_back(tile_layout());
      } while (accept(','));
    }
    expect('}');
  }

  LayoutBit layout_bit() {
    if (accept('-')) return {};
    LayoutBit b;
    b.dim = static_cast<int>(unsigned_number(3));
    expect(':');
    b.bit = static_cast<int>(unsigned_number(31));
    return b;
  }

  std::vector<LayoutBit> layout_bits() {
    std::vector<LayoutBit> bits;
    expect('[');
    if (!peek(']')) {
      do {
        bits.push_back(layout_bit());
      } while (accept(','));
    }
    expect(']');
    return bits;
  }

  TileLayout tile_layout() {
    skip();
    if (accept_word("fragment")) {
      FragmentLayout f;
      expect('<');
      expect('[');
      if (!peek(']')) {
        do {
          if (f.rank == 4) fail_at(token_, "a fragment layout has at most 4 dimensions");
          f.shape[static_cast<size_t>(f.rank++)] = static_cast<uint32_t>(unsigned_number(kU32Max));
        } while (accept(','));
      }
      expect(']');
      expect(',');
      expect_word("slot");
      expect('=');
      f.slot = layout_bits();
      expect(',');
      expect_word("unit");
      expect('=');
      f.unit = layout_bits();
      expect('>');
      return TileLayout::of(f);
    }
    if (accept_word("shared")) {
      SharedLayout s;
      expect('<');
      expect_word("pitch");
      expect('=');
      s.pitch = static_cast<uint32_t>(unsigned_number(kU32Max));
      expect(',');
      expect_word("swizzle");
      expect('=');
      skip();
      if (!accept_word("none")) {
        size_t at = token_;
        uint64_t span = unsigned_number(kU32Max);
        if (span != 32 && span != 64 && span != 128) fail_at(at, "a swizzle is 'none', 32, 64 or 128 bytes");
        s.swizzle = static_cast<Swizzle>(span);
      }
      expect(',');
      expect_word("align");
      expect('=');
      s.align = static_cast<uint32_t>(unsigned_number(kU32Max));
      if (accept(',')) {
        expect_word("columns");
        s.columns = true;
      }
      expect('>');
      return TileLayout::of(s);
    }
    fail("a layout is 'fragment<...>' or 'shared<...>'");
  }

  void facts() {
    expect('{');
    KernelFacts& f = k_.facts;
    if (!peek('}')) {
      do {
        std::string key = ident();
        size_t key_at = token_;
        expect('=');
        if (key == "cube_dim") {
          expect('[');
          f.cube_dim.x = static_cast<uint32_t>(unsigned_number(kU32Max));
          expect(',');
          f.cube_dim.y = static_cast<uint32_t>(unsigned_number(kU32Max));
          expect(',');
          f.cube_dim.z = static_cast<uint32_t>(unsigned_number(kU32Max));
          expect(']');
        } else if (key == "mode") {
          std::string m = ident();
          if (m == "checked") f.mode = ExecMode::Checked;
          else if (m == "unchecked") f.mode = ExecMode::Unchecked;
          else fail_at(token_, "mode is 'checked' or 'unchecked', not '" + m + "'");
        } else if (key == "address") {
          std::string a = ident();
          if (a == "u32") f.address = AddressType::U32;
          else if (a == "u64") f.address = AddressType::U64;
          else fail_at(token_, "address is 'u32' or 'u64', not '" + a + "'");
        } else if (key == "vector") {
          f.vector_width = static_cast<int>(unsigned_number(kIntMax));
        } else if (key == "target") {
          std::string t = raw_word();
          if (!parse_target(t, f.target)) {
            fail_at(token_, "target is 'cpu' or a CUDA architecture such as 'sm_90a', not '" + t + "'");
          }
        } else if (key == "alias") {
          expect('[');
          if (!peek(']')) {
            do {
              f.alias.push_back(static_cast<uint8_t>(unsigned_number(255)));
            } while (accept(','));
          }
          expect(']');
        } else if (key == "cubes_per_processor") {
          f.cubes_per_processor = static_cast<int>(unsigned_number(kIntMax));
        } else if (key == "fast_math") {
          expect('[');
          if (peek(']')) fail("fast_math lists 'contract', 'approx' or both; leave it out for exact math");
          do {
            std::string m = ident();
            if (m != "contract" && m != "approx")
              fail_at(token_, "fast_math lists 'contract' and 'approx', not '" + m + "'");
            bool& flag = m == "contract" ? f.fast_math.contract : f.fast_math.approx;
            if (flag) fail_at(token_, "fast_math names '" + m + "' twice");
            flag = true;
          } while (accept(','));
          expect(']');
        } else {
          fail_at(key_at, "unknown kernel fact '" + key + "'");
        }
      } while (accept(','));
    }
    expect('}');
  }

  // `at` is where the name is written.
  void bind(const std::string& name, Value v, size_t at) {
    if (!names_.emplace(name, v).second) fail_at(at, "value " + name + " is defined twice");
  }

  Value value_ref() {
    expect('%');
    size_t at = pos_ - 1;
    std::string name = "%" + ident();
    auto it = names_.find(name);
    if (it == names_.end()) fail_at(at, "value " + name + " is used before it is defined");
    return it->second;
  }

  std::string string_literal() {
    expect('"');
    size_t open = pos_ - 1;
    std::string out;
    while (true) {
      if (pos_ >= s_.size()) fail_at(open, "unterminated string");
      char c = s_[pos_++];
      if (c == '"') break;
      if (c != '\\') {
        out += c;
        continue;
      }
      size_t escape = pos_ - 1;
      if (pos_ >= s_.size()) fail_at(open, "unterminated string");
      char e = s_[pos_++];
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case 'x': {
          if (pos_ + 2 > s_.size()) fail_at(escape, "bad \\x escape");
          unsigned v = 0;
          auto res = std::from_chars(s_.data() + pos_, s_.data() + pos_ + 2, v, 16);
          if (res.ptr != s_.data() + pos_ + 2) fail_at(escape, "bad \\x escape");
          pos_ += 2;
          out += static_cast<char>(v);
          break;
        }
        default: fail_at(escape, std::string("unknown escape '\\") + e + "'");
      }
    }
    return out;
  }

  // `at` is where the word is written.
  double float_word(const std::string& w, size_t at) {
    if (w == "inf") return std::numeric_limits<double>::infinity();
    if (w == "-inf") return -std::numeric_limits<double>::infinity();
    if (w == "nan") return std::numeric_limits<double>::quiet_NaN();
    double v = 0;
    auto res = std::from_chars(w.data(), w.data() + w.size(), v);
    if (res.ec != std::errc() || res.ptr != w.data() + w.size()) fail_at(at, "expected a number, not '" + w + "'");
    return v;
  }

  AttrValue attr_value(const std::string& w) {
    size_t at = token_;
    if (w == "true") return AttrValue::of_bool(true);
    if (w == "false") return AttrValue::of_bool(false);
    if (w.find_first_of(".en") != std::string::npos || w == "inf" || w == "-inf") {
      return AttrValue::of_float(float_word(w, at));
    }
    int64_t v = 0;
    auto res = std::from_chars(w.data(), w.data() + w.size(), v);
    if (res.ec != std::errc() || res.ptr != w.data() + w.size()) fail_at(at, "bad attribute value '" + w + "'");
    return AttrValue::of_int(v);
  }

  // A padding value written as its name: `pad = neg_inf`.
  AttrValue pad_value(const std::string& w) {
    Pad p;
    if (!parse_pad(w, p))
      fail_at(token_, "a padding value is zero, neg_zero, pos_inf, neg_inf or nan, not '" + w + "'");
    return AttrValue::of_pad(p);
  }

  // `at` is where the constant's word is written (the type after it is read first).
  AttrValue constant_value(const std::string& w, const Type& t, size_t at) {
    if (t.scalar == Scalar::Bool) {
      if (w == "true") return AttrValue::of_bool(true);
      if (w == "false") return AttrValue::of_bool(false);
      fail_at(at, "a bool constant is 'true' or 'false', not '" + w + "'");
    }
    if (is_float(t.scalar)) return AttrValue::of_float(float_word(w, at));
    if (is_unsigned_int(t.scalar)) {
      uint64_t v = 0;
      auto res = std::from_chars(w.data(), w.data() + w.size(), v);
      if (res.ec != std::errc() || res.ptr != w.data() + w.size()) fail_at(at, "bad unsigned constant '" + w + "'");
      return AttrValue::of_int(static_cast<int64_t>(v));
    }
    int64_t v = 0;
    auto res = std::from_chars(w.data(), w.data() + w.size(), v);
    if (res.ec != std::errc() || res.ptr != w.data() + w.size()) fail_at(at, "bad integer constant '" + w + "'");
    return AttrValue::of_int(v);
  }

  void region_body(Region& r) {
    while (!accept('}')) {
      if (pos_ >= s_.size()) fail("missing '}'");
      r.ops.push_back(op());
    }
  }

  void region(Op& op, size_t index) {
    Region& r = op.regions[index];
    if (accept('(')) {
      do {
        expect('%');
        size_t at = pos_ - 1;
        std::string name = "%" + ident();
        expect(':');
        Type t = type();
        Value v = k_.new_value(t);
        bind(name, v, at);
        r.args.push_back(v);
      } while (accept(','));
      expect(')');
    }
    expect('{');
    region_body(r);
  }

  Op op() {
    skip();
    // `%a = ...` or, for an op with several results, `%a, %b = ...`.
    std::vector<std::pair<std::string, size_t>> result_names;  // name, where it is written
    if (peek('%')) {
      do {
        expect('%');
        size_t at = pos_ - 1;
        result_names.emplace_back("%" + ident(), at);
      } while (accept(','));
      expect('=');
    }
    std::string name = ident();
    Op op;
    if (!parse_op_kind(name, op.kind)) fail_at(token_, "unknown op '" + name + "'");
    op.regions.resize(static_cast<size_t>(op.info().regions));
    std::string const_word;
    size_t const_at = 0;
    if (op.kind == OpKind::Const) {
      const_word = raw_word();
      const_at = token_;
    } else {
      // An op that takes no operands (sync.cube, a break that carries nothing, ...) ends at its
      // name: a '%' after it starts the next line's op (`%3 = load ...`), not an operand.
      bool operands =
          op.info().max_operands() != 0 && peek('%') && (op.info().min_operands() > 0 || !definition_follows());
      if (operands) {
        do {
          op.operands.push_back(value_ref());
        } while (accept(','));
      }
      if (peek('{') && op.regions.empty()) attrs(op);
      else if (peek('{') && looks_like_attrs()) attrs(op);
    }
    std::vector<Type> types;
    skip();
    size_t types_at = pos_;
    if (accept(':')) {
      do {
        types.push_back(type());
      } while (accept(','));
    }
    if (!types.empty()) op.type = types[0];
    if (op.kind == OpKind::Const) {
      if (op.type.is_none()) fail_at(const_at, "a constant needs its type");
      op.attrs.push_back(Attr{AttrKey::Value, constant_value(const_word, op.type, const_at)});
    }
    if (!result_names.empty()) {
      const auto& [first, first_at] = result_names[0];
      if (types.empty()) fail_at(first_at, "op '" + name + "' defines " + first + " but has no ': type'");
      if (types.size() != result_names.size()) {
        fail_at(first_at, "op '" + name + "' defines " + std::to_string(result_names.size()) + " results but gives " +
                              std::to_string(types.size()) + " types");
      }
      op.type = Type::none();
      for (size_t i = 0; i < types.size(); ++i) {
        bind(result_names[i].first, k_.add_result(op, types[i]), result_names[i].second);
      }
    } else if (types.size() > 1) {
      fail_at(types_at,
              "op '" + name + "' gives " + std::to_string(types.size()) + " result types but defines no results");
    }
    for (size_t i = 0; i < op.regions.size(); ++i) {
      if (i > 0) {
        std::string_view label = op.info().region_label(i);
        if (!accept_word(label)) {
          if (op.kind == OpKind::If) break;  // an if without else
          fail("expected '" + std::string(label) + "'");
        }
      }
      region(op, i);
    }
    return op;
  }

  // Whether `%a = ` or `%a, %b = ` follows: the next op's results, not operands of this one.
  bool definition_follows() {
    size_t save = pos_;
    bool definition = false;
    while (true) {
      skip();
      if (pos_ >= s_.size() || s_[pos_] != '%') break;
      ++pos_;
      while (pos_ < s_.size() && word_char(s_[pos_])) ++pos_;
      skip();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      definition = pos_ < s_.size() && s_[pos_] == '=';
      break;
    }
    pos_ = save;
    return definition;
  }

  // After the operands of an op with regions, '{' opens either attributes or the first region.
  // Attributes start with a key followed by '=' , ',' or '}'.
  bool looks_like_attrs() {
    size_t save = pos_;
    ++pos_;
    skip();
    size_t start = pos_;
    while (pos_ < s_.size() && word_char(s_[pos_])) ++pos_;
    bool key = false;
    if (pos_ > start) {
      AttrKey k;
      std::string w(s_.substr(start, pos_ - start));
      skip();
      key = parse_attr_key(w, k) && pos_ < s_.size() && (s_[pos_] == '=' || s_[pos_] == ',' || s_[pos_] == '}');
    }
    pos_ = save;
    return key;
  }

  // `[1, -2, 3]`: an array attribute of integers.
  AttrValue int_array() {
    expect('[');
    std::vector<int64_t> ints;
    if (!peek(']')) {
      do {
        std::string w = raw_word();
        int64_t v = 0;
        auto res = std::from_chars(w.data(), w.data() + w.size(), v);
        if (res.ec != std::errc() || res.ptr != w.data() + w.size()) {
          fail_at(token_, "an array attribute holds integers, not '" + w + "'");
        }
        ints.push_back(v);
      } while (accept(','));
    }
    expect(']');
    return AttrValue::of_ints(std::move(ints));
  }

  void attrs(Op& op) {
    expect('{');
    if (!peek('}')) {
      do {
        std::string key = ident();
        AttrKey k;
        if (!parse_attr_key(key, k)) fail_at(token_, "unknown attribute '" + key + "'");
        AttrValue v = AttrValue::of_bool(true);
        if (accept('=')) {
          if (peek('"')) v = AttrValue::of_string(string_literal());
          else if (peek('[')) v = int_array();
          else if (attr_type(k) == AttrType::Pad) v = pad_value(raw_word());
          else v = attr_value(raw_word());
        }
        op.set_attr(k, v);
      } while (accept(','));
    }
    expect('}');
  }

  std::string_view s_;
  size_t pos_ = 0;
  size_t token_ = 0;  // where the last name or word read began
  Kernel k_;
  std::unordered_map<std::string, Value> names_;
};

}  // namespace

Kernel parse(std::string_view text) { return Parser(text).run(); }

}  // namespace kiln::ir
