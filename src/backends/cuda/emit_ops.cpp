// What each op becomes in C: lane-wise expressions (constants, arithmetic, bitwise, compare, select,
// casts, math, vector ops), builtins, memory accesses, atomics, plane ops and printf. Where CUDA
// C++ differs from docs/ir.md the expression calls a prelude helper (device/*.cuh) that gives the
// IR's exact semantics; f32 and f64 ops with matching semantics are written inline.
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "backends/cuda/emitter.h"
#include "kiln/error.h"
#include "kiln/half.h"
#include "kiln/ir/mma.h"

namespace kiln::cuda {

namespace {

using ir::OpKind;
using ir::Scalar;
using ir::Type;

using ir::is_short_float;
using ir::unsigned_of;
std::string sname(Scalar s) { return std::string(ir::scalar_name(s)); }

std::string hex(uint64_t v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v, 16);
  return "0x" + std::string(buf, r.ptr);
}

// The shortest decimal that reads back as exactly `v` (C++ literals round to nearest), with a '.'
// or exponent so that it is a floating literal.
template <class F>
std::string shortest(F v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, r.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

// f64 -> f32 rounded to odd: truncate, then set the last bit when inexact. Rounding that to a
// 16-bit float gives the correctly rounded result of the f64 (the device does the same).
float to_f32_odd(double d) {
  float f = static_cast<float>(d);
  if (std::isnan(d) || std::isinf(d)) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
  if (static_cast<double>(f) != d) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    b |= 1u;
    std::memcpy(&f, &b, 4);
  }
  return f;
}

std::string float_literal(Scalar s, double d) {
  if (is_short_float(s)) {
    // The quiet NaN of the type (what a float's quiet NaN narrows to), else the value rounded once.
    const float f = std::isnan(d) ? std::numeric_limits<float>::quiet_NaN() : to_f32_odd(d);
    uint16_t bits = ir::visit_scalar(s, [&]<class T>() -> uint16_t {
      if constexpr (ir::is_short_float_type<T>) return T(f).bits;
      else return 0;
    });
    return sname(s) + "{(" + (ir::scalar_bytes(s) == 1 ? "u8" : "u16") + ")" + hex(bits) + "}";
  }
  if (s == Scalar::F32) {
    float f = static_cast<float>(d);
    if (std::isnan(f)) return "__int_as_float(0x7fc00000)";
    if (std::isinf(f) || (f != 0.0f && std::fpclassify(f) == FP_SUBNORMAL)) {
      uint32_t b;
      std::memcpy(&b, &f, 4);
      return "__int_as_float((i32)" + hex(b) + "u)";
    }
    return shortest(f) + "f";
  }
  if (std::isnan(d)) return "__longlong_as_double(0x7ff8000000000000ll)";
  if (std::isinf(d) || (d != 0.0 && std::fpclassify(d) == FP_SUBNORMAL)) {
    uint64_t b;
    std::memcpy(&b, &d, 8);
    return "__longlong_as_double((i64)" + hex(b) + "ull)";
  }
  return shortest(d);
}

std::string int_literal(Scalar s, int64_t v) {
  std::string t = sname(s);
  if (ir::is_unsigned_int(s)) {
    uint64_t u = static_cast<uint64_t>(v);
    if (ir::scalar_bytes(s) < 8) u &= (uint64_t(1) << (8 * ir::scalar_bytes(s))) - 1;
    return "(" + t + ")" + std::to_string(u) + (ir::scalar_bytes(s) == 8 ? "ull" : "u");
  }
  if (v == std::numeric_limits<int64_t>::min()) return "(i64)(-9223372036854775807ll - 1)";
  bool wide = v < std::numeric_limits<int32_t>::min() + 1 || v > std::numeric_limits<int32_t>::max();
  return "(" + t + ")" +
         (v < 0 ? "(" + std::to_string(v) + (wide ? "ll" : "") + ")" : std::to_string(v) + (wide ? "ll" : ""));
}

// A C string literal holding `s` exactly.
std::string c_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\%03o", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

}  // namespace

void Emitter::declare(const ir::Op& op, const std::string& expr) {
  line(type_name(op.type) + " " + name(op.result) + " = " + expr + ";");
}

void Emitter::lanewise(const ir::Op& op) {
  if (!op.type.is_value()) unsupported(op, "expected a value result");
  if (op.kind == OpKind::VectorExtract) {
    declare(op, name(op.operand(ir::ops::Unary::x)) + ".v[" + std::to_string(op.get<ir::AttrKey::Lane>()) + "]");
    return;
  }
  if (op.kind == OpKind::Bitcast && type(op.operand(ir::ops::Unary::x)).width != op.type.width) {
    declare(op, "kiln_bitcast<" + type_name(op.type) + ">(" + name(op.operand(ir::ops::Unary::x)) + ")");
    return;
  }
  if (op.type.width == 1) {
    declare(op, lane_expr(op, 0));
    return;
  }
  std::string init = "{{";
  for (int i = 0; i < op.type.width; ++i) init += (i ? ", " : "") + lane_expr(op, i);
  declare(op, init + "}}");
}

std::string Emitter::lane_expr(const ir::Op& op, int i) const {
  using K = OpKind;
  std::vector<std::string> a;
  for (ir::Value v : op.operands) a.push_back(lane(v, i));
  // The scalar the op computes on: its operands' (a select's values'), or its result's.
  Scalar s = op.operands.empty()    ? op.type.scalar
             : op.kind == K::Select ? type(op.operand(ir::ops::Select::if_true)).scalar
                                    : type(op.operands.front()).scalar;
  switch (op.info().family) {
    case ir::OpFamily::Constant: return constant(op);
    case ir::OpFamily::Arith: return arith(op, s, a);
    case ir::OpFamily::Bitwise: return bitwise(op, s, a);
    case ir::OpFamily::Compare: return compare(op, s, a);
    case ir::OpFamily::Select: return "(" + a[0] + " ? " + a[1] + " : " + a[2] + ")";
    case ir::OpFamily::Cast:
      if (op.kind == K::Cast) return cast(s, op.type.scalar, a[0]);
      if (s == op.type.scalar) return a[0];
      if (op.type.scalar == Scalar::Bool) return "(kiln_bitcast<u8>(" + a[0] + ") != 0)";
      return "kiln_bitcast<" + sname(op.type.scalar) + ">(" + a[0] + ")";
    case ir::OpFamily::Math: return math(op, s, a);
    case ir::OpFamily::Vector:
      switch (op.kind) {
        case K::VectorSplat: return a[0];
        case K::VectorConstruct: return name(op.operands_from(ir::ops::VectorConstruct::lanes)[static_cast<size_t>(i)]);
        case K::VectorInsert:
          return i == op.get<ir::AttrKey::Lane>() ? name(op.operand(ir::ops::VectorInsert::value)) : a[0];
        default: break;
      }
      break;
    default: break;
  }
  unsupported(op, "does not know this op");
}

std::string Emitter::compare(const ir::Op& op, Scalar s, const std::vector<std::string>& a) const {
  using K = OpKind;
  const char* c = nullptr;
  switch (op.kind) {
    case K::Eq: c = "=="; break;
    case K::Ne: c = "!="; break;
    case K::Lt: c = "<"; break;
    case K::Le: c = "<="; break;
    case K::Gt: c = ">"; break;
    case K::Ge: c = ">="; break;
    default: unsupported(op, "does not know this comparison");
  }
  if (is_short_float(s)) return std::string("(kiln_f32(") + a[0] + ") " + c + " kiln_f32(" + a[1] + "))";
  return "(" + a[0] + " " + c + " " + a[1] + ")";
}

std::string Emitter::constant(const ir::Op& op) const {
  const ir::AttrValue* v = op.attr(ir::AttrKey::Value);
  if (!v) unsupported(op, "needs the constant's value");
  Scalar s = op.type.scalar;
  if (s == Scalar::Bool) return v->i ? "true" : "false";
  if (ir::is_float(s)) return float_literal(s, v->tag == ir::AttrValue::Tag::Float ? v->f : double(v->i));
  return int_literal(s, v->i);
}

std::string Emitter::arith(const ir::Op& op, Scalar s, const std::vector<std::string>& a) const {
  using K = OpKind;
  K k = op.kind;
  if (s == Scalar::F32 || s == Scalar::F64) {
    bool d = s == Scalar::F64;
    const ir::FastMath& fast = k_.facts.fast_math;
    switch (k) {
      case K::Add: return "(" + a[0] + " + " + a[1] + ")";
      case K::Sub: return "(" + a[0] + " - " + a[1] + ")";
      // __fmul_rn is never contracted with an add into an fma: each op rounds, as the IR says. A
      // plain `*` may be, under --fmad=true (EmitResult::options), where the kernel allows it.
      case K::Mul:
        if (fast.contract) return "(" + a[0] + " * " + a[1] + ")";
        return std::string(d ? "__dmul_rn(" : "__fmul_rn(") + a[0] + ", " + a[1] + ")";
      // __fdividef: within 2 ulp for divisors below 2^126 in magnitude, 0 past that. f64 has no
      // faster division.
      case K::Div:
        if (fast.approx && !d) return "__fdividef(" + a[0] + ", " + a[1] + ")";
        return std::string(d ? "__ddiv_rn(" : "__fdiv_rn(") + a[0] + ", " + a[1] + ")";
      case K::Rem: return std::string(d ? "fmod(" : "fmodf(") + a[0] + ", " + a[1] + ")";
      case K::Neg: return "(-" + a[0] + ")";
      case K::Abs: return std::string(d ? "fabs(" : "fabsf(") + a[0] + ")";
      case K::Min: return std::string(d ? "fmin(" : "fminf(") + a[0] + ", " + a[1] + ")";
      case K::Max: return std::string(d ? "fmax(" : "fmaxf(") + a[0] + ", " + a[1] + ")";
      case K::Fma: return std::string(d ? "fma(" : "fmaf(") + a[0] + ", " + a[1] + ", " + a[2] + ")";
      default: break;
    }
  }
  if (s == Scalar::U32 || s == Scalar::U64) {
    // C's unsigned arithmetic of at least 32 bits is the IR's: wrapping, truncating division.
    switch (k) {
      case K::Add: return "(" + a[0] + " + " + a[1] + ")";
      case K::Sub: return "(" + a[0] + " - " + a[1] + ")";
      case K::Mul: return "(" + a[0] + " * " + a[1] + ")";
      case K::Div: return "(" + a[0] + " / " + a[1] + ")";
      case K::Rem: return "(" + a[0] + " % " + a[1] + ")";
      default: break;
    }
  }
  if (k == K::Fma && !is_short_float(s)) unsupported(op, "fma takes floats");
  std::string fn = "kiln_" + std::string(ir::op_name(k));
  std::string args;
  for (size_t j = 0; j < a.size(); ++j) args += (j ? ", " : "") + a[j];
  return fn + "(" + args + ")";
}

std::string Emitter::bitwise(const ir::Op& op, Scalar s, const std::vector<std::string>& a) const {
  using K = OpKind;
  if (s == Scalar::Bool) {
    switch (op.kind) {
      case K::And: return "(" + a[0] + " && " + a[1] + ")";
      case K::Or: return "(" + a[0] + " || " + a[1] + ")";
      case K::Xor: return "(" + a[0] + " != " + a[1] + ")";
      case K::Not: return "(!" + a[0] + ")";
      default: unsupported(op, "is not defined on bool");
    }
  }
  // Narrow integers promote to int in C; the cast brings the result back to the IR's type.
  std::string t = sname(s);
  bool narrow = ir::scalar_bytes(s) < 4;
  auto wrap = [&](const std::string& e) { return narrow ? "(" + t + ")(" + e + ")" : "(" + e + ")"; };
  switch (op.kind) {
    case K::And: return wrap(a[0] + " & " + a[1]);
    case K::Or: return wrap(a[0] + " | " + a[1]);
    case K::Xor: return wrap(a[0] + " ^ " + a[1]);
    case K::Not: return wrap("~" + a[0]);
    case K::Shl: return "kiln_shl(" + a[0] + ", " + a[1] + ")";
    case K::Shr: return "kiln_shr(" + a[0] + ", " + a[1] + ")";
    case K::Popcount: return "kiln_popcount(" + a[0] + ")";
    case K::LeadingZeros: return "kiln_leading_zeros(" + a[0] + ")";
    case K::TrailingZeros: {
      // The bits as unsigned of the same width, widened: __ffs counts from 1 and gives 0 for 0,
      // where the IR's count for 0 is the bit width.
      int bits = 8 * ir::scalar_bytes(s);
      std::string wide = bits == 64 ? "u64" : "u32";
      std::string u = "(" + wide + ")(" + sname(unsigned_of(s)) + ")" + a[0];
      std::string ffs = bits == 64 ? "__ffsll((i64)" + u + ")" : "__ffs((i32)" + u + ")";
      return "(" + u + " == 0 ? (u32)" + std::to_string(bits) + " : (u32)(" + ffs + " - 1))";
    }
    default: unsupported(op, "does not know this bitwise op");
  }
}

std::string Emitter::math(const ir::Op& op, Scalar s, const std::vector<std::string>& a) const {
  const MathName* m = nullptr;
  for (const MathName& n : t_.math) {
    if (n.kind == op.kind) m = &n;
  }
  if (!m) unsupported(op, "has no function for this math op");
  bool fast = op.flag(ir::AttrKey::FastMath) || k_.facts.fast_math.approx;
  std::string fn(s == Scalar::F64 ? m->f64 : fast ? m->f32_fast : m->f32);
  bool predicate = op.kind == OpKind::IsNan || op.kind == OpKind::IsInf;
  std::string args;
  for (size_t j = 0; j < a.size(); ++j) args += (j ? ", " : "") + (is_short_float(s) ? "kiln_f32(" + a[j] + ")" : a[j]);
  std::string call = fn + "(" + args + ")";
  if (is_short_float(s) && !predicate) return "kiln_" + sname(s) + "(" + call + ")";
  return call;
}

// The IR's cast (docs/ir.md): ints wrap or extend by the source's signedness, conversions to a
// float round to nearest even once, float -> int truncates and saturates with NaN -> 0, to bool
// is != 0.
std::string Emitter::cast(Scalar from, Scalar to, const std::string& e) const {
  if (from == to) return e;
  std::string t = sname(to);
  bool from_half = is_short_float(from), to_half = is_short_float(to);
  std::string x = from_half ? "kiln_f32(" + e + ")" : e;  // a 16-bit float widens exactly to f32
  Scalar src = from_half ? Scalar::F32 : from;
  if (to == Scalar::Bool) return "(" + x + " != 0)";
  if (to_half) {
    std::string f32;
    if (src == Scalar::F32) f32 = x;
    else if (src == Scalar::F64 || src == Scalar::I64 || src == Scalar::U64) f32 = "kiln_f32_odd(" + x + ")";
    else if (src == Scalar::I32 || src == Scalar::U32) f32 = "kiln_f32_odd((f64)" + x + ")";
    else f32 = "(f32)" + x;  // bool and integers of 16 bits or fewer are exact in f32
    return "kiln_" + t + "(" + f32 + ")";
  }
  if (ir::is_int(to) && ir::is_float(src)) return "kiln_ftoi_" + t + "(" + x + ")";
  return "(" + t + ")" + x;  // int <-> int, int -> f32/f64, bool -> number, f32 <-> f64, 16-bit -> f32/f64
}

// The linear unit position, x fastest.
std::string Emitter::linear_unit() const {
  const ir::Dim3& d = k_.facts.cube_dim;
  std::string unit = std::string(t_.unit_pos[0]);
  if (d.y > 1 || d.z > 1) {
    unit = "(" + unit + " + " + std::string(t_.unit_pos[1]) + " * " + std::to_string(d.x) + "u";
    if (d.z > 1) unit += " + " + std::string(t_.unit_pos[2]) + " * " + std::to_string(uint64_t(d.x) * d.y) + "u";
    unit += ")";
  }
  return unit;
}

std::string Emitter::builtin(const ir::Op& op) const {
  using K = OpKind;
  const ir::Dim3& d = k_.facts.cube_dim;
  const ir::AttrValue* axis_attr = op.attr(ir::AttrKey::Axis);
  int axis = axis_attr ? static_cast<int>(axis_attr->i) : -1;
  auto u = [](uint64_t v) { return std::to_string(v) + "u"; };
  uint32_t dims[3] = {d.x, d.y, d.z};
  auto at = [&](const std::array<std::string_view, 3>& names) { return std::string(names[static_cast<size_t>(axis)]); };
  std::string unit = linear_unit();
  std::string count = "(" + std::string(t_.cube_count[0]) + " * " + std::string(t_.cube_count[1]) + " * " +
                      std::string(t_.cube_count[2]) + ")";
  std::string cube = "(" + std::string(t_.cube_pos[0]) + " + " + std::string(t_.cube_pos[1]) + " * " +
                     std::string(t_.cube_count[0]) + " + " + std::string(t_.cube_pos[2]) + " * " +
                     std::string(t_.cube_count[0]) + " * " + std::string(t_.cube_count[1]) + ")";
  switch (op.kind) {
    case K::UnitPos: return axis < 0 ? unit : at(t_.unit_pos);
    case K::CubePos: return axis < 0 ? cube : at(t_.cube_pos);
    case K::CubeDim: return axis < 0 ? u(d.total()) : u(dims[axis]);
    case K::CubeCount: return axis < 0 ? count : at(t_.cube_count);
    case K::AbsolutePos:
      if (axis < 0) return "(" + cube + " * " + u(d.total()) + " + " + unit + ")";
      return "(" + at(t_.cube_pos) + " * " + u(dims[axis]) + " + " + at(t_.unit_pos) + ")";
    case K::PlaneDim: return u(t_.plane_size);
    case K::UnitPosPlane: return "(" + unit + " % " + u(t_.plane_size) + ")";
    default: unsupported(op, "does not know this builtin");
  }
}

void Emitter::memory(const ir::Op& op) {
  using K = OpKind;
  if (op.flag(ir::AttrKey::Checked)) {
    unsupported(op,
                "takes kernels after the pass pipeline; run passes::checked_io first (this access is still "
                "flagged `checked`)");
  }
  auto param = [&](ir::Value v) -> const ParamNames* {
    auto it = params_.find(v);
    return it == params_.end() ? nullptr : &it->second;
  };
  if (const ir::AttrValue* w = op.attr(ir::AttrKey::Lanes); w && (op.kind == K::Load || op.kind == K::Store)) {
    // W elements from the index as one vector, in the widest moves the address allows
    // (device/wide.cuh): a handle may start at any element.
    using S = ir::ops::Store;  // a load's array and index are at a store's places
    std::string t = "<" + type_name(type(op.operand(S::array)).element()) + ", " + std::to_string(w->i) + ">";
    std::string at = name(op.operand(S::array)) + " + " + name(op.operand(S::index));
    if (op.kind == K::Load) return declare(op, "kiln_load_wide" + t + "(" + at + ")");
    return line("kiln_store_wide" + t + "(" + at + ", " + name(op.operand(S::value)) + ");");
  }
  switch (op.kind) {
    case K::Len: {
      const Type& a = type(op.operand(ir::ops::Array::array));
      if (const ParamNames* p = param(op.operand(ir::ops::Array::array))) return declare(op, p->len);
      return declare(op, std::to_string(a.length) + "u");
    }
    case K::TensorShape:
    case K::TensorStride: {
      const ParamNames* p = param(op.operand(ir::ops::Array::array));
      if (!p) unsupported(op, "reads the shape of a tensor that is not a parameter");
      size_t dim = static_cast<size_t>(op.get<ir::AttrKey::Dim>());
      return declare(op, op.kind == K::TensorShape ? p->shape.at(dim) : p->stride.at(dim));
    }
    case K::Load: {
      std::string access = name(op.operand(ir::ops::Load::array)) + "[" + name(op.operand(ir::ops::Load::index)) + "]";
      // A masked-off load must not touch memory: the conditional evaluates the access only when
      // the mask holds.
      if (ir::Value mask = op.mask(); mask != ir::kNoValue) {
        return declare(op, name(mask) + " ? " + access + " : " + type_name(op.type) + "{}");
      }
      return declare(op, access);
    }
    case K::Store: {
      std::string s = name(op.operand(ir::ops::Store::array)) + "[" + name(op.operand(ir::ops::Store::index)) +
                      "] = " + name(op.operand(ir::ops::Store::value)) + ";";
      if (ir::Value mask = op.mask(); mask != ir::kNoValue) s = "if (" + name(mask) + ") " + s;
      return line(s);
    }
    case K::CopyAsync: {
      // Masked off, the copy reads nothing (zero bytes from element 0) and writes zeros.
      using C = ir::ops::CopyAsync;
      std::string mask = op.mask() != ir::kNoValue ? name(op.mask()) : "true";
      std::string src =
          name(op.operand(C::global)) + " + (" + mask + " ? " + name(op.operand(C::global_index)) + " : 0u)";
      const int64_t bytes = type(op.operand(C::global)).element_bytes();
      return line("kiln_cp_async<" + std::to_string(bytes) + ">(&" + name(op.operand(C::shared)) + "[" +
                  name(op.operand(C::shared_index)) + "], " + src + ", " + mask + ");");
    }
    case K::LocalAlloc:
      line(type_name(op.type.element()) + " " + name(op.result) + "[" + std::to_string(op.type.length) + "];");
      if (register_factors_.count(op.result)) {
        line("u32 " + name(op.result) + "_a[" + std::to_string(op.type.length / 2) + "];");
      }
      return;
    case K::VarDecl: return line(type_name(op.type.element()) + " " + name(op.result) + ";");
    case K::VarLoad: return declare(op, name(op.operand(ir::ops::VarLoad::var)));
    case K::VarStore:
      return line(name(op.operand(ir::ops::VarStore::var)) + " = " + name(op.operand(ir::ops::VarStore::value)) + ";");
    default: break;
  }
  if (!ir::is_atomic(op.kind)) unsupported(op, "does not know this memory op");
  // atomic.add -> kiln_atomic_add(&a[i], v): the prelude maps the IR's types onto CUDA's overloads.
  std::string fn = "kiln_atomic_" + std::string(ir::op_name(op.kind).substr(7));
  std::string call =
      fn + "(&" + name(op.operand(ir::ops::Atomic::array)) + "[" + name(op.operand(ir::ops::Atomic::index)) + "]";
  if (op.kind == K::AtomicCas) {
    call +=
        ", " + name(op.operand(ir::ops::AtomicCas::expected)) + ", " + name(op.operand(ir::ops::AtomicCas::desired));
  } else {
    call += ", " + name(op.operand(ir::ops::Atomic::value));
  }
  call += ")";
  if (ir::Value mask = op.mask(); mask != ir::kNoValue)
    call = name(mask) + " ? " + call + " : " + type_name(op.type) + "{}";
  declare(op, call);
}

// Each plane op takes the region's active lanes, mask_ (emit_masks.cpp), as its first argument.
void Emitter::plane(const ir::Op& op) {
  using K = OpKind;
  if (mask_.empty()) unsupported(op, "has no mask for this plane op (an emitter bug)");
  std::string m = mask_;
  auto x = [&] { return name(op.operand(ir::ops::Unary::x)); };
  auto predicate = [&] { return name(op.operand(ir::ops::PlaneVote::predicate)); };
  auto value_lane = [&] {
    return name(op.operand(ir::ops::PlaneLane::value)) + ", " + name(op.operand(ir::ops::PlaneLane::lane));
  };
  switch (op.kind) {
    case K::PlaneSum: return declare(op, "kiln_plane_reduce<kiln_op_add>(" + m + ", " + x() + ")");
    case K::PlaneProd: return declare(op, "kiln_plane_reduce<kiln_op_mul>(" + m + ", " + x() + ")");
    case K::PlaneMax: return declare(op, "kiln_plane_reduce<kiln_op_max>(" + m + ", " + x() + ")");
    case K::PlaneMin: return declare(op, "kiln_plane_reduce<kiln_op_min>(" + m + ", " + x() + ")");
    case K::PlaneAll: return declare(op, "kiln_plane_all(" + m + ", " + predicate() + ")");
    case K::PlaneAny: return declare(op, "kiln_plane_any(" + m + ", " + predicate() + ")");
    case K::PlaneBallot: return declare(op, "kiln_plane_ballot(" + m + ", " + predicate() + ")");
    case K::PlaneElect: return declare(op, "kiln_plane_elect(" + m + ")");
    case K::PlaneBroadcast:
    case K::PlaneShuffle: return declare(op, "kiln_shfl_idx(" + m + ", " + value_lane() + ")");
    case K::PlaneShuffleXor: return declare(op, "kiln_shfl_xor(" + m + ", " + value_lane() + ")");
    case K::PlaneShuffleUp: return declare(op, "kiln_shfl_up(" + m + ", " + value_lane() + ")");
    case K::PlaneShuffleDown: return declare(op, "kiln_shfl_down(" + m + ", " + value_lane() + ")");
    case K::PlaneInclusiveSum: return declare(op, "kiln_plane_scan(" + m + ", " + x() + ", true)");
    case K::PlaneExclusiveSum: return declare(op, "kiln_plane_scan(" + m + ", " + x() + ", false)");
    default: unsupported(op, "does not know this plane op");
  }
}

// kiln_mma_sync<M, N, K, WM, WN, LDA, LDB[, true]>(&a[offset], &b[offset], acc) (true: b stored as
// columns, the b_columns attribute): every unit of the cube calls it together; it reads the
// factors from shared memory and updates the unit's accumulators in place
// (src/backends/cuda/device/mma.cuh, docs/decisions/019-tile-layer.md).
//
// kiln_mma_sync_frag_a<M, N, K, WM, LDB[, true]>(a, &b[offset], acc) (mma.sync.a_frag): a is the
// unit's local array of a's fragments.
void Emitter::matrix(const ir::Op& op) {
  using M = ir::ops::MmaSync;
  std::span<const int64_t> shape = op.get<ir::AttrKey::Shape>(), planes = op.get<ir::AttrKey::Planes>(),
                           pitch = op.get<ir::AttrKey::Pitches>();
  if (op.kind == OpKind::MmaSyncFragA) {
    using F = ir::ops::MmaSyncFragA;
    std::string args = std::to_string(shape[0]) + ", " + std::to_string(shape[1]) + ", " + std::to_string(shape[2]) +
                       ", " + std::to_string(planes[0]) + ", " + std::to_string(pitch[0]) +
                       (op.get<ir::AttrKey::BColumns>() ? ", true" : "");
    line("kiln_mma_sync_frag_a<" + args + ">(" + name(op.operand(F::a)) + ", &" + name(op.operand(F::b)) + "[" +
         name(op.operand(F::b_offset)) + "], " + name(op.operand(F::acc)) + ");");
    return;
  }
  if (op.kind == OpKind::WgmmaMmaAsync || op.kind == OpKind::WgmmaMmaAsyncFragA) return wgmma(op);
  if (op.kind != OpKind::MmaSync) unsupported(op, "does not know this matrix op");
  std::string args = std::to_string(shape[0]) + ", " + std::to_string(shape[1]) + ", " + std::to_string(shape[2]) +
                     ", " + std::to_string(planes[0]) + ", " + std::to_string(planes[1]) + ", " +
                     std::to_string(pitch[0]) + ", " + std::to_string(pitch[1]) +
                     (op.get<ir::AttrKey::BColumns>() ? ", true" : "");
  line("kiln_mma_sync<" + args + ">(&" + name(op.operand(M::a)) + "[" + name(op.operand(M::a_offset)) + "], &" +
       name(op.operand(M::b)) + "[" + name(op.operand(M::b_offset)) + "], " + name(op.operand(M::acc)) + ");");
}

// The first failed check since the host last looked takes the device error word: the site's code,
// the loop's number, lo and hi (64 bits each, a signed value sign-extended), the linear cube and
// unit (the runtime's site names the kernel and reads them back).
void Emitter::check_trips(const ir::Op& op) {
  using B = ir::ops::Bounds;
  const ir::Value lo = op.operand(B::lower_bound), hi = op.operand(B::upper_bound);
  const Type& t = type(lo);
  auto wide = [&](ir::Value v) { return std::string(ir::is_signed_int(t.scalar) ? "(u64)(i64)" : "(u64)") + name(v); };
  std::string cube = "(" + std::string(t_.cube_pos[0]) + " + " + std::string(t_.cube_pos[1]) + " * " +
                     std::string(t_.cube_count[0]) + " + " + std::string(t_.cube_pos[2]) + " * " +
                     std::string(t_.cube_count[0]) + " * " + std::string(t_.cube_count[1]) + ")";
  line("if (!(" + name(lo) + " < " + name(hi) + ")) kiln_report_error(kiln_error_word, kiln_error_site, " +
       std::to_string(op.get<ir::AttrKey::Loop>()) + "u, " + wide(lo) + ", " + wide(hi) + ", " + cube + ", " +
       linear_unit() + ");");
}

// printf promotes as C varargs do: integers narrower than int (bool too) to int or unsigned, f32
// (and f16/bf16 through f32) to double.
void Emitter::debug_print(const ir::Op& op) {
  const ir::AttrValue* f = op.attr(ir::AttrKey::Format);
  if (!f) unsupported(op, "needs a format string");
  std::string s = std::string(t_.print) + "(" + c_string(f->s);
  for (ir::Value v : op.operands_from(ir::ops::Print::values)) {
    std::string x = name(v);
    const Scalar t = type(v).scalar;
    if (is_short_float(t)) {
      s += ", (double)kiln_f32(" + x + ")";
    } else if (ir::is_float(t) && ir::scalar_bytes(t) < 8) {
      s += ", (double)" + x;
    } else if (!ir::is_float(t) && ir::scalar_bytes(t) < 4) {
      s += std::string(ir::is_unsigned_int(t) ? ", (unsigned)" : ", (int)") + x;
    } else {
      s += ", " + x;
    }
  }
  line(s + ");");
}

// mbarrier.init %bars, %i, %n -> kiln_mbarrier_init(&bars[i], n); try_wait declares its bool.
void Emitter::mbarrier(const ir::Op& op) {
  hopper_ = true;
  if (op.kind == OpKind::FenceProxyAsync) return line("kiln_fence_proxy_async();");
  using B = ir::ops::MbarrierCount;
  std::string call = "kiln_" + std::string(ir::op_name(op.kind)).replace(8, 1, "_") + "(&" +
                     name(op.operand(B::array)) + "[" + name(op.operand(B::index)) + "]";
  if (op.kind == OpKind::MbarrierTryWait) call += ", " + name(op.operand(ir::ops::MbarrierWait::parity));
  else if (op.operands.size() > size_t(B::count)) call += ", " + name(op.operand(B::count));
  call += ")";
  if (op.kind == OpKind::MbarrierTryWait) return declare(op, call);
  line(call + ";");
}

// One wgmma.mma_async of n columns on factors of `factor`, 32 bytes of k from each, as a function
// of the unit's accumulators and the two descriptors, `kiln_wgmma_m64n64k16_bf16(acc, da, db)`, or
// with a in four registers, `kiln_wgmma_m64n64k16_bf16_rs(acc, a0, a1, a2, a3, db)`. The
// accumulators are n / 2 "+f" operands (the instruction both reads and writes them), so the
// function is written out for the shape a kernel uses.
std::string Emitter::wgmma_instruction(uint32_t n, Scalar factor, bool a_in_registers) {
  const uint32_t k = ir::kWgmmaStepBytes / uint32_t(ir::scalar_bytes(factor)), regs = n / 2;
  std::string format;
  switch (factor) {
    case Scalar::BF16: format = "bf16"; break;
    case Scalar::F16: format = "f16"; break;
    case Scalar::F32: format = "tf32"; break;
    case Scalar::F8E4M3: format = "e4m3"; break;
    case Scalar::F8E5M2: format = "e5m2"; break;
    default: throw Error("compile.unsupported", "wgmma has no " + std::string(ir::scalar_name(factor)) + " factors");
  }
  const std::string shape = "m64n" + std::to_string(n) + "k" + std::to_string(k);
  const std::string fn = "kiln_wgmma_" + shape + "_" + format + (a_in_registers ? "_rs" : "");
  if (helpers_.count(fn)) return fn;
  std::string d, outs;
  for (uint32_t i = 0; i < regs; ++i) {
    d += (i ? ", %" : "%") + std::to_string(i);
    outs += std::string(i ? ", " : "") + (i % 8 == 0 ? "\n        " : "") + "\"+f\"(d[" + std::to_string(i) + "])";
  }
  auto at = [&](uint32_t i) { return "%" + std::to_string(regs + i); };
  // Scale-d is the predicate p (true: add to the accumulators); the factors are not negated; the
  // 16-bit formats also take their transpose flags (0: read along k), a in registers only b's.
  const bool sixteen = ir::scalar_bytes(factor) == 2;
  std::string a, b, one, params, ins, flags;
  if (a_in_registers) {
    a = "{" + at(0) + ", " + at(1) + ", " + at(2) + ", " + at(3) + "}";
    b = at(4);
    one = at(5);
    params = "u32 a0, u32 a1, u32 a2, u32 a3, u64 b";
    ins = "\"r\"(a0), \"r\"(a1), \"r\"(a2), \"r\"(a3), \"l\"(b), \"r\"(1)";
    flags = ", p, 1, 1, 0;";
  } else {
    a = at(0);
    b = at(1);
    one = at(2);
    params = "u64 a, u64 b";
    ins = "\"l\"(a), \"l\"(b), \"r\"(1)";
    flags = sixteen ? ", p, 1, 1, 0, 0;" : ", p, 1, 1;";
  }
  helpers_[fn] = "KILN_DEV void " + fn + "(f32 (&d)[" + std::to_string(regs) + "], " + params + ") {\n" +
                 "  asm volatile(\n      \"{\\n.reg .pred p;\\nsetp.ne.b32 p, " + one + ", 0;\\n\"\n" +
                 "      \"wgmma.mma_async.sync.aligned." + shape + ".f32." + format + "." + format + " {" + d + "}, " +
                 a + ", " + b + flags + "\\n}\\n\"\n      :" + outs + "\n      : " + ins + ");\n}\n";
  return fn;
}

// wgmma.mma_async: one instruction per 32 bytes of k, each factor's descriptor moved along its
// rows (src/backends/cuda/device/hopper.cuh); the fence, commit and wait as their instructions,
// the wait followed by kiln_wgmma_hold on each accumulator array it names.
void Emitter::wgmma(const ir::Op& op) {
  hopper_ = true;
  if (op.kind == OpKind::WgmmaCommitGroup) return line("kiln_wgmma_commit_group();");
  if (op.kind == OpKind::WgmmaFence || op.kind == OpKind::WgmmaWaitGroup) {
    std::span<const ir::Value> accs = op.operands_from(ir::ops::WgmmaAccumulators::accumulators);
    if (op.kind == OpKind::WgmmaFence) {
      // The accumulators' writes are held before the fence as the wait's reads are after it; a
      // register factor is packed here, and its packed registers held.
      for (ir::Value v : accs) {
        if (!register_factors_.count(v)) {
          line("kiln_wgmma_hold(" + name(v) + ");");
          continue;
        }
        const std::string f = name(v), n = std::to_string(type(v).length / 2);
        line("#pragma unroll");
        line("for (int j = 0; j < " + n + "; ++j) " + f + "_a[j] = kiln_wgmma_pack(" + f + "[2 * j], " + f +
             "[2 * j + 1]);");
        line("kiln_wgmma_hold(" + f + "_a);");
      }
      return line("kiln_wgmma_fence();");
    }
    line("kiln_wgmma_wait_group<" + std::to_string(op.attr_int(ir::AttrKey::Pending)) + ">();");
    for (ir::Value acc : accs) line("kiln_wgmma_hold(" + name(acc) + ");");
    return;
  }
  using M = ir::ops::MmaSync;
  using F = ir::ops::MmaSyncFragA;
  const bool registers = op.kind == OpKind::WgmmaMmaAsyncFragA;
  const ir::Value b = registers ? op.operand(F::b) : op.operand(M::b),
                  b_offset = registers ? op.operand(F::b_offset) : op.operand(M::b_offset),
                  acc = registers ? op.operand(F::acc) : op.operand(M::acc);
  const Scalar factor = type(b).scalar;
  std::span<const int64_t> shape = op.get<ir::AttrKey::Shape>();
  const std::string fn = wgmma_instruction(uint32_t(shape[1]), factor, registers);
  const int64_t step = ir::kWgmmaStepBytes / ir::scalar_bytes(factor);
  auto descriptor = [&](ir::Value array, ir::Value offset, int64_t s) {
    const ir::TileLayout* l = k_.layout_of(type(array));
    return "kiln_wgmma_descriptor(&" + name(array) + "[" + name(offset) + " + " + std::to_string(s * step) + "], " +
           std::to_string(uint32_t(l->shared.swizzle)) + ")";
  };
  for (int64_t s = 0; s < shape[2] / step; ++s) {
    std::string a;
    if (registers) {
      // Step s's 8 elements of the unit's a, packed two to a register at the fence
      // (ir::wgmma_a_fragment_element).
      const std::string f = name(op.operand(F::a));
      for (int64_t r = 0; r < 4; ++r) a += f + "_a[" + std::to_string(4 * s + r) + "], ";
    } else {
      a = descriptor(op.operand(M::a), op.operand(M::a_offset), s) + ", ";
    }
    line(fn + "(" + name(acc) + ", " + a + descriptor(b, b_offset, s) + ");");
  }
}

}  // namespace kiln::cuda
