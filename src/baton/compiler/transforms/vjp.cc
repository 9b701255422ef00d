// transforms::Vjp (vjp.h): recording the input program into the tape and
// the forward program, the reverse sweep that builds the backward program,
// and the final assembly (parameter order, unused residuals dropped).
#include "baton/compiler/transforms/vjp.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "baton/compiler/control_flow.h"
#include "baton/compiler/inline_program.h"
#include "baton/compiler/passes.h"
#include "baton/compiler/transforms/vjp_internal.h"
#include "baton/compiler/transforms/program_facts.h"
#include "baton/core/error.h"

namespace baton::compiler::transforms {
namespace vjp_internal {
namespace {


// Ops cheap enough to run again in the backward program when all their
// operands are themselves such values (so a constant broadcast to a large
// shape is never saved as a residual).
bool IsCheap(const OpAttrs& attrs) {
  switch (KindOf(attrs)) {
    case OpKind::kConstant:
    case OpKind::kIota:
    case OpKind::kConvert:
    case OpKind::kUnary:
    case OpKind::kBinary:
    case OpKind::kCompare:
    case OpKind::kSelect:
    case OpKind::kBroadcastInDim:
    case OpKind::kReshape:
    case OpKind::kTranspose:
    case OpKind::kSlice:
    case OpKind::kConcatenate:
    case OpKind::kPad:
      return true;
    case OpKind::kCall: {
      const CallKind k = std::get<CallAttrs>(attrs).kind;
      return k == CallKind::kStopGradient || k == CallKind::kName ||
             k == CallKind::kShardingConstraint;
    }
    default:
      return false;
  }
}

// The backward program with its parameters reordered: new parameter i is
// old parameter order[i]; old parameters not listed must be unused.
Program ReorderParameters(const Program& src, const std::vector<int>& order) {
  Program out;
  std::vector<ValueId> map(src.num_values(), kNoValue);
  for (int old : order) {
    map[src.parameter(old)] = out.AddParameter(src.parameter_type(old)).value();
  }
  for (ValueId id = 0; id < src.num_values(); ++id) {
    const Instruction& inst = src.instruction(id);
    if (inst.kind() == OpKind::kParameter) continue;
    OperandList operands;
    for (ValueId o : inst.operands) operands.push_back(map[o]);
    map[id] = out.Add(inst.attrs, std::move(operands)).value();
  }
  std::vector<ValueId> outputs;
  for (ValueId o : src.outputs()) outputs.push_back(map[o]);
  (void)out.SetOutputs(std::move(outputs));
  return out;
}


}  // namespace

[[noreturn]] void NoRule(const OpAttrs& attrs, const std::string& why) {
  throw Error(Unimplemented("vjp: " + OpDisplayName(attrs) +
                            " has no reverse-mode derivative rule" +
                            (why.empty() ? "" : " (" + why + ")")));
}

Tracer Full(TraceContext& ctx, const Shape& shape, DType dtype, double value) {
  Literal lit = Literal::FromDoubles(dtype, Shape{}, {value});
  Tracer c = constant(ctx, lit);
  if (shape.rank() == 0) return c;
  return ctx.Emit(BroadcastInDimAttrs{shape, {}}, {c});
}

Tracer Zeros(TraceContext& ctx, const ValueType& type) {
  return Full(ctx, type.shape, type.dtype, 0.0);
}

int VjpBuilder::AddNode(Node node) {
  nodes_.push_back(std::move(node));
  return static_cast<int>(nodes_.size()) - 1;
}

int VjpBuilder::AddOpNode(const OpAttrs& attrs,
                          const std::vector<int>& operands, int region) {
  Node nd;
  nd.kind = NodeKind::kOp;
  nd.attrs = attrs;
  nd.operands = operands;
  nd.region = region;
  std::vector<Tracer> ins;
  ins.reserve(operands.size());
  bool any_active = false, all_remat = true;
  for (int o : operands) {
    ins.push_back(nodes_[o].fwd);
    any_active |= nodes_[o].active;
    all_remat &= nodes_[o].remat;
  }
  nd.fwd = fwd_.Emit(attrs, ins);
  nd.type = nd.fwd.type();
  nd.active =
      any_active && is_inexact(nd.type.dtype) && IsDifferentiable(attrs);
  nd.remat = all_remat && IsCheap(attrs);
  const auto* dot = std::get_if<DotGeneralAttrs>(&attrs);
  for (int r = region; dot && dot->lhs_batch.empty() && r >= 0;
       r = regions_[r].parent) {
    const CheckpointPolicy& policy = regions_[r].policy;
    if (policy.kind != CheckpointPolicy::Kind::kOffloadDotsWithNoBatchDims) {
      continue;
    }
    if (nd.type.memory_kind != policy.offload_dst) {
      nd.offloaded = fwd_.Emit(TransferAttrs{policy.offload_dst}, {nd.fwd});
    }
    break;
  }
  return AddNode(std::move(nd));
}

int VjpBuilder::AddView(int target, int region) {
  Node v;
  v.kind = NodeKind::kView;
  v.value_of = target;
  v.fwd = nodes_[target].fwd;
  v.type = nodes_[target].type;
  v.remat = nodes_[target].remat;
  v.region = region;
  return AddNode(std::move(v));
}

std::vector<int> VjpBuilder::Record(const Program& src,
                                    const std::vector<int>& args, int region) {
  std::vector<int> map(src.num_values(), -1);
  // A call group (or a repeated call) is recorded once per operand list.
  using Key = std::tuple<const Program*, const Program*, int, std::vector<int>>;
  std::map<Key, std::vector<int>> calls;
  for (ValueId id = 0; id < src.num_values(); ++id) {
    const Instruction& inst = src.instruction(id);
    if (const auto* p = inst.attrs_if<ParameterAttrs>()) {
      map[id] = args[p->index];
      continue;
    }
    std::vector<int> ops;
    ops.reserve(inst.operands.size());
    for (ValueId o : inst.operands) ops.push_back(map[o]);
    if (IsControlFlow(inst.kind())) {  // a group at once, at its first member
      if (map[id] >= 0) continue;
      const std::vector<int> outs = RecordControlFlow(inst.attrs, ops);
      for (ValueId m : RegionGroupOf(src, id)) {
        map[m] = outs[ControlFlowOutputIndex(src.instruction(m).attrs)];
      }
      continue;
    }
    const auto* call = inst.attrs_if<CallAttrs>();
    if (!call) {
      map[id] = AddOpNode(inst.attrs, ops, region);
    } else if (!call->body) {
      map[id] = RecordCall(*call, ops, region)[0];
    } else if (region < 0 && std::none_of(ops.begin(), ops.end(), [&](int o) {
                 return nodes_[o].active;
               })) {
      // Nothing to differentiate here: the call stays as it was, custom
      // rules and all (as Jvp keeps it), so a transformation of the forward
      // program still sees them -- e.g. a custom_vjp function called in
      // another's forward rule, or on a value an outer grad differentiates,
      // keeps its rule under grad of grad. Its outputs are plain inactive
      // values. (Inside a checkpoint region the call is flattened as below:
      // recomputing a value there re-emits one instruction, which must not
      // split a call group.)
      map[id] = AddOpNode(inst.attrs, ops, region);
    } else {
      Key key{call->body.get(), call->rule.get(), static_cast<int>(call->kind),
              ops};
      auto it = calls.find(key);
      if (it == calls.end()) {
        it =
            calls.emplace(std::move(key), RecordCall(*call, ops, region)).first;
      }
      map[id] = it->second[call->output_index];
    }
  }
  std::vector<int> outs;
  for (ValueId o : src.outputs()) outs.push_back(map[o]);
  return outs;
}

std::vector<int> VjpBuilder::RecordCall(const CallAttrs& call,
                                        const std::vector<int>& ops,
                                        int region) {
  switch (call.kind) {
    case CallKind::kStopGradient:
      return {AddOpNode(call, ops, region)};
    case CallKind::kName: {
      const int n = AddOpNode(call, ops, region);
      nodes_[n].value_of = ops[0];
      nodes_[Resolve(ops[0])].names.push_back(call.name);
      return {n};
    }
    case CallKind::kShardingConstraint:
      // Its own node: the value it makes is laid out as constrained (and
      // its cotangent too, vjp_rules.cc).
      return {AddOpNode(call, ops, region)};
    case CallKind::kCheckpoint:
      regions_.push_back(Region{region, call.policy});
      return Record(*call.body, ops, static_cast<int>(regions_.size()) - 1);
    case CallKind::kCustomJvp: {
      // The rule runs on (primals, zero tangents); the primal outputs give
      // the call's values, and the cotangents of the call's outputs flow
      // into the rule's tangent outputs and, through the rule (linear in
      // its tangents), out of the tangent inputs to the operands.
      std::vector<int> args;
      for (int o : ops) args.push_back(AddView(o, region));
      for (int o : ops) {
        Node z;
        z.kind = NodeKind::kZeroTangent;
        z.type = ValueType{nodes_[o].type.shape, nodes_[o].type.dtype};
        z.fwd = Zeros(fwd_, z.type);
        z.operands = {o};
        z.active = nodes_[o].active;
        z.remat = true;
        z.region = region;
        args.push_back(AddNode(std::move(z)));
      }
      const std::vector<int> outs = Record(*call.rule, args, region);
      const int n_out = static_cast<int>(call.body->outputs().size());
      std::vector<int> result;
      for (int k = 0; k < n_out; ++k) {
        Node c;
        c.kind = NodeKind::kCustomJvpOut;
        c.value_of = outs[k];
        c.fwd = nodes_[outs[k]].fwd;
        c.type = c.fwd.type();
        c.operands = {outs[n_out + k]};
        c.active = is_inexact(c.type.dtype) && nodes_[outs[n_out + k]].active;
        c.region = region;
        result.push_back(AddNode(std::move(c)));
      }
      return result;
    }
    case CallKind::kCustomVjp: {
      std::vector<int> args;
      bool any_active = false;
      for (int o : ops) {
        args.push_back(AddView(o, region));
        any_active |= nodes_[o].active;
      }
      const std::vector<int> outs = Record(*call.rule, args, region);
      const int n_out = static_cast<int>(call.body->outputs().size());
      const int g = static_cast<int>(groups_.size());
      CustomVjpGroup group;
      group.bwd = call.rule2;
      group.operands = ops;
      group.residuals.assign(outs.begin() + n_out, outs.end());
      for (int k = 0; k < n_out; ++k) {
        Node c;
        c.kind = NodeKind::kCustomVjpOut;
        c.value_of = outs[k];
        c.fwd = nodes_[outs[k]].fwd;
        c.type = c.fwd.type();
        c.active = any_active && is_inexact(c.type.dtype);
        c.region = region;
        c.group = g;
        c.out_index = k;
        group.outputs.push_back(AddNode(std::move(c)));
      }
      groups_.push_back(std::move(group));
      return groups_[g].outputs;
    }
  }
  throw Error(Internal("vjp: unknown call kind"));
}

void VjpBuilder::AddCotangent(int n, Tracer c) {
  const Node& nd = nodes_[n];
  if (!nd.active) return;
  if (c.shape() != nd.type.shape || c.dtype() != nd.type.dtype) {
    throw Error(Internal("vjp: a cotangent " + TypeForMessage(c.type()) +
                         " was produced for a value of type " +
                         TypeForMessage(nd.type)));
  }
  Tracer& ct = ct_[n];
  ct = ct.valid() ? bwd_.Emit(BinaryAttrs{BinaryOp::kAdd}, {ct, c}) : c;
}

Tracer VjpBuilder::Get(int n) { return GetFor(n, current_region_); }

void VjpBuilder::Backprop(int n, const Tracer& ct) {
  const Node& nd = nodes_[n];
  switch (nd.kind) {
    case NodeKind::kParameter:
    case NodeKind::kView:
      return;
    case NodeKind::kOp:
      ApplyRule(n, ct);
      return;
    case NodeKind::kZeroTangent:
    case NodeKind::kCustomJvpOut:
      AddCotangent(nd.operands[0], ct);
      return;
    case NodeKind::kCustomVjpOut: {
      CustomVjpGroup& g = groups_[nd.group];
      if (!g.done) BackpropCustomVjp(g);
      return;
    }
    case NodeKind::kControlFlowOut: {
      if (nd.group < 0) return;
      ControlFlowGroup& g = cf_groups_[nd.group];
      if (!g.done) BackpropControlFlow(g);
      return;
    }
  }
}

void VjpBuilder::BackpropCustomVjp(CustomVjpGroup& g) {
  g.done = true;
  std::vector<Tracer> args;
  for (int r : g.residuals) args.push_back(Get(r));
  for (int o : g.outputs) {
    args.push_back(ct_[o].valid() ? ct_[o] : Zeros(bwd_, nodes_[o].type));
  }
  const std::vector<Tracer> outs =
      InlineProgram(bwd_, *g.bwd, args, /*expand_calls=*/false);
  for (size_t i = 0; i < g.operands.size(); ++i) {
    const Node& op = nodes_[g.operands[i]];
    if (!op.active) continue;
    if (outs[i].shape() != op.type.shape || outs[i].dtype() != op.type.dtype) {
      throw Error(InvalidArgument(
          "custom_vjp: the backward rule returned " +
          TypeForMessage(outs[i].type()) + " as the cotangent of input " +
          std::to_string(i) + ", which is " + TypeForMessage(op.type) +
          "; it must return one cotangent per input, of the input's shape "
          "and dtype"));
    }
    AddCotangent(g.operands[i], outs[i]);
  }
}

VjpPrograms VjpBuilder::Run(const Program& program,
                            const std::vector<bool>& wrt,
                            std::vector<bool> recompute) {
  if (static_cast<int>(wrt.size()) != program.num_parameters()) {
    throw Error(InvalidArgument("vjp: wrt has " + std::to_string(wrt.size()) +
                                " entries but the program has " +
                                std::to_string(program.num_parameters()) +
                                " parameters; pass one flag per parameter"));
  }
  std::vector<int> params;
  for (int i = 0; i < program.num_parameters(); ++i) {
    const ValueType& t = program.parameter_type(i);
    if (wrt[i] && !is_inexact(t.dtype)) {
      throw Error(InvalidArgument(
          "vjp: parameter " + std::to_string(i) + " is " + TypeForMessage(t) +
          "; only floating-point inputs can be differentiated (convert it to "
          "a float type, or leave it out of the differentiated arguments)"));
    }
    Node p;
    p.kind = NodeKind::kParameter;
    p.fwd = fwd_.AddParameter(t);
    p.type = t;
    p.param_index = i;
    p.active = wrt[i];
    params.push_back(AddNode(std::move(p)));
  }
  const std::vector<int> outs = Record(program, params, -1);

  // The reverse sweep. Cotangent parameters come first in the scratch
  // backward program; residual parameters are made as rules ask for them
  // and moved in front at the end.
  memo_.resize(nodes_.size());
  ct_.resize(nodes_.size());
  recompute_ = std::move(recompute);
  recompute_.resize(nodes_.size(), false);
  num_ct_params_ = static_cast<int>(outs.size());
  std::vector<Tracer> ct_params;
  for (int o : outs) ct_params.push_back(bwd_.AddParameter(nodes_[o].type));
  for (size_t k = 0; k < outs.size(); ++k) {
    AddCotangent(outs[k], ct_params[k]);
  }
  for (int n = static_cast<int>(nodes_.size()) - 1; n >= 0; --n) {
    if (!ct_[n].valid()) continue;
    current_region_ = nodes_[n].region;
    const Tracer ct = ct_[n];
    Backprop(n, ct);
    if (nodes_[n].kind != NodeKind::kParameter) ct_[n] = Tracer();
  }
  current_region_ = -1;
  std::vector<Tracer> grads;
  for (int i = 0; i < program.num_parameters(); ++i) {
    if (!wrt[i]) continue;
    const Node& p = nodes_[params[i]];
    Tracer g = ct_[params[i]].valid() ? ct_[params[i]] : Zeros(bwd_, p.type);
    if (g.memory_kind() != p.type.memory_kind) {
      g = bwd_.Emit(TransferAttrs{p.type.memory_kind}, {g});
    }
    grads.push_back(g);
  }
  const Program scratch = EliminateDeadCode(bwd_.Finish(grads));

  // Residuals no surviving instruction reads are dropped from both sides.
  const std::vector<bool> used = UsedParameters(scratch);
  std::vector<int> order;
  saved_.assign(nodes_.size(), false);
  VjpPrograms result;
  std::vector<Tracer> fwd_outs;
  for (int o : outs) fwd_outs.push_back(nodes_[o].fwd);
  for (size_t r = 0; r < residuals_.size(); ++r) {
    if (!used[num_ct_params_ + r]) continue;
    order.push_back(num_ct_params_ + static_cast<int>(r));
    if (residual_node_[r] >= 0) saved_[residual_node_[r]] = true;
    fwd_outs.push_back(residual_fwd_[r]);
    result.residuals.push_back(residuals_[r]);
  }
  for (int k = 0; k < num_ct_params_; ++k) order.push_back(k);
  result.backward = ReorderParameters(scratch, order);
  result.forward = EliminateDeadCode(fwd_.Finish(fwd_outs));
  return result;
}

}  // namespace vjp_internal

Result<VjpPrograms> Vjp(const Program& program, const std::vector<bool>& wrt) {
  try {
    // Twice when the first run saves values that are cheap elementwise
    // functions of other residuals: the second recomputes those in the
    // backward program, from residuals saved anyway.
    vjp_internal::VjpBuilder first;
    VjpPrograms result = first.Run(program, wrt);
    std::vector<bool> recompute = first.RecomputableResiduals();
    bool any = false;
    for (bool r : recompute) any |= r;
    if (!any) return result;
    vjp_internal::VjpBuilder second;
    return second.Run(program, wrt, std::move(recompute));
  } catch (const Error& e) {
    return Status(e.code(), e.what());
  }
}

}  // namespace baton::compiler::transforms
