// The tile layer: tile kernels recorded from C++ (seed 04). See docs/tile.md.
#pragma once

#include "kiln/tile/cells.h"
#include "kiln/tile/param.h"
#include "kiln/tile/program.h"
#include "kiln/tile/reference.h"
#include "kiln/tile/tile.h"
