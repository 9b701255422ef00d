// Reductions: reduce ops over any axes (kOp) and fused reductions
// (kFusedReduce: the producing chain computed inline at each input element).
//
// Deterministic, no atomics. Logically the input is permuted to
// [O outputs, R reduced]; with T parts per output, phase 1 is a kernel over
// O * T work items, item (o, j) combining r = j, j + T, j + 2T, ... into a
// partial in scratch, and phase 2 a kernel over O items combining partials
// j = 0 .. T-1 in order into the output. A short R (or enough outputs to
// keep a GPU busy) takes one kernel over O items that loops r in order.
//
// The accumulator is the CPU's (kernels/reduce.cc AccType): double for
// float32 sums, float for float16/bfloat16, the type itself otherwise
// (integers wrap, bool sums are `or`). Float max/min combine as the CPU's
// reduce_detail::Combine (a NaN sticks; among equal values the first
// stays) and finish with the canonical NaN. Float sums and products differ
// from the CPU's in rounding order only (it adds in lanes and blocks).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "baton/backend/cuda/codegen/elementwise_chain.h"

namespace baton::cuda::codegen {

using compiler::Instruction;
using compiler::Step;
using compiler::ValueId;

namespace {

// R up to this is reduced by one work item per output.
constexpr int64_t kSinglePassElements = 64;
// Parts per output at most, and reduced elements per part at least.
constexpr int64_t kMaxParts = 256;
constexpr int64_t kMinPartElements = 16;
// Phase-1 partials at most (their scratch): past this the outputs alone
// give enough work items.
constexpr int64_t kMaxPartials = int64_t{1} << 20;

// What the reduction reads: element (o, r) of the logical [O, R] input is
// input element StridedOffset(kept, o) + StridedOffset(reduced, r), either
// the materialized `value` or the fused `chain` computed there.
struct ReduceInput {
  std::vector<StridedDim> kept, reduced;
  int64_t outputs = 1, reduced_count = 1;
  // Whether consecutive r are adjacent in memory (the innermost input
  // dimension is reduced): then phase 1 gives consecutive work items
  // consecutive r, else consecutive o, so neighbouring items read
  // neighbouring elements (coalesced loads on a GPU).
  bool rows = true;
  ValueId value = compiler::kNoValue;  // kOp
  const Step* chain = nullptr;         // kFusedReduce: ProducerOf(step)
};

DType AccDType(ReduceOp op, DType dtype) {
  if (op == ReduceOp::kSum && dtype == DType::kFloat32) return DType::kFloat64;
  if (dtype == DType::kFloat16 || dtype == DType::kBFloat16) {
    return DType::kFloat32;
  }
  return dtype;
}

struct Accumulator {
  ReduceOp op = ReduceOp::kSum;
  DType dtype = DType::kFloat32;  // the accumulator's
  DType out = DType::kFloat32;    // the result's
  std::string type;               // C++ name of `dtype`

  bool float_max_min() const {
    return is_floating(dtype) && (op == ReduceOp::kMax || op == ReduceOp::kMin);
  }
  std::string Init() const {
    return "bt::reduce_init<" + std::to_string(static_cast<int>(op)) + ", " +
           type + ">()";
  }
  // reduce_detail::Combine: float max/min keep the accumulator unless x is
  // larger (smaller) or a NaN, so the first of equal values (+0 / -0)
  // stays, as the CPU's sequential runs give it.
  std::string Combine(const std::string& acc, const std::string& x) const {
    if (float_max_min()) {
      const char* cmp = op == ReduceOp::kMax ? " > " : " < ";
      return "((" + x + cmp + acc + " || " + x + " != " + x + ") ? " + x +
             " : " + acc + ")";
    }
    return "bt::reduce_combine<" + std::to_string(static_cast<int>(op)) + ", " +
           type + ">(" + acc + ", " + x + ")";
  }
  // reduce_detail::Finish: to the output's compute type, then storage.
  std::string Finish(const std::string& acc) const {
    const std::string a =
        float_max_min() ? "bt::detail::canonical_nan(" + acc + ")" : acc;
    return "bt::from_compute<" + EmitContext::StorageType(out) + ">((" +
           EmitContext::ComputeType(out) + ")(" + a + "))";
  }
};

// The loop of one work item of output `o` (an idx in scope) over
// r = first, first + step, ... < R into a local `acc`, appended to k's body.
Status EmitAccumulate(EmitContext& ctx, EmitContext::Kernel& k,
                      const ReduceInput& in, const Accumulator& acc,
                      const std::string& o, const std::string& first,
                      int64_t step) {
  k.body += "  const idx base = " + StridedOffset(in.kept, o) + ";\n";
  k.body += "  " + acc.type + " acc = " + acc.Init() + ";\n";
  k.body += "  for (idx r = " + first + "; r < " +
            EmitContext::Int(in.reduced_count) +
            "; r += " + EmitContext::Int(step) + ") {\n";
  k.body += "    const idx x_at = base + " +
            StridedOffset(in.reduced, "r") + ";\n";
  std::string x;
  if (in.chain != nullptr) {
    BATON_ASSIGN_OR_RETURN(x, EmitChainAt(ctx, k, *in.chain, "x_at", "    "));
  } else {
    x = ctx.Load(k, in.value, "x_at");
  }
  k.body += "    const " + acc.type + " x = (" + acc.type + ")bt::to_compute(" +
            x + ");\n";
  k.body += "    acc = " + acc.Combine("acc", "x") + ";\n";
  k.body += "  }\n";
  return OkStatus();
}

Status EmitReduction(EmitContext& ctx, const ReduceInput& in,
                     const Accumulator& acc, ValueId result) {
  const int64_t o_count = in.outputs, r_count = in.reduced_count;
  if (o_count == 0) return OkStatus();
  if (r_count == 0) {  // reducing nothing: the identity
    EmitContext::Kernel k = ctx.NewKernel(o_count);
    k.body += "  " + ctx.Store(k, result, "i", acc.Finish(acc.Init())) + "\n";
    return ctx.Finish(std::move(k));
  }
  int64_t parts =
      std::min({kMaxParts, (r_count + kMinPartElements - 1) / kMinPartElements,
                std::max<int64_t>(1, kMaxPartials / o_count)});
  if (r_count <= kSinglePassElements) parts = 1;
  if (parts <= 1) {
    EmitContext::Kernel k = ctx.NewKernel(o_count);
    BATON_RETURN_IF_ERROR(EmitAccumulate(ctx, k, in, acc, "i", "0", 1));
    k.body += "  " + ctx.Store(k, result, "i", acc.Finish("acc")) + "\n";
    return ctx.Finish(std::move(k));
  }
  const std::string t = EmitContext::Int(parts);
  const std::string o = EmitContext::Int(o_count);
  const BufferRef partials = ctx.Scratch(
      o_count * parts * static_cast<int64_t>(dtype_size(acc.dtype)));
  // Phase 1: partial (o, j) at o * parts + j whichever order the items go.
  EmitContext::Kernel k1 = ctx.NewKernel(o_count * parts);
  if (in.rows) {
    k1.body += "  const idx o = i / " + t + ";\n";
    k1.body += "  const idx j = i % " + t + ";\n";
  } else {
    k1.body += "  const idx o = i % " + o + ";\n";
    k1.body += "  const idx j = i / " + o + ";\n";
  }
  BATON_RETURN_IF_ERROR(EmitAccumulate(ctx, k1, in, acc, "o", "j", parts));
  k1.body += "  " +
             ctx.StoreRef(k1, partials, acc.dtype, "o * " + t + " + j", "acc") +
             "\n";
  BATON_RETURN_IF_ERROR(ctx.Finish(std::move(k1)));
  // Phase 2: the partials in order j = 0 .. parts - 1.
  EmitContext::Kernel k2 = ctx.NewKernel(o_count);
  k2.body += "  " + acc.type + " acc = " + acc.Init() + ";\n";
  k2.body += "  for (idx j = 0; j < " + t + "; ++j) {\n";
  k2.body += "    const " + acc.type + " x = " +
             ctx.LoadRef(k2, partials, acc.dtype, "i * " + t + " + j") + ";\n";
  k2.body += "    acc = " + acc.Combine("acc", "x") + ";\n";
  k2.body += "  }\n";
  k2.body += "  " + ctx.Store(k2, result, "i", acc.Finish("acc")) + "\n";
  return ctx.Finish(std::move(k2));
}

// A reduce op over `axes` of a row-major input of `shape`: adjacent
// dimensions of one kind (kept / reduced) merged, size-1 ones dropped.
ReduceInput PlanAxes(const Shape& shape, const std::vector<int64_t>& axes) {
  ReduceInput in;
  std::vector<bool> reduced(shape.rank(), false);
  for (int64_t a : axes) reduced[static_cast<size_t>(a)] = true;
  const std::vector<int64_t> strides = shape.strides();
  int last_kind = -1;  // of the previous dimension kept: 0 kept, 1 reduced
  for (int d = 0; d < shape.rank(); ++d) {
    if (reduced[d]) {
      in.reduced_count *= shape[d];
    } else {
      in.outputs *= shape[d];
    }
    if (shape[d] == 1) continue;
    std::vector<StridedDim>& group = reduced[d] ? in.reduced : in.kept;
    const int kind = reduced[d] ? 1 : 0;
    if (kind == last_kind) {  // contiguous with the previous: one dimension
      group.back().size *= shape[d];
      group.back().stride = strides[d];
    } else {
      group.push_back({shape[d], strides[d]});
    }
    last_kind = kind;
  }
  in.rows = last_kind != 0;
  return in;
}

}  // namespace

Status EmitReduceStep(EmitContext& ctx, const Step& step) {
  const compiler::Program& program = ctx.program();
  const Instruction& reduce = program.instruction(step.result);
  const auto* attrs = reduce.attrs_if<compiler::ReduceAttrs>();
  if (attrs == nullptr) {
    return ctx.NotOnCuda(std::string(compiler::op_kind_name(reduce.kind())) +
                             " %" + std::to_string(step.result),
                         "not a reduction");
  }
  const ValueId operand = reduce.operands[0];
  const compiler::ValueType& in_type = program.type(operand);
  Accumulator acc;
  acc.op = attrs->op;
  acc.out = reduce.type.dtype;
  acc.dtype = AccDType(attrs->op, in_type.dtype);
  acc.type = EmitContext::StorageType(acc.dtype);

  if (step.kind != Step::Kind::kFusedReduce) {
    ReduceInput in = PlanAxes(in_type.shape, attrs->axes);
    in.value = operand;
    return EmitReduction(ctx, in, acc, step.result);
  }
  // Fused: PlanSteps fuses row reductions only, so output o reduces input
  // elements [o * row, (o + 1) * row) of the chain's row-major result.
  int64_t rows = 0, row = 0;
  if (!compiler::AsRowReduction(in_type.shape, attrs->axes, &rows, &row)) {
    return ctx.NotOnCuda("fused reduction %" + std::to_string(step.result),
                         "it does not reduce trailing dimensions");
  }
  const Step chain = compiler::ProducerOf(step);
  ReduceInput in;
  in.kept = {{rows, row}};
  in.reduced = {{row, 1}};
  in.outputs = rows;
  in.reduced_count = row;
  in.chain = &chain;
  return EmitReduction(ctx, in, acc, step.result);
}

}  // namespace baton::cuda::codegen
