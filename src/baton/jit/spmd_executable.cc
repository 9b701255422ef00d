#include "baton/jit/spmd_executable.h"

#include <xxhash.h>

#include <algorithm>
#include <set>
#include <utility>

#include "baton/backend/host_staged_exchange.h"
#include "baton/compiler/passes.h"
#include "baton/compiler/shard_map_body.h"
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
  // kAllReduce: the device's group in group order (compiler::GroupMembers),
  // the member that combines it (one process), and on each device that
  // combines, the program combining the group's blocks in that order.
  std::vector<int> members;
  int leader = -1;
  std::shared_ptr<Executable> combine;
  // A member other than the leader reads the leader's result in place
  // instead of holding a copy (one process's CPU devices, the result read
  // only by compute stages: SpmdExecutable::ReadOnlyByPrograms).
  bool reads_leaders_result = false;
  // kSlice: the program cutting the new block out of the old (null when
  // they are the same block).
  std::shared_ptr<Executable> slice;
  // kAllGather: per block position of the old layout (row-major), the
  // device whose block is read, and the program assembling the new block
  // from them (parameters in position order). kCollective: the mesh
  // positions whose blocks the device's result is made of, and the program
  // making it (null: the one source's block is the result).
  std::vector<int> sources;
  std::shared_ptr<Executable> assemble;
};

namespace {

Result<std::shared_ptr<Executable>> CompileFor(Program program, Device* device,
                                               const std::string& name,
                                               std::vector<bool> donated = {}) {
  donated.resize(program.num_parameters(), false);
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

// The program combining `n` blocks by `op`, left to right (the order
// every device of a group uses, so all get the same bytes).
// n blocks of `slot` combined by `op`, the result converted to `to` (a
// float32 partial sum of a 16-bit float is rounded here, once).
Result<Program> CombineProgram(const SpmdSlot& slot, ReduceOp op, size_t n,
                               DType to) {
  Program p;
  ValueType t = slot.global;
  t.shape = slot.block;
  BATON_ASSIGN_OR_RETURN(ValueId acc, p.AddParameter(t));
  for (size_t k = 1; k < n; ++k) {
    BATON_ASSIGN_OR_RETURN(ValueId next, p.AddParameter(t));
    BATON_ASSIGN_OR_RETURN(
        acc, p.Add(compiler::BinaryAttrs{CombinerOf(op)}, {acc, next}));
  }
  if (t.dtype != to) {
    BATON_ASSIGN_OR_RETURN(acc, p.Add(compiler::ConvertAttrs{to}, {acc}));
  }
  BATON_RETURN_IF_ERROR(p.SetOutputs({acc}));
  return p;
}

// What stage `s` exchanges between processes, for agreement(): its kind,
// op or attributes, axes, and the blocks' type (no slot numbers: programs
// that differ only in their compute stages exchange alike).
std::string ExchangeText(const compiler::SpmdProgram& sp, size_t s) {
  const SpmdStage& st = sp.stages[s];
  const SpmdSlot& from = sp.slots[st.source];
  std::string text;
  switch (st.kind) {
    case SpmdStage::Kind::kAllReduce:
      text = "all_reduce(" + std::string(op_name(st.op)) + ")";
      break;
    case SpmdStage::Kind::kAllGather:
      text = "all_gather " + from.sharding.ToString(sp.mesh) + " -> " +
             sp.slots[st.result].sharding.ToString(sp.mesh);
      break;
    case SpmdStage::Kind::kCollective: {
      static constexpr const char* kNames[] = {"all_gather", "psum_scatter",
                                               "all_to_all", "ppermute"};
      const compiler::SpmdCollective& c = *st.collective;
      text = std::string(kNames[static_cast<int>(c.kind)]) + "(dimension " +
             std::to_string(c.dimension) + ", " +
             std::to_string(c.concat_dimension) + (c.tiled ? ", tiled" : "");
      for (int src : c.source_of) text += " " + std::to_string(src);
      text += ")";
      break;
    }
    case SpmdStage::Kind::kSlice:
    case SpmdStage::Kind::kCompute:
    case SpmdStage::Kind::kLoop:
    case SpmdStage::Kind::kCase:
      break;
  }
  if (!st.axes.empty()) {
    text += " over";
    for (int a : st.axes) text += " '" + sp.mesh.axis_names[a] + "'";
  }
  return text + " of " + std::string(dtype_name(from.global.dtype)) +
         from.block.to_string();
}

// Whether `reader`'s programs read `a` where it lies, without a copy onto
// `reader` first: host code reading host memory (one process's CPU
// devices; DeviceBackend::programs_read_host_memory). The call holds `a`
// for reading until it is done and waits for a's writer, as for its own
// arguments.
bool ReadableInPlace(Device* holder, MemoryKind kind, const Device* reader) {
  return reader->programs_read_host_memory() && holder->host_addressable(kind);
}
bool ReadableInPlace(const Array& a, const Device* reader) {
  return ReadableInPlace(a.device(), a.memory_kind(), reader);
}

Result<Array> RunOne(Executable& exe, std::vector<Array> args) {
  std::vector<CallArgument> call(args.size());
  for (size_t i = 0; i < args.size(); ++i) call[i].array = std::move(args[i]);
  BATON_ASSIGN_OR_RETURN(std::vector<Array> out, exe.Execute(call));
  return std::move(out[0]);
}

// A replicated scalar's value (a case stage's index, a loop stage's
// predicate): every device's copy is the same, so this process reads its
// first; every process reads the same value, so all take the same branch or
// go on alike.
Result<int64_t> ReadReplicatedScalar(const std::vector<Array>& blocks,
                                     const std::string& what) {
  const Array& scalar = blocks.at(0);
  switch (scalar.dtype()) {
    case DType::kBool: {
      bool b = false;
      BATON_RETURN_IF_ERROR(CopyToHost(scalar, &b, sizeof b));
      return b ? 1 : 0;
    }
    case DType::kInt32: {
      int32_t i = 0;
      BATON_RETURN_IF_ERROR(CopyToHost(scalar, &i, sizeof i));
      return i;
    }
    case DType::kInt64: {
      int64_t i = 0;
      BATON_RETURN_IF_ERROR(CopyToHost(scalar, &i, sizeof i));
      return i;
    }
    default:
      return Internal(what + " is " + std::string(dtype_name(scalar.dtype())) +
                      ", not a boolean or an integer");
  }
}

}  // namespace

Result<std::shared_ptr<SpmdExecutable>> SpmdExecutable::Compile(
    const Program& program, DeviceMesh mesh,
    const std::vector<Sharding>& parameters, std::vector<Device*> devices,
    std::string name, const SpmdProcesses* processes,
    const std::vector<std::optional<Sharding>>& outputs,
    const std::vector<bool>& donated) {
  if (!donated.empty() && donated.size() != parameters.size()) {
    return InvalidArgument(name + ": " + std::to_string(donated.size()) +
                           " donation flags for " +
                           std::to_string(parameters.size()) + " parameters");
  }
  BATON_ASSIGN_OR_RETURN(
      std::shared_ptr<SpmdExecutable> exe,
      Start(std::move(devices), std::move(name), processes,
            compiler::MeshSize(mesh)));
  // Inlined with its sharding constraints, then without the values no
  // output needs and with equal ones merged, as a one-device program is
  // optimized: the partitioner would otherwise compute, and all-reduce,
  // what a transformation traced and left unused (a vmap round's operand).
  const compiler::Program inlined = compiler::EliminateDeadCode(
      compiler::EliminateCommonSubexpressions(compiler::InlineCalls(
          program, /*keep_sharding_constraints=*/true)));
  BATON_ASSIGN_OR_RETURN(
      exe->spmd_, compiler::PartitionForMesh(inlined, std::move(mesh),
                                             parameters, outputs));
  BATON_RETURN_IF_ERROR(exe->Finish(donated));
  return exe;
}

Result<std::shared_ptr<SpmdExecutable>> SpmdExecutable::CompilePartitioned(
    compiler::SpmdProgram partitioned, std::vector<Device*> devices,
    std::string name, const SpmdProcesses* processes,
    const std::vector<bool>& donated) {
  if (!donated.empty() && donated.size() != partitioned.parameter_slots.size()) {
    return InvalidArgument(name + ": " + std::to_string(donated.size()) +
                           " donation flags for " +
                           std::to_string(partitioned.parameter_slots.size()) +
                           " parameters");
  }
  BATON_ASSIGN_OR_RETURN(
      std::shared_ptr<SpmdExecutable> exe,
      Start(std::move(devices), std::move(name), processes,
            compiler::MeshSize(partitioned.mesh)));
  exe->spmd_ = std::move(partitioned);
  BATON_RETURN_IF_ERROR(exe->Finish(donated));
  return exe;
}

Result<std::shared_ptr<SpmdExecutable>> SpmdExecutable::Start(
    std::vector<Device*> devices, std::string name,
    const SpmdProcesses* processes, int64_t size) {
  if (static_cast<int64_t>(devices.size()) != size) {
    return InvalidArgument(name + ": the mesh has " + std::to_string(size) +
                           " positions but " + std::to_string(devices.size()) +
                           " devices were given");
  }
  for (size_t d = 0; d < devices.size(); ++d) {
    if (devices[d] == nullptr) {
      if (processes == nullptr || processes->group == nullptr) {
        return InvalidArgument(name + ": mesh position " + std::to_string(d) +
                               " has no device and no process group is given");
      }
      continue;
    }
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
  exe->local_index_.assign(exe->devices_.size(), -1);
  for (size_t d = 0; d < exe->devices_.size(); ++d) {
    if (exe->devices_[d] == nullptr) continue;
    exe->local_index_[d] = static_cast<int>(exe->local_.size());
    exe->local_.push_back(static_cast<int>(d));
  }
  if (processes != nullptr) {
    exe->processes_ = *processes;
    if (exe->processes_.process_of.size() != exe->devices_.size()) {
      return InvalidArgument(exe->name_ + ": process_of names " +
                             std::to_string(processes->process_of.size()) +
                             " positions for a mesh of " +
                             std::to_string(exe->devices_.size()));
    }
    if (exe->processes_.group != nullptr) {
      std::vector<int> count(exe->processes_.group->size(), 0);
      for (int p : exe->processes_.process_of) {
        if (p < 0 || p >= static_cast<int>(count.size())) {
          return InvalidArgument(exe->name_ + ": a mesh position is on process " +
                                 std::to_string(p) + " of a group of " +
                                 std::to_string(count.size()));
        }
        ++count[p];
      }
      if (std::count(count.begin(), count.end(), count[0]) !=
          static_cast<int64_t>(count.size())) {
        return InvalidArgument(
            exe->name_ + ": every process must hold the same number of the "
            "mesh's devices");
      }
      exe->host_exchange_ =
          std::make_unique<HostStagedExchange>(exe->processes_.group);
    }
  }
  return exe;
}

Status SpmdExecutable::Finish(const std::vector<bool>& donated) {
  const size_t num_stages = spmd_.stages.size();
  compute_.resize(num_stages);
  communication_.resize(num_stages);
  crosses_.resize(num_stages);
  for (size_t s = 0; s < num_stages; ++s) crosses_[s] = Crosses(s);
  // Which slots each stage reads last (outputs are kept).
  std::vector<int> last_read(spmd_.slots.size(), -1);
  for (size_t s = 0; s < num_stages; ++s) {
    for (int slot : spmd_.stages[s].Reads()) last_read[slot] = static_cast<int>(s);
  }
  for (int slot : spmd_.output_slots) last_read[slot] = -1;
  // A donated parameter's block goes to the compute stage reading it last.
  donated_ = donated;
  donated_.resize(spmd_.parameter_slots.size(), false);
  donated_slot_.assign(spmd_.slots.size(), false);
  for (size_t i = 0; i < donated_.size(); ++i) {
    if (donated_[i]) {
      donated_slot_[spmd_.parameter_slots[i]] = true;
    }
  }
  donate_inputs_.resize(num_stages);
  for (size_t i = 0; i < donated_.size(); ++i) {
    const int slot = spmd_.parameter_slots[i];
    const int s = last_read[slot];
    if (!donated_[i] || s < 0) continue;
    const SpmdStage& st = spmd_.stages[s];
    if (st.kind != SpmdStage::Kind::kCompute) continue;
    auto& flags = donate_inputs_[s];
    flags.resize(st.inputs.size(), false);
    for (size_t k = 0; k < st.inputs.size(); ++k) {
      if (st.inputs[k] == slot) flags[k] = true;
    }
  }
  regions_.resize(num_stages);
  for (size_t s = 0; s < num_stages; ++s) {
    const SpmdStage& st = spmd_.stages[s];
    if (st.RunsRegions()) {
      BATON_RETURN_IF_ERROR(CompileRegions(s));
      continue;
    }
    if (st.kind != SpmdStage::Kind::kCompute) {
      BATON_RETURN_IF_ERROR(CompileCommunication(s));
      continue;
    }
    const std::string stage_name =
        name_ + " (stage " + std::to_string(s) + ")";
    compute_[s].resize(devices_.size());
    for (int d : local_) {
      BATON_ASSIGN_OR_RETURN(
          compute_[s][d],
          CompileFor(*st.program, devices_[d], stage_name,
                     donate_inputs_[s]));
    }
  }
  // Donations no output reuses: by the stage reading them last, on any of
  // this process's devices (the stage is the same program on each).
  for (size_t i = 0; i < donated_.size(); ++i) {
    if (!donated_[i]) continue;
    const int slot = spmd_.parameter_slots[i];
    const int s = last_read[slot];
    // Returned as it is: the output is the donated block.
    bool reused = std::find(spmd_.output_slots.begin(),
                            spmd_.output_slots.end(),
                            slot) != spmd_.output_slots.end();
    if (!reused && s >= 0 && spmd_.stages[s].kind == SpmdStage::Kind::kCompute &&
        !local_.empty()) {
      const auto& inputs = spmd_.stages[s].inputs;
      const int k = static_cast<int>(
          std::find(inputs.begin(), inputs.end(), slot) - inputs.begin());
      reused = true;
      for (int d : local_) {
        const auto& unusable = compute_[s][d]->unusable_donations();
        reused &= std::find(unusable.begin(), unusable.end(), k) == unusable.end();
      }
    }
    if (!reused) unusable_.push_back(static_cast<int>(i));
  }
  for (size_t s = 0; s < num_stages; ++s) {
    if (crosses_[s]) agreement_ += ExchangeText(spmd_, s) + "\n";
    if (regions_[s].empty()) continue;
    // Every region's exchanges, each in braces: the same collectives in
    // another branch or region must not agree by accident.
    std::string inside;
    for (const auto& region : regions_[s]) {
      if (!region->agreement_.empty()) inside += "{\n" + region->agreement_ + "}\n";
    }
    if (!inside.empty()) {
      agreement_ += (spmd_.stages[s].kind == SpmdStage::Kind::kLoop ? "while " : "case ") +
                    inside;
    }
  }
  release_after_.resize(num_stages);
  for (size_t slot = 0; slot < last_read.size(); ++slot) {
    if (last_read[slot] >= 0) {
      release_after_[last_read[slot]].push_back(static_cast<int>(slot));
    }
  }
  return OkStatus();
}

Status SpmdExecutable::CompileRegions(size_t s) {
  const SpmdStage& st = spmd_.stages[s];
  const std::string what = name_ + " (stage " + std::to_string(s) + ", ";
  const SpmdProcesses* processes = processes_.group != nullptr ? &processes_ : nullptr;
  std::vector<std::shared_ptr<SpmdExecutable>>& made = regions_[s];
  if (st.kind == SpmdStage::Kind::kLoop) {
    const compiler::SpmdLoop& loop = *st.loop;
    BATON_ASSIGN_OR_RETURN(std::shared_ptr<SpmdExecutable> cond,
                           CompilePartitioned(loop.cond, devices_,
                                              what + "while cond)", processes));
    std::vector<bool> carries(loop.body.parameter_slots.size(), false);
    std::fill(carries.begin(), carries.begin() + loop.num_carries, true);
    BATON_ASSIGN_OR_RETURN(std::shared_ptr<SpmdExecutable> body,
                           CompilePartitioned(loop.body, devices_,
                                              what + "while body)", processes,
                                              carries));
    made = {std::move(cond), std::move(body)};
  } else {
    const auto& branches = st.branches->branches;
    for (size_t b = 0; b < branches.size(); ++b) {
      BATON_ASSIGN_OR_RETURN(
          std::shared_ptr<SpmdExecutable> branch,
          CompilePartitioned(branches[b], devices_,
                             what + "case branch " + std::to_string(b) + ")",
                             processes));
      made.push_back(std::move(branch));
    }
  }
  // The enclosing executable agrees for them (its agreement() holds theirs).
  for (const auto& region : made) region->nested_ = true;
  return OkStatus();
}

Result<std::vector<std::vector<Array>>> SpmdExecutable::RunCase(
    size_t s, const std::vector<std::vector<Array>>& operands) const {
  const auto& branches = regions_[s];
  BATON_ASSIGN_OR_RETURN(const int64_t index,
                         ReadReplicatedScalar(operands[0], name_ + ": a case stage's index"));
  // Out of range: clamped, as `case` does.
  const int64_t at = std::clamp<int64_t>(index, 0, static_cast<int64_t>(branches.size()) - 1);
  const std::vector<std::vector<Array>> arguments(operands.begin() + 1, operands.end());
  return branches[at]->Execute(arguments);
}

Result<std::vector<std::vector<Array>>> SpmdExecutable::RunLoop(
    size_t s, std::vector<std::vector<Array>> operands) const {
  const SpmdExecutable& cond = *regions_[s][0];
  const SpmdExecutable& body = *regions_[s][1];
  const int num_carries = spmd_.stages[s].loop->num_carries;
  // Never donated: the blocks the loop was given (the caller's, a slot's)
  // -- every carry is copied in the first iteration -- and the invariants,
  // which a body may pass through as a carry.
  std::set<const ArrayImpl*> invariants;
  for (size_t i = num_carries; i < operands.size(); ++i) {
    for (const Array& a : operands[i]) invariants.insert(a.impl());
  }
  for (bool first = true;; first = false) {
    BATON_ASSIGN_OR_RETURN(std::vector<std::vector<Array>> predicate,
                           cond.Execute(operands));
    BATON_ASSIGN_OR_RETURN(const int64_t go,
                           ReadReplicatedScalar(predicate[0], name_ + ": a loop's predicate"));
    if (go == 0) break;
    // Each carry block donated to the body: the loop's own (made by the
    // last iteration, once), else a copy of it.
    std::vector<std::vector<Donated>> donations(num_carries);
    std::vector<std::vector<Donated*>> donated(operands.size());
    std::set<const ArrayImpl*> taken;
    for (int i = 0; i < num_carries; ++i) {
      for (Array& a : operands[i]) {
        if (first || invariants.count(a.impl()) > 0 || taken.count(a.impl()) > 0) {
          BATON_ASSIGN_OR_RETURN(a, CopyArray(a, a.device(), a.memory_kind()));
        }
        taken.insert(a.impl());
        BATON_ASSIGN_OR_RETURN(Donated d, TryDonate(a));
        donations[i].push_back(std::move(d));
      }
      for (Donated& d : donations[i]) donated[i].push_back(&d);
    }
    BATON_ASSIGN_OR_RETURN(std::vector<std::vector<Array>> carries,
                           body.Execute(operands, donated));
    for (int i = 0; i < num_carries; ++i) operands[i] = std::move(carries[i]);
  }
  operands.resize(num_carries);
  return operands;
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
      const bool crosses = crosses_[s];
      const bool read_only_by_programs = ReadOnlyByPrograms(st.result);
      for (int d : local_) {
        Communication& c = *per_device[d];
        // In group order (the stage's axes major first, as shard_map's
        // threads and JAX number a group): the order the blocks are
        // combined in, so psum over ('b', 'a') adds in that order.
        for (int64_t e : compiler::GroupMembers(mesh, d, st.axes)) {
          c.members.push_back(static_cast<int>(e));
        }
        // One process: one member combines for the group -- a different one
        // from stage to stage, so the all-reduces of a backward pass spread
        // over the devices. Across processes: every device combines its
        // group itself.
        c.leader = c.members[s % c.members.size()];
        c.reads_leaders_result =
            !crosses && c.leader != d && read_only_by_programs &&
            ReadableInPlace(devices_[c.leader], to.global.memory_kind, devices_[d]);
        // A group of one needs a program only to convert.
        const bool needed =
            c.members.size() > 1 || from.global.dtype != to.global.dtype;
        const bool combines = crosses ? needed : c.leader == d && needed;
        if (!combines) continue;
        BATON_ASSIGN_OR_RETURN(Program p,
                               CombineProgram(from, st.op, c.members.size(),
                                              to.global.dtype));
        BATON_ASSIGN_OR_RETURN(c.combine,
                               CompileFor(std::move(p), devices_[d], what));
      }
      return OkStatus();
    }
    case SpmdStage::Kind::kSlice: {
      for (int d : local_) {
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
      // The first device (mesh order) holding each position, and the
      // first of this process's.
      std::vector<int> first(positions, -1), first_local(positions, -1);
      std::vector<int64_t> position_of(n);
      for (int64_t e = 0; e < n; ++e) {
        position_of[e] = BlockPosition(from, mesh, e);
        if (first[position_of[e]] < 0) first[position_of[e]] = static_cast<int>(e);
        if (devices_[e] != nullptr && first_local[position_of[e]] < 0) {
          first_local[position_of[e]] = static_cast<int>(e);
        }
      }
      for (int d : local_) {
        Communication& c = *per_device[d];
        c.sources = first;
        for (int64_t k = 0; k < positions; ++k) {
          if (first_local[k] >= 0) c.sources[k] = first_local[k];
        }
        c.sources[position_of[d]] = d;  // its own block
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
    case SpmdStage::Kind::kCollective: {
      ValueType operand = from.global;
      operand.shape = from.block;
      for (int d : local_) {
        Communication& c = *per_device[d];
        BATON_ASSIGN_OR_RETURN(compiler::CollectivePart part,
                               compiler::CollectiveProgram(st, operand, mesh, d));
        c.sources.assign(part.sources.begin(), part.sources.end());
        if (part.program.has_value()) {
          BATON_ASSIGN_OR_RETURN(
              c.assemble, CompileFor(std::move(*part.program), devices_[d], what));
        }
      }
      return OkStatus();
    }
    case SpmdStage::Kind::kCompute:
    case SpmdStage::Kind::kLoop:
    case SpmdStage::Kind::kCase:
      break;
  }
  return Internal(what + ": not a communication stage");
}

bool SpmdExecutable::Crosses(size_t s) const {
  if (processes_.group == nullptr) return false;
  const SpmdStage& st = spmd_.stages[s];
  const std::vector<int>& process_of = processes_.process_of;
  const int64_t n = static_cast<int64_t>(devices_.size());
  // Decided from the whole mesh (never from this process's part), so every
  // process exchanges in the same stages: the exchange is a collective.
  switch (st.kind) {
    case SpmdStage::Kind::kAllReduce:
      for (int64_t d = 0; d < n; ++d) {
        for (int64_t e = 0; e < n; ++e) {
          if (process_of[d] != process_of[e] &&
              compiler::SameGroup(spmd_.mesh, d, e, st.axes)) {
            return true;
          }
        }
      }
      return false;
    case SpmdStage::Kind::kAllGather: {
      // Some process lacks a block position among its own devices.
      const SpmdSlot& from = spmd_.slots[st.source];
      int64_t positions = 1;
      for (int64_t w : Ways(from.sharding, spmd_.mesh)) positions *= w;
      std::vector<std::vector<bool>> held(
          processes_.group->size(), std::vector<bool>(positions, false));
      for (int64_t e = 0; e < n; ++e) {
        held[process_of[e]][BlockPosition(from, spmd_.mesh, e)] = true;
      }
      for (const auto& h : held) {
        if (std::find(h.begin(), h.end(), false) != h.end()) return true;
      }
      return false;
    }
    case SpmdStage::Kind::kCollective: {
      for (int64_t d = 0; d < n; ++d) {
        for (int64_t e : compiler::CollectiveSources(st, spmd_.mesh, d)) {
          if (process_of[d] != process_of[e]) return true;
        }
      }
      return false;
    }
    case SpmdStage::Kind::kSlice:
    case SpmdStage::Kind::kCompute:
    case SpmdStage::Kind::kLoop:  // its regions exchange in their own stages
    case SpmdStage::Kind::kCase:
      return false;
  }
  return false;
}

Result<std::vector<std::vector<Array>>> SpmdExecutable::Exchange(
    size_t s, const std::vector<Array>& by_position) const {
  const SpmdStage& st = spmd_.stages[s];
  std::vector<Array> mine;
  std::vector<Device*> local_devices;
  std::vector<std::vector<int>> wanted(local_.size());
  for (size_t k = 0; k < local_.size(); ++k) {
    const int d = local_[k];
    mine.push_back(by_position[d]);
    local_devices.push_back(devices_[d]);
    const Communication& c = *communication_[s][d];
    const std::vector<int>& reads =
        st.kind == SpmdStage::Kind::kAllReduce ? c.members : c.sources;
    for (int e : reads) {
      if (devices_[e] == nullptr) wanted[k].push_back(e);
    }
  }
  const MemoryKind kind = spmd_.slots[st.source].global.memory_kind;
  BlockExchange* exchange = processes_.exchange;
  if (exchange == nullptr || !exchange->Serves(local_devices, kind)) {
    exchange = host_exchange_.get();
  }
  return exchange->Gather(mine, processes_.process_of,
                          processes_.process_index, wanted);
}

Result<Array> SpmdExecutable::BlockOn(
    int d, int e, const std::vector<Array>& by_position,
    const std::vector<std::vector<Array>>& remote, bool read_by_program) const {
  if (e == d) return by_position[e];
  if (devices_[e] != nullptr) {
    if (read_by_program && ReadableInPlace(by_position[e], devices_[d])) {
      return by_position[e];
    }
    return CopyArray(by_position[e], devices_[d], by_position[e].memory_kind());
  }
  const Array& arrived = remote[local_index_[d]][e];
  if (!arrived.valid()) {
    return Internal(name_ + ": mesh position " + std::to_string(e) +
                    "'s block was not exchanged for " + devices_[d]->ToString());
  }
  return arrived;
}

bool SpmdExecutable::ReadOnlyByPrograms(int slot) const {
  for (const SpmdStage& st : spmd_.stages) {
    if (st.kind == SpmdStage::Kind::kCompute) continue;
    const std::vector<int> reads = st.Reads();
    if (std::find(reads.begin(), reads.end(), slot) != reads.end()) return false;
  }
  return std::find(spmd_.output_slots.begin(), spmd_.output_slots.end(), slot) ==
         spmd_.output_slots.end();
}

int64_t SpmdExecutable::CopiedOnto(int d, const std::vector<int>& from, MemoryKind kind,
                                   bool read_by_program) const {
  int64_t copies = 0;
  for (int e : from) {
    if (e == d) continue;
    const bool in_place = devices_[e] != nullptr && read_by_program &&
                          ReadableInPlace(devices_[e], kind, devices_[d]);
    copies += in_place ? 0 : 1;
  }
  return copies;
}

Result<compiler::MemoryAnalysis> SpmdExecutable::memory_analysis(int k) const {
  if (k < 0 || k >= static_cast<int>(local_.size())) {
    return InvalidArgument(name_ + ": memory_analysis(" + std::to_string(k) +
                           "): this process has " +
                           std::to_string(local_.size()) +
                           " devices of the mesh");
  }
  const int d = local_[k];
  auto bytes = [&](int slot) {
    const SpmdSlot& s = spmd_.slots[slot];
    return s.block.num_elements() *
           static_cast<int64_t>(dtype_size(s.global.dtype));
  };
  auto kind = [&](int slot) { return spmd_.slots[slot].global.memory_kind; };
  compiler::MemoryAnalysis m;
  std::vector<bool> live(spmd_.slots.size(), false);
  std::vector<bool> parameter(spmd_.slots.size(), false);
  int64_t held = 0;
  for (int slot : spmd_.parameter_slots) {
    if (live[slot]) continue;
    live[slot] = parameter[slot] = true;
    held += bytes(slot);
  }
  m.argument_size_in_bytes = held;
  int64_t peak = held;
  for (size_t s = 0; s < spmd_.stages.size(); ++s) {
    const SpmdStage& st = spmd_.stages[s];
    int64_t during = 0;  // beyond the live slots, while the stage runs
    std::vector<int> made;
    switch (st.kind) {
      case SpmdStage::Kind::kCompute: {
        const compiler::MemoryAnalysis& a = compute_[s][d]->memory_analysis();
        during = a.output_size_in_bytes - a.alias_size_in_bytes +
                 a.temp_size_in_bytes + a.constant_size_in_bytes;
        m.alias_size_in_bytes += a.alias_size_in_bytes;
        m.constant_size_in_bytes += a.constant_size_in_bytes;
        made = st.outputs;
        break;
      }
      case SpmdStage::Kind::kAllReduce: {
        const Communication& c = *communication_[s][d];
        // The combining device holds the others' blocks while it adds --
        // those it cannot read in place.
        const bool combines = crosses_[s] || c.leader == d;
        const int64_t received =
            combines ? CopiedOnto(d, c.members, kind(st.source), c.combine != nullptr) *
                           bytes(st.source)
                     : 0;
        if (c.reads_leaders_result) break;  // the leader holds the result
        during = received + bytes(st.result);
        made = {st.result};
        break;
      }
      case SpmdStage::Kind::kSlice:
        during = bytes(st.result);
        made = {st.result};
        break;
      case SpmdStage::Kind::kLoop: {
        // The fullest iteration is the first: the operands are still held
        // while the body runs on copies of the carries (its arguments),
        // with what it makes and its temporaries -- the fuller of the
        // regions' peaks. The invariants, its arguments too, are the
        // operands' own blocks: counted once.
        BATON_ASSIGN_OR_RETURN(compiler::MemoryAnalysis cond,
                               regions_[s][0]->memory_analysis(k));
        BATON_ASSIGN_OR_RETURN(compiler::MemoryAnalysis body,
                               regions_[s][1]->memory_analysis(k));
        during = std::max(cond.peak_memory_in_bytes, body.peak_memory_in_bytes);
        for (size_t j = st.loop->num_carries; j < st.inputs.size(); ++j) {
          during -= bytes(st.inputs[j]);
        }
        m.constant_size_in_bytes +=
            std::max(cond.constant_size_in_bytes, body.constant_size_in_bytes);
        made = st.outputs;
        break;
      }
      case SpmdStage::Kind::kCase: {
        // The fullest branch: its arguments are the operands' own blocks
        // (counted once, as slots), beyond them what it makes and its
        // temporaries.
        int64_t constants = 0;
        for (const auto& branch : regions_[s]) {
          BATON_ASSIGN_OR_RETURN(compiler::MemoryAnalysis b, branch->memory_analysis(k));
          during = std::max(during, b.peak_memory_in_bytes - b.argument_size_in_bytes);
          constants = std::max(constants, b.constant_size_in_bytes);
        }
        m.constant_size_in_bytes += constants;
        made = st.outputs;
        break;
      }
      case SpmdStage::Kind::kAllGather:
      case SpmdStage::Kind::kCollective: {
        // The other devices' blocks it reads, and the result.
        const Communication& c = *communication_[s][d];
        const int64_t received =
            CopiedOnto(d, c.sources, kind(st.source), c.assemble != nullptr);
        during = received * bytes(st.source) + bytes(st.result);
        made = {st.result};
        break;
      }
    }
    peak = std::max(peak, held + during);
    for (int slot : made) {
      if (!live[slot]) held += bytes(slot);
      live[slot] = true;
    }
    // Released after the stage: no later stage reads them (the caller
    // keeps its arguments unless they were donated).
    for (int slot : release_after_[s]) {
      if (!live[slot]) continue;
      if (parameter[slot] && !donated_slot_[slot]) continue;
      live[slot] = false;
      held -= bytes(slot);
    }
  }
  std::vector<bool> counted(spmd_.slots.size(), false);
  for (int slot : spmd_.output_slots) {
    if (counted[slot]) continue;
    counted[slot] = true;
    m.output_size_in_bytes += bytes(slot);
  }
  m.peak_memory_in_bytes = peak;
  m.temp_size_in_bytes = std::max<int64_t>(
      0, peak - (m.argument_size_in_bytes + m.output_size_in_bytes -
                 m.alias_size_in_bytes + m.constant_size_in_bytes));
  return m;
}

Result<std::vector<ShardedArray>> SpmdExecutable::Run(
    const std::vector<ShardedArray>& args) const {
  if (args.size() != spmd_.parameter_slots.size()) {
    return InvalidArgument(name_ + ": expected " +
                           std::to_string(spmd_.parameter_slots.size()) +
                           " arguments, got " + std::to_string(args.size()));
  }
  std::vector<std::vector<Array>> blocks;
  for (size_t i = 0; i < args.size(); ++i) {
    const ShardedArray& a = args[i];
    const SpmdSlot& slot = spmd_.slots[spmd_.parameter_slots[i]];
    const std::string which = name_ + ": argument " + std::to_string(i);
    if (a.mesh().axis_names != spmd_.mesh.axis_names ||
        a.mesh().axis_sizes != spmd_.mesh.axis_sizes ||
        a.devices() != devices_) {
      return InvalidArgument(which + " is on another mesh or other devices "
                             "than the program was compiled for");
    }
    if (a.shape() != slot.global.shape || a.dtype() != slot.global.dtype) {
      return InvalidArgument(
          which + " is " + std::string(dtype_name(a.dtype())) +
          a.shape().to_string() + "; the program takes " +
          std::string(dtype_name(slot.global.dtype)) +
          slot.global.shape.to_string());
    }
    if (a.sharding() != slot.sharding) {
      return InvalidArgument(which + " is laid out as " +
                             a.sharding().ToString(spmd_.mesh) +
                             "; the program was compiled for " +
                             slot.sharding.ToString(spmd_.mesh));
    }
    blocks.push_back(a.blocks());
  }
  BATON_ASSIGN_OR_RETURN(std::vector<std::vector<Array>> outs, Execute(blocks));
  std::vector<ShardedArray> result;
  for (size_t k = 0; k < outs.size(); ++k) {
    const SpmdSlot& slot = spmd_.slots[spmd_.output_slots[k]];
    BATON_ASSIGN_OR_RETURN(
        ShardedArray out,
        ShardedArray::FromBlocks(slot.global.shape, slot.global.dtype,
                                 spmd_.mesh, slot.sharding, devices_,
                                 std::move(outs[k])));
    result.push_back(std::move(out));
  }
  return result;
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

Status SpmdExecutable::Agree() const {
  collectives::ProcessGroup& group = *processes_.group;
  const size_t n = static_cast<size_t>(group.size());
  const uint64_t mine = XXH3_64bits(agreement_.data(), agreement_.size());
  std::vector<uint64_t> all(n);
  BATON_RETURN_IF_ERROR(group.AllGather(&mine, all.data(), sizeof mine));
  if (std::all_of(all.begin(), all.end(), [&](uint64_t h) { return h == mine; })) {
    return OkStatus();
  }
  // They differ: every process gathers every text, and all name the same
  // first difference.
  const uint64_t length = agreement_.size();
  std::vector<uint64_t> lengths(n);
  BATON_RETURN_IF_ERROR(group.AllGather(&length, lengths.data(), sizeof length));
  const uint64_t longest = *std::max_element(lengths.begin(), lengths.end());
  std::vector<char> padded(longest, '\0'), texts(longest * n);
  std::copy(agreement_.begin(), agreement_.end(), padded.begin());
  if (longest > 0) {
    BATON_RETURN_IF_ERROR(group.AllGather(padded.data(), texts.data(), longest));
  }
  auto lines_of = [&](size_t p) {
    std::vector<std::string> lines;
    std::string line;
    for (uint64_t k = 0; k < lengths[p]; ++k) {
      const char c = texts[p * longest + k];
      if (c == '\n') {
        lines.push_back(line);
        line.clear();
      } else {
        line += c;
      }
    }
    return lines;
  };
  const std::vector<std::string> first = lines_of(0);
  for (size_t p = 1; p < n; ++p) {
    const std::vector<std::string> other = lines_of(p);
    for (size_t k = 0; k < std::max(first.size(), other.size()); ++k) {
      const std::string a = k < first.size() ? first[k] : "nothing";
      const std::string b = k < other.size() ? other[k] : "nothing";
      if (a == b) continue;
      return InvalidArgument(
          name_ + ": the processes called different collectives (exchange " +
          std::to_string(k) + ": process 0 " + a + ", process " +
          std::to_string(p) + " " + b +
          "); every process must run the same program -- the same "
          "collectives, with the same shapes, dtypes and ops, in the same "
          "order. Nothing was exchanged or consumed");
    }
  }
  return Internal(name_ + ": the processes' exchanges hash differently but read alike");
}

Result<std::vector<std::vector<Array>>> SpmdExecutable::Execute(
    const std::vector<std::vector<Array>>& args,
    const std::vector<std::vector<Donated*>>& donated) const {
  const size_t n = devices_.size();
  if (args.size() != spmd_.parameter_slots.size()) {
    return InvalidArgument(name_ + ": expected " +
                           std::to_string(spmd_.parameter_slots.size()) +
                           " arguments, got " + std::to_string(args.size()));
  }
  auto donated_at = [&](size_t i) {
    return i < donated.size() && !donated[i].empty();
  };
  for (size_t i = 0; i < args.size(); ++i) {
    if (donated_at(i) != donated_[i]) {
      return InvalidArgument(
          name_ + ": argument " + std::to_string(i) + " was compiled " +
          (donated_[i] ? "donated but is passed without its donations"
                       : "not donated but is passed donated") +
          "; nothing was consumed");
    }
    if (donated_at(i) && donated[i].size() != local_.size()) {
      return InvalidArgument(name_ + ": argument " + std::to_string(i) +
                             " has " + std::to_string(donated[i].size()) +
                             " donations for " + std::to_string(local_.size()) +
                             " devices of this process; nothing was consumed");
    }
  }
  // Per slot, per mesh position (empty for other processes' devices).
  std::vector<std::vector<Array>> slots(spmd_.slots.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const SpmdSlot& slot = spmd_.slots[spmd_.parameter_slots[i]];
    const std::string which = name_ + ": argument " + std::to_string(i);
    if (args[i].size() != local_.size()) {
      return InvalidArgument(which + " has " + std::to_string(args[i].size()) +
                             " blocks for " + std::to_string(local_.size()) +
                             " devices of this process");
    }
    std::vector<Array>& blocks = slots[spmd_.parameter_slots[i]];
    blocks.resize(n);
    for (size_t k = 0; k < local_.size(); ++k) {
      Device* device = devices_[local_[k]];
      const Array& a = args[i][k];
      if (!a.valid() || a.device() != device || a.shape() != slot.block ||
          a.dtype() != slot.global.dtype) {
        return InvalidArgument(
            which + "'s block for " + device->ToString() + " must be " +
            std::string(dtype_name(slot.global.dtype)) + slot.block.to_string() +
            " on that device" +
            (a.valid() ? "; it is " + std::string(dtype_name(a.dtype())) +
                             a.shape().to_string() + " on " +
                             a.device()->ToString()
                       : "; it is missing"));
      }
      if (donated_at(i)) {
        const Donated* g = donated[i][k];
        if (g == nullptr || g->array.impl() != a.impl() ||
            g->taken.buffer == nullptr) {
          return InvalidArgument(
              which + "'s block for " + device->ToString() +
              " is passed donated without its storage (a donation already "
              "spent or given back); nothing was consumed");
        }
        continue;  // adopted below, once every argument has passed
      }
      if (a.IsDeleted()) return a.impl()->DeletedError();
      blocks[local_[k]] = a;
    }
  }
  if (processes_.group != nullptr && !nested_) BATON_RETURN_IF_ERROR(Agree());
  // Every check passed: the donated blocks become this call's own arrays
  // (the donations are spent), read by the stages before the one that
  // reads them last and takes them.
  for (size_t i = 0; i < args.size(); ++i) {
    if (!donated_at(i)) continue;
    std::vector<Array>& blocks = slots[spmd_.parameter_slots[i]];
    for (size_t k = 0; k < local_.size(); ++k) {
      blocks[local_[k]] = AdoptDonated(*donated[i][k]);
    }
  }
  for (size_t s = 0; s < spmd_.stages.size(); ++s) {
    const SpmdStage& st = spmd_.stages[s];
    const auto& comm = communication_[s];
    // Other processes' blocks, [local index][mesh position].
    std::vector<std::vector<Array>> remote;
    if (st.kind != SpmdStage::Kind::kCompute && crosses_[s]) {
      BATON_ASSIGN_OR_RETURN(remote, Exchange(s, slots[st.source]));
    }
    switch (st.kind) {
      case SpmdStage::Kind::kLoop:
      case SpmdStage::Kind::kCase: {
        // The operands this stage reads last are handed over, so each
        // carry's first block is freed once the first iteration replaced it.
        std::vector<std::vector<Array>> operands;
        for (int in : st.inputs) {
          std::vector<Array> mine;
          for (int d : local_) mine.push_back(slots[in][d]);
          operands.push_back(std::move(mine));
        }
        for (int slot : release_after_[s]) slots[slot].clear();
        BATON_ASSIGN_OR_RETURN(std::vector<std::vector<Array>> results,
                               st.kind == SpmdStage::Kind::kLoop
                                   ? RunLoop(s, std::move(operands))
                                   : RunCase(s, operands));
        for (size_t j = 0; j < results.size(); ++j) {
          std::vector<Array>& to = slots[st.outputs[j]];
          to.resize(n);
          for (size_t k = 0; k < local_.size(); ++k) to[local_[k]] = std::move(results[j][k]);
        }
        break;
      }
      case SpmdStage::Kind::kCompute: {
        for (int out : st.outputs) slots[out].resize(n);
        for (int d : local_) {
          std::vector<CallArgument> call(st.inputs.size());
          for (size_t k = 0; k < st.inputs.size(); ++k) {
            call[k].array = slots[st.inputs[k]][d];
            if (k < donate_inputs_[s].size() && donate_inputs_[s][k]) {
              // Only this call holds the adopted block: the take waits for
              // the earlier stages' reads (copies to other devices too).
              BATON_ASSIGN_OR_RETURN(
                  call[k].taken,
                  call[k].array.impl()->TakeExclusive(
                      {ConsumedReason::Kind::kDonated, name_}));
              call[k].donated = true;
            }
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
        for (int d : local_) {
          const Communication& c = *comm[d];
          if (crosses_[s]) {
            // Across processes: each device combines its whole group, in
            // group order (so every copy is the same).
            std::vector<Array> parts;
            for (int e : c.members) {
              BATON_ASSIGN_OR_RETURN(
                  Array part, BlockOn(d, e, src, remote, c.combine != nullptr));
              parts.push_back(std::move(part));
            }
            if (!c.combine) {
              result[d] = std::move(parts[0]);
            } else {
              BATON_ASSIGN_OR_RETURN(result[d],
                                     RunOne(*c.combine, std::move(parts)));
            }
            continue;
          }
          if (c.leader != d) continue;
          // This device combines the group's blocks, in group order, in
          // one program -- reading the others' in place where it can --
          // then each member gets a copy.
          std::vector<Array> parts;
          for (int e : c.members) {
            BATON_ASSIGN_OR_RETURN(Array part,
                                   BlockOn(d, e, src, remote, /*read_by_program=*/true));
            parts.push_back(std::move(part));
          }
          Array acc = src[d];
          if (c.combine) {
            BATON_ASSIGN_OR_RETURN(acc, RunOne(*c.combine, std::move(parts)));
          }
          for (int e : c.members) {
            if (e == d) continue;
            if (comm[e]->reads_leaders_result) {
              result[e] = acc;
              continue;
            }
            BATON_ASSIGN_OR_RETURN(
                result[e], CopyArray(acc, devices_[e], acc.memory_kind()));
          }
          result[d] = std::move(acc);
        }
        slots[st.result] = std::move(result);
        break;
      }
      case SpmdStage::Kind::kSlice: {
        std::vector<Array> result(n);
        for (int d : local_) {
          const Array& have = slots[st.source][d];
          if (comm[d]->slice) {
            BATON_ASSIGN_OR_RETURN(result[d], RunOne(*comm[d]->slice, {have}));
          } else {
            result[d] = have;
          }
        }
        slots[st.result] = std::move(result);
        break;
      }
      case SpmdStage::Kind::kAllGather:
      case SpmdStage::Kind::kCollective: {
        // Each device's result from the source blocks it reads (its own, a
        // copy from another device, or another process's through `remote`).
        std::vector<Array> result(n);
        for (int d : local_) {
          const Communication& c = *comm[d];
          std::vector<Array> parts;
          for (int e : c.sources) {
            BATON_ASSIGN_OR_RETURN(Array part,
                                   BlockOn(d, e, slots[st.source], remote,
                                           c.assemble != nullptr));
            parts.push_back(std::move(part));
          }
          if (c.assemble) {
            BATON_ASSIGN_OR_RETURN(result[d],
                                   RunOne(*c.assemble, std::move(parts)));
          } else {
            result[d] = std::move(parts[0]);
          }
        }
        slots[st.result] = std::move(result);
        break;
      }
    }
    for (int slot : release_after_[s]) slots[slot].clear();
  }
  std::vector<std::vector<Array>> outputs;
  for (int slot : spmd_.output_slots) {
    std::vector<Array> mine;
    for (int d : local_) mine.push_back(slots[slot][d]);
    outputs.push_back(std::move(mine));
  }
  return outputs;
}

}  // namespace baton
