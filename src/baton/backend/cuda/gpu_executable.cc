#include "baton/backend/cuda/gpu_executable.h"

#include <cstring>
#include <limits>

#include "baton/backend/cuda/codegen/host_step.h"
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

}  // namespace

GpuExecutable::~GpuExecutable() = default;

Result<std::shared_ptr<GpuExecutable>> GpuExecutable::Compile(
    std::shared_ptr<const compiler::Program> program, std::vector<bool> donated,
    Device* device, std::string name, std::vector<bool> fresh_outputs,
    Target target) {
  if (target == Target::kCuda) {
    return Unimplemented(
        name + ": computations do not run on " + device->ToString() +
        " yet: baton's CUDA backend generates and compiles the kernels "
        "(NVRTC) but does not launch them. Compute on a CPU device "
        "(bt.devices(\"cpu\")) and move the result with bt.device_put.");
  }
  std::shared_ptr<GpuExecutable> exe(new GpuExecutable());
  exe->target_ = target;
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
  if (!exe->emitted_.kernel_names.empty()) {
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
  // Device addresses -> host addresses, slot by slot, and the arena whole.
  std::vector<void*> host(value_data.size(), nullptr);
  for (size_t slot = 0; slot < value_data.size(); ++slot) {
    if (value_data[slot] == nullptr) continue;
    const int64_t bytes =
        slot < static_cast<size_t>(p.num_values())
            ? p.type(static_cast<ValueId>(slot)).byte_size()
            : obufs[slot - p.num_values()].type.byte_size();
    BATON_ASSIGN_OR_RETURN(host[slot],
                           host_address(value_data[slot],
                                        static_cast<size_t>(bytes)));
  }
  const int64_t arena_bytes =
      assignment_.temp_arena_bytes[static_cast<int>(MemoryKind::kDevice)];
  void* host_arena = nullptr;
  if (device_arena != nullptr && arena_bytes > 0) {
    BATON_ASSIGN_OR_RETURN(host_arena,
                           host_address(device_arena,
                                        static_cast<size_t>(arena_bytes)));
  }
  return RunOnHostStorage(host, static_cast<char*>(host_arena), host_address);
}

Status GpuExecutable::RunOnHostStorage(
    const std::vector<void*>& host, char* host_arena,
    const DeviceBackend::HostAddressOf& host_address) const {
  const compiler::Program& p = *program_;
  std::vector<void*> scratch(step_scratch_bytes_.size(), nullptr);
  for (size_t s = 0; s < scratch.size(); ++s) {
    const int64_t offset = assignment_.step_scratch_offset[s];
    if (step_scratch_bytes_[s] == 0 || offset < 0) continue;
    scratch[s] = host_arena + offset;
  }
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
  if (target_ != Target::kHostEmulation || context == nullptr) {
    return Internal(name_ + ": a region runs on the host only under "
                    "emulation, with the parent's address map");
  }
  const auto& host_address =
      *static_cast<const DeviceBackend::HostAddressOf*>(context);
  // Constants are mapped once per run of the parent step (the slots keep
  // them from iteration to iteration).
  BATON_RETURN_IF_ERROR(slot_binder_.BindRepeated(
      params, out_buffers, arena,
      [&](int value, int64_t bytes) {
        return host_address(constants_[value]->data(),
                            static_cast<size_t>(bytes));
      },
      value_data));
  return RunOnHostStorage(value_data, static_cast<char*>(arena), host_address);
}

Result<std::vector<Array>> GpuExecutable::Execute(
    std::vector<CallArgument>& args) {
  WorkQueue& queue = device_->queue(QueueKind::kCompute);
  BATON_ASSIGN_OR_RETURN(CallFrame frame,
                         CallFrame::Prepare(layout_, device_, queue.id(), args));
  std::shared_ptr<const GpuExecutable> self = shared_from_this();
  Device* device = device_;
  void* device_arena = frame.arena(MemoryKind::kDevice);
  // The launch runs in queue order and enqueues the command list on the
  // device's compute stream; its event defines the outputs.
  Event done = queue.EnqueueLaunch(
      std::move(frame.dependencies()),
      [self, device, value_data = std::move(frame.value_data()),
       device_arena]() {
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
      });
  return frame.Finish(done, args);
}

}  // namespace baton::cuda
