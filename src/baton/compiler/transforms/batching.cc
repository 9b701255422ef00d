// Vmap (batching.h): the driver that walks the program and the rules for
// parameters and calls; the op rules are in batching_rules_*.cc, the
// control-flow rules in control_flow_batching.cc.
#include "baton/compiler/transforms/batching.h"

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "baton/compiler/control_flow.h"
#include "baton/compiler/transforms/batching_rules.h"
#include "baton/compiler/transforms/call_group.h"
#include "baton/compiler/transforms/control_flow_rules.h"

namespace baton::compiler::transforms {
namespace {

using batching::BatchedValue;
using batching::BatchEmitter;
using batching::BatchingError;
using batching::kUnbatched;

// Batched bodies and rules, shared by every call of the same program within
// one Vmap (a body called many times is batched once).
using BodyCache = std::map<const Program*, std::shared_ptr<const Program>>;

// Every value of `p` (regions and call bodies included) must still be a
// valid array with a batch dimension of `batch_size` added: a value of
// shape (2^58, 0) is, but batched by 2 its dimensions multiply past what a
// shape may hold. Refused up front, naming the value, rather than by a
// batching rule half way through.
Status CheckBatchedShapesFit(const Program& p, int64_t batch_size) {
  for (ValueId id = 0; id < p.num_values(); ++id) {
    const ValueType& t = p.type(id);
    std::vector<int64_t> dims = t.shape.dims();
    dims.insert(dims.begin(), batch_size);
    if (Status s = Shape(std::move(dims)).Check(); !s.ok()) {
      return InvalidArgument("vmap: a batch of " + std::to_string(batch_size) +
                             " makes the " + TypeForMessage(t) +
                             " value of the function too large to batch: " +
                             s.message());
    }
    const Instruction& inst = p.instruction(id);
    for (const Program* r : Regions(inst.attrs)) {
      BATON_RETURN_IF_ERROR(CheckBatchedShapesFit(*r, batch_size));
    }
    if (const auto* call = inst.attrs_if<CallAttrs>()) {
      if (call->body) {
        BATON_RETURN_IF_ERROR(CheckBatchedShapesFit(*call->body, batch_size));
      }
    }
  }
  return OkStatus();
}

BatchedProgram VmapImpl(const Program& src, const std::vector<int>& in_dims,
                        int64_t batch_size, bool all_outputs_batched,
                        BodyCache& cache);

// The convention for everything a call runs: every parameter and every
// output batched at dimension 0. Uniformity is what keeps a custom_vjp's
// forward rule, whose residuals feed the backward rule, consistent with it,
// and lets a later transformation treat the call like any other.
std::shared_ptr<const Program> BatchBody(
    const std::shared_ptr<const Program>& body, int64_t batch_size,
    BodyCache& cache) {
  if (!body) return nullptr;
  auto it = cache.find(body.get());
  if (it != cache.end()) return it->second;
  std::vector<int> in_dims(body->num_parameters(), 0);
  auto batched = std::make_shared<const Program>(
      VmapImpl(*body, in_dims, batch_size, true, cache).program);
  cache.emplace(body.get(), batched);
  return batched;
}

// Batches the call group led by `leader`, mapping every member.
void BatchCallGroup(BatchEmitter& e, const Program& src, ValueId leader,
                    const std::vector<BatchedValue>& operands,
                    std::vector<BatchedValue>& map, BodyCache& cache) {
  const CallAttrs& call = src.instruction(leader).attrs_as<CallAttrs>();
  if (!call.body) {  // identity kinds: on the batched value
    CallAttrs c = call;
    if (c.kind == CallKind::kShardingConstraint && operands[0].batched()) {
      // The batch dimension keeps its layout (JAX: unconstrained there).
      c.sharding.insert(c.sharding.begin() + operands[0].bdim,
                        std::vector<std::string>{kUnconstrainedAxis});
    }
    map[leader] = {e.Add(c, {operands[0].id}), operands[0].bdim};
    return;
  }
  std::vector<ValueId> args;
  for (const BatchedValue& v : operands) args.push_back(e.Materialize(v, 0));
  CallAttrs batched = call;
  batched.body = BatchBody(call.body, e.batch_size(), cache);
  batched.rule = BatchBody(call.rule, e.batch_size(), cache);
  batched.rule2 = BatchBody(call.rule2, e.batch_size(), cache);
  Result<std::vector<ValueId>> outs = AddCallGroup(e.program(), batched, args);
  if (!outs.ok()) {
    throw BatchingError{Internal("vmap: the batched call " +
                                 OpDisplayName(call) +
                                 " was rejected: " + outs.status().message())};
  }
  for (ValueId member : CallGroupOf(src, leader)) {
    const int index =
        src.instruction(member).attrs_as<CallAttrs>().output_index;
    map[member] = {outs.value()[index], 0};
  }
  // A call not laid out as a group (CallGroupOf gives just itself) may have
  // any output_index; the mapping above covers it too.
}

Status CheckArguments(const Program& src, const std::vector<int>& in_dims,
                      int64_t batch_size) {
  if (batch_size < 0) {
    return InvalidArgument("vmap: the batch size must be >= 0, got " +
                           std::to_string(batch_size));
  }
  if (static_cast<int>(in_dims.size()) != src.num_parameters()) {
    return InvalidArgument(
        "vmap: in_dims has " + std::to_string(in_dims.size()) +
        " entries but the function takes " +
        std::to_string(src.num_parameters()) +
        " arguments; give one entry per argument (-1 for unbatched)");
  }
  for (int i = 0; i < src.num_parameters(); ++i) {
    const int rank = src.parameter_type(i).shape.rank();
    if (in_dims[i] < -1 || in_dims[i] > rank) {
      return InvalidArgument("vmap: in_dims[" + std::to_string(i) +
                             "] = " + std::to_string(in_dims[i]) +
                             " is out of range for argument " +
                             std::to_string(i) + " of per-example type " +
                             TypeForMessage(src.parameter_type(i)) +
                             ": the batch dimension " + "must be in [0, " +
                             std::to_string(rank) + "], or -1 for unbatched");
    }
  }
  return OkStatus();
}

BatchedProgram VmapImpl(const Program& src, const std::vector<int>& in_dims,
                        int64_t batch_size, bool all_outputs_batched,
                        BodyCache& cache) {
  BatchedProgram result;
  BatchEmitter e(result.program, batch_size);
  std::vector<BatchedValue> map(src.num_values());
  std::vector<bool> done(src.num_values(), false);
  std::vector<BatchedValue> operands;
  for (ValueId id = 0; id < src.num_values(); ++id) {
    if (done[id]) continue;  // a member of a call group batched already
    const Instruction& inst = src.instruction(id);
    if (const auto* p = inst.attrs_if<ParameterAttrs>()) {
      ValueType type = p->type;
      const int bdim = in_dims[p->index];
      if (bdim != kUnbatched) {
        std::vector<int64_t> dims = type.shape.dims();
        dims.insert(dims.begin() + bdim, batch_size);
        type.shape = Shape(std::move(dims));
      }
      Result<ValueId> v = result.program.AddParameter(type);
      if (!v.ok()) throw BatchingError{v.status()};
      map[id] = {v.value(), bdim};
      continue;
    }
    operands.clear();
    bool any_batched = false;
    for (ValueId operand : inst.operands) {
      operands.push_back(map[operand]);
      any_batched = any_batched || map[operand].batched();
    }
    if (!any_batched) {
      // The same for every example: copied as it is (a call group member by
      // member, which keeps the group adjacent).
      OperandList list;
      for (const BatchedValue& v : operands) list.push_back(v.id);
      map[id] = {e.Add(inst.attrs, std::move(list)), kUnbatched};
      continue;
    }
    switch (inst.kind()) {
      case OpKind::kConvert:
      case OpKind::kUnary:
      case OpKind::kBinary:
      case OpKind::kCompare:
      case OpKind::kSelect:
      case OpKind::kTransfer:
        map[id] = batching::BatchElementwise(e, inst, operands);
        break;
      case OpKind::kBroadcastInDim:
      case OpKind::kReshape:
      case OpKind::kTranspose:
      case OpKind::kSlice:
      case OpKind::kConcatenate:
      case OpKind::kPad:
        map[id] = batching::BatchShapeOp(e, inst, operands);
        break;
      case OpKind::kReduce:
      case OpKind::kDotGeneral:
        map[id] = batching::BatchReduceOrDot(e, inst, operands);
        break;
      case OpKind::kDynamicSlice:
      case OpKind::kDynamicUpdateSlice:
      case OpKind::kGather:
      case OpKind::kScatter:
      case OpKind::kSort:
        map[id] = batching::BatchIndexing(e, inst, operands);
        break;
      case OpKind::kLinalg:
      case OpKind::kFft:  // both act on trailing dimensions
        map[id] = batching::BatchLinalg(e, inst, operands);
        break;
      case OpKind::kHostCallback:
        map[id] = batching::BatchHostCallback(e, inst, operands);
        break;
      case OpKind::kCall:
        BatchCallGroup(e, src, id, operands, map, cache);
        for (ValueId member : CallGroupOf(src, id)) done[member] = true;
        break;
      case OpKind::kWhile:
      case OpKind::kScan:
      case OpKind::kCase: {  // control_flow_batching.cc, a group at once
        const std::vector<BatchedValue> outs =
            control_flow::BatchRegionGroup(e, inst.attrs, operands);
        for (ValueId member : RegionGroupOf(src, id)) {
          map[member] =
              outs[ControlFlowOutputIndex(src.instruction(member).attrs)];
          done[member] = true;
        }
        break;
      }
      case OpKind::kParameter:  // handled above
      case OpKind::kConstant:   // no operands: never batched
      case OpKind::kIota:
        throw BatchingError{Internal("vmap: " + OpDisplayName(inst.attrs) +
                                     " cannot have batched operands")};
    }
  }
  std::vector<ValueId> outputs;
  for (ValueId out : src.outputs()) {
    BatchedValue v = map[out];
    const bool batched = v.batched() || all_outputs_batched;
    outputs.push_back(batched ? e.Materialize(v, 0) : v.id);
    result.output_batched.push_back(batched);
  }
  Status st = result.program.SetOutputs(std::move(outputs));
  if (!st.ok()) throw BatchingError{st};
  return result;
}

}  // namespace

Result<BatchedProgram> Vmap(const Program& program,
                            const std::vector<int>& in_dims,
                            int64_t batch_size) {
  BATON_RETURN_IF_ERROR(CheckArguments(program, in_dims, batch_size));
  BATON_RETURN_IF_ERROR(CheckBatchedShapesFit(program, batch_size));
  BodyCache cache;
  try {
    return VmapImpl(program, in_dims, batch_size, false, cache);
  } catch (const BatchingError& error) {
    return error.status;
  }
}

}  // namespace baton::compiler::transforms
