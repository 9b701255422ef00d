// Unrolling a scan: its body inlined once per step, as straight-line code.
//
// A scan (op_attrs.h ScanAttrs) of length L with carries c, stacked inputs
// xs and invariants v becomes, for each step i (L-1 down to 0 when
// reversed):
//   x_i = reshape(slice(xs, i, i + 1))     -- xs without its leading dim
//   (c, y_i) = body(c, x_i, v)             -- inlined (inline_program.h)
// and the stacked outputs ys = concatenate(reshape(y_0), ..., reshape(y_L-1))
// along a new leading dimension, in index order. The values are those of the
// scan: the same body ops on the same operands, in the same order.
//
// What it is for: the SPMD partitioner (spmd_partitioner.h) runs a scan on
// each device's blocks only when its body needs no communication; a scan
// over a model's layers whose weights are split (tensor parallelism) needs
// an all-reduce or all-gather in every step, and run whole it would gather
// every layer's weights on every device. Unrolled, each step's collective
// is placed between stages like any other and the weights stay split.
//
// A scan too long to unroll becomes a while loop instead (ScansAsWhileLoops):
//   carries (i = 0, c, ys = zeros [L, ...]), read as they are (xs, v);
//   while i < L: t = i (L-1-i reversed); x_t = reshape(dynamic_slice(xs, t));
//     (c, y_t) = body(c, x_t, v); ys = dynamic_update_slice(ys, y_t, t); i += 1
// -- the form the partitioner runs as a loop stage, each iteration's
// collectives inside the loop, the split operands still split.
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <vector>

#include "baton/compiler/ir.h"
#include "baton/core/status.h"

namespace baton::compiler {

// `program` with the scans that `scans` names (any member of each group;
// whole groups of the top level, length at least 1) unrolled; every other
// instruction copied as it is, outputs and parameters unchanged. Errors:
// InvalidArgument for a value that is not such a scan.
Result<Program> UnrollScans(const Program& program,
                            const std::vector<ValueId>& scans);

// `program` with the scans that `scans` names (as UnrollScans takes them)
// rewritten as while loops over a step counter, with the same values.
// Errors as UnrollScans's.
Result<Program> ScansAsWhileLoops(const Program& program,
                                  const std::vector<ValueId>& scans);

// The instructions UnrollScans adds for the scan group of `id`: its length
// times its body's instructions (what a caller weighs before unrolling).
int64_t UnrolledSize(const Program& program, ValueId id);

}  // namespace baton::compiler
