// linalg_ops.h: the linalg op's tracer functions.
#include <numeric>
#include <vector>

#include "baton/compiler/linalg_ops.h"
#include "baton/compiler/tracer_internal.h"

namespace baton::compiler {

using tracer_internal::CommonContext;

namespace {

LinalgAttrs Kind(LinalgKind kind) {
  LinalgAttrs a;
  a.kind = kind;
  return a;
}

}  // namespace

Tracer linalg(const LinalgAttrs& attrs, const std::vector<Tracer>& operands) {
  TraceContext& ctx = CommonContext(linalg_kind_name(attrs.kind), operands);
  return ctx.Emit(attrs, operands);
}

Tracer cholesky(const Tracer& a, bool lower) {
  LinalgAttrs attrs = Kind(LinalgKind::kCholesky);
  attrs.lower = lower;
  return linalg(attrs, {a});
}

Tracer triangular_solve(const Tracer& a, const Tracer& b, bool left_side,
                        bool lower, bool transpose_a, bool unit_diagonal) {
  LinalgAttrs attrs = Kind(LinalgKind::kTriangularSolve);
  attrs.left_side = left_side;
  attrs.lower = lower;
  attrs.transpose_a = transpose_a;
  attrs.unit_diagonal = unit_diagonal;
  return linalg(attrs, {a, b});
}

Tracer lu_packed(const Tracer& a) { return linalg(Kind(LinalgKind::kLu), {a}); }

Tracer qr_packed(const Tracer& a, bool full_matrices) {
  LinalgAttrs attrs = Kind(LinalgKind::kQr);
  attrs.full_matrices = full_matrices;
  return linalg(attrs, {a});
}

Tracer eigh_packed(const Tracer& a, bool lower) {
  LinalgAttrs attrs = Kind(LinalgKind::kEigh);
  attrs.lower = lower;
  return linalg(attrs, {a});
}

Tracer svd_packed(const Tracer& a, bool full_matrices) {
  LinalgAttrs attrs = Kind(LinalgKind::kSvd);
  attrs.full_matrices = full_matrices;
  return linalg(attrs, {a});
}

Tracer matrix_transpose(const Tracer& x) {
  const int r = x.rank();
  if (r < 2) {
    tracer_internal::Fail("matrix_transpose",
                          "needs rank >= 2, got rank " + std::to_string(r));
  }
  std::vector<int64_t> perm(static_cast<size_t>(r));
  std::iota(perm.begin(), perm.end(), int64_t{0});
  std::swap(perm[r - 1], perm[r - 2]);
  return transpose(x, perm);
}

Tracer triangle(const Tracer& x, bool lower, bool zero_diagonal) {
  TraceContext& ctx = *x.context();
  const int r = x.rank();
  const Shape mat({x.shape()[r - 2], x.shape()[r - 1]});
  const Tracer row = iota(ctx, DType::kInt32, mat, 0);
  const Tracer col = iota(ctx, DType::kInt32, mat, 1);
  Tracer keep = lower ? (zero_diagonal ? gt(row, col) : ge(row, col))
                      : (zero_diagonal ? lt(row, col) : le(row, col));
  return where(keep, x, 0);
}

}  // namespace baton::compiler
