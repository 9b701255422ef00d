// Cotangent rule (vjp_internal.h) of the linalg op's triangular solve.
// With x = op(a)^-1 b (left side; op(a) = a^T if transpose_a):
//   ct_b = op(a)^-T ct            (a solve with the other op),
//   ct_op(a) = -ct_b x^T,
// and for the right side (x = b op(a)^-1) ct_b = ct op(a)^-T and
// ct_op(a) = -x^T ct_b; ct_a is ct_op(a), transposed back if transpose_a,
// restricted to the triangle the solve reads (no diagonal for
// unit_diagonal: it is never read). The decompositions have no rule here:
// their derivatives are custom_jvp functions of the Python front end.
#include "baton/compiler/linalg_ops.h"
#include "baton/compiler/transforms/vjp_internal.h"

namespace baton::compiler::transforms::vjp_internal {

void VjpBuilder::ApplyLinalgRule(int n, const Tracer& ct) {
  const Node& nd = nodes_[n];
  const auto& a = std::get<LinalgAttrs>(nd.attrs);
  if (a.kind != LinalgKind::kTriangularSolve) NoRule(nd.attrs);
  const int a_node = nd.operands[0], b_node = nd.operands[1];
  const bool a_active = nodes_[a_node].active;
  if (!a_active && !nodes_[b_node].active) return;
  const Tracer ct_b = triangular_solve(Get(a_node), ct, a.left_side, a.lower,
                                       !a.transpose_a, a.unit_diagonal);
  AddCotangent(b_node, ct_b);
  if (!a_active) return;
  const Tracer x = Get(n);
  Tracer ct_op = a.left_side ? -matmul(ct_b, matrix_transpose(x))
                             : -matmul(matrix_transpose(x), ct_b);
  if (a.transpose_a) ct_op = matrix_transpose(ct_op);
  AddCotangent(a_node, triangle(ct_op, a.lower, a.unit_diagonal));
}

}  // namespace baton::compiler::transforms::vjp_internal
