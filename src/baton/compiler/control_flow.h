// Control-flow ops (op_attrs.h WhileAttrs, ScanAttrs, CaseAttrs): what the
// passes, the planner and the executors ask of them, in one place.
//
// A control-flow op with n results is a "region group": n adjacent
// instructions with equal attributes except output_index and equal
// operands. Passes that copy or reorder instructions keep a group together
// and whole; the executor runs the group once, at its first member.
//
// Thread-safety: pure functions of finished Programs.
#pragma once

#include <vector>

#include "baton/compiler/ir.h"

namespace baton::compiler {

// Whether `kind` is kWhile, kScan or kCase.
bool IsControlFlow(OpKind kind);

// output_index of a control-flow op's attributes (0 for any other op).
int ControlFlowOutputIndex(const OpAttrs& attrs);

// The number of results of the group these attributes belong to.
int ControlFlowNumResults(const OpAttrs& attrs);

// The nested programs of a control-flow op (cond and body; the body; the
// branches), empty for any other op.
std::vector<const Program*> Regions(const OpAttrs& attrs);

// The members of the region group of instruction `id`, in output order
// ({id} when `id` is not control flow). A group that is not laid out whole
// is a program error the verifier reports; here it is {id}.
std::vector<ValueId> RegionGroupOf(const Program& program, ValueId id);

// Emits a whole region group into `dst` (attrs' output_index is ignored)
// and returns its values in output order. Errors: the inference error (or
// an operand that is not a value of `dst`); a refused group adds nothing.
Result<std::vector<ValueId>> AddRegionGroup(Program& dst, OpAttrs attrs,
                                            const std::vector<ValueId>& operands);

// The attributes with output_index set to `i`.
OpAttrs WithOutputIndex(OpAttrs attrs, int i);

// Trip count of a scan; of a while loop, -1 (not known before it runs).
int64_t StaticTripCount(const OpAttrs& attrs);

}  // namespace baton::compiler
