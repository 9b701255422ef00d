#include "baton/backend/call_frame.h"

#include <utility>

#include "baton/compiler/memory_schedule.h"
#include "baton/runtime/device.h"
#include "baton/runtime/trace_recorder.h"

namespace baton {

using compiler::BufferLocation;
using compiler::OutputSource;
using compiler::ValueId;

Result<std::vector<std::shared_ptr<ConstantBuffer>>> DeviceConstants(
    const compiler::Program& program, Device* device) {
  std::vector<std::shared_ptr<ConstantBuffer>> constants(program.num_values());
  for (ValueId v = 0; v < program.num_values(); ++v) {
    const auto* c = program.instruction(v).attrs_if<compiler::ConstantAttrs>();
    if (c == nullptr) continue;
    BATON_ASSIGN_OR_RETURN(constants[v],
                           ConstantCache::Global().Get(*c->literal, device));
  }
  return constants;
}

std::vector<std::string> OutputLabels(
    const compiler::BufferAssignment& assignment) {
  std::vector<std::string> labels;
  for (const auto& b : assignment.output_buffers) {
    labels.push_back(std::string(dtype_name(b.type.dtype)) +
                     b.type.shape.to_string());
  }
  return labels;
}

Result<std::shared_ptr<const compiler::Program>> VerifyAndSchedule(
    const compiler::Program& program, std::vector<bool>& donated,
    const std::vector<bool>& fresh_outputs, const std::string& name) {
  // The planner, buffer assignment and kernels index by the recorded types
  // and region groups: a program that breaks them is refused, not run.
  if (Status s = program.Verify(); !s.ok()) {
    return Internal(name + ": cannot compile a malformed program: " +
                    s.message());
  }
  donated.resize(program.num_parameters(), false);
  // Before planning: the order of the steps decides what is alive at once.
  return std::make_shared<const compiler::Program>(
      compiler::ScheduleForMemory(program, donated, fresh_outputs));
}

SlotBinder::SlotBinder(const compiler::Program& program,
                       const compiler::BufferAssignment& assignment)
    : location_(assignment.location),
      num_outputs_(static_cast<int>(assignment.output_buffers.size())) {
  const int n = program.num_values();
  memory_kind_.resize(n);
  bytes_.resize(n);
  for (ValueId v = 0; v < n; ++v) {
    memory_kind_[v] = program.type(v).memory_kind;
    bytes_[v] = program.type(v).byte_size();
    const BufferLocation& loc = location_[v];
    if (loc.kind == BufferLocation::Kind::kParameter) {
      parameter_rebinds_.push_back({v, loc.index});
    } else if (loc.kind == BufferLocation::Kind::kOutput) {
      output_rebinds_.push_back({v, loc.index});
    }
  }
  for (int b = 0; b < num_outputs_; ++b) output_rebinds_.push_back({n + b, b});
}

Status SlotBinder::Bind(const void* const* params, void* const* outputs,
                        const std::array<void*, kNumMemoryKinds>& arenas,
                        const ConstantAddress& constant,
                        std::vector<void*>& slots) const {
  const size_t n = location_.size();
  slots.assign(n + static_cast<size_t>(num_outputs_), nullptr);
  for (size_t v = 0; v < n; ++v) {
    const BufferLocation& loc = location_[v];
    switch (loc.kind) {
      case BufferLocation::Kind::kParameter:
        slots[v] = const_cast<void*>(params[loc.index]);
        break;
      case BufferLocation::Kind::kConstant: {
        // Asked even for an empty constant: the CPU binds its (non-null)
        // storage, which kernels may pass to memcpy with 0 bytes.
        BATON_ASSIGN_OR_RETURN(slots[v], constant(loc.index, bytes_[v]));
        break;
      }
      case BufferLocation::Kind::kOutput:
        slots[v] = outputs[loc.index];
        break;
      case BufferLocation::Kind::kTemp:
        slots[v] = static_cast<char*>(
                       arenas[static_cast<int>(memory_kind_[v])]) +
                   loc.offset;
        break;
      case BufferLocation::Kind::kNone:
        break;
    }
  }
  for (int b = 0; b < num_outputs_; ++b) slots[n + b] = outputs[b];
  return OkStatus();
}

Status SlotBinder::BindRepeated(const std::vector<void*>& params,
                                const std::vector<void*>& outputs, void* arena,
                                const ConstantAddress& constant,
                                std::vector<void*>& slots) const {
  const size_t size = location_.size() + static_cast<size_t>(num_outputs_) + 1;
  if (slots.size() == size && slots.back() == arena) {
    void** at = slots.data();
    for (const Rebind& r : parameter_rebinds_) at[r.slot] = params[r.index];
    for (const Rebind& r : output_rebinds_) at[r.slot] = outputs[r.index];
    return OkStatus();
  }
  std::array<void*, kNumMemoryKinds> arenas;
  arenas.fill(arena);
  BATON_RETURN_IF_ERROR(
      Bind(params.data(), outputs.data(), arenas, constant, slots));
  slots.push_back(arena);
  return OkStatus();
}

void CallFrame::GiveBack(std::vector<CallArgument>& args) {
  for (CallArgument& a : args) {
    if (a.donated && a.taken.buffer) a.array.impl()->Untake(std::move(a.taken));
  }
}

CallFrame::CallFrame(CallFrame&& other) noexcept
    : layout_(other.layout_),
      device_(other.device_),
      holds_(std::move(other.holds_)),
      deps_(std::move(other.deps_)),
      arenas_(std::exchange(other.arenas_, {})),
      out_buffers_(std::move(other.out_buffers_)),
      value_data_(std::move(other.value_data_)) {}

CallFrame::~CallFrame() { FreeArenas(); }

void CallFrame::FreeArenas() {
  for (int k = 0; k < kNumMemoryKinds; ++k) {
    if (arenas_[k]) {
      device_->memory_space(static_cast<MemoryKind>(k)).Free(arenas_[k]);
      arenas_[k] = nullptr;
    }
  }
}

Result<CallFrame> CallFrame::Prepare(const FrameLayout& layout, Device* device,
                                     int queue_id,
                                     std::vector<CallArgument>& args) {
  const compiler::Program& p = *layout.program;
  const compiler::BufferAssignment& assignment = *layout.assignment;
  if (static_cast<int>(args.size()) != p.num_parameters()) {
    GiveBack(args);
    return InvalidArgument(*layout.name + ": expected " +
                           std::to_string(p.num_parameters()) +
                           " arguments, got " + std::to_string(args.size()));
  }
  CallFrame frame;
  frame.layout_ = layout;
  frame.device_ = device;
  // 1. Pin inputs.
  const int num_params = p.num_parameters();
  frame.holds_.resize(num_params);
  std::vector<const void*> param_data(num_params);
  for (int i = 0; i < num_params; ++i) {
    CallArgument& a = args[i];
    if (a.donated) {
      param_data[i] = a.taken.buffer->data();
      frame.deps_.insert(frame.deps_.end(), a.taken.wait_for.begin(),
                         a.taken.wait_for.end());
      continue;
    }
    Result<UsageHold> hold = a.array.impl()->AcquireRead();
    if (!hold.ok()) {
      frame.holds_.clear();  // abandon what we pinned
      GiveBack(args);
      return hold.status();
    }
    frame.holds_[i] = std::move(hold).value();
    param_data[i] = frame.holds_[i].data();
    const auto& d = frame.holds_[i].dependencies();
    frame.deps_.insert(frame.deps_.end(), d.begin(), d.end());
  }

  // 2. Temporary arenas (freed right after enqueue; stream-ordered reuse
  // makes them available to the next call on this queue at once). They are
  // taken before the outputs: the previous call's arena is pending on this
  // queue, and a small output allocated first would take a slice of it, so
  // that this call's arena no longer fits there and the peak holds two.
  for (int k = 0; k < kNumMemoryKinds; ++k) {
    const int64_t bytes = assignment.temp_arena_bytes[k];
    if (bytes == 0) continue;
    Result<void*> arena =
        device->memory_space(static_cast<MemoryKind>(k))
            .Allocate(static_cast<size_t>(bytes), queue_id,
                      AllocationLabel(*layout.temp_label,
                                      AllocationKind::kTemporary,
                                      layout.origin));
    if (!arena.ok()) {
      frame.FreeArenas();
      frame.holds_.clear();
      GiveBack(args);
      return arena.status();
    }
    frame.arenas_[k] = arena.value();
  }

  // 3. Output storage: donated storage where assigned, else fresh.
  const auto& obufs = assignment.output_buffers;
  frame.out_buffers_.resize(obufs.size());
  for (size_t b = 0; b < obufs.size(); ++b) {
    if (obufs[b].aliased_parameter >= 0) {
      frame.out_buffers_[b] = args[obufs[b].aliased_parameter].taken.buffer;
      continue;
    }
    const compiler::ValueType& t = obufs[b].type;
    Result<std::shared_ptr<TrackedBuffer>> buf = TrackedBuffer::Allocate(
        &device->memory_space(t.memory_kind),
        static_cast<size_t>(t.byte_size()), queue_id,
        AllocationLabel((*layout.output_labels)[b], AllocationKind::kArray,
                        layout.origin));
    if (!buf.ok()) {
      frame.out_buffers_.clear();  // freed at once: never used
      frame.FreeArenas();
      frame.holds_.clear();
      GiveBack(args);
      return buf.status();
    }
    frame.out_buffers_[b] = std::move(buf).value();
  }

  // 4. Where each value lives in this call (output-copy targets appended).
  std::vector<void*> outputs(obufs.size());
  for (size_t b = 0; b < obufs.size(); ++b) {
    outputs[b] = frame.out_buffers_[b]->data();
  }
  const auto& constants = *layout.constants;
  Status bound = layout.slots->Bind(
      param_data.data(), outputs.data(), frame.arenas_,
      [&constants](int value, int64_t) -> Result<void*> {
        return const_cast<void*>(constants[value]->data());
      },
      frame.value_data_);
  if (!bound.ok()) {  // not expected: constants here are plain addresses
    frame.out_buffers_.clear();
    frame.FreeArenas();
    frame.holds_.clear();
    GiveBack(args);
    return bound;
  }
  return frame;
}

std::vector<Array> CallFrame::Finish(const Event& done,
                                     std::vector<CallArgument>& args) {
  const compiler::Program& p = *layout_.program;
  const auto& obufs = layout_.assignment->output_buffers;
  // Release inputs and temporaries after the call, define outputs.
  for (UsageHold& h : holds_) h.Finish(done);
  holds_.clear();
  for (int k = 0; k < kNumMemoryKinds; ++k) {
    if (arenas_[k]) {
      device_->memory_space(static_cast<MemoryKind>(k))
          .FreeAfter(arenas_[k], {done});
      arenas_[k] = nullptr;
    }
  }
  for (CallArgument& a : args) {
    if (a.donated) {
      if (!a.taken.buffer->borrowed()) {
        a.taken.buffer->memory_space()->RecordUse(
            TraceRecord::Kind::kDonate, a.taken.buffer->data(),
            *layout_.name);
      }
      a.taken.buffer->ResetForNewOwner(done);
      a.taken.buffer.reset();  // unusable storage is freed once `done` is
    }
  }
  for (size_t b = 0; b < obufs.size(); ++b) {
    if (obufs[b].aliased_parameter < 0) {
      out_buffers_[b]->SetDefinitionEvent(done);
    }
  }

  // Output arrays.
  std::vector<Array> outputs;
  std::vector<Array> by_buffer(obufs.size());
  for (const OutputSource& src : layout_.assignment->outputs) {
    if (src.kind == OutputSource::Kind::kParameter) {
      outputs.push_back(args[src.index].array);
      continue;
    }
    Array& a = by_buffer[src.index];
    if (!a.valid()) {
      const compiler::ValueType& t = p.type(src.value);
      a = Array(ArrayImpl::Create(device_, t.memory_kind, t.shape, t.dtype,
                                  out_buffers_[src.index]));
    }
    outputs.push_back(a);
  }
  out_buffers_.clear();
  return outputs;
}

}  // namespace baton
