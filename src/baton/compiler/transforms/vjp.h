// Reverse-mode differentiation of a Program (bt.grad, bt.vjp, bt.jacrev),
// split into a forward and a backward program so the memory the backward
// pass needs is explicit: the residuals.
//
//   forward:  (params...) -> (outputs..., residuals...)
//   backward: (residuals..., one cotangent per output)
//             -> (one cotangent per parameter with wrt[i], in order)
//
// Calling forward then backward inside one trace (bt.grad under bt.jit)
// gives buffer assignment the whole picture: each residual is freed after
// its last use in the backward pass, and cotangent contributions to one
// value are summed as they arrive (ct += contribution), so in place.
//
// The backward program visits the forward's instructions in reverse order
// and emits, for each one whose output has a nonzero cotangent, the
// contributions to its operands' cotangents (symbolic zeros skip whole
// regions; a parameter whose cotangent stays zero gets zeros of its type).
// Only floating-point parameters may be in `wrt` (InvalidArgument
// otherwise); cotangents of integer and bool outputs are ignored.
//
// Residuals are the forward values the backward rules read: parameters
// (returned by the forward program as they are), intermediate values, and
// for checkpointed calls only what the call's policy saves. Residuals are
// de-duplicated (a value saved once however many rules read it).
//
// Calls (op_attrs.h): kStopGradient stops cotangents; kName is the
// identity; kCheckpoint saves the call's operands (and what its policy
// allows: dot_general results, named values, or everything), and the
// backward program recomputes the rest of the body from them behind an
// optimization barrier (a same-kind transfer, which common-subexpression
// elimination cannot merge with the forward pass); offload policies
// transfer the saved values to policy.offload_dst in the forward program and
// back to policy.offload_src in the backward program. kCustomVjp runs the
// user's forward rule (its residuals become residuals) and inlines the
// backward rule; kCustomJvp transposes the user's JVP rule (the VJP of the
// rule with respect to its tangents, which it is linear in).
//
// Errors: Unimplemented naming the op for an op without a VJP rule (never a
// wrong answer). Thread-safety: a pure function.
#pragma once

#include <string>
#include <vector>

#include "baton/compiler/ir.h"

namespace baton::compiler::transforms {

// One value the forward program keeps for the backward program.
struct Residual {
  ValueType type;
  // What it is, for bt.saved_residuals: "argument 0", or the op that
  // computed it ("output of dot_general", "output of tanh"), with the
  // checkpoint_name when it has one ("named 'hidden'").
  std::string what;
};

struct VjpPrograms {
  Program forward;
  Program backward;
  std::vector<Residual> residuals;  // forward's outputs after the primal ones
};

Result<VjpPrograms> Vjp(const Program& program, const std::vector<bool>& wrt);

}  // namespace baton::compiler::transforms
