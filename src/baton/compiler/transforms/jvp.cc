// Forward-mode differentiation (jvp.h): one walk over the program in order,
// copying each instruction and, where an operand has a tangent, emitting
// the op's tangent rule (jvp_rules.h) right after it. Calls are handled
// here, a call group at a time, since their rules are programs themselves;
// control-flow groups likewise, by control_flow_jvp.cc.
//
// The result is built with a TraceContext so rules can use the tracer's
// numpy-style functions; the tracer throws on a bad op, so the walk runs in
// a try block and errors come back as a Status.
#include "baton/compiler/transforms/jvp.h"

#include <exception>
#include <memory>
#include <string>
#include <utility>

#include "baton/compiler/control_flow.h"
#include "baton/compiler/inline_program.h"
#include "baton/compiler/tracer.h"
#include "baton/compiler/transforms/call_group.h"
#include "baton/compiler/transforms/control_flow_rules.h"
#include "baton/compiler/transforms/jvp_rules.h"
#include "baton/core/error.h"

namespace baton::compiler::transforms {
namespace {

using jvp_rules::Instantiate;
using jvp_rules::ZerosLike;

struct JvpResult {
  Program program;
  // Which outputs have a tangent output (after all the primal outputs, in
  // order). All of them when zeros are materialized.
  std::vector<bool> output_has_tangent;
};

[[noreturn]] void Throw(Status status) { throw Error(status); }

std::string CallName(const CallAttrs& call) {
  std::string s = std::string(call_kind_name(call.kind));
  if (!call.name.empty()) s += " '" + call.name + "'";
  return s;
}

bool SameShapeAndDType(const ValueType& a, const ValueType& b) {
  return a.shape == b.shape && a.dtype == b.dtype;
}

// The walk over one program. `materialize_zeros`: every output gets a
// tangent output (zeros where it has none), as Jvp promises; otherwise (a
// checkpointed body) only outputs with nonzero tangents get one, so zeros
// stay symbolic across the call.
class JvpBuilder {
 public:
  explicit JvpBuilder(const Program& src)
      : src_(src), primal_(src.num_values()), tangent_(src.num_values()) {}

  JvpResult Run(const std::vector<bool>& has_tangent, bool materialize_zeros) {
    for (int i = 0; i < src_.num_parameters(); ++i) {
      primal_[src_.parameter(i)] = ctx_.AddParameter(src_.parameter_type(i));
    }
    for (int i = 0; i < src_.num_parameters(); ++i) {
      if (has_tangent[i]) {
        tangent_[src_.parameter(i)] = ctx_.AddParameter(src_.parameter_type(i));
      }
    }
    for (ValueId id = 0; id < src_.num_values(); ++id) {
      if (primal_[id].valid()) continue;  // a parameter or a call group member
      if (src_.instruction(id).kind() == OpKind::kCall) {
        VisitCallGroup(id);
      } else if (IsControlFlow(src_.instruction(id).kind())) {
        VisitRegionGroup(id);
      } else {
        VisitOp(id);
      }
    }
    JvpResult result;
    std::vector<Tracer> outputs;
    std::vector<Tracer> tangents;
    for (ValueId o : src_.outputs()) {
      outputs.push_back(primal_[o]);
      const bool has = tangent_[o].valid();
      result.output_has_tangent.push_back(has || materialize_zeros);
      if (has) {
        tangents.push_back(tangent_[o]);
      } else if (materialize_zeros) {
        // Zeros of the output's own type, in its memory kind.
        tangents.push_back(
            to_memory_kind(ZerosLike(primal_[o]), primal_[o].memory_kind()));
      }
    }
    outputs.insert(outputs.end(), tangents.begin(), tangents.end());
    result.program = ctx_.Finish(outputs);
    return result;
  }

 private:
  std::vector<Tracer> Mapped(const std::vector<Tracer>& values,
                             const OperandList& ids) const {
    std::vector<Tracer> out;
    out.reserve(ids.size());
    for (ValueId o : ids) out.push_back(values[o]);
    return out;
  }

  static bool AnyValid(const std::vector<Tracer>& tangents) {
    for (const Tracer& t : tangents) {
      if (t.valid()) return true;
    }
    return false;
  }

  // Records a tangent after checking it has its primal's type, so a rule
  // that got a dtype wrong fails loudly instead of differentiating wrongly.
  void SetTangent(ValueId id, const Tracer& tangent, const std::string& what) {
    if (!tangent.valid()) return;
    if (!SameShapeAndDType(tangent.type(), src_.type(id))) {
      Throw(Internal("jvp: the rule of " + what + " gave a tangent of type " +
                     TypeForMessage(tangent.type()) + " for a value of type " +
                     TypeForMessage(src_.type(id))));
    }
    tangent_[id] = tangent;
  }

  void VisitOp(ValueId id) {
    const Instruction& inst = src_.instruction(id);
    const std::vector<Tracer> operands = Mapped(primal_, inst.operands);
    primal_[id] = ctx_.Emit(inst.attrs, operands);
    // Only floating-point values carry tangents (jvp.h).
    if (!is_inexact(inst.type.dtype)) return;
    const std::vector<Tracer> tangents = Mapped(tangent_, inst.operands);
    if (!AnyValid(tangents)) return;
    SetTangent(id, jvp_rules::OpTangent(inst, operands, primal_[id], tangents),
               OpDisplayName(inst.attrs));
  }

  void VisitCallGroup(ValueId id) {
    const std::vector<ValueId> members = CallGroupOf(src_, id);
    const Instruction& inst = src_.instruction(id);
    const CallAttrs& call = inst.attrs_as<CallAttrs>();
    const std::vector<Tracer> operands = Mapped(primal_, inst.operands);
    const std::vector<Tracer> tangents = Mapped(tangent_, inst.operands);
    if (!AnyValid(tangents) || call.kind == CallKind::kStopGradient) {
      // Nothing to differentiate: the call as it was, custom rules and all.
      for (ValueId m : members) {
        primal_[m] = ctx_.Emit(src_.instruction(m).attrs, operands);
      }
      return;
    }
    switch (call.kind) {
      case CallKind::kName:
      case CallKind::kShardingConstraint:
        // Linear, as JAX's name_p and sharding_constraint_p: the tangent
        // carries the same name, or is laid out as the primal.
        primal_[id] = ctx_.Emit(inst.attrs, operands);
        SetTangent(id, ctx_.Emit(inst.attrs, {tangents[0]}), CallName(call));
        return;
      case CallKind::kCheckpoint:
        VisitCheckpoint(members, call, operands, tangents);
        return;
      case CallKind::kCustomJvp:
        VisitCustomJvp(members, call, operands, tangents);
        return;
      case CallKind::kCustomVjp:
        Throw(InvalidArgument(
            "jvp: the function " + CallName(call) +
            " is a custom_vjp function; custom_vjp functions cannot be "
            "differentiated in forward mode (jvp, jacfwd, hessian); use "
            "custom_jvp instead, or differentiate in reverse mode (grad, vjp, "
            "jacrev)"));
      case CallKind::kStopGradient:
        break;  // handled above
    }
  }

  // A while, scan or case group (control_flow_jvp.cc).
  void VisitRegionGroup(ValueId id) {
    const Instruction& inst = src_.instruction(id);
    std::vector<Tracer> primals, tangents;
    control_flow::JvpRegionGroup(
        ctx_, inst.attrs, Mapped(primal_, inst.operands),
        Mapped(tangent_, inst.operands), &primals, &tangents);
    for (ValueId m : RegionGroupOf(src_, id)) {
      const int k = ControlFlowOutputIndex(src_.instruction(m).attrs);
      primal_[m] = primals[k];
      if (is_inexact(src_.type(m).dtype)) {
        SetTangent(m, tangents[k], OpDisplayName(inst.attrs));
      }
    }
  }

  // A checkpoint of the body's JVP: the body and its tangents are computed
  // together inside one checkpointed call with the same policy, so a later
  // reverse-mode pass over this program still recomputes instead of saving.
  void VisitCheckpoint(const std::vector<ValueId>& members,
                       const CallAttrs& call,
                       const std::vector<Tracer>& operands,
                       const std::vector<Tracer>& tangents) {
    std::vector<bool> body_has_tangent;
    std::vector<Tracer> call_operands = operands;
    for (const Tracer& t : tangents) {
      body_has_tangent.push_back(t.valid());
      if (t.valid()) call_operands.push_back(t);
    }
    JvpResult body = JvpBuilder(*call.body)
                         .Run(body_has_tangent, /*materialize_zeros=*/false);
    CallAttrs attrs = call;
    attrs.body = std::make_shared<const Program>(std::move(body.program));
    std::vector<Tracer> outs;
    for (size_t i = 0; i < attrs.body->outputs().size(); ++i) {
      attrs.output_index = static_cast<int>(i);
      outs.push_back(ctx_.Emit(attrs, call_operands));
    }
    // Where each body output's tangent sits among the call's outputs.
    const size_t n = call.body->outputs().size();
    std::vector<int> tangent_slot(n, -1);
    int next = static_cast<int>(n);
    for (size_t k = 0; k < n; ++k) {
      if (body.output_has_tangent[k]) tangent_slot[k] = next++;
    }
    for (ValueId m : members) {
      const int k = src_.instruction(m).attrs_as<CallAttrs>().output_index;
      primal_[m] = outs[k];
      if (tangent_slot[k] >= 0 && is_inexact(src_.type(m).dtype)) {
        SetTangent(m, outs[tangent_slot[k]], CallName(call));
      }
    }
  }

  // The user's rule, inlined: (primals..., tangents...) -> (outputs...,
  // tangents...), with symbolic zeros materialized for it. Its primal
  // outputs stand for the call's, as in JAX.
  void VisitCustomJvp(const std::vector<ValueId>& members,
                      const CallAttrs& call,
                      const std::vector<Tracer>& operands,
                      const std::vector<Tracer>& tangents) {
    std::vector<Tracer> args = operands;
    for (size_t i = 0; i < operands.size(); ++i) {
      args.push_back(Instantiate(tangents[i], operands[i]));
    }
    const std::vector<Tracer> outs =
        InlineProgram(ctx_, *call.rule, args, /*expand_calls=*/false);
    const size_t n = call.body->outputs().size();
    for (ValueId m : members) {
      const int k = src_.instruction(m).attrs_as<CallAttrs>().output_index;
      const ValueType& want = src_.type(m);
      // Integer outputs have no tangent, whatever the rule returns for one.
      const bool floating = is_inexact(want.dtype);
      for (const Tracer* got : {&outs[k], &outs[n + k]}) {
        if (got != &outs[k] && !floating) continue;
        if (!SameShapeAndDType(got->type(), want)) {
          Throw(InvalidArgument(
              "jvp: the JVP rule of " + CallName(call) + " returned " +
              TypeForMessage(got->type()) + " for output " + std::to_string(k) +
              (got == &outs[k] ? "" : "'s tangent") + ", which is " +
              TypeForMessage(want) +
              "; the rule must return (outputs..., tangents...) with the "
              "types of the function's outputs"));
        }
      }
      primal_[m] = outs[k];
      if (floating) tangent_[m] = outs[n + k];
    }
  }

  const Program& src_;
  TraceContext ctx_;
  std::vector<Tracer> primal_;   // src value -> its copy in ctx_
  std::vector<Tracer> tangent_;  // src value -> its tangent (invalid: zero)
};

}  // namespace

Result<Program> Jvp(const Program& program,
                    const std::vector<bool>& has_tangent) {
  if (static_cast<int>(has_tangent.size()) != program.num_parameters()) {
    return InvalidArgument("jvp: has_tangent has " +
                           std::to_string(has_tangent.size()) +
                           " entries, but the program has " +
                           std::to_string(program.num_parameters()) +
                           " parameters; pass one flag per parameter");
  }
  for (int i = 0; i < program.num_parameters(); ++i) {
    const ValueType& type = program.parameter_type(i);
    if (has_tangent[i] && !is_inexact(type.dtype)) {
      return InvalidArgument(
          "jvp: parameter " + std::to_string(i) + " is " +
          TypeForMessage(type) +
          ", and only floating-point values have tangents; differentiate "
          "with respect to floating-point inputs only (convert this one with "
          "astype, or give it no tangent)");
    }
  }
  try {
    return JvpBuilder(program)
        .Run(has_tangent, /*materialize_zeros=*/true)
        .program;
  } catch (const Error& e) {
    return Status(e.code(), e.what());
  } catch (const std::exception& e) {
    return Internal(std::string("jvp: unexpected failure: ") + e.what());
  }
}

}  // namespace baton::compiler::transforms
