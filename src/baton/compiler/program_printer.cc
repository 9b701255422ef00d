#include "baton/compiler/program_printer.h"

#include <cstdio>
#include <vector>

#include "baton/compiler/host_callback.h"

namespace baton::compiler {
namespace {

std::string List(const std::vector<int64_t>& values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(values[i]);
  }
  return s + "]";
}

std::string ConstantText(const Literal& lit) {
  if (lit.num_elements() <= kMaxPrintedConstantElements) {
    return lit.ValuesToString();
  }
  return "<" + std::string(dtype_short_name(lit.dtype())) +
         DimsToString(lit.shape()) + " " + std::to_string(lit.byte_size()) +
         " bytes>";
}

// `program` as text, indented to sit inside an instruction.
std::string Indented(const Program& program) {
  std::string body = ProgramToText(program);
  std::string indented;
  for (char c : body) {
    indented += c;
    if (c == '\n') indented += "    ";
  }
  while (!indented.empty() && indented.back() == ' ') indented.pop_back();
  return indented.substr(0, indented.size() - 1);
}

// The op name shown before the operand list.
std::string Mnemonic(const OpAttrs& attrs) {
  if (auto* a = std::get_if<UnaryAttrs>(&attrs)) {
    return std::string(op_name(a->op));
  }
  if (auto* a = std::get_if<BinaryAttrs>(&attrs)) {
    return std::string(op_name(a->op));
  }
  return std::string(op_kind_name(KindOf(attrs)));
}

// Text after the operand list and before " : type", e.g. ", dims=[1]".
// ", axis=0", then how out-of-range indices read when not clamped:
// ", wrap_negative", ", fill=0x7fc00000" (the fill element's bits).
std::string GatherAttrText(const Instruction& inst) {
  const auto& a = inst.attrs_as<GatherAttrs>();
  std::string text = ", axis=" + std::to_string(a.axis);
  if (a.bounds.wrap_negative) text += ", wrap_negative";
  if (a.bounds.fill) {
    char bits[24];
    std::snprintf(bits, sizeof bits, "0x%llx",
                  static_cast<unsigned long long>(a.bounds.fill_bits));
    text += ", fill=" + std::string(bits);
  }
  return text;
}

std::string AttributeText(const Instruction& inst) {
  switch (inst.kind()) {
    case OpKind::kIota:
      return ", dimension=" +
             std::to_string(inst.attrs_as<IotaAttrs>().dimension);
    case OpKind::kCompare:
      return ", direction=" +
             std::string(op_name(inst.attrs_as<CompareAttrs>().op));
    case OpKind::kBroadcastInDim:
      return ", dims=" +
             List(inst.attrs_as<BroadcastInDimAttrs>().broadcast_dimensions);
    case OpKind::kTranspose:
      return ", permutation=" +
             List(inst.attrs_as<TransposeAttrs>().permutation);
    case OpKind::kSlice: {
      const auto& a = inst.attrs_as<SliceAttrs>();
      return ", start=" + List(a.start) + ", limit=" + List(a.limit) +
             ", stride=" + List(a.stride);
    }
    case OpKind::kDynamicSlice:
      return ", sizes=" + List(inst.attrs_as<DynamicSliceAttrs>().slice_sizes);
    case OpKind::kConcatenate:
      return ", dimension=" +
             std::to_string(inst.attrs_as<ConcatenateAttrs>().dimension);
    case OpKind::kPad: {
      const auto& a = inst.attrs_as<PadAttrs>();
      return ", low=" + List(a.low) + ", high=" + List(a.high) +
             ", interior=" + List(a.interior);
    }
    case OpKind::kGather:
      return GatherAttrText(inst);
    case OpKind::kScatter: {
      const auto& a = inst.attrs_as<ScatterAttrs>();
      return ", axis=" + std::to_string(a.axis) +
             ", mode=" + std::string(op_name(a.mode));
    }
    case OpKind::kReduce: {
      const auto& a = inst.attrs_as<ReduceAttrs>();
      return ", op=" + std::string(op_name(a.op)) + ", axes=" + List(a.axes);
    }
    case OpKind::kDotGeneral: {
      const auto& a = inst.attrs_as<DotGeneralAttrs>();
      return ", batching_dims=" + List(a.lhs_batch) + "x" + List(a.rhs_batch) +
             ", contracting_dims=" + List(a.lhs_contracting) + "x" +
             List(a.rhs_contracting);
    }
    case OpKind::kTransfer:
      return ", memory_kind=" +
             std::string(
                 memory_kind_name(inst.attrs_as<TransferAttrs>().memory_kind));
    case OpKind::kSort: {
      const auto& a = inst.attrs_as<SortAttrs>();
      return ", dimension=" + std::to_string(a.dimension) +
             (a.descending ? ", descending" : "") +
             (a.indices ? ", indices" : "");
    }
    case OpKind::kFft: {
      const auto& a = inst.attrs_as<FftAttrs>();
      return ", fft_type=" + std::string(fft_type_name(a.type)) +
             ", fft_lengths=" + List(a.lengths);
    }
    case OpKind::kHostCallback:
      return ", callback=" + inst.attrs_as<HostCallbackAttrs>().callback->name();
    case OpKind::kLinalg: {
      // The kind, then the flags that kind reads.
      const auto& a = inst.attrs_as<LinalgAttrs>();
      std::string t = ", kind=" + std::string(linalg_kind_name(a.kind));
      switch (a.kind) {
        case LinalgKind::kCholesky:
        case LinalgKind::kEigh:
          return t + (a.lower ? ", lower" : ", upper");
        case LinalgKind::kTriangularSolve:
          return t + (a.lower ? ", lower" : ", upper") +
                 (a.left_side ? ", left_side" : ", right_side") +
                 (a.transpose_a ? ", transpose_a" : "") +
                 (a.unit_diagonal ? ", unit_diagonal" : "");
        case LinalgKind::kQr:
        case LinalgKind::kSvd:
          return t + (a.full_matrices ? ", full_matrices" : "");
        case LinalgKind::kLu:
        case LinalgKind::kSchur:
          return t;
      }
      return t;
    }
    case OpKind::kCall: {
      const auto& a = inst.attrs_as<CallAttrs>();
      std::string t = ", kind=" + std::string(call_kind_name(a.kind));
      if (!a.name.empty()) t += ", name=\"" + a.name + "\"";
      if (a.kind == CallKind::kShardingConstraint) {
        t += ", sharding=P(";
        for (size_t d = 0; d < a.sharding.size(); ++d) {
          if (d > 0) t += ", ";
          if (a.sharding[d].empty()) t += "None";
          for (size_t k = 0; k < a.sharding[d].size(); ++k) {
            t += (k > 0 ? "+" : "") + a.sharding[d][k];
          }
        }
        t += ")";
      }
      if (a.body) t += ", output=" + std::to_string(a.output_index);
      // The first call of a group shows the body (indented).
      if (a.body && a.output_index == 0) t += ", body=" + Indented(*a.body);
      return t;
    }
    // The first member of a region group shows the regions.
    case OpKind::kWhile: {
      const auto& a = inst.attrs_as<WhileAttrs>();
      std::string t = ", carries=" + std::to_string(a.num_carries) +
                      ", output=" + std::to_string(a.output_index);
      if (a.output_index == 0) {
        t += ", cond=" + Indented(*a.cond) + ", body=" + Indented(*a.body);
      }
      return t;
    }
    case OpKind::kScan: {
      const auto& a = inst.attrs_as<ScanAttrs>();
      std::string t = ", carries=" + std::to_string(a.num_carries) +
                      ", xs=" + std::to_string(a.num_xs) +
                      ", length=" + std::to_string(a.length) +
                      (a.reverse ? ", reverse" : "") +
                      ", output=" + std::to_string(a.output_index);
      if (a.output_index == 0) t += ", body=" + Indented(*a.body);
      return t;
    }
    case OpKind::kCase: {
      const auto& a = inst.attrs_as<CaseAttrs>();
      std::string t = ", output=" + std::to_string(a.output_index);
      if (a.output_index == 0) {
        for (size_t b = 0; b < a.branches.size(); ++b) {
          t += ", branch" + std::to_string(b) + "=" + Indented(*a.branches[b]);
        }
      }
      return t;
    }
    default:
      return "";
  }
}

}  // namespace

std::string InstructionToText(const Program& program, ValueId id) {
  const Instruction& inst = program.instruction(id);
  std::string s = "%" + std::to_string(id) + " = " + Mnemonic(inst.attrs) + "(";
  if (auto* p = inst.attrs_if<ParameterAttrs>()) {
    s += std::to_string(p->index);
  } else if (auto* c = inst.attrs_if<ConstantAttrs>()) {
    s += ConstantText(*c->literal);
  } else {
    for (int i = 0; i < inst.operands.size(); ++i) {
      if (i) s += ", ";
      s += "%" + std::to_string(inst.operands[i]);
    }
  }
  return s + ")" + AttributeText(inst) + " : " + inst.type.ToString();
}

std::string ProgramToText(const Program& program) {
  std::string s = "func(";
  for (int i = 0; i < program.num_parameters(); ++i) {
    if (i) s += ", ";
    s += "%" + std::to_string(program.parameter(i)) + ": " +
         program.parameter_type(i).ToString();
  }
  s += ") -> (";
  for (size_t i = 0; i < program.outputs().size(); ++i) {
    if (i) s += ", ";
    s += "%" + std::to_string(program.outputs()[i]);
  }
  s += ") {\n";
  for (ValueId id = 0; id < program.num_values(); ++id) {
    // Parameters are declared in the header.
    if (program.instruction(id).kind() == OpKind::kParameter) continue;
    s += "  " + InstructionToText(program, id) + "\n";
  }
  return s + "}\n";
}

}  // namespace baton::compiler
