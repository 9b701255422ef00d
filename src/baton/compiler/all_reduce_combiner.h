// CombineAllReduces: one all-reduce for the small partial results a compute
// stage hands on together, over a partitioned program (spmd_partitioner.h)
// -- jit's (PartitionForMesh) and shard_map's (PartitionShardMapBody) alike.
//
// A data-parallel step all-reduces every gradient after the backward pass:
// each all-reduce stage costs the runtime launches and copies on every
// device (jit/spmd_executable.h), whatever its size. So the all-reduce
// stages right after a compute stage S (before the next compute stage),
// over blocks S computes or that exist before it (a parameter, a shard_map
// body's psum of its input), that combine alike (axes, op, dtypes) and
// whose blocks are small (up to `limit_bytes`) are packed:
//  - S also outputs the packed block: each member's block flattened and
//    concatenated in order (a new slot: global type one device's packed
//    block, replicated, partial), reading the blocks it does not make. A
//    member block nothing else reads is no longer an output of S.
//  - One all-reduce stage combines the packed slot, where the first
//    member's stood.
//  - A later compute stage reading a member's result slices its part out
//    of the packed result (its program gets a parameter for it instead).
//    Where something else reads one -- a communication or loop stage, or the
//    program's outputs -- a compute stage of slices right after the
//    all-reduce makes those results as before.
// Larger blocks keep an all-reduce each: packing copies a block into the
// pack, which costs more than the launches it saves. Values are as before
// (each element is combined from the same blocks in the same order).
//
// Thread-safety: a pure function of its arguments.
#pragma once

#include <cstdint>

#include "baton/compiler/spmd_partitioner.h"
#include "baton/core/status.h"

namespace baton::compiler {

// Blocks up to this size are packed by default: on one process of 4 CPU
// devices an all-reduce stage is about 7 queue operations of ~20 us, and a
// copy into the pack at ~10 GB/s costs as much at about 700 KB.
inline constexpr int64_t kCombineAllReducesLimitBytes = int64_t{512} << 10;

Result<SpmdProgram> CombineAllReduces(
    SpmdProgram program, int64_t limit_bytes = kCombineAllReducesLimitBytes);

}  // namespace baton::compiler
