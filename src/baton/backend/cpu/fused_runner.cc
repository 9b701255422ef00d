#include "baton/backend/cpu/fused_runner.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <span>

#include "baton/runtime/thread_pool.h"

namespace baton::cpu {

using compiler::kNoValue;
using compiler::ValueId;

FusedStep::FusedStep(const compiler::Program& program,
                     const compiler::StepPlan& plan, const compiler::Step& step)
    : tiles_(compiler::PlanFusedTiles(program, step, kFusionTiling)),
      total_elements_(program.type(step.result).num_elements()) {
  for (size_t i = 0; i < step.members.size(); ++i) {
    Member m;
    m.inst = &program.instruction(step.members[i]);
    m.slot = tiles_.slot[i];
    m.element_bytes = static_cast<int64_t>(dtype_size(m.inst->type.dtype));
    m.broadcast = m.inst->kind() == compiler::OpKind::kBroadcastInDim &&
                  compiler::AsRegularBroadcast(program, step.members[i],
                                               &m.pattern);
    if (static_cast<size_t>(m.inst->operands.size()) > kMaxOperands) {
      too_many_operands_ = true;
    }
    for (size_t k = 0; k < static_cast<size_t>(m.inst->operands.size()); ++k) {
      const ValueId o = m.inst->operands[k];
      Operand op;
      op.type = &program.type(o);
      op.element_bytes = static_cast<int64_t>(dtype_size(op.type->dtype));
      const int producer = tiles_.operand_member[i][k];
      if (producer >= 0) {
        op.slot = tiles_.slot[producer];
      } else {
        op.scalar = plan.scalar_source[o] != kNoValue;
        op.value = op.scalar ? plan.scalar_source[o] : o;
        op.whole = k == 0 && compiler::IsTableGather(program, step.members[i]);
      }
      m.operands.push_back(op);
    }
    members_.push_back(std::move(m));
  }
  chain_ = FloatChain::TryPlan(program, plan, step, tiles_.operand_member);
}

void FusedStep::ExpandBroadcast(const Member& m, const void* src,
                                int64_t begin, int64_t count, void* dst) {
  const int64_t inner = m.pattern.inner;
  int64_t index = (begin / inner) % m.pattern.count;  // operand element
  if (inner == 1) {
    // A row repeated (a bias broadcast over a batch): the result is the
    // operand over and over, so it is copied a row's run at a time rather
    // than element by element (that loop was 6% of a training step).
    const int64_t b = m.element_bytes;
    char* d = static_cast<char*>(dst);
    const char* s = static_cast<const char*>(src);
    for (int64_t j = 0; j < count;) {
      const int64_t run = std::min(m.pattern.count - index, count - j);
      std::memcpy(d + j * b, s + index * b, static_cast<size_t>(run * b));
      j += run;
      index = 0;
    }
    return;
  }
  int64_t left = inner - begin % inner;  // result elements still from it
  auto expand = [&](auto* d, const auto* s) {
    for (int64_t j = 0; j < count;) {
      const int64_t run = std::min(left, count - j);
      std::fill(d + j, d + j + run, s[index]);
      j += run;
      left = inner;
      if (++index == m.pattern.count) index = 0;
    }
  };
  switch (m.element_bytes) {
    case 1:
      expand(static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src));
      break;
    case 2:
      expand(static_cast<uint16_t*>(dst), static_cast<const uint16_t*>(src));
      break;
    case 4:
      expand(static_cast<uint32_t*>(dst), static_cast<const uint32_t*>(src));
      break;
    case 8:
      expand(static_cast<uint64_t*>(dst), static_cast<const uint64_t*>(src));
      break;
    default: {  // complex128 and the like: element by element
      char* d = static_cast<char*>(dst);
      const char* s = static_cast<const char*>(src);
      const int64_t b = m.element_bytes;
      for (int64_t j = 0; j < count;) {
        const int64_t run = std::min(left, count - j);
        for (int64_t r = 0; r < run; ++r) {
          std::memcpy(d + (j + r) * b, s + index * b, static_cast<size_t>(b));
        }
        j += run;
        left = inner;
        if (++index == m.pattern.count) index = 0;
      }
    }
  }
}

Status FusedStep::RunRange(const std::vector<void*>& value_data, void* dst,
                           int64_t begin, int64_t count) const {
  if (too_many_operands_) {
    return Internal("fused step with an operation of more than 3 operands");
  }
  if (chain_ != nullptr) {
    chain_->Run(value_data, static_cast<float*>(dst), begin, begin + count);
    return OkStatus();
  }
  // Small steps (the common case for small arrays) keep their scratch on
  // the stack: no allocation on the dispatch path.
  alignas(64) char local[kLocalScratchBytes];
  std::unique_ptr<char[]> heap;
  char* scratch = local;
  if (tiles_.scratch_bytes() > kLocalScratchBytes) {
    heap.reset(new char[tiles_.scratch_bytes()]);
    scratch = heap.get();
  }
  auto slot_data = [&](int slot) { return scratch + slot * tiles_.slot_bytes; };
  std::array<OperandData, kMaxOperands> ops;
  const int64_t tile = tiles_.tile_elements;
  for (int64_t at = begin; at < begin + count; at += tile) {
    const int64_t n = std::min(tile, begin + count - at);
    for (const Member& m : members_) {
      size_t k = 0;
      for (const Operand& s : m.operands) {
        OperandData d;
        d.type = s.type;
        if (s.slot >= 0) {
          d.data = slot_data(s.slot);
        } else if (s.scalar) {
          d.data = value_data[s.value];
          d.scalar = true;
        } else if (s.whole) {
          d.data = value_data[s.value];
        } else {
          d.data = static_cast<const char*>(value_data[s.value]) +
                   at * s.element_bytes;
        }
        ops[k++] = d;
      }
      void* out = m.slot >= 0 ? static_cast<void*>(slot_data(m.slot))
                              : static_cast<char*>(dst) +
                                    (at - begin) * m.element_bytes;
      if (m.broadcast) {
        ExpandBroadcast(m, value_data[m.operands[0].value], at, n, out);
        continue;
      }
      BATON_RETURN_IF_ERROR(RunElementwise(
          *m.inst, std::span<const OperandData>(ops.data(), k), out, n));
    }
  }
  return OkStatus();
}

Status FusedStep::Run(const std::vector<void*>& value_data, void* out) const {
  // Chunks of whole tiles (several per chunk, so each thread sets up its
  // scratch once); the float32 chain runs in larger chunks of its own.
  const int64_t chunk = chain_ != nullptr
                            ? int64_t{1} << 16
                            : std::max<int64_t>(1, (int64_t{1} << 16) /
                                                       tiles_.tile_elements) *
                                  tiles_.tile_elements;
  const int64_t bytes = members_.back().element_bytes;
  if (total_elements_ <= chunk) {
    return RunRange(value_data, out, 0, total_elements_);
  }
  std::mutex error_mu;
  Status error;
  ThreadPool::Global().ParallelFor(
      (total_elements_ + chunk - 1) / chunk, 1, [&](int64_t c0, int64_t c1) {
        const int64_t begin = c0 * chunk;
        const int64_t end = std::min(total_elements_, c1 * chunk);
        Status s = RunRange(value_data,
                            static_cast<char*>(out) + begin * bytes, begin,
                            end - begin);
        if (!s.ok()) {
          std::lock_guard<std::mutex> lock(error_mu);
          if (error.ok()) error = std::move(s);
        }
      });
  return error;
}

}  // namespace baton::cpu
