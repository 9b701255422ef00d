// Whether a program computes each element of its outputs from the same
// element of its inputs only: then running it on every shard of sharded
// arguments (each shard on its own device) gives the shards of the result,
// with no communication. This is what jit of sharded arguments runs
// (DESIGN 5.6); anything else needs bt.shard_map.
//
// Shard-local: parameters, outputs and every value have the program's one
// full shape S or are rank 0, and each instruction is a parameter, a rank-0
// constant, an elementwise op (step_plan.h IsElementwise) of operands of
// its own shape, or a broadcast_in_dim of a rank-0 operand.
#pragma once

#include <optional>
#include <string>

#include "baton/compiler/ir.h"

namespace baton::compiler {

// Why `program` is not shard-local ("%4 = reduce(...): a reduction ..."),
// or nullopt when it is. Calls must have been inlined first.
std::optional<std::string> WhyNotShardLocal(const Program& program);

}  // namespace baton::compiler
