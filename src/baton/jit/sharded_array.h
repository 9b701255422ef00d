// ShardedArray: a global array laid out over a mesh of devices -- the shape
// and dtype of the whole, the layout (compiler::Sharding: per dimension the
// mesh axes splitting it), and one block per mesh position, each an Array
// on its device. What a C++ caller passes to and gets from a partitioned
// program (SpmdExecutable::Run), as Python's bt.ShardedArray does through
// the bindings.
//
// Devices holding the same block (a replicated dimension) each hold their
// own copy. On a mesh spanning processes only this process's blocks are
// here; Gather needs them all.
//
// Ownership: a value type; the blocks are shared Array handles (copying a
// ShardedArray copies handles, not storage). Devices are not owned and must
// outlive it. Thread-safety: const methods may be called from any thread.
#pragma once

#include <vector>

#include "baton/compiler/spmd_partitioner.h"
#include "baton/core/status.h"
#include "baton/runtime/array.h"
#include "baton/runtime/transfer.h"

namespace baton {

class ShardedArray {
 public:
  // Cuts `host` (the whole array) into the block of each of `devices` (one
  // per mesh position, row-major mesh order; null for another process's)
  // as `sharding` lays it out, and puts each block on its device in `kind`
  // memory. InvalidArgument for a layout the shape does not allow
  // (compiler::CheckSharding) or a device count that is not the mesh's.
  static Result<ShardedArray> Put(const HostBuffer& host,
                                  compiler::DeviceMesh mesh,
                                  compiler::Sharding sharding,
                                  std::vector<Device*> devices,
                                  MemoryKind kind = MemoryKind::kDevice);

  // From blocks already on their devices: `blocks` holds this process's,
  // in mesh order (one per non-null device). InvalidArgument naming the
  // position for a block of the wrong shape, dtype or device.
  static Result<ShardedArray> FromBlocks(Shape shape, DType dtype,
                                         compiler::DeviceMesh mesh,
                                         compiler::Sharding sharding,
                                         std::vector<Device*> devices,
                                         std::vector<Array> blocks);

  const Shape& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  const compiler::DeviceMesh& mesh() const { return mesh_; }
  const compiler::Sharding& sharding() const { return sharding_; }
  // Per mesh position its device (null: another process's).
  const std::vector<Device*>& devices() const { return devices_; }
  // This process's blocks, in mesh order.
  const std::vector<Array>& blocks() const { return blocks_; }
  // The shape of every block.
  Shape block_shape() const;

  // The whole array, assembled into `dst` (`dst_bytes` = the array's
  // bytes) from the blocks, after the work producing them. FailedPrecondition
  // when some block is another process's; the blocks' errors as they are.
  Status CopyToHost(void* dst, size_t dst_bytes) const;

 private:
  Shape shape_;
  DType dtype_ = DType::kFloat32;
  compiler::DeviceMesh mesh_;
  compiler::Sharding sharding_;
  std::vector<Device*> devices_;
  std::vector<Array> blocks_;
};

}  // namespace baton
