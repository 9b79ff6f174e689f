// The plain C++ loops kiln's CPU backend is measured against, compiled at -O2 (see CMakeLists).
#include "plain_loops.h"

void plain_saxpy(float a, const float* x, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
}

float plain_sum(const float* x, size_t n) {
  float s = 0;
  for (size_t i = 0; i < n; ++i) s += x[i];
  return s;
}
