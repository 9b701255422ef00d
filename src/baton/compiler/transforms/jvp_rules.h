// The per-op forward-mode rules behind transforms::Jvp (jvp.h), internal to
// the transformation: jvp.cc walks the program, tracks which values have
// tangents and handles calls; these functions emit one op's tangent.
//
// A tangent is a Tracer in the JVP program being built; an invalid Tracer
// (Tracer()) is a symbolic zero, for which nothing was emitted. Rules
// follow JAX's (jax/_src/lax/lax.py, slicing.py) and emit only ops that
// themselves have JVP, VJP and batching rules, so transformed programs can
// be transformed again (grad of jvp, jvp of jvp, vmap of jvp).
//
// Errors: rules throw baton::Error (the tracer's InvalidArgumentError, or an
// Error with kUnimplemented for an op without a rule); Jvp turns them back
// into a Status. Thread-safety: the functions only touch the TraceContext of
// their Tracers, which the calling thread owns.
#pragma once

#include <vector>

#include "baton/compiler/ir.h"
#include "baton/compiler/tracer.h"

namespace baton::compiler::transforms::jvp_rules {

// The tangent of `inst`'s result. `operands` are the instruction's operands
// in the JVP program, `result` its primal result there, and `tangents[i]`
// operand i's tangent (invalid: zero). The caller only asks when the result
// is floating point and at least one tangent is nonzero; the answer may
// still be a symbolic zero (an op whose derivative is zero). kParameter and
// kCall are the caller's (they are not local rules).
Tracer OpTangent(const Instruction& inst, const std::vector<Tracer>& operands,
                 const Tracer& result, const std::vector<Tracer>& tangents);

// Zeros of x's shape and dtype (materialized: a broadcast scalar).
Tracer ZerosLike(const Tracer& x);

// `tangent` itself, or ZerosLike(primal) for a symbolic zero.
Tracer Instantiate(const Tracer& tangent, const Tracer& primal);

// a + b where either may be a symbolic zero (invalid).
Tracer AddTangents(const Tracer& a, const Tracer& b);

// Throws the Unimplemented error for an op without a JVP rule.
[[noreturn]] void ThrowUnimplemented(const OpAttrs& attrs);

// Rule families (jvp_rules_elementwise.cc, jvp_rules_array.cc,
// jvp_rules_linalg.cc).
Tracer ElementwiseTangent(const Instruction& inst,
                          const std::vector<Tracer>& operands,
                          const Tracer& result,
                          const std::vector<Tracer>& tangents);
Tracer ArrayOpTangent(const Instruction& inst,
                      const std::vector<Tracer>& operands, const Tracer& result,
                      const std::vector<Tracer>& tangents);
Tracer LinalgTangent(const Instruction& inst,
                     const std::vector<Tracer>& operands, const Tracer& result,
                     const std::vector<Tracer>& tangents);

}  // namespace baton::compiler::transforms::jvp_rules
