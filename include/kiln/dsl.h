// The kernel language: proxies, control flow, builtins, math, memory, plane ops, define().
#pragma once

#include "kiln/dsl/barrier.h"
#include "kiln/dsl/builtins.h"
#include "kiln/dsl/control.h"
#include "kiln/dsl/debug.h"
#include "kiln/dsl/expr.h"
#include "kiln/dsl/kernel.h"
#include "kiln/dsl/math.h"
#include "kiln/dsl/memory.h"
#include "kiln/dsl/params.h"
#include "kiln/dsl/plane.h"
#include "kiln/dsl/trace.h"
#include "kiln/dsl/var.h"
#include "kiln/dsl/wgmma.h"
#include "kiln/error.h"
