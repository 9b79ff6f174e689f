// What the examples share: --device parsing and printing lists of floats the way the seeds show
// them ([1.0, 3.0, -1.5]).
#pragma once

#include <charconv>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kiln/kiln.h"

namespace example {

// `--device D` (or KILN_DEVICE, or the default device).
inline kiln::Device device_from_args(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--device") == 0) return kiln::Device::parse(argv[i + 1]);
  }
  return kiln::Device::default_device();
}

inline std::string format_float(float v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, r.ptr);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

inline std::string format_list(const std::vector<float>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + format_float(v[i]);
  return s + "]";
}

}  // namespace example
