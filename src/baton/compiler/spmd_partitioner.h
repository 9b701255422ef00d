// SPMD partitioning: one program for every device of a mesh, from a program
// whose parameters are sharded -- the second half of jit of sharded
// arguments (issue 37), after sharding propagation
// (sharding_propagation.h) has decided each value's layout.
//
// The result is a sequence of stages over "slots" (the values that live
// between stages, each a block per device):
//  - kCompute: a program over per-device blocks (the same program on every
//    device: SPMD), reading some slots and writing others. Its shapes are
//    the blocks' (a broadcast or reshape to a split result makes its block;
//    every other op's shape follows from its operands').
//  - kAllReduce: each device's block of `source` is a partial result over
//    the mesh axes `axes`; `result` is their combination by `op`, the same
//    on every device of a group (devices that differ only along `axes`).
//  - kAllGather / kSlice: `result` is `source` laid out as `to` instead of
//    `from`; kSlice only splits further (each device takes a block of what
//    it has, no communication), kAllGather needs other devices' blocks.
//  - kLoop: a while loop whose condition or body needs communication
//    (SpmdLoop): the carries stay laid out as they are, and the condition
//    and the body run as partitioned programs of their own, once per
//    iteration, each with its collectives as stages.
//  - kCase: a conditional whose branches need communication (SpmdCase):
//    the branch index is read (replicated) and that branch runs as a
//    partitioned program of its own on the operands' blocks.
// A communication stage sits where the plan needs one: before the
// instruction that reads an operand in another layout, and before the
// first instruction that reads the result of a reduce or dot that is
// partial -- then every partial result pending is all-reduced, so the
// gradients of a backward pass are computed in one stage and combined
// together -- the small ones in one all-reduce (all_reduce_combiner.h).
// Values a later stage reads are outputs of the compute stage that made
// them; nothing else is kept.
//
// A device's place in the mesh is its coordinate per axis (row-major over
// the axes: device d of a ('a': 2, 'b': 4) mesh is (d / 4, d % 4)); its
// block of a dimension split over axes (a1, a2, ...) is block number
// c[a1] * size[a2] * ... + c[a2] * ... + ..., each block dim / ways long.
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "baton/compiler/ir.h"
#include "baton/compiler/sharding_propagation.h"
#include "baton/core/status.h"

namespace baton::compiler {

// One device's block of an array of shape `global` laid out as `sharding`
// (each dimension divided by the product of its axes' sizes).
Shape BlockShape(const Shape& global, const Sharding& sharding,
                 const DeviceMesh& mesh);

// The mesh coordinate of device `device` (0 <= device < the mesh's size).
std::vector<int64_t> MeshCoordinate(const DeviceMesh& mesh, int64_t device);

// Whether devices `d` and `e` differ only along the mesh axes `axes` (they
// are in one group of a collective over those axes).
bool SameGroup(const DeviceMesh& mesh, int64_t d, int64_t e,
               const std::vector<int>& axes);

// Where device `device`'s block starts in the global array, per dimension.
std::vector<int64_t> BlockOrigin(const Shape& global, const Sharding& sharding,
                                 const DeviceMesh& mesh, int64_t device);

// The number of devices of the mesh (the product of its axis sizes).
int64_t MeshSize(const DeviceMesh& mesh);

// A value living between stages.
struct SpmdSlot {
  ValueType global;    // the whole array's type
  Sharding sharding;   // how it is laid out over the mesh
  Shape block;         // each device's part (BlockShape)
  bool partial = false;  // each block a partial result (until all-reduced)
};

// A shard_map collective that moves blocks between the devices of a group
// (the devices that differ only along the stage's axes, in group order:
// their coordinates along the axes row-major, the first axis major):
// each device's result is made from the operand blocks of some members
// (shard_map_body.h: CollectiveSources, CollectiveProgram).
struct SpmdCollective {
  enum class Kind : uint8_t {
    kAllGather,      // the members' blocks along `dimension` (stacked there
                     // as a new dimension unless `tiled`)
    kReduceScatter,  // the sum over members of their block number `me`
                     // along `dimension` (removed unless `tiled`)
    kAllToAll,       // block `me` along `dimension` of each member's,
                     // joined along `concat_dimension` (JAX's all_to_all)
    kPermute,        // member source_of[me]'s block (zeros for -1)
  };
  Kind kind = Kind::kAllGather;
  int dimension = 0;
  int concat_dimension = 0;
  bool tiled = false;
  std::vector<int> source_of;  // kPermute: per group index
  bool operator==(const SpmdCollective&) const = default;
};

struct SpmdLoop;
struct SpmdCase;

struct SpmdStage {
  enum class Kind : uint8_t {
    kCompute, kAllReduce, kAllGather, kSlice, kCollective, kLoop, kCase
  };
  Kind kind = Kind::kCompute;
  // kCompute: the per-device program; its parameter i reads slot
  // inputs[i], its output j writes slot outputs[j]. kLoop: inputs are the
  // loop's operands (carries, then invariants), outputs its final carries.
  // kCase: inputs are the branch index, then the branches' operands;
  // outputs the results.
  std::shared_ptr<const Program> program;
  std::vector<int> inputs;
  std::vector<int> outputs;
  // kLoop: the condition and the body, partitioned.
  std::shared_ptr<const SpmdLoop> loop;
  // kCase: the branches, partitioned.
  std::shared_ptr<const SpmdCase> branches;
  // Communication: slot `result` from slot `source`.
  int source = -1;
  int result = -1;
  std::vector<int> axes;       // kAllReduce, kCollective: the group's axes
  ReduceOp op = ReduceOp::kSum;  // kAllReduce
  // kCollective: what each device's result is made of (its slots hold each
  // device's own value, as a shard_map body's do).
  std::shared_ptr<const SpmdCollective> collective;

  // The slots the stage reads (inputs, or the source) and writes (outputs,
  // or the result).
  std::vector<int> Reads() const;
  std::vector<int> Writes() const;
  // kLoop or kCase: a stage running partitioned programs of its own
  // (neither a compute nor a communication stage).
  bool RunsRegions() const { return kind == Kind::kLoop || kind == Kind::kCase; }
};

struct SpmdProgram {
  DeviceMesh mesh;
  std::vector<SpmdSlot> slots;
  std::vector<int> parameter_slots;  // per parameter of the program
  std::vector<int> output_slots;     // per output of the program
  std::vector<SpmdStage> stages;     // in order

  int num_compute_stages() const;
  int num_communication_stages() const;  // a loop or case stage is neither
  // One line per stage: "compute %0 %1 -> %2", "all-reduce sum over 'i':
  // %2 -> %3", "all-gather %1 P('i') -> P(): %4"; slots with their block
  // types.
  std::string ToText() const;
};

// A while loop run as a stage: `cond` and `body` are its regions
// partitioned over the same mesh, their parameters (carries, then
// invariants) laid out as the stage's input slots; `body`'s outputs are the
// carries laid out as they came in (resharded at its end where its
// computation leaves them otherwise), `cond`'s output the predicate,
// replicated. Each iteration runs `cond`, reads the predicate (the same
// on every device) and, while it is true, runs `body` on the carries.
struct SpmdLoop {
  SpmdProgram cond;
  SpmdProgram body;
  int num_carries = 0;
};

// A conditional run as a stage: each branch partitioned over the same mesh,
// its parameters laid out as the stage's operand slots (after the index)
// and its results as the stage's output slots (resharded at its end where
// its computation leaves them otherwise). The stage reads the index (a
// replicated scalar, the same on every device), clamps it to the branches
// as `case` does, and runs that branch.
struct SpmdCase {
  std::vector<SpmdProgram> branches;
};

// Partitions `program` (calls inlined) for `mesh` with its parameters laid
// out as `parameters`. A scan that would run whole although an operand is
// split -- its body needs communication, as a scan over tensor-parallel
// layers' stacked weights does -- is unrolled first (unroll_scans.h; up to
// 2^16 added instructions in all, side-effect-free bodies), so each step's
// collective is a stage and the split operands stay split. A while loop
// whose condition or body needs communication while an operand is split
// becomes a kLoop stage (its carries stay split; each iteration's
// collectives run as stages of the loop's own programs); a conditional
// likewise becomes a kCase stage. `outputs` (empty,
// or one per output) asks for an
// output's layout (jit's out_shardings: a last slice or all-gather where
// propagation chose another; nullopt leaves it to propagation). Errors as
// PropagateShardings's (a bad sharding names the parameter or output);
// Internal if an op's block does not come out as the plan says (a
// partitioner bug, never silently a wrong layout).
Result<SpmdProgram> PartitionForMesh(
    const Program& program, const DeviceMesh& mesh,
    const std::vector<Sharding>& parameters,
    const std::vector<std::optional<Sharding>>& outputs = {});

}  // namespace baton::compiler
