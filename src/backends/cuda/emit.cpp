// The C-like emitter's frame: value names, the entry's signature (the kernel ABI, see emit.h),
// shared memory (static arrays, or one dynamic buffer past the static limit), regions and
// structured control flow. What each op computes is in emit_ops.cpp.
#include <algorithm>
#include <cctype>
#include <map>

#include "backends/cuda/emitter.h"
#include "common/hash.h"
#include "kiln/error.h"
#include "kiln/ir/text.h"

namespace kiln::cuda {

namespace {

using ir::OpKind;
using ir::Scalar;
using ir::Type;
using ir::TypeKind;

// C++ keywords, CUDA's built-in variables, the prelude's type names and the functions the emitter
// writes outside the prelude: a parameter with one of these names (or any name starting with
// "kiln", the prelude's prefix for its functions and macros) is renamed so that it cannot shadow
// them.
// clang-format off
constexpr std::string_view kReserved[] = {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
    "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr",
    "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete",
    "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
    "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
    "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
    "requires", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct", "switch",
    "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned",
    "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq", "main", "restrict", "threadIdx",
    "blockIdx", "blockDim", "gridDim", "warpSize", "kiln_smem", "kiln_smem_raw", "fmodf", "fmod", "fabsf", "fabs", "fminf", "fmin",
    "fmaxf", "fmax", "fmaf", "fma", "__fmul_rn", "__dmul_rn", "__fdiv_rn", "__ddiv_rn", "__int_as_float",
    "__longlong_as_double", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16", "f8e4m3", "f8e5m2", "f32", "f64", "barrier"};
// clang-format on

// A C identifier from an IR name: other characters become '_', and a leading digit or '_' gets a
// 'p' in front (names starting with '_' may be the implementation's).
std::string identifier(std::string_view name) {
  std::string s;
  for (char c : name) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '_') s = "p" + s;
  return s;
}

// `v` followed by digits: the names of SSA values.
bool looks_like_value_name(const std::string& s) {
  if (s.size() < 2 || s[0] != 'v') return false;
  for (size_t i = 1; i < s.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

uint64_t align16(uint64_t n) { return (n + 15) / 16 * 16; }

// One C parameter per line.
std::string signature_text(const std::vector<std::string>& params) {
  std::string s;
  for (size_t i = 0; i < params.size(); ++i) s += (i ? ",\n    " : "\n    ") + params[i];
  return s;
}

}  // namespace

std::string entry_name(const ir::Kernel& k) {
  std::string first = k.params.empty() ? "none" : std::string(ir::scalar_name(k.params[0].type.scalar));
  return identifier(k.name) + "_" + first + "_v" + std::to_string(k.facts.vector_width) + "_" +
         common::hex16(common::fnv1a64(ir::print(k)));
}

EmitResult emit_cuda(const ir::Kernel& k) { return Emitter(k, cuda_target()).run(); }

void Emitter::unsupported(const ir::Op& op, const std::string& why) const {
  throw Error("emit.unsupported",
              "kernel '" + k_.name + "': op '" + std::string(op.info().name) + "': the CUDA emitter " + why);
}

std::string Emitter::unique_identifier(std::string base) {
  // The prelude's functions and macros start with "kiln": a parameter may not.
  if (base.compare(0, 4, "kiln") == 0 || base.compare(0, 4, "KILN") == 0) base = "p_" + base;
  while (taken_.count(base) || looks_like_value_name(base)) base += "_";
  taken_.insert(base);
  return base;
}

// Values are named vN with N the number ir::print gives them (results and region arguments in
// order of definition), so that a line of the source reads against the printed IR.
void Emitter::number_values() {
  uint32_t next = 0;
  auto walk = [&](auto& self, const ir::Region& r) -> void {
    for (const ir::Op& op : r.ops) {
      for (size_t i = 0; i < op.result_count(); ++i) names_[op.result_at(i)] = "v" + std::to_string(next++);
      if (op.kind == OpKind::SharedAlloc) shared_.push_back(&op);
      if (op.kind == OpKind::CheckTrips) error_word_ = true;
      for (const ir::Region& sub : op.regions) {
        for (ir::Value a : sub.args) names_[a] = "v" + std::to_string(next++);
        self(self, sub);
      }
    }
  };
  walk(walk, k_.body);
}

std::string Emitter::name(ir::Value v) const {
  auto it = names_.find(v);
  if (it == names_.end()) throw Error("emit.unsupported", "kernel '" + k_.name + "': a value has no definition");
  return it->second;
}

std::string Emitter::lane(ir::Value v, int i) const {
  return type(v).width == 1 ? name(v) : name(v) + ".v[" + std::to_string(i) + "]";
}

std::string Emitter::type_name(const Type& t) const {
  std::string s(ir::scalar_name(t.scalar));
  if (t.width == 1) return s;
  return "kiln_vec<" + s + ", " + std::to_string(t.width) + ">";
}

void Emitter::line(std::string_view text) {
  body_.append(static_cast<size_t>(depth_) * 2, ' ');
  body_.append(text);
  body_ += '\n';
}

void Emitter::signature(EmitResult& out) {
  std::vector<std::string> c_params;
  auto u32_arg = [&](const std::string& n, AbiArg::Role role, uint32_t param, uint32_t dim) {
    c_params.push_back("u32 " + n);
    out.args.push_back(AbiArg{role, param, dim, 4, 4});
  };
  for (size_t i = 0; i < k_.params.size(); ++i) {
    const ir::Param& p = k_.params[i];
    const Type& t = p.type;
    uint32_t index = static_cast<uint32_t>(i);
    ParamNames names;
    std::string base = identifier(p.name.empty() ? "arg" + std::to_string(i) : p.name);
    names.value = unique_identifier(base);
    if (t.is_global()) {
      std::string elem = type_name(t.element());
      // __restrict__ (and with it the read-only data path for ro buffers) only where the launch
      // says no other parameter shares the memory (ir::KernelFacts::alias).
      bool ro = t.access == ir::Access::ReadOnly;
      std::string qualifier = k_.param_aliased(i) ? " " : " " + std::string(t_.restrict_ptr) + " ";
      c_params.push_back((ro ? "const " : "") + elem + "*" + qualifier + names.value);
      out.args.push_back(AbiArg{AbiArg::Role::Pointer, index, 0, 8, 8});
      names.len = unique_identifier(base + "_len");
      u32_arg(names.len, AbiArg::Role::Len, index, 0);
      if (t.kind == TypeKind::Tensor) {
        for (uint32_t d = 0; d < t.rank; ++d)
          names.shape.push_back(unique_identifier(base + "_shape_" + std::to_string(d)));
        for (uint32_t d = 0; d < t.rank; ++d)
          names.stride.push_back(unique_identifier(base + "_stride_" + std::to_string(d)));
        for (uint32_t d = 0; d < t.rank; ++d) u32_arg(names.shape[d], AbiArg::Role::Shape, index, d);
        for (uint32_t d = 0; d < t.rank; ++d) u32_arg(names.stride[d], AbiArg::Role::Stride, index, d);
      }
      names_[p.value] = names.value;
    } else if (t.is_value()) {
      uint32_t bytes = static_cast<uint32_t>(t.element_bytes());
      if (t.is_scalar() && t.scalar == Scalar::Bool) {
        c_params.push_back("u8 " + names.value);
        names_[p.value] = "(" + names.value + " != 0)";
      } else {
        c_params.push_back(type_name(t) + " " + names.value);
        names_[p.value] = names.value;
      }
      out.args.push_back(AbiArg{AbiArg::Role::Value, index, 0, bytes, bytes});
    } else {
      throw Error("emit.unsupported", "kernel '" + k_.name + "': parameter '" + p.name + "' has type " +
                                          ir::to_string(t) + "; CUDA kernels take buffers, tensors and scalars");
    }
    params_[p.value] = std::move(names);
  }
  if (error_word_) {
    // Past every IR parameter: the binding at index params.size() (emit.h). Names starting with
    // "kiln" are the emitter's: a parameter of that name was renamed above.
    const uint32_t hidden = uint32_t(k_.params.size());
    c_params.push_back("u32* kiln_error_word");
    out.args.push_back(AbiArg{AbiArg::Role::Pointer, hidden, 0, 8, 8});
    c_params.push_back("u32 kiln_error_site");
    out.args.push_back(AbiArg{AbiArg::Role::Value, hidden, 0, 4, 4});
    out.error_word = true;
  }
  // The kernel's own ask comes first; else the hint where it cannot force a spill.
  const uint32_t min_cubes = k_.facts.cubes_per_processor ? uint32_t(k_.facts.cubes_per_processor) : min_cubes_hint();
  std::string bounds = std::to_string(out.units_per_cube) + (min_cubes ? ", " + std::to_string(min_cubes) : "");
  body_ += std::string(t_.entry_prefix) + " " + std::string(t_.launch_bounds) + "(" + bounds + ") " + out.entry + "(" +
           signature_text(c_params) + ") {\n";
}

// Shared arrays are one per cube wherever they are allocated, so all of them are declared at the
// top of the entry. Each starts 16-byte aligned, or at its layout's alignment (a swizzled tile's
// 256 to 1024 bytes: the pattern is read off the address bits). Arrays of one overlay group (attr `overlay`, set
// by a pass that knows their lifetimes never meet) start at the same byte and take the largest
// member's room. Past the target's static limit (48 KiB on CUDA) they are carved from one dynamic
// buffer whose size the launcher passes; overlays are always carved, so that they can alias.
void Emitter::plan_shared() {
  uint64_t total = 0;
  std::map<int64_t, size_t> group_first;  // overlay group -> index of its first member
  bool overlays = false;
  for (size_t i = 0; i < shared_.size(); ++i) {
    const ir::Op* op = shared_[i];
    uint64_t bytes = align16(uint64_t(op->type.element_bytes()) * op->type.length), align = align_of_array(*op);
    const ir::AttrValue* g = op->attr(ir::AttrKey::Overlay);
    if (g) overlays = true;
    if (g && group_first.count(g->i)) {
      shared_offsets_.push_back(shared_offsets_[group_first[g->i]]);
      continue;
    }
    if (g) {
      // The group's room and alignment: its largest member's, its most aligned member's.
      for (size_t j = i + 1; j < shared_.size(); ++j) {
        const ir::AttrValue* h = shared_[j]->attr(ir::AttrKey::Overlay);
        if (h && h->i == g->i) {
          bytes = std::max(bytes, align16(uint64_t(shared_[j]->type.element_bytes()) * shared_[j]->type.length));
          align = std::max(align, align_of_array(*shared_[j]));
        }
      }
      group_first[g->i] = i;
    }
    total = (total + align - 1) / align * align;
    shared_align_ = std::max(shared_align_, align);
    shared_offsets_.push_back(static_cast<uint32_t>(total));
    total += bytes;
    if (total > 0xffffffffull) unsupported(*op, "cannot place more than 4 GiB of shared memory");
  }
  shared_total_ = total;
  // An array aligned past 16 bytes is carved too, at the offset planned here: the compiler may
  // place static arrays of larger alignment otherwise than in declaration order.
  shared_dynamic_ = total > t_.max_static_shared || overlays || shared_align_ > 16;
  // The slack a re-aligned dynamic base needs counts as shared memory the launch asks for.
  if (shared_dynamic_ && shared_align_ > 16) shared_total_ += shared_align_ - 16;
  if (shared_total_ > 0xffffffffull) unsupported(*shared_.back(), "cannot place more than 4 GiB of shared memory");
}

// The second argument of __launch_bounds__: how many cubes the compiler may assume share a
// processor. Left out, ptxas may hold registers down to fit more cubes than the shared memory
// lets in (a tile product at 128 units took 168 registers, three cubes' worth, while its 108 KiB
// of shared memory admits two), sinking each fragment load next to its use. Given only where
// the shared memory is what caps the count (below the resident-cube limit) and the capped count
// still leaves every unit the most registers it can hold, counted in whole planes as the
// hardware allocates them, so the hint never forces a spill (docs/decisions/020).
uint32_t Emitter::min_cubes_hint() const {
  if (shared_total_ == 0 || !t_.processor) return 0;
  const ProcessorLimits p = t_.processor(k_.facts.target.sm);
  uint64_t planes = (k_.facts.cube_dim.total() + t_.plane_size - 1) / t_.plane_size;
  uint64_t cubes = p.shared_bytes / (shared_total_ + t_.shared_reserved_per_cube);
  if (cubes == 0 || cubes >= p.max_cubes || planes == 0) return 0;
  if (t_.registers_per_processor / (cubes * planes * t_.plane_size) < t_.registers_per_unit_granted) return 0;
  return uint32_t(cubes);
}

uint64_t Emitter::align_of_array(const ir::Op& alloc) const {
  const ir::TileLayout* l = k_.layout_of(alloc.type);
  return std::max<uint64_t>(16, l && l->kind == ir::TileLayout::Kind::Shared ? l->shared.align : 16);
}

void Emitter::shared_memory(EmitResult& out) {
  const std::vector<uint32_t>& offsets = shared_offsets_;
  const uint64_t total = shared_total_;
  const bool dynamic = shared_dynamic_;
  if (dynamic && shared_align_ > 16) {
    // The dynamic buffer's start is only known to be 16-byte aligned: the arrays are placed from
    // the first multiple of the largest alignment in it, which the launch's extra bytes leave room for.
    out.dynamic_shared_bytes = static_cast<uint32_t>(total);  // with the slack plan_shared counted
    line(std::string(t_.dynamic_shared) + " " + std::string(t_.align) + "(16) u8 kiln_smem_raw[];");
    line("u8* kiln_smem = kiln_smem_raw + ((" + std::to_string(shared_align_) +
         "u - (u32)__cvta_generic_to_shared(kiln_smem_raw) % " + std::to_string(shared_align_) + "u) % " +
         std::to_string(shared_align_) + "u);");
  } else if (dynamic) {
    out.dynamic_shared_bytes = static_cast<uint32_t>(total);
    line(std::string(t_.dynamic_shared) + " " + std::string(t_.align) + "(16) u8 kiln_smem[];");
  } else {
    out.static_shared_bytes = static_cast<uint32_t>(total);
  }
  for (size_t i = 0; i < shared_.size(); ++i) {
    const ir::Op& op = *shared_[i];
    std::string elem = type_name(op.type.element());
    std::string n = name(op.result);
    if (dynamic) {
      line(elem + "* " + n + " = reinterpret_cast<" + elem + "*>(kiln_smem + " + std::to_string(offsets[i]) + ");");
    } else {
      // Static arrays are 16-byte aligned: one aligned further is carved from the dynamic buffer.
      line(std::string(t_.shared) + " " + std::string(t_.align) + "(16) " + elem + " " + n + "[" +
           std::to_string(op.type.length) + "];");
    }
  }
}

EmitResult Emitter::run() {
  EmitResult out;
  out.entry = entry_name(k_);
  out.units_per_cube = static_cast<uint32_t>(k_.facts.cube_dim.total());
  for (std::string_view r : kReserved) taken_.emplace(r);
  taken_.emplace(t_.print);
  for (const MathName& m : t_.math) {
    for (std::string_view n : {m.f32, m.f32_fast, m.f64}) taken_.emplace(n);
  }
  number_values();
  analyse_flow();
  ir::walk(k_.body, [&](const ir::Op& op) {
    if (op.kind == OpKind::WgmmaMmaAsyncFragA) register_factors_.insert(op.operand(ir::ops::MmaSyncFragA::a));
  });
  plan_shared();
  signature(out);
  shared_memory(out);
  if (masked_) entry_mask();
  region(k_.body);
  body_ += "}\n";

  const ir::KernelFacts& f = k_.facts;
  if (f.fast_math.contract) out.options.push_back("--fmad=true");
  std::string fast = f.fast_math.any() ? ", fast_math = [" + std::string(ir::to_string(f.fast_math)) + "]" : "";
  if (f.cubes_per_processor) fast += ", cubes_per_processor = " + std::to_string(f.cubes_per_processor);
  std::string head = "// Generated by kiln's " + std::string(t_.name) + " emitter from kernel '" + k_.name +
                     "' (cube_dim = [" + std::to_string(f.cube_dim.x) + ", " + std::to_string(f.cube_dim.y) + ", " +
                     std::to_string(f.cube_dim.z) + "], mode = " + std::string(ir::to_string(f.mode)) +
                     ", vector = " + std::to_string(f.vector_width) + fast + ").\n";
  out.hopper = hopper_;
  std::string helpers;
  for (const auto& [fn, text] : helpers_) helpers += text;
  out.source =
      head + std::string(t_.prelude) + "\n" + (hopper_ ? std::string(t_.arch_library) + "\n" : "") + helpers + body_;
  return out;
}

void Emitter::region(const ir::Region& r) {
  int guards = 0;  // `if (!skip) {` blocks opened by after_exit, closed at the region's end
  for (size_t i = 0; i < r.ops.size(); ++i) {
    op(r.ops[i]);
    if (!masked_) continue;
    // With plane ops, nothing after a break, continue or terminate is written: no unit runs it,
    // and a break or continue that only sets flags would let the lanes run on into it.
    if (r.ops[i].has(ir::kTerminator)) break;
    if (after_exit(r, i)) ++guards;
  }
  for (; guards > 0; --guards) {
    --depth_;
    line("}");
  }
}

void Emitter::op(const ir::Op& op) {
  using K = OpKind;
  if (op.type.kind == TypeKind::Tile || op.info().family == ir::OpFamily::Tile) {
    unsupported(op, "is a tile op, which lower_tiles rewrites before emission");
  }
  // By family: each op's own text is in the family's function, its one site in this emitter.
  switch (op.info().family) {
    case ir::OpFamily::Builtin: declare(op, builtin(op)); return;
    case ir::OpFamily::Array:
    case ir::OpFamily::Memory:
    case ir::OpFamily::Atomic:
    case ir::OpFamily::Var:
      if (op.kind == K::SharedAlloc) return;  // declared at the top of the entry
      memory(op);
      return;
    case ir::OpFamily::Sync:
      switch (op.kind) {
        case K::SyncCube: line(t_.barrier); return;
        case K::SyncPlane: line(t_.plane_barrier); return;
        case K::FenceDevice: line("__threadfence();"); return;
        case K::CopyAsyncCommit: line("kiln_cp_async_commit();"); return;
        case K::CopyAsyncWait:
          line("kiln_cp_async_wait<" + std::to_string(op.attr_int(ir::AttrKey::Pending)) + ">();");
          return;
        case K::MbarrierInit:
        case K::MbarrierArrive:
        case K::MbarrierArriveExpectTx:
        case K::MbarrierExpectTx:
        case K::MbarrierCompleteTx:
        case K::MbarrierTryWait:
        case K::FenceProxyAsync: mbarrier(op); return;
        case K::WgmmaFence:
        case K::WgmmaCommitGroup:
        case K::WgmmaWaitGroup: wgmma(op); return;
        default: unsupported(op, "does not know this sync op");
      }
    case ir::OpFamily::Debug:
      if (op.kind == K::CheckTrips) return check_trips(op);
      debug_print(op);
      return;
    case ir::OpFamily::Plane: plane(op); return;
    case ir::OpFamily::Matrix: matrix(op); return;
    case ir::OpFamily::Control: control(op); return;
    default: lanewise(op); return;
  }
}

void Emitter::loop_pragmas(const ir::Op& op) {
  if (op.flag(ir::AttrKey::UnrollFull)) {
    line("#pragma unroll");
  } else if (const ir::AttrValue* u = op.attr(ir::AttrKey::Unroll)) {
    line("#pragma unroll " + std::to_string(u->i));
  }
  if (const ir::AttrValue* p = op.attr(ir::AttrKey::PrefetchStages)) {
    // The pipelining itself is pipeline_loops' (its ring of shared slots and copies); the emitter
    // only says where it came from.
    line("// prefetch_stages = " + std::to_string(p->i) + " (pipeline_loops pipelines the tile loads it can)");
  }
}

std::string Emitter::loop_step(const ir::Op& op) const {
  ir::Value i = op.regions[0].args.at(0);
  const Type& t = type(i);
  std::string iv = name(i);
  return ir::is_unsigned_int(t.scalar) && ir::scalar_bytes(t.scalar) >= 4
             ? iv + " += " + name(op.operand(ir::ops::For::step))
             : iv + " = kiln_add(" + iv + ", " + name(op.operand(ir::ops::For::step)) + ")";
}

// Pragmas from the loop's attributes, then `for (T i = lo; test; i += step) {`.
std::string Emitter::for_header(const ir::Op& op, const std::string& test) {
  ir::Value i = op.regions[0].args.at(0);
  loop_pragmas(op);
  return "for (" + type_name(type(i)) + " " + name(i) + " = " + name(op.operand(ir::ops::For::lower_bound)) + "; " +
         test + "; " + loop_step(op) + ") {";
}

// A for marked at_least_once promises lo < hi (checked_io checks the promise in checked mode, and
// takes the mark away there): the loop is a do-while, whose first test is gone. Its `continue`
// goes to the step and the test at the end, as a for's goes to its step; `break` leaves.
void Emitter::at_least_once(const ir::Op& op) {
  const ir::Region& body = op.regions[0];
  ir::Value i = body.args.at(0);
  std::vector<ir::Value> results = op.results();
  line("{  // at_least_once: no test before the first trip");
  ++depth_;
  line(type_name(type(i)) + " " + name(i) + " = " + name(op.operand(ir::ops::For::lower_bound)) + ";");
  loop_pragmas(op);
  line("do {");
  ++depth_;
  snapshot(ir::loop_carried_args(op), results);
  region(body);
  --depth_;
  line("} while (" + loop_step(op) + ", " + name(i) + " < " + name(op.operand(ir::ops::For::upper_bound)) + ");");
  --depth_;
  line("}");
}

// Values that control flow carries (docs/ir.md) live in C variables declared before the op and
// named after the value each holds when the op ends: a for's and an if's results; a while's
// condition-region arguments (assigned by its body's yields and continues) and its results
// (assigned by `condition` and by its breaks). An exit assigns them right before it leaves; a
// region's own arguments are copies taken where the region starts (a for's or a while's body).
// So no assignment reads a variable that it or another of its group writes: the IR does not let
// a region see its op's results, nor a while's body see the condition region's arguments. A unit
// that breaks or continues in a loop that tracks masks assigns at the break and then runs nothing
// more of the iteration (decision 013), so what it carried stays until it leaves.
void Emitter::declare_carried(const ir::Op& op, std::span<const ir::Value> vars, std::span<const ir::Value> inits) {
  for (size_t i = 0; i < vars.size(); ++i) {
    const Type& t = type(vars[i]);
    if (!t.is_value()) unsupported(op, "carries " + ir::to_string(t) + "; tile values lower before emission");
    line(type_name(t) + " " + name(vars[i]) + (i < inits.size() ? " = " + name(inits[i]) : "") + ";");
  }
}

void Emitter::assign(const std::vector<std::string>& to, std::span<const ir::Value> values) {
  for (size_t i = 0; i < to.size(); ++i) line(to[i] + " = " + name(values[i]) + ";");
}

void Emitter::snapshot(std::span<const ir::Value> args, std::span<const ir::Value> from) {
  for (size_t i = 0; i < args.size(); ++i) {
    line(type_name(type(args[i])) + " " + name(args[i]) + " = " + name(from[i]) + ";");
  }
}

std::vector<std::string> Emitter::names_of(std::span<const ir::Value> values) const {
  std::vector<std::string> out;
  for (ir::Value v : values) out.push_back(name(v));
  return out;
}

// Plain C control flow: every kernel without plane ops, and the parts of a kernel with plane ops
// that hold none (masked_control takes the others). Regions in here track no mask, and a loop's
// break and continue are C's own.
void Emitter::control(const ir::Op& op) {
  using K = OpKind;
  std::vector<std::string> outer_yield = yield_to_, outer_condition = condition_to_;
  if (masked_ && masked_control(op)) {
    yield_to_ = outer_yield;
    condition_to_ = outer_condition;
    return;
  }
  std::string outer_mask = mask_;
  LoopFlags outer_loop = loop_;
  mask_.clear();
  std::vector<ir::Value> results = op.results();
  switch (op.kind) {
    case K::If: {
      declare_carried(op, results, {});
      yield_to_ = names_of(results);
      line("if (" + name(op.operand(ir::ops::If::condition)) + ") {");
      ++depth_;
      region(op.regions[0]);
      --depth_;
      if (!op.regions[1].ops.empty()) {
        line("} else {");
        ++depth_;
        region(op.regions[1]);
        --depth_;
      }
      line("}");
      break;
    }
    case K::For: {
      const ir::Region& body = op.regions[0];
      declare_carried(op, results, ir::loop_inits(op));
      loop_ = LoopFlags{};
      loop_.break_to = loop_.continue_to = yield_to_ = names_of(results);
      if (op.flag(ir::AttrKey::AtLeastOnce)) {
        at_least_once(op);
        break;
      }
      line(for_header(op, name(body.args.at(0)) + " < " + name(op.operand(ir::ops::For::upper_bound))));
      ++depth_;
      snapshot(ir::loop_carried_args(op), results);
      region(body);
      --depth_;
      line("}");
      break;
    }
    case K::While: {
      // The condition region runs before every iteration; `continue` jumps back to it.
      const ir::Region& cond = op.regions[0];
      const ir::Region& body = op.regions[1];
      declare_carried(op, cond.args, ir::loop_inits(op));
      declare_carried(op, results, {});
      loop_ = LoopFlags{};
      loop_.break_to = condition_to_ = names_of(results);
      loop_.continue_to = names_of(cond.args);
      line("while (true) {");
      ++depth_;
      yield_to_.clear();
      region(cond);
      snapshot(body.args, results);
      yield_to_ = loop_.continue_to;
      region(body);
      --depth_;
      line("}");
      break;
    }
    case K::Condition:
      assign(condition_to_, op.operands_from(ir::ops::Condition::forwarded));
      line("if (!" + name(op.operand(ir::ops::Condition::condition)) + ") break;");
      break;
    case K::Yield: assign(yield_to_, op.operands_from(ir::ops::Yield::values)); break;
    case K::Break:
      assign(loop_.break_to, op.operands_from(ir::ops::Jump::values));
      line("break;");
      break;
    case K::Continue:
      assign(loop_.continue_to, op.operands_from(ir::ops::Jump::values));
      line("continue;");
      break;
    case K::Terminate: line("return;"); break;
    default: unsupported(op, "does not know this control op");
  }
  mask_ = outer_mask;
  loop_ = outer_loop;
  yield_to_ = outer_yield;
  condition_to_ = outer_condition;
}

}  // namespace kiln::cuda
