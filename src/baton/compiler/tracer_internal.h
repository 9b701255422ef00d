// Helpers shared by the tracer's source files (tracer.cc,
// tracer_array_ops.cc); not part of the API.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "baton/compiler/tracer.h"

namespace baton::compiler::tracer_internal {

// Throws InvalidArgumentError("<op>: <message>").
[[noreturn]] void Fail(std::string_view op, const std::string& message);

// The context every operand belongs to; throws, naming `op`, for an empty
// Tracer or operands from different traces.
TraceContext& CommonContext(std::string_view op,
                            std::initializer_list<const Tracer*> operands);
TraceContext& CommonContext(std::string_view op,
                            const std::vector<Tracer>& operands);

// numpy's broadcast of two shapes; throws naming `op`.
Shape BroadcastShapes(std::string_view op, const Shape& a, const Shape& b);

// x broadcast numpy-style to `shape` (x itself if it already has it);
// throws naming `op`.
Tracer BroadcastTo(std::string_view op, const Tracer& x, const Shape& shape);

// A rank-0 constant holding `value` converted to `dtype`; throws if an
// integer value does not fit an integer dtype.
Tracer ScalarConstant(TraceContext& ctx, WeakScalar value, DType dtype,
                      std::string_view op);

// `axis` in [-rank, rank) made non-negative; throws naming `op` otherwise.
int64_t NormalizeAxis(std::string_view op, int64_t axis, int rank);

// "[1, -1]"
std::string ListToString(const std::vector<int64_t>& values);

}  // namespace baton::compiler::tracer_internal
