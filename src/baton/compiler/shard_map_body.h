// shard_map's body as one SPMD program for every device of a mesh (issue
// 37): what baton/_shard_map_compile.py traces a body into, cut into the
// stages jit/spmd_executable.h runs.
//
// The trace is one device's body on its blocks, in which each collective's
// result is a parameter standing in for it and the value it was given an
// output. PartitionShardMapBody gives each instruction a level -- how many
// collectives must come before it -- and makes one compute stage per
// level, each followed by the collectives whose operands that level
// computes: psum/pmean/pmax/pmin as all-reduce stages, all_gather,
// psum_scatter, all_to_all, ppermute and pbroadcast as collective stages
// (SpmdCollective), whose per-device programs CollectiveProgram makes. The
// slots hold each device's own values: their global type is one device's
// block and their layout replicated.
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <optional>
#include <vector>

#include "baton/compiler/ir.h"
#include "baton/compiler/spmd_partitioner.h"
#include "baton/core/status.h"

namespace baton::compiler {

// One collective of a traced shard_map body.
struct ShardMapCollective {
  int result_parameter = -1;  // the parameter standing for the result
  int operand_output = -1;    // the output holding what each device gives
  std::vector<int> axes;      // the mesh axes of a group, major first
  ReduceOp op = ReduceOp::kSum;  // an all-reduce's (no `moves`)
  // A collective that moves blocks; nullopt for an all-reduce by `op`.
  std::optional<SpmdCollective> moves;
};

// The SpmdProgram of a traced body: its parameters are the program's
// others, in order; its outputs the program's outputs that are not
// collective operands, in order. InvalidArgument for an index out of
// range or used twice, an all-reduce whose result type is not its
// operand's, a collective whose result type is not what it makes of its
// operand (ResultShape), or an operand computed after its result is first
// read (not a program a trace makes).
Result<SpmdProgram> PartitionShardMapBody(
    const Program& program, const DeviceMesh& mesh,
    const std::vector<ShardMapCollective>& collectives);

// The members of device `device`'s group over `axes` (mesh positions, in
// group order) and its index among them.
std::vector<int64_t> GroupMembers(const DeviceMesh& mesh, int64_t device,
                                  const std::vector<int>& axes);
int64_t GroupIndex(const DeviceMesh& mesh, int64_t device,
                   const std::vector<int>& axes);

// The shape collective `c` makes of an operand of shape `operand` in a
// group of `members`; InvalidArgument naming the collective when the
// operand cannot be split or stacked so.
Result<Shape> ResultShape(const SpmdCollective& c, const Shape& operand,
                          int64_t members);

// The mesh positions whose blocks device `device` reads in collective
// stage `stage` (kCollective), in its program's parameter order: a
// permutation's one source (none where no member sends to it), every
// member of its group for the others.
std::vector<int64_t> CollectiveSources(const SpmdStage& stage,
                                       const DeviceMesh& mesh, int64_t device);

// Device `device`'s part of collective stage `stage` (kCollective) whose
// operand blocks are `operand`: CollectiveSources (`sources`) and the
// program making its
// result block from them; a null program means the result is the only
// source's block itself.
struct CollectivePart {
  std::vector<int64_t> sources;
  std::optional<Program> program;
};
Result<CollectivePart> CollectiveProgram(const SpmdStage& stage,
                                         const ValueType& operand,
                                         const DeviceMesh& mesh, int64_t device);

}  // namespace baton::compiler
