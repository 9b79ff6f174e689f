// What the compile-fail files include, parsed once into a precompiled header that every case's
// compiler run is given with -include (tests/CMakeLists.txt): the cases then parse only their own
// lines, not 1.2 s of kiln's headers each. The files still include what they use themselves.
#include "kiln/kiln.h"
#include "kiln/tile.h"
