// The runtime: devices, clients, handles, launch.
#pragma once

#include "kiln/runtime/client.h"
#include "kiln/runtime/device.h"
#include "kiln/runtime/handle.h"
#include "kiln/runtime/launch.h"
