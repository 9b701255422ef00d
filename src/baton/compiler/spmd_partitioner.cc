#include "baton/compiler/spmd_partitioner.h"

#include "baton/compiler/all_reduce_combiner.h"
#include "baton/compiler/control_flow.h"
#include "baton/compiler/effects.h"
#include "baton/compiler/unroll_scans.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <utility>

namespace baton::compiler {

int64_t MeshSize(const DeviceMesh& mesh) {
  int64_t n = 1;
  for (int64_t s : mesh.axis_sizes) n *= s;
  return n;
}

Shape BlockShape(const Shape& global, const Sharding& sharding,
                 const DeviceMesh& mesh) {
  std::vector<int64_t> dims = global.dims();
  for (size_t d = 0; d < dims.size() && d < sharding.dims.size(); ++d) {
    dims[d] /= mesh.SizeOf(sharding.dims[d]);
  }
  return Shape(std::move(dims));
}

std::vector<int64_t> MeshCoordinate(const DeviceMesh& mesh, int64_t device) {
  std::vector<int64_t> c(mesh.axis_sizes.size());
  for (size_t a = c.size(); a-- > 0;) {
    c[a] = device % mesh.axis_sizes[a];
    device /= mesh.axis_sizes[a];
  }
  return c;
}

bool SameGroup(const DeviceMesh& mesh, int64_t d, int64_t e,
               const std::vector<int>& axes) {
  const std::vector<int64_t> cd = MeshCoordinate(mesh, d);
  const std::vector<int64_t> ce = MeshCoordinate(mesh, e);
  for (size_t a = 0; a < cd.size(); ++a) {
    const bool along = std::find(axes.begin(), axes.end(),
                                 static_cast<int>(a)) != axes.end();
    if (!along && cd[a] != ce[a]) return false;
  }
  return true;
}

std::vector<int64_t> BlockOrigin(const Shape& global, const Sharding& sharding,
                                 const DeviceMesh& mesh, int64_t device) {
  const std::vector<int64_t> c = MeshCoordinate(mesh, device);
  const Shape block = BlockShape(global, sharding, mesh);
  std::vector<int64_t> origin(global.rank(), 0);
  for (int d = 0; d < global.rank(); ++d) {
    int64_t index = 0;
    for (int a : sharding.dims[d]) index = index * mesh.axis_sizes[a] + c[a];
    origin[d] = index * block.dim(d);
  }
  return origin;
}

std::vector<int> SpmdStage::Reads() const {
  if (kind == Kind::kCompute || RunsRegions()) return inputs;
  return {source};
}

std::vector<int> SpmdStage::Writes() const {
  if (kind == Kind::kCompute || RunsRegions()) return outputs;
  return {result};
}

int SpmdProgram::num_compute_stages() const {
  int n = 0;
  for (const SpmdStage& s : stages) n += s.kind == SpmdStage::Kind::kCompute;
  return n;
}

int SpmdProgram::num_communication_stages() const {
  int n = 0;
  for (const SpmdStage& s : stages) {
    n += s.kind != SpmdStage::Kind::kCompute && !s.RunsRegions();
  }
  return n;
}

std::string SpmdProgram::ToText() const {
  auto slot_list = [](const std::vector<int>& ids) {
    std::string s;
    for (size_t k = 0; k < ids.size(); ++k) {
      if (k > 0) s += " ";
      s += "%" + std::to_string(ids[k]);
    }
    return s;
  };
  // A region's text, indented under its loop or conditional.
  auto indented = [](const std::string& region) {
    std::string out;
    size_t begin = 0;
    while (begin < region.size()) {
      const size_t end = region.find('\n', begin);
      out += "    " + region.substr(begin, end - begin) + "\n";
      if (end == std::string::npos) break;
      begin = end + 1;
    }
    return out;
  };
  std::string text;
  for (size_t i = 0; i < slots.size(); ++i) {
    const SpmdSlot& s = slots[i];
    text += "%" + std::to_string(i) + ": ";
    text += dtype_name(s.global.dtype);
    text += s.global.shape.to_string();
    text += " ";
    text += s.sharding.ToString(mesh);
    text += " block ";
    text += s.block.to_string();
    if (s.partial) text += " partial";
    text += "\n";
  }
  text += "parameters: " + slot_list(parameter_slots) + "\n";
  for (const SpmdStage& st : stages) {
    switch (st.kind) {
      case SpmdStage::Kind::kCompute:
        text += "compute (" +
                std::to_string(st.program->num_values()) + " values) " +
                slot_list(st.inputs) + " -> " + slot_list(st.outputs) + "\n";
        break;
      case SpmdStage::Kind::kAllReduce: {
        text += "all-reduce ";
        text += op_name(st.op);
        text += " over";
        for (int a : st.axes) text += " '" + mesh.axis_names[a] + "'";
        text += ": %" + std::to_string(st.source) + " -> %" +
                std::to_string(st.result) + "\n";
        break;
      }
      case SpmdStage::Kind::kCollective: {
        static constexpr const char* kNames[] = {"all-gather", "reduce-scatter",
                                                 "all-to-all", "permute"};
        const SpmdCollective& c = *st.collective;
        text += kNames[static_cast<int>(c.kind)];
        text += " over";
        for (int a : st.axes) text += " '" + mesh.axis_names[a] + "'";
        if (c.kind == SpmdCollective::Kind::kPermute) {
          text += " from";
          for (int src : c.source_of) text += " " + std::to_string(src);
        } else {
          text += " dim " + std::to_string(c.dimension);
          if (c.kind == SpmdCollective::Kind::kAllToAll) {
            text += " to " + std::to_string(c.concat_dimension);
          }
          if (c.tiled) text += " tiled";
        }
        text += ": %" + std::to_string(st.source) + " -> %" +
                std::to_string(st.result) + "\n";
        break;
      }
      case SpmdStage::Kind::kLoop:
        text += "while " + slot_list(st.inputs) + " -> " +
                slot_list(st.outputs) + "\n  cond:\n" +
                indented(st.loop->cond.ToText()) + "  body:\n" +
                indented(st.loop->body.ToText());
        break;
      case SpmdStage::Kind::kCase:
        text += "case " + slot_list(st.inputs) + " -> " + slot_list(st.outputs) + "\n";
        for (size_t b = 0; b < st.branches->branches.size(); ++b) {
          text += "  branch " + std::to_string(b) + ":\n" +
                  indented(st.branches->branches[b].ToText());
        }
        break;
      case SpmdStage::Kind::kAllGather:
      case SpmdStage::Kind::kSlice:
        text += st.kind == SpmdStage::Kind::kAllGather ? "all-gather " : "slice ";
        text += "%" + std::to_string(st.source) + " " +
                slots[st.source].sharding.ToString(mesh) + " -> %" +
                std::to_string(st.result) + " " +
                slots[st.result].sharding.ToString(mesh) + "\n";
        break;
    }
  }
  text += "outputs: " + slot_list(output_slots) + "\n";
  return text;
}

namespace {

constexpr int kOutput = std::numeric_limits<int>::max();

// The order the instructions are partitioned in. Each instruction gets a
// level: how many combines of partial results must come before it (one more
// than a partial operand's, at least any operand's). The program runs level
// by level, each in program order, so the all-reduces gather at as few
// points as the dependencies allow: a training step's loss, summed before
// the backward pass, is combined with the gradients, and forward and
// backward are one compute stage instead of two around the loss's
// all-reduce. An instruction is then sunk to the lowest level its readers
// allow (a constant broadcast for the update is made in the update's stage,
// not carried from the first). Effectful instructions keep their order.
std::vector<ValueId> PartitionOrder(const Program& p, const ShardingPlan& plan) {
  const ValueId n = p.num_values();
  auto partial = [&](ValueId v) {
    return plan.steps[v].all_reduce_axes.empty() ? 0 : 1;
  };
  std::vector<std::vector<ValueId>> deps(n), readers(n);
  ValueId last_effect = -1;
  for (ValueId v = 0; v < n; ++v) {
    const Instruction& inst = p.instruction(v);
    if (inst.kind() == OpKind::kParameter) continue;
    deps[v].assign(inst.operands.begin(), inst.operands.end());
    if (HasSideEffect(inst.attrs)) {
      if (last_effect >= 0) deps[v].push_back(last_effect);
      last_effect = v;
    }
    for (ValueId d : deps[v]) readers[d].push_back(v);
  }
  std::vector<int> level(n, 0);
  for (ValueId v = 0; v < n; ++v) {  // earliest
    for (ValueId d : deps[v]) level[v] = std::max(level[v], level[d] + partial(d));
  }
  std::vector<bool> is_output(n, false);
  for (ValueId o : p.outputs()) is_output[o] = true;
  for (ValueId v = n; v-- > 0;) {  // latest that its readers allow
    if (p.instruction(v).kind() == OpKind::kParameter || readers[v].empty() ||
        is_output[v]) {
      continue;
    }
    int latest = std::numeric_limits<int>::max();
    for (ValueId r : readers[v]) latest = std::min(latest, level[r] - partial(v));
    level[v] = std::max(level[v], latest);
  }
  // A control-flow group's members stay together (adjacent, as a stage's
  // program must hold them): all at the earliest member's level, which
  // every member's readers come after.
  for (ValueId v = 0; v < n; ++v) {
    const Instruction& inst = p.instruction(v);
    if (!IsControlFlow(inst.kind()) || ControlFlowOutputIndex(inst.attrs) != 0) {
      continue;
    }
    const std::vector<ValueId> members = RegionGroupOf(p, v);
    int earliest = level[v];
    for (ValueId m : members) earliest = std::min(earliest, level[m]);
    for (ValueId m : members) level[m] = earliest;
  }
  std::vector<ValueId> order;
  for (ValueId v = 0; v < n; ++v) {
    if (p.instruction(v).kind() != OpKind::kParameter) order.push_back(v);
  }
  std::stable_sort(order.begin(), order.end(), [&](ValueId a, ValueId b) {
    return level[a] < level[b];
  });
  return order;
}

// The block programs of control-flow regions made so far, by the group's
// plan of its first region (a control-flow group's instructions share their
// plans, and must share the block programs too; two groups with the same
// regions -- an unrolled scan's inner loops, one per step -- may lay their
// operands out differently, each with a plan of its own).
using BlockRegions =
    std::map<const ShardingPlan*, std::vector<std::shared_ptr<const Program>>>;

Result<Program> BlockProgram(const Program& p, const ShardingPlan& plan,
                             const DeviceMesh& mesh);

// The attributes of an instruction laid out as `s` for blocks: a broadcast
// or reshape names its result's shape, which becomes the block's; a slice
// or dynamic slice takes all of each split dimension
// (sharding_propagation.cc: Touched), all of the block; a control-flow op
// run on blocks (step.regions) gets its regions' block programs.
Result<OpAttrs> BlockAttrs(const Instruction& inst, const Sharding& s,
                           const ShardingStep& step, const DeviceMesh& mesh,
                           BlockRegions& made) {
  if (const auto* b = inst.attrs_if<BroadcastInDimAttrs>()) {
    BroadcastInDimAttrs a = *b;
    a.shape = BlockShape(a.shape, s, mesh);
    return OpAttrs(a);
  }
  if (const auto* r = inst.attrs_if<ReshapeAttrs>()) {
    ReshapeAttrs a = *r;
    a.shape = BlockShape(a.shape, s, mesh);
    return OpAttrs(a);
  }
  const Shape block = BlockShape(inst.type.shape, s, mesh);
  if (const auto* sl = inst.attrs_if<SliceAttrs>()) {
    SliceAttrs a = *sl;
    for (int d = 0; d < block.rank(); ++d) {
      if (s.dims[d].empty()) continue;
      a.start[d] = 0;
      a.limit[d] = block.dim(d);
      a.stride[d] = 1;
    }
    return OpAttrs(a);
  }
  if (const auto* ds = inst.attrs_if<DynamicSliceAttrs>()) {
    DynamicSliceAttrs a = *ds;
    for (int d = 0; d < block.rank(); ++d) {
      if (!s.dims[d].empty()) a.slice_sizes[d] = block.dim(d);
    }
    return OpAttrs(a);
  }
  if (step.regions.empty()) return inst.attrs;
  // Regions (control_flow.h) lists them in ShardingStep::regions' order.
  const std::vector<const Program*> regions = Regions(inst.attrs);
  auto& blocks = made[step.regions.front().get()];
  if (blocks.empty()) {
    for (size_t r = 0; r < regions.size(); ++r) {
      BATON_ASSIGN_OR_RETURN(Program q, BlockProgram(*regions[r], *step.regions[r], mesh));
      blocks.push_back(std::make_shared<const Program>(std::move(q)));
    }
  }
  OpAttrs a = inst.attrs;
  if (auto* w = std::get_if<WhileAttrs>(&a)) {
    w->cond = blocks[0];
    w->body = blocks[1];
  } else if (auto* sc = std::get_if<ScanAttrs>(&a)) {
    sc->body = blocks[0];
  } else {
    std::get<CaseAttrs>(a).branches = blocks;
  }
  return a;
}

// `p` for each device's blocks, laid out as `plan` says (no communication
// inside: a control-flow region the propagation found quiet).
Result<Program> BlockProgram(const Program& p, const ShardingPlan& plan,
                             const DeviceMesh& mesh) {
  Program q;
  BlockRegions made;
  std::vector<ValueId> now(p.num_values(), -1);
  for (ValueId v = 0; v < p.num_values(); ++v) {
    const Instruction& inst = p.instruction(v);
    if (inst.kind() == OpKind::kParameter) {
      ValueType t = inst.type;
      t.shape = BlockShape(t.shape, plan.sharding[v], mesh);
      BATON_ASSIGN_OR_RETURN(now[v], q.AddParameter(t));
      continue;
    }
    if (plan.steps[v].computed.has_value()) {
      // Propagation runs a region needing that as a stage, or whole.
      return Internal("a block program's %" + std::to_string(v) +
                      " would be sliced per device after it is computed");
    }
    BATON_ASSIGN_OR_RETURN(OpAttrs attrs,
                           BlockAttrs(inst, plan.sharding[v], plan.steps[v], mesh, made));
    OperandList operands;
    for (ValueId o : inst.operands) operands.push_back(now[o]);
    BATON_ASSIGN_OR_RETURN(now[v], q.Add(std::move(attrs), std::move(operands)));
  }
  std::vector<ValueId> outs;
  for (ValueId o : p.outputs()) outs.push_back(now[o]);
  BATON_RETURN_IF_ERROR(q.SetOutputs(std::move(outs)));
  return q;
}

class Partitioner {
 public:
  Partitioner(const Program& p, const DeviceMesh& mesh, const ShardingPlan& plan,
              std::vector<std::optional<Sharding>> requested)
      : p_(p), mesh_(mesh), plan_(plan), requested_(std::move(requested)) {
    out_.mesh = mesh;
    slot_of_.assign(p.num_values(), -1);
    local_of_.assign(p.num_values(), -1);
    last_use_.assign(p.num_values(), -1);
    partial_.assign(p.num_values(), false);
    order_ = PartitionOrder(p, plan);
    // Positions (and last uses) count in that order.
    for (ValueId k = 0; k < static_cast<ValueId>(order_.size()); ++k) {
      for (ValueId o : p.instruction(order_[k]).operands) {
        last_use_[o] = std::max(last_use_[o], k);
      }
    }
    for (ValueId o : p.outputs()) last_use_[o] = kOutput;
  }

  Result<SpmdProgram> Run() {
    for (int i = 0; i < p_.num_parameters(); ++i) {
      const ValueId v = p_.parameter(i);
      slot_of_[v] = NewSlot(v, plan_.sharding[v], /*partial=*/false);
      out_.parameter_slots.push_back(slot_of_[v]);
    }
    for (ValueId k = 0; k < static_cast<ValueId>(order_.size()); ++k) {
      position_ = k;
      BATON_RETURN_IF_ERROR(Partition(order_[k], p_.instruction(order_[k])));
    }
    BATON_RETURN_IF_ERROR(CombinePartials(nullptr));
    BATON_RETURN_IF_ERROR(Close());
    for (size_t k = 0; k < p_.outputs().size(); ++k) {
      const ValueId o = p_.outputs()[k];
      int slot = slot_of_[o];
      if (k < requested_.size() && requested_[k].has_value() &&
          out_.slots[slot].sharding != *requested_[k]) {
        // The layout the caller asked for (out_shardings).
        const Sharding& to = *requested_[k];
        SpmdStage stage;
        stage.kind = ReshardKind(out_.slots[slot].sharding, to) ==
                             Reshard::Kind::kSlice
                         ? SpmdStage::Kind::kSlice
                         : SpmdStage::Kind::kAllGather;
        stage.source = slot;
        stage.result = NewSlot(o, to, /*partial=*/false);
        out_.stages.push_back(stage);
        slot = stage.result;
      }
      out_.output_slots.push_back(slot);
    }
    return std::move(out_);
  }

 private:
  // `dtype`: the slot's, when not v's (a partial sum kept in float32).
  int NewSlot(ValueId v, const Sharding& sharding, bool partial,
              std::optional<DType> dtype = std::nullopt) {
    SpmdSlot s;
    s.global = p_.type(v);
    if (dtype.has_value()) s.global.dtype = *dtype;
    s.sharding = sharding;
    s.block = BlockShape(s.global.shape, sharding, mesh_);
    s.partial = partial;
    out_.slots.push_back(std::move(s));
    return static_cast<int>(out_.slots.size()) - 1;
  }

  // The local value of slot `slot` in the program being built (a parameter
  // added on first use).
  Result<ValueId> Read(int slot) {
    auto it = param_of_slot_.find(slot);
    if (it != param_of_slot_.end()) return it->second;
    if (!cur_) cur_ = std::make_unique<Program>();
    ValueType t = out_.slots[slot].global;
    t.shape = out_.slots[slot].block;
    BATON_ASSIGN_OR_RETURN(ValueId id, cur_->AddParameter(t));
    cur_inputs_.push_back(slot);
    param_of_slot_[slot] = id;
    return id;
  }

  // Value v of the source program in the program being built.
  Result<ValueId> Local(ValueId v) {
    if (local_of_[v] >= 0) return local_of_[v];
    if (slot_of_[v] < 0) {
      return Internal("partitioning: %" + std::to_string(v) +
                      " is neither computed here nor kept between stages");
    }
    return Read(slot_of_[v]);
  }

  // Ends the compute stage being built: every value it computed that a
  // later instruction (or the program's outputs) reads, beyond `position`,
  // becomes a slot.
  Status Close(ValueId position = kOutput - 1) {
    if (!cur_) return OkStatus();
    SpmdStage stage;
    stage.kind = SpmdStage::Kind::kCompute;
    std::vector<ValueId> outs;
    for (ValueId v : computed_) {
      if (last_use_[v] <= position || slot_of_[v] >= 0) continue;
      // A sharding constraint's value is its operand's local value.
      const auto same = std::find(outs.begin(), outs.end(), local_of_[v]);
      if (same != outs.end()) {
        slot_of_[v] = stage.outputs[same - outs.begin()];
        continue;
      }
      slot_of_[v] = NewSlot(v, ComputedLayout(v), partial_[v],
                            cur_->type(local_of_[v]).dtype);
      stage.outputs.push_back(slot_of_[v]);
      outs.push_back(local_of_[v]);
    }
    if (!outs.empty()) {
      BATON_RETURN_IF_ERROR(cur_->SetOutputs(outs));
      stage.program = std::shared_ptr<const Program>(std::move(cur_));
      stage.inputs = std::move(cur_inputs_);
      out_.stages.push_back(std::move(stage));
    }
    cur_.reset();
    cur_inputs_.clear();
    param_of_slot_.clear();
    for (ValueId v : computed_) local_of_[v] = -1;
    computed_.clear();
    return OkStatus();
  }

  // The slot holding `v` laid out as `to` (one communication stage, made
  // once per layout).
  Result<int> Resharded(ValueId v, const Reshard& r) {
    const auto key = std::make_pair(v, r.to.dims);
    auto it = resharded_.find(key);
    if (it != resharded_.end()) return it->second;
    if (slot_of_[v] < 0) BATON_RETURN_IF_ERROR(Close(position_ - 1));
    SpmdStage stage;
    stage.kind = r.kind == Reshard::Kind::kSlice ? SpmdStage::Kind::kSlice
                                                 : SpmdStage::Kind::kAllGather;
    stage.source = slot_of_[v];
    stage.result = NewSlot(v, r.to, /*partial=*/false);
    out_.stages.push_back(stage);
    resharded_[key] = stage.result;
    return stage.result;
  }

  // The layout v's instruction computes it in: its step's `computed`
  // where each device slices its block after, else v's.
  const Sharding& ComputedLayout(ValueId v) const {
    const auto& computed = plan_.steps[v].computed;
    return computed.has_value() ? *computed : plan_.sharding[v];
  }

  // The attributes of v's instruction for blocks (BlockAttrs).
  Result<OpAttrs> LocalAttrs(ValueId v, const Instruction& inst) {
    return BlockAttrs(inst, ComputedLayout(v), plan_.steps[v], mesh_, block_regions_);
  }

  Status Partition(ValueId v, const Instruction& inst) {
    BATON_RETURN_IF_ERROR(CombinePartials(&inst));
    const ShardingStep& step = plan_.steps[v];
    if (step.region_stage) return PartitionRegionStage(v, inst, step);
    if (const auto* call = inst.attrs_if<CallAttrs>();
        call != nullptr && call->kind == CallKind::kShardingConstraint) {
      // No computation: the operand in the constrained layout.
      const ValueId x = inst.operands[0];
      if (!step.reshards.empty()) {
        BATON_ASSIGN_OR_RETURN(slot_of_[v], Resharded(x, step.reshards[0]));
      } else if (local_of_[x] >= 0) {
        local_of_[v] = local_of_[x];  // Close() keeps one output for both
        computed_.push_back(v);
      } else {
        slot_of_[v] = slot_of_[x];
      }
      return OkStatus();
    }
    // Operands read in another layout: communication first.
    std::vector<int> resharded(inst.operands.size(), -1);
    for (const Reshard& r : step.reshards) {
      BATON_ASSIGN_OR_RETURN(resharded[r.operand],
                             Resharded(inst.operands[r.operand], r));
    }
    std::vector<ValueId> operands;
    for (int k = 0; k < inst.operands.size(); ++k) {
      Result<ValueId> id = resharded[k] >= 0 ? Read(resharded[k])
                                             : Local(inst.operands[k]);
      BATON_RETURN_IF_ERROR(id.status());
      operands.push_back(id.value());
    }
    if (!cur_) cur_ = std::make_unique<Program>();
    if (!step.all_reduce_axes.empty() && step.all_reduce_op == ReduceOp::kSum &&
        (inst.type.dtype == DType::kBFloat16 ||
         inst.type.dtype == DType::kFloat16)) {
      // A partial sum of a 16-bit float is summed in float32 on each device
      // and across them, then rounded once (the all-reduce stage converts):
      // rounding each device's part first made a split bf16 dot or sum
      // differ from the whole one, which JAX's does not.
      for (ValueId& o : operands) {
        if (cur_->type(o).dtype != inst.type.dtype) continue;
        BATON_ASSIGN_OR_RETURN(o, cur_->Add(ConvertAttrs{DType::kFloat32}, {o}));
      }
    }
    BATON_ASSIGN_OR_RETURN(OpAttrs attrs, LocalAttrs(v, inst));
    Result<ValueId> id = cur_->Add(std::move(attrs), OperandList(operands));
    if (!id.ok()) {
      return Internal("partitioning %" + std::to_string(v) + " (" +
                      std::string(op_kind_name(inst.kind())) +
                      ") for blocks failed: " + id.status().message());
    }
    const Shape want = BlockShape(inst.type.shape, ComputedLayout(v), mesh_);
    if (cur_->type(id.value()).shape != want) {
      return Internal("partitioning %" + std::to_string(v) + " (" +
                      std::string(op_kind_name(inst.kind())) + "): its block is " +
                      cur_->type(id.value()).shape.to_string() + ", the plan's " +
                      want.to_string());
    }
    local_of_[v] = id.value();
    computed_.push_back(v);
    partial_[v] = !step.all_reduce_axes.empty();
    // A partial result is combined when something first reads it, together
    // with every other partial result pending then (one compute stage for
    // all the gradients of a backward pass, not one per gradient).
    if (partial_[v] && last_use_[v] >= 0) pending_.push_back(v);
    if (step.computed.has_value() && last_use_[v] >= 0) {
      // Computed whole where v's layout splits it: the stage ends with v,
      // and a slice stage gives each device its block -- when something
      // reads v split. A later reader wanting v as it was computed reads
      // that slot, not an all-gather of the slices.
      BATON_RETURN_IF_ERROR(Close(position_));
      const auto computed = std::make_pair(v, step.computed->dims);
      if (!ReadSplit(v)) {
        resharded_[computed] = slot_of_[v];
        return OkStatus();
      }
      SpmdStage slice;
      slice.kind = SpmdStage::Kind::kSlice;
      slice.source = slot_of_[v];
      slice.result = NewSlot(v, plan_.sharding[v], /*partial=*/false);
      out_.stages.push_back(slice);
      slot_of_[v] = slice.result;
      resharded_[computed] = slice.source;
    }
    return OkStatus();
  }

  // Whether v (computed in another layout: ShardingStep::computed) is read
  // in its own: it is an output, or a reader takes it without resharding
  // it to the layout it was computed in.
  bool ReadSplit(ValueId v) const {
    if (last_use_[v] == kOutput) return true;
    const Sharding& computed = *plan_.steps[v].computed;
    for (ValueId u : order_) {
      const Instruction& reader = p_.instruction(u);
      for (int k = 0; k < reader.operands.size(); ++k) {
        if (reader.operands[k] != v) continue;
        bool as_computed = false;
        for (const Reshard& r : plan_.steps[u].reshards) {
          as_computed |= r.operand == k && r.to == computed;
        }
        if (!as_computed) return true;
      }
    }
    return false;
  }

  // A while loop or a conditional run as a stage (ShardingStep::
  // region_stage): its operands as slots in the step's layouts, its
  // regions partitioned on their own -- a loop's body gives its carries
  // back in the layouts they came in, its condition the predicate
  // replicated; each branch its results in the layouts the step chose --
  // one slot per result. Made at the group's first instruction for all of
  // them.
  Status PartitionRegionStage(ValueId v, const Instruction& inst,
                              const ShardingStep& step) {
    if (slot_of_[v] >= 0) return OkStatus();  // made with the group's first
    BATON_RETURN_IF_ERROR(Close(position_ - 1));
    const std::string what = "partitioning the " +
                             std::string(op_kind_name(inst.kind())) + " %" +
                             std::to_string(v);
    SpmdStage stage;
    std::vector<Sharding> layouts;
    for (int k = 0; k < inst.operands.size(); ++k) {
      const ValueId o = inst.operands[k];
      int slot = slot_of_[o];
      for (const Reshard& r : step.reshards) {
        if (r.operand != k) continue;
        BATON_ASSIGN_OR_RETURN(slot, Resharded(o, r));
      }
      if (slot < 0) {
        return Internal(what + ": its operand %" + std::to_string(o) +
                        " is not kept");
      }
      stage.inputs.push_back(slot);
      layouts.push_back(out_.slots[slot].sharding);
    }
    const std::vector<ValueId> members = RegionGroupOf(p_, v);
    for (ValueId m : members) {
      const int j = ControlFlowOutputIndex(p_.instruction(m).attrs);
      if (j < 0 || j >= static_cast<int>(members.size())) {
        return Internal(what + ": result %" + std::to_string(m) +
                        " is output " + std::to_string(j) + " of " +
                        std::to_string(members.size()));
      }
    }
    std::vector<std::optional<Sharding>> results;  // per output index
    if (const auto* loop = inst.attrs_if<WhileAttrs>()) {
      if (static_cast<int>(members.size()) != loop->num_carries) {
        return Internal(what + ": " + std::to_string(members.size()) +
                        " results for " + std::to_string(loop->num_carries) +
                        " carries");
      }
      stage.kind = SpmdStage::Kind::kLoop;
      auto partitioned = std::make_shared<SpmdLoop>();
      partitioned->num_carries = loop->num_carries;
      BATON_ASSIGN_OR_RETURN(
          partitioned->cond,
          PartitionForMesh(*loop->cond, mesh_, layouts, {Sharding::Replicated(0)}));
      // The carries come out laid out as they go in.
      results.assign(layouts.begin(), layouts.begin() + loop->num_carries);
      BATON_ASSIGN_OR_RETURN(partitioned->body,
                             PartitionForMesh(*loop->body, mesh_, layouts, results));
      stage.loop = std::move(partitioned);
    } else if (const auto* branches = inst.attrs_if<CaseAttrs>()) {
      if (!layouts[0].IsReplicated()) {
        return Internal(what + ": its branch index is split");
      }
      stage.kind = SpmdStage::Kind::kCase;
      // The results as the step chose them, which every branch gives.
      results.resize(members.size());
      for (ValueId m : members) {
        results[ControlFlowOutputIndex(p_.instruction(m).attrs)] = plan_.sharding[m];
      }
      auto partitioned = std::make_shared<SpmdCase>();
      const std::vector<Sharding> params(layouts.begin() + 1, layouts.end());
      for (const auto& branch : branches->branches) {
        BATON_ASSIGN_OR_RETURN(SpmdProgram b,
                               PartitionForMesh(*branch, mesh_, params, results));
        partitioned->branches.push_back(std::move(b));
      }
      stage.branches = std::move(partitioned);
    } else {
      return Internal(what + ": only while loops and conditionals run as stages");
    }
    for (ValueId m : members) {
      const int j = ControlFlowOutputIndex(p_.instruction(m).attrs);
      slot_of_[m] = NewSlot(m, *results[j], /*partial=*/false);
      stage.outputs.push_back(slot_of_[m]);
    }
    out_.stages.push_back(std::move(stage));
    return OkStatus();
  }

  // Ends the compute stage and all-reduces every pending partial result,
  // when an operand of the instruction at position_ is one of them (or at
  // the end, `all`).
  Status CombinePartials(const Instruction* reader) {
    if (pending_.empty()) return OkStatus();
    if (reader != nullptr) {
      bool reads = false;
      for (ValueId o : reader->operands) {
        reads |= std::find(pending_.begin(), pending_.end(), o) != pending_.end();
      }
      if (!reads) return OkStatus();
    }
    BATON_RETURN_IF_ERROR(Close(reader != nullptr ? position_ - 1 : kOutput - 1));
    for (ValueId v : pending_) {
      const ShardingStep& step = plan_.steps[v];
      SpmdStage stage;
      stage.kind = SpmdStage::Kind::kAllReduce;
      stage.source = slot_of_[v];
      stage.result = NewSlot(v, plan_.sharding[v], /*partial=*/false);
      stage.axes = step.all_reduce_axes;
      stage.op = step.all_reduce_op;
      out_.stages.push_back(stage);
      slot_of_[v] = stage.result;
    }
    pending_.clear();
    return OkStatus();
  }

  const Program& p_;
  const DeviceMesh& mesh_;
  const ShardingPlan& plan_;
  std::vector<std::optional<Sharding>> requested_;  // per output, may be empty
  SpmdProgram out_;
  std::vector<ValueId> order_;  // PartitionOrder
  ValueId position_ = 0;  // the instruction being partitioned, in order_
  std::vector<int> slot_of_;   // per ValueId: its slot (after any all-reduce)
  std::vector<int> local_of_;  // per ValueId: its id in cur_, or -1
  std::vector<ValueId> last_use_;  // per ValueId: its last reader's position
  std::vector<bool> partial_;  // per ValueId: a partial sum (see pending_)
  std::vector<ValueId> pending_;  // partial results not yet all-reduced
  // The compute stage being built.
  std::unique_ptr<Program> cur_;
  std::vector<int> cur_inputs_;
  std::map<int, ValueId> param_of_slot_;
  std::vector<ValueId> computed_;
  std::map<std::pair<ValueId, std::vector<std::vector<int>>>, int> resharded_;
  BlockRegions block_regions_;
};

// At most this many instructions are added by unrolling scans, in all: a
// scan of 48 transformer layers' backward pass is well under it.
constexpr int64_t kMaxUnrolledInstructions = int64_t{1} << 16;

// The scans the plan runs whole (their body needs communication) although
// an operand is split, side-effect-free: unrolled (unroll_scans.h) while
// the budget `left` lasts, so that each step's collective sits between
// stages and the split operands -- a scanned model's stacked weights --
// stay split, where run whole every device would gather all of them; the
// longer ones go to `too_long`, to run as while loops (loop stages).
std::vector<ValueId> ScansToUnroll(const Program& program, const ShardingPlan& plan,
                                   int64_t& left, std::vector<ValueId>& too_long) {
  std::vector<ValueId> scans;
  too_long.clear();
  for (ValueId id = 0; id < program.num_values(); ++id) {
    const Instruction& inst = program.instruction(id);
    const auto* scan = inst.attrs_if<ScanAttrs>();
    if (scan == nullptr || scan->output_index != 0 ||
        !plan.steps[id].regions.empty() || HasSideEffect(*scan->body)) {
      continue;
    }
    bool split = false;
    for (ValueId o : inst.operands) split = split || !plan.sharding[o].IsReplicated();
    const int64_t size = UnrolledSize(program, id);
    if (!split || size == 0) continue;
    if (size > left) {
      too_long.push_back(id);
      continue;
    }
    left -= size;
    scans.push_back(id);
  }
  return scans;
}

}  // namespace

Result<SpmdProgram> PartitionForMesh(
    const Program& original, const DeviceMesh& mesh,
    const std::vector<Sharding>& parameters,
    const std::vector<std::optional<Sharding>>& outputs) {
  BATON_ASSIGN_OR_RETURN(ShardingPlan plan,
                         PropagateShardings(original, mesh, parameters));
  // Scans unrolled where run whole they would gather split operands; a
  // scan nested in one comes to the top level when that one is unrolled,
  // and is weighed in the next round.
  // Scans past the budget become while loops, which run as loop stages.
  std::optional<Program> unrolled;
  int64_t left = kMaxUnrolledInstructions;
  std::vector<ValueId> too_long;
  for (int round = 0; round < 4; ++round) {
    const Program& current = unrolled ? *unrolled : original;
    const std::vector<ValueId> scans = ScansToUnroll(current, plan, left, too_long);
    if (scans.empty()) break;
    BATON_ASSIGN_OR_RETURN(Program next, UnrollScans(current, scans));
    BATON_ASSIGN_OR_RETURN(plan, PropagateShardings(next, mesh, parameters));
    unrolled = std::move(next);
    too_long.clear();
  }
  if (!too_long.empty()) {
    BATON_ASSIGN_OR_RETURN(Program next,
                           ScansAsWhileLoops(unrolled ? *unrolled : original, too_long));
    BATON_ASSIGN_OR_RETURN(plan, PropagateShardings(next, mesh, parameters));
    unrolled = std::move(next);
  }
  const Program& program = unrolled ? *unrolled : original;
  if (!outputs.empty() && outputs.size() != program.outputs().size()) {
    return InvalidArgument("PartitionForMesh: " + std::to_string(outputs.size()) +
                           " output shardings for " +
                           std::to_string(program.outputs().size()) + " outputs");
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (!outputs[k].has_value()) continue;
    const Shape& shape = program.type(program.outputs()[k]).shape;
    BATON_RETURN_IF_ERROR(CheckSharding(
        shape, mesh, *outputs[k],
        "output " + std::to_string(k) + " (shape " + shape.to_string() + ")"));
  }
  BATON_ASSIGN_OR_RETURN(SpmdProgram partitioned,
                         Partitioner(program, mesh, plan, outputs).Run());
  return CombineAllReduces(std::move(partitioned));
}

}  // namespace baton::compiler
