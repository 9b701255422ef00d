// Reference interpreter: gather (numpy take, out-of-range indices read as
// GatherBounds says) and scatter (out-of-range indices dropped, duplicates
// combined in row-major order of the updates).
#include <cstring>
#include <type_traits>

#include "baton/compiler/interpreter_ops.h"
#include "baton/core/dtype_dispatch.h"
#include "baton/core/scalar_math.h"

namespace baton::compiler::interpreter {
namespace {

// Splits an index of gather's result (operand[:axis] + indices +
// operand[axis+1:]) into the position in `indices` and the operand index
// with the axis entry left for the caller to fill.
struct SplitIndex {
  int64_t indices_offset;
  std::vector<int64_t> operand_index;
};

class GatherIndexing {
 public:
  GatherIndexing(const Shape& operand, const Shape& indices, int64_t axis)
      : axis_(static_cast<int>(axis)),
        indices_rank_(indices.rank()),
        indices_strides_(indices.strides()),
        operand_rank_(operand.rank()) {}

  SplitIndex Split(const std::vector<int64_t>& result_index) const {
    SplitIndex s{0, std::vector<int64_t>(operand_rank_)};
    for (int k = 0; k < axis_; ++k) s.operand_index[k] = result_index[k];
    for (int k = 0; k < indices_rank_; ++k) {
      s.indices_offset += result_index[axis_ + k] * indices_strides_[k];
    }
    for (int k = axis_ + 1; k < operand_rank_; ++k) {
      s.operand_index[k] = result_index[k - 1 + indices_rank_];
    }
    return s;
  }

 private:
  int axis_;
  int indices_rank_;
  std::vector<int64_t> indices_strides_;
  int operand_rank_;
};

}  // namespace

Literal EvalGather(const Instruction& inst, const Operands& in) {
  const auto& a = inst.attrs_as<GatherAttrs>();
  const int64_t axis = a.axis;
  const Literal &x = *in[0], &indices = *in[1];
  const GatherIndexing indexing(x.shape(), indices.shape(), axis);
  const int64_t size = x.shape()[static_cast<int>(axis)];
  const std::vector<int64_t> strides = x.shape().strides();
  const size_t elem = dtype_size(x.dtype());
  Literal out = NewResult(inst);
  ForEachIndex(out.shape(), [&](const std::vector<int64_t>& index, int64_t i) {
    SplitIndex s = indexing.Split(index);
    // In the index's own type, as the kernels read it (an unsigned index
    // above int64's range is too large, not negative).
    const int64_t at = VisitDType(indices.dtype(), [&](auto tag) -> int64_t {
      using I = typename decltype(tag)::type;
      if constexpr (std::is_integral_v<I> && !std::is_same_v<I, bool>) {
        return a.bounds.Position(indices.data<I>()[s.indices_offset], size);
      } else {
        return a.bounds.Position(indices.GetAsInt64(s.indices_offset), size);
      }
    });
    if (at < 0) {  // the fill value (GatherBounds::fill_bits' low bytes)
      std::memcpy(static_cast<char*>(out.untyped_mutable_data()) + i * elem,
                  &a.bounds.fill_bits, elem);
      return;
    }
    s.operand_index[axis] = at;
    CopyElement(x, Offset(s.operand_index, strides), out, i);
  });
  return out;
}

Literal EvalScatter(const Instruction& inst, const Operands& in) {
  const auto& a = inst.attrs_as<ScatterAttrs>();
  const Literal &indices = *in[1], &updates = *in[2];
  const GatherIndexing indexing(in[0]->shape(), indices.shape(), a.axis);
  const int64_t size = in[0]->shape()[static_cast<int>(a.axis)];
  const std::vector<int64_t> strides = in[0]->shape().strides();
  Literal out = *in[0];
  VisitDType(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* dst = out.mutable_data<T>();
    const T* src = updates.data<T>();
    ForEachIndex(
        updates.shape(), [&](const std::vector<int64_t>& index, int64_t i) {
          SplitIndex s = indexing.Split(index);
          const int64_t k = indices.GetAsInt64(s.indices_offset);
          if (k < 0 || k >= size) return;  // dropped, as in JAX
          s.operand_index[a.axis] = k;
          T& d = dst[Offset(s.operand_index, strides)];
          using C = ComputeType<T>;
          const C old = ToCompute(d), upd = ToCompute(src[i]);
          switch (a.mode) {
            case ScatterMode::kSet:
              d = src[i];
              break;
            case ScatterMode::kAdd:
              d = FromCompute<T>(scalar::Binary<BinaryOp::kAdd, C>(old, upd));
              break;
            case ScatterMode::kMul:
              d = FromCompute<T>(scalar::Binary<BinaryOp::kMul, C>(old, upd));
              break;
            case ScatterMode::kMin:
              d = FromCompute<T>(scalar::Binary<BinaryOp::kMin, C>(old, upd));
              break;
            case ScatterMode::kMax:
              d = FromCompute<T>(scalar::Binary<BinaryOp::kMax, C>(old, upd));
              break;
          }
        });
  });
  return out;
}

}  // namespace baton::compiler::interpreter
