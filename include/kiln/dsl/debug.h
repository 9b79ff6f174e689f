// debug_print: printf from a kernel. Each active unit prints; the CPU backend prints in unit order.
#pragma once

#include <string>

#include "kiln/dsl/expr.h"

namespace kiln {

// `format` uses printf conversions (%d %u %f %g %x %lld ...), one per argument; arguments are
// scalar proxies.
template <class... Args>
void debug_print(const std::string& format, const Args&... args) {
  static_assert((Proxy<Args> && ...), "debug_print takes proxy arguments");
  if constexpr (sizeof...(Args) == 0) {
    dsl::Tracer::current().debug_print(format, {});
  } else {
    dsl::ValueRef refs[] = {read_ref(args)...};
    dsl::Tracer::current().debug_print(format, refs);
  }
}

}  // namespace kiln
