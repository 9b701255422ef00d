// Reference interpreter: the linalg op (LinalgAttrs). Decompositions are
// LAPACK's, not re-derived here: the interpreter runs the same per-matrix
// routine as the CPU kernel (core/linalg_lapack.h), one batch member after
// another, so the two agree (up to OpenBLAS's own threading).
#include "baton/compiler/interpreter_ops.h"
#include "baton/core/linalg_lapack.h"

namespace baton::compiler::interpreter {

Literal EvalLinalg(const Instruction& inst, const Operands& in) {
  const auto& a = inst.attrs_as<LinalgAttrs>();
  const LinalgOptions& o = a;
  Literal out = NewResult(inst);
  const Literal& x = *in[0];
  const Literal* b = in.size() > 1 ? in[1] : nullptr;
  const LinalgGeometry g =
      LinalgGeometryOf(o, x.shape(), b ? b->shape() : Shape{});
  LinalgBatches(o, x.dtype(), g, x.untyped_data(),
                b ? b->untyped_data() : nullptr, out.untyped_mutable_data(), 0,
                g.batch);
  return out;
}

}  // namespace baton::compiler::interpreter
