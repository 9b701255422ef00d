#include "baton/jit/sharded_array.h"

#include <string>
#include <utility>

#include "baton/compiler/block_copy.h"
#include "baton/core/error.h"
#include "baton/runtime/device.h"

namespace baton {
namespace {

Status CheckMesh(const compiler::DeviceMesh& mesh,
                 const std::vector<Device*>& devices, const char* what) {
  const int64_t size = compiler::MeshSize(mesh);
  if (static_cast<int64_t>(devices.size()) != size) {
    return InvalidArgument(std::string(what) + ": the mesh has " +
                           std::to_string(size) + " positions but " +
                           std::to_string(devices.size()) +
                           " devices were given");
  }
  return OkStatus();
}

}  // namespace

Shape ShardedArray::block_shape() const {
  return compiler::BlockShape(shape_, sharding_, mesh_);
}

Result<ShardedArray> ShardedArray::Put(const HostBuffer& host,
                                       compiler::DeviceMesh mesh,
                                       compiler::Sharding sharding,
                                       std::vector<Device*> devices,
                                       MemoryKind kind) {
  BATON_RETURN_IF_ERROR(CheckMesh(mesh, devices, "ShardedArray::Put"));
  BATON_RETURN_IF_ERROR(compiler::CheckSharding(
      host.shape, mesh, sharding,
      "ShardedArray::Put of " + std::string(dtype_name(host.dtype)) +
          host.shape.to_string()));
  ShardedArray a;
  a.shape_ = host.shape;
  a.dtype_ = host.dtype;
  a.mesh_ = std::move(mesh);
  a.sharding_ = std::move(sharding);
  a.devices_ = std::move(devices);
  const Shape block = a.block_shape();
  std::vector<char> bytes(static_cast<size_t>(block.num_elements()) *
                          dtype_size(a.dtype_));
  for (size_t d = 0; d < a.devices_.size(); ++d) {
    if (a.devices_[d] == nullptr) continue;
    compiler::CopyBlockOut(host.data, a.shape_, dtype_size(a.dtype_),
                           a.sharding_, a.mesh_, static_cast<int64_t>(d),
                           bytes.data());
    // Snapshot: `bytes` is reused for the next block.
    BATON_ASSIGN_OR_RETURN(
        Array put, DevicePut(HostBuffer{bytes.data(), block, a.dtype_},
                             a.devices_[d], kind));
    a.blocks_.push_back(std::move(put));
  }
  return a;
}

Result<ShardedArray> ShardedArray::FromBlocks(Shape shape, DType dtype,
                                              compiler::DeviceMesh mesh,
                                              compiler::Sharding sharding,
                                              std::vector<Device*> devices,
                                              std::vector<Array> blocks) {
  BATON_RETURN_IF_ERROR(CheckMesh(mesh, devices, "ShardedArray::FromBlocks"));
  BATON_RETURN_IF_ERROR(compiler::CheckSharding(
      shape, mesh, sharding,
      "ShardedArray::FromBlocks of " + std::string(dtype_name(dtype)) +
          shape.to_string()));
  ShardedArray a;
  a.shape_ = std::move(shape);
  a.dtype_ = dtype;
  a.mesh_ = std::move(mesh);
  a.sharding_ = std::move(sharding);
  a.devices_ = std::move(devices);
  const Shape block = a.block_shape();
  size_t k = 0;
  for (size_t d = 0; d < a.devices_.size(); ++d) {
    if (a.devices_[d] == nullptr) continue;
    const std::string where = "ShardedArray::FromBlocks: the block of mesh "
                              "position " + std::to_string(d);
    if (k >= blocks.size() || !blocks[k].valid()) {
      return InvalidArgument(where + " is missing");
    }
    const Array& b = blocks[k++];
    if (b.shape() != block || b.dtype() != a.dtype_ ||
        b.device() != a.devices_[d]) {
      return InvalidArgument(
          where + " must be " + std::string(dtype_name(a.dtype_)) +
          block.to_string() + " on " + a.devices_[d]->ToString() + "; it is " +
          std::string(dtype_name(b.dtype())) + b.shape().to_string() + " on " +
          b.device()->ToString());
    }
  }
  if (k != blocks.size()) {
    return InvalidArgument("ShardedArray::FromBlocks: " +
                           std::to_string(blocks.size()) + " blocks for " +
                           std::to_string(k) + " devices of this process");
  }
  a.blocks_ = std::move(blocks);
  return a;
}

Status ShardedArray::CopyToHost(void* dst, size_t dst_bytes) const {
  const size_t whole =
      static_cast<size_t>(shape_.num_elements()) * dtype_size(dtype_);
  if (dst_bytes != whole) {
    return InvalidArgument("ShardedArray::CopyToHost: the destination has " +
                           std::to_string(dst_bytes) + " bytes; the array " +
                           std::to_string(whole));
  }
  const Shape block = block_shape();
  std::vector<char> bytes(static_cast<size_t>(block.num_elements()) *
                          dtype_size(dtype_));
  size_t k = 0;
  for (size_t d = 0; d < devices_.size(); ++d) {
    if (devices_[d] == nullptr) {
      return FailedPrecondition(
          "ShardedArray::CopyToHost: mesh position " + std::to_string(d) +
          " is another process's device; gather the array across processes "
          "first");
    }
    BATON_RETURN_IF_ERROR(
        baton::CopyToHost(blocks_[k++], bytes.data(), bytes.size()));
    compiler::CopyBlockIn(bytes.data(), shape_, dtype_size(dtype_), sharding_,
                          mesh_, static_cast<int64_t>(d), dst);
  }
  return OkStatus();
}

}  // namespace baton
