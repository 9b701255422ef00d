// Internal to the transformations (jvp.h, vjp.h, batching.h): their rules
// for the control-flow ops (op_attrs.h WhileAttrs, ScanAttrs, CaseAttrs),
// one region group (control_flow.h) at a time. The drivers (jvp.cc,
// vjp.cc, batching.cc) only dispatch here; the rules live in
// control_flow_jvp.cc, control_flow_vjp.cc (VjpBuilder members, declared in
// vjp_internal.h) and control_flow_batching.cc.
//
// Every rule transforms the region programs themselves with the public
// transformation (Jvp, Vjp, Vmap, recursively, so nested control flow works)
// and emits a new control-flow group; nothing is unrolled.
//
// Errors: the JVP rules throw baton::Error, the batching rules
// BatchingError, as the drivers expect. Thread-safety: pure functions of
// finished Programs; they write only the program being built, which the
// calling thread owns.
#pragma once

#include <utility>
#include <vector>

#include "baton/compiler/ir.h"
#include "baton/compiler/tracer.h"
#include "baton/compiler/transforms/batching_rules.h"
#include "baton/core/error.h"

namespace baton::compiler::transforms::control_flow {

// Which outputs of `program` may depend on a parameter flagged in `params`
// (one flag per parameter). `differentiable`: only through floating-point
// values and ops whose derivative can be nonzero (what can carry a tangent
// or a cotangent); otherwise any data dependence (what becomes batched).
// Conservative (nested calls and control flow depend on all their
// operands), so a flagged output may still turn out to be zero.
std::vector<bool> DependentOutputs(const Program& program,
                                   const std::vector<bool>& params,
                                   bool differentiable);

// The loop fixpoint: `params` flags every parameter of a while or scan
// body (carries first); a carry becomes flagged when the body's output for
// it depends on a flagged parameter, until nothing changes. Returns the
// final flags of all parameters (only carries change) and sets `outputs`
// to DependentOutputs of the body under them.
std::vector<bool> LoopFixpoint(const Program& body, int num_carries,
                               std::vector<bool> params, bool differentiable,
                               std::vector<bool>* outputs);

// Emits a whole region group into ctx (attrs' output_index is ignored) and
// returns its results in output order.
std::vector<Tracer> EmitRegionGroup(TraceContext& ctx, const OpAttrs& attrs,
                                    const std::vector<Tracer>& operands);

// A program with parameters `param_types` that runs `inner` with inner
// parameter k bound to new parameter arg_of[k] and returns inner's outputs
// `outputs` (indices into inner.outputs()), in that order: how the rules
// reorder a transformed region's parameters and results into the layout
// the control-flow op wants.
Program Rewire(const Program& inner, const std::vector<ValueType>& param_types,
               const std::vector<int>& arg_of, const std::vector<int>& outputs);

// The value of a nested transformation, or its error thrown as baton::Error.
template <typename T>
T OrThrow(Result<T> r) {
  if (!r.ok()) throw Error(r.status());
  return std::move(r).value();
}

// JVP of one region group: `attrs` its op (any output_index), `operands`
// and `tangents` (invalid: a symbolic zero) its operands in ctx. Emits the
// group (with tangent carries or a differentiated region where needed) and
// returns one primal and one tangent (invalid: zero) per result.
void JvpRegionGroup(TraceContext& ctx, const OpAttrs& attrs,
                    const std::vector<Tracer>& operands,
                    const std::vector<Tracer>& tangents,
                    std::vector<Tracer>* primals,
                    std::vector<Tracer>* result_tangents);

// Batching of one region group with at least one batched operand: returns
// the batched form of each result, in output order.
std::vector<batching::BatchedValue> BatchRegionGroup(
    batching::BatchEmitter& e, const OpAttrs& attrs,
    const std::vector<batching::BatchedValue>& operands);

}  // namespace baton::compiler::transforms::control_flow
