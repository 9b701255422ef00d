#include "baton/compiler/shard_map_body.h"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "baton/compiler/all_reduce_combiner.h"
#include "baton/compiler/effects.h"
#include "baton/compiler/passes.h"

namespace baton::compiler {

std::vector<int64_t> GroupMembers(const DeviceMesh& mesh, int64_t device,
                                  const std::vector<int>& axes) {
  const std::vector<int64_t> coord = MeshCoordinate(mesh, device);
  const int64_t size = mesh.SizeOf(axes);
  std::vector<int64_t> members;
  for (int64_t k = 0; k < size; ++k) {
    std::vector<int64_t> c = coord;
    int64_t rest = k;
    for (size_t j = axes.size(); j-- > 0;) {  // the last axis is minor
      c[axes[j]] = rest % mesh.axis_sizes[axes[j]];
      rest /= mesh.axis_sizes[axes[j]];
    }
    int64_t position = 0;  // row-major over the mesh
    for (size_t a = 0; a < c.size(); ++a) {
      position = position * mesh.axis_sizes[a] + c[a];
    }
    members.push_back(position);
  }
  return members;
}

int64_t GroupIndex(const DeviceMesh& mesh, int64_t device,
                   const std::vector<int>& axes) {
  const std::vector<int64_t> coord = MeshCoordinate(mesh, device);
  int64_t index = 0;
  for (int a : axes) index = index * mesh.axis_sizes[a] + coord[a];
  return index;
}

namespace {

constexpr const char* kKindNames[] = {"all_gather", "psum_scatter",
                                      "all_to_all", "ppermute"};

std::string NameOf(const SpmdCollective& c) {
  return kKindNames[static_cast<int>(c.kind)];
}

// `shape` with `dim` removed / with a dimension of `size` inserted at `dim`.
Shape Without(const Shape& shape, int dim) {
  std::vector<int64_t> dims = shape.dims();
  dims.erase(dims.begin() + dim);
  return Shape(std::move(dims));
}
Shape With(const Shape& shape, int dim, int64_t size) {
  std::vector<int64_t> dims = shape.dims();
  dims.insert(dims.begin() + dim, size);
  return Shape(std::move(dims));
}

// Block `k` of `n` along `dim` of `x` (`keep`: the dimension stays, 1/n of
// it; else it is one index, removed).
Result<ValueId> BlockAlong(Program& p, ValueId x, int dim, int64_t k, int64_t n,
                           bool keep) {
  const Shape shape = p.type(x).shape;  // a copy: Add may move the program's
  const int64_t size = keep ? shape.dim(dim) / n : 1;
  std::vector<int64_t> start(shape.rank(), 0), limit = shape.dims(),
      stride(shape.rank(), 1);
  start[dim] = k * size;
  limit[dim] = (k + 1) * size;
  BATON_ASSIGN_OR_RETURN(ValueId y, p.Add(SliceAttrs{start, limit, stride}, {x}));
  if (keep) return y;
  return p.Add(ReshapeAttrs{Without(shape, dim)}, {y});
}

// The values concatenated along `dim`, or (`stack`) each given a new
// dimension there first.
Result<ValueId> Join(Program& p, const std::vector<ValueId>& parts, int dim,
                     bool stack) {
  OperandList ops;
  for (ValueId v : parts) {
    if (stack) {
      BATON_ASSIGN_OR_RETURN(
          v, p.Add(ReshapeAttrs{With(p.type(v).shape, dim, 1)}, {v}));
    }
    ops.push_back(v);
  }
  if (ops.size() == 1) return ops[0];
  return p.Add(ConcatenateAttrs{dim}, std::move(ops));
}

}  // namespace

Result<Shape> ResultShape(const SpmdCollective& c, const Shape& operand,
                          int64_t members) {
  const int rank = operand.rank();
  const std::string what = NameOf(c) + " of " + operand.to_string() + " over " +
                           std::to_string(members) + " devices: ";
  auto check_dim = [&](int dim, int limit) -> Status {
    if (dim < 0 || dim >= limit) {
      return InvalidArgument(what + "dimension " + std::to_string(dim) +
                             " is out of range");
    }
    return OkStatus();
  };
  auto check_split = [&](int dim, bool tiled) -> Status {
    BATON_RETURN_IF_ERROR(check_dim(dim, rank));
    if (tiled ? operand.dim(dim) % members != 0 : operand.dim(dim) != members) {
      return InvalidArgument(what + "dimension " + std::to_string(dim) +
                             " cannot be split over the group");
    }
    return OkStatus();
  };
  switch (c.kind) {
    case SpmdCollective::Kind::kAllGather: {
      if (c.tiled) {
        BATON_RETURN_IF_ERROR(check_dim(c.dimension, rank));
        std::vector<int64_t> dims = operand.dims();
        dims[c.dimension] *= members;
        return Shape(std::move(dims));
      }
      BATON_RETURN_IF_ERROR(check_dim(c.dimension, rank + 1));
      return With(operand, c.dimension, members);
    }
    case SpmdCollective::Kind::kReduceScatter: {
      BATON_RETURN_IF_ERROR(check_split(c.dimension, c.tiled));
      if (!c.tiled) return Without(operand, c.dimension);
      std::vector<int64_t> dims = operand.dims();
      dims[c.dimension] /= members;
      return Shape(std::move(dims));
    }
    case SpmdCollective::Kind::kAllToAll: {
      BATON_RETURN_IF_ERROR(check_split(c.dimension, c.tiled));
      BATON_RETURN_IF_ERROR(check_dim(c.concat_dimension, rank));
      if (!c.tiled) {
        return With(Without(operand, c.dimension), c.concat_dimension, members);
      }
      std::vector<int64_t> dims = operand.dims();
      dims[c.dimension] /= members;
      dims[c.concat_dimension] *= members;
      return Shape(std::move(dims));
    }
    case SpmdCollective::Kind::kPermute:
      if (static_cast<int64_t>(c.source_of.size()) != members) {
        return InvalidArgument(what + "a source is needed for each of the " +
                               std::to_string(members) + " members");
      }
      for (int src : c.source_of) {
        if (src < -1 || src >= members) {
          return InvalidArgument(what + "source " + std::to_string(src) +
                                 " is not a member");
        }
      }
      return operand;
  }
  return Internal(what + "unknown collective");
}

std::vector<int64_t> CollectiveSources(const SpmdStage& stage,
                                       const DeviceMesh& mesh, int64_t device) {
  std::vector<int64_t> members = GroupMembers(mesh, device, stage.axes);
  const SpmdCollective& c = *stage.collective;
  if (c.kind != SpmdCollective::Kind::kPermute) return members;
  const int64_t me = GroupIndex(mesh, device, stage.axes);
  // A source list of another length is refused by ResultShape.
  if (me >= static_cast<int64_t>(c.source_of.size())) return {};
  const int src = c.source_of[me];
  if (src < 0 || src >= static_cast<int>(members.size())) return {};
  return {members[src]};
}

Result<CollectivePart> CollectiveProgram(const SpmdStage& stage,
                                         const ValueType& operand,
                                         const DeviceMesh& mesh, int64_t device) {
  const SpmdCollective& c = *stage.collective;
  const std::vector<int64_t> members = GroupMembers(mesh, device, stage.axes);
  const int64_t n = static_cast<int64_t>(members.size());
  const int64_t me = GroupIndex(mesh, device, stage.axes);
  BATON_RETURN_IF_ERROR(ResultShape(c, operand.shape, n).status());
  CollectivePart part;
  part.sources = CollectiveSources(stage, mesh, device);
  if (c.kind == SpmdCollective::Kind::kPermute) {
    if (!part.sources.empty()) return part;  // the source's block itself
    Program p;  // no member sends here: zeros
    BATON_ASSIGN_OR_RETURN(
        ValueId zero,
        p.Add(ConstantAttrs{std::make_shared<Literal>(Shape{}, operand.dtype)}, {}));
    BATON_ASSIGN_OR_RETURN(ValueId z,
                           p.Add(BroadcastInDimAttrs{operand.shape, {}}, {zero}));
    BATON_RETURN_IF_ERROR(p.SetOutputs({z}));
    part.program = std::move(p);
    return part;
  }
  Program p;
  std::vector<ValueId> blocks;
  for (int64_t k = 0; k < n; ++k) {
    BATON_ASSIGN_OR_RETURN(ValueId x, p.AddParameter(operand));
    blocks.push_back(x);
  }
  ValueId result = -1;
  switch (c.kind) {
    case SpmdCollective::Kind::kAllGather: {
      BATON_ASSIGN_OR_RETURN(result, Join(p, blocks, c.dimension, !c.tiled));
      break;
    }
    case SpmdCollective::Kind::kReduceScatter: {
      // Summed left to right in group order, as every member sums.
      for (int64_t k = 0; k < n; ++k) {
        BATON_ASSIGN_OR_RETURN(ValueId b,
                               BlockAlong(p, blocks[k], c.dimension, me, n, c.tiled));
        if (k == 0) {
          result = b;
        } else {
          BATON_ASSIGN_OR_RETURN(result,
                                 p.Add(BinaryAttrs{BinaryOp::kAdd}, {result, b}));
        }
      }
      break;
    }
    case SpmdCollective::Kind::kAllToAll: {
      std::vector<ValueId> mine;
      for (int64_t k = 0; k < n; ++k) {
        BATON_ASSIGN_OR_RETURN(ValueId b,
                               BlockAlong(p, blocks[k], c.dimension, me, n, c.tiled));
        mine.push_back(b);
      }
      BATON_ASSIGN_OR_RETURN(result, Join(p, mine, c.concat_dimension, !c.tiled));
      break;
    }
    case SpmdCollective::Kind::kPermute:
      break;
  }
  BATON_RETURN_IF_ERROR(p.SetOutputs({result}));
  part.program = std::move(p);
  return part;
}

Result<SpmdProgram> PartitionShardMapBody(
    const Program& program, const DeviceMesh& mesh,
    const std::vector<ShardMapCollective>& collectives) {
  const Program p = InlineCalls(program);
  const int num_params = p.num_parameters();
  const int num_outputs = static_cast<int>(p.outputs().size());
  std::vector<int> collective_of_param(num_params, -1);
  std::vector<bool> is_operand(num_outputs, false);
  for (size_t k = 0; k < collectives.size(); ++k) {
    const ShardMapCollective& c = collectives[k];
    const std::string what =
        "PartitionShardMapBody: collective " + std::to_string(k);
    if (c.result_parameter < 0 || c.result_parameter >= num_params ||
        collective_of_param[c.result_parameter] >= 0) {
      return InvalidArgument(what + ": result parameter " +
                             std::to_string(c.result_parameter) +
                             " is out of range or another's");
    }
    if (c.operand_output < 0 || c.operand_output >= num_outputs ||
        is_operand[c.operand_output]) {
      return InvalidArgument(what + ": operand output " +
                             std::to_string(c.operand_output) +
                             " is out of range or another's");
    }
    for (int a : c.axes) {
      if (a < 0 || a >= static_cast<int>(mesh.axis_sizes.size())) {
        return InvalidArgument(what + ": mesh axis " + std::to_string(a) +
                               " is out of range");
      }
    }
    const ValueType& result = p.type(p.parameter(c.result_parameter));
    const ValueType& operand = p.type(p.outputs()[c.operand_output]);
    Shape want = operand.shape;
    if (c.moves.has_value()) {
      BATON_ASSIGN_OR_RETURN(
          want, ResultShape(*c.moves, operand.shape, mesh.SizeOf(c.axes)));
    }
    if (result.shape != want || result.dtype != operand.dtype) {
      return InvalidArgument(what + ": its result is " + result.shape.to_string() +
                             " " + std::string(dtype_name(result.dtype)) +
                             " but its operand " + operand.shape.to_string() +
                             " " + std::string(dtype_name(operand.dtype)) +
                             " makes " + want.to_string());
    }
    collective_of_param[c.result_parameter] = static_cast<int>(k);
    is_operand[c.operand_output] = true;
  }
  // Levels: how many collectives come before each value. A collective's
  // result is one level above its operand; effects keep their order.
  const ValueId n = p.num_values();
  std::vector<int> level(n, 0);
  std::vector<bool> known(n, false);
  std::vector<int> param_index(n, -1);
  for (int i = 0; i < num_params; ++i) {
    param_index[p.parameter(i)] = i;
    if (collective_of_param[i] < 0) known[p.parameter(i)] = true;
  }
  // A collective's result: one level above its operand, which may itself
  // be another collective's result (psum of an all_gather).
  auto level_of = [&](ValueId v) -> Result<int> {
    std::vector<ValueId> chain;
    while (!known[v]) {
      const int k = param_index[v] >= 0 ? collective_of_param[param_index[v]] : -1;
      if (k < 0 || chain.size() > collectives.size()) {
        return InvalidArgument(
            "PartitionShardMapBody: a collective's operand is computed after "
            "its result is read");
      }
      chain.push_back(v);
      v = p.outputs()[collectives[k].operand_output];
    }
    for (size_t j = chain.size(); j-- > 0;) {
      level[chain[j]] = level[v] + 1;
      known[chain[j]] = true;
      v = chain[j];
    }
    return level[v];
  };
  int last_effect = 0, top = 0;
  for (ValueId v = 0; v < n; ++v) {
    const Instruction& inst = p.instruction(v);
    if (inst.kind() == OpKind::kParameter) continue;
    for (ValueId o : inst.operands) {
      BATON_ASSIGN_OR_RETURN(int l, level_of(o));
      level[v] = std::max(level[v], l);
    }
    if (HasSideEffect(inst.attrs)) {
      level[v] = std::max(level[v], last_effect);
      last_effect = level[v];
    }
    known[v] = true;
    top = std::max(top, level[v]);
  }
  for (size_t k = 0; k < collectives.size(); ++k) {
    BATON_ASSIGN_OR_RETURN(int l, level_of(p.parameter(collectives[k].result_parameter)));
    top = std::max(top, l);
  }
  // Which levels read each value (the outputs read at the end).
  std::vector<int> last_read(n, -1);
  for (ValueId v = 0; v < n; ++v) {
    const Instruction& inst = p.instruction(v);
    if (inst.kind() == OpKind::kParameter) continue;
    for (ValueId o : inst.operands) last_read[o] = std::max(last_read[o], level[v]);
  }
  // Values the stages keep whatever reads them later: the program's
  // outputs and the collectives' operands.
  std::vector<bool> final_output(n, false), gives(n, false);
  for (int j = 0; j < num_outputs; ++j) {
    (is_operand[j] ? gives : final_output)[p.outputs()[j]] = true;
  }
  SpmdProgram out;
  out.mesh = mesh;
  std::vector<int> slot_of(n, -1);
  auto new_slot = [&](ValueId v) {
    SpmdSlot s;
    s.global = p.type(v);
    s.sharding = Sharding::Replicated(s.global.shape.rank());
    s.block = s.global.shape;
    out.slots.push_back(std::move(s));
    slot_of[v] = static_cast<int>(out.slots.size()) - 1;
    return slot_of[v];
  };
  for (int i = 0; i < num_params; ++i) {
    if (collective_of_param[i] >= 0) continue;
    out.parameter_slots.push_back(new_slot(p.parameter(i)));
  }
  for (int l = 0; l <= top; ++l) {
    // The compute stage of level l: its instructions in program order, the
    // values of earlier stages (and the collectives' results) as
    // parameters, what later levels, collectives or the outputs read as
    // outputs.
    auto cur = std::make_unique<Program>();
    std::vector<ValueId> local(n, -1);
    SpmdStage stage;
    stage.kind = SpmdStage::Kind::kCompute;
    std::vector<ValueId> made;
    for (ValueId v = 0; v < n; ++v) {
      const Instruction& inst = p.instruction(v);
      if (inst.kind() == OpKind::kParameter || level[v] != l) continue;
      OperandList ops;
      for (ValueId o : inst.operands) {
        if (local[o] < 0) {
          if (slot_of[o] < 0) {
            return Internal("PartitionShardMapBody: %" + std::to_string(o) +
                            " is neither computed here nor kept between stages");
          }
          BATON_ASSIGN_OR_RETURN(local[o], cur->AddParameter(p.type(o)));
          stage.inputs.push_back(slot_of[o]);
        }
        ops.push_back(local[o]);
      }
      BATON_ASSIGN_OR_RETURN(local[v], cur->Add(inst.attrs, std::move(ops)));
      made.push_back(v);
    }
    std::vector<ValueId> outs;
    for (ValueId v : made) {
      if (last_read[v] <= l && !final_output[v] && !gives[v]) continue;
      stage.outputs.push_back(new_slot(v));
      outs.push_back(local[v]);
    }
    if (!outs.empty()) {
      BATON_RETURN_IF_ERROR(cur->SetOutputs(std::move(outs)));
      stage.program = std::shared_ptr<const Program>(std::move(cur));
      out.stages.push_back(std::move(stage));
    }
    // The collectives whose operands are ready now.
    for (const ShardMapCollective& c : collectives) {
      const ValueId operand = p.outputs()[c.operand_output];
      const ValueId result = p.parameter(c.result_parameter);
      if (level[result] != l + 1) continue;
      SpmdStage comm;
      comm.axes = c.axes;
      comm.source = slot_of[operand];
      if (comm.source < 0) {
        return Internal("PartitionShardMapBody: a collective's operand has no slot");
      }
      comm.result = new_slot(result);
      if (c.moves.has_value()) {
        comm.kind = SpmdStage::Kind::kCollective;
        comm.collective = std::make_shared<const SpmdCollective>(*c.moves);
      } else {
        comm.kind = SpmdStage::Kind::kAllReduce;
        comm.op = c.op;
      }
      out.stages.push_back(std::move(comm));
    }
  }
  for (int j = 0; j < num_outputs; ++j) {
    if (is_operand[j]) continue;
    const ValueId v = p.outputs()[j];
    if (slot_of[v] < 0) {
      return Internal("PartitionShardMapBody: output " + std::to_string(j) +
                      " has no slot");
    }
    out.output_slots.push_back(slot_of[v]);
  }
  return CombineAllReduces(std::move(out));
}

}  // namespace baton::compiler
