// Plain C++ loops over the same data as kiln's CPU benchmarks.
#pragma once

#include <cstddef>

void plain_saxpy(float a, const float* x, float* y, size_t n);
float plain_sum(const float* x, size_t n);
