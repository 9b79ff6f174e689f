// debug.print: planning and the executor, printf from each active unit in unit order. The output
// of one instruction is formatted first and written under a lock, so cubes on other threads do
// not interleave within it. check.trips: the launch stops with loop.zero_trips at the first active
// unit whose at_least_once loop would run zero times (its buffers are restored, decision 005).
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "backends/cpu/lanes.h"
#include "backends/cpu/planner.h"

namespace kiln::cpu {

namespace {

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
  ir::visit_scalar(s, [&]<class T>() {
    T v;
    std::memcpy(&v, p, sizeof v);
    if constexpr (std::is_same_v<T, bool>) {
      u = v, i = v, d = v;
    } else if constexpr (ir::is_short_float_type<T>) {
      d = static_cast<float>(v);
    } else if constexpr (std::is_floating_point_v<T>) {
      d = v;
    } else if constexpr (std::is_signed_v<T>) {
      i = v;
    } else {
      u = v;
    }
  });
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

uint32_t print_instr(Exec& e, const Instr& in, uint32_t pc) {
  const PrintArgs& x = e.plan->prints[in.as<Print>().index];
  const std::string& fmt = x.format;
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
      if (arg >= x.values.size()) {
        out += "<missing>";
        continue;
      }
      const uint32_t bytes = uint32_t(ir::scalar_bytes(x.types[arg]));
      format_one(out, spec, conv, x.types[arg], unit_bytes(e, x.values[arg], u, bytes));
      ++arg;
    }
  });
  std::lock_guard lock(g_print_mutex);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  return pc + 1;
}

uint32_t check_trips_instr(Exec& e, const Instr& in, uint32_t pc) {
  const CheckTrips& x = in.as<CheckTrips>();
  const bool signed_int = ir::is_signed_int(x.type);
  for_active(e, [&](uint32_t u) {
    // read_index sign-extends a signed value to 64 bits: compared as int64, it is the value itself.
    const uint64_t lo = read_index(e, x.lo, x.type, u), hi = read_index(e, x.hi, x.type, u);
    if (signed_int ? int64_t(lo) < int64_t(hi) : lo < hi) return;
    auto text = [&](uint64_t v) { return signed_int ? std::to_string(int64_t(v)) : std::to_string(v); };
    fail(e, in, u, "loop.zero_trips",
         "the at_least_once loop #" + std::to_string(x.loop) + " of the kernel starts with lo = " + text(lo) +
             " and hi = " + text(hi) +
             ", which give it zero trips; at_least_once promises lo < hi (drop the promise "
             "where the range may be empty)");
  });
  return pc + 1;
}

}  // namespace

bool plan_debug(Planner& p, const ir::Op& op) {
  if (op.kind == ir::OpKind::CheckTrips) {
    p.emit(op, &check_trips_instr,
           CheckTrips{p.operand(op, ir::ops::Bounds::lower_bound), p.operand(op, ir::ops::Bounds::upper_bound),
                      p.operand_type(op, ir::ops::Bounds::lower_bound).scalar, uint32_t(op.get<ir::AttrKey::Loop>())});
    return true;
  }
  if (op.kind != ir::OpKind::DebugPrint) return false;
  PrintArgs x;
  x.format = std::string(op.get<ir::AttrKey::Format>());
  for (ir::Value v : op.operands_from(ir::ops::Print::values)) {
    x.values.push_back(p.ref(v));
    x.types.push_back(p.type_of(v).scalar);
  }
  p.plan().prints.push_back(std::move(x));
  p.emit(op, &print_instr, Print{uint32_t(p.plan().prints.size() - 1)});
  return true;
}

}  // namespace kiln::cpu
