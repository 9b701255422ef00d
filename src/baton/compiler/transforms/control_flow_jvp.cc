// Forward-mode rules for the control-flow ops (control_flow_rules.h), and the
// dependence analysis and program plumbing every control-flow rule shares.
//
// Design (JAX's _while_loop_jvp, _scan_jvp, _cond_jvp):
//
//   while / scan: the new loop carries (primal carries..., tangent
//   carries...), where only floating-point carries whose tangent can be
//   nonzero get a tangent carry. That set is a fixpoint: a carry's tangent
//   is nonzero when its initial tangent is, or when the body's output for it
//   depends on a nonzero tangent (of another carry in the set, of an x, or
//   of an invariant). The body is the region's own Jvp, its parameters and
//   results rewired into the loop's layout; the tangents of invariants (and
//   of xs, for scan) become invariants (xs) of the new loop. The condition
//   ignores tangents. Scan ys get stacked tangents where they can be
//   nonzero. A loop none of whose results can get a tangent is copied.
//
//   case: every branch becomes its Jvp, with the same has_tangent flags
//   (the nonzero operand tangents become operands), so all branches take
//   (operands..., tangents...) and return (results..., tangents...).
//
// Tangents of integer and bool results are symbolic zeros. Because the
// dependence analysis is conservative, a tangent carry may stay zero at
// run time; it is never wrong.
#include <string>
#include <utility>

#include "baton/compiler/control_flow.h"
#include "baton/compiler/inline_program.h"
#include "baton/compiler/transforms/control_flow_rules.h"
#include "baton/compiler/transforms/jvp.h"
#include "baton/compiler/transforms/jvp_rules.h"
#include "baton/compiler/transforms/program_facts.h"

namespace baton::compiler::transforms::control_flow {
namespace {


std::vector<Tracer> Pick(const std::vector<Tracer>& v, size_t begin,
                         size_t end) {
  return std::vector<Tracer>(v.begin() + static_cast<long>(begin),
                             v.begin() + static_cast<long>(end));
}

std::vector<Tracer> Append(std::vector<Tracer> a,
                           const std::vector<Tracer>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The result of copying the group unchanged: no tangent anywhere.
void CopyGroup(TraceContext& ctx, const OpAttrs& attrs,
               const std::vector<Tracer>& operands,
               std::vector<Tracer>* primals, std::vector<Tracer>* tangents) {
  *primals = EmitRegionGroup(ctx, attrs, operands);
  tangents->assign(primals->size(), Tracer());
}

// Indices i with flags[begin + i] set.
std::vector<int> Selected(const std::vector<bool>& flags, int begin, int n) {
  std::vector<int> out;
  for (int i = 0; i < n; ++i) {
    if (flags[begin + i]) out.push_back(i);
  }
  return out;
}

// The loop operands of one group (carries, then xs, then invariants) with
// the selected tangents inserted after each run: (c, tc, x, tx, v, tv).
// `runs` are [begin, end) operand ranges; `sel[r]` the selected members of
// run r (relative to its begin). Non-selected tangents are dropped,
// selected zero ones materialized.
std::vector<Tracer> Interleave(const std::vector<Tracer>& operands,
                               const std::vector<Tracer>& tangents,
                               const std::vector<std::pair<int, int>>& runs,
                               const std::vector<std::vector<int>>& sel) {
  std::vector<Tracer> out;
  for (size_t r = 0; r < runs.size(); ++r) {
    const auto [begin, end] = runs[r];
    for (int i = begin; i < end; ++i) out.push_back(operands[i]);
    for (int i : sel[r]) {
      out.push_back(
          jvp_rules::Instantiate(tangents[begin + i], operands[begin + i]));
    }
  }
  return out;
}

// Where the parameters of Jvp(body) -- (params..., tangents of the
// selected params, in order) -- sit in the interleaved layout above, over
// runs of the body's parameters of sizes `sizes`.
std::vector<int> JvpParamsToInterleaved(
    const std::vector<int>& sizes, const std::vector<std::vector<int>>& sel) {
  std::vector<int> start;  // of each run's primals in the interleaved layout
  int pos = 0;
  for (size_t r = 0; r < sizes.size(); ++r) {
    start.push_back(pos);
    pos += sizes[r] + static_cast<int>(sel[r].size());
  }
  std::vector<int> arg_of;
  for (size_t r = 0; r < sizes.size(); ++r) {
    for (int i = 0; i < sizes[r]; ++i) arg_of.push_back(start[r] + i);
  }
  for (size_t r = 0; r < sizes.size(); ++r) {
    for (size_t j = 0; j < sel[r].size(); ++j) {
      arg_of.push_back(start[r] + sizes[r] + static_cast<int>(j));
    }
  }
  return arg_of;
}

std::vector<ValueType> TypesOf(const std::vector<Tracer>& values) {
  std::vector<ValueType> types;
  for (const Tracer& t : values) types.push_back(t.type());
  return types;
}

// Body parameter types of a scan: xs operands lose their leading dimension.
std::vector<ValueType> SliceTypes(std::vector<ValueType> types, int begin,
                                  int end) {
  for (int i = begin; i < end; ++i) {
    std::vector<int64_t> dims = types[i].shape.dims();
    dims.erase(dims.begin());
    types[i].shape = Shape(std::move(dims));
  }
  return types;
}

void WhileJvp(TraceContext& ctx, const WhileAttrs& w,
              const std::vector<Tracer>& operands,
              const std::vector<Tracer>& tangents, std::vector<Tracer>* primals,
              std::vector<Tracer>* result_t) {
  const int nc = w.num_carries;
  const int nv = static_cast<int>(operands.size()) - nc;
  std::vector<bool> flags;
  for (const Tracer& t : tangents) flags.push_back(t.valid());
  std::vector<bool> outs;
  flags = LoopFixpoint(*w.body, nc, flags, /*differentiable=*/true, &outs);
  const std::vector<std::vector<int>> sel = {Selected(flags, 0, nc),
                                             Selected(flags, nc, nv)};
  if (sel[0].empty()) return CopyGroup(ctx, w, operands, primals, result_t);
  const int ns = static_cast<int>(sel[0].size());

  const std::vector<Tracer> args =
      Interleave(operands, tangents, {{0, nc}, {nc, nc + nv}}, sel);
  const std::vector<ValueType> types = TypesOf(args);
  const Program jb = OrThrow(Jvp(*w.body, flags));
  std::vector<int> body_outs;
  for (int i = 0; i < nc; ++i) body_outs.push_back(i);
  for (int i : sel[0]) body_outs.push_back(nc + i);
  WhileAttrs attrs = w;
  attrs.num_carries = nc + ns;
  attrs.body = std::make_shared<const Program>(
      Rewire(jb, types, JvpParamsToInterleaved({nc, nv}, sel), body_outs));
  std::vector<int> cond_args;  // the condition reads (carries, invariants)
  for (int i = 0; i < nc; ++i) cond_args.push_back(i);
  for (int k = 0; k < nv; ++k) cond_args.push_back(nc + ns + k);
  attrs.cond =
      std::make_shared<const Program>(Rewire(*w.cond, types, cond_args, {0}));

  const std::vector<Tracer> res = EmitRegionGroup(ctx, attrs, args);
  *primals = Pick(res, 0, nc);
  result_t->assign(nc, Tracer());
  for (int j = 0; j < ns; ++j) (*result_t)[sel[0][j]] = res[nc + j];
}

void ScanJvp(TraceContext& ctx, const ScanAttrs& s,
             const std::vector<Tracer>& operands,
             const std::vector<Tracer>& tangents, std::vector<Tracer>* primals,
             std::vector<Tracer>* result_t) {
  const int nc = s.num_carries, nx = s.num_xs;
  const int nv = static_cast<int>(operands.size()) - nc - nx;
  const int ny = static_cast<int>(s.body->outputs().size()) - nc;
  std::vector<bool> flags;
  for (const Tracer& t : tangents) flags.push_back(t.valid());
  std::vector<bool> outs;
  flags = LoopFixpoint(*s.body, nc, flags, /*differentiable=*/true, &outs);
  const std::vector<std::vector<int>> sel = {Selected(flags, 0, nc),
                                             Selected(flags, nc, nx),
                                             Selected(flags, nc + nx, nv)};
  const std::vector<int> sel_y = Selected(outs, nc, ny);
  if (sel[0].empty() && sel_y.empty()) {
    return CopyGroup(ctx, s, operands, primals, result_t);
  }
  const int nsc = static_cast<int>(sel[0].size());
  const int nsx = static_cast<int>(sel[1].size());

  const std::vector<Tracer> args =
      Interleave(operands, tangents,
                 {{0, nc}, {nc, nc + nx}, {nc + nx, nc + nx + nv}}, sel);
  const std::vector<ValueType> types =
      SliceTypes(TypesOf(args), nc + nsc, nc + nsc + nx + nsx);
  // Jvp(body) returns (carries, ys, tangent per carry, tangent per y).
  const Program jb = OrThrow(Jvp(*s.body, flags));
  const int n_out = nc + ny;
  std::vector<int> body_outs;
  for (int i = 0; i < nc; ++i) body_outs.push_back(i);
  for (int i : sel[0]) body_outs.push_back(n_out + i);
  for (int j = 0; j < ny; ++j) body_outs.push_back(nc + j);
  for (int j : sel_y) body_outs.push_back(n_out + nc + j);
  ScanAttrs attrs = s;
  attrs.num_carries = nc + nsc;
  attrs.num_xs = nx + nsx;
  attrs.body = std::make_shared<const Program>(
      Rewire(jb, types, JvpParamsToInterleaved({nc, nx, nv}, sel), body_outs));

  const std::vector<Tracer> res = EmitRegionGroup(ctx, attrs, args);
  primals->clear();
  result_t->assign(n_out, Tracer());
  for (int i = 0; i < nc; ++i) primals->push_back(res[i]);
  for (int j = 0; j < nsc; ++j) (*result_t)[sel[0][j]] = res[nc + j];
  for (int j = 0; j < ny; ++j) primals->push_back(res[nc + nsc + j]);
  for (size_t m = 0; m < sel_y.size(); ++m) {
    (*result_t)[nc + sel_y[m]] = res[nc + nsc + ny + static_cast<int>(m)];
  }
}

void CaseJvp(TraceContext& ctx, const CaseAttrs& c,
             const std::vector<Tracer>& operands,
             const std::vector<Tracer>& tangents, std::vector<Tracer>* primals,
             std::vector<Tracer>* result_t) {
  std::vector<bool> has_tangent;
  std::vector<Tracer> args = {operands[0]};  // the index
  std::vector<Tracer> extra;
  for (size_t i = 1; i < operands.size(); ++i) {
    args.push_back(operands[i]);
    has_tangent.push_back(tangents[i].valid());
    if (tangents[i].valid()) extra.push_back(tangents[i]);
  }
  if (extra.empty()) return CopyGroup(ctx, c, operands, primals, result_t);
  args = Append(args, extra);
  const int n = static_cast<int>(c.branches[0]->outputs().size());
  std::vector<bool> nonzero(n, false);
  CaseAttrs attrs = c;
  for (size_t b = 0; b < c.branches.size(); ++b) {
    const std::vector<bool> dep =
        DependentOutputs(*c.branches[b], has_tangent, /*differentiable=*/true);
    for (int k = 0; k < n; ++k) nonzero[k] = nonzero[k] || dep[k];
    // Jvp(branch) takes (operands..., nonzero tangents...) and returns
    // (results..., tangents...): the case's new layout as it is.
    attrs.branches[b] = std::make_shared<const Program>(
        OrThrow(Jvp(*c.branches[b], has_tangent)));
  }
  const std::vector<Tracer> res = EmitRegionGroup(ctx, attrs, args);
  *primals = Pick(res, 0, n);
  result_t->assign(n, Tracer());
  for (int k = 0; k < n; ++k) {
    if (nonzero[k] && is_inexact(res[k].dtype())) (*result_t)[k] = res[n + k];
  }
}

}  // namespace

std::vector<bool> DependentOutputs(const Program& program,
                                   const std::vector<bool>& params,
                                   bool differentiable) {
  std::vector<bool> dep(program.num_values(), false);
  for (ValueId id = 0; id < program.num_values(); ++id) {
    const Instruction& inst = program.instruction(id);
    if (const auto* p = inst.attrs_if<ParameterAttrs>()) {
      dep[id] = params[p->index];
      continue;
    }
    bool any = false;
    for (ValueId o : inst.operands) any = any || dep[o];
    if (differentiable) {
      any =
          any && is_inexact(inst.type.dtype) && IsDifferentiable(inst.attrs);
    }
    dep[id] = any;
  }
  std::vector<bool> out;
  for (ValueId o : program.outputs()) out.push_back(dep[o]);
  return out;
}

std::vector<bool> LoopFixpoint(const Program& body, int num_carries,
                               std::vector<bool> params, bool differentiable,
                               std::vector<bool>* outputs) {
  while (true) {
    *outputs = DependentOutputs(body, params, differentiable);
    bool changed = false;
    for (int i = 0; i < num_carries; ++i) {
      if ((*outputs)[i] && !params[i]) params[i] = changed = true;
    }
    if (!changed) return params;
  }
}

std::vector<Tracer> EmitRegionGroup(TraceContext& ctx, const OpAttrs& attrs,
                                    const std::vector<Tracer>& operands) {
  std::vector<Tracer> outs;
  const int n = ControlFlowNumResults(attrs);
  for (int i = 0; i < n; ++i) {
    outs.push_back(ctx.Emit(WithOutputIndex(attrs, i), operands));
  }
  return outs;
}

Program Rewire(const Program& inner, const std::vector<ValueType>& param_types,
               const std::vector<int>& arg_of,
               const std::vector<int>& outputs) {
  TraceContext ctx;
  std::vector<Tracer> params;
  for (const ValueType& t : param_types) params.push_back(ctx.AddParameter(t));
  std::vector<Tracer> args;
  for (int a : arg_of) args.push_back(params[a]);
  const std::vector<Tracer> outs = InlineProgram(ctx, inner, args);
  std::vector<Tracer> picked;
  for (int o : outputs) picked.push_back(outs[o]);
  return ctx.Finish(picked);
}

void JvpRegionGroup(TraceContext& ctx, const OpAttrs& attrs,
                    const std::vector<Tracer>& operands,
                    const std::vector<Tracer>& tangents,
                    std::vector<Tracer>* primals,
                    std::vector<Tracer>* result_tangents) {
  const OpAttrs leader = WithOutputIndex(attrs, 0);
  if (const auto* w = std::get_if<WhileAttrs>(&leader)) {
    return WhileJvp(ctx, *w, operands, tangents, primals, result_tangents);
  }
  if (const auto* s = std::get_if<ScanAttrs>(&leader)) {
    return ScanJvp(ctx, *s, operands, tangents, primals, result_tangents);
  }
  return CaseJvp(ctx, std::get<CaseAttrs>(leader), operands, tangents, primals,
                 result_tangents);
}

}  // namespace baton::compiler::transforms::control_flow
