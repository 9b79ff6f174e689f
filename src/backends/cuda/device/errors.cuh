// ---- the device error word (Client::device_error_word): a kernel's report of a failed check ----
#pragma once
#include "types.cuh"
// The first failed check since the host last looked takes the word: its site's code in word[0]
// (never 0), then seven numbers the site's message reads. A later one finds the word taken and
// leaves it; the host reads the word after the kernels ran, so plain stores after the claim do.
KILN_DEV void kiln_report_error(u32* word, u32 site, u32 a, u64 b, u64 c, u32 d, u32 e) {
  if (atomicCAS(word, 0u, site) != 0u) return;
  word[1] = a;
  word[2] = (u32)b;
  word[3] = (u32)(b >> 32);
  word[4] = (u32)c;
  word[5] = (u32)(c >> 32);
  word[6] = d;
  word[7] = e;
}
