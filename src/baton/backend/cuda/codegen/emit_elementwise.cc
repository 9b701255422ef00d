// Elementwise steps: single elementwise ops, table gathers, fused chains
// (with virtual scalars and regular broadcasts read inline) and iota. One
// kernel per step, one work item per result element.
//
// Rounding follows the CPU backend (fused_runner.cc): a fused step runs its
// members one after the other over a tile, each member writing its tile in
// its storage type, so a float16/bfloat16 chain rounds after every member.
// Here each member is a local of its storage type, converted to the compute
// type for its op (bt::to_compute) and back after it (bt::from_compute):
// the same roundings, so elementwise results are bitwise the CPU's (the
// transcendentals aside: device_prelude.inc).
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "baton/backend/cuda/codegen/elementwise_chain.h"

namespace baton::cuda::codegen {

using compiler::Instruction;
using compiler::OpKind;
using compiler::Step;
using compiler::ValueId;

namespace {

std::string Code(int v) { return std::to_string(v); }

// The right-hand side computing member `inst` of a chain, from its operands
// (storage-typed expressions); empty when it is not an op this file emits.
std::string OpExpr(const Instruction& inst, DType operand_dtype,
                   const std::vector<std::string>& x) {
  const std::string s = EmitContext::StorageType(inst.type.dtype);
  const std::string c = EmitContext::ComputeType(operand_dtype);
  auto in = [&](size_t j) { return "bt::to_compute(" + x[j] + ")"; };
  switch (inst.kind()) {
    case OpKind::kUnary:
      return "bt::from_compute<" + s + ">(bt::unary<" +
             Code(static_cast<int>(inst.attrs_as<compiler::UnaryAttrs>().op)) +
             ", " + c + ">(" + in(0) + "))";
    case OpKind::kBinary:
      return "bt::from_compute<" + s + ">(bt::binary<" +
             Code(static_cast<int>(inst.attrs_as<compiler::BinaryAttrs>().op)) +
             ", " + c + ">(" + in(0) + ", " + in(1) + "))";
    case OpKind::kCompare:
      // Compared in the operands' compute type (float for f16/bf16), as
      // the CPU's Compare kernel does.
      return "bt::compare<" +
             Code(
                 static_cast<int>(inst.attrs_as<compiler::CompareAttrs>().op)) +
             ", " + c + ">(" + in(0) + ", " + in(1) + ")";
    case OpKind::kSelect:
      // Moves storage bits (the CPU's Select does too): no conversion, so
      // f16/bf16 NaN payloads survive.
      return "(" + x[0] + " ? " + x[1] + " : " + x[2] + ")";
    case OpKind::kConvert:
      return "bt::convert<" + s + ", " +
             EmitContext::StorageType(operand_dtype) + ">(" + x[0] + ")";
    default:
      return "";
  }
}

}  // namespace

std::string StridedOffset(const std::vector<StridedDim>& dims,
                          const std::string& linear) {
  std::vector<StridedDim> live;
  for (const StridedDim& d : dims) {
    if (d.size != 1) live.push_back(d);
  }
  // A stride-0 dimension moves nothing: it only counts in `inner`.
  std::string sum;
  int64_t inner = 1;  // positions per step of the current dimension
  for (int q = static_cast<int>(live.size()) - 1; q >= 0; --q) {
    if (live[q].stride == 0) {
      inner *= live[q].size;
      continue;
    }
    std::string e = "(" + linear + ")";
    if (inner != 1) e = "(" + e + " / " + EmitContext::Int(inner) + ")";
    if (q > 0) e = "(" + e + " % " + EmitContext::Int(live[q].size) + ")";
    if (live[q].stride != 1) {
      e = "(" + e + " * " + EmitContext::Int(live[q].stride) + ")";
    }
    sum = sum.empty() ? e : e + " + " + sum;
    inner *= live[q].size;
  }
  return sum.empty() ? "0" : "(" + sum + ")";
}

Result<std::string> EmitChainAt(EmitContext& ctx, EmitContext::Kernel& k,
                                const Step& chain, const std::string& index,
                                const std::string& indent) {
  const compiler::Program& program = ctx.program();
  // Member -> the local holding its value at `index`.
  std::unordered_map<ValueId, std::string> local;
  for (ValueId m : chain.members) {
    const Instruction& inst = program.instruction(m);
    const std::string type = EmitContext::StorageType(inst.type.dtype);
    // Operand j at `index`: an earlier member's local, else the value's
    // storage (a virtual scalar's element 0: Load).
    auto operand = [&](int j) {
      const ValueId o = inst.operands[j];
      const auto it = local.find(o);
      return it != local.end() ? it->second : ctx.Load(k, o, index);
    };
    std::string expr;
    if (inst.kind() == OpKind::kBroadcastInDim) {
      compiler::RegularBroadcast b;
      if (!compiler::AsRegularBroadcast(program, m, &b)) {
        return ctx.NotOnCuda(
            "broadcast_in_dim %" + std::to_string(m) + " inside a fused step",
            "only row and column broadcasts fuse");
      }
      // Result element `index` repeats operand element (index / inner) %
      // count; the operand is materialized (it is not a member).
      std::string at = "(" + index + ")";
      if (b.inner != 1) at = "(" + at + " / " + EmitContext::Int(b.inner) + ")";
      at = "(" + at + " % " + EmitContext::Int(b.count) + ")";
      expr = ctx.Load(k, inst.operands[0], at);
    } else if (compiler::IsTableGather(program, m)) {
      // take: table[p(index)], p the gather's GatherBounds::Position: by
      // default the index clamped to [0, d - 1] (the CPU's ClampIndex:
      // negative -> 0, too large -> d - 1; unsigned indices are
      // non-negative as i64); with bounds, negatives wrapped first and the
      // rest read as the fill. An empty table gives zeros or the fill.
      const ValueId table = inst.operands[0];
      const int64_t d = program.type(table).shape[0];
      const GatherBounds& bounds =
          inst.attrs_as<compiler::GatherAttrs>().bounds;
      const std::string fill =
          EmitContext::ElementOfBits(inst.type.dtype, bounds.fill_bits);
      if (d == 0) {
        expr = bounds.fill ? fill : type + "()";
      } else {
        const std::string name = k.Temp();  // unique in the kernel
        k.body += EmitContext::GatherPosition(name, operand(1), d, bounds);
        expr = ctx.Load(k, table, name);
        if (bounds.fill) {
          expr = "(" + name + "_inside ? " + expr + " : " + fill + ")";
        }
      }
    } else if (compiler::IsElementwise(inst.kind())) {
      std::vector<std::string> x;
      for (int j = 0; j < static_cast<int>(inst.operands.size()); ++j) {
        x.push_back(operand(j));
      }
      // select's value operands are 1 and 2 (0 is the bool predicate).
      const int typed = inst.kind() == OpKind::kSelect ? 1 : 0;
      expr = OpExpr(inst, program.type(inst.operands[typed]).dtype, x);
    }
    if (expr.empty()) {
      return ctx.NotOnCuda(
          std::string(compiler::op_kind_name(inst.kind())) + " %" +
              std::to_string(m) + " inside a fused step",
          "a fused step holds elementwise ops, regular broadcasts and "
          "table gathers only");
    }
    const std::string t = k.Temp();
    k.body += indent + "// %" + std::to_string(m) + " = " +
              compiler::OpDisplayName(inst.attrs) + "\n";
    k.body += indent + "const " + type + " " + t + " = " + expr + ";\n";
    local[m] = t;
  }
  const auto it = local.find(chain.result);
  if (it == local.end()) {
    return Internal(ctx.name() + ": fused step %" +
                    std::to_string(chain.result) + " has no result member");
  }
  return it->second;
}

namespace {

// iota: element i is its coordinate along `dimension`, converted from
// int64 as the CPU's Iota does (ConvertElement<T, int64_t>: f16/bf16 via
// float, so large indices round as a float would).
Status EmitIota(EmitContext& ctx, const Step& step) {
  const Instruction& inst = ctx.program().instruction(step.result);
  const auto& attrs = inst.attrs_as<compiler::IotaAttrs>();
  const Shape& shape = inst.type.shape;
  std::string coordinate = "0";
  if (shape.rank() > 0) {
    // The walk over (outer, dimension, inner) that keeps only the
    // coordinate along `dimension` (the others have stride 0).
    const int dim = static_cast<int>(attrs.dimension);
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < dim; ++d) outer *= shape[d];
    for (int d = dim + 1; d < shape.rank(); ++d) inner *= shape[d];
    coordinate = StridedOffset({{outer, 0}, {shape[dim], 1}, {inner, 0}}, "i");
  }
  EmitContext::Kernel k = ctx.NewKernel(inst.type.num_elements());
  k.body +=
      "  " +
      ctx.Store(k, step.result, "i",
                "bt::convert<" + EmitContext::StorageType(inst.type.dtype) +
                    ", bt::i64>((bt::i64)" + coordinate + ")") +
      "\n";
  return ctx.Finish(std::move(k));
}

}  // namespace

Status EmitElementwiseStep(EmitContext& ctx, const Step& step) {
  const Instruction& inst = ctx.program().instruction(step.result);
  if (step.kind == Step::Kind::kOp && inst.kind() == OpKind::kIota) {
    return EmitIota(ctx, step);
  }
  EmitContext::Kernel k = ctx.NewKernel(inst.type.num_elements());
  BATON_ASSIGN_OR_RETURN(const std::string result,
                         EmitChainAt(ctx, k, step, "i", "  "));
  k.body += "  " + ctx.Store(k, step.result, "i", result) + "\n";
  return ctx.Finish(std::move(k));
}

}  // namespace baton::cuda::codegen
