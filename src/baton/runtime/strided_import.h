// Strided import: checking a foreign description of host memory (a DLPack
// tensor, a buffer-protocol view) and planning how to read it into a dense
// row-major baton buffer.
//
// Everything an importer is handed -- data pointer, byte offset, shape,
// strides, length -- comes from another library and is untrusted.
// PlanStridedImport checks it once, with arithmetic that cannot overflow:
// the shape passes Shape::Check(); every stride, converted to bytes and
// multiplied by its largest index, stays in int64; the addresses of the
// first and last byte any element occupies neither wrap around the address
// space nor, when the caller knows which memory is valid (a MemoryExtent),
// fall outside it. The plan it returns is then safe to follow:
// CopyStridedToDense reads only the bytes of the tensor's elements, in
// row-major order of their indices.
//
// A null data pointer is refused unless the tensor has no elements.
// Errors are InvalidArgument, their messages prefixed with the importer's
// name (StridedSource::what, e.g. "from_dlpack: ..."); nothing is read
// while validating. Zero-size tensors never read memory: their strides and
// data pointer are not checked beyond the byte offset.
//
// Ownership: a StridedSource borrows its shape and stride arrays for the
// call; a StridedPlan owns its shape and strides and points into the
// caller's memory (it does not keep it alive).
// Thread-safety: pure functions; safe from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "baton/core/dtype.h"
#include "baton/core/shape.h"
#include "baton/core/status.h"

namespace baton {

// The most dimensions an imported tensor may have (numpy 2 allows 64).
inline constexpr int kMaxImportRank = 64;

enum class StrideUnit : uint8_t {
  kElements,  // DLPack
  kBytes,     // the buffer protocol, numpy
};

// Memory known to be readable: [begin, begin + size).
struct MemoryExtent {
  const void* begin = nullptr;
  uint64_t size = 0;
};

// A foreign tensor: element (i_0, ..., i_{n-1}) is at
// data + byte_offset + sum_k i_k * strides[k] (times the element size for
// StrideUnit::kElements).
struct StridedSource {
  const void* data = nullptr;
  uint64_t byte_offset = 0;
  DType dtype = DType::kFloat32;
  std::span<const int64_t> shape;
  // One per dimension; nullopt means compact row-major.
  std::optional<std::span<const int64_t>> strides;
  StrideUnit stride_unit = StrideUnit::kElements;
  // The memory known to be valid, when the caller knows it (a contiguous
  // buffer-protocol export: [buf, buf + len)); every byte read must be in it.
  std::optional<MemoryExtent> extent;
  // Names the importer in messages ("from_dlpack").
  std::string_view what = "import";
};

// A checked tensor: how to read it.
struct StridedPlan {
  Shape shape;  // passes Shape::Check()
  DType dtype = DType::kFloat32;
  const std::byte* first = nullptr;   // element (0, ..., 0)
  std::vector<int64_t> byte_strides;  // per dimension
  // C-contiguous (dimensions of size 1 may have any stride; a zero-size
  // tensor is): the elements are the nbytes() bytes from `first`, in order.
  bool contiguous = true;
  // The bytes the elements occupy, relative to `first`: [lowest, end).
  // Both 0 for a zero-size tensor.
  int64_t lowest = 0;
  int64_t end = 0;

  int64_t num_elements() const { return shape.num_elements(); }
  int64_t nbytes() const {
    return num_elements() * static_cast<int64_t>(dtype_size(dtype));
  }
};

// Checks `source` (see the top of this file) and plans the read.
Result<StridedPlan> PlanStridedImport(const StridedSource& source);

// Copies the elements of a plan into dense row-major `dst` (plan.nbytes()
// bytes, not overlapping the source). Reads only [first + lowest,
// first + end).
void CopyStridedToDense(const StridedPlan& plan, void* dst);

// A buffer-protocol export (Py_buffer's fields, without Python).
struct BufferView {
  const void* buf = nullptr;
  int64_t len = 0;       // bytes
  int64_t itemsize = 0;  // bytes per element as the exporter sees them
  int ndim = 0;
  const int64_t* shape = nullptr;    // ndim entries (may be null if ndim 0)
  const int64_t* strides = nullptr;  // ndim entries in bytes, or null
};

// Checks a buffer-protocol export read as `dtype`. Without strides the
// buffer is C-contiguous and [buf, buf + len) is its memory: len must be the
// elements' size in bytes ("host buffer of 8 bytes does not match
// float32(3,)"). With strides, len is the size a contiguous copy would have
// (as the protocol defines it) and itemsize must be dtype's size; the
// memory reached is checked against `extent` when the caller knows it.
// `what` prefixes messages other than the length mismatch.
Result<StridedPlan> PlanBufferImport(
    const BufferView& view, DType dtype,
    std::optional<MemoryExtent> extent = std::nullopt,
    std::string_view what = "host buffer");

}  // namespace baton
