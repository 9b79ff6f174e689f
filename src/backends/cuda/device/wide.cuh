// ---- wide accesses: W consecutive elements of a global array as one vector (passes/vectorize) ----
#pragma once
#include "types.cuh"
// A handle may start at any whole element, so the W elements from p are aligned to their size
// only where the address says so. There they move in pieces of up to 16 bytes (one ld/st.v4 or
// narrower each, the widest the hardware has); elsewhere element by element. The test is on the
// address: a vectorised loop steps by whole vectors, so a unit's every iteration takes one path.
template <class T, int W>
struct kiln_wide {
  enum { bytes = int(sizeof(T)) * W, piece_bytes = bytes < 16 ? bytes : 16, pieces = bytes / piece_bytes };
  typedef kiln_vec<T, piece_bytes / int(sizeof(T))> piece;  // aligned to its size (types.cuh)
  static KILN_DEV bool aligned(const void* p) {
    return ((unsigned long long)p & (unsigned long long)(piece_bytes - 1)) == 0;
  }
};

template <class T, int W>
KILN_DEV kiln_vec<T, W> kiln_load_wide(const T* p) {
  typedef kiln_wide<T, W> w;
  kiln_vec<T, W> r;
  if (w::aligned(p)) {
    const typename w::piece* from = reinterpret_cast<const typename w::piece*>(p);
    typename w::piece* to = reinterpret_cast<typename w::piece*>(&r);
#pragma unroll
    for (int k = 0; k < w::pieces; ++k) to[k] = from[k];
  } else {
#pragma unroll
    for (int k = 0; k < W; ++k) r.v[k] = p[k];
  }
  return r;
}

template <class T, int W>
KILN_DEV void kiln_store_wide(T* p, const kiln_vec<T, W>& v) {
  typedef kiln_wide<T, W> w;
  if (w::aligned(p)) {
    const typename w::piece* from = reinterpret_cast<const typename w::piece*>(&v);
    typename w::piece* to = reinterpret_cast<typename w::piece*>(p);
#pragma unroll
    for (int k = 0; k < w::pieces; ++k) to[k] = from[k];
  } else {
#pragma unroll
    for (int k = 0; k < W; ++k) p[k] = v.v[k];
  }
}
