// Pieces of kernel text that several emitters share (internal to codegen):
// a fused elementwise chain computed at one element (emit_elementwise.cc
// emits fused steps with it, emit_reduce.cc the producer of a fused
// reduction), and the offset of a strided walk over some dimensions of a
// row-major array (reductions, dot operands, transposes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "baton/backend/cuda/codegen/emit_context.h"
#include "baton/compiler/step_plan.h"
#include "baton/core/status.h"

namespace baton::cuda::codegen {

// Appends to `k`'s body (each line prefixed by `indent`) the statements
// that compute every member of `chain` -- a kFusedElementwise step, a kOp
// step of one elementwise op or table gather, or ProducerOf a
// kFusedReduce step -- at element `index` of its result (`index` names a
// idx that stays unchanged; it is read several times). Each member is
// a const local of its storage type, computed as the CPU backend computes
// it: converted to the compute type for its op and back after it, so
// float16/bfloat16 round after every member as the CPU's tiles do.
// Returns the name of the local holding chain.result; NotOnCuda for a
// member that is not elementwise, a regular broadcast or a table gather.
Result<std::string> EmitChainAt(EmitContext& ctx, EmitContext::Kernel& k,
                                const compiler::Step& chain,
                                const std::string& index,
                                const std::string& indent);

// One dimension of a strided walk: `size` positions `stride` elements
// apart.
struct StridedDim {
  int64_t size = 1;
  int64_t stride = 0;
};

// The expression (idx) of the element offset that position `linear`
// (a C++ expression, read several times) of the row-major walk over `dims`
// (outermost first) reaches: sum of coordinate * stride. "0" when `dims`
// is empty. Size-1 dimensions may be passed; they add nothing.
std::string StridedOffset(const std::vector<StridedDim>& dims,
                          const std::string& linear);

}  // namespace baton::cuda::codegen
