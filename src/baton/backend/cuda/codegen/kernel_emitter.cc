#include "baton/backend/cuda/codegen/kernel_emitter.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string_view>

#include "baton/backend/cuda/codegen/emit_context.h"

namespace baton::cuda::codegen {

using compiler::OpKind;
using compiler::Step;

namespace {

// The prelude's text, embedded at build time (device_prelude.inc is also a
// header of the host-side test, so it is included as a raw string here).
constexpr std::string_view kPrelude =
#include "baton/backend/cuda/codegen/device_prelude_text.inc"
    ;

// A step that reads or writes a complex value: the device prelude has no
// complex type yet.
bool TouchesComplex(const compiler::Program& program, const Step& step) {
  auto complex_value = [&](compiler::ValueId v) {
    return is_complex(program.type(v).dtype);
  };
  return std::any_of(step.members.begin(), step.members.end(), complex_value) ||
         std::any_of(step.inputs.begin(), step.inputs.end(), complex_value);
}

Status EmitStep(EmitContext& ctx, const Step& step) {
  if (TouchesComplex(ctx.program(), step)) {
    return ctx.NotOnCuda(
        "complex numbers (step of %" + std::to_string(step.result) + ")",
        "the generated kernels have no complex type yet; compute this part "
        "on a CPU device and move the result with bt.device_put");
  }
  switch (step.kind) {
    case Step::Kind::kFusedElementwise:
      return EmitElementwiseStep(ctx, step);
    case Step::Kind::kFusedReduce:
      return EmitReduceStep(ctx, step);
    case Step::Kind::kRegion:
      return ctx.NotOnCuda(
          "control flow (" +
              std::string(compiler::op_kind_name(
                  ctx.program().instruction(step.result).kind())) +
              " %" + std::to_string(step.result) + ")",
          "its regions run on the CPU backend only");
    case Step::Kind::kDotAccumulate:  // planned only with dot_accumulate
      return ctx.NotOnCuda("a dot accumulate step (%" +
                               std::to_string(step.result) + ")",
                           "the CUDA backend plans its steps without them");
    case Step::Kind::kOp:
      break;
  }
  const compiler::Instruction& inst = ctx.program().instruction(step.result);
  if (compiler::IsElementwise(inst.kind()) ||
      compiler::IsTableGather(ctx.program(), step.result) ||
      inst.kind() == OpKind::kIota) {
    return EmitElementwiseStep(ctx, step);
  }
  switch (inst.kind()) {
    case OpKind::kReduce:
      return EmitReduceStep(ctx, step);
    case OpKind::kDotGeneral:
      return EmitDotStep(ctx, step);
    case OpKind::kBroadcastInDim:
    case OpKind::kReshape:
    case OpKind::kTranspose:
    case OpKind::kSlice:
    case OpKind::kDynamicSlice:
    case OpKind::kDynamicUpdateSlice:
    case OpKind::kConcatenate:
    case OpKind::kPad:
    case OpKind::kGather:
    case OpKind::kScatter:
    case OpKind::kTransfer:
      return EmitShapeStep(ctx, step);
    default:
      return ctx.NotOnCuda(
          std::string(compiler::op_kind_name(inst.kind())) + " %" +
              std::to_string(step.result),
          "baton's CUDA kernels cover elementwise ops, reductions, shape "
          "ops, gather/scatter and dot_general; compute this part on a CPU "
          "device and move the result with bt.device_put");
  }
}

// With $BATON_DUMP_CUDA_SOURCE set to a folder, writes `source` there as
// <name>.<hash>.cu (name reduced to [A-Za-z0-9_-]); a failure to write is
// reported on stderr and does not fail the emission.
void MaybeDump(const std::string& name, const std::string& source) {
  const char* dir = std::getenv("BATON_DUMP_CUDA_SOURCE");
  if (dir == nullptr || *dir == '\0') return;
  std::string stem;
  for (char c : name) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                       (c >= '0' && c <= '9') || c == '_' || c == '-';
    stem += plain ? c : '_';
  }
  char hash[17];
  std::snprintf(
      hash, sizeof hash, "%016llx",
      static_cast<unsigned long long>(std::hash<std::string>()(source)));
  const std::string path =
      std::string(dir) + "/" + stem.substr(0, 100) + "." + hash + ".cu";
  std::ofstream out(path, std::ios::binary);
  out << source;
  if (!out) {
    std::fprintf(stderr, "baton: BATON_DUMP_CUDA_SOURCE: cannot write %s\n",
                 path.c_str());
  }
}

}  // namespace

std::string_view DevicePrelude() { return kPrelude; }

PartitionedSource Partition(const EmittedProgram& emitted, int parts) {
  PartitionedSource out;
  const size_t kernels = emitted.kernel_text.size();
  const size_t n = std::min(kernels, static_cast<size_t>(std::max(parts, 1)));
  if (n == 0) return out;
  // Longest first, each to the lightest part; each part keeps program order.
  std::vector<size_t> by_length(kernels);
  for (size_t k = 0; k < kernels; ++k) by_length[k] = k;
  std::stable_sort(by_length.begin(), by_length.end(), [&](size_t a, size_t b) {
    return emitted.kernel_text[a].second > emitted.kernel_text[b].second;
  });
  std::vector<size_t> load(n, 0);
  out.part_of_kernel.assign(kernels, 0);
  for (size_t k : by_length) {
    const size_t part = static_cast<size_t>(
        std::min_element(load.begin(), load.end()) - load.begin());
    out.part_of_kernel[k] = static_cast<int>(part);
    load[part] += emitted.kernel_text[k].second;
  }
  const std::string head = emitted.source.substr(0, emitted.kernels_offset);
  out.sources.assign(n, head);
  for (size_t k = 0; k < kernels; ++k) {
    const auto [offset, length] = emitted.kernel_text[k];
    out.sources[static_cast<size_t>(out.part_of_kernel[k])].append(
        emitted.source, offset, length);
  }
  return out;
}

Result<EmittedProgram> EmitProgram(const compiler::Program& program,
                                   const compiler::StepPlan& plan,
                                   const EmitOptions& options,
                                   const std::string& name) {
  EmittedProgram out;
  out.source = std::string(kPrelude);
  out.source += "\nstruct KernelArgs {\n  void* p[" +
                std::to_string(kMaxKernelArgs) + "];\n};\n";
  out.kernels_offset = out.source.size();
  EmitContext ctx(program, plan, options, name, &out);
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    ctx.BeginStep(static_cast<int>(s));
    // What the step had appended when it is refused part way.
    const size_t source_size = out.source.size();
    const size_t actions = out.actions.size();
    const size_t kernels = out.kernel_names.size();
    Status emitted = EmitStep(ctx, plan.steps[s]);
    if (emitted.ok()) continue;
    if (!options.host_fallback || emitted.code() != ErrorCode::kUnimplemented) {
      return emitted;
    }
    out.source.resize(source_size);
    out.actions.resize(actions);
    out.kernel_names.resize(kernels);
    out.kernel_text.resize(kernels);
    ctx.ForgetKernelsFrom(kernels);
    out.step_scratch_bytes[s] = 0;
    Action host;
    host.kind = Action::Kind::kHostStep;
    host.step = static_cast<int>(s);
    host.host_reason = emitted.message();
    out.actions.push_back(std::move(host));
  }
  MaybeDump(name, out.source);
  return out;
}

}  // namespace baton::cuda::codegen
