// kiln: write GPU kernels as C++ functions over proxy values; run them on CUDA GPUs and on any CPU.
#pragma once

#include "kiln/dsl.h"
#include "kiln/error.h"
#include "kiln/half.h"
#include "kiln/runtime.h"
