// Matrices the linalg derivative tests (jvp/, vjp/) solve with.
#pragma once

#include <cstdint>

#include "baton/compiler/tracer.h"

namespace baton::compiler {

// a + 4 I: a well-conditioned triangle for random a in [-1, 1] (its last two
// dimensions square; batched over the leading ones).
inline Tracer Conditioned(const Tracer& a) {
  TraceContext& ctx = *a.context();
  const int64_t n = a.shape()[a.rank() - 1];
  const Shape s({n, n});
  return a + astype(eq(iota(ctx, DType::kInt32, s, 0),
                       iota(ctx, DType::kInt32, s, 1)),
                    a.dtype()) *
                 4.0;
}

}  // namespace baton::compiler
