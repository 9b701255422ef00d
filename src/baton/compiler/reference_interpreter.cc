#include "baton/compiler/reference_interpreter.h"

#include <string>

#include "baton/compiler/control_flow.h"
#include "baton/compiler/host_callback.h"
#include "baton/compiler/interpreter_ops.h"
#include "baton/core/error.h"

namespace baton::compiler {
namespace {

using interpreter::Operands;

Literal Evaluate(const Instruction& inst, const Operands& in,
                 const std::vector<Literal>& args) {
  using namespace interpreter;  // NOLINT: the Eval* family
  switch (inst.kind()) {
    case OpKind::kParameter:
      return args[inst.attrs_as<ParameterAttrs>().index];
    case OpKind::kConstant:
      return *inst.attrs_as<ConstantAttrs>().literal;
    case OpKind::kTransfer:
      return *in[0];
    case OpKind::kIota:
      return EvalIota(inst);
    case OpKind::kConvert:
      return EvalConvert(inst, in);
    case OpKind::kUnary:
      return EvalUnary(inst, in);
    case OpKind::kBinary:
      return EvalBinary(inst, in);
    case OpKind::kCompare:
      return EvalCompare(inst, in);
    case OpKind::kSelect:
      return EvalSelect(inst, in);
    case OpKind::kBroadcastInDim:
      return EvalBroadcastInDim(inst, in);
    case OpKind::kReshape:
      return EvalReshape(inst, in);
    case OpKind::kTranspose:
      return EvalTranspose(inst, in);
    case OpKind::kSlice:
      return EvalSlice(inst, in);
    case OpKind::kDynamicSlice:
      return EvalDynamicSlice(inst, in);
    case OpKind::kDynamicUpdateSlice:
      return EvalDynamicUpdateSlice(inst, in);
    case OpKind::kConcatenate:
      return EvalConcatenate(inst, in);
    case OpKind::kPad:
      return EvalPad(inst, in);
    case OpKind::kGather:
      return EvalGather(inst, in);
    case OpKind::kScatter:
      return EvalScatter(inst, in);
    case OpKind::kReduce:
      return EvalReduce(inst, in);
    case OpKind::kDotGeneral:
      return EvalDotGeneral(inst, in);
    case OpKind::kSort:
      return EvalSort(inst, in);
    case OpKind::kLinalg:
      return EvalLinalg(inst, in);
    case OpKind::kFft:
      return EvalFft(inst, in);
    case OpKind::kHostCallback: {
      std::vector<ValueType> types;  // each operand's own
      for (const Literal* l : in) {
        types.push_back({l->shape(), l->dtype(), MemoryKind::kDevice});
      }
      std::vector<HostCallbackOperand> ops;
      for (size_t i = 0; i < in.size(); ++i) {
        ops.push_back({in[i]->untyped_data(), &types[i]});
      }
      ThrowIfError(inst.attrs_as<HostCallbackAttrs>().callback->Call(ops));
      return Literal(Shape{}, DType::kBool);
    }
    case OpKind::kCall: {
      // The body, run as a program of its own (plainest: once per member
      // of a call group).
      const auto& call = inst.attrs_as<CallAttrs>();
      if (!call.body) return *in[0];
      std::vector<Literal> body_args;
      for (const Literal* l : in) body_args.push_back(*l);
      Result<std::vector<Literal>> outs = Interpret(*call.body, body_args);
      ThrowIfError(outs.status());
      return std::move(outs).value()[call.output_index];
    }
    case OpKind::kWhile:
    case OpKind::kScan:
    case OpKind::kCase:
      break;  // a region group: evaluated once, in Interpret
  }
  return Literal();
}

}  // namespace

Result<std::vector<Literal>> Interpret(const Program& program,
                                       const std::vector<Literal>& args) {
  // The loops below index by the recorded types; make sure they hold.
  BATON_RETURN_IF_ERROR(program.Verify());
  if (static_cast<int>(args.size()) != program.num_parameters()) {
    return InvalidArgument("Interpret: the program takes " +
                           std::to_string(program.num_parameters()) +
                           " arguments, got " + std::to_string(args.size()));
  }
  for (int i = 0; i < program.num_parameters(); ++i) {
    const ValueType& want = program.parameter_type(i);
    if (args[i].shape() != want.shape || args[i].dtype() != want.dtype) {
      return InvalidArgument(
          "Interpret: argument " + std::to_string(i) + " is " +
          TypeForMessage({args[i].shape(), args[i].dtype()}) +
          " but parameter " + std::to_string(i) + " is " +
          TypeForMessage(want));
    }
  }
  std::vector<Literal> values;
  values.reserve(program.num_values());
  std::vector<Literal> group;  // results of the region group being read
  try {
    for (const Instruction& inst : program.instructions()) {
      Operands in;
      for (ValueId id : inst.operands) in.push_back(&values[id]);
      if (IsControlFlow(inst.kind())) {
        const int index = ControlFlowOutputIndex(inst.attrs);
        if (index == 0) group = interpreter::EvalControlFlow(inst, in);
        values.push_back(std::move(group[index]));
        continue;
      }
      values.push_back(Evaluate(inst, in, args));
    }
  } catch (const Error& e) {  // a host callback's error, from any depth
    return Status(e.code(), e.what());
  }
  std::vector<Literal> outputs;
  for (ValueId id : program.outputs()) outputs.push_back(values[id]);
  return outputs;
}

}  // namespace baton::compiler
