#include "baton/backend/cpu/fused_runner.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>

#include "baton/compiler/buffer_assignment.h"
#include "baton/runtime/thread_pool.h"

namespace baton::cpu {

using compiler::kFusionTileElements;
using compiler::kNoValue;
using compiler::Program;
using compiler::Step;
using compiler::StepPlan;
using compiler::ValueId;

Status RunFusedStep(const Program& program, const StepPlan& plan,
                    const Step& step, const std::vector<void*>& value_data,
                    void* out) {
  const int64_t total = program.type(step.result).num_elements();
  const size_t num_members = step.members.size();
  // Scratch layout: one tile per inner member.
  std::vector<int64_t> scratch_offset(num_members, -1);
  int64_t scratch_bytes = 0;
  for (size_t i = 0; i + 1 < num_members; ++i) {
    scratch_offset[i] = scratch_bytes;
    scratch_bytes +=
        kFusionTileElements *
        static_cast<int64_t>(dtype_size(program.type(step.members[i]).dtype));
  }
  // Member index of each fused value (for operand lookup).
  auto member_index = [&](ValueId v) -> int {
    for (size_t i = 0; i < num_members; ++i) {
      if (step.members[i] == v) return static_cast<int>(i);
    }
    return -1;
  };
  struct OperandSource {
    int member = -1;          // inner member producing it, or
    ValueId value = kNoValue; // a materialized value (full or scalar)
    bool scalar = false;
  };
  std::vector<std::vector<OperandSource>> sources(num_members);
  for (size_t i = 0; i < num_members; ++i) {
    for (ValueId o : program.instruction(step.members[i]).operands) {
      OperandSource src;
      src.member = member_index(o);
      if (src.member < 0) {
        src.scalar = plan.scalar_source[o] != kNoValue;
        src.value = src.scalar ? plan.scalar_source[o] : o;
      }
      sources[i].push_back(src);
    }
  }

  const int64_t num_tiles = (total + kFusionTileElements - 1) / kFusionTileElements;
  std::mutex error_mu;
  Status error;
  // Small arrays: one chunk; large ones: several tiles per chunk so each
  // thread allocates its scratch once.
  ThreadPool::Global().ParallelFor(
      num_tiles, std::max<int64_t>(1, (int64_t{1} << 16) / kFusionTileElements),
      [&](int64_t tile_begin, int64_t tile_end) {
        std::unique_ptr<char[]> scratch(new char[std::max<int64_t>(scratch_bytes, 1)]);
        std::vector<OperandData> ops;
        for (int64_t t = tile_begin; t < tile_end; ++t) {
          const int64_t begin = t * kFusionTileElements;
          const int64_t count = std::min(kFusionTileElements, total - begin);
          for (size_t i = 0; i < num_members; ++i) {
            const auto& inst = program.instruction(step.members[i]);
            ops.clear();
            for (size_t k = 0; k < sources[i].size(); ++k) {
              const OperandSource& s = sources[i][k];
              const ValueId operand = inst.operands[k];
              OperandData d;
              d.type = &program.type(operand);
              if (s.member >= 0) {
                d.data = scratch.get() + scratch_offset[s.member];
              } else if (s.scalar) {
                d.data = value_data[s.value];
                d.scalar = true;
              } else {
                d.data = static_cast<const char*>(value_data[s.value]) +
                         begin * static_cast<int64_t>(dtype_size(d.type->dtype));
              }
              ops.push_back(d);
            }
            void* dst =
                i + 1 == num_members
                    ? static_cast<char*>(out) +
                          begin * static_cast<int64_t>(
                                      dtype_size(inst.type.dtype))
                    : static_cast<void*>(scratch.get() + scratch_offset[i]);
            Status s = RunElementwise(inst, ops, dst, count);
            if (!s.ok()) {
              std::lock_guard<std::mutex> lock(error_mu);
              if (error.ok()) error = s;
              return;
            }
          }
        }
      });
  return error;
}

}  // namespace baton::cpu
