// Internal to the reference interpreter: one evaluation function per op
// family file, plus the index helpers they share. Each Eval* receives the
// instruction (attributes and result type) and its operand values, and
// returns a freshly allocated result.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "baton/compiler/ir.h"
#include "baton/compiler/literal.h"

namespace baton::compiler::interpreter {

using Operands = std::vector<const Literal*>;

// interpreter_elementwise.cc
Literal EvalIota(const Instruction& inst);
Literal EvalConvert(const Instruction& inst, const Operands& in);
Literal EvalUnary(const Instruction& inst, const Operands& in);
Literal EvalBinary(const Instruction& inst, const Operands& in);
Literal EvalCompare(const Instruction& inst, const Operands& in);
Literal EvalSelect(const Instruction& inst, const Operands& in);

// interpreter_data_movement.cc
Literal EvalBroadcastInDim(const Instruction& inst, const Operands& in);
Literal EvalReshape(const Instruction& inst, const Operands& in);
Literal EvalTranspose(const Instruction& inst, const Operands& in);
Literal EvalSlice(const Instruction& inst, const Operands& in);
Literal EvalDynamicSlice(const Instruction& inst, const Operands& in);
Literal EvalDynamicUpdateSlice(const Instruction& inst, const Operands& in);
Literal EvalConcatenate(const Instruction& inst, const Operands& in);
Literal EvalPad(const Instruction& inst, const Operands& in);

// interpreter_indexing.cc
Literal EvalGather(const Instruction& inst, const Operands& in);
Literal EvalScatter(const Instruction& inst, const Operands& in);

// interpreter_sort.cc
Literal EvalSort(const Instruction& inst, const Operands& in);

// interpreter_fft.cc
Literal EvalFft(const Instruction& inst, const Operands& in);

// interpreter_linalg.cc
Literal EvalLinalg(const Instruction& inst, const Operands& in);

// interpreter_reductions.cc
Literal EvalReduce(const Instruction& inst, const Operands& in);
Literal EvalDotGeneral(const Instruction& inst, const Operands& in);

// interpreter_control_flow.cc: every result of the instruction's region
// group, in output order.
std::vector<Literal> EvalControlFlow(const Instruction& inst,
                                     const Operands& in);

// A fresh, zero-filled literal of the instruction's result type.
inline Literal NewResult(const Instruction& inst) {
  return Literal(inst.type.shape, inst.type.dtype);
}

// Calls f(index, linear) for every multi-index of `shape` in row-major
// order; `linear` counts 0, 1, 2, ...
template <typename F>
void ForEachIndex(const Shape& shape, F&& f) {
  const int64_t n = shape.num_elements();
  std::vector<int64_t> index(shape.rank(), 0);
  for (int64_t linear = 0; linear < n; ++linear) {
    f(static_cast<const std::vector<int64_t>&>(index), linear);
    for (int d = shape.rank() - 1; d >= 0; --d) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}

// Row-major offset of `index` in an array with these strides.
inline int64_t Offset(const std::vector<int64_t>& index,
                      const std::vector<int64_t>& strides) {
  int64_t offset = 0;
  for (size_t i = 0; i < index.size(); ++i) offset += index[i] * strides[i];
  return offset;
}

// dst[to] = src[from], element-sized byte copy (equal dtypes): data
// movement never needs to know the type.
inline void CopyElement(const Literal& src, int64_t from, Literal& dst,
                        int64_t to) {
  const size_t size = dtype_size(src.dtype());
  std::memcpy(static_cast<uint8_t*>(dst.untyped_mutable_data()) + to * size,
              static_cast<const uint8_t*>(src.untyped_data()) + from * size,
              size);
}

inline int64_t Clamp(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

}  // namespace baton::compiler::interpreter
