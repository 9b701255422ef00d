// Shapes: a small value type holding dimension sizes (row-major layouts only).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "baton/core/status.h"

namespace baton {

// The most elements a shape may have. At up to 16 bytes per element its byte
// size, and every stride, then fit in int64: a shape that passes Check() can
// be multiplied out anywhere without overflow.
inline constexpr int64_t kMaxElements =
    std::numeric_limits<int64_t>::max() / 16;

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
  explicit Shape(std::vector<int64_t> dims) : dims_(std::move(dims)) {}

  int rank() const { return static_cast<int>(dims_.size()); }
  int64_t dim(int i) const { return dims_[i]; }
  int64_t operator[](int i) const { return dims_[i]; }
  const std::vector<int64_t>& dims() const { return dims_; }
  // The one check of shape arithmetic, done wherever a shape enters baton
  // (from Python, a DLPack or numpy import, an op's inferred result):
  // InvalidArgument if a dimension is negative, or if the product of the
  // non-zero dimensions exceeds kMaxElements (so neither the element count,
  // the byte size nor a stride can overflow, even for shapes with a 0).
  Status Check() const;
  // Product of the dimensions (1 for a scalar, 0 if any dimension is 0).
  // Exact for shapes that pass Check().
  int64_t num_elements() const;
  // Row-major strides in elements.
  std::vector<int64_t> strides() const;
  // "(2, 3)", "()" for a scalar: the way numpy prints shapes.
  std::string to_string() const;

  bool operator==(const Shape& o) const { return dims_ == o.dims_; }
  bool operator!=(const Shape& o) const { return dims_ != o.dims_; }

 private:
  std::vector<int64_t> dims_;
};

}  // namespace baton
