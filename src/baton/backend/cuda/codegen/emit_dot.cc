// dot_general: result [batch..., lhs free..., rhs free...] as
// c[B][M][N] = sum over k of a[B][M][k] * b[B][k][N].
//
// With a GEMM library (EmitOptions::library_gemm) and a float dtype, a
// kGemm action multiplies the operands as row-major [B, M, K] (or, with
// trans_a, [B, K, M]) and [B, K, N] (or, trans_b, [B, N, K]) -- as they are
// when their memory already has one of those orders (size-1 dimensions
// aside, a reshape of it): the GEMM library transposes as it reads, so
// x^T y and x y^T, which every matmul's gradient has, need no kernel --
// else the operand is brought to the first order by a transpose kernel into
// scratch. Otherwise one work item per output element loops
// k in order over the operands in place (through their strides), with the
// CPU's arithmetic (kernels/dot.cc): integers wrap in their own type, bool
// is or-of-ands, float16/bfloat16 accumulate in float (the CPU widens them
// to float32 and calls sgemm) and round once at the end. Float results
// differ from the CPU's (OpenBLAS) in summation order only.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "baton/backend/cuda/codegen/elementwise_chain.h"
#include "baton/core/dot_dimensions.h"

namespace baton::cuda::codegen {

using compiler::Instruction;
using compiler::Step;
using compiler::ValueId;

namespace {

// The walk over `dims` of an operand of `shape` (row-major strides).
std::vector<StridedDim> Walk(const Shape& shape,
                             const std::vector<int64_t>& dims) {
  const std::vector<int64_t> strides = shape.strides();
  std::vector<StridedDim> walk;
  for (int64_t d : dims) {
    walk.push_back(
        {shape[static_cast<int>(d)], strides[static_cast<size_t>(d)]});
  }
  return walk;
}

// Operand `v` with its dimensions in `order`, row-major: its own storage
// when that is its layout already, else a transposed copy in scratch.
Result<BufferRef> InOrder(EmitContext& ctx, ValueId v,
                          const std::vector<int64_t>& order) {
  const compiler::ValueType& type = ctx.program().type(v);
  if (IsMemoryOrder(type.shape, order)) return ctx.Value(v);
  const int64_t n = type.num_elements();
  const BufferRef copy =
      ctx.Scratch(n * static_cast<int64_t>(dtype_size(type.dtype)));
  EmitContext::Kernel k = ctx.NewKernel(n);
  k.body += "  " +
            ctx.StoreRef(
                k, copy, type.dtype, "i",
                ctx.Load(k, v, StridedOffset(Walk(type.shape, order), "i"))) +
            "\n";
  BATON_RETURN_IF_ERROR(ctx.Finish(std::move(k)));
  return copy;
}

}  // namespace

Status EmitDotStep(EmitContext& ctx, const Step& step) {
  const compiler::Program& program = ctx.program();
  const Instruction& inst = program.instruction(step.result);
  const auto* attrs = inst.attrs_if<compiler::DotGeneralAttrs>();
  if (attrs == nullptr) {
    return ctx.NotOnCuda(std::string(compiler::op_kind_name(inst.kind())) +
                             " %" + std::to_string(step.result),
                         "not a dot_general");
  }
  const ValueId lhs = inst.operands[0], rhs = inst.operands[1];
  const Shape& ls = program.type(lhs).shape;
  const Shape& rs = program.type(rhs).shape;
  const std::vector<int64_t> lhs_free =
      DotFreeDimensions(ls.rank(), attrs->lhs_batch, attrs->lhs_contracting);
  const std::vector<int64_t> rhs_free =
      DotFreeDimensions(rs.rank(), attrs->rhs_batch, attrs->rhs_contracting);
  const int64_t batch = DimsSize(ls, attrs->lhs_batch);
  const int64_t m = DimsSize(ls, lhs_free);
  const int64_t n = DimsSize(rs, rhs_free);
  const int64_t k_size = DimsSize(ls, attrs->lhs_contracting);
  const DType dtype = inst.type.dtype;
  const std::string type = EmitContext::StorageType(dtype);
  const int64_t outputs = batch * m * n;
  if (outputs == 0) return OkStatus();
  if (k_size == 0) {  // an empty sum: zeros (all-zero bits, as the CPU's)
    EmitContext::Kernel k = ctx.NewKernel(outputs);
    k.body += "  " + ctx.Store(k, step.result, "i", type + "()") + "\n";
    return ctx.Finish(std::move(k));
  }

  if (ctx.options().library_gemm && is_floating(dtype)) {
    // [B, K, M] / [B, N, K] in memory: read transposed by the library.
    const bool trans_a =
        MatrixLayoutOf(ls, attrs->lhs_batch, lhs_free, attrs->lhs_contracting) ==
        MatrixLayout::kTransposed;
    const bool trans_b =
        MatrixLayoutOf(rs, attrs->rhs_batch, attrs->rhs_contracting, rhs_free) ==
        MatrixLayout::kTransposed;
    BufferRef a = ctx.Value(lhs), b = ctx.Value(rhs);
    if (!trans_a) {
      BATON_ASSIGN_OR_RETURN(
          a, InOrder(ctx, lhs,
                     ConcatDims(attrs->lhs_batch, lhs_free, attrs->lhs_contracting)));
    }
    if (!trans_b) {
      BATON_ASSIGN_OR_RETURN(
          b, InOrder(ctx, rhs,
                     ConcatDims(attrs->rhs_batch, attrs->rhs_contracting, rhs_free)));
    }
    ctx.Gemm(dtype, batch, m, n, k_size, a, b, ctx.Value(step.result), trans_a,
             trans_b);
    return OkStatus();
  }

  // One work item per output element (b, mi, ni) of [batch, m, n].
  const DType acc_dtype =
      (dtype == DType::kFloat16 || dtype == DType::kBFloat16) ? DType::kFloat32
                                                              : dtype;
  const std::string acc = EmitContext::StorageType(acc_dtype);
  const std::string add = "bt::binary<bt::binary_op::kAdd, " + acc + ">";
  const std::string mul = "bt::binary<bt::binary_op::kMul, " + acc + ">";
  EmitContext::Kernel k = ctx.NewKernel(outputs);
  // Coordinates declared only where an offset reads them (NVRTC warns of
  // unused locals): a size-1 group's offset is "0".
  const std::string lb = StridedOffset(Walk(ls, attrs->lhs_batch), "b");
  const std::string rb = StridedOffset(Walk(rs, attrs->rhs_batch), "b");
  const std::string lm = StridedOffset(Walk(ls, lhs_free), "mi");
  const std::string rn = StridedOffset(Walk(rs, rhs_free), "ni");
  if (lb != "0" || rb != "0") {
    k.body += "  const idx b = i / " + EmitContext::Int(m * n) + ";\n";
  }
  if (lm != "0") {
    k.body += "  const idx mi = (i / " + EmitContext::Int(n) + ") % " +
              EmitContext::Int(m) + ";\n";
  }
  if (rn != "0") {
    k.body += "  const idx ni = i % " + EmitContext::Int(n) + ";\n";
  }
  k.body += "  const idx l_base = " + lb + " + " + lm + ";\n";
  k.body += "  const idx r_base = " + rb + " + " + rn + ";\n";
  k.body += "  " + acc + " acc = " + acc + "(0);\n";
  k.body +=
      "  for (idx kk = 0; kk < " + EmitContext::Int(k_size) + "; ++kk) {\n";
  const std::string x = ctx.Load(
      k, lhs,
      "l_base + " + StridedOffset(Walk(ls, attrs->lhs_contracting), "kk"));
  const std::string y = ctx.Load(
      k, rhs,
      "r_base + " + StridedOffset(Walk(rs, attrs->rhs_contracting), "kk"));
  k.body += "    acc = " + add + "(acc, " + mul + "(bt::to_compute(" + x +
            "), bt::to_compute(" + y + ")));\n";
  k.body += "  }\n";
  k.body +=
      "  " +
      ctx.Store(k, step.result, "i", "bt::from_compute<" + type + ">(acc)") +
      "\n";
  return ctx.Finish(std::move(k));
}

}  // namespace baton::cuda::codegen
