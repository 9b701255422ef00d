// JVP rule of the linalg op (jvp_rules.h). Only the triangular solve has
// one here: with op(a) x = b, differentiating gives
//   op(a) dx = db - op(da) x        (left side)
//   dx op(a) = db - x op(da)        (right side),
// da restricted to the triangle the op reads (without the diagonal for
// unit_diagonal), so dx is one more triangular solve with the same a. The
// decompositions have no C++ rule: their derivatives are defined by the
// Python front end with custom_jvp (baton/lax_linalg.py), and reaching one
// here raises the usual "no forward-mode rule" error.
#include <vector>

#include "baton/compiler/linalg_ops.h"
#include "baton/compiler/transforms/jvp_rules.h"

namespace baton::compiler::transforms::jvp_rules {

Tracer LinalgTangent(const Instruction& inst,
                     const std::vector<Tracer>& operands, const Tracer& result,
                     const std::vector<Tracer>& tangents) {
  const auto& a = inst.attrs_as<LinalgAttrs>();
  if (a.kind != LinalgKind::kTriangularSolve) ThrowUnimplemented(inst.attrs);
  Tracer rhs = tangents[1];
  if (tangents[0].valid()) {
    Tracer da = triangle(tangents[0], a.lower, a.unit_diagonal);
    if (a.transpose_a) da = matrix_transpose(da);
    const Tracer term = a.left_side ? matmul(da, result) : matmul(result, da);
    rhs = rhs.valid() ? rhs - term : -term;
  }
  if (!rhs.valid()) return Tracer();
  return triangular_solve(operands[0], rhs, a.left_side, a.lower, a.transpose_a,
                          a.unit_diagonal);
}

}  // namespace baton::compiler::transforms::jvp_rules
