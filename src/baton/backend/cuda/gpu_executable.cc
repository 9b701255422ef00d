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
  for (const codegen::Action& a : exe->emitted_.actions) {
    if (a.kind == codegen::Action::Kind::kHostStep) ++exe->host_steps_;
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
      exe->emitted_.step_scratch_bytes, fresh_outputs);
  exe->in_place_misses_ = exe->assignment_.in_place_misses;
  for (const compiler::Step& step : exe->plan_.steps) {
    if (step.kind != compiler::Step::Kind::kRegion) continue;
    const compiler::OpKind kind = p.instruction(step.result).kind();
    if (kind == compiler::OpKind::kCase) continue;
    // A loop left to the host: the interpreter gives every carry storage
    // of its own each iteration (bt.jit(require_in_place=True) refuses it).
    exe->in_place_misses_.push_back(compiler::InPlaceMiss{
        step.result,
        "the loop carries of " + std::string(compiler::op_kind_name(kind)) +
            " %" + std::to_string(step.result),
        "loops run on the host on " + device->ToString() +
            " (through the reference interpreter, until control flow runs "
            "as device commands): every carry is copied each iteration. On "
            "a CPU device the carries are updated in place"});
  }
  exe->output_labels_ = OutputLabels(exe->assignment_);
  exe->temp_label_ = "temporaries of " + exe->name_;
  BATON_ASSIGN_OR_RETURN(exe->constants_, DeviceConstants(p, device));
  exe->layout_ = FrameLayout{exe->program_.get(),     &exe->assignment_,
                             &exe->constants_,         &exe->output_labels_,
                             &exe->temp_label_,        &exe->name_,
                             "baton::cuda::GpuExecutable::Execute"};
  return exe;
}

std::string GpuExecutable::as_text() const {
  std::string text = "// " + name_ + "\n" + compiler::ProgramToText(*program_);
  text += "// memory: " + assignment_.analysis.ToString() + "\n";
  text += "// commands: " + std::to_string(emitted_.actions.size()) + " (" +
          std::to_string(emitted_.kernel_names.size()) + " kernels, " +
          std::to_string(host_steps_) + " steps on the host)\n";
  for (const codegen::Action& a : emitted_.actions) {
    if (a.kind != codegen::Action::Kind::kHostStep) continue;
    text += "//   step " + std::to_string(a.step) + " on the host: " +
            a.host_reason + "\n";
  }
  return text;
}

Status GpuExecutable::RunEmulated(
    const std::vector<void*>& value_data, void* device_arena,
    const DeviceBackend::HostAddressOf& host_address) const {
  const compiler::Program& p = *program_;
  const auto& obufs = assignment_.output_buffers;
  // Device addresses -> host addresses, slot by slot.
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
  std::vector<void*> scratch(emitted_.step_scratch_bytes.size(), nullptr);
  for (size_t s = 0; s < scratch.size(); ++s) {
    const int64_t bytes = emitted_.step_scratch_bytes[s];
    const int64_t offset = assignment_.step_scratch_offset[s];
    if (bytes == 0 || offset < 0) continue;
    BATON_ASSIGN_OR_RETURN(
        scratch[s], host_address(static_cast<char*>(device_arena) + offset,
                                 static_cast<size_t>(bytes)));
  }
  BATON_RETURN_IF_ERROR(codegen::RunOnHost(
      host_kernels_.get(), emitted_, host, scratch, [&](int step) {
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
