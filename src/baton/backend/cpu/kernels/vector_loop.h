// VectorLoop: the loop shape that GCC vectorizes at -O2 as well as -O3.
//
// At -O2 GCC 12+ uses the "very cheap" vectorizer cost model, which refuses a
// loop with an unknown trip count (it would need a scalar epilogue). Running
// the body in blocks of a fixed 16 iterations gives it a loop it accepts at
// any level, and the ivdep pragmas tell it that the only aliasing is the exact
// out == in kind elementwise kernels allow, so it needs no runtime alias
// checks (and never falls back to scalar code for in-place calls). The
// unroll pragma keeps -O3 from unrolling the block before the vectorizer
// sees it; otherwise it vectorizes across blocks with shuffles, which made
// select-style bodies (float max, NaN checks) 2-3x slower than at -O2.
#pragma once

#include <cstdint>

namespace baton::cpu {

// Calls body(i) for i in [lo, hi). body must touch only index i of each
// array (elementwise): iterations are reordered and vectorized.
template <typename F>
inline void VectorLoop(int64_t lo, int64_t hi, F&& body) {
  int64_t i = lo;
#pragma GCC ivdep
  for (; i + 16 <= hi; i += 16) {
#pragma GCC ivdep
#pragma GCC unroll 1
    for (int j = 0; j < 16; ++j) body(i + j);
  }
#pragma GCC ivdep
  for (; i < hi; ++i) body(i);
}

}  // namespace baton::cpu
