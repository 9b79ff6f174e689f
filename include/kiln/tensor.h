// kiln's tensor library (seed 03): tensors over handles, in place by ownership, views, and ops
// that are kiln kernels.
#pragma once

#include "kiln/tensor/fusion.h"
#include "kiln/tensor/indexing.h"
#include "kiln/tensor/matmul.h"
#include "kiln/tensor/ops.h"
#include "kiln/tensor/random.h"
#include "kiln/tensor/reduce.h"
#include "kiln/tensor/rows.h"
#include "kiln/tensor/tensor.h"
