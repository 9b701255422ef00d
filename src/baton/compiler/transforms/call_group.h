// Call groups: the n call instructions that together call one body with n
// outputs (op_attrs.h, CallAttrs). Transformations handle a group at once,
// as one op with n results.
//
// Thread-safety: pure functions of a finished Program.
#pragma once

#include <vector>

#include "baton/compiler/ir.h"

namespace baton::compiler::transforms {

// The members of the group that instruction `id` (a call) belongs to, in
// output_index order, or an empty list when `id` is not a call. Members are
// the adjacent call instructions with the same kind, body, rules and
// operands; a group is found from any of its members.
std::vector<ValueId> CallGroupOf(const Program& program, ValueId id);

// True when `id` is the first member of its group (output_index 0).
bool IsCallGroupLeader(const Program& program, ValueId id);

// Emits a call group into `dst`: one call instruction per output of
// attrs.body (attrs.output_index is ignored), all with `operands`; returns
// their values in output order. Errors: the inference error.
Result<std::vector<ValueId>> AddCallGroup(Program& dst, CallAttrs attrs,
                                          const std::vector<ValueId>& operands);

}  // namespace baton::compiler::transforms
