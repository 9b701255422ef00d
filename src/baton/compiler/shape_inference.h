// Type inference for every IR op: the single place that decides whether an
// op is well formed and what it produces.
//
// Program::Add calls it for each new instruction and the tracer surfaces its
// errors at trace time, so a bad shape is reported where the user wrote it.
// Stateless; safe to call from any thread.
#pragma once

#include <span>

#include "baton/compiler/op_attrs.h"
#include "baton/compiler/value_type.h"
#include "baton/core/status.h"

namespace baton::compiler {

// The type of the value an op with these attributes produces from operands
// of these types (the op kind is the attributes' variant index). Results
// live in device memory, except a parameter (its declared kind) and a
// transfer (its target kind).
//
// Errors: InvalidArgument naming the op and its operands and saying what to
// do, e.g. "add: operand shapes (2, 3) and (3,) differ; broadcast one of
// them first".
Result<ValueType> InferType(const OpAttrs& attrs,
                            std::span<const ValueType> operands);

// The call op's rule (call_inference.cc): a call without a body has one
// operand and its type; otherwise the operands must match the body's
// parameters (shape and dtype) and the result is the body's output
// `output_index`. Custom rules are checked against the body too.
Result<ValueType> InferCallType(const CallAttrs& attrs,
                                std::span<const ValueType> operands);

// The linalg op's rule (linalg_inference.cc): float32/float64 operands of
// rank >= 2, square where the kind needs it, a triangular solve's b
// matching a (dtype, batch dimensions, the solved dimension); the result as
// LinalgAttrs documents it.
Result<ValueType> InferLinalgType(const LinalgAttrs& attrs,
                                  std::span<const ValueType> operands);

// The control-flow rules (control_flow_inference.cc): each region's
// parameters and results must match the operands and the carries (shape and
// dtype) as op_attrs.h describes; errors name the region, the position and
// both types.
Result<ValueType> InferWhileType(const WhileAttrs& attrs,
                                 std::span<const ValueType> operands);
Result<ValueType> InferScanType(const ScanAttrs& attrs,
                                std::span<const ValueType> operands);
Result<ValueType> InferCaseType(const CaseAttrs& attrs,
                                std::span<const ValueType> operands);

}  // namespace baton::compiler
