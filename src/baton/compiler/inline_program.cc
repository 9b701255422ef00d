#include "baton/compiler/inline_program.h"

#include <map>
#include <string>
#include <utility>

#include "baton/compiler/passes.h"
#include "baton/core/error.h"

namespace baton::compiler {
namespace {

// Appends one instruction of a source program to dst (operands already
// mapped). A call group is inlined once: `groups` remembers the outputs of
// each (body, operands) expanded so far.
using GroupKey = std::pair<const Program*, std::vector<ValueId>>;

Result<ValueId> Append(Program& dst, const Instruction& inst,
                       const std::vector<ValueId>& operands, bool expand_calls,
                       bool keep_constraints,
                       std::map<GroupKey, std::vector<ValueId>>& groups) {
  if (expand_calls) {
    if (const auto* call = inst.attrs_if<CallAttrs>()) {
      const bool kept =
          keep_constraints && call->kind == CallKind::kShardingConstraint;
      if (!call->body && !kept) return operands[0];  // identity kinds
      if (kept) return dst.Add(inst.attrs, OperandList{operands[0]});
      GroupKey key{call->body.get(), operands};
      auto it = groups.find(key);
      if (it == groups.end()) {
        BATON_ASSIGN_OR_RETURN(
            std::vector<ValueId> outs,
            InlineInto(dst, *call->body, operands, true, keep_constraints));
        it = groups.emplace(std::move(key), std::move(outs)).first;
      }
      return it->second[call->output_index];
    }
  }
  OperandList list;
  for (ValueId v : operands) list.push_back(v);
  return dst.Add(inst.attrs, std::move(list));
}

}  // namespace

Result<std::vector<ValueId>> InlineInto(Program& dst, const Program& src,
                                        const std::vector<ValueId>& args,
                                        bool expand_calls,
                                        bool keep_sharding_constraints) {
  if (static_cast<int>(args.size()) != src.num_parameters()) {
    return InvalidArgument("inline: the program takes " +
                           std::to_string(src.num_parameters()) +
                           " arguments, got " + std::to_string(args.size()));
  }
  std::vector<ValueId> map(src.num_values(), kNoValue);
  std::map<GroupKey, std::vector<ValueId>> groups;
  std::vector<ValueId> operands;
  for (ValueId id = 0; id < src.num_values(); ++id) {
    const Instruction& inst = src.instruction(id);
    if (const auto* p = inst.attrs_if<ParameterAttrs>()) {
      const ValueId a = args[p->index];
      if (a < 0 || a >= dst.num_values()) {
        return InvalidArgument("inline: argument " + std::to_string(p->index) +
                               " is not a value of the destination");
      }
      const ValueType& want = inst.type;
      const ValueType& got = dst.type(a);
      if (want.shape != got.shape || want.dtype != got.dtype) {
        return InvalidArgument("inline: parameter " + std::to_string(p->index) +
                               " is " + TypeForMessage(want) +
                               ", but the argument is " + TypeForMessage(got));
      }
      map[id] = a;
      continue;
    }
    operands.clear();
    for (ValueId o : inst.operands) operands.push_back(map[o]);
    BATON_ASSIGN_OR_RETURN(map[id],
                           Append(dst, inst, operands, expand_calls,
                                  keep_sharding_constraints, groups));
  }
  std::vector<ValueId> outs;
  outs.reserve(src.outputs().size());
  for (ValueId o : src.outputs()) outs.push_back(map[o]);
  return outs;
}

std::vector<Tracer> InlineProgram(TraceContext& ctx, const Program& src,
                                  const std::vector<Tracer>& args,
                                  bool expand_calls) {
  // Emit through the context so the Tracers it returns are its own: the
  // program is built by appending to a copy of the context's program.
  std::vector<Tracer> outs;
  std::vector<Tracer> values;  // src value -> tracer in ctx
  values.resize(src.num_values());
  if (static_cast<int>(args.size()) != src.num_parameters()) {
    ThrowIfError(InvalidArgument(
        "inline: the program takes " + std::to_string(src.num_parameters()) +
        " arguments, got " + std::to_string(args.size())));
  }
  std::map<std::pair<const Program*, std::vector<ValueId>>, std::vector<Tracer>>
      groups;
  for (ValueId id = 0; id < src.num_values(); ++id) {
    const Instruction& inst = src.instruction(id);
    if (const auto* p = inst.attrs_if<ParameterAttrs>()) {
      const Tracer& a = args[p->index];
      if (a.shape() != inst.type.shape || a.dtype() != inst.type.dtype) {
        ThrowIfError(InvalidArgument(
            "inline: parameter " + std::to_string(p->index) + " is " +
            TypeForMessage(inst.type) + ", but the argument is " +
            TypeForMessage(a.type())));
      }
      values[id] = a;
      continue;
    }
    std::vector<Tracer> operands;
    operands.reserve(inst.operands.size());
    for (ValueId o : inst.operands) operands.push_back(values[o]);
    const auto* call = inst.attrs_if<CallAttrs>();
    if (expand_calls && call && call->kind != CallKind::kShardingConstraint) {
      if (!call->body) {
        values[id] = operands[0];
        continue;
      }
      std::vector<ValueId> key_ops;
      for (const Tracer& t : operands) key_ops.push_back(t.id());
      auto key = std::make_pair(call->body.get(), key_ops);
      auto it = groups.find(key);
      if (it == groups.end()) {
        it =
            groups.emplace(key, InlineProgram(ctx, *call->body, operands, true))
                .first;
      }
      values[id] = it->second[call->output_index];
      continue;
    }
    values[id] = ctx.Emit(inst.attrs, operands);
  }
  for (ValueId o : src.outputs()) outs.push_back(values[o]);
  return outs;
}

Program InlineCalls(const Program& program, bool keep_sharding_constraints) {
  bool has_call = false;
  for (const Instruction& inst : program.instructions()) {
    has_call |= inst.kind() == OpKind::kCall;
  }
  if (!has_call) return program;
  Program out;
  std::vector<ValueId> params;
  for (int i = 0; i < program.num_parameters(); ++i) {
    params.push_back(
        out.AddParameter(program.parameter_type(i)).value());  // cannot fail
  }
  Result<std::vector<ValueId>> outs =
      InlineInto(out, program, params, true, keep_sharding_constraints);
  ThrowIfError(outs.status());  // a verified program inlines cleanly
  ThrowIfError(out.SetOutputs(std::move(outs).value()));
  return out;
}

}  // namespace baton::compiler
