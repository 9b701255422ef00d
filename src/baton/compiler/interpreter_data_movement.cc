// Reference interpreter: ops that only move elements (no arithmetic), done
// as element-sized byte copies from an output index to an operand index.
#include <algorithm>

#include "baton/compiler/interpreter_ops.h"

namespace baton::compiler::interpreter {
namespace {

// Start indices are operands first..first+rank-1, clamped so that a block
// of `sizes` fits in `shape` (StableHLO's dynamic_slice rule).
std::vector<int64_t> ClampedStarts(const Operands& in, int first,
                                   const Shape& shape,
                                   const std::vector<int64_t>& sizes) {
  std::vector<int64_t> starts(shape.rank());
  for (int i = 0; i < shape.rank(); ++i) {
    starts[i] = Clamp(in[first + i]->GetAsInt64(0), 0, shape[i] - sizes[i]);
  }
  return starts;
}

}  // namespace

Literal EvalBroadcastInDim(const Instruction& inst, const Operands& in) {
  const auto& a = inst.attrs_as<BroadcastInDimAttrs>();
  const Literal& x = *in[0];
  const std::vector<int64_t> strides = x.shape().strides();
  Literal out = NewResult(inst);
  std::vector<int64_t> src(x.shape().rank());
  ForEachIndex(out.shape(), [&](const std::vector<int64_t>& index, int64_t i) {
    for (int k = 0; k < x.shape().rank(); ++k) {
      // A size-1 operand dimension repeats along its result dimension.
      src[k] = x.shape()[k] == 1 ? 0 : index[a.broadcast_dimensions[k]];
    }
    CopyElement(x, Offset(src, strides), out, i);
  });
  return out;
}

Literal EvalReshape(const Instruction& inst, const Operands& in) {
  // Row-major order is unchanged: the bytes are the same.
  return Literal::FromBytes(inst.type.shape, inst.type.dtype,
                            in[0]->untyped_data());
}

Literal EvalTranspose(const Instruction& inst, const Operands& in) {
  const auto& perm = inst.attrs_as<TransposeAttrs>().permutation;
  const Literal& x = *in[0];
  const std::vector<int64_t> strides = x.shape().strides();
  Literal out = NewResult(inst);
  std::vector<int64_t> src(x.shape().rank());
  ForEachIndex(out.shape(), [&](const std::vector<int64_t>& index, int64_t i) {
    for (size_t k = 0; k < perm.size(); ++k) src[perm[k]] = index[k];
    CopyElement(x, Offset(src, strides), out, i);
  });
  return out;
}

Literal EvalSlice(const Instruction& inst, const Operands& in) {
  const auto& a = inst.attrs_as<SliceAttrs>();
  const Literal& x = *in[0];
  const std::vector<int64_t> strides = x.shape().strides();
  Literal out = NewResult(inst);
  std::vector<int64_t> src(x.shape().rank());
  ForEachIndex(out.shape(), [&](const std::vector<int64_t>& index, int64_t i) {
    for (size_t k = 0; k < src.size(); ++k) {
      src[k] = a.start[k] + index[k] * a.stride[k];
    }
    CopyElement(x, Offset(src, strides), out, i);
  });
  return out;
}

Literal EvalDynamicSlice(const Instruction& inst, const Operands& in) {
  const Literal& x = *in[0];
  const std::vector<int64_t> starts = ClampedStarts(
      in, 1, x.shape(), inst.attrs_as<DynamicSliceAttrs>().slice_sizes);
  const std::vector<int64_t> strides = x.shape().strides();
  Literal out = NewResult(inst);
  std::vector<int64_t> src(x.shape().rank());
  ForEachIndex(out.shape(), [&](const std::vector<int64_t>& index, int64_t i) {
    for (size_t k = 0; k < src.size(); ++k) src[k] = starts[k] + index[k];
    CopyElement(x, Offset(src, strides), out, i);
  });
  return out;
}

Literal EvalDynamicUpdateSlice(const Instruction& inst, const Operands& in) {
  const Literal &x = *in[0], &update = *in[1];
  const std::vector<int64_t> starts =
      ClampedStarts(in, 2, x.shape(), update.shape().dims());
  const std::vector<int64_t> strides = x.shape().strides();
  Literal out = *in[0];
  std::vector<int64_t> dst(x.shape().rank());
  ForEachIndex(update.shape(),
               [&](const std::vector<int64_t>& index, int64_t i) {
                 for (size_t k = 0; k < dst.size(); ++k)
                   dst[k] = starts[k] + index[k];
                 CopyElement(update, i, out, Offset(dst, strides));
               });
  return out;
}

Literal EvalConcatenate(const Instruction& inst, const Operands& in) {
  const int64_t dim = inst.attrs_as<ConcatenateAttrs>().dimension;
  Literal out = NewResult(inst);
  const std::vector<int64_t> strides = out.shape().strides();
  int64_t offset = 0;  // where the current operand starts along `dim`
  for (const Literal* x : in) {
    ForEachIndex(x->shape(), [&](const std::vector<int64_t>& index, int64_t i) {
      std::vector<int64_t> dst = index;
      dst[dim] += offset;
      CopyElement(*x, i, out, Offset(dst, strides));
    });
    offset += x->shape()[static_cast<int>(dim)];
  }
  return out;
}

Literal EvalPad(const Instruction& inst, const Operands& in) {
  const auto& a = inst.attrs_as<PadAttrs>();
  const Literal &x = *in[0], &value = *in[1];
  Literal out = NewResult(inst);
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    CopyElement(value, 0, out, i);
  }
  const std::vector<int64_t> strides = out.shape().strides();
  std::vector<int64_t> dst(x.shape().rank());
  ForEachIndex(x.shape(), [&](const std::vector<int64_t>& index, int64_t i) {
    for (size_t k = 0; k < dst.size(); ++k) {
      dst[k] = a.low[k] + index[k] * (a.interior[k] + 1);
      // Negative low/high crop: elements that land outside are dropped.
      if (dst[k] < 0 || dst[k] >= out.shape()[static_cast<int>(k)]) return;
    }
    CopyElement(x, i, out, Offset(dst, strides));
  });
  return out;
}

}  // namespace baton::compiler::interpreter
