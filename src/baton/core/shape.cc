#include "baton/core/shape.h"

namespace baton {

Status Shape::Check() const {
  int64_t product = 1;  // of the non-zero dimensions, saturating above the limit
  for (size_t i = 0; i < dims_.size(); ++i) {
    const int64_t d = dims_[i];
    if (d < 0) {
      return InvalidArgument("shape " + to_string() + " has a negative dimension (" +
                             std::to_string(d) + " at position " +
                             std::to_string(i) + ")");
    }
    if (d == 0) continue;
    if (product > kMaxElements / d) {
      return InvalidArgument(
          "shape " + to_string() + " is too large: its dimensions multiply to more "
          "than " + std::to_string(kMaxElements) + " elements, the most an array "
          "can have (its size in bytes must fit in 64 bits)");
    }
    product *= d;
  }
  return OkStatus();
}

int64_t Shape::num_elements() const {
  int64_t n = 1;
  for (int64_t d : dims_) n *= d;
  return n;
}

std::vector<int64_t> Shape::strides() const {
  std::vector<int64_t> s(dims_.size());
  int64_t acc = 1;
  for (int i = rank() - 1; i >= 0; --i) {
    s[i] = acc;
    acc *= dims_[i];
  }
  return s;
}

std::string Shape::to_string() const {
  std::string s = "(";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(dims_[i]);
  }
  if (dims_.size() == 1) s += ",";
  return s + ")";
}

}  // namespace baton
