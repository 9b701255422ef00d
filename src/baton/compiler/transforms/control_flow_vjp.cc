// Reverse-mode rules for the control-flow ops: VjpBuilder::RecordControlFlow
// and BackpropControlFlow (vjp_internal.h). Each region is differentiated by
// Vjp itself (recursively, so nested control flow works); the forward
// program runs the op (augmented with what the backward op needs) and the
// backward program runs one new control-flow op.
//
// scan (JAX's scan transpose, with the body's residuals recomputed):
//   forward:  the scan, whose body also returns each iteration's input
//             carries as extra ys: those stacked carries are the residuals
//             (the x slices and invariants the body's backward needs are
//             the scan's own operands, saved as they are). Only the carries
//             the body's residuals are computed from are stacked.
//   backward: a scan in the other direction (reverse = !reverse) whose
//             carries are the cotangents of the differentiated carries plus
//             accumulators for the cotangents of the differentiated
//             invariants, and whose xs are the stacked carries, the x slices
//             the body needs and the cotangents of the ys. Its body
//             recomputes the body's residuals from the saved carry
//             (Vjp(body).forward, pruned to the residuals) and applies
//             Vjp(body).backward. The cotangents of the xs come out as its
//             stacked ys; the final carries are the cotangents of the
//             initial carries and of the invariants.
//   Which carries are differentiated is a fixpoint (control_flow_rules.h):
//   a float carry whose initial value is, or that the body makes depend on
//   a differentiated value. Other carries (the int32 counter of a fori_loop
//   lowered to a scan) get no cotangent.
//
// case (lax.switch / lax.cond): the forward program runs the case as it is;
//   the residuals are the index and the operands the branches' backward
//   passes need. The backward program is a case over the branches'
//   backward programs, each of which recomputes its branch's residuals from
//   the saved operands and applies Vjp(branch).backward; every branch
//   returns a cotangent for every differentiated operand (zeros where it
//   does not use one), so they all have the same result types.
//
// while: refused once a cotangent reaches it (FailedPrecondition, which
//   bt.grad raises as ValueError, JAX's class and message): its trip count
//   is not known, so there is nothing to stack the carries into. Loops that
//   are not differentiated are fine.
//
// The results of a control-flow op are top-level nodes (region -1): inside
// a checkpoint they are saved rather than recomputed, since the op cannot
// be re-emitted one result at a time.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "baton/compiler/control_flow.h"
#include "baton/compiler/inline_program.h"
#include "baton/compiler/passes.h"
#include "baton/compiler/transforms/control_flow_rules.h"
#include "baton/compiler/transforms/program_facts.h"
#include "baton/compiler/transforms/vjp_internal.h"
#include "baton/core/error.h"

namespace baton::compiler::transforms::vjp_internal {
namespace {

using control_flow::DependentOutputs;
using control_flow::EmitRegionGroup;
using control_flow::LoopFixpoint;
using control_flow::OrThrow;
using OperandKind = ControlFlowGroup::Operand::Kind;

constexpr const char* kWhileRefusal =
    "Reverse-mode differentiation does not work for lax.while_loop or "
    "lax.fori_loop with dynamic start/stop values. Try using lax.scan, or "
    "using fori_loop with static start/stop.";

// An operand of the backward op, before nodes exist: operand `index` of the
// forward op, or its result `index` (extra results included).
struct PlanOperand {
  OperandKind kind = OperandKind::kForward;
  bool result = false;
  int index = 0;
};

// What RecordControlFlow emits and records for one group.
struct Plan {
  OpAttrs forward;           // the op the forward program runs
  std::vector<bool> active;  // per result of the original op
  std::string refused;       // non-empty: differentiating it is an error
  bool has_backward = false;
  OpAttrs backward;
  std::vector<PlanOperand> operands;
  std::vector<int> targets;  // per backward result: forward operand, or -1
};

// The part of a Vjp forward program that computes the residuals, with the
// same parameters.
Program ResidualProgram(const VjpPrograms& v, size_t num_outputs) {
  Program r = v.forward;
  std::vector<ValueId> outs(
      v.forward.outputs().begin() + static_cast<long>(num_outputs),
      v.forward.outputs().end());
  ThrowIfError(r.SetOutputs(std::move(outs)));
  return EliminateDeadCode(r);
}


bool Any(const std::vector<bool>& v) {
  for (bool b : v) {
    if (b) return true;
  }
  return false;
}

std::vector<Tracer> Concat(std::vector<Tracer> a,
                           const std::vector<Tracer>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::shared_ptr<const Program> Share(Program p) {
  return std::make_shared<const Program>(EliminateDeadCode(p));
}

Plan WhilePlan(const WhileAttrs& w, const std::vector<bool>& active_ops) {
  Plan plan;
  plan.forward = w;
  std::vector<bool> outs;
  const std::vector<bool> flags = LoopFixpoint(
      *w.body, w.num_carries, active_ops, /*differentiable=*/true, &outs);
  plan.active.assign(flags.begin(), flags.begin() + w.num_carries);
  if (Any(plan.active)) plan.refused = kWhileRefusal;
  return plan;
}

Plan ScanPlan(const ScanAttrs& s, const std::vector<bool>& active_ops) {
  Plan plan;
  plan.forward = s;
  const Program& body = *s.body;
  const int nc = s.num_carries, nx = s.num_xs;
  const int nv = static_cast<int>(active_ops.size()) - nc - nx;
  const int ny = static_cast<int>(body.outputs().size()) - nc;
  std::vector<bool> outs;
  const std::vector<bool> flags =
      LoopFixpoint(body, nc, active_ops, /*differentiable=*/true, &outs);
  plan.active = outs;
  for (int i = 0; i < nc; ++i) plan.active[i] = flags[i];
  if (!Any(plan.active)) return plan;

  const VjpPrograms bv = OrThrow(Vjp(body, flags));
  const Program residuals = ResidualProgram(bv, nc + ny);
  const std::vector<bool> used = UsedParameters(residuals);

  // Forward: the body also returns its input carries that `residuals`
  // reads, stacked as extra ys.
  std::vector<int> stacked;
  Program fwd_body = body;
  std::vector<ValueId> fwd_outs = body.outputs();
  for (int i = 0; i < nc; ++i) {
    if (!used[i]) continue;
    stacked.push_back(i);
    fwd_outs.push_back(body.parameter(i));
  }
  ThrowIfError(fwd_body.SetOutputs(std::move(fwd_outs)));
  ScanAttrs fwd = s;
  fwd.body = std::make_shared<const Program>(std::move(fwd_body));
  plan.forward = fwd;

  // Backward body: (ct carries, invariant accumulators | stacked carries,
  // used x slices, y cotangents | used invariants).
  TraceContext ctx;
  std::vector<Tracer> ct_carry, acc, saved_carry, x_slice, ct_y, inv;
  std::vector<int> sel_c, sel_v, sel_x, sel_y, used_x, used_v;
  for (int i = 0; i < nc; ++i) {
    if (flags[i]) sel_c.push_back(i);
  }
  for (int k = 0; k < nv; ++k) {
    if (flags[nc + nx + k]) sel_v.push_back(k);
    if (used[nc + nx + k]) used_v.push_back(k);
  }
  for (int j = 0; j < nx; ++j) {
    if (flags[nc + j]) sel_x.push_back(j);
    if (used[nc + j]) used_x.push_back(j);
  }
  for (int j = 0; j < ny; ++j) {
    if (outs[nc + j]) sel_y.push_back(j);
  }
  auto param = [&](int p) { return ctx.AddParameter(body.parameter_type(p)); };
  auto out_type = [&](int k) { return body.type(body.outputs()[k]); };
  for (int i : sel_c) ct_carry.push_back(param(i));
  for (int k : sel_v) acc.push_back(param(nc + nx + k));
  for (int i : stacked) saved_carry.push_back(param(i));
  for (int j : used_x) x_slice.push_back(param(nc + j));
  for (int j : sel_y) ct_y.push_back(ctx.AddParameter(out_type(nc + j)));
  for (int k : used_v) inv.push_back(param(nc + nx + k));

  std::vector<Tracer> args(body.num_parameters());
  for (int p = 0; p < body.num_parameters(); ++p) {
    args[p] = Zeros(ctx, body.parameter_type(p));  // unread by `residuals`
  }
  for (size_t a = 0; a < stacked.size(); ++a) args[stacked[a]] = saved_carry[a];
  for (size_t a = 0; a < used_x.size(); ++a) args[nc + used_x[a]] = x_slice[a];
  for (size_t a = 0; a < used_v.size(); ++a) {
    args[nc + nx + used_v[a]] = inv[a];
  }
  const std::vector<Tracer> res = InlineProgram(ctx, residuals, args);
  std::vector<Tracer> cts;
  for (int k = 0; k < nc + ny; ++k) cts.push_back(Zeros(ctx, out_type(k)));
  for (size_t a = 0; a < sel_c.size(); ++a) cts[sel_c[a]] = ct_carry[a];
  for (size_t a = 0; a < sel_y.size(); ++a) cts[nc + sel_y[a]] = ct_y[a];
  // The body's cotangents: carries (sel_c), xs (sel_x), invariants (sel_v).
  const std::vector<Tracer> g =
      InlineProgram(ctx, bv.backward, Concat(res, cts));
  std::vector<Tracer> bwd_outs(g.begin(),
                               g.begin() + static_cast<long>(sel_c.size()));
  const size_t gv = sel_c.size() + sel_x.size();
  for (size_t a = 0; a < sel_v.size(); ++a)
    bwd_outs.push_back(acc[a] + g[gv + a]);
  for (size_t a = 0; a < sel_x.size(); ++a) {
    bwd_outs.push_back(g[sel_c.size() + a]);
  }
  ScanAttrs bwd;
  bwd.num_carries = static_cast<int>(sel_c.size() + sel_v.size());
  bwd.num_xs = static_cast<int>(stacked.size() + used_x.size() + sel_y.size());
  bwd.length = s.length;
  bwd.reverse = !s.reverse;
  bwd.body = Share(ctx.Finish(bwd_outs));
  plan.backward = bwd;
  plan.has_backward = true;

  auto add = [&](OperandKind kind, bool result, int index) {
    plan.operands.push_back(PlanOperand{kind, result, index});
  };
  for (int i : sel_c) add(OperandKind::kCotangent, true, i);
  for (int k : sel_v) add(OperandKind::kZeros, false, nc + nx + k);
  for (size_t a = 0; a < stacked.size(); ++a) {
    add(OperandKind::kForward, true, nc + ny + static_cast<int>(a));
  }
  for (int j : used_x) add(OperandKind::kForward, false, nc + j);
  for (int j : sel_y) add(OperandKind::kCotangent, true, nc + j);
  for (int k : used_v) add(OperandKind::kForward, false, nc + nx + k);
  for (int i : sel_c) plan.targets.push_back(i);
  for (int k : sel_v) plan.targets.push_back(nc + nx + k);
  for (int j : sel_x) plan.targets.push_back(nc + j);
  return plan;
}

Plan CasePlan(const CaseAttrs& c, const std::vector<bool>& active_ops) {
  Plan plan;
  plan.forward = c;
  const std::vector<bool> wrt(active_ops.begin() + 1, active_ops.end());
  const int n = static_cast<int>(c.branches[0]->outputs().size());
  const int np = static_cast<int>(wrt.size());
  const std::vector<ValueType> out_types = c.branches[0]->output_types();
  plan.active.assign(n, false);
  for (const auto& branch : c.branches) {
    const std::vector<bool> dep =
        DependentOutputs(*branch, wrt, /*differentiable=*/true);
    for (int k = 0; k < n; ++k) {
      plan.active[k] =
          plan.active[k] || (dep[k] && is_inexact(out_types[k].dtype));
    }
  }
  if (!Any(plan.active)) return plan;

  std::vector<VjpPrograms> vjps;
  std::vector<Program> residuals;
  std::vector<bool> needed(np, false);  // read by some branch's residuals
  for (const auto& branch : c.branches) {
    vjps.push_back(OrThrow(Vjp(*branch, wrt)));
    residuals.push_back(ResidualProgram(vjps.back(), n));
    const std::vector<bool> used = UsedParameters(residuals.back());
    for (int p = 0; p < np; ++p) needed[p] = needed[p] || used[p];
  }
  // Every backward branch: (needed operands..., active cotangents...) ->
  // (one cotangent per differentiated operand).
  CaseAttrs bwd;
  const Program& first = *c.branches[0];
  for (size_t b = 0; b < c.branches.size(); ++b) {
    TraceContext ctx;
    std::vector<Tracer> args(np), cts(n);
    for (int p = 0; p < np; ++p) {
      if (needed[p]) args[p] = ctx.AddParameter(first.parameter_type(p));
    }
    for (int k = 0; k < n; ++k) {
      cts[k] = plan.active[k] ? ctx.AddParameter(out_types[k])
                              : Zeros(ctx, out_types[k]);
    }
    for (int p = 0; p < np; ++p) {
      if (!needed[p]) args[p] = Zeros(ctx, first.parameter_type(p));
    }
    const std::vector<Tracer> res = InlineProgram(ctx, residuals[b], args);
    bwd.branches.push_back(Share(
        ctx.Finish(InlineProgram(ctx, vjps[b].backward, Concat(res, cts)))));
  }
  plan.backward = bwd;
  plan.has_backward = true;
  plan.operands.push_back(PlanOperand{OperandKind::kForward, false, 0});
  for (int p = 0; p < np; ++p) {
    if (needed[p]) {
      plan.operands.push_back(PlanOperand{OperandKind::kForward, false, 1 + p});
    }
  }
  for (int k = 0; k < n; ++k) {
    if (plan.active[k]) {
      plan.operands.push_back(PlanOperand{OperandKind::kCotangent, true, k});
    }
  }
  for (int p = 0; p < np; ++p) {
    if (wrt[p]) plan.targets.push_back(1 + p);
  }
  return plan;
}

Plan MakePlan(const OpAttrs& attrs, const std::vector<bool>& active_ops) {
  if (const auto* w = std::get_if<WhileAttrs>(&attrs)) {
    return WhilePlan(*w, active_ops);
  }
  if (const auto* s = std::get_if<ScanAttrs>(&attrs)) {
    return ScanPlan(*s, active_ops);
  }
  return CasePlan(std::get<CaseAttrs>(attrs), active_ops);
}

}  // namespace

std::vector<int> VjpBuilder::RecordControlFlow(const OpAttrs& attrs,
                                               const std::vector<int>& ops) {
  std::vector<bool> active_ops;
  std::vector<Tracer> ins;
  for (int o : ops) {
    active_ops.push_back(nodes_[o].active);
    ins.push_back(nodes_[o].fwd);
  }
  const Plan plan = MakePlan(WithOutputIndex(attrs, 0), active_ops);
  const std::vector<Tracer> res = EmitRegionGroup(fwd_, plan.forward, ins);
  const bool grouped = plan.has_backward || !plan.refused.empty();
  const int g = grouped ? static_cast<int>(cf_groups_.size()) : -1;
  std::vector<int> nodes;
  for (size_t k = 0; k < res.size(); ++k) {
    Node nd;
    nd.kind = NodeKind::kControlFlowOut;
    nd.attrs = WithOutputIndex(plan.forward, static_cast<int>(k));
    nd.fwd = res[k];
    nd.type = res[k].type();
    nd.active =
        k < plan.active.size() && plan.active[k] && is_inexact(nd.type.dtype);
    nd.region = -1;
    nd.group = nd.active ? g : -1;
    nd.out_index = static_cast<int>(k);
    nodes.push_back(AddNode(std::move(nd)));
  }
  if (grouped) {
    ControlFlowGroup group;
    group.refused = plan.refused;
    group.backward = plan.backward;
    for (const PlanOperand& p : plan.operands) {
      group.operands.push_back(
          {p.kind, p.result ? nodes[p.index] : ops[p.index]});
    }
    for (int t : plan.targets) group.targets.push_back(t >= 0 ? ops[t] : -1);
    cf_groups_.push_back(std::move(group));
  }
  return nodes;
}

void VjpBuilder::BackpropControlFlow(ControlFlowGroup& g) {
  g.done = true;
  if (!g.refused.empty()) throw Error(FailedPrecondition(g.refused));
  // Everything the op reads first: Get may add residual parameters, and a
  // region group's members must be adjacent.
  std::vector<Tracer> ins;
  for (const ControlFlowGroup::Operand& op : g.operands) {
    const Node& nd = nodes_[op.node];
    switch (op.kind) {
      case OperandKind::kForward:
        ins.push_back(Get(op.node));
        break;
      case OperandKind::kCotangent:
        ins.push_back(ct_[op.node].valid() ? ct_[op.node]
                                           : Zeros(bwd_, nd.type));
        break;
      case OperandKind::kZeros:
        ins.push_back(Zeros(bwd_, nd.type));
        break;
    }
  }
  const std::vector<Tracer> res = EmitRegionGroup(bwd_, g.backward, ins);
  for (size_t k = 0; k < res.size() && k < g.targets.size(); ++k) {
    if (g.targets[k] >= 0) AddCotangent(g.targets[k], res[k]);
  }
}

}  // namespace baton::compiler::transforms::vjp_internal
