// baton._baton.lax._linalg: the binding of the IR's linalg op
// (compiler/linalg_ops.h; kinds, operands and packed results documented at
// LinalgAttrs, op_attrs.h). Private: baton/lax_linalg.py builds the public
// bt.lax.linalg functions (and their derivatives) on it.
#include <nanobind/stl/string.h>

#include <string>

#include "baton/compiler/linalg_ops.h"
#include "lax_internal.h"
#include "module.h"
#include "trace_frames.h"

namespace baton::python {
namespace {

LinalgKind ToLinalgKind(const std::string& name) {
  for (int k = 0; k < kNumLinalgKinds; ++k) {
    const auto kind = static_cast<LinalgKind>(k);
    if (name == linalg_kind_name(kind)) return kind;
  }
  ThrowValue("linalg: unknown kind '" + name +
             "' (cholesky, triangular_solve, lu, qr, eigh, svd or schur)");
}

}  // namespace
}  // namespace baton::python

void init_lax_linalg(nb::module_& m) {
  using namespace baton;
  using namespace baton::python;
  nb::module_ lax = nb::borrow<nb::module_>(m.attr("lax"));
  lax.def(
      "_linalg",
      [](const std::string& kind, nb::handle a, nb::handle b, bool lower,
         bool transpose_a, bool left_side, bool unit_diagonal,
         bool full_matrices) {
        compiler::LinalgAttrs attrs;
        attrs.kind = ToLinalgKind(kind);
        attrs.lower = lower;
        attrs.transpose_a = transpose_a;
        attrs.left_side = left_side;
        attrs.unit_diagonal = unit_diagonal;
        attrs.full_matrices = full_matrices;
        const char* op = "linalg";
        if (attrs.kind == LinalgKind::kTriangularSolve) {
          auto f = OpFrame(op, {a, b});
          return WrapTracer(f, compiler::linalg(attrs, {ToTracer(a, f, op),
                                                        ToTracer(b, f, op)}));
        }
        auto f = OpFrame(op, {a});
        return WrapTracer(f, compiler::linalg(attrs, {ToTracer(a, f, op)}));
      },
      nb::arg("kind"), nb::arg("a"), nb::arg("b").none() = nb::none(),
      nb::arg("lower") = true, nb::arg("transpose_a") = false,
      nb::arg("left_side") = true, nb::arg("unit_diagonal") = false,
      nb::arg("full_matrices") = false,
      "The IR's linalg op (op_attrs.h LinalgAttrs): kind 'cholesky', "
      "'triangular_solve' (a, b), 'lu', 'qr', 'eigh', 'svd' or 'schur', with its "
      "packed result. Use bt.lax.linalg instead.");
}
