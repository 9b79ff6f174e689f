// Structured control flow as masks and jumps. Every control op at nesting depth d owns three
// masks: saved (the active units on entry), m1 (an if's else-units, a loop's finished units) and
// m2 (a loop's units that ran `continue` this iteration). Break, continue and terminate remove the
// active units and jump to the end of their region, whose closing instruction recomputes the
// active mask from the frame; a merge that leaves no unit active jumps on to the enclosing end.
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "backends/cpu/lanes.h"
#include "kiln/error.h"

namespace kiln::cpu {

namespace {

using ir::OpKind;

// cur = saved & ~terminated & ~(loop's m1 | m2); returns whether any unit stays active.
// Mask loops take __restrict pointers and a local count: they are byte loops the compiler can
// only vectorise when it knows the masks do not overlap.
bool merge(Exec& e, const uint8_t* __restrict saved, int loop) {
  const uint32_t n = e.units;
  uint8_t* __restrict cur = e.cur;
  const uint8_t* __restrict t = e.terminated;
  if (loop >= 0) {
    const uint8_t* __restrict b = e.m1(loop);
    const uint8_t* __restrict c = e.m2(loop);
    for (uint32_t u = 0; u < n; ++u) cur[u] = saved[u] & uint8_t(!t[u]) & uint8_t(!(b[u] | c[u]));
  } else {
    for (uint32_t u = 0; u < n; ++u) cur[u] = saved[u] & uint8_t(!t[u]);
  }
  return e.refresh();
}

uint32_t if_begin(Exec& e, const Instr& in, uint32_t pc) {
  const uint32_t n = e.units;
  const uint8_t* __restrict c = e.slot<uint8_t>(in.a);
  uint8_t* __restrict saved = e.saved(in.depth);
  uint8_t* __restrict other = e.m1(in.depth);
  uint8_t* __restrict cur = e.cur;
  for (uint32_t u = 0; u < n; ++u) {
    uint8_t was = cur[u], t = uint8_t(c[u] != 0);  // a bool byte loaded from memory may hold 2
    saved[u] = was;
    other[u] = was & uint8_t(!t);
    cur[u] = was & t;
  }
  return e.refresh() ? pc + 1 : in.target;
}

uint32_t break_instr(Exec& e, const Instr& in, uint32_t) {
  uint8_t* m = in.kind == OpKind::Break ? e.m1(in.loop) : in.kind == OpKind::Continue ? e.m2(in.loop) : e.terminated;
  for (uint32_t u = 0; u < e.units; ++u) {
    m[u] |= e.cur[u];
    e.cur[u] = 0;
  }
  e.all_active = e.units == 0;
  return in.target;
}

uint32_t sync_cube(Exec& e, const Instr& in, uint32_t pc) {
  for (uint32_t u = 0; u < e.units; ++u) {
    if (e.cur[u] != uint8_t(!e.terminated[u])) {
      fail(e, in, u, "sync.divergent",
           std::string("sync_cube() reached while unit ") + std::to_string(u) + " is " +
               (e.cur[u] ? "active" : "inactive") +
               " but not every live unit of the cube is; a barrier must be reached by all units that have not "
               "terminated (move it out of the divergent If/loop)");
    }
  }
  return pc + 1;
}

uint32_t sync_plane(Exec&, const Instr&, uint32_t pc) { return pc + 1; }

uint32_t condition_instr(Exec& e, const Instr& in, uint32_t pc) {
  const uint8_t* c = e.slot<uint8_t>(in.a);
  uint8_t* done = e.m1(in.depth);
  for (uint32_t u = 0; u < e.units; ++u) {
    uint8_t t = uint8_t(c[u] != 0);
    done[u] |= e.cur[u] & uint8_t(!t);
    e.cur[u] &= t;
  }
  return e.refresh() ? pc + 1 : in.target;
}

template <class I>
uint32_t for_test(Exec& e, const Instr& in, uint32_t pc) {
  const I* i = e.slot<I>(in.dst);
  const I* hi = e.slot<I>(in.b);
  uint8_t* saved = e.saved(in.depth);
  uint8_t* done = e.m1(in.depth);
  uint8_t* cont = e.m2(in.depth);
  for (uint32_t u = 0; u < e.units; ++u) {
    cont[u] = 0;
    uint8_t live = saved[u] & uint8_t(!done[u]) & uint8_t(!e.terminated[u]);
    uint8_t go = live & uint8_t(i[u] < hi[u]);
    done[u] |= live & uint8_t(!go);
    e.cur[u] = go;
  }
  return e.refresh() ? pc + 1 : in.target;
}

template <class I>
uint32_t for_next(Exec& e, const Instr& in, uint32_t) {
  I* i = e.slot<I>(in.dst);
  const I* step = e.slot<I>(in.c);
  const uint8_t* saved = e.saved(in.depth);
  const uint8_t* done = e.m1(in.depth);
  using U = std::make_unsigned_t<I>;
  for (uint32_t u = 0; u < e.units; ++u) {
    if (saved[u] && !done[u] && !e.terminated[u]) i[u] = static_cast<I>(static_cast<U>(i[u]) + static_cast<U>(step[u]));
  }
  return in.target;
}

std::mutex g_print_mutex;

// Formats one conversion of a debug.print format with one argument.
void format_one(std::string& out, const std::string& spec, char conv, ir::Scalar s, const unsigned char* p) {
  char buf[128];
  std::string f = spec;
  bool float_conv = conv == 'f' || conv == 'F' || conv == 'e' || conv == 'E' || conv == 'g' || conv == 'G' ||
                    conv == 'a' || conv == 'A';
  double d = 0;
  long long i = 0;
  unsigned long long u = 0;
  switch (s) {
    case ir::Scalar::Bool: u = *p; i = *p; d = *p; break;
    case ir::Scalar::I8: i = *reinterpret_cast<const int8_t*>(p); break;
    case ir::Scalar::I16: i = *reinterpret_cast<const int16_t*>(p); break;
    case ir::Scalar::I32: i = *reinterpret_cast<const int32_t*>(p); break;
    case ir::Scalar::I64: i = *reinterpret_cast<const int64_t*>(p); break;
    case ir::Scalar::U8: u = *p; break;
    case ir::Scalar::U16: u = *reinterpret_cast<const uint16_t*>(p); break;
    case ir::Scalar::U32: u = *reinterpret_cast<const uint32_t*>(p); break;
    case ir::Scalar::U64: u = *reinterpret_cast<const uint64_t*>(p); break;
    case ir::Scalar::F16: d = static_cast<float>(*reinterpret_cast<const f16*>(p)); break;
    case ir::Scalar::BF16: d = static_cast<float>(*reinterpret_cast<const bf16*>(p)); break;
    case ir::Scalar::F32: d = *reinterpret_cast<const float*>(p); break;
    case ir::Scalar::F64: d = *reinterpret_cast<const double*>(p); break;
  }
  bool is_float = ir::is_float(s);
  if (ir::is_signed_int(s)) u = static_cast<unsigned long long>(i), d = double(i);
  if (ir::is_unsigned_int(s)) i = static_cast<long long>(u), d = double(u);
  if (is_float) i = static_cast<long long>(d), u = static_cast<unsigned long long>(i);
  if (float_conv) {
    std::snprintf(buf, sizeof buf, (f + conv).c_str(), d);
  } else if (conv == 'c') {
    std::snprintf(buf, sizeof buf, (f + conv).c_str(), int(i));
  } else if (conv == 'd' || conv == 'i') {
    std::snprintf(buf, sizeof buf, (f + "ll" + conv).c_str(), i);
  } else {
    std::snprintf(buf, sizeof buf, (f + "ll" + conv).c_str(), u);
  }
  out += buf;
}

}  // namespace

uint32_t exec_if_else(Exec& e, const Instr& in, uint32_t pc) {
  std::memcpy(e.cur, e.m1(in.depth), e.units);
  return e.refresh() ? pc + 1 : in.target;
}

uint32_t exec_if_end(Exec& e, const Instr& in, uint32_t pc) {
  return merge(e, e.saved(in.depth), in.loop) ? pc + 1 : in.target2;
}

uint32_t exec_loop_begin(Exec& e, const Instr& in, uint32_t pc) {
  std::memcpy(e.saved(in.depth), e.cur, e.units);
  std::memset(e.m1(in.depth), 0, e.units);
  std::memset(e.m2(in.depth), 0, e.units);
  if (in.bytes) {  // a for loop: i = lo
    const unsigned char* lo = e.slot<unsigned char>(in.a);
    unsigned char* i = e.slot<unsigned char>(in.dst);
    std::memcpy(i, lo, size_t(in.bytes) * e.units);
  }
  return pc + 1;
}

uint32_t exec_while_head(Exec& e, const Instr& in, uint32_t pc) {
  const uint8_t* saved = e.saved(in.depth);
  const uint8_t* done = e.m1(in.depth);
  uint8_t* cont = e.m2(in.depth);
  for (uint32_t u = 0; u < e.units; ++u) {
    cont[u] = 0;
    e.cur[u] = saved[u] & uint8_t(!done[u]) & uint8_t(!e.terminated[u]);
  }
  return e.refresh() ? pc + 1 : in.target;
}

uint32_t exec_loop_next(Exec&, const Instr& in, uint32_t) { return in.target; }

uint32_t exec_loop_end(Exec& e, const Instr& in, uint32_t pc) {
  return merge(e, e.saved(in.depth), in.loop) ? pc + 1 : in.target2;
}

InstrFn pick_for_test(ir::Scalar s) {
  switch (s) {
    case ir::Scalar::I8: return &for_test<int8_t>;
    case ir::Scalar::I16: return &for_test<int16_t>;
    case ir::Scalar::I32: return &for_test<int32_t>;
    case ir::Scalar::I64: return &for_test<int64_t>;
    case ir::Scalar::U8: return &for_test<uint8_t>;
    case ir::Scalar::U16: return &for_test<uint16_t>;
    case ir::Scalar::U32: return &for_test<uint32_t>;
    default: return &for_test<uint64_t>;
  }
}

InstrFn pick_for_next(ir::Scalar s) {
  switch (s) {
    case ir::Scalar::I8: return &for_next<int8_t>;
    case ir::Scalar::I16: return &for_next<int16_t>;
    case ir::Scalar::I32: return &for_next<int32_t>;
    case ir::Scalar::I64: return &for_next<int64_t>;
    case ir::Scalar::U8: return &for_next<uint8_t>;
    case ir::Scalar::U16: return &for_next<uint16_t>;
    case ir::Scalar::U32: return &for_next<uint32_t>;
    default: return &for_next<uint64_t>;
  }
}

InstrFn pick_control(OpKind kind, ir::Scalar) {
  switch (kind) {
    case OpKind::If: return &if_begin;
    case OpKind::Break:
    case OpKind::Continue:
    case OpKind::Terminate: return &break_instr;
    case OpKind::SyncCube: return &sync_cube;
    case OpKind::SyncPlane: return &sync_plane;
    case OpKind::Condition: return &condition_instr;
    default: return nullptr;
  }
}

uint32_t exec_debug_print(Exec& e, const Instr& in, uint32_t pc) {
  const std::string& fmt = e.plan->formats[size_t(in.imm)];
  const auto& slots = e.plan->operand_lists[size_t(in.imm)];
  const auto& types = e.plan->operand_types[size_t(in.imm)];
  std::string out;
  for_active(e, [&](uint32_t u) {
    size_t arg = 0;
    for (size_t i = 0; i < fmt.size(); ++i) {
      if (fmt[i] != '%') {
        out += fmt[i];
        continue;
      }
      if (i + 1 < fmt.size() && fmt[i + 1] == '%') {
        out += '%';
        ++i;
        continue;
      }
      // %[flags][width][.precision][length]conversion; length modifiers are ours to choose.
      std::string spec = "%";
      size_t j = i + 1;
      while (j < fmt.size() && std::strchr("-+ #0123456789.", fmt[j])) spec += fmt[j++];
      while (j < fmt.size() && std::strchr("hlLqjzt", fmt[j])) ++j;
      if (j >= fmt.size()) break;
      char conv = fmt[j];
      i = j;
      if (arg >= slots.size()) {
        out += "<missing>";
        continue;
      }
      uint32_t bytes = uint32_t(ir::scalar_bytes(types[arg]));
      format_one(out, spec, conv, types[arg], e.slot<unsigned char>(slots[arg]) + size_t(u) * bytes);
      ++arg;
    }
  });
  std::lock_guard lock(g_print_mutex);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  return pc + 1;
}

}  // namespace kiln::cpu
