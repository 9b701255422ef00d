// Batching rules for the control-flow ops (control_flow_rules.h), following
// JAX's _scan_batching_rule, _while_loop_batching_rule and
// _cond_batching_rule. Regions are batched with Vmap itself (recursively).
//
// scan: a carry is batched (at dimension 0) when its initial value is or
//   when the body makes it batched: a fixpoint, found by batching the body
//   until its carry outputs are batched no more often than its carry inputs
//   (carries batched only by the fixpoint get their initial value
//   broadcast; a batched carry the body returns unbatched is broadcast in
//   the body). Batched xs are moved to dimension 1, so the scanned dimension
//   stays first and each slice is batched at 0; invariants keep their batch
//   dimension. Batched ys come out at dimension 1.
//
// while, predicate unbatched (after the same fixpoint): the same, with the
//   condition batched with the body's in_dims.
// while, predicate batched: every lane runs until all are done (JAX): all
//   carries are batched; the condition is "any lane's predicate holds"
//   (a sum of the batched predicate, so an empty batch stops at once) and
//   the body is select(lane's predicate, body(carry), carry) per carry, so a
//   finished lane keeps its carries.
//
// case, index unbatched: a case of the batched branches (each with the
//   operands' batch dimensions; a result batched in some branch is
//   broadcast in the others). Index batched: the index is clamped, every
//   branch runs on the whole batch, and each result is selected per lane.
#include <memory>
#include <string>
#include <utility>

#include "baton/compiler/control_flow.h"
#include "baton/compiler/inline_program.h"
#include "baton/compiler/transforms/batching.h"
#include "baton/compiler/transforms/control_flow_rules.h"

namespace baton::compiler::transforms::control_flow {
namespace {

using batching::BatchedValue;
using batching::BatchEmitter;
using batching::BatchingError;
using batching::kUnbatched;

BatchedProgram VmapOrThrow(const Program& p, const std::vector<int>& in_dims,
                           int64_t batch_size) {
  Result<BatchedProgram> r = Vmap(p, in_dims, batch_size);
  if (!r.ok()) throw BatchingError{r.status()};
  return std::move(r).value();
}

std::vector<ValueId> InlineOrThrow(Program& dst, const Program& src,
                                   const std::vector<ValueId>& args) {
  Result<std::vector<ValueId>> r = InlineInto(dst, src, args);
  if (!r.ok()) throw BatchingError{r.status()};
  return std::move(r).value();
}

std::vector<ValueId> AddGroupOrThrow(Program& dst, const OpAttrs& attrs,
                                     const std::vector<ValueId>& operands) {
  Result<std::vector<ValueId>> r = AddRegionGroup(dst, attrs, operands);
  if (!r.ok()) {
    throw BatchingError{Internal("vmap: the batched " + OpDisplayName(attrs) +
                                 " was rejected: " + r.status().message())};
  }
  return std::move(r).value();
}

// A program of `vp`'s parameters whose outputs are vp's, with output k
// broadcast to batched-at-0 where want[k] and Vmap left it unbatched.
std::shared_ptr<const Program> Materialized(const BatchedProgram& vp,
                                            const std::vector<bool>& want,
                                            int64_t batch_size) {
  bool any = false;
  for (size_t k = 0; k < want.size(); ++k) {
    any = any || (want[k] && !vp.output_batched[k]);
  }
  if (!any) return std::make_shared<const Program>(vp.program);
  Program out;
  std::vector<ValueId> params;
  for (const ValueType& t : vp.program.parameter_types()) {
    params.push_back(out.AddParameter(t).value());
  }
  std::vector<ValueId> outs = InlineOrThrow(out, vp.program, params);
  BatchEmitter e(out, batch_size);
  for (size_t k = 0; k < want.size(); ++k) {
    if (want[k] && !vp.output_batched[k]) {
      outs[k] = e.Materialize({outs[k], kUnbatched}, 0);
    }
  }
  const Status st = out.SetOutputs(std::move(outs));
  if (!st.ok()) throw BatchingError{st};
  return std::make_shared<const Program>(std::move(out));
}

// The batched loop body under the carry fixpoint. `in_dims` covers every
// body parameter; carries start at 0 (batched) or kUnbatched and are
// batched further until the body returns no batched carry for an
// unbatched one. Returns the body with every batched carry output
// materialized at 0; `in_dims` and `ys_batched` say what it takes and
// gives.
std::shared_ptr<const Program> BatchLoopBody(const Program& body, int nc,
                                             int64_t batch_size,
                                             std::vector<int>* in_dims,
                                             std::vector<bool>* ys_batched) {
  while (true) {
    const BatchedProgram vp = VmapOrThrow(body, *in_dims, batch_size);
    bool changed = false;
    for (int i = 0; i < nc; ++i) {
      if (vp.output_batched[i] && (*in_dims)[i] == kUnbatched) {
        (*in_dims)[i] = 0;
        changed = true;
      }
    }
    if (changed) continue;
    std::vector<bool> want(vp.output_batched.size(), false);
    for (int i = 0; i < nc; ++i) want[i] = (*in_dims)[i] == 0;
    ys_batched->assign(vp.output_batched.begin() + nc, vp.output_batched.end());
    return Materialized(vp, want, batch_size);
  }
}

std::vector<int> BdimsOf(const std::vector<BatchedValue>& v, size_t begin,
                         size_t end) {
  std::vector<int> dims;
  for (size_t i = begin; i < end; ++i) dims.push_back(v[i].bdim);
  return dims;
}

// Carry operands: batched at 0 where the fixpoint batched them.
void AddCarryOperands(BatchEmitter& e, const std::vector<BatchedValue>& ops,
                      const std::vector<int>& in_dims, int nc,
                      std::vector<ValueId>* out) {
  for (int i = 0; i < nc; ++i) {
    out->push_back(in_dims[i] == 0 ? e.Materialize(ops[i], 0) : ops[i].id);
  }
}

std::vector<BatchedValue> BatchScan(BatchEmitter& e, const ScanAttrs& s,
                                    const std::vector<BatchedValue>& ops) {
  const int nc = s.num_carries, nx = s.num_xs;
  std::vector<int> in_dims = BdimsOf(ops, 0, ops.size());
  for (int i = 0; i < nc; ++i) in_dims[i] = ops[i].batched() ? 0 : kUnbatched;
  for (int j = 0; j < nx; ++j) {  // a slice of xs batched at 1 is batched at 0
    in_dims[nc + j] = ops[nc + j].batched() ? 0 : kUnbatched;
  }
  std::vector<bool> ys_batched;
  ScanAttrs attrs = s;
  attrs.body =
      BatchLoopBody(*s.body, nc, e.batch_size(), &in_dims, &ys_batched);
  std::vector<ValueId> operands;
  AddCarryOperands(e, ops, in_dims, nc, &operands);
  for (int j = 0; j < nx; ++j) {
    const BatchedValue& x = ops[nc + j];
    operands.push_back(x.batched() ? e.Materialize(x, 1) : x.id);
  }
  for (size_t k = nc + nx; k < ops.size(); ++k) operands.push_back(ops[k].id);
  const std::vector<ValueId> res =
      AddGroupOrThrow(e.program(), attrs, operands);
  std::vector<BatchedValue> out;
  for (int i = 0; i < nc; ++i) out.push_back({res[i], in_dims[i]});
  for (size_t j = 0; j < ys_batched.size(); ++j) {
    out.push_back({res[nc + j], ys_batched[j] ? 1 : kUnbatched});
  }
  return out;
}

// The while loop of a batched predicate: cond' and body' over (carries
// batched at 0, invariants as batched).
std::vector<BatchedValue> BatchWhileBatchedPredicate(
    BatchEmitter& e, const WhileAttrs& w, const std::vector<BatchedValue>& ops,
    std::vector<int> in_dims) {
  const int nc = w.num_carries;
  const int64_t batch = e.batch_size();
  for (int i = 0; i < nc; ++i) in_dims[i] = 0;
  const BatchedProgram vb = VmapOrThrow(*w.body, in_dims, batch);
  const std::shared_ptr<const Program> body =
      Materialized(vb, std::vector<bool>(nc, true), batch);
  const std::shared_ptr<const Program> cond =
      Materialized(VmapOrThrow(*w.cond, in_dims, batch), {true}, batch);

  // Both regions take the batched body's parameters.
  const std::vector<ValueType> types = body->parameter_types();
  auto start = [&](Program& p) {
    std::vector<ValueId> params;
    for (const ValueType& t : types)
      params.push_back(p.AddParameter(t).value());
    return params;
  };
  Program any_lane;
  {
    const std::vector<ValueId> params = start(any_lane);
    BatchEmitter r(any_lane, batch);
    const ValueId pred = InlineOrThrow(any_lane, *cond, params)[0];
    const ValueId count = r.Add(ReduceAttrs{ReduceOp::kSum, {0}},
                                {r.Convert(pred, DType::kInt32)});
    const ValueId any =
        r.Compare(CompareOp::kGt, count, r.Scalar(DType::kInt32, 0));
    const Status st = any_lane.SetOutputs({any});
    if (!st.ok()) throw BatchingError{st};
  }
  Program step;
  {
    const std::vector<ValueId> params = start(step);
    BatchEmitter r(step, batch);
    const ValueId pred = InlineOrThrow(step, *cond, params)[0];
    const std::vector<ValueId> next = InlineOrThrow(step, *body, params);
    std::vector<ValueId> outs;
    for (int i = 0; i < nc; ++i) {
      const Shape shape = r.shape(next[i]);
      const ValueId lane = r.BroadcastInDim(pred, shape, {0});
      outs.push_back(r.Select(lane, next[i], params[i]));
    }
    const Status st = step.SetOutputs(std::move(outs));
    if (!st.ok()) throw BatchingError{st};
  }
  WhileAttrs attrs = w;
  attrs.cond = std::make_shared<const Program>(std::move(any_lane));
  attrs.body = std::make_shared<const Program>(std::move(step));
  std::vector<ValueId> operands;
  AddCarryOperands(e, ops, in_dims, nc, &operands);
  for (size_t k = nc; k < ops.size(); ++k) operands.push_back(ops[k].id);
  const std::vector<ValueId> res =
      AddGroupOrThrow(e.program(), attrs, operands);
  std::vector<BatchedValue> out;
  for (ValueId v : res) out.push_back({v, 0});
  return out;
}

std::vector<BatchedValue> BatchWhile(BatchEmitter& e, const WhileAttrs& w,
                                     const std::vector<BatchedValue>& ops) {
  const int nc = w.num_carries;
  std::vector<int> in_dims = BdimsOf(ops, 0, ops.size());
  for (int i = 0; i < nc; ++i) in_dims[i] = ops[i].batched() ? 0 : kUnbatched;
  std::vector<bool> ys_batched;
  WhileAttrs attrs = w;
  attrs.body =
      BatchLoopBody(*w.body, nc, e.batch_size(), &in_dims, &ys_batched);
  const BatchedProgram cond = VmapOrThrow(*w.cond, in_dims, e.batch_size());
  if (cond.output_batched[0]) {
    return BatchWhileBatchedPredicate(e, w, ops, in_dims);
  }
  attrs.cond = std::make_shared<const Program>(cond.program);
  std::vector<ValueId> operands;
  AddCarryOperands(e, ops, in_dims, nc, &operands);
  for (size_t k = nc; k < ops.size(); ++k) operands.push_back(ops[k].id);
  const std::vector<ValueId> res =
      AddGroupOrThrow(e.program(), attrs, operands);
  std::vector<BatchedValue> out;
  for (int i = 0; i < nc; ++i) out.push_back({res[i], in_dims[i]});
  return out;
}

std::vector<BatchedValue> BatchCase(BatchEmitter& e, const CaseAttrs& c,
                                    const std::vector<BatchedValue>& ops) {
  const int64_t batch = e.batch_size();
  const std::vector<int> in_dims = BdimsOf(ops, 1, ops.size());
  std::vector<BatchedProgram> vps;
  for (const auto& branch : c.branches) {
    vps.push_back(VmapOrThrow(*branch, in_dims, batch));
  }
  const size_t n = vps[0].output_batched.size();
  std::vector<ValueId> args;
  for (size_t k = 1; k < ops.size(); ++k) args.push_back(ops[k].id);
  std::vector<BatchedValue> out;

  if (!ops[0].batched()) {
    std::vector<bool> batched(n, false);
    for (const BatchedProgram& vp : vps) {
      for (size_t k = 0; k < n; ++k) {
        batched[k] = batched[k] || vp.output_batched[k];
      }
    }
    CaseAttrs attrs = c;
    for (size_t b = 0; b < vps.size(); ++b) {
      attrs.branches[b] = Materialized(vps[b], batched, batch);
    }
    args.insert(args.begin(), ops[0].id);
    const std::vector<ValueId> res = AddGroupOrThrow(e.program(), attrs, args);
    for (size_t k = 0; k < n; ++k) {
      out.push_back({res[k], batched[k] ? 0 : kUnbatched});
    }
    return out;
  }

  // A batched index: every branch on every lane, then a select per lane.
  const int64_t nb = static_cast<int64_t>(c.branches.size());
  const Shape lanes{batch};
  ValueId index = e.Materialize(ops[0], 0);
  index = e.Binary(BinaryOp::kMax, index, e.Full(DType::kInt32, lanes, 0));
  index = e.Binary(BinaryOp::kMin, index,
                   e.Full(DType::kInt32, lanes, static_cast<double>(nb - 1)));
  std::vector<std::vector<ValueId>> results;
  for (const BatchedProgram& vp : vps) {
    const std::shared_ptr<const Program> p =
        Materialized(vp, std::vector<bool>(n, true), batch);
    results.push_back(InlineOrThrow(e.program(), *p, args));
  }
  for (size_t k = 0; k < n; ++k) {
    ValueId r = results[nb - 1][k];
    for (int64_t b = nb - 2; b >= 0; --b) {
      const ValueId is_b =
          e.Compare(CompareOp::kEq, index,
                    e.Full(DType::kInt32, lanes, static_cast<double>(b)));
      const Shape shape = e.shape(r);
      r = e.Select(e.BroadcastInDim(is_b, shape, {0}), results[b][k], r);
    }
    out.push_back({r, 0});
  }
  return out;
}

}  // namespace

std::vector<BatchedValue> BatchRegionGroup(
    BatchEmitter& e, const OpAttrs& attrs,
    const std::vector<BatchedValue>& operands) {
  const OpAttrs leader = WithOutputIndex(attrs, 0);
  if (const auto* w = std::get_if<WhileAttrs>(&leader)) {
    return BatchWhile(e, *w, operands);
  }
  if (const auto* s = std::get_if<ScanAttrs>(&leader)) {
    return BatchScan(e, *s, operands);
  }
  return BatchCase(e, std::get<CaseAttrs>(leader), operands);
}

}  // namespace baton::compiler::transforms::control_flow
