#include "baton/jit/spmd_executable.h"

#include <algorithm>
#include <utility>

#include "baton/compiler/passes.h"
#include "baton/runtime/transfer.h"

namespace baton {

using compiler::DeviceMesh;
using compiler::Program;
using compiler::Sharding;
using compiler::SpmdSlot;
using compiler::SpmdStage;
using compiler::ValueId;
using compiler::ValueType;

struct SpmdExecutable::Communication {
  // kAllReduce: the device's group's first device (mesh order); on that
  // device, the members in mesh order (itself first) and the program that
  // combines two blocks.
  int leader = -1;
  std::vector<int> group;
  std::shared_ptr<Executable> combine;
  // kSlice: the program cutting the new block out of the old (null when
  // they are the same block).
  std::shared_ptr<Executable> slice;
  // kAllGather: per block position of the old layout (row-major), the
  // device whose block is read, and the program assembling the new block
  // from them (parameters in position order).
  std::vector<int> sources;
  std::shared_ptr<Executable> assemble;
};

namespace {

Result<std::shared_ptr<Executable>> CompileFor(Program program, Device* device,
                                               const std::string& name) {
  std::vector<bool> donated(program.num_parameters(), false);
  return CompileExecutable(std::make_shared<const Program>(std::move(program)),
                           std::move(donated), device, name);
}

// A program returning its parameter's block [origin, origin + shape).
Result<Program> SliceProgram(const ValueType& in, const std::vector<int64_t>& origin,
                             const Shape& shape) {
  Program p;
  BATON_ASSIGN_OR_RETURN(ValueId x, p.AddParameter(in));
  std::vector<int64_t> limit(origin.size()), stride(origin.size(), 1);
  for (size_t d = 0; d < origin.size(); ++d) limit[d] = origin[d] + shape.dim(d);
  BATON_ASSIGN_OR_RETURN(ValueId y,
                         p.Add(compiler::SliceAttrs{origin, limit, stride}, {x}));
  BATON_RETURN_IF_ERROR(p.SetOutputs({y}));
  return p;
}

bool IsWhole(const std::vector<int64_t>& origin, const Shape& block,
             const Shape& of) {
  for (int d = 0; d < of.rank(); ++d) {
    if (origin[d] != 0 || block.dim(d) != of.dim(d)) return false;
  }
  return true;
}

// Per dimension, how many blocks the layout cuts it into.
std::vector<int64_t> Ways(const Sharding& s, const DeviceMesh& mesh) {
  std::vector<int64_t> w;
  for (const auto& axes : s.dims) w.push_back(mesh.SizeOf(axes));
  return w;
}

// The row-major position of device d's block among the layout's blocks.
int64_t BlockPosition(const SpmdSlot& slot, const DeviceMesh& mesh, int64_t d) {
  const std::vector<int64_t> origin =
      compiler::BlockOrigin(slot.global.shape, slot.sharding, mesh, d);
  const std::vector<int64_t> ways = Ways(slot.sharding, mesh);
  int64_t pos = 0;
  for (size_t k = 0; k < ways.size(); ++k) {
    pos = pos * ways[k] + origin[k] / std::max<int64_t>(slot.block.dim(k), 1);
  }
  return pos;
}

// The program assembling the whole array from its blocks (one parameter
// per position, row-major), then cutting [origin, origin + block) of it.
Result<Program> AssembleProgram(const SpmdSlot& from, const DeviceMesh& mesh,
                                const std::vector<int64_t>& origin,
                                const Shape& block) {
  Program p;
  const std::vector<int64_t> ways = Ways(from.sharding, mesh);
  int64_t positions = 1;
  for (int64_t w : ways) positions *= w;
  ValueType t = from.global;
  t.shape = from.block;
  std::vector<ValueId> parts;
  for (int64_t k = 0; k < positions; ++k) {
    BATON_ASSIGN_OR_RETURN(ValueId x, p.AddParameter(t));
    parts.push_back(x);
  }
  // Concatenate along the last dimension first: each pass merges the
  // blocks that differ only in that dimension's position.
  for (int d = static_cast<int>(ways.size()) - 1; d >= 0; --d) {
    if (ways[d] == 1) continue;
    std::vector<ValueId> merged;
    for (size_t k = 0; k < parts.size(); k += ways[d]) {
      compiler::OperandList ops;
      for (int64_t j = 0; j < ways[d]; ++j) ops.push_back(parts[k + j]);
      BATON_ASSIGN_OR_RETURN(ValueId c,
                             p.Add(compiler::ConcatenateAttrs{d}, std::move(ops)));
      merged.push_back(c);
    }
    parts = std::move(merged);
  }
  ValueId whole = parts[0];
  if (!IsWhole(origin, block, from.global.shape)) {
    std::vector<int64_t> limit(origin.size()), stride(origin.size(), 1);
    for (size_t d = 0; d < origin.size(); ++d) limit[d] = origin[d] + block.dim(d);
    BATON_ASSIGN_OR_RETURN(
        whole, p.Add(compiler::SliceAttrs{origin, limit, stride}, {whole}));
  }
  BATON_RETURN_IF_ERROR(p.SetOutputs({whole}));
  return p;
}

Result<Program> CombineProgram(const SpmdSlot& slot, ReduceOp op) {
  Program p;
  ValueType t = slot.global;
  t.shape = slot.block;
  BATON_ASSIGN_OR_RETURN(ValueId x, p.AddParameter(t));
  BATON_ASSIGN_OR_RETURN(ValueId y, p.AddParameter(t));
  BATON_ASSIGN_OR_RETURN(
      ValueId z,
      p.Add(compiler::BinaryAttrs{CombinerOf(op)}, {x, y}));
  BATON_RETURN_IF_ERROR(p.SetOutputs({z}));
  return p;
}

Result<Array> RunOne(Executable& exe, std::vector<Array> args) {
  std::vector<CallArgument> call(args.size());
  for (size_t i = 0; i < args.size(); ++i) call[i].array = std::move(args[i]);
  BATON_ASSIGN_OR_RETURN(std::vector<Array> out, exe.Execute(call));
  return std::move(out[0]);
}

}  // namespace

Result<std::shared_ptr<SpmdExecutable>> SpmdExecutable::Compile(
    const Program& program, DeviceMesh mesh,
    const std::vector<Sharding>& parameters, std::vector<Device*> devices,
    std::string name) {
  const int64_t size = compiler::MeshSize(mesh);
  if (static_cast<int64_t>(devices.size()) != size) {
    return InvalidArgument(name + ": the mesh has " + std::to_string(size) +
                           " positions but " + std::to_string(devices.size()) +
                           " devices were given");
  }
  for (size_t d = 0; d < devices.size(); ++d) {
    for (size_t e = 0; e < d; ++e) {
      if (devices[d] == devices[e]) {
        return InvalidArgument(name + ": " + devices[d]->ToString() +
                               " appears twice in the mesh");
      }
    }
  }
  std::shared_ptr<SpmdExecutable> exe(new SpmdExecutable());
  exe->name_ = std::move(name);
  exe->devices_ = std::move(devices);
  BATON_ASSIGN_OR_RETURN(
      exe->spmd_, compiler::PartitionForMesh(compiler::InlineCalls(program),
                                             std::move(mesh), parameters));
  const size_t num_stages = exe->spmd_.stages.size();
  exe->compute_.resize(num_stages);
  exe->communication_.resize(num_stages);
  for (size_t s = 0; s < num_stages; ++s) {
    const SpmdStage& st = exe->spmd_.stages[s];
    if (st.kind != SpmdStage::Kind::kCompute) {
      BATON_RETURN_IF_ERROR(exe->CompileCommunication(s));
      continue;
    }
    const std::string stage_name =
        exe->name_ + " (stage " + std::to_string(s) + ")";
    for (Device* device : exe->devices_) {
      BATON_ASSIGN_OR_RETURN(std::shared_ptr<Executable> e,
                             CompileFor(*st.program, device, stage_name));
      exe->compute_[s].push_back(std::move(e));
    }
  }
  // Which slots each stage reads last (outputs are kept).
  std::vector<int> last_read(exe->spmd_.slots.size(), -1);
  for (size_t s = 0; s < num_stages; ++s) {
    const SpmdStage& st = exe->spmd_.stages[s];
    if (st.kind == SpmdStage::Kind::kCompute) {
      for (int slot : st.inputs) last_read[slot] = static_cast<int>(s);
    } else {
      last_read[st.source] = static_cast<int>(s);
    }
  }
  for (int slot : exe->spmd_.output_slots) last_read[slot] = -1;
  exe->release_after_.resize(num_stages);
  for (size_t slot = 0; slot < last_read.size(); ++slot) {
    if (last_read[slot] >= 0) {
      exe->release_after_[last_read[slot]].push_back(static_cast<int>(slot));
    }
  }
  return exe;
}

Status SpmdExecutable::CompileCommunication(size_t s) {
  const SpmdStage& st = spmd_.stages[s];
  const DeviceMesh& mesh = spmd_.mesh;
  const SpmdSlot& from = spmd_.slots[st.source];
  const SpmdSlot& to = spmd_.slots[st.result];
  const int64_t n = static_cast<int64_t>(devices_.size());
  const std::string what = name_ + " (stage " + std::to_string(s) + ")";
  auto& per_device = communication_[s];
  for (int64_t d = 0; d < n; ++d) {
    per_device.push_back(std::make_shared<Communication>());
  }
  switch (st.kind) {
    case SpmdStage::Kind::kAllReduce: {
      for (int64_t d = 0; d < n; ++d) {
        const std::vector<int64_t> cd = compiler::MeshCoordinate(mesh, d);
        for (int64_t e = 0; e <= d; ++e) {
          const std::vector<int64_t> ce = compiler::MeshCoordinate(mesh, e);
          bool same = true;
          for (size_t a = 0; a < cd.size(); ++a) {
            const bool along = std::find(st.axes.begin(), st.axes.end(),
                                         static_cast<int>(a)) != st.axes.end();
            same &= along || cd[a] == ce[a];
          }
          if (!same) continue;
          per_device[d]->leader = static_cast<int>(e);
          per_device[e]->group.push_back(static_cast<int>(d));
          break;
        }
      }
      for (int64_t d = 0; d < n; ++d) {
        Communication& c = *per_device[d];
        if (c.leader != d || c.group.size() < 2) continue;
        BATON_ASSIGN_OR_RETURN(Program p, CombineProgram(from, st.op));
        BATON_ASSIGN_OR_RETURN(c.combine,
                               CompileFor(std::move(p), devices_[d], what));
      }
      return OkStatus();
    }
    case SpmdStage::Kind::kSlice: {
      for (int64_t d = 0; d < n; ++d) {
        std::vector<int64_t> origin =
            compiler::BlockOrigin(to.global.shape, to.sharding, mesh, d);
        const std::vector<int64_t> had =
            compiler::BlockOrigin(from.global.shape, from.sharding, mesh, d);
        for (size_t k = 0; k < origin.size(); ++k) origin[k] -= had[k];
        if (IsWhole(origin, to.block, from.block)) continue;
        ValueType t = from.global;
        t.shape = from.block;
        BATON_ASSIGN_OR_RETURN(Program p, SliceProgram(t, origin, to.block));
        BATON_ASSIGN_OR_RETURN(per_device[d]->slice,
                               CompileFor(std::move(p), devices_[d], what));
      }
      return OkStatus();
    }
    case SpmdStage::Kind::kAllGather: {
      int64_t positions = 1;
      for (int64_t w : Ways(from.sharding, mesh)) positions *= w;
      // The first device (mesh order) holding each position.
      std::vector<int> first(positions, -1);
      std::vector<int64_t> position_of(n);
      for (int64_t e = 0; e < n; ++e) {
        position_of[e] = BlockPosition(from, mesh, e);
        if (first[position_of[e]] < 0) first[position_of[e]] = static_cast<int>(e);
      }
      for (int64_t d = 0; d < n; ++d) {
        Communication& c = *per_device[d];
        c.sources = first;
        c.sources[position_of[d]] = static_cast<int>(d);  // its own block
        BATON_ASSIGN_OR_RETURN(
            Program p,
            AssembleProgram(from, mesh,
                            compiler::BlockOrigin(to.global.shape, to.sharding,
                                                  mesh, d),
                            to.block));
        BATON_ASSIGN_OR_RETURN(c.assemble,
                               CompileFor(std::move(p), devices_[d], what));
      }
      return OkStatus();
    }
    case SpmdStage::Kind::kCompute:
      break;
  }
  return Internal(what + ": not a communication stage");
}

std::vector<Sharding> SpmdExecutable::output_shardings() const {
  std::vector<Sharding> out;
  for (int slot : spmd_.output_slots) out.push_back(spmd_.slots[slot].sharding);
  return out;
}

int64_t SpmdExecutable::parameter_bytes_per_device() const {
  int64_t bytes = 0;
  for (int slot : spmd_.parameter_slots) {
    const SpmdSlot& s = spmd_.slots[slot];
    bytes += s.block.num_elements() *
             static_cast<int64_t>(dtype_size(s.global.dtype));
  }
  return bytes;
}

std::string SpmdExecutable::as_text() const {
  std::string text = "// " + name_ + " over " +
                     std::to_string(devices_.size()) + " devices\n" +
                     spmd_.ToText();
  for (size_t s = 0; s < compute_.size(); ++s) {
    if (compute_[s].empty()) continue;
    text += "// stage " + std::to_string(s) + " on " +
            devices_[0]->ToString() + ":\n" + compute_[s][0]->as_text();
  }
  return text;
}

Result<std::vector<std::vector<Array>>> SpmdExecutable::Execute(
    const std::vector<std::vector<Array>>& args) const {
  const size_t n = devices_.size();
  if (args.size() != spmd_.parameter_slots.size()) {
    return InvalidArgument(name_ + ": expected " +
                           std::to_string(spmd_.parameter_slots.size()) +
                           " arguments, got " + std::to_string(args.size()));
  }
  std::vector<std::vector<Array>> slots(spmd_.slots.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const SpmdSlot& slot = spmd_.slots[spmd_.parameter_slots[i]];
    const std::string which = name_ + ": argument " + std::to_string(i);
    if (args[i].size() != n) {
      return InvalidArgument(which + " has " + std::to_string(args[i].size()) +
                             " blocks for " + std::to_string(n) + " devices");
    }
    for (size_t d = 0; d < n; ++d) {
      const Array& a = args[i][d];
      if (!a.valid() || a.device() != devices_[d] ||
          a.shape() != slot.block || a.dtype() != slot.global.dtype) {
        return InvalidArgument(
            which + "'s block for " + devices_[d]->ToString() + " must be " +
            std::string(dtype_name(slot.global.dtype)) + slot.block.to_string() +
            " on that device" +
            (a.valid() ? "; it is " + std::string(dtype_name(a.dtype())) +
                             a.shape().to_string() + " on " +
                             a.device()->ToString()
                       : "; it is missing"));
      }
      if (a.IsDeleted()) return a.impl()->DeletedError();
    }
    slots[spmd_.parameter_slots[i]] = args[i];
  }
  for (size_t s = 0; s < spmd_.stages.size(); ++s) {
    const SpmdStage& st = spmd_.stages[s];
    switch (st.kind) {
      case SpmdStage::Kind::kCompute: {
        for (int out : st.outputs) slots[out].resize(n);
        for (size_t d = 0; d < n; ++d) {
          std::vector<CallArgument> call(st.inputs.size());
          for (size_t k = 0; k < st.inputs.size(); ++k) {
            call[k].array = slots[st.inputs[k]][d];
          }
          BATON_ASSIGN_OR_RETURN(std::vector<Array> outs,
                                 compute_[s][d]->Execute(call));
          for (size_t j = 0; j < outs.size(); ++j) {
            slots[st.outputs[j]][d] = std::move(outs[j]);
          }
        }
        break;
      }
      case SpmdStage::Kind::kAllReduce: {
        const auto& src = slots[st.source];
        std::vector<Array> result(n);
        for (size_t d = 0; d < n; ++d) {
          const Communication& c = *communication_[s][d];
          if (c.leader != static_cast<int>(d)) continue;
          Array acc = src[d];
          for (size_t k = 1; k < c.group.size(); ++k) {
            BATON_ASSIGN_OR_RETURN(
                Array moved,
                CopyArray(src[c.group[k]], devices_[d], acc.memory_kind()));
            BATON_ASSIGN_OR_RETURN(acc, RunOne(*c.combine, {acc, moved}));
          }
          for (size_t k = 1; k < c.group.size(); ++k) {
            BATON_ASSIGN_OR_RETURN(
                result[c.group[k]],
                CopyArray(acc, devices_[c.group[k]], acc.memory_kind()));
          }
          result[d] = std::move(acc);
        }
        slots[st.result] = std::move(result);
        break;
      }
      case SpmdStage::Kind::kSlice: {
        std::vector<Array> result(n);
        for (size_t d = 0; d < n; ++d) {
          const Communication& c = *communication_[s][d];
          const Array& have = slots[st.source][d];
          if (c.slice) {
            BATON_ASSIGN_OR_RETURN(result[d], RunOne(*c.slice, {have}));
          } else {
            result[d] = have;
          }
        }
        slots[st.result] = std::move(result);
        break;
      }
      case SpmdStage::Kind::kAllGather: {
        std::vector<Array> result(n);
        for (size_t d = 0; d < n; ++d) {
          const Communication& c = *communication_[s][d];
          std::vector<Array> parts;
          for (int e : c.sources) {
            const Array& block = slots[st.source][e];
            if (e == static_cast<int>(d)) {
              parts.push_back(block);
            } else {
              BATON_ASSIGN_OR_RETURN(
                  Array moved,
                  CopyArray(block, devices_[d], block.memory_kind()));
              parts.push_back(std::move(moved));
            }
          }
          BATON_ASSIGN_OR_RETURN(result[d],
                                 RunOne(*c.assemble, std::move(parts)));
        }
        slots[st.result] = std::move(result);
        break;
      }
    }
    for (int slot : release_after_[s]) slots[slot].clear();
  }
  std::vector<std::vector<Array>> outputs;
  for (int slot : spmd_.output_slots) outputs.push_back(slots[slot]);
  return outputs;
}

}  // namespace baton
