// Sharding propagation: how every value of a program is laid out over a
// mesh of devices when its parameters are, and what communication that
// layout needs -- the first half of partitioning a program for sharded
// arguments (issue 37; the second half turns the plan into one program per
// device with the collectives in it).
//
// A Sharding names, per dimension, the mesh axes the dimension is split
// over (major first), as a PartitionSpec does: P('i', None) over a mesh
// ('i': 4) is {{0}, {}}. A dimension is split only when the product of its
// axes' sizes divides it, and each mesh axis splits at most one dimension.
//
// The rules, forward from the parameters (XLA's SPMD partitioner follows
// the same ideas; JAX users see them through jit of sharded arguments):
//  - elementwise ops, select, convert, transfer: the operands' sharding
//    when they agree, else the most split operand's, with the dimensions it
//    leaves whole taking another operand's split where those axes are free
//    (P('x') + P(None, 'y') is P('x', 'y'), as in JAX); the operands are
//    resharded to it (a less split operand is sliced: each device takes its
//    block, no communication);
//  - broadcast_in_dim and transpose carry each dimension's axes with it;
//  - reduce: kept dimensions keep their axes; the axes of reduced split
//    dimensions make each device's result a partial one, combined by an
//    all-reduce of the reduce's op over those axes;
//  - dot_general: batch dimensions split alike on both sides stay split;
//    free dimensions keep their operand's axes; a contracting dimension
//    split on both sides (or on one, the other then sliced to match) makes
//    a partial sum, all-reduced; an axis the result would use twice is
//    gathered on the right-hand side;
//  - reshape: a split dimension survives when it is the major dimension of
//    its group of merged or split dimensions and the group's major result
//    dimension divides by the split; otherwise the group is gathered;
//  - slices, dynamic slices and updates, pads, sorts, FFTs, concatenation:
//    computed with the dimensions they take whole (sliced, padded, sorted,
//    transformed, joined) whole, the others keeping their split; the
//    result then keeps the operand's split there too where its size still
//    divides by it (each device slices its block: ShardingStep::computed),
//    as JAX's layouts do; batched linear algebra keeps its batch
//    dimensions' split; a gather (take along an axis) keeps its operand's
//    split elsewhere and its indices'; a scatter is computed with its
//    operand whole along its axis, the indices whole, and its result keeps
//    the operand's layout;
//  - while, scan and case whose regions need no communication on the
//    operands' blocks (propagated into the regions, the loop-carried
//    values' layouts settled by a few rounds): run on each device's blocks,
//    the regions' plans kept in the op's step (ShardingStep::regions);
//    a while loop whose regions do need communication, free of side
//    effects, with a split operand: a loop stage (ShardingStep::
//    region_stage) whose carries keep their layout (met with the body's
//    results over a few rounds), its regions partitioned on their own by
//    the partitioner; a conditional likewise: a case stage, its operands
//    kept as they are, each result laid out as the branches agree (the
//    dimensions they all split alike), each branch partitioned on its own;
//    otherwise (a scan, a region with side effects), and for callbacks and
//    other ops, the operands are read whole (all-gathered) and the result
//    is replicated.
//
// Thread-safety: a pure function of its arguments.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "baton/compiler/ir.h"
#include "baton/core/op_codes.h"
#include "baton/core/status.h"

namespace baton::compiler {

// The devices' arrangement: named axes and their sizes (a Mesh's shape).
struct DeviceMesh {
  std::vector<std::string> axis_names;
  std::vector<int64_t> axis_sizes;
  // Product of the sizes of `axes` (1 for none).
  int64_t SizeOf(const std::vector<int>& axes) const;
};

struct Sharding {
  // Per dimension, indices into DeviceMesh::axis_names, major first.
  std::vector<std::vector<int>> dims;

  static Sharding Replicated(int rank);
  bool IsReplicated() const;
  // "P('i', None)", "P(('a', 'b'))", "P()" (rank 0 or replicated: trailing
  // Nones are left out, as JAX prints specs).
  std::string ToString(const DeviceMesh& mesh) const;
  bool operator==(const Sharding&) const = default;
};

// A change of layout an instruction needs on one of its operands first.
struct Reshard {
  enum class Kind : uint8_t {
    kSlice,      // only splits further: each device takes its block
    kAllGather,  // some split dimension must be whole (or split otherwise)
  };
  int operand = 0;  // position among the instruction's operands
  Sharding from, to;
  Kind kind = Kind::kSlice;
};

struct ShardingPlan;

// What one instruction needs beyond computing on its operands' blocks.
struct ShardingStep {
  std::vector<Reshard> reshards;  // before it
  // After it: each device's result is a partial one over these mesh axes,
  // combined by an all-reduce of `all_reduce_op`.
  std::vector<int> all_reduce_axes;
  ReduceOp all_reduce_op = ReduceOp::kSum;
  // A while, scan or case run on each device's blocks: the plan of each of
  // its regions (while: cond, body; scan: body; case: the branches), none
  // needing communication -- what the partitioner makes the regions' block
  // programs from. Empty for every other instruction.
  std::vector<std::shared_ptr<const ShardingPlan>> regions;
  // Set when the op computes its result laid out otherwise than the
  // value's layout: in this one, a dimension it needs whole (sorted,
  // joined, padded, updated) whole; each device then slices its block of
  // the value's layout out of it, no communication. So the result keeps
  // the split its operand had there, as JAX's does.
  std::optional<Sharding> computed;
  // A while loop or a conditional run as a stage of its own
  // (spmd_partitioner.h, SpmdLoop and SpmdCase): its operands read in this
  // step's layouts; a loop's results laid out as its carries go in.
  bool region_stage = false;
};

struct ShardingPlan {
  std::vector<Sharding> sharding;   // per ValueId, after its step
  std::vector<ShardingStep> steps;  // per ValueId
  int num_all_gathers() const;
  int num_all_reduces() const;
  // One line per value that is split or needs communication: "%4 =
  // dot_general P('i'), all-gather of operand 1 P('i') -> P()", then
  // ", then all-reduce (sum) over 'i'" or ", a loop stage" where so.
  std::string ToText(const Program& program, const DeviceMesh& mesh) const;
};

// OkStatus when an array of `shape` can be laid out as `s` over `mesh` (one
// axis list per dimension, each axis known and used once, each split
// dimension divisible); else InvalidArgument starting with `what`.
Status CheckSharding(const Shape& shape, const DeviceMesh& mesh,
                     const Sharding& s, const std::string& what);

// What moving an array from layout `from` to `to` takes: kSlice when `to`
// only splits further, else kAllGather.
Reshard::Kind ReshardKind(const Sharding& from, const Sharding& to);

// The plan for `program` (calls inlined, sharding constraints kept: passes.h
// InlineCalls) with its parameters laid out as `parameters` (one per
// parameter); a constrained value is laid out as its constraint says, its
// operand resharded to it. InvalidArgument, naming the parameter or the
// constrained value, for a sharding of the wrong rank, an unknown or
// repeated mesh axis, or a dimension its axes do not divide.
Result<ShardingPlan> PropagateShardings(const Program& program,
                                        const DeviceMesh& mesh,
                                        const std::vector<Sharding>& parameters);

}  // namespace baton::compiler
