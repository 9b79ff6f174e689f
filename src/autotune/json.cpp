// A recursive-descent JSON reader. Strings are UTF-8; \u escapes become UTF-8 (surrogate pairs
// joined). Depth is capped so that a hostile file cannot exhaust the stack.
#include "autotune/json.h"

#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdlib>

namespace kiln::autotune::json {

const Value* Value::find(std::string_view key) const {
  for (const auto& [k, v] : members) {
    if (k == key) return &v;
  }
  return nullptr;
}

namespace {

constexpr int kMaxDepth = 64;

class Reader {
 public:
  explicit Reader(std::string_view t) : t_(t) {}

  std::optional<Value> document() {
    std::optional<Value> v = value(0);
    space();
    if (!v || i_ != t_.size()) return std::nullopt;
    return v;
  }

 private:
  void space() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\n' || t_[i_] == '\r' || t_[i_] == '\t')) ++i_;
  }
  bool take(char c) {
    space();
    if (i_ < t_.size() && t_[i_] == c) return ++i_, true;
    return false;
  }
  bool word(std::string_view w) {
    if (t_.substr(i_, w.size()) != w) return false;
    i_ += w.size();
    return true;
  }

  std::optional<Value> value(int depth) {
    if (depth > kMaxDepth) return std::nullopt;
    space();
    if (i_ >= t_.size()) return std::nullopt;
    Value v;
    char c = t_[i_];
    if (c == '{') {
      ++i_;
      v.kind = Value::Kind::Object;
      if (take('}')) return v;
      do {
        space();
        std::optional<std::string> k = string();
        if (!k || !take(':')) return std::nullopt;
        std::optional<Value> m = value(depth + 1);
        if (!m) return std::nullopt;
        v.members.push_back(Member{std::move(*k), std::move(*m)});
      } while (take(','));
      if (!take('}')) return std::nullopt;
    } else if (c == '[') {
      ++i_;
      v.kind = Value::Kind::Array;
      if (take(']')) return v;
      do {
        std::optional<Value> m = value(depth + 1);
        if (!m) return std::nullopt;
        v.items.push_back(std::move(*m));
      } while (take(','));
      if (!take(']')) return std::nullopt;
    } else if (c == '"') {
      std::optional<std::string> s = string();
      if (!s) return std::nullopt;
      v.kind = Value::Kind::String;
      v.string = std::move(*s);
    } else if (word("true") || word("false")) {
      v.kind = Value::Kind::Bool;
      v.boolean = t_[i_ - 1] == 'e' && t_[i_ - 2] == 'u';
    } else if (word("null")) {
      v.kind = Value::Kind::Null;
    } else {
      size_t start = i_;
      if (i_ < t_.size() && t_[i_] == '-') ++i_;
      while (i_ < t_.size() && (std::isdigit(static_cast<unsigned char>(t_[i_])) || t_[i_] == '.' || t_[i_] == 'e' ||
                                t_[i_] == 'E' || t_[i_] == '+' || t_[i_] == '-')) {
        ++i_;
      }
      if (i_ == start) return std::nullopt;
      // from_chars: the C locale's reading whatever the program's locale is.
      auto r = std::from_chars(t_.data() + start, t_.data() + i_, v.number);
      v.kind = Value::Kind::Number;
      if (r.ec != std::errc() || r.ptr != t_.data() + i_) return std::nullopt;
    }
    return v;
  }

  static void utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xc0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out += char(0xe0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3f));
      out += char(0x80 | (cp & 0x3f));
    } else {
      out += char(0xf0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3f));
      out += char(0x80 | ((cp >> 6) & 0x3f));
      out += char(0x80 | (cp & 0x3f));
    }
  }

  std::optional<uint32_t> hex4() {
    if (t_.size() - i_ < 4) return std::nullopt;
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      char c = t_[i_++];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= uint32_t(c - '0');
      else if (c >= 'a' && c <= 'f') v |= uint32_t(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= uint32_t(c - 'A' + 10);
      else return std::nullopt;
    }
    return v;
  }

  std::optional<std::string> string() {
    if (i_ >= t_.size() || t_[i_] != '"') return std::nullopt;
    ++i_;
    std::string out;
    while (i_ < t_.size()) {
      char c = t_[i_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) return std::nullopt;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= t_.size()) return std::nullopt;
      char e = t_[i_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          std::optional<uint32_t> cp = hex4();
          if (!cp) return std::nullopt;
          if (*cp >= 0xd800 && *cp < 0xdc00) {  // a high surrogate: its low half must follow
            if (!word("\\u")) return std::nullopt;
            std::optional<uint32_t> lo = hex4();
            if (!lo || *lo < 0xdc00 || *lo >= 0xe000) return std::nullopt;
            *cp = 0x10000 + ((*cp - 0xd800) << 10) + (*lo - 0xdc00);
          } else if (*cp >= 0xdc00 && *cp < 0xe000) {
            return std::nullopt;
          }
          utf8(out, *cp);
          break;
        }
        default: return std::nullopt;
      }
    }
    return std::nullopt;
  }

  std::string_view t_;
  size_t i_ = 0;
};

}  // namespace

std::optional<Value> parse(std::string_view text) { return Reader(text).document(); }

std::string quote(std::string_view s) {
  static const char* hex = "0123456789abcdef";
  std::string out = "\"";
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      out += "\\u00";
      out += hex[u >> 4];
      out += hex[u & 15];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace kiln::autotune::json
