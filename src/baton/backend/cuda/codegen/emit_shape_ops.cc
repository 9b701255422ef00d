// Shape and indexing ops: broadcast_in_dim, transpose, slice, pad,
// concatenate, dynamic_slice, dynamic_update_slice, gather (the general
// axis form; table gathers are elementwise), scatter, and the reshape and
// transfer copies.
//
// Every kernel but scatter's has one work item per element it writes, and
// moves storage values (no conversion), so the results are the CPU's bit
// for bit (backend/cpu/kernels/shape_ops.cc, indexing.cc). Indices read on
// the device (dynamic starts, gather and scatter indices) are widened to
// bt::i64 first, as the CPU's ReadIndex does, and narrowed to idx once clamped
// or range-checked; offsets are idx (emit_context.h).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "baton/backend/cuda/codegen/elementwise_chain.h"
#include "baton/backend/cuda/codegen/emit_context.h"

namespace baton::cuda::codegen {

using compiler::Instruction;
using compiler::OpKind;
using compiler::Step;
using compiler::ValueId;

namespace {

// Operands one concatenate kernel reads: with the result, well inside
// kMaxKernelArgs pointers. More operands are split over several kernels.
constexpr int kConcatOperandsPerKernel = 60;

const std::vector<int64_t>& DimsOf(const EmitContext& ctx, ValueId v) {
  return ctx.program().type(v).shape.dims();
}

int64_t Product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= dims[i];
  return p;
}

std::string I(int64_t v) { return EmitContext::Int(v); }

// An integer scalar operand (a dynamic start) as bt::i64: sign- or
// zero-extended from its own type, as the CPU's ReadIndex.
std::string ReadScalar(EmitContext& ctx, EmitContext::Kernel& k, ValueId v) {
  return "((bt::i64)" + ctx.Load(k, v, "0") + ")";
}

// Appends `dst[i] = src[<offset>]`, the kernel of every pure data movement
// whose result element i reads one operand element.
Status EmitGather1(EmitContext& ctx, EmitContext::Kernel k, ValueId result,
                   ValueId operand, const std::string& offset) {
  k.body +=
      "  " + ctx.Store(k, result, "i", ctx.Load(k, operand, offset)) + "\n";
  return ctx.Finish(std::move(k));
}

// result[i] = operand[base + f(i)] where f is a strided walk over the
// result's dimensions (broadcast_in_dim, transpose, slice): `strides`
// gives, per result dimension, the operand stride it advances by.
Status EmitStridedCopy(EmitContext& ctx, const Step& step, ValueId operand,
                       const std::vector<int64_t>& strides, int64_t base) {
  const std::vector<int64_t>& dims = DimsOf(ctx, step.result);
  std::vector<StridedDim> walk;
  for (size_t d = 0; d < dims.size(); ++d)
    walk.push_back({dims[d], strides[d]});
  const int64_t n = ctx.program().type(step.result).num_elements();
  if (n == 0) return OkStatus();
  EmitContext::Kernel k = ctx.NewKernel(n);
  std::string offset = StridedOffset(walk, "i");
  if (base != 0) offset = "(" + I(base) + " + " + offset + ")";
  return EmitGather1(ctx, std::move(k), step.result, operand, offset);
}

Status EmitBroadcastInDim(EmitContext& ctx, const Step& step,
                          const Instruction& inst) {
  const auto& a = inst.attrs_as<compiler::BroadcastInDimAttrs>();
  const ValueId x = inst.operands[0];
  const std::vector<int64_t>& in = DimsOf(ctx, x);
  const std::vector<int64_t> in_strides = EmitContext::Strides(in);
  // A size-1 operand dimension repeats: stride 0 along its result dim, as
  // are result dimensions no operand dimension maps to.
  std::vector<int64_t> strides(DimsOf(ctx, step.result).size(), 0);
  for (size_t k = 0; k < in.size(); ++k) {
    if (in[k] != 1) strides[a.broadcast_dimensions[k]] = in_strides[k];
  }
  return EmitStridedCopy(ctx, step, x, strides, 0);
}

Status EmitTranspose(EmitContext& ctx, const Step& step,
                     const Instruction& inst) {
  const auto& perm = inst.attrs_as<compiler::TransposeAttrs>().permutation;
  const ValueId x = inst.operands[0];
  const std::vector<int64_t> in_strides = EmitContext::Strides(DimsOf(ctx, x));
  std::vector<int64_t> strides;
  for (int64_t p : perm) strides.push_back(in_strides[p]);
  return EmitStridedCopy(ctx, step, x, strides, 0);
}

Status EmitSlice(EmitContext& ctx, const Step& step, const Instruction& inst) {
  const auto& a = inst.attrs_as<compiler::SliceAttrs>();
  const ValueId x = inst.operands[0];
  const std::vector<int64_t> in_strides = EmitContext::Strides(DimsOf(ctx, x));
  const std::vector<int64_t>& out = DimsOf(ctx, step.result);
  std::vector<int64_t> strides(out.size(), 0);
  int64_t base = 0;
  for (size_t d = 0; d < out.size(); ++d) {
    // A step taken at most once is never used and may be too large to
    // multiply (shape inference allows any stride >= 1); otherwise
    // stride * in_stride < dim * in_stride fits.
    if (out[d] > 1) strides[d] = a.stride[d] * in_strides[d];
    base += a.start[d] * in_strides[d];
  }
  return EmitStridedCopy(ctx, step, x, strides, base);
}

// Each result coordinate r maps to operand coordinate (r - low) / (interior
// + 1) when that divides exactly and lands inside the operand; every other
// element is the padding value (negative low/high crop, so the same test
// covers them).
Status EmitPad(EmitContext& ctx, const Step& step, const Instruction& inst) {
  const auto& a = inst.attrs_as<compiler::PadAttrs>();
  const ValueId x = inst.operands[0];
  const ValueId value = inst.operands[1];
  const std::vector<int64_t>& in = DimsOf(ctx, x);
  const std::vector<int64_t>& out = DimsOf(ctx, step.result);
  const std::vector<int64_t> in_strides = EmitContext::Strides(in);
  const int64_t n = ctx.program().type(step.result).num_elements();
  if (n == 0) return OkStatus();
  EmitContext::Kernel k = ctx.NewKernel(n);
  const std::string pad = ctx.Load(k, value, "0");
  if (ctx.program().type(x).num_elements() == 0) {
    k.body += "  " + ctx.Store(k, step.result, "i", pad) + "\n";
    return ctx.Finish(std::move(k));
  }
  k.body += EmitContext::Unravel(out, "i", "r");
  k.body += "  bool in = true;\n  idx src = 0;\n";
  for (size_t d = 0; d < out.size(); ++d) {
    const std::string r = "r" + std::to_string(d);
    const int64_t step_d = a.interior[d] + 1;
    // The input elements that land inside the output are those with
    // 0 <= p < n * step and p % step == 0; `src` is only accumulated for
    // them, so it never overflows on a cropped position.
    const std::string p = "p" + std::to_string(d);
    // n * step - interior = n + (n - 1) * interior, which shape inference
    // checked fits (n * step itself may not).
    std::string bad = p + " >= " + I(in[d] + (in[d] - 1) * a.interior[d]);
    if (a.low[d] > 0) bad = p + " < 0 || " + bad;
    std::string coordinate = p;
    if (step_d != 1) {
      bad += " || " + p + " % " + I(step_d) + " != 0";
      coordinate = "(" + p + " / " + I(step_d) + ")";
    }
    k.body += "  const idx " + p + " = " + r + " - " + I(a.low[d]) + ";\n";
    k.body += "  if (" + bad + ") in = false;\n";
    if (in[d] > 1) {
      k.body +=
          "  else src += " + coordinate + " * " + I(in_strides[d]) + ";\n";
    }
  }
  k.body += "  " +
            ctx.Store(k, step.result, "i",
                      "in ? " + ctx.Load(k, x, "src") + " : " + pad) +
            "\n";
  return ctx.Finish(std::move(k));
}

// The result, as [outer, row] with row the operands' [outer, chunk] blocks
// side by side, is written by one kernel per group of up to
// kConcatOperandsPerKernel operands, each over its group's columns: an
// if-chain picks the operand a column falls in.
Status EmitConcatenate(EmitContext& ctx, const Step& step,
                       const Instruction& inst) {
  const int dim =
      static_cast<int>(inst.attrs_as<compiler::ConcatenateAttrs>().dimension);
  const std::vector<int64_t>& out = DimsOf(ctx, step.result);
  const int64_t outer = Product(out, 0, dim);
  const int64_t inner = Product(out, dim + 1, out.size());
  const int64_t row = out[dim] * inner;
  if (outer * row == 0) return OkStatus();
  struct Part {
    ValueId value;
    int64_t begin, chunk;  // columns [begin, begin + chunk) of a row
  };
  std::vector<Part> parts;
  int64_t column = 0;
  for (ValueId v : inst.operands) {
    const int64_t chunk = DimsOf(ctx, v)[dim] * inner;
    if (chunk > 0) parts.push_back({v, column, chunk});  // empty: no columns
    column += chunk;
  }
  for (size_t g = 0; g < parts.size(); g += kConcatOperandsPerKernel) {
    const size_t end = std::min(
        parts.size(), g + static_cast<size_t>(kConcatOperandsPerKernel));
    const int64_t first = parts[g].begin;
    const int64_t width = parts[end - 1].begin + parts[end - 1].chunk - first;
    EmitContext::Kernel k = ctx.NewKernel(outer * width);
    k.body += "  const idx o = i / " + I(width) + ";\n";
    k.body += "  const idx c = i % " + I(width) + ";\n";
    k.body +=
        "  const idx dst = o * " + I(row) + " + " + I(first) + " + c;\n";
    for (size_t p = g; p < end; ++p) {
      const Part& part = parts[p];
      const int64_t lo = part.begin - first;
      const std::string src = "o * " + I(part.chunk) + " + (c - " + I(lo) + ")";
      const std::string store =
          ctx.Store(k, step.result, "dst", ctx.Load(k, part.value, src));
      if (p + 1 == end) {
        k.body += p == g ? "  " + store + "\n" : "  else " + store + "\n";
      } else {
        k.body += std::string(p == g ? "  if" : "  else if") + " (c < " +
                  I(lo + part.chunk) + ") " + store + "\n";
      }
    }
    BATON_RETURN_IF_ERROR(ctx.Finish(std::move(k)));
  }
  return OkStatus();
}

// Declares s0..s{rank-1}, the starts of a block of `size` in `dims` read
// from operands first_start.. and clamped to [0, dim - size] as the CPU
// (std::clamp; dim >= size, so the range is never empty).
void EmitStarts(EmitContext& ctx, EmitContext::Kernel& k,
                const Instruction& inst, int first_start,
                const std::vector<int64_t>& dims,
                const std::vector<int64_t>& size) {
  for (size_t d = 0; d < dims.size(); ++d) {
    const ValueId start = inst.operands[first_start + static_cast<int>(d)];
    k.body += "  const idx s" + std::to_string(d) + " = bt::clamp_index(" +
              ReadScalar(ctx, k, start) + ", 0, " + I(dims[d] - size[d]) +
              ");\n";
  }
}

// sum of s_d * strides[d]: the offset of the block's first element.
std::string StartOffset(const std::vector<int64_t>& strides) {
  std::string sum = "0";
  for (size_t d = 0; d < strides.size(); ++d) {
    sum += " + s";
    sum += std::to_string(d);
    sum += " * " + I(strides[d]);
  }
  return sum;
}

// Walk over a block of `size` in an array of row-major `strides`.
std::string BlockOffset(const std::vector<int64_t>& size,
                        const std::vector<int64_t>& strides) {
  std::vector<StridedDim> walk;
  for (size_t d = 0; d < size.size(); ++d)
    walk.push_back({size[d], strides[d]});
  return StridedOffset(walk, "i");
}

// Starts are read on the device by every work item (a few scalar loads
// that hit the cache), so the host never waits for them.
Status EmitDynamicSlice(EmitContext& ctx, const Step& step,
                        const Instruction& inst) {
  const ValueId x = inst.operands[0];
  const std::vector<int64_t>& dims = DimsOf(ctx, x);
  const std::vector<int64_t>& size = DimsOf(ctx, step.result);
  const std::vector<int64_t> strides = EmitContext::Strides(dims);
  const int64_t n = ctx.program().type(step.result).num_elements();
  if (n == 0) return OkStatus();
  EmitContext::Kernel k = ctx.NewKernel(n);
  EmitStarts(ctx, k, inst, 1, dims, size);
  const std::string offset =
      "(" + StartOffset(strides) + " + " + BlockOffset(size, strides) + ")";
  return EmitGather1(ctx, std::move(k), step.result, x, offset);
}

// The result is the operand (a copy, skipped when the result was assigned
// the operand's storage) with the update's elements written over it. The
// kernel reads only the update and the starts, which buffer assignment
// never places in the result's storage, so the in-place form is safe.
Status EmitDynamicUpdateSlice(EmitContext& ctx, const Step& step,
                              const Instruction& inst) {
  const ValueId x = inst.operands[0];
  const ValueId update = inst.operands[1];
  ctx.Copy(ctx.Value(step.result), ctx.Value(x),
           ctx.program().type(step.result).byte_size());
  const std::vector<int64_t>& dims = DimsOf(ctx, x);
  const std::vector<int64_t>& size = DimsOf(ctx, update);
  const std::vector<int64_t> strides = EmitContext::Strides(dims);
  const int64_t n = ctx.program().type(update).num_elements();
  if (n == 0) return OkStatus();
  EmitContext::Kernel k = ctx.NewKernel(n);
  EmitStarts(ctx, k, inst, 2, dims, size);
  const std::string offset =
      "(" + StartOffset(strides) + " + " + BlockOffset(size, strides) + ")";
  k.body +=
      "  " + ctx.Store(k, step.result, offset, ctx.Load(k, update, "i")) + "\n";
  return ctx.Finish(std::move(k));
}

// The operand seen as [outer, d, inner] around `axis`, the index array as
// n elements (gather's result and scatter's updates are [outer, n, inner]).
struct AxisSplit {
  int64_t outer, d, inner, n;
};
AxisSplit SplitAt(const EmitContext& ctx, ValueId operand, ValueId indices,
                  int64_t axis) {
  const std::vector<int64_t>& dims = DimsOf(ctx, operand);
  const size_t ax = static_cast<size_t>(axis);
  return {Product(dims, 0, ax), dims[ax], Product(dims, ax + 1, dims.size()),
          ctx.program().type(indices).num_elements()};
}

// Result element (o, j, c) is operand element (o, p(indices[j]), c), p the
// gather's GatherBounds::Position: by default the index clamped to
// [0, d - 1] as the CPU's ClampIndex (negative -> 0, too large -> d - 1);
// with bounds, negatives wrapped first and the rest read as the fill. A
// non-empty result has d >= 1 unless it fills (shape inference).
Status EmitGather(EmitContext& ctx, const Step& step, const Instruction& inst) {
  const ValueId x = inst.operands[0];
  const ValueId indices = inst.operands[1];
  const auto& a = inst.attrs_as<compiler::GatherAttrs>();
  const AxisSplit s = SplitAt(ctx, x, indices, a.axis);
  const int64_t n = ctx.program().type(step.result).num_elements();
  if (n == 0) return OkStatus();
  const DType dtype = ctx.program().type(step.result).dtype;
  EmitContext::Kernel k = ctx.NewKernel(n);
  if (s.d == 0) {  // nothing to read: every element is the fill
    k.body += "  " +
              ctx.Store(k, step.result, "i",
                        EmitContext::ElementOfBits(dtype, a.bounds.fill_bits)) +
              "\n";
    return ctx.Finish(std::move(k));
  }
  k.body += "  const idx o = i / " + I(s.n * s.inner) + ";\n";
  k.body += "  const idx j = (i / " + I(s.inner) + ") % " + I(s.n) + ";\n";
  k.body += "  const idx c = i % " + I(s.inner) + ";\n";
  k.body += EmitContext::GatherPosition("t", ctx.Load(k, indices, "j"), s.d,
                                        a.bounds);
  const std::string at = "(o * " + I(s.d) + " + t) * " + I(s.inner) + " + c";
  if (!a.bounds.fill) {
    return EmitGather1(ctx, std::move(k), step.result, x, at);
  }
  k.body += "  " +
            ctx.Store(k, step.result, "i",
                      "t_inside ? " + ctx.Load(k, x, at) + " : " +
                          EmitContext::ElementOfBits(dtype,
                                                     a.bounds.fill_bits)) +
            "\n";
  return ctx.Finish(std::move(k));
}

// Copy(result <- operand) (skipped when in place), then one work item per
// (o, c) column of the result, which applies every update landing in its
// column in index order j = 0, 1, ...: the CPU's order (row-major over the
// updates), so repeated indices combine as there and kSet's last update
// wins, with no atomics. Indices outside [0, d) -- negative ones included
// -- are dropped (the CPU's `t < 0 || t >= d`). Only the result, the
// updates and the indices are read after the copy; buffer assignment never
// puts the latter two in the result's storage.
Status EmitScatter(EmitContext& ctx, const Step& step,
                   const Instruction& inst) {
  const auto& a = inst.attrs_as<compiler::ScatterAttrs>();
  const ValueId x = inst.operands[0];
  const ValueId indices = inst.operands[1];
  const ValueId updates = inst.operands[2];
  const compiler::ValueType& type = ctx.program().type(step.result);
  ctx.Copy(ctx.Value(step.result), ctx.Value(x), type.byte_size());
  const AxisSplit s = SplitAt(ctx, x, indices, a.axis);
  if (s.outer * s.n * s.inner == 0 || s.d == 0) return OkStatus();
  const std::string storage = EmitContext::StorageType(type.dtype);
  EmitContext::Kernel k = ctx.NewKernel(s.outer * s.inner);
  const std::string dst = ctx.Pointer(k, ctx.Value(step.result), type.dtype,
                                      /*writable=*/true);
  const std::string src = ctx.Pointer(k, ctx.Value(updates), type.dtype,
                                      /*writable=*/false);
  k.body += "  const idx o = i / " + I(s.inner) + ";\n";
  k.body += "  const idx c = i % " + I(s.inner) + ";\n";
  k.body += "  " + storage + "* dst = " + dst + " + o * " + I(s.d * s.inner) +
            " + c;\n";
  k.body += "  const " + storage + "* src = " + src + " + o * " +
            I(s.n * s.inner) + " + c;\n";
  k.body += "  for (idx j = 0; j < " + I(s.n) + "; ++j) {\n";
  k.body +=
      "    const bt::i64 t = (bt::i64)" + ctx.Load(k, indices, "j") + ";\n";
  k.body += "    if (t < 0 || t >= " + I(s.d) + ") continue;\n";
  const std::string at = "dst[(idx)t * " + I(s.inner) + "]";
  const std::string update = "src[j * " + I(s.inner) + "]";
  if (a.mode == compiler::ScatterMode::kSet) {
    // A storage copy: through float, f16/bf16 NaN payloads would change.
    k.body += "    " + at + " = " + update + ";\n";
  } else {
    k.body += "    " + at + " = bt::from_compute<" + storage +
              ">(bt::scatter_combine<" +
              std::to_string(static_cast<int>(a.mode)) + ", " +
              EmitContext::ComputeType(type.dtype) + ">(bt::to_compute(" + at +
              "), bt::to_compute(" + update + ")));\n";
  }
  k.body += "  }\n";
  return ctx.Finish(std::move(k));
}

}  // namespace

Status EmitShapeStep(EmitContext& ctx, const Step& step) {
  if (step.kind != Step::Kind::kOp) {
    return Internal(ctx.name() + ": step %" + std::to_string(step.result) +
                    " is not a single op");
  }
  const Instruction& inst = ctx.program().instruction(step.result);
  switch (inst.kind()) {
    case OpKind::kReshape:
    case OpKind::kTransfer:
      // The same bytes in row-major order (or in another memory kind).
      ctx.Copy(ctx.Value(step.result), ctx.Value(inst.operands[0]),
               inst.type.byte_size());
      return OkStatus();
    case OpKind::kBroadcastInDim:
      return EmitBroadcastInDim(ctx, step, inst);
    case OpKind::kTranspose:
      return EmitTranspose(ctx, step, inst);
    case OpKind::kSlice:
      return EmitSlice(ctx, step, inst);
    case OpKind::kPad:
      return EmitPad(ctx, step, inst);
    case OpKind::kConcatenate:
      return EmitConcatenate(ctx, step, inst);
    case OpKind::kDynamicSlice:
      return EmitDynamicSlice(ctx, step, inst);
    case OpKind::kDynamicUpdateSlice:
      return EmitDynamicUpdateSlice(ctx, step, inst);
    case OpKind::kGather:
      return EmitGather(ctx, step, inst);
    case OpKind::kScatter:
      return EmitScatter(ctx, step, inst);
    default:
      return ctx.NotOnCuda(std::string(compiler::op_kind_name(inst.kind())) +
                               " %" + std::to_string(step.result),
                           "it is not a shape op");
  }
}

}  // namespace baton::cuda::codegen
