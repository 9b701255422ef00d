// BuilderBase: the choices fuzz_program_builder.cc makes while it builds a
// program -- which values to use as operands (mostly well-typed, sometimes
// any value or an id that does not exist), random shapes, axis lists and
// list lengths -- and the checked Program::Add that enforces the builder's
// promises (a refused op changes nothing; an accepted value's shape passes
// Shape::Check()).
//
// Not thread-safe; one per program being built (regions get their own).
#pragma once

#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>
#include <vector>

#include "baton/compiler/ir.h"
#include "fuzz_input.h"
#include "program_checks.h"

namespace baton::fuzz {

using c::OpAttrs;
using c::OperandList;
using c::Program;
using c::ValueId;
using c::ValueType;

// a + b with two's-complement wrap-around (the fuzzer's own arithmetic on
// hostile values must not be UB itself).
inline int64_t WrappingAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) +
                              static_cast<uint64_t>(b));
}

// Shared by a program and its regions.
struct Session {
  int budget = 96;           // instructions left, all regions included
  bool whole_groups = true;  // every region group was emitted whole
  int64_t while_trips = 0;   // most iterations of any while; -1 unbounded
};

class BuilderBase {
 public:
  BuilderBase(FuzzInput& in, Session& s, int depth)
      : in_(in), s_(s), depth_(depth) {}
  Program& program() { return p_; }

  // One value of each type in `types` (the latest match, or any value when
  // none matches, which the consumer then rejects).
  std::vector<ValueId> OutputsOfTypes(const std::vector<ValueType>& types) {
    std::vector<ValueId> outs;
    for (const ValueType& t : types) {
      ValueId v = Find([&](const ValueType& u) {
        return u.shape == t.shape && u.dtype == t.dtype;
      });
      outs.push_back(v != c::kNoValue ? v : Any());
    }
    return outs;
  }
  std::vector<ValueId> SomeOutputs(int lo, int hi) {
    std::vector<ValueId> outs;
    const int n = in_.Int(lo, hi);
    for (int i = 0; i < n; ++i) outs.push_back(Any());
    return outs;
  }
  void SetOutputs(std::vector<ValueId> outs) {
    std::vector<ValueId> before = p_.outputs();
    if (!p_.SetOutputs(outs).ok() && p_.outputs() != before) {
      FuzzFail("a refused SetOutputs changed the outputs");
    }
  }

 protected:
  // By value: adding instructions moves the program's storage.
  ValueType T(ValueId v) const { return p_.type(v); }

  // A random existing value, now and then an id that does not exist.
  ValueId Any() {
    const int n = p_.num_values();
    if (n == 0 || in_.Byte() >= 250) {
      static constexpr ValueId kBad[] = {-1, 0, 1, 1 << 30, -(1 << 30)};
      return n == 0 ? c::kNoValue : kBad[in_.Pick(5)] + (in_.Bool() ? n : 0);
    }
    // Biased towards recent values, so chains grow deep.
    const int back = in_.Int(0, std::min(n - 1, 15));
    return in_.Bool() ? n - 1 - back : static_cast<ValueId>(in_.Pick(n));
  }
  // The latest value of a matching type (kNoValue if none).
  template <typename Pred>
  ValueId Find(Pred pred) {
    for (ValueId v = p_.num_values() - 1; v >= 0; --v) {
      if (pred(T(v)) && in_.Byte() < 200) return v;
    }
    return c::kNoValue;
  }
  template <typename Pred>
  ValueId FindOr(Pred pred) {
    ValueId v = Find(pred);
    return v == c::kNoValue ? Any() : v;
  }
  bool Valid(ValueId v) const { return v >= 0 && v < p_.num_values(); }

  DType RandomDType() { return static_cast<DType>(in_.Int(0, kNumDTypes - 1)); }
  Shape RandomShape() {
    const int rank = in_.Byte() < 240 ? in_.Int(0, 4) : in_.Int(0, 9);
    std::vector<int64_t> dims;
    for (int i = 0; i < rank; ++i) dims.push_back(in_.Dim());
    return Shape(std::move(dims));
  }
  ValueType RandomType() {
    return ValueType{RandomShape(), RandomDType(),
                     static_cast<MemoryKind>(in_.Int(0, kNumMemoryKinds - 1))};
  }
  // An axis list of length `n` for rank `rank`: valid or random.
  std::vector<int64_t> Axes(int n, int rank) {
    std::vector<int64_t> v;
    for (int i = 0; i < n; ++i) v.push_back(in_.Index(rank));
    return v;
  }
  std::vector<int64_t> Permutation(int rank) {
    std::vector<int64_t> perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    for (int i = rank - 1; i > 0; --i) std::swap(perm[i], perm[in_.Int(0, i)]);
    if (in_.Byte() >= 240) perm = Axes(in_.Int(0, rank + 1), rank);
    return perm;
  }
  std::vector<int64_t> Smalls(int n) {
    std::vector<int64_t> v;
    for (int i = 0; i < n; ++i) v.push_back(in_.Small());
    return v;
  }
  // Usually the rank, sometimes off by one.
  int ListLength(int rank) {
    const uint8_t b = in_.Byte();
    return b < 235 ? rank : std::max(0, rank + (b % 2 ? 1 : -1));
  }

  // Program::Add's promises: a refused op leaves the program unchanged; an
  // accepted value's shape passes Shape::Check().
  Result<ValueId> Checked(int before, Result<ValueId> r) {
    if (!r.ok()) {
      if (p_.num_values() != before) {
        FuzzFail("a refused op changed the program: " + r.status().message(),
                 &p_);
      }
      return r;
    }
    if (r.value() < before || r.value() >= p_.num_values())
      FuzzFail("bad ValueId");
    for (ValueId id = before; id < p_.num_values(); ++id) {
      if (Status s = p_.type(id).shape.Check(); !s.ok()) {
        FuzzFail("Add accepted a value whose shape fails Check: " + s.message(),
                 &p_);
      }
    }
    return r;
  }
  Result<ValueId> Add(OpAttrs attrs, OperandList ops) {
    const int before = p_.num_values();
    return Checked(before, p_.Add(std::move(attrs), std::move(ops)));
  }
  // A new scalar constant of `dtype` holding `value` (for indices).
  Result<ValueId> ScalarInt(DType dtype, int64_t value) {
    c::Literal lit(Shape{}, dtype);
    std::memcpy(lit.untyped_mutable_data(), &value,
                std::min<size_t>(sizeof value, dtype_size(dtype)));
    if (dtype == DType::kBool) lit.Set<bool>(0, value & 1);
    return Add(c::ConstantAttrs{std::make_shared<const c::Literal>(lit)}, {});
  }
  ValueId IndexScalar() {
    ValueId v = Find([](const ValueType& t) {
      return t.shape.rank() == 0 && is_integer(t.dtype);
    });
    if (v != c::kNoValue && in_.Bool()) return v;
    const DType d = in_.Bool() ? DType::kInt32 : DType::kInt64;
    const int64_t value = in_.Byte() < 200 ? in_.Small() : in_.Hostile();
    Result<ValueId> r = ScalarInt(d, value);
    return r.ok() ? r.value() : Any();
  }

  FuzzInput& in_;
  Session& s_;
  int depth_;
  Program p_;
};

}  // namespace baton::fuzz
