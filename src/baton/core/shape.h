// Shapes: a small value type holding dimension sizes (row-major layouts only).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace baton {

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
  explicit Shape(std::vector<int64_t> dims) : dims_(std::move(dims)) {}

  int rank() const { return static_cast<int>(dims_.size()); }
  int64_t dim(int i) const { return dims_[i]; }
  int64_t operator[](int i) const { return dims_[i]; }
  const std::vector<int64_t>& dims() const { return dims_; }
  // Product of the dimensions (1 for a scalar, 0 if any dimension is 0).
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
