// SpmdExecutable: a program partitioned over a mesh of this process's
// devices (compiler/spmd_partitioner.h) and compiled for each of them -- how
// jit runs a function of sharded arguments that is not elementwise (sums,
// dots, MLP layers; DESIGN 5.6, issue 37).
//
// Each compute stage is compiled once per device (CompileExecutable, the
// device's own backend). The communication between stages moves blocks
// between devices with asynchronous device-to-device copies (CopyArray) and
// combines them with small programs compiled for the receiving device --
// which read another device's block in place, with no copy first, where it
// can (one process's CPU devices, all in host memory: ReadableInPlace):
//  - all-reduce: each group's blocks are combined, in group order (the
//    stage's axes major first; mesh order for jit's, whose axes are
//    sorted), by one member (which one rotates from stage to stage,
//    spreading a backward pass's all-reduces over the devices) and the
//    result is copied to the other members, so every device of a group
//    holds the same bytes -- or, where only compute stages read it and the
//    members can read the combining one's block in place, they read it
//    there (one block in all, held by that member);
//  - slice: each device cuts its new block out of the block it has (no
//    copy between devices);
//  - all-gather: each device assembles the whole array from one block per
//    position (its own where it holds it, else the first device's in mesh
//    order that does) and keeps its new block of it.
// Nothing waits on the host: every step is enqueued behind the events of
// what it reads, and the outputs are defined by the events of their work.
// Each slot's arrays are dropped after the last stage that reads them, so a
// block's memory is released as soon as the stages are done with it (R1).
//
// Meshes spanning processes (SpmdProcesses): each process runs the stages
// of its own devices. A communication stage whose blocks are on other
// processes' devices exchanges every device's block of it (a BlockExchange,
// backend/block_exchange.h: NCCL between GPUs, else host copies through the
// process group's all-gather; every process taking part in the same order:
// SPMD); each device then combines or assembles what it needs in mesh
// order, so all copies of a replicated block are equal.
//
// Memory per device: a value split over N devices occupies 1/N of it on
// each (plus, during an all-gather, the whole array on the receiving
// device; during an all-reduce, a copy of every member's block on the
// member that combines them in one program, where it cannot read them in
// place).
//
// Donation: a donated parameter's blocks go to the compute stage reading it
// last, compiled with them donated (Compile's `donated`).
//
// A loop stage (a while loop whose body or condition needs communication,
// compiler::SpmdLoop) runs its condition and body as SpmdExecutables of
// their own on the carries' blocks: each iteration runs the condition,
// reads its predicate on the host (replicated, so every process goes on
// alike), and runs the body with the carries donated, so a carry updated
// in part (a scan's stacked outputs, one row per iteration) is written in
// place. A carry block the loop does not own -- the stage's operands in the
// first iteration, an invariant passed through -- is copied first, once.
//
// A case stage (a conditional whose branches need communication,
// compiler::SpmdCase) reads its index on the host (replicated, so every
// process takes the same branch) and runs that branch, compiled as an
// SpmdExecutable of its own, on the operands' blocks.
//
// shard_map: CompilePartitioned runs an SpmdProgram made elsewhere -- a
// shard_map body (compiler::PartitionShardMapBody), whose slots hold each
// device's own values and whose all-reduces are its collectives.
//
// Ownership: shared (std::shared_ptr); holds the executables of every stage
// and device. The devices must outlive it.
// Thread-safety: Execute may be called from any thread, concurrently.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "baton/backend/block_exchange.h"
#include "baton/backend/executable.h"
#include "baton/collectives/process_group.h"
#include "baton/compiler/ir.h"
#include "baton/compiler/spmd_partitioner.h"
#include "baton/jit/donation.h"
#include "baton/jit/sharded_array.h"
#include "baton/runtime/array.h"
#include "baton/runtime/device.h"

namespace baton {

// Where the mesh's devices are when they span processes.
struct SpmdProcesses {
  int process_index = 0;        // this process's
  std::vector<int> process_of;  // per mesh position
  // Not owned; must outlive the executable. Its collectives are called from
  // Execute (one caller at a time, as ProcessGroup requires).
  collectives::ProcessGroup* group = nullptr;
  // How blocks move between processes' devices (backend/block_exchange.h):
  // for each exchange, this one where it Serves this process's devices and
  // the block's memory kind (NCCL between GPUs), else the host-staged
  // exchange over `group`. Null: always host-staged. Not owned; must
  // outlive the executable.
  BlockExchange* exchange = nullptr;
};

class SpmdExecutable {
 public:
  // Partitions `program` for `mesh` with its parameters laid out as
  // `parameters` and compiles it for `devices` (one per mesh position, in
  // row-major mesh order; null for another process's device, then
  // `processes` says whose). InvalidArgument for a device count that is
  // not the mesh's size, a device that appears twice, processes holding
  // different numbers of the mesh's devices, or a bad sharding (named by
  // parameter); errors of the backends' compilers as they are.
  // `outputs` (empty, or one per output): the layouts the caller wants
  // (jit's out_shardings; nullopt: propagation's choice).
  // `donated` (empty, or one per parameter): parameters whose blocks the
  // call consumes. Each device's block is handed to the compute stage that
  // reads the parameter last, compiled with it donated, so an output of the
  // same size is written over it (a parameter update in place, as on one
  // device); read last by communication, or not at all, it is freed after
  // that stage.
  static Result<std::shared_ptr<SpmdExecutable>> Compile(
      const compiler::Program& program, compiler::DeviceMesh mesh,
      const std::vector<compiler::Sharding>& parameters,
      std::vector<Device*> devices, std::string name,
      const SpmdProcesses* processes = nullptr,
      const std::vector<std::optional<compiler::Sharding>>& outputs = {},
      const std::vector<bool>& donated = {});

  // An SpmdProgram made elsewhere (compiler::PartitionShardMapBody: a
  // shard_map body) compiled for `devices` and `processes` as Compile's,
  // `donated` as Compile's. InvalidArgument as Compile's.
  static Result<std::shared_ptr<SpmdExecutable>> CompilePartitioned(
      compiler::SpmdProgram partitioned, std::vector<Device*> devices,
      std::string name, const SpmdProcesses* processes = nullptr,
      const std::vector<bool>& donated = {});

  // args[i][k]: parameter i's block on this process's k-th device of the
  // mesh (local_positions()[k]; BlockShape of its sharding; devices holding
  // the same block each pass their copy). For a donated parameter,
  // donated[i][k] is that block's donation (jit/donation.h; not owned,
  // spent by the call) and args[i][k] its consumed array. Returns, per
  // output, its block on each of this process's devices. InvalidArgument
  // naming the argument and device for a wrong count, shape, dtype or
  // device, or donations that do not match the compiled ones; nothing is
  // consumed then. Across processes, every call first checks that all
  // processes run the same exchanges (agreement(): one all-gather of a hash
  // of it); InvalidArgument naming the first exchange that differs, on
  // every process, with nothing exchanged or consumed, when they do not (a
  // program traced differently on one process: psum here, pmax there). Once every check has passed the donations are spent: a
  // later failure (a backend's error while running) loses their values.
  Result<std::vector<std::vector<Array>>> Execute(
      const std::vector<std::vector<Array>>& args,
      const std::vector<std::vector<Donated*>>& donated = {}) const;

  // The same with sharded arrays (sharded_array.h): each argument on this
  // executable's mesh and devices, laid out as its parameter was compiled
  // for; the outputs as output_shardings() lays them out. InvalidArgument
  // naming the argument for another mesh, devices, layout, shape or dtype.
  Result<std::vector<ShardedArray>> Run(
      const std::vector<ShardedArray>& args) const;

  const compiler::SpmdProgram& partitioned() const { return spmd_; }
  // Per mesh position its device (null: another process's).
  const std::vector<Device*>& devices() const { return devices_; }
  // The mesh positions of this process's devices, in mesh order.
  const std::vector<int>& local_positions() const { return local_; }
  // How each output is laid out over the mesh.
  std::vector<compiler::Sharding> output_shardings() const;
  // The donated parameters no output can reuse on some device: read last
  // by communication (or by nothing), or no output of the stage reading
  // them last has their block's size, dtype and memory kind. Their blocks
  // are freed after the call (jit warns, or refuses in "error" mode).
  const std::vector<int>& unusable_donations() const { return unusable_; }
  // What one call holds on this process's k-th device of the mesh (its
  // blocks; compiler::MemoryAnalysis's fields): arguments and outputs are
  // its blocks of them; aliases the outputs written over donated blocks;
  // constants the stages' own; peak the most held at once, stage by stage
  // -- the arguments, the blocks kept between stages, and the fullest
  // stage's outputs, temporaries and blocks received from other devices;
  // temporaries what the peak holds beyond arguments + outputs - aliases +
  // constants. InvalidArgument for k out of range.
  Result<compiler::MemoryAnalysis> memory_analysis(int k) const;
  // Bytes of one device's blocks of the parameters (what 1/N means).
  int64_t parameter_bytes_per_device() const;
  const std::string& name() const { return name_; }
  // Across processes: one line per stage that exchanges blocks with other
  // processes, what it exchanges ("all_reduce(sum) over 'data' of
  // float32(2, 3)"); empty within one process.
  const std::string& agreement() const { return agreement_; }
  // The partitioned program (spmd_partitioner.h's text) and, per compute
  // stage, device 0's compiled program.
  std::string as_text() const;

 private:
  SpmdExecutable() = default;
  struct Communication;  // per communication stage, per device

  // The executable for `devices` (checked against the mesh's `size` and
  // `processes`), before its program is set.
  static Result<std::shared_ptr<SpmdExecutable>> Start(
      std::vector<Device*> devices, std::string name,
      const SpmdProcesses* processes, int64_t size);
  // Compiles every stage of spmd_ for this process's devices, `donated`
  // (empty, or one per parameter) handed to the stages reading them last.
  Status Finish(const std::vector<bool>& donated);
  Status CompileCommunication(size_t stage);
  // A loop or case stage's regions, compiled as executables of their own.
  Status CompileRegions(size_t stage);
  // Runs loop stage `stage` on its operands' blocks ([operand][local
  // index]) and returns the final carries' blocks likewise.
  Result<std::vector<std::vector<Array>>> RunLoop(
      size_t stage, std::vector<std::vector<Array>> operands) const;
  // Runs case stage `stage`'s branch chosen by its index on the operands'
  // blocks (the index's first) and returns the results' blocks likewise.
  Result<std::vector<std::vector<Array>>> RunCase(
      size_t stage, const std::vector<std::vector<Array>>& operands) const;
  // Whether stage `s` reads a block of another process's device.
  bool Crosses(size_t s) const;
  // Other processes' blocks of `by_position` (this process's blocks by
  // mesh position) that stage `s`'s devices read, through the exchange
  // that serves them: [local index][mesh position], valid where wanted.
  Result<std::vector<std::vector<Array>>> Exchange(
      size_t s, const std::vector<Array>& by_position) const;
  // The block of mesh position `e` for device `d`: `by_position[e]` itself
  // (d's own, or another local device's where a program on d reads it --
  // `read_by_program` -- in place: ReadableInPlace), a copy of it on d, or
  // what the exchange brought (`remote`).
  Result<Array> BlockOn(int d, int e, const std::vector<Array>& by_position,
                        const std::vector<std::vector<Array>>& remote,
                        bool read_by_program) const;
  // Whether only compute stages read `slot` (it is no output): each device
  // reads its block with a program, which may read another local device's
  // in place.
  bool ReadOnlyByPrograms(int slot) const;
  // How many of the blocks of mesh positions `from` BlockOn gives device
  // `d` as copies it holds (another process's, or a local one's it cannot
  // read in place): what memory_analysis counts as received.
  int64_t CopiedOnto(int d, const std::vector<int>& from, MemoryKind kind,
                     bool read_by_program) const;

  compiler::SpmdProgram spmd_;
  std::vector<Device*> devices_;  // not owned; null for other processes'
  std::vector<int> local_;        // this process's mesh positions
  std::vector<int> local_index_;  // per mesh position: its index in local_, or -1
  SpmdProcesses processes_;       // empty for one process
  // Over processes_.group (null without one): exchanges that
  // processes_.exchange does not serve.
  std::unique_ptr<BlockExchange> host_exchange_;
  std::string name_;
  // Per stage: per device, its compiled program (compute stages), or the
  // combine / slice / assemble programs (communication stages).
  std::vector<std::vector<std::shared_ptr<Executable>>> compute_;
  std::vector<std::vector<std::shared_ptr<Communication>>> communication_;
  // Per stage: a loop stage's condition and body, a case stage's branches
  // (empty for other stages).
  std::vector<std::vector<std::shared_ptr<SpmdExecutable>>> regions_;
  // A loop or case stage's region: the enclosing executable checks the
  // processes' agreement (which includes this one's) once per call.
  bool nested_ = false;
  std::vector<bool> donated_;  // per parameter
  // Per slot: whether it is a donated parameter's (memory_analysis releases
  // its block after the stage reading it last; the caller keeps the others).
  std::vector<bool> donated_slot_;
  std::vector<int> unusable_;  // unusable_donations()
  // Per compute stage, per input: whether its block is donated to the
  // stage (the input is a donated parameter this stage reads last).
  std::vector<std::vector<bool>> donate_inputs_;
  // Per stage: whether it exchanges blocks with other processes (Crosses).
  std::vector<bool> crosses_;
  std::string agreement_;  // agreement()
  // OkStatus when every process's agreement() is this one's (Execute).
  Status Agree() const;
  // Per stage: the slots no later stage (and no output) reads.
  std::vector<std::vector<int>> release_after_;
};

}  // namespace baton
