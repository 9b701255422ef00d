// Moving one device's block of an array laid out over a mesh between the
// whole array's bytes and the block's own (row-major both): how a sharded
// array is cut from host data and assembled back (jit/sharded_array.h), and
// how the reference SPMD interpreter (spmd_interpreter.h) does the same
// with literals.
//
// Thread-safety: pure functions of their arguments (the destination is
// written by the calling thread only).
#pragma once

#include <cstddef>
#include <cstdint>

#include "baton/compiler/spmd_partitioner.h"

namespace baton::compiler {

// Copies device `device`'s block of an array of shape `global` laid out as
// `sharding` (BlockShape, BlockOrigin) from `whole` into `block`.
void CopyBlockOut(const void* whole, const Shape& global, size_t element_bytes,
                  const Sharding& sharding, const DeviceMesh& mesh,
                  int64_t device, void* block);

// The reverse: writes `block` into its place in `whole`.
void CopyBlockIn(const void* block, const Shape& global, size_t element_bytes,
                 const Sharding& sharding, const DeviceMesh& mesh,
                 int64_t device, void* whole);

}  // namespace baton::compiler
