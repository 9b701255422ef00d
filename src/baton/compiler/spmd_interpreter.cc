#include "baton/compiler/spmd_interpreter.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "baton/compiler/block_copy.h"
#include "baton/compiler/reference_interpreter.h"
#include "baton/compiler/shard_map_body.h"

namespace baton::compiler {

namespace {

// Writes `block` (device `device`'s, laid out as `sharding`) into `global`.
void PlaceBlock(const Literal& block, const Sharding& sharding,
                const DeviceMesh& mesh, int64_t device, Literal& global) {
  CopyBlockIn(block.untyped_data(), global.shape(), dtype_size(global.dtype()),
              sharding, mesh, device, global.untyped_mutable_data());
}

// a `op` b, elementwise, as the reference interpreter computes it.
// `a` converted to `dtype`.
Result<Literal> ConvertLiteral(const Literal& a, DType dtype) {
  Program p;
  BATON_ASSIGN_OR_RETURN(ValueId x, p.AddParameter(ValueType{a.shape(), a.dtype()}));
  BATON_ASSIGN_OR_RETURN(ValueId y, p.Add(ConvertAttrs{dtype}, {x}));
  BATON_RETURN_IF_ERROR(p.SetOutputs({y}));
  BATON_ASSIGN_OR_RETURN(std::vector<Literal> out, Interpret(p, {a}));
  return std::move(out[0]);
}

Result<Literal> Combine(const Literal& a, const Literal& b, ReduceOp op) {
  Program p;
  const ValueType t{a.shape(), a.dtype()};
  BATON_ASSIGN_OR_RETURN(ValueId x, p.AddParameter(t));
  BATON_ASSIGN_OR_RETURN(ValueId y, p.AddParameter(t));
  BATON_ASSIGN_OR_RETURN(ValueId z, p.Add(BinaryAttrs{CombinerOf(op)}, {x, y}));
  BATON_RETURN_IF_ERROR(p.SetOutputs({z}));
  BATON_ASSIGN_OR_RETURN(std::vector<Literal> out, Interpret(p, {a, b}));
  return std::move(out[0]);
}

// The whole array of `slot` from the devices' blocks.
Literal Assemble(const SpmdSlot& slot, const DeviceMesh& mesh,
                 const std::vector<Literal>& blocks) {
  Literal global(slot.global.shape, slot.global.dtype);
  for (size_t d = 0; d < blocks.size(); ++d) {
    PlaceBlock(blocks[d], slot.sharding, mesh, static_cast<int64_t>(d), global);
  }
  return global;
}

}  // namespace

Literal BlockOf(const Literal& global, const Sharding& sharding,
                const DeviceMesh& mesh, int64_t device) {
  Literal block(BlockShape(global.shape(), sharding, mesh), global.dtype());
  CopyBlockOut(global.untyped_data(), global.shape(), dtype_size(global.dtype()),
               sharding, mesh, device, block.untyped_mutable_data());
  return block;
}

namespace {

// Per slot, per device: its block.
using Blocks = std::vector<std::vector<Literal>>;

Result<std::vector<std::vector<Literal>>> RunStages(const SpmdProgram& program,
                                                    Blocks parameters);

// A loop stage: the condition's predicate read (the same on every device)
// and the body run on the carries while it is true.
Status RunLoop(const SpmdStage& st, int64_t n, Blocks& blocks) {
  const SpmdLoop& loop = *st.loop;
  Blocks operands;
  for (int s : st.inputs) operands.push_back(blocks[s]);
  for (;;) {
    BATON_ASSIGN_OR_RETURN(Blocks predicate, RunStages(loop.cond, operands));
    auto truth = [&](int64_t d) {
      return *static_cast<const uint8_t*>(predicate[0][d].untyped_data()) != 0;
    };
    const bool go = truth(0);
    for (int64_t d = 1; d < n; ++d) {
      if (truth(d) != go) {
        return Internal("InterpretSpmd: a loop's predicate differs between devices");
      }
    }
    if (!go) break;
    BATON_ASSIGN_OR_RETURN(Blocks carries, RunStages(loop.body, operands));
    for (int i = 0; i < loop.num_carries; ++i) operands[i] = std::move(carries[i]);
  }
  for (int i = 0; i < loop.num_carries; ++i) {
    blocks[st.outputs[i]] = std::move(operands[i]);
  }
  return OkStatus();
}

// A case stage: the index read (the same on every device), clamped to the
// branches, and that branch run on the operands.
Status RunCase(const SpmdStage& st, int64_t n, Blocks& blocks) {
  const auto& branches = st.branches->branches;
  const int64_t index = blocks[st.inputs[0]][0].GetAsInt64(0);
  for (int64_t d = 1; d < n; ++d) {
    if (blocks[st.inputs[0]][d].GetAsInt64(0) != index) {
      return Internal("InterpretSpmd: a case's index differs between devices");
    }
  }
  const int64_t last = static_cast<int64_t>(branches.size()) - 1;
  Blocks operands;
  for (size_t k = 1; k < st.inputs.size(); ++k) operands.push_back(blocks[st.inputs[k]]);
  BATON_ASSIGN_OR_RETURN(
      Blocks results,
      RunStages(branches[std::clamp<int64_t>(index, 0, last)], std::move(operands)));
  for (size_t j = 0; j < st.outputs.size(); ++j) {
    blocks[st.outputs[j]] = std::move(results[j]);
  }
  return OkStatus();
}

// Runs `program`'s stages on its parameters' blocks (per parameter, per
// device) and returns its outputs' blocks likewise.
Result<std::vector<std::vector<Literal>>> RunStages(const SpmdProgram& program,
                                                    Blocks parameters) {
  const DeviceMesh& mesh = program.mesh;
  const int64_t n = MeshSize(mesh);
  Blocks blocks(program.slots.size());
  for (size_t i = 0; i < parameters.size(); ++i) {
    blocks[program.parameter_slots[i]] = std::move(parameters[i]);
  }
  for (const SpmdStage& st : program.stages) {
    switch (st.kind) {
      case SpmdStage::Kind::kCompute:
        for (int64_t d = 0; d < n; ++d) {
          std::vector<Literal> in;
          for (int s : st.inputs) in.push_back(blocks[s][d]);
          BATON_ASSIGN_OR_RETURN(std::vector<Literal> out,
                                 Interpret(*st.program, in));
          for (size_t j = 0; j < out.size(); ++j) {
            blocks[st.outputs[j]].push_back(std::move(out[j]));
          }
        }
        break;
      case SpmdStage::Kind::kAllReduce: {
        const auto& src = blocks[st.source];
        auto& dst = blocks[st.result];
        for (int64_t d = 0; d < n; ++d) {
          // In group order: the stage's axes major first.
          Literal acc;
          bool first = true;
          for (int64_t e : GroupMembers(mesh, d, st.axes)) {
            if (first) {
              acc = src[e];
              first = false;
            } else {
              BATON_ASSIGN_OR_RETURN(acc, Combine(acc, src[e], st.op));
            }
          }
          // A 16-bit float's partial sum is combined in float32, then
          // rounded once.
          const DType to = program.slots[st.result].global.dtype;
          if (acc.dtype() != to) {
            BATON_ASSIGN_OR_RETURN(acc, ConvertLiteral(acc, to));
          }
          dst.push_back(std::move(acc));
        }
        break;
      }
      case SpmdStage::Kind::kCollective: {
        ValueType operand = program.slots[st.source].global;
        operand.shape = program.slots[st.source].block;
        for (int64_t d = 0; d < n; ++d) {
          BATON_ASSIGN_OR_RETURN(CollectivePart part,
                                 CollectiveProgram(st, operand, mesh, d));
          std::vector<Literal> in;
          for (int64_t e : part.sources) in.push_back(blocks[st.source][e]);
          if (!part.program.has_value()) {
            blocks[st.result].push_back(std::move(in[0]));
            continue;
          }
          BATON_ASSIGN_OR_RETURN(std::vector<Literal> out,
                                 Interpret(*part.program, in));
          blocks[st.result].push_back(std::move(out[0]));
        }
        break;
      }
      case SpmdStage::Kind::kLoop:
        BATON_RETURN_IF_ERROR(RunLoop(st, n, blocks));
        break;
      case SpmdStage::Kind::kCase:
        BATON_RETURN_IF_ERROR(RunCase(st, n, blocks));
        break;
      case SpmdStage::Kind::kAllGather:
      case SpmdStage::Kind::kSlice: {
        const Literal whole =
            Assemble(program.slots[st.source], mesh, blocks[st.source]);
        for (int64_t d = 0; d < n; ++d) {
          blocks[st.result].push_back(
              BlockOf(whole, program.slots[st.result].sharding, mesh, d));
        }
        break;
      }
    }
  }
  Blocks outputs;
  for (int s : program.output_slots) outputs.push_back(blocks[s]);
  return outputs;
}

}  // namespace

Result<std::vector<Literal>> InterpretSpmd(const SpmdProgram& program,
                                           const std::vector<Literal>& args) {
  const DeviceMesh& mesh = program.mesh;
  const int64_t n = MeshSize(mesh);
  if (args.size() != program.parameter_slots.size()) {
    return InvalidArgument("InterpretSpmd: " + std::to_string(args.size()) +
                           " arguments for " +
                           std::to_string(program.parameter_slots.size()) +
                           " parameters");
  }
  // Per parameter, per device: its block.
  std::vector<std::vector<Literal>> blocks(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const SpmdSlot& slot = program.slots[program.parameter_slots[i]];
    if (args[i].shape() != slot.global.shape ||
        args[i].dtype() != slot.global.dtype) {
      return InvalidArgument("InterpretSpmd: argument " + std::to_string(i) +
                             " is " + std::string(dtype_name(args[i].dtype())) +
                             args[i].shape().to_string() + ", the parameter " +
                             std::string(dtype_name(slot.global.dtype)) +
                             slot.global.shape.to_string());
    }
    auto& b = blocks[i];
    for (int64_t d = 0; d < n; ++d) {
      b.push_back(BlockOf(args[i], slot.sharding, mesh, d));
    }
  }
  BATON_ASSIGN_OR_RETURN(Blocks out_blocks, RunStages(program, std::move(blocks)));
  std::vector<Literal> outputs;
  for (size_t k = 0; k < program.output_slots.size(); ++k) {
    const int s = program.output_slots[k];
    const SpmdSlot& slot = program.slots[s];
    const std::vector<Literal>& per_device = out_blocks[k];
    Literal whole = Assemble(slot, mesh, per_device);
    // Devices holding the same block must agree (a replicated result).
    for (int64_t d = 0; d < n; ++d) {
      const Literal mine = BlockOf(whole, slot.sharding, mesh, d);
      if (mine.byte_size() > 0 &&
          std::memcmp(mine.untyped_data(), per_device[d].untyped_data(),
                      static_cast<size_t>(mine.byte_size())) != 0) {
        return Internal("InterpretSpmd: device " + std::to_string(d) +
                        "'s block of output slot %" + std::to_string(s) +
                        " differs from another device's copy of it");
      }
    }
    outputs.push_back(std::move(whole));
  }
  return outputs;
}

}  // namespace baton::compiler
