// RunInstruction: maps each IR instruction onto the kernels in kernels/.
#include "baton/backend/cpu/instruction_runner.h"

#include <cstring>

#include "baton/backend/cpu/kernels/dot.h"
#include "baton/backend/cpu/kernels/fft.h"
#include "baton/backend/cpu/kernels/indexing.h"
#include "baton/backend/cpu/kernels/linalg.h"
#include "baton/backend/cpu/kernels/reduce.h"
#include "baton/backend/cpu/kernels/shape_ops.h"
#include "baton/backend/cpu/kernels/sort.h"
#include "baton/compiler/host_callback.h"
#include "baton/core/dtype_dispatch.h"
#include "baton/runtime/parallel_copy.h"

namespace baton::cpu {

namespace c = compiler;

namespace {

// Reads a scalar integer operand (a dynamic index) as int64.
int64_t ReadIndex(const OperandData& d) {
  return VisitDType(d.type->dtype, [&](auto tag) -> int64_t {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      return static_cast<int64_t>(*static_cast<const T*>(d.data));
    } else {
      return 0;  // shape inference only admits integer indices
    }
  });
}

std::vector<int64_t> ReadIndices(std::span<const OperandData> ops,
                                 size_t first) {
  std::vector<int64_t> starts;
  for (size_t i = first; i < ops.size(); ++i) starts.push_back(ReadIndex(ops[i]));
  return starts;
}

}  // namespace

DotDimensions DotDimensionsOf(const c::DotGeneralAttrs& attrs) {
  return DotDimensions{attrs.lhs_batch, attrs.rhs_batch, attrs.lhs_contracting,
                       attrs.rhs_contracting};
}

int64_t InstructionScratchBytes(const c::Program& program,
                                const c::Instruction& inst) {
  if (inst.kind() != c::OpKind::kDotGeneral) return 0;
  return DotGeneralScratchBytes(
      inst.type.dtype, program.type(inst.operands[0]).shape,
      program.type(inst.operands[1]).shape,
      DotDimensionsOf(inst.attrs_as<c::DotGeneralAttrs>()));
}

Status RunInstruction(const c::Instruction& inst,
                      std::span<const OperandData> ops, void* out,
                      std::span<std::byte> scratch) {
  const c::ValueType& t = inst.type;
  const DType dt = t.dtype;
  switch (inst.kind()) {
    case c::OpKind::kUnary:
    case c::OpKind::kBinary:
    case c::OpKind::kCompare:
    case c::OpKind::kSelect:
    case c::OpKind::kConvert:
      return RunElementwise(inst, ops, out, t.num_elements());
    case c::OpKind::kIota:
      Iota(dt, t.shape, static_cast<int>(inst.attrs_as<c::IotaAttrs>().dimension),
           out);
      return OkStatus();
    case c::OpKind::kBroadcastInDim: {
      const auto& a = inst.attrs_as<c::BroadcastInDimAttrs>();
      BroadcastInDim(dt, ops[0].data, ops[0].type->shape,
                     a.broadcast_dimensions, out, t.shape);
      return OkStatus();
    }
    case c::OpKind::kReshape:
    case c::OpKind::kTransfer:
      // Same bytes in row-major order (a reshape that could not share its
      // operand's buffer, or a move to another memory kind).
      ParallelCopy(out, ops[0].data, static_cast<size_t>(t.byte_size()));
      return OkStatus();
    case c::OpKind::kTranspose:
      Transpose(dt, ops[0].data, ops[0].type->shape,
                inst.attrs_as<c::TransposeAttrs>().permutation, out);
      return OkStatus();
    case c::OpKind::kSlice: {
      const auto& a = inst.attrs_as<c::SliceAttrs>();
      Slice(dt, ops[0].data, ops[0].type->shape, a.start, a.limit, a.stride,
            out);
      return OkStatus();
    }
    case c::OpKind::kDynamicSlice: {
      const auto starts = ReadIndices(ops, 1);
      DynamicSlice(dt, ops[0].data, ops[0].type->shape, starts,
                   inst.attrs_as<c::DynamicSliceAttrs>().slice_sizes, out);
      return OkStatus();
    }
    case c::OpKind::kDynamicUpdateSlice: {
      const auto starts = ReadIndices(ops, 2);
      DynamicUpdateSlice(dt, ops[0].data, ops[0].type->shape, ops[1].data,
                         ops[1].type->shape, starts, out);
      return OkStatus();
    }
    case c::OpKind::kConcatenate: {
      std::vector<const void*> inputs;
      std::vector<Shape> shapes;
      for (const OperandData& d : ops) {
        inputs.push_back(d.data);
        shapes.push_back(d.type->shape);
      }
      Concatenate(dt, inputs, shapes,
                  static_cast<int>(inst.attrs_as<c::ConcatenateAttrs>().dimension),
                  out);
      return OkStatus();
    }
    case c::OpKind::kPad: {
      const auto& a = inst.attrs_as<c::PadAttrs>();
      Pad(dt, ops[0].data, ops[0].type->shape, ops[1].data, a.low, a.high,
          a.interior, out);
      return OkStatus();
    }
    case c::OpKind::kGather: {
      const auto& a = inst.attrs_as<c::GatherAttrs>();
      Gather(dt, ops[0].data, ops[0].type->shape, ops[1].data,
             ops[1].type->dtype, ops[1].type->num_elements(),
             static_cast<int>(a.axis), out, a.bounds);
      return OkStatus();
    }
    case c::OpKind::kScatter: {
      const auto& a = inst.attrs_as<c::ScatterAttrs>();
      Scatter(a.mode, dt, ops[0].data, ops[0].type->shape,
              ops[1].data, ops[1].type->dtype, ops[1].type->num_elements(),
              ops[2].data, static_cast<int>(a.axis), out);
      return OkStatus();
    }
    case c::OpKind::kReduce: {
      const auto& a = inst.attrs_as<c::ReduceAttrs>();
      Reduce(a.op, dt, ops[0].data, ops[0].type->shape, a.axes, out);
      return OkStatus();
    }
    case c::OpKind::kDotGeneral: {
      const auto& a = inst.attrs_as<c::DotGeneralAttrs>();
      DotGeneral(dt, ops[0].data, ops[0].type->shape, ops[1].data,
                 ops[1].type->shape, DotDimensionsOf(a), out, scratch);
      return OkStatus();
    }
    case c::OpKind::kSort: {
      const auto& a = inst.attrs_as<c::SortAttrs>();
      Sort(ops[0].type->dtype, ops[0].data, ops[0].type->shape,
           static_cast<int>(a.dimension), a.descending, a.indices, out);
      return OkStatus();
    }
    case c::OpKind::kLinalg: {
      const auto& a = inst.attrs_as<c::LinalgAttrs>();
      const LinalgOptions& o = a;
      const bool two = ops.size() > 1;
      Linalg(o, ops[0].type->dtype, ops[0].data, ops[0].type->shape,
             two ? ops[1].data : nullptr, two ? ops[1].type->shape : Shape{},
             out);
      return OkStatus();
    }
    case c::OpKind::kFft: {
      const auto& a = inst.attrs_as<c::FftAttrs>();
      FftMode mode = FftMode::kForward;
      switch (a.type) {
        case c::FftType::kFft:
          mode = FftMode::kForward;
          break;
        case c::FftType::kIfft:
          mode = FftMode::kInverse;
          break;
        case c::FftType::kRfft:
          mode = FftMode::kRealForward;
          break;
        case c::FftType::kIrfft:
          mode = FftMode::kRealInverse;
          break;
      }
      Fft(mode, ops[0].type->dtype, ops[0].data, ops[0].type->shape, a.lengths,
          out);
      return OkStatus();
    }
    case c::OpKind::kHostCallback: {
      std::vector<c::HostCallbackOperand> args;
      args.reserve(ops.size());
      for (const OperandData& d : ops) args.push_back({d.data, d.type});
      // The token: false, as the reference interpreter gives it.
      if (out != nullptr) *static_cast<bool*>(out) = false;
      return inst.attrs_as<c::HostCallbackAttrs>().callback->Call(args);
    }
    case c::OpKind::kParameter:
    case c::OpKind::kConstant:
      return Internal("RunInstruction: parameters and constants have storage "
                      "already and never run");
    case c::OpKind::kCall:
      return Internal("RunInstruction: calls are inlined before planning "
                      "(compiler::InlineCalls)");
    case c::OpKind::kWhile:
    case c::OpKind::kScan:
    case c::OpKind::kCase:
      return Internal("RunInstruction: control flow runs as a region step "
                      "(region_step.h)");
  }
  return Unimplemented("RunInstruction: op " +
                       std::string(c::op_kind_name(inst.kind())) +
                       " has no CPU kernel");
}

}  // namespace baton::cpu
