// Vmap of the linalg op against the per-example oracle: every kind, the
// vmapped dimension anywhere (it moves to the front), and a triangular
// solve with either operand unbatched (broadcast along the batch).
#include <gtest/gtest.h>

#include "batching/batching_test_util.h"
#include "baton/compiler/linalg_ops.h"

namespace baton::compiler::batching_test {
namespace {

using V = std::vector<Tracer>;
using P = std::vector<Param>;
constexpr DType F32 = DType::kFloat32;
constexpr DType F64 = DType::kFloat64;

// a a^T + 20 I: symmetric positive definite for entries in [-2, 2].
Tracer Spd(const Tracer& a) {
  TraceContext& ctx = *a.context();
  const int64_t n = a.shape()[a.rank() - 1];
  const Shape s({n, n});
  const Tracer eye =
      astype(eq(iota(ctx, DType::kInt32, s, 0), iota(ctx, DType::kInt32, s, 1)),
             a.dtype()) *
      20.0;
  return matmul(a, matrix_transpose(a)) + eye;
}

TEST(BatchingLinalgTest, Decompositions) {
  P params{{T(F64, {3, 3}), -2, 2}, {T(F64, {2, 4, 3}), -2, 2}};
  Program f = Trace(params, [](TraceContext&, const V& a) {
    return V{cholesky(Spd(a[0])),     cholesky(Spd(a[0]), false),
             lu_packed(Spd(a[0])),    eigh_packed(Spd(a[0]), true),
             qr_packed(a[1], false),  qr_packed(a[1], true),
             svd_packed(a[1], false), svd_packed(a[1], true)};
  });
  ExpectVmapMatchesEverywhere(f, params);
}

TEST(BatchingLinalgTest, TriangularSolveWithEitherOperandUnbatched) {
  P params{{T(F32, {2, 3, 3}), -2, 2},
           {T(F32, {2, 3, 4}), -2, 2},
           {T(F32, {2, 4, 3}), -2, 2}};
  Program f = Trace(params, [](TraceContext&, const V& a) {
    const Tracer m = Spd(a[0]);
    return V{triangular_solve(m, a[1], true, true, false, false),
             triangular_solve(m, a[2], false, false, true, true),
             triangular_solve(cholesky(m), a[1], true, true, true, false)};
  });
  ExpectVmapMatchesEverywhere(f, params);
}

}  // namespace
}  // namespace baton::compiler::batching_test
