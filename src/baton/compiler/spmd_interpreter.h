// The reference meaning of an SpmdProgram (spmd_partitioner.h): every
// device's blocks kept apart, each compute stage run on every device by the
// reference interpreter (reference_interpreter.h), each communication stage
// done by assembling blocks. What a runtime that runs partitioned programs
// on real devices must agree with, and what the partitioner's tests check
// against the unpartitioned program.
//
// An all-reduce combines a group's blocks in group order (the stage's axes
// major first: GroupMembers), so every device
// of a group ends with the same bytes. A loop stage runs its condition's and
// body's stages the same way, iteration by iteration, while the predicate
// (which every device must read alike) is true.
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <vector>

#include "baton/compiler/literal.h"
#include "baton/compiler/spmd_partitioner.h"
#include "baton/core/status.h"

namespace baton::compiler {

// Device `device`'s block of `global` laid out as `sharding`.
Literal BlockOf(const Literal& global, const Sharding& sharding,
                const DeviceMesh& mesh, int64_t device);

// Runs `program` with whole arguments `args` (one per parameter, each
// split as its parameter slot says) and returns the whole outputs (each
// assembled from the devices' blocks of its slot). InvalidArgument for
// arguments of the wrong count or type; Internal if the devices' copies of
// a replicated output disagree.
Result<std::vector<Literal>> InterpretSpmd(const SpmdProgram& program,
                                           const std::vector<Literal>& args);

}  // namespace baton::compiler
