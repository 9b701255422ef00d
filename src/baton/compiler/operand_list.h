// OperandList: the operands of one instruction, a small vector of ValueIds.
//
// Up to four operands are stored inline (every op but concatenate and the
// dynamic slices of rank > 2 fits), so building and copying programs rarely
// allocates. A plain value type; passes may rewrite entries in place
// (operator[] / iterators), e.g. to redirect uses after CSE.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "baton/compiler/value_type.h"

namespace baton::compiler {

class OperandList {
 public:
  static constexpr int kInlineCapacity = 4;

  OperandList() = default;
  OperandList(std::initializer_list<ValueId> ids) {
    for (ValueId id : ids) push_back(id);
  }
  explicit OperandList(const std::vector<ValueId>& ids) {
    for (ValueId id : ids) push_back(id);
  }
  OperandList(const OperandList&) = default;
  OperandList& operator=(const OperandList&) = default;
  // Moves leave the source empty (a defaulted move would leave its size
  // pointing at a moved-out heap vector).
  OperandList(OperandList&& other) noexcept
      : inline_(other.inline_),
        heap_(std::move(other.heap_)),
        size_(other.size_) {
    other.Clear();
  }
  OperandList& operator=(OperandList&& other) noexcept {
    if (this != &other) {
      inline_ = other.inline_;
      heap_ = std::move(other.heap_);
      size_ = other.size_;
      other.Clear();
    }
    return *this;
  }

  int size() const { return size_; }
  bool empty() const { return size_ == 0; }
  ValueId operator[](int i) const { return begin()[i]; }
  ValueId& operator[](int i) { return begin()[i]; }
  const ValueId* begin() const {
    return on_heap() ? heap_.data() : inline_.data();
  }
  const ValueId* end() const { return begin() + size_; }
  ValueId* begin() { return on_heap() ? heap_.data() : inline_.data(); }
  ValueId* end() { return begin() + size_; }

  void push_back(ValueId id) {
    if (size_ < kInlineCapacity) {
      inline_[size_] = id;
    } else {
      if (size_ == kInlineCapacity)
        heap_.assign(inline_.begin(), inline_.end());
      heap_.push_back(id);
    }
    ++size_;
  }

  void Clear() {
    heap_.clear();
    size_ = 0;
  }

  std::vector<ValueId> ToVector() const { return {begin(), end()}; }

  bool operator==(const OperandList& other) const {
    return std::equal(begin(), end(), other.begin(), other.end());
  }

 private:
  // Invariant: the ids live in heap_ exactly when there are more than
  // kInlineCapacity of them.
  bool on_heap() const { return size_ > kInlineCapacity; }

  std::array<ValueId, kInlineCapacity> inline_{};
  std::vector<ValueId> heap_;
  int size_ = 0;
};

}  // namespace baton::compiler
