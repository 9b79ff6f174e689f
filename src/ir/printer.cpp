// The IR printer. Values are renumbered in order of definition so that the text of a kernel
// does not depend on how many values passes made and dropped.
#include <charconv>
#include <cmath>
#include <unordered_map>

#include "kiln/ir/text.h"

namespace kiln::ir {

namespace {

std::string format_double(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, res.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          const char* hex = "0123456789abcdef";
          out += "\\x";
          out += hex[c >> 4];
          out += hex[c & 15];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

class Printer {
 public:
  Printer(const Kernel& k, const PrintOptions& o) : k_(k), o_(o) {}

  std::string run() {
    out_ = "kernel @" + k_.name + "(";
    for (size_t i = 0; i < k_.params.size(); ++i) {
      const Param& p = k_.params[i];
      std::string name = p.name.empty() ? "arg" + std::to_string(i) : p.name;
      names_[p.value] = "%" + name;
      out_ += (i ? ", " : "") + names_[p.value] + ": " + to_string(p.type);
    }
    const KernelFacts& f = k_.facts;
    out_ += ") {cube_dim = [" + std::to_string(f.cube_dim.x) + ", " + std::to_string(f.cube_dim.y) + ", " +
            std::to_string(f.cube_dim.z) + "], mode = " + std::string(to_string(f.mode)) +
            ", address = " + std::string(to_string(f.address)) + ", vector = " + std::to_string(f.vector_width);
    if (!f.alias.empty()) {
      out_ += ", alias = [";
      for (size_t i = 0; i < f.alias.size(); ++i) out_ += (i ? ", " : "") + std::to_string(f.alias[i]);
      out_ += "]";
    }
    if (f.fast_math.any()) out_ += ", fast_math = [" + std::string(to_string(f.fast_math)) + "]";
    if (f.cubes_per_processor) out_ += ", cubes_per_processor = " + std::to_string(f.cubes_per_processor);
    if (f.target.known()) out_ += ", target = " + to_string(f.target);
    out_ += "}";
    if (!f.comptime.empty()) {
      out_ += " comptime {";
      for (size_t i = 0; i < f.comptime.size(); ++i) {
        out_ += (i ? ", " : "") + f.comptime[i].first + " = " + f.comptime[i].second;
      }
      out_ += "}";
    }
    if (!k_.layouts.empty()) {
      // One a line: a fragment layout names every bit of a unit and a slot.
      out_ += " layouts {";
      for (size_t i = 0; i < k_.layouts.size(); ++i) {
        out_ += std::string(i ? "," : "") + "\n  #" + std::to_string(i + 1) + " = " + to_string(k_.layouts[i]);
      }
      out_ += "\n}";
    }
    out_ += " {\n";
    region(k_.body, 1);
    out_ += "}\n";
    return out_;
  }

 private:
  std::string define(Value v) {
    std::string n = "%" + std::to_string(next_++);
    names_[v] = n;
    return n;
  }

  std::string ref(Value v) const {
    auto it = names_.find(v);
    return it == names_.end() ? "%<undefined " + std::to_string(v) + ">" : it->second;
  }

  void indent(int depth) { out_.append(static_cast<size_t>(depth) * 2, ' '); }

  void region(const Region& r, int depth) {
    for (const Op& op : r.ops) this->op(op, depth);
  }

  std::string constant(const Op& op) {
    const AttrValue* v = op.attr(AttrKey::Value);
    if (!v) return "<missing value>";
    if (op.type.scalar == Scalar::Bool) return v->i ? "true" : "false";
    if (is_float(op.type.scalar)) return format_double(v->tag == AttrValue::Tag::Float ? v->f : double(v->i));
    if (is_unsigned_int(op.type.scalar)) return std::to_string(static_cast<uint64_t>(v->i));
    return std::to_string(v->i);
  }

  std::string attr_text(const Attr& a) {
    std::string name(attr_name(a.key));
    if (attr_type(a.key) == AttrType::Pad && attr_value_fits(AttrType::Pad, a.value)) {
      return name + " = " + std::string(to_string(static_cast<Pad>(a.value.i)));
    }
    switch (a.value.tag) {
      case AttrValue::Tag::Bool: return a.value.i ? name : name + " = false";
      case AttrValue::Tag::Int: return name + " = " + std::to_string(a.value.i);
      case AttrValue::Tag::Float: return name + " = " + format_double(a.value.f);
      case AttrValue::Tag::String: return name + " = " + quote(a.value.s);
      case AttrValue::Tag::Ints: {
        std::string list;
        for (size_t i = 0; i < a.value.ints.size(); ++i) list += (i ? ", " : "") + std::to_string(a.value.ints[i]);
        return name + " = [" + list + "]";
      }
    }
    return name;
  }

  void op(const Op& op, int depth) {
    indent(depth);
    size_t number = ++op_number_;
    // Results are numbered before the values of the op's regions: in the order they are written.
    for (size_t i = 0; i < op.result_count(); ++i) {
      out_ += (i ? ", " : "") + define(op.result_at(i)) + (i + 1 == op.result_count() ? " = " : "");
    }
    out_ += op.info().name;
    if (op.kind == OpKind::Const) {
      out_ += " " + constant(op);
    } else {
      for (size_t i = 0; i < op.operands.size(); ++i) out_ += (i ? ", " : " ") + ref(op.operands[i]);
      if (!op.attrs.empty()) {
        out_ += " {";
        for (size_t i = 0; i < op.attrs.size(); ++i) out_ += (i ? ", " : "") + attr_text(op.attrs[i]);
        out_ += "}";
      }
    }
    // The first result's type as the op holds it (the verifier checks it against value_types).
    for (size_t i = 0; i < op.result_count(); ++i) {
      out_ += (i ? ", " : " : ") + to_string(i == 0 ? op.type : k_.type_of(op.result_at(i)));
    }
    for (size_t i = 0; i < op.regions.size(); ++i) {
      const Region& r = op.regions[i];
      // An empty trailing region (an if without else) is not printed.
      if (i > 0 && r.ops.empty() && r.args.empty() && op.kind == OpKind::If) continue;
      if (i > 0) out_ += " " + std::string(op.info().region_label(i));
      if (!r.args.empty()) {
        out_ += " (";
        for (size_t a = 0; a < r.args.size(); ++a) {
          out_ += (a ? ", " : "") + define(r.args[a]) + ": " + to_string(k_.type_of(r.args[a]));
        }
        out_ += ")";
      }
      out_ += " {";
      if (i == 0 && o_.op_numbers) out_ += "  // #" + std::to_string(number);
      out_ += "\n";
      region(r, depth + 1);
      indent(depth);
      out_ += "}";
    }
    if (op.regions.empty() && o_.op_numbers) out_ += "  // #" + std::to_string(number);
    out_ += "\n";
  }

  const Kernel& k_;
  PrintOptions o_;
  std::string out_;
  std::unordered_map<Value, std::string> names_;
  uint32_t next_ = 0;
  size_t op_number_ = 0;
};

}  // namespace

std::string print(const Kernel& k, const PrintOptions& options) { return Printer(k, options).run(); }

std::string print_type(const Type& t) { return to_string(t); }

}  // namespace kiln::ir
