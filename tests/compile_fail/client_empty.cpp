// Must not compile: Client::empty<T>(n) counts elements of T and empty_bytes(n) counts bytes, so an
// untyped empty(n), which could mean either, does not exist. The control allocates both ways.
#include "kiln/kiln.h"

using namespace kiln;

int main() {
  Client c = Device::cpu().client();
#if defined(KILN_CASE_untyped_count)
  Handle h = c.empty(16);  // error-here: untyped_count
#else
  Handle h = c.empty<float>(16);   // 64 bytes
  Handle raw = c.empty_bytes(16);  // 16 bytes
  (void)raw;
#endif
  (void)h;
}
