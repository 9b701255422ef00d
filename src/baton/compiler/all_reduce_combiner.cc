#include "baton/compiler/all_reduce_combiner.h"

#include <algorithm>
#include <map>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

namespace baton::compiler {
namespace {

using Stage = SpmdStage;

// Where a member's combined block lies in its pack's result.
struct Part {
  int packed = -1;     // the packed all-reduce's result slot
  int64_t offset = 0;  // in elements
};

// One pack: the all-reduce stages (indices) it replaces, in stage order.
struct Pack {
  size_t compute = 0;           // the stage computing the members' blocks
  std::vector<size_t> members;  // all-reduce stages
  int source = -1;              // the packed slot
  int result = -1;              // its combined slot
  std::vector<int> unpacked;    // member results made by a stage of slices
};

int64_t BlockBytes(const SpmdSlot& s) {
  return s.block.num_elements() * static_cast<int64_t>(dtype_size(s.global.dtype));
}

int NewSlot(SpmdProgram& sp, DType dtype, int64_t elements, bool partial) {
  SpmdSlot s;
  s.global.shape = Shape{elements};
  s.global.dtype = dtype;
  s.sharding = Sharding::Replicated(1);
  s.block = s.global.shape;
  s.partial = partial;
  sp.slots.push_back(std::move(s));
  return static_cast<int>(sp.slots.size()) - 1;
}

// `part` of the packed block `packed` as a block of `block`'s shape.
Result<ValueId> SliceOut(Program& p, ValueId packed, const Part& part,
                         const Shape& block) {
  const int64_t n = block.num_elements();
  BATON_ASSIGN_OR_RETURN(
      ValueId flat, p.Add(SliceAttrs{{part.offset}, {part.offset + n}, {1}}, {packed}));
  return p.Add(ReshapeAttrs{block}, {flat});
}

// Compute stage `st` again, reading each input slot that `parts` lists from
// its pack's result instead, and also outputting the packed block of each
// of `packs` (its members' source slots, in order: blocks it makes, or
// reads -- then an input if it was not) as slot `packs[k].first`; outputs
// in `dropped` are no longer made.
Result<Stage> Rewrite(const SpmdProgram& sp, const Stage& st,
                      const std::map<int, Part>& parts,
                      const std::vector<std::pair<int, std::vector<int>>>& packs,
                      const std::vector<bool>& dropped) {
  const Program& old = *st.program;
  Program p;
  Stage out;
  out.kind = Stage::Kind::kCompute;
  std::vector<ValueId> now(old.num_values(), -1);
  std::vector<int> param_of(old.num_values(), -1);
  for (int i = 0; i < old.num_parameters(); ++i) param_of[old.parameter(i)] = i;
  std::map<int, ValueId> packed_param;
  for (ValueId v = 0; v < old.num_values(); ++v) {
    const Instruction& inst = old.instruction(v);
    if (inst.kind() == OpKind::kParameter) {
      const int slot = st.inputs[param_of[v]];
      const auto it = parts.find(slot);
      if (it == parts.end()) {
        BATON_ASSIGN_OR_RETURN(now[v], p.AddParameter(inst.type));
        out.inputs.push_back(slot);
        continue;
      }
      const int packed = it->second.packed;
      if (!packed_param.count(packed)) {
        ValueType t = sp.slots[packed].global;
        BATON_ASSIGN_OR_RETURN(packed_param[packed], p.AddParameter(t));
        out.inputs.push_back(packed);
      }
      BATON_ASSIGN_OR_RETURN(
          now[v], SliceOut(p, packed_param[packed], it->second, sp.slots[slot].block));
      continue;
    }
    OperandList operands;
    for (ValueId o : inst.operands) operands.push_back(now[o]);
    BATON_ASSIGN_OR_RETURN(now[v], p.Add(inst.attrs, std::move(operands)));
  }
  std::vector<ValueId> outs;
  for (size_t j = 0; j < st.outputs.size(); ++j) {
    if (dropped[j]) continue;
    out.outputs.push_back(st.outputs[j]);
    outs.push_back(now[old.outputs()[j]]);
  }
  for (const auto& [slot, sources] : packs) {
    std::vector<ValueId> flat;
    for (int source : sources) {
      // A block this stage makes, else one it reads (made earlier).
      ValueId v = -1;
      const auto j = std::find(st.outputs.begin(), st.outputs.end(), source);
      if (j != st.outputs.end()) {
        v = now[old.outputs()[j - st.outputs.begin()]];
      } else if (const auto k = std::find(out.inputs.begin(), out.inputs.end(), source);
                 k != out.inputs.end()) {
        v = p.parameter(static_cast<int>(k - out.inputs.begin()));
      } else {
        ValueType t = sp.slots[source].global;
        t.shape = sp.slots[source].block;
        BATON_ASSIGN_OR_RETURN(v, p.AddParameter(t));
        out.inputs.push_back(source);
      }
      BATON_ASSIGN_OR_RETURN(
          ValueId f, p.Add(ReshapeAttrs{Shape{p.type(v).shape.num_elements()}}, {v}));
      flat.push_back(f);
    }
    BATON_ASSIGN_OR_RETURN(ValueId joined,
                           p.Add(ConcatenateAttrs{0}, OperandList(flat)));
    out.outputs.push_back(slot);
    outs.push_back(joined);
  }
  BATON_RETURN_IF_ERROR(p.SetOutputs(std::move(outs)));
  out.program = std::make_shared<const Program>(std::move(p));
  return out;
}

}  // namespace

Result<SpmdProgram> CombineAllReduces(SpmdProgram sp, int64_t limit_bytes) {
  const size_t num_stages = sp.stages.size();
  // Who reads each slot, besides compute stages: communication stages and
  // the program's outputs (those need the slot itself).
  std::vector<int> readers(sp.slots.size(), 0);
  std::vector<bool> read_whole(sp.slots.size(), false);
  for (const Stage& st : sp.stages) {
    for (int s : st.Reads()) {
      ++readers[s];
      read_whole[s] = read_whole[s] || st.kind != Stage::Kind::kCompute;
    }
  }
  for (int s : sp.output_slots) {
    ++readers[s];
    read_whole[s] = true;
  }
  // The stage making each slot (-1: a parameter).
  std::vector<int> made_at(sp.slots.size(), -1);
  for (size_t i = 0; i < num_stages; ++i) {
    for (int s : sp.stages[i].Writes()) made_at[s] = static_cast<int>(i);
  }
  std::vector<Pack> packs;
  std::vector<int> pack_of_stage(num_stages, -1);
  for (size_t i = 0; i < num_stages; ++i) {
    const Stage& made = sp.stages[i];
    if (made.kind != Stage::Kind::kCompute) continue;
    std::map<std::tuple<std::vector<int>, ReduceOp, DType, DType>, std::vector<size_t>>
        groups;
    // The communication stages up to the next compute, loop or case stage.
    for (size_t k = i + 1; k < num_stages && sp.stages[k].kind != Stage::Kind::kCompute &&
                           !sp.stages[k].RunsRegions();
         ++k) {
      const Stage& st = sp.stages[k];
      if (st.kind != Stage::Kind::kAllReduce) continue;
      if (made_at[st.source] > static_cast<int>(i)) continue;  // made in the run
      const SpmdSlot& from = sp.slots[st.source];
      if (BlockBytes(from) > limit_bytes) continue;
      groups[{st.axes, st.op, from.global.dtype, sp.slots[st.result].global.dtype}]
          .push_back(k);
    }
    for (auto& [key, members] : groups) {
      if (members.size() < 2) continue;
      Pack pack;
      pack.compute = i;
      pack.members = std::move(members);
      int64_t total = 0;
      for (size_t k : pack.members) {
        total += sp.slots[sp.stages[k].source].block.num_elements();
        pack_of_stage[k] = static_cast<int>(packs.size());
      }
      pack.source = NewSlot(sp, std::get<2>(key), total, /*partial=*/true);
      pack.result = NewSlot(sp, std::get<3>(key), total, /*partial=*/false);
      packs.push_back(std::move(pack));
    }
  }
  if (packs.empty()) return sp;
  // Each member's part of its pack; the results something reads whole are
  // sliced out right after the all-reduce, the others where they are read.
  std::map<int, Part> parts;
  std::vector<std::vector<std::pair<int, std::vector<int>>>> packs_of(num_stages);
  std::vector<std::vector<bool>> dropped(num_stages);
  for (size_t i = 0; i < num_stages; ++i) {
    if (sp.stages[i].kind == Stage::Kind::kCompute) {
      dropped[i].assign(sp.stages[i].outputs.size(), false);
    }
  }
  for (size_t n = 0; n < packs.size(); ++n) {
    Pack& pack = packs[n];
    const Stage& made = sp.stages[pack.compute];
    std::vector<int> sources;
    int64_t offset = 0;
    for (size_t k : pack.members) {
      const Stage& st = sp.stages[k];
      sources.push_back(st.source);
      const auto j = std::find(made.outputs.begin(), made.outputs.end(), st.source);
      if (j != made.outputs.end() && readers[st.source] == 1) {
        dropped[pack.compute][j - made.outputs.begin()] = true;  // only packed
      }
      if (read_whole[st.result]) {
        pack.unpacked.push_back(st.result);
      }
      parts[st.result] = Part{pack.result, offset};
      offset += sp.slots[st.source].block.num_elements();
    }
    packs_of[pack.compute].emplace_back(pack.source, std::move(sources));
  }
  // Slots a stage of slices makes: read as slots, not sliced out again.
  std::map<int, Part> sliced_where_read = parts;
  for (const Pack& pack : packs) {
    for (int r : pack.unpacked) sliced_where_read.erase(r);
  }
  std::vector<Stage> stages;
  for (size_t i = 0; i < num_stages; ++i) {
    const Stage& st = sp.stages[i];
    if (st.kind == Stage::Kind::kCompute) {
      BATON_ASSIGN_OR_RETURN(
          Stage rewritten, Rewrite(sp, st, sliced_where_read, packs_of[i], dropped[i]));
      stages.push_back(std::move(rewritten));
      continue;
    }
    if (pack_of_stage[i] < 0) {
      stages.push_back(st);
      continue;
    }
    const Pack& pack = packs[pack_of_stage[i]];
    if (pack.members.front() != i) continue;  // combined with the first
    Stage combine;
    combine.kind = Stage::Kind::kAllReduce;
    combine.source = pack.source;
    combine.result = pack.result;
    combine.axes = st.axes;
    combine.op = st.op;
    stages.push_back(std::move(combine));
    if (pack.unpacked.empty()) continue;
    Program p;
    BATON_ASSIGN_OR_RETURN(ValueId packed, p.AddParameter(sp.slots[pack.result].global));
    std::vector<ValueId> outs;
    Stage slices;
    slices.kind = Stage::Kind::kCompute;
    slices.inputs = {pack.result};
    for (int r : pack.unpacked) {
      BATON_ASSIGN_OR_RETURN(ValueId v, SliceOut(p, packed, parts[r], sp.slots[r].block));
      outs.push_back(v);
      slices.outputs.push_back(r);
    }
    BATON_RETURN_IF_ERROR(p.SetOutputs(std::move(outs)));
    slices.program = std::make_shared<const Program>(std::move(p));
    stages.push_back(std::move(slices));
  }
  sp.stages = std::move(stages);
  return sp;
}

}  // namespace baton::compiler
