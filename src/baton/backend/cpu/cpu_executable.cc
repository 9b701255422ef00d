#include "baton/backend/cpu/cpu_executable.h"

#include <cstddef>
#include <cstring>
#include <new>
#include <span>

#include "baton/backend/cpu/cost_model.h"
#include "baton/backend/cpu/fusion_tiling.h"
#include "baton/backend/cpu/instruction_runner.h"
#include "baton/backend/cpu/kernels/dot.h"
#include "baton/compiler/program_printer.h"
#include "baton/core/dtype_dispatch.h"
#include "baton/core/scalar_math.h"
#include "baton/runtime/device.h"
#include "baton/runtime/thread_pool.h"
#include "baton/runtime/trace_recorder.h"

namespace baton::cpu {

using compiler::OpKind;
using compiler::OutputSource;
using compiler::Step;
using compiler::ValueId;

namespace {

template <typename T>
void ScalarBinary(BinaryOp op, const void* a, const void* b, void* out) {
  const T x = *static_cast<const T*>(a);
  const T y = *static_cast<const T*>(b);
  T r{};
  VisitBinaryOp(op, [&](auto op_c) {
    r = scalar::Binary<decltype(op_c)::value, T>(x, y);
  });
  *static_cast<T*>(out) = r;
}

// Whether step `s` is a binary op on one int32 element (a loop counter's
// i + 1): run directly, without the kernel dispatch.
bool IsScalarInt32Binary(const compiler::Program& p, const Step& step) {
  if (step.kind != Step::Kind::kOp) return false;
  const compiler::Instruction& inst = p.instruction(step.result);
  if (inst.kind() != OpKind::kBinary || inst.type.dtype != DType::kInt32 ||
      inst.type.num_elements() != 1) {
    return false;
  }
  for (ValueId o : inst.operands) {
    if (p.type(o).num_elements() != 1) return false;
  }
  return true;
}

}  // namespace

compiler::StepPlanOptions CpuStepPlanOptions() {
  compiler::StepPlanOptions options;
  options.dot_accumulates = [](const compiler::Program& p, ValueId dot) {
    const compiler::Instruction& inst = p.instruction(dot);
    return AccumulatesInOneRounding(
        inst.type.dtype, p.type(inst.operands[0]).shape,
        p.type(inst.operands[1]).shape,
        DotDimensionsOf(inst.attrs_as<compiler::DotGeneralAttrs>()));
  };
  return options;
}

CpuExecutable::CpuExecutable() = default;
CpuExecutable::~CpuExecutable() = default;

Result<std::shared_ptr<CpuExecutable>> CpuExecutable::Compile(
    std::shared_ptr<const compiler::Program> program, std::vector<bool> donated,
    Device* device, std::string name, std::vector<bool> fresh_outputs) {
  // CPU kernels read and write their buffers directly.
  if (!device->host_addressable(MemoryKind::kDevice)) {
    return Unimplemented(
        name + ": computations do not run on " + device->ToString() +
        " yet: baton's " + device->platform() +
        " backend has memory, transfers and host views, but no executables. "
        "Compute on a CPU device (bt.devices(\"cpu\")) and move the result "
        "with bt.device_put.");
  }
  std::shared_ptr<CpuExecutable> exe(new CpuExecutable());
  exe->donated_ = std::move(donated);
  BATON_ASSIGN_OR_RETURN(exe->program_,
                         VerifyAndSchedule(*program, exe->donated_,
                                           fresh_outputs, name));
  exe->device_ = device;
  exe->name_ = std::move(name);
  exe->plan_ = compiler::PlanSteps(*exe->program_, CpuStepPlanOptions());
  const compiler::Program& p = *exe->program_;
  // Control-flow steps first: their regions' scratch is part of the arena.
  std::vector<int64_t> scratch(exe->plan_.steps.size(), 0);
  std::vector<int64_t> region_work(exe->plan_.steps.size(), 0);
  exe->regions_.resize(exe->plan_.steps.size());
  for (size_t s = 0; s < exe->plan_.steps.size(); ++s) {
    const Step& step = exe->plan_.steps[s];
    if (step.kind != Step::Kind::kRegion) continue;
    // Each region is a CpuExecutable on the same device; the step's work
    // (cost_model.h) is its regions' -- the costliest branch of a case, a
    // loop body's times its trips, unbounded for a while loop (not known
    // until it runs, so a program holding one is always handed to the
    // queue).
    int64_t work = 0;
    const bool is_case = p.instruction(step.result).kind() == OpKind::kCase;
    RegionCompiler compile = [device, &work, is_case](
                                 std::shared_ptr<const compiler::Program> region,
                                 std::vector<bool> donated, std::string name,
                                 std::vector<bool> slice_outputs)
        -> Result<std::shared_ptr<const RegionExecutable>> {
      BATON_ASSIGN_OR_RETURN(
          auto exe, CpuExecutable::Compile(std::move(region), std::move(donated),
                                           device, std::move(name),
                                           std::move(slice_outputs)));
      work = is_case ? std::max(work, exe->work()) : AddWork(work, exe->work());
      return std::shared_ptr<const RegionExecutable>(std::move(exe));
    };
    BATON_ASSIGN_OR_RETURN(exe->regions_[s],
                           RegionStep::Compile(p, step, compile, exe->name_));
    scratch[s] = exe->regions_[s]->scratch_bytes();
    const int64_t trips = exe->regions_[s]->trip_count();
    region_work[s] = trips < 0 ? kUnboundedWork
                               : ScaleWork(std::max<int64_t>(work, 1),
                                           std::max<int64_t>(trips, 1));
  }
  // Scratch of the steps that multiply matrices (kernels/dot.h: transposed
  // operand copies, 16-bit products widened to float32): reserved in the
  // arena for the step, like a region's.
  for (size_t s = 0; s < exe->plan_.steps.size(); ++s) {
    const Step& step = exe->plan_.steps[s];
    if (step.kind == Step::Kind::kOp) {
      scratch[s] = InstructionScratchBytes(p, p.instruction(step.result));
    } else if (step.kind == Step::Kind::kDotAccumulate) {
      scratch[s] = DotAccumulateStep(p, exe->plan_, step).scratch_bytes();
    }
  }
  exe->assignment_ = compiler::AssignBuffers(
      p, exe->plan_, exe->donated_, ThreadPool::Global().num_threads(),
      kFusionTiling, scratch, fresh_outputs);
  exe->step_scratch_bytes_ = scratch;
  exe->work_ = EstimateWork(p, exe->plan_, exe->assignment_, region_work);
  exe->runs_inline_ = exe->work_ <= kInlineWorkLimit;
  exe->keeps_caller_locks_ = exe->work_ <= kBriefWorkLimit;
  for (const Step& step : exe->plan_.steps) {
    exe->scalar_int32_binary_.push_back(IsScalarInt32Binary(p, step));
    exe->fused_.push_back(step.kind == Step::Kind::kFusedElementwise
                              ? std::make_unique<FusedStep>(p, exe->plan_, step)
                              : nullptr);
    exe->fused_reduce_.push_back(
        step.kind == Step::Kind::kFusedReduce
            ? std::make_unique<FusedReduceStep>(p, exe->plan_, step)
            : nullptr);
    exe->dot_accumulate_.push_back(
        step.kind == Step::Kind::kDotAccumulate
            ? std::make_unique<DotAccumulateStep>(p, exe->plan_, step)
            : nullptr);
  }
  exe->output_labels_ = OutputLabels(exe->assignment_);
  exe->temp_label_ = "temporaries of " + exe->name_;
  exe->slot_binder_ = SlotBinder(p, exe->assignment_);
  BATON_ASSIGN_OR_RETURN(exe->constants_, DeviceConstants(p, device));
  exe->layout_ = FrameLayout{exe->program_.get(),     &exe->assignment_,
                             &exe->constants_,         &exe->output_labels_,
                             &exe->temp_label_,        &exe->name_,
                             "baton::cpu::CpuExecutable::Execute",
                             &exe->slot_binder_};
  return exe;
}

std::string CpuExecutable::as_text() const {
  std::string text = "// " + name_ + "\n" + compiler::ProgramToText(*program_);
  text += "// memory: " + assignment_.analysis.ToString() + "\n";
  for (const auto& r : regions_) {
    if (r) text += r->RegionsText();
  }
  return text;
}

std::vector<compiler::InPlaceMiss> CpuExecutable::in_place_misses() const {
  std::vector<compiler::InPlaceMiss> misses = assignment_.in_place_misses;
  for (const auto& r : regions_) {
    if (r) {
      misses.insert(misses.end(), r->in_place_misses().begin(),
                    r->in_place_misses().end());
    }
  }
  return misses;
}

Status CpuExecutable::RunOnCaller(const std::vector<void*>& params,
                                  const std::vector<void*>& out_buffers,
                                  void* device_arena,
                                  std::vector<void*>& value_data,
                                  const void* /*context*/) const {
  BATON_RETURN_IF_ERROR(slot_binder_.BindRepeated(
      params, out_buffers, device_arena,
      [this](int value, int64_t) -> Result<void*> {
        return const_cast<void*>(constants_[value]->data());
      },
      value_data));
  return Run(value_data, device_arena);
}

Status CpuExecutable::Run(const std::vector<void*>& value_data,
                          void* device_arena) const {
  const compiler::Program& p = *program_;
  // Operands on the stack for the common case (a loop body runs once per
  // iteration: no allocation there); more than kInline go to the heap.
  // Uninitialized (zeroing it would cost more than the step it serves in
  // a small loop body); each entry used is constructed below.
  constexpr size_t kInline = 8;
  alignas(OperandData) std::byte inline_ops[kInline * sizeof(OperandData)];
  std::vector<OperandData> heap_ops;
  for (size_t s = 0; s < plan_.steps.size(); ++s) {
    if (assignment_.step_is_noop[s]) continue;
    const Step& step = plan_.steps[s];
    const int64_t scratch_offset = assignment_.step_scratch_offset[s];
    if (regions_[s]) {
      BATON_RETURN_IF_ERROR(regions_[s]->Run(
          value_data, scratch_offset < 0 ? nullptr
                                         : static_cast<char*>(device_arena) +
                                               scratch_offset));
      continue;
    }
    // The step's scratch in the arena (empty when it needs none).
    const std::span<std::byte> scratch =
        scratch_offset < 0
            ? std::span<std::byte>()
            : std::span<std::byte>(
                  static_cast<std::byte*>(device_arena) + scratch_offset,
                  static_cast<size_t>(step_scratch_bytes_[s]));
    void* out = value_data[step.result];
    if (step.kind == Step::Kind::kFusedElementwise) {
      BATON_RETURN_IF_ERROR(fused_[s]->Run(value_data, out));
      continue;
    }
    if (step.kind == Step::Kind::kFusedReduce) {
      BATON_RETURN_IF_ERROR(fused_reduce_[s]->Run(value_data, out));
      continue;
    }
    if (step.kind == Step::Kind::kDotAccumulate) {
      BATON_RETURN_IF_ERROR(dot_accumulate_[s]->Run(value_data, out, scratch));
      continue;
    }
    const compiler::Instruction& inst = p.instruction(step.result);
    if (scalar_int32_binary_[s]) {
      auto at = [&](ValueId o) {
        const ValueId src = plan_.scalar_source[o];
        return value_data[src != compiler::kNoValue ? src : o];
      };
      ScalarBinary<int32_t>(inst.attrs_as<compiler::BinaryAttrs>().op,
                            at(inst.operands[0]), at(inst.operands[1]), out);
      continue;
    }
    const size_t num_ops = static_cast<size_t>(inst.operands.size());
    OperandData* ops = reinterpret_cast<OperandData*>(inline_ops);
    if (num_ops > kInline) {
      heap_ops.resize(num_ops);
      ops = heap_ops.data();
    }
    for (size_t k = 0; k < num_ops; ++k) {
      const ValueId o = inst.operands[static_cast<int>(k)];
      const ValueId src = plan_.scalar_source[o];
      const bool scalar = src != compiler::kNoValue;
      new (&ops[k]) OperandData{value_data[scalar ? src : o], &p.type(o), scalar};
    }
    BATON_RETURN_IF_ERROR(RunInstruction(
        inst, std::span<const OperandData>(ops, num_ops), out, scratch));
  }
  for (size_t i = 0; i < assignment_.outputs.size(); ++i) {
    const OutputSource& src = assignment_.outputs[i];
    if (src.kind != OutputSource::Kind::kCopy) continue;
    // The output buffer's data was stashed in the slot after the values.
    void* dst = value_data[p.num_values() + src.index];
    std::memcpy(dst, value_data[src.value],
                static_cast<size_t>(p.type(src.value).byte_size()));
  }
  return OkStatus();
}

Result<std::vector<Array>> CpuExecutable::Execute(
    std::vector<CallArgument>& args) {
  WorkQueue& queue = device_->queue(QueueKind::kCompute);
  BATON_ASSIGN_OR_RETURN(CallFrame frame,
                         CallFrame::Prepare(layout_, device_, queue.id(), args));
  // Enqueue the whole call as one task.
  std::shared_ptr<const CpuExecutable> self = shared_from_this();
  const int device_id = device_->id();
  void* device_arena = frame.arena(MemoryKind::kDevice);
  Event done = queue.Enqueue(
      std::move(frame.dependencies()),
      [self, value_data = std::move(frame.value_data()), device_id,
       device_arena] {
        auto& rec = TraceRecorder::Global();
        const int64_t begin = rec.enabled() ? TraceRecorder::NowNs() : 0;
        Status s = self->Run(value_data, device_arena);
        if (rec.enabled()) rec.RecordExecute(begin, device_id, self->name_);
        return s;
      },
      runs_inline_ ? WorkQueue::Dispatch::kInlineWhenIdle
                   : WorkQueue::Dispatch::kAsync);
  return frame.Finish(done, args);
}

}  // namespace baton::cpu
