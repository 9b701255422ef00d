#include "baton/backend/cuda/gpu_executable.h"

#include <cstring>
#include <limits>

#include "baton/backend/cuda/codegen/host_step.h"
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

}  // namespace

GpuExecutable::~GpuExecutable() = default;

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
                       *static_cast<const CudaStream*>(context));
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

Status GpuExecutable::RunOnDevice(const std::vector<void*>& value_data,
                                  char* arena,
                                  const CudaStream& stream) const {
  const compiler::Program& p = *program_;
  const std::vector<void*> scratch = StepScratch(arena);
  // As codegen::RunOnHost resolves a BufferRef.
  auto at = [&](const codegen::BufferRef& ref, int step) -> void* {
    if (ref.kind == codegen::BufferRef::Kind::kSlot) {
      return value_data[static_cast<size_t>(ref.index)];
    }
    return static_cast<char*>(scratch[static_cast<size_t>(step)]) + ref.index;
  };
  for (const codegen::Action& action : emitted_.actions) {
    switch (action.kind) {
      case codegen::Action::Kind::kKernel: {
        codegen::KernelArgs args{};
        for (size_t k = 0; k < action.args.size(); ++k) {
          args.p[k] = at(action.args[k], action.step);
        }
        BATON_RETURN_IF_ERROR(cuda_->LaunchKernel(action, args, stream));
        break;
      }
      case codegen::Action::Kind::kCopy:
        BATON_RETURN_IF_ERROR(stream.Copy(at(action.dst, action.step),
                                          at(action.src, action.step),
                                          action.bytes));
        break;
      case codegen::Action::Kind::kGemm:
        BATON_RETURN_IF_ERROR(cuda_->Gemm(action, at(action.a, action.step),
                                          at(action.b, action.step),
                                          at(action.c, action.step), stream));
        break;
      case codegen::Action::Kind::kHostStep:
        if (const RegionStep* region = regions_[action.step].get()) {
          BATON_RETURN_IF_ERROR(region->Run(value_data, scratch[action.step],
                                            &stream, &stream));
        } else {
          BATON_RETURN_IF_ERROR(
              RunHostStepOnDevice(action.step, value_data, stream));
        }
        break;
    }
  }
  for (const OutputSource& src : assignment_.outputs) {
    if (src.kind != OutputSource::Kind::kCopy) continue;
    BATON_RETURN_IF_ERROR(stream.Copy(value_data[p.num_values() + src.index],
                                      value_data[src.value],
                                      p.type(src.value).byte_size()));
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
  if (target_ == Target::kCuda) {
    // The launch runs in queue order, as a task of the compute queue (what
    // its host steps' callbacks enqueue runs at once, work_queue.h), and
    // enqueues the command list on the compute stream; the event recorded
    // behind it defines the outputs. The executable stays alive until the
    // device is past the run (its kernels and GEMM plans are in use).
    Event done = queue.EnqueueLaunch(
        std::move(frame.dependencies()),
        [self, value_data = std::move(frame.value_data()), device_arena]() {
          return self->cuda_->Launch(
              "running " + self->name_,
              [&](const CudaStream& stream) {
                auto& rec = TraceRecorder::Global();
                const int64_t begin =
                    rec.enabled() ? TraceRecorder::NowNs() : 0;
                Status s = self->RunOnDevice(
                    value_data, static_cast<char*>(device_arena), stream);
                if (rec.enabled()) {
                  rec.RecordExecute(begin, self->device_->id(), self->name_);
                }
                return s;
              },
              self);
        });
    return frame.Finish(done, args);
  }
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
