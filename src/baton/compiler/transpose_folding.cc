// Transpose folding: a dot_general reads a transposed operand in place.
//
// `x @ w.T` traces as transpose(w) and a dot_general of it, so the program
// copied w (a temporary the size of w, written and read again) only for
// the GEMM to read the copy as it would have read w with its transpose
// flag. For each dot_general operand made by a transpose, the dot instead
// names the transpose's operand, with every batch and contracting dimension
// mapped through the permutation, when
//   - the result keeps its order: the operand's free dimensions, which the
//     result lists in operand order, stay in increasing order; and
//   - the GEMM then reads the operand in place (core/dot_dimensions.h's
//     MatrixLayoutOf): as row-major matrices, or for floating and complex
//     dtypes also transposed -- the layouts the CPU kernel and the CUDA
//     emitter hand to their GEMM libraries without a copy.
// The transpose itself is left for its other users; dead-code elimination
// removes it when the dot was the only one (passes.h's Optimize runs it
// next). Values keep their ids, so the program's shape does not change.
#include <vector>

#include "baton/compiler/passes.h"
#include "baton/core/dot_dimensions.h"

namespace baton::compiler {
namespace {

std::vector<int64_t> Mapped(const std::vector<int64_t>& dims,
                            const std::vector<int64_t>& permutation) {
  std::vector<int64_t> out;
  out.reserve(dims.size());
  for (int64_t d : dims) out.push_back(permutation[static_cast<size_t>(d)]);
  return out;
}

bool Increasing(const std::vector<int64_t>& dims) {
  for (size_t i = 1; i < dims.size(); ++i) {
    if (dims[i] <= dims[i - 1]) return false;
  }
  return true;
}

// One dot_general operand and its batch and contracting dimensions, as a
// candidate for reading through the transpose that made it.
struct OperandSide {
  ValueId value;
  std::vector<int64_t>* batch;
  std::vector<int64_t>* contracting;
  bool rows_are_free;  // lhs: [batch, free, contracting]; rhs: [batch, contracting, free]
};

// Folds `side` through its transpose when that keeps the result's order and
// the GEMM reads the transpose's operand in place; returns the operand the
// dot should name.
ValueId Fold(const Program& program, OperandSide side) {
  const Instruction& made_by = program.instruction(side.value);
  const auto* transpose = made_by.attrs_if<TransposeAttrs>();
  if (transpose == nullptr) return side.value;
  const std::vector<int64_t>& perm = transpose->permutation;
  const int rank = static_cast<int>(perm.size());
  const std::vector<int64_t> free =
      Mapped(DotFreeDimensions(rank, *side.batch, *side.contracting), perm);
  if (!Increasing(free)) return side.value;
  std::vector<int64_t> batch = Mapped(*side.batch, perm);
  std::vector<int64_t> contracting = Mapped(*side.contracting, perm);
  const ValueId source = made_by.operands[0];
  const Shape& shape = program.type(source).shape;
  const MatrixLayout layout =
      side.rows_are_free ? MatrixLayoutOf(shape, batch, free, contracting)
                         : MatrixLayoutOf(shape, batch, contracting, free);
  const DType dtype = made_by.type.dtype;
  const bool gemm_transposes = is_floating(dtype) || is_complex(dtype);
  if (layout == MatrixLayout::kOther ||
      (layout == MatrixLayout::kTransposed && !gemm_transposes)) {
    return side.value;
  }
  *side.batch = std::move(batch);
  *side.contracting = std::move(contracting);
  return source;
}

}  // namespace

Program FoldTransposesIntoDots(const Program& program) {
  Program out;
  for (ValueId v = 0; v < program.num_values(); ++v) {
    const Instruction& inst = program.instruction(v);
    // Re-adding checked instructions of a valid program cannot fail, and a
    // fold keeps the dot's result type (its order is kept by construction).
    if (inst.kind() == OpKind::kParameter) {
      (void)out.AddParameter(inst.type).value();
      continue;
    }
    const auto* dot = inst.attrs_if<DotGeneralAttrs>();
    if (dot == nullptr) {
      (void)out.Add(inst.attrs, inst.operands).value();
      continue;
    }
    DotGeneralAttrs folded = *dot;
    OperandList operands = inst.operands;
    operands[0] = Fold(program, {operands[0], &folded.lhs_batch,
                                 &folded.lhs_contracting, /*rows_are_free=*/true});
    operands[1] = Fold(program, {operands[1], &folded.rhs_batch,
                                 &folded.rhs_contracting, /*rows_are_free=*/false});
    (void)out.Add(std::move(folded), std::move(operands)).value();
  }
  (void)out.SetOutputs(program.outputs());
  return out;
}

}  // namespace baton::compiler
