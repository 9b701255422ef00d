// Forward-mode differentiation of a Program (bt.jvp, bt.jacfwd).
//
// The result computes the program's outputs and their tangents (directional
// derivatives) in one program:
//
//   Jvp(f, has_tangent): (params..., tangents of the params with
//                         has_tangent[i], in order)
//                        -> (outputs..., one tangent per output)
//
// A tangent has its primal's shape and dtype. Only floating-point values
// carry tangents: has_tangent[i] on an integer or bool parameter is an
// InvalidArgument; integer and bool outputs (and outputs that do not depend
// on any tangent) get zero tangents of their own dtype. Zero tangents are
// tracked symbolically while transforming, so independent parts of the
// program cost nothing.
//
// Calls (op_attrs.h): kStopGradient gives a zero tangent; kName and
// kCheckpoint pass tangents through their body; kCustomJvp inlines the
// user's rule (zeros for symbolically-zero tangents); kCustomVjp is an
// InvalidArgument ("custom_vjp functions cannot be differentiated in
// forward mode; use custom_jvp"), as in JAX.
//
// Errors: Unimplemented naming the op for an op without a JVP rule (never a
// wrong answer). Thread-safety: a pure function.
#pragma once

#include <vector>

#include "baton/compiler/ir.h"

namespace baton::compiler::transforms {

Result<Program> Jvp(const Program& program,
                    const std::vector<bool>& has_tangent);

}  // namespace baton::compiler::transforms
