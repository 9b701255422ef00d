#include "baton/backend/cuda/gpu_executable.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <mutex>
#include <thread>

#include "baton/backend/cuda/codegen/host_gemm.h"
#include "baton/backend/cuda/codegen/host_step.h"
#include "baton/backend/cuda/cuda_graph.h"
#include "baton/backend/cuda/cuda_program.h"
#include "baton/backend/cuda/cuda_stream.h"
#include "baton/compiler/fused_tiles.h"
#include "baton/compiler/program_printer.h"
#include "baton/runtime/device.h"
#include "baton/runtime/trace_recorder.h"

namespace baton::cuda {

using compiler::OutputSource;
using compiler::ValueId;

namespace {

// A kernel covers a fused chain element by element: no tile scratch, so
// none is counted as a temporary (fused_tiles.h).
constexpr compiler::FusionTiling kKernelTiling = {
    1, std::numeric_limits<int64_t>::max() / 4};

// kCuda: kernels and GEMMs run on the device, which cannot address
// ordinary (pageable) host memory; copies can (cudaMemcpyAsync), so only
// the buffers a kernel or GEMM binds are checked.
Status CheckDeviceCanAddress(const compiler::Program& p,
                             const codegen::EmittedProgram& emitted,
                             const std::string& name) {
  for (const codegen::Action& a : emitted.actions) {
    std::vector<codegen::BufferRef> refs;
    if (a.kind == codegen::Action::Kind::kKernel) refs = a.args;
    if (a.kind == codegen::Action::Kind::kGemm) refs = {a.a, a.b, a.c};
    for (const codegen::BufferRef& ref : refs) {
      if (ref.kind != codegen::BufferRef::Kind::kSlot ||
          ref.index >= p.num_values()) {
        continue;
      }
      const auto v = static_cast<ValueId>(ref.index);
      if (p.type(v).memory_kind != MemoryKind::kUnpinnedHost) continue;
      return Unimplemented(
          name + ": %" + std::to_string(v) + " (" + p.type(v).ToString() +
          ") is in unpinned_host memory, which a CUDA kernel cannot read or "
          "write; compute on device or pinned_host memory and move the "
          "value to unpinned_host outside the computation");
    }
  }
  return OkStatus();
}

// Device addresses of one call mapped to the host addresses the simulated
// device gives them, range by range (each slot's storage, the arena): a
// recorded node's address resolves only when it lies in this call's
// storage, so a node left with a stale address fails instead of reading
// an earlier call's memory.
class AddressMap {
 public:
  void Add(const void* device, int64_t bytes, void* host) {
    if (device == nullptr || host == nullptr) return;
    ranges_.push_back({static_cast<const char*>(device), bytes,
                       static_cast<char*>(host)});
    sorted_ = false;
  }
  // Binary search over the ranges sorted by start; ranges may nest (a slot
  // inside the arena), so from the last range starting at or below `device`
  // it steps back while an earlier range can still reach that far.
  Result<void*> Map(const void* device) {
    if (!sorted_) Sort();
    const char* p = static_cast<const char*>(device);
    size_t i = static_cast<size_t>(
        std::upper_bound(ranges_.begin(), ranges_.end(), p,
                         [](const char* q, const Range& r) {
                           return q < r.device;
                         }) -
        ranges_.begin());
    while (i-- > 0) {
      const Range& r = ranges_[i];
      if (p < r.device + r.bytes || p == r.device) {
        return static_cast<void*>(r.host + (p - r.device));
      }
      if (reach_[i] <= p) break;  // no earlier range ends past p
    }
    return Internal("a launch node binds a device address outside this "
                    "call's storage (a stale address left in a replayed "
                    "launch plan)");
  }

 private:
  struct Range {
    const char* device;
    int64_t bytes;
    char* host;
  };
  void Sort() {
    std::sort(ranges_.begin(), ranges_.end(),
              [](const Range& a, const Range& b) { return a.device < b.device; });
    reach_.resize(ranges_.size());
    const char* reach = nullptr;
    for (size_t i = 0; i < ranges_.size(); ++i) {
      const char* end = ranges_[i].device + std::max<int64_t>(ranges_[i].bytes, 1);
      reach = std::max(reach == nullptr ? end : reach, end);
      reach_[i] = reach;
    }
    sorted_ = true;
  }
  std::vector<Range> ranges_;
  std::vector<const char*> reach_;  // furthest end among ranges_[0..i]
  bool sorted_ = true;
};

}  // namespace

struct GpuExecutable::SegmentState {
  std::mutex mu;
  LaunchPlan plan;                   // guarded by mu
  LaunchPlan::Decision last;         // guarded by mu
  std::unique_ptr<CudaGraph> graph;  // guarded by mu; kCuda only
};

GpuExecutable::~GpuExecutable() = default;

void GpuExecutable::PlanSegments() {
  const auto& actions = emitted_.actions;
  const int n = static_cast<int>(actions.size());
  for (int i = 0; i < n;) {
    if (actions[static_cast<size_t>(i)].kind ==
        codegen::Action::Kind::kHostStep) {
      run_order_.push_back(~i);
      ++i;
      continue;
    }
    Segment seg;
    seg.begin = i;
    while (i < n && actions[static_cast<size_t>(i)].kind !=
                        codegen::Action::Kind::kHostStep) {
      ++i;
    }
    seg.end = i;
    run_order_.push_back(static_cast<int>(segments_.size()));
    segments_.push_back(seg);
  }
  bool has_output_copy = false;
  for (const OutputSource& src : assignment_.outputs) {
    has_output_copy |= src.kind == OutputSource::Kind::kCopy;
  }
  if (has_output_copy) {
    if (segments_.empty() || run_order_.back() < 0) {
      run_order_.push_back(static_cast<int>(segments_.size()));
      segments_.push_back(Segment{n, n, false});
    }
    segments_.back().output_copies = true;
  }
  for (size_t k = 0; k < segments_.size(); ++k) {
    segment_state_.push_back(std::make_unique<SegmentState>());
  }
}

std::vector<LaunchNode> GpuExecutable::ResolveSegment(
    const Segment& seg, const std::vector<void*>& value_data,
    const std::vector<void*>& scratch) const {
  // As codegen::RunOnHost resolves a BufferRef.
  auto at = [&](const codegen::BufferRef& ref, int step) -> void* {
    if (ref.kind == codegen::BufferRef::Kind::kSlot) {
      return value_data[static_cast<size_t>(ref.index)];
    }
    return static_cast<char*>(scratch[static_cast<size_t>(step)]) + ref.index;
  };
  std::vector<LaunchNode> nodes;
  nodes.reserve(static_cast<size_t>(seg.end - seg.begin));
  for (int i = seg.begin; i < seg.end; ++i) {
    const codegen::Action& a = emitted_.actions[static_cast<size_t>(i)];
    LaunchNode node;
    node.command = i;
    switch (a.kind) {
      case codegen::Action::Kind::kKernel:
        if (a.threads <= 0) continue;
        node.kind = LaunchNode::Kind::kKernel;
        for (const codegen::BufferRef& ref : a.args) {
          node.pointers.push_back(at(ref, a.step));
        }
        break;
      case codegen::Action::Kind::kCopy: {
        void* dst = at(a.dst, a.step);
        void* src = at(a.src, a.step);
        if (a.bytes <= 0 || dst == src) continue;
        node.kind = LaunchNode::Kind::kCopy;
        node.pointers = {dst, src};
        break;
      }
      case codegen::Action::Kind::kGemm:
        node.kind = LaunchNode::Kind::kGemm;
        node.pointers = {at(a.a, a.step), at(a.b, a.step), at(a.c, a.step)};
        break;
      case codegen::Action::Kind::kHostStep:
        continue;  // never inside a segment
    }
    nodes.push_back(std::move(node));
  }
  if (seg.output_copies) {
    const compiler::Program& p = *program_;
    for (size_t k = 0; k < assignment_.outputs.size(); ++k) {
      const OutputSource& src = assignment_.outputs[k];
      if (src.kind != OutputSource::Kind::kCopy) continue;
      void* dst = value_data[p.num_values() + src.index];
      void* from = value_data[src.value];
      if (p.type(src.value).byte_size() <= 0 || dst == from) continue;
      LaunchNode node;
      node.kind = LaunchNode::Kind::kCopy;
      node.command = static_cast<int>(emitted_.actions.size() + k);
      node.pointers = {dst, from};
      nodes.push_back(std::move(node));
    }
  }
  return nodes;
}

int64_t GpuExecutable::CopyBytes(int command) const {
  const auto n = static_cast<int>(emitted_.actions.size());
  if (command < n) return emitted_.actions[static_cast<size_t>(command)].bytes;
  const OutputSource& src =
      assignment_.outputs[static_cast<size_t>(command - n)];
  return program_->type(src.value).byte_size();
}

LaunchPlan::Counters GpuExecutable::launch_plan_counters() const {
  LaunchPlan::Counters sum;
  for (const auto& state : segment_state_) {
    std::lock_guard<std::mutex> lock(state->mu);
    sum += state->plan.counters();
  }
  return sum;
}

std::vector<LaunchPlan::Decision> GpuExecutable::last_launch_decisions()
    const {
  std::vector<LaunchPlan::Decision> decisions;
  for (const auto& state : segment_state_) {
    std::lock_guard<std::mutex> lock(state->mu);
    decisions.push_back(state->last);
  }
  return decisions;
}

Result<std::shared_ptr<GpuExecutable>> GpuExecutable::Compile(
    std::shared_ptr<const compiler::Program> program, std::vector<bool> donated,
    Device* device, std::string name, std::vector<bool> fresh_outputs,
    Target target) {
  std::shared_ptr<GpuExecutable> exe(new GpuExecutable());
  exe->target_ = target;
  if (target == Target::kCuda) {
    // First: a device that cannot run it fails before anything is emitted.
    BATON_ASSIGN_OR_RETURN(exe->cuda_, CudaProgram::Open(device, name));
  }
  exe->donated_ = std::move(donated);
  BATON_ASSIGN_OR_RETURN(exe->program_,
                         VerifyAndSchedule(*program, exe->donated_,
                                           fresh_outputs, name));
  exe->device_ = device;
  exe->name_ = std::move(name);
  exe->plan_ = compiler::PlanSteps(*exe->program_);
  const compiler::Program& p = *exe->program_;

  codegen::EmitOptions options;
  options.library_gemm = true;   // the BLAS, as cuBLAS on a GPU
  options.host_fallback = true;  // sort, linalg, regions: interpreted
  BATON_ASSIGN_OR_RETURN(exe->emitted_,
                         codegen::EmitProgram(p, exe->plan_, options,
                                              exe->name_));
  // Control-flow steps: regions compiled as GpuExecutables of their own,
  // their scratch part of this arena.
  exe->step_scratch_bytes_ = exe->emitted_.step_scratch_bytes;
  exe->regions_.resize(exe->plan_.steps.size());
  for (size_t s = 0; s < exe->plan_.steps.size(); ++s) {
    if (exe->plan_.steps[s].kind != compiler::Step::Kind::kRegion) continue;
    RegionCompiler compile =
        [device, target](std::shared_ptr<const compiler::Program> region,
                         std::vector<bool> donated, std::string name,
                         std::vector<bool> slice_outputs)
        -> Result<std::shared_ptr<const RegionExecutable>> {
      BATON_ASSIGN_OR_RETURN(
          auto exe, GpuExecutable::Compile(std::move(region),
                                           std::move(donated), device,
                                           std::move(name),
                                           std::move(slice_outputs), target));
      return std::shared_ptr<const RegionExecutable>(std::move(exe));
    };
    BATON_ASSIGN_OR_RETURN(
        exe->regions_[s],
        RegionStep::Compile(p, exe->plan_.steps[s], compile, exe->name_));
    exe->step_scratch_bytes_[s] = exe->regions_[s]->scratch_bytes();
  }
  for (const codegen::Action& a : exe->emitted_.actions) {
    if (a.kind == codegen::Action::Kind::kHostStep && !exe->regions_[a.step]) {
      ++exe->host_steps_;
    }
  }
  if (target == Target::kCuda) {
    BATON_RETURN_IF_ERROR(CheckDeviceCanAddress(p, exe->emitted_, exe->name_));
    BATON_RETURN_IF_ERROR(exe->cuda_->Load(exe->emitted_));
  } else if (!exe->emitted_.kernel_names.empty()) {
    BATON_ASSIGN_OR_RETURN(
        exe->host_kernels_,
        codegen::HostKernelLibrary::Compile(
            exe->emitted_.source, exe->name_,
            codegen::HostKernelLibrary::Optimization::kFastRun));
  }
  exe->assignment_ = compiler::AssignBuffers(
      p, exe->plan_, exe->donated_, /*num_threads=*/1, kKernelTiling,
      exe->step_scratch_bytes_, fresh_outputs);
  exe->in_place_misses_ = exe->assignment_.in_place_misses;
  for (const auto& r : exe->regions_) {
    if (r) {
      exe->in_place_misses_.insert(exe->in_place_misses_.end(),
                                   r->in_place_misses().begin(),
                                   r->in_place_misses().end());
    }
  }
  exe->output_labels_ = OutputLabels(exe->assignment_);
  exe->temp_label_ = "temporaries of " + exe->name_;
  BATON_ASSIGN_OR_RETURN(exe->constants_, DeviceConstants(p, device));
  exe->PlanSegments();
  // Enqueued by the caller only when no step makes the launch wait for
  // the device (class comment).
  exe->dispatch_directly_ = exe->host_steps_ == 0 &&
                            std::none_of(exe->regions_.begin(),
                                         exe->regions_.end(),
                                         [](const auto& r) { return !!r; });
  exe->slot_binder_ = SlotBinder(p, exe->assignment_);
  exe->layout_ = FrameLayout{exe->program_.get(),     &exe->assignment_,
                             &exe->constants_,         &exe->output_labels_,
                             &exe->temp_label_,        &exe->name_,
                             "baton::cuda::GpuExecutable::Execute",
                             &exe->slot_binder_};
  return exe;
}

std::string GpuExecutable::as_text() const {
  std::string text = "// " + name_ + "\n" + compiler::ProgramToText(*program_);
  text += "// memory: " + assignment_.analysis.ToString() + "\n";
  text += "// commands: " + std::to_string(emitted_.actions.size()) + " (" +
          std::to_string(emitted_.kernel_names.size()) + " kernels, " +
          std::to_string(host_steps_) + " steps on the host)\n";
  for (const codegen::Action& a : emitted_.actions) {
    if (a.kind != codegen::Action::Kind::kHostStep || regions_[a.step]) {
      continue;
    }
    text += "//   step " + std::to_string(a.step) + " on the host: " +
            a.host_reason + "\n";
  }
  for (const auto& r : regions_) {
    if (r) text += r->RegionsText();
  }
  return text;
}

Status GpuExecutable::RunEmulated(
    const std::vector<void*>& value_data, void* device_arena,
    const DeviceBackend::HostAddressOf& host_address) const {
  const compiler::Program& p = *program_;
  const auto& obufs = assignment_.output_buffers;
  // Device addresses -> host addresses, slot by slot, and the arena whole;
  // `map` keeps each range, for the nodes of replayed launch plans.
  std::vector<void*> host(value_data.size(), nullptr);
  AddressMap map;
  for (size_t slot = 0; slot < value_data.size(); ++slot) {
    if (value_data[slot] == nullptr) continue;
    const int64_t bytes =
        slot < static_cast<size_t>(p.num_values())
            ? p.type(static_cast<ValueId>(slot)).byte_size()
            : obufs[slot - p.num_values()].type.byte_size();
    BATON_ASSIGN_OR_RETURN(host[slot],
                           host_address(value_data[slot],
                                        static_cast<size_t>(bytes)));
    map.Add(value_data[slot], bytes, host[slot]);
  }
  const int64_t arena_bytes =
      assignment_.temp_arena_bytes[static_cast<int>(MemoryKind::kDevice)];
  void* host_arena = nullptr;
  if (device_arena != nullptr && arena_bytes > 0) {
    BATON_ASSIGN_OR_RETURN(host_arena,
                           host_address(device_arena,
                                        static_cast<size_t>(arena_bytes)));
  }
  // The top-level run: host steps between segments, each segment as its
  // launch plan decides, the recorded nodes run over this call's storage.
  map.Add(device_arena, arena_bytes, host_arena);
  const std::vector<void*> device_scratch =
      StepScratch(static_cast<char*>(device_arena));
  const std::vector<void*> host_scratch =
      StepScratch(static_cast<char*>(host_arena));
  auto run_node = [&](const LaunchNode& node) -> Status {
    std::vector<void*> at(node.pointers.size());
    for (size_t i = 0; i < at.size(); ++i) {
      BATON_ASSIGN_OR_RETURN(at[i], map.Map(node.pointers[i]));
    }
    switch (node.kind) {
      case LaunchNode::Kind::kKernel: {
        const codegen::Action& a =
            emitted_.actions[static_cast<size_t>(node.command)];
        if (host_kernels_ == nullptr) {
          return Internal(name_ + ": a kernel launch without kernels");
        }
        BATON_ASSIGN_OR_RETURN(
            codegen::HostKernel fn,
            host_kernels_->Find(
                emitted_.kernel_names[static_cast<size_t>(a.kernel)]));
        codegen::KernelArgs args{};
        std::copy(at.begin(), at.end(), args.p);
        fn(a.threads, &args);
        return OkStatus();
      }
      case LaunchNode::Kind::kCopy:
        std::memmove(at[0], at[1], static_cast<size_t>(CopyBytes(node.command)));
        return OkStatus();
      case LaunchNode::Kind::kGemm:
        return codegen::RunGemmOnHost(
            emitted_.actions[static_cast<size_t>(node.command)], at[0], at[1],
            at[2]);
    }
    return OkStatus();
  };
  for (int item : run_order_) {
    if (item < 0) {
      const int step = emitted_.actions[static_cast<size_t>(~item)].step;
      if (const RegionStep* region = regions_[step].get()) {
        BATON_RETURN_IF_ERROR(
            region->Run(host, host_scratch[step], &host_address));
      } else {
        BATON_RETURN_IF_ERROR(codegen::RunStepOnHost(p, plan_, step, host));
      }
      continue;
    }
    const std::vector<LaunchNode> nodes = ResolveSegment(
        segments_[static_cast<size_t>(item)], value_data, device_scratch);
    SegmentState& state = *segment_state_[static_cast<size_t>(item)];
    std::lock_guard<std::mutex> lock(state.mu);
    state.last = state.plan.Next(nodes);
    // The "graph" of the simulated device is the recording: what a replay
    // or an update runs is what the plan holds, not this call's nodes.
    const std::vector<LaunchNode>& run =
        state.last.mode == LaunchPlan::Mode::kDirect ? nodes
                                                     : state.plan.recorded();
    for (const LaunchNode& node : run) BATON_RETURN_IF_ERROR(run_node(node));
  }
  return OkStatus();
}

std::vector<void*> GpuExecutable::StepScratch(char* arena) const {
  std::vector<void*> scratch(step_scratch_bytes_.size(), nullptr);
  for (size_t s = 0; s < scratch.size(); ++s) {
    const int64_t offset = assignment_.step_scratch_offset[s];
    if (step_scratch_bytes_[s] == 0 || offset < 0) continue;
    scratch[s] = arena + offset;
  }
  return scratch;
}

Status GpuExecutable::RunOnHostStorage(
    const std::vector<void*>& host, char* host_arena,
    const DeviceBackend::HostAddressOf& host_address) const {
  const compiler::Program& p = *program_;
  const std::vector<void*> scratch = StepScratch(host_arena);
  BATON_RETURN_IF_ERROR(codegen::RunOnHost(
      host_kernels_.get(), emitted_, host, scratch, [&](int step) {
        if (const RegionStep* region = regions_[step].get()) {
          return region->Run(host, scratch[step], &host_address);
        }
        return codegen::RunStepOnHost(p, plan_, step, host);
      }));
  for (const OutputSource& src : assignment_.outputs) {
    if (src.kind != OutputSource::Kind::kCopy) continue;
    void* dst = host[p.num_values() + src.index];
    const int64_t bytes = p.type(src.value).byte_size();
    if (bytes > 0) std::memcpy(dst, host[src.value], static_cast<size_t>(bytes));
  }
  return OkStatus();
}

Status GpuExecutable::RunOnCaller(const std::vector<void*>& params,
                                  const std::vector<void*>& out_buffers,
                                  void* arena, std::vector<void*>& value_data,
                                  const void* context) const {
  if (context == nullptr) {
    return Internal(name_ + ": a region runs with its parent's context (the "
                    "address map under emulation, the stream on CUDA)");
  }
  if (target_ == Target::kCuda) {
    // Constants are where the kernels read them: their device copies.
    BATON_RETURN_IF_ERROR(slot_binder_.BindRepeated(
        params, out_buffers, arena,
        [&](int value, int64_t) -> Result<void*> {
          return const_cast<void*>(constants_[value]->data());
        },
        value_data));
    return RunOnDevice(value_data, static_cast<char*>(arena),
                       *static_cast<const CudaStream*>(context),
                       /*top_level=*/false);
  }
  const auto& host_address =
      *static_cast<const DeviceBackend::HostAddressOf*>(context);
  // Constants are mapped once per run of the parent step (the slots keep
  // them from iteration to iteration).
  BATON_RETURN_IF_ERROR(slot_binder_.BindRepeated(
      params, out_buffers, arena,
      [&](int value, int64_t bytes) -> Result<void*> {
        if (bytes == 0) return nullptr;  // nothing to map
        return host_address(constants_[value]->data(),
                            static_cast<size_t>(bytes));
      },
      value_data));
  return RunOnHostStorage(value_data, static_cast<char*>(arena), host_address);
}

Status GpuExecutable::EnqueueNode(const LaunchNode& node,
                                  const CudaStream& stream) const {
  switch (node.kind) {
    case LaunchNode::Kind::kKernel: {
      codegen::KernelArgs args{};
      std::copy(node.pointers.begin(), node.pointers.end(), args.p);
      return cuda_->LaunchKernel(
          emitted_.actions[static_cast<size_t>(node.command)], args, stream);
    }
    case LaunchNode::Kind::kCopy:
      return stream.Copy(node.pointers[0], node.pointers[1],
                         CopyBytes(node.command));
    case LaunchNode::Kind::kGemm:
      return cuda_->Gemm(emitted_.actions[static_cast<size_t>(node.command)],
                         node.pointers[0], node.pointers[1], node.pointers[2],
                         stream);
  }
  return OkStatus();
}

Status GpuExecutable::RunSegmentOnDevice(int index,
                                         std::vector<LaunchNode> nodes,
                                         const CudaStream& stream) const {
  SegmentState& state = *segment_state_[static_cast<size_t>(index)];
  std::lock_guard<std::mutex> lock(state.mu);
  state.last = state.plan.Next(nodes);
  auto direct = [&]() -> Status {
    for (const LaunchNode& node : nodes) {
      BATON_RETURN_IF_ERROR(EnqueueNode(node, stream));
    }
    return OkStatus();
  };
  auto capture = [&]() -> Status {
    if (state.graph == nullptr) {
      state.graph = std::make_unique<CudaGraph>(
          name_ + " (segment " + std::to_string(index) + ")");
    }
    const std::vector<LaunchNode>& recorded = state.plan.recorded();
    return state.graph->Capture(
        stream, static_cast<int>(recorded.size()),
        [&](int i) { return EnqueueNode(recorded[static_cast<size_t>(i)], stream); });
  };
  // The device refused a capture or an update: run directly, warm up again.
  auto fall_back = [&]() -> Status {
    state.plan.Drop();
    state.graph.reset();
    state.last = LaunchPlan::Decision{};
    return direct();
  };
  switch (state.last.mode) {
    case LaunchPlan::Mode::kDirect:
      if (state.plan.abandoned()) state.graph.reset();
      return direct();
    case LaunchPlan::Mode::kCapture:
    case LaunchPlan::Mode::kRecapture:
      if (!capture().ok()) return fall_back();
      break;
    case LaunchPlan::Mode::kUpdate: {
      const std::vector<LaunchNode>& recorded = state.plan.recorded();
      bool updated = true;
      for (int i : state.last.updated_nodes) {
        const LaunchNode& node = recorded[static_cast<size_t>(i)];
        Status st;
        if (node.kind == LaunchNode::Kind::kKernel) {
          codegen::KernelArgs args{};
          std::copy(node.pointers.begin(), node.pointers.end(), args.p);
          st = state.graph->UpdateKernel(i, args);
        } else {
          st = state.graph->UpdateCopy(i, node.pointers[0], node.pointers[1],
                                       CopyBytes(node.command));
        }
        if (!st.ok()) {
          updated = false;
          break;
        }
      }
      // An update the driver refused: capture the (updated) recording anew.
      if (!updated && !capture().ok()) return fall_back();
      break;
    }
    case LaunchPlan::Mode::kReplay:
      break;
  }
  return state.graph->Launch(stream);
}

Status GpuExecutable::RunOnDevice(const std::vector<void*>& value_data,
                                  char* arena, const CudaStream& stream,
                                  bool top_level) const {
  const std::vector<void*> scratch = StepScratch(arena);
  for (int item : run_order_) {
    if (item < 0) {
      const int step = emitted_.actions[static_cast<size_t>(~item)].step;
      if (const RegionStep* region = regions_[step].get()) {
        BATON_RETURN_IF_ERROR(
            region->Run(value_data, scratch[step], &stream, &stream));
      } else {
        BATON_RETURN_IF_ERROR(RunHostStepOnDevice(step, value_data, stream));
      }
      continue;
    }
    std::vector<LaunchNode> nodes = ResolveSegment(
        segments_[static_cast<size_t>(item)], value_data, scratch);
    if (top_level) {
      BATON_RETURN_IF_ERROR(
          RunSegmentOnDevice(item, std::move(nodes), stream));
      continue;
    }
    for (const LaunchNode& node : nodes) {
      BATON_RETURN_IF_ERROR(EnqueueNode(node, stream));
    }
  }
  return OkStatus();
}

Status GpuExecutable::RunHostStepOnDevice(int step,
                                          const std::vector<void*>& value_data,
                                          const CudaStream& stream) const {
  const compiler::Program& p = *program_;
  const compiler::Step& s = plan_.steps[static_cast<size_t>(step)];
  // Host copies of what the step reads and writes (RunStepOnHost reads
  // step.inputs and writes the materialized members), at host addresses.
  std::vector<void*> host(value_data.size(), nullptr);
  std::vector<std::unique_ptr<char[]>> storage;
  auto host_copy = [&](ValueId v) -> void* {
    if (host[v] == nullptr) {
      storage.push_back(std::make_unique<char[]>(
          static_cast<size_t>(p.type(v).byte_size())));
      host[v] = storage.back().get();
    }
    return host[v];
  };
  // Each Read waits for the work enqueued before it (the first one for the
  // commands this step follows).
  for (ValueId v : s.inputs) {
    const int64_t bytes = p.type(v).byte_size();
    if (bytes == 0) continue;
    BATON_RETURN_IF_ERROR(stream.Read(host_copy(v), value_data[v], bytes));
  }
  std::vector<ValueId> written;
  for (ValueId m : s.members) {
    if (!plan_.materialized[m] || p.type(m).byte_size() == 0) continue;
    host_copy(m);
    written.push_back(m);
  }
  BATON_RETURN_IF_ERROR(codegen::RunStepOnHost(p, plan_, step, host));
  for (ValueId m : written) {
    BATON_RETURN_IF_ERROR(
        stream.Write(value_data[m], host[m], p.type(m).byte_size()));
  }
  return OkStatus();
}

Result<std::vector<Array>> GpuExecutable::Execute(
    std::vector<CallArgument>& args) {
  WorkQueue& queue = device_->queue(QueueKind::kCompute);
  BATON_ASSIGN_OR_RETURN(CallFrame frame,
                         CallFrame::Prepare(layout_, device_, queue.id(), args));
  std::shared_ptr<const GpuExecutable> self = shared_from_this();
  Device* device = device_;
  void* device_arena = frame.arena(MemoryKind::kDevice);
  // From the calling thread when the queue is idle and the inputs ready
  // (class comment); the queue's order and dependencies hold either way.
  const WorkQueue::Dispatch dispatch =
      dispatch_directly_ ? WorkQueue::Dispatch::kInlineWhenIdle
                         : WorkQueue::Dispatch::kAsync;
  const std::thread::id caller = std::this_thread::get_id();
  if (target_ == Target::kCuda) {
    // The launch runs in queue order, as a task of the compute queue (what
    // its host steps' callbacks enqueue runs at once, work_queue.h), and
    // enqueues the command list on the compute stream; the event recorded
    // behind it defines the outputs. The executable stays alive until the
    // device is past the run (its kernels and GEMM plans are in use).
    // Traced, the run is recorded once the device is past it, over the span
    // the device measured (the backend brackets the run with timing events
    // while a recording is enabled, cuda_backend.h); should it have none,
    // from the launch until then, as the host saw it.
    Event done = queue.EnqueueLaunch(
        std::move(frame.dependencies()),
        [self, value_data = std::move(frame.value_data()), device_arena,
         caller]() {
          if (std::this_thread::get_id() == caller) ++self->direct_dispatches_;
          const bool traced = TraceRecorder::Global().enabled();
          const int64_t launched = traced ? TraceRecorder::NowNs() : 0;
          Event ran = self->cuda_->Launch(
              "running " + self->name_,
              [&](const CudaStream& stream) {
                return self->RunOnDevice(value_data,
                                         static_cast<char*>(device_arena),
                                         stream, /*top_level=*/true);
              },
              self);
          if (traced) {
            // `ran` in its own callback: the handle goes with the callback,
            // once it has run.
            ran.OnReady([device = self->device_, name = self->name_, ran,
                         launched](const Status&) {
              int64_t begin = 0, end = 0;
              device->backend().TraceSpan(ran, launched, &begin, &end);
              TraceRecorder::Global().RecordExecuteSpan(begin, end,
                                                        device->id(), name);
            });
          }
          return ran;
        },
        dispatch);
    return frame.Finish(done, args);
  }
  // The launch runs in queue order and enqueues the command list on the
  // device's compute stream; its event defines the outputs.
  Event done = queue.EnqueueLaunch(
      std::move(frame.dependencies()),
      [self, device, value_data = std::move(frame.value_data()),
       device_arena, caller]() {
        if (std::this_thread::get_id() == caller) ++self->direct_dispatches_;
        return device->backend().EmulateAsync(
            device->ordinal(), QueueKind::kCompute,
            [self, value_data, device_arena](
                const DeviceBackend::HostAddressOf& host_address) {
              // As a task of the compute queue: what its host callbacks
              // enqueue runs at once (work_queue.h), not behind it.
              const WorkQueue& queue =
                  self->device_->queue(QueueKind::kCompute);
              QueueTaskScope task(queue.id(), &queue.name());
              auto& rec = TraceRecorder::Global();
              const int64_t begin = rec.enabled() ? TraceRecorder::NowNs() : 0;
              Status s =
                  self->RunEmulated(value_data, device_arena, host_address);
              if (rec.enabled()) {
                rec.RecordExecute(begin, self->device_->id(), self->name_);
              }
              return s;
            });
      },
      dispatch);
  return frame.Finish(done, args);
}

}  // namespace baton::cuda
