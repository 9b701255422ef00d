// Literal: an array value held on the host (shape, dtype and its row-major
// bytes), used for captured constants, interpreter arguments and results.
//
// Ownership: a Literal owns its bytes; copying a Literal copies them, so a
// Literal built from caller data is a snapshot (DESIGN R5) that later
// mutation of the source never changes. To share one without copying (a
// constant used by several programs, de-duplicated by content), hold it as
// std::shared_ptr<const Literal>: a const Literal is immutable.
// Thread-safety: const methods may run concurrently; mutation may not.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "baton/core/dtype.h"
#include "baton/core/dtype_dispatch.h"
#include "baton/core/shape.h"

namespace baton::compiler {

class Literal {
 public:
  // A float32 scalar 0, so Literals can live in containers.
  Literal() : Literal(Shape{}, DType::kFloat32) {}
  // Zero-filled (false / 0 / +0.0) array of the given shape and type.
  Literal(Shape shape, DType dtype);

  // Copies shape.num_elements() * dtype_size(dtype) bytes from `data`.
  static Literal FromBytes(Shape shape, DType dtype, const void* data);

  // Copies `values` (storage type T: bool, int8_t, ..., float16, bfloat16,
  // float, double) into a literal of `shape`; the counts must match.
  template <typename T>
  static Literal FromVector(const std::vector<T>& values, Shape shape);
  // A rank-1 literal.
  template <typename T>
  static Literal FromVector(const std::vector<T>& values) {
    return FromVector(values, Shape{static_cast<int64_t>(values.size())});
  }
  template <typename T>
  static Literal Scalar(T value) {
    return FromVector(std::vector<T>{value}, Shape{});
  }
  // Converts each double to `dtype` the way convert() does (ConvertElement):
  // handy for tests and for filling float16/bfloat16 literals.
  static Literal FromDoubles(DType dtype, Shape shape,
                             const std::vector<double>& values);

  const Shape& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  int64_t num_elements() const { return shape_.num_elements(); }
  int64_t byte_size() const { return static_cast<int64_t>(bytes_.size()); }

  const void* untyped_data() const { return bytes_.data(); }
  void* untyped_mutable_data() { return bytes_.data(); }
  // Typed views; T must be the storage type of dtype() (checked).
  template <typename T>
  const T* data() const {
    CheckType(dtype_of<T>());
    return reinterpret_cast<const T*>(bytes_.data());
  }
  template <typename T>
  T* mutable_data() {
    CheckType(dtype_of<T>());
    return reinterpret_cast<T*>(bytes_.data());
  }

  // Element `i` in row-major order; T must match dtype() (checked).
  template <typename T>
  T Get(int64_t i) const {
    return data<T>()[i];
  }
  template <typename T>
  void Set(int64_t i, T value) {
    mutable_data<T>()[i] = value;
  }
  template <typename T>
  std::vector<T> ToVector() const {
    const T* p = data<T>();
    return std::vector<T>(p, p + num_elements());
  }
  // Element `i` converted to double / int64 (ConvertElement semantics), for
  // any dtype: reading index operands, printing, test comparisons.
  double GetAsDouble(int64_t i) const;
  int64_t GetAsInt64(int64_t i) const;

  // Element `i` as text: "true", "-3", "0.1" (shortest form that reads back
  // to the same value of its type), "inf", "nan".
  std::string ElementToString(int64_t i) const;
  // Values with numpy-like nesting: "2.5", "{1, 2}", "{{1, 2}, {3, 4}}".
  std::string ValuesToString() const;
  // Type and values: "f32[2] {1, 2}".
  std::string ToString() const;

  // Equal shape, dtype and bytes (bitwise: NaNs with equal payloads are
  // equal, +0.0 and -0.0 are not), which is what de-duplication needs.
  bool operator==(const Literal& other) const {
    return dtype_ == other.dtype_ && shape_ == other.shape_ &&
           bytes_ == other.bytes_;
  }

 private:
  // Both abort with a message: a mismatch is a bug in the caller.
  void CheckType(DType requested) const;
  void CheckCount(int64_t num_values) const;

  Shape shape_;
  DType dtype_;
  // Row-major element bytes; operator new's alignment suits every dtype.
  std::vector<uint8_t> bytes_;
};

template <typename T>
Literal Literal::FromVector(const std::vector<T>& values, Shape shape) {
  constexpr DType kDType = dtype_of<T>();
  Literal lit(std::move(shape), kDType);
  lit.CheckCount(static_cast<int64_t>(values.size()));
  if constexpr (std::is_same_v<T, bool>) {
    // std::vector<bool> is bit-packed: copy element by element.
    for (size_t i = 0; i < values.size(); ++i) lit.Set<bool>(i, values[i]);
  } else if (!values.empty()) {
    std::memcpy(lit.bytes_.data(), values.data(), values.size() * sizeof(T));
  }
  return lit;
}

}  // namespace baton::compiler
