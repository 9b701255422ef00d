// Tracer functions around the linalg op (LinalgAttrs, op_attrs.h, which
// documents each kind's operands and packed result): the raw decompositions
// and the triangular solve as the front ends and the derivative rules call
// them, and the two matrix helpers those rules are written with.
//
// Errors: like tracer.h, they throw baton::Error (InvalidArgument, naming
// the op: "cholesky: a must be square ...") for bad operands.
// Thread-safety: as any tracing, on the thread that owns the TraceContext.
#pragma once

#include "baton/compiler/tracer.h"

namespace baton::compiler {

// The op itself: `attrs` applied to its operands (a, or a and b).
Tracer linalg(const LinalgAttrs& attrs, const std::vector<Tracer>& operands);

// L (lower) or U (upper) of a = L L^T, from a's `lower` (upper) triangle;
// NaNs where a is not positive definite.
Tracer cholesky(const Tracer& a, bool lower = true);

// x with op(a) x = b (left_side) or x op(a) = b, op(a) = a^T if
// transpose_a; only a's `lower` (upper) triangle is read, and its diagonal
// not at all with unit_diagonal. a and b have equal batch dimensions.
Tracer triangular_solve(const Tracer& a, const Tracer& b, bool left_side,
                        bool lower, bool transpose_a, bool unit_diagonal);

// The packed decompositions ([..., n, n+1] for lu and eigh; flat for qr and
// svd), as LinalgAttrs lays them out.
Tracer lu_packed(const Tracer& a);
Tracer qr_packed(const Tracer& a, bool full_matrices);
Tracer eigh_packed(const Tracer& a, bool lower);
Tracer svd_packed(const Tracer& a, bool full_matrices);

// x with its last two dimensions swapped (rank >= 2).
Tracer matrix_transpose(const Tracer& x);

// x (rank >= 2) with the entries outside its `lower` (else upper) triangle
// of the last two dimensions set to zero, and the diagonal too when
// `zero_diagonal`.
Tracer triangle(const Tracer& x, bool lower, bool zero_diagonal);

}  // namespace baton::compiler
