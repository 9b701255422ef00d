#include "baton/compiler/buffer_assignment.h"

#include <algorithm>
#include <string>

#include "baton/compiler/arena_packing.h"
#include "baton/compiler/fused_tiles.h"

namespace baton::compiler {
namespace {

constexpr int64_t kArenaAlignment = 64;

int64_t AlignUp(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

// One buffer: a set of values sharing storage.
struct BufferClass {
  std::vector<ValueId> values;
  int def = 0;        // first step writing it (-1: exists before the call)
  int last_use = -1;  // last step reading it (num_steps: an output)
  int parameter = -1;
  bool donated = false;
  bool constant = false;
  bool output = false;
  ValueType type;  // of its first value (byte size and kind are shared)
  bool writable() const { return constant ? false : parameter < 0 || donated; }
};

// Why `cls` (the buffer of operand %o) cannot take an update written at
// step s, or "" when it can.
std::string WhyNotInPlace(const Program& program, const BufferClass& cls,
                          ValueId o, int s, int num_steps,
                          const std::vector<int>& last_use) {
  if (cls.constant) return "its operand %" + std::to_string(o) + " is a constant";
  if (cls.parameter >= 0 && !cls.donated) {
    return "its operand is argument " + std::to_string(cls.parameter) +
           ", which is not donated";
  }
  if (cls.last_use > s) {
    for (ValueId v : cls.values) {
      if (last_use[v] >= num_steps) {
        return "its operand %" + std::to_string(o) +
               " is returned as an output as well";
      }
    }
    return "its operand %" + std::to_string(o) +
           " is read again after the update";
  }
  (void)program;
  return "";
}

}  // namespace

std::vector<bool> FreshValues(const Program& program,
                              const std::vector<bool>& fresh_outputs) {
  std::vector<bool> fresh(program.num_values(), false);
  if (fresh_outputs.empty()) return fresh;
  const auto& outs = program.outputs();
  for (size_t i = 0; i < outs.size(); ++i) {
    if (i < fresh_outputs.size() && fresh_outputs[i]) fresh[outs[i]] = true;
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    if (i >= fresh_outputs.size() || !fresh_outputs[i]) fresh[outs[i]] = false;
  }
  // A parameter returned as it is stays what it is.
  for (ValueId p : program.parameters()) fresh[p] = false;
  return fresh;
}

bool IsSameKindTransfer(const Program& program, ValueId v) {
  const Instruction& inst = program.instruction(v);
  const auto* t = inst.attrs_if<TransferAttrs>();
  return t != nullptr &&
         program.type(inst.operands[0]).memory_kind == t->memory_kind;
}

int64_t FusionScratchBytes(const Program& program, const Step& step,
                           const FusionTiling& tiling) {
  if (step.kind == Step::Kind::kFusedReduce) {
    return PlanFusedTiles(program, ProducerOf(step), tiling).scratch_bytes();
  }
  if (step.kind != Step::Kind::kFusedElementwise) return 0;
  return PlanFusedTiles(program, step, tiling).scratch_bytes();
}

std::string MemoryAnalysis::ToString() const {
  return "argument " + std::to_string(argument_size_in_bytes) + " B, output " +
         std::to_string(output_size_in_bytes) + " B, alias " +
         std::to_string(alias_size_in_bytes) + " B, temp " +
         std::to_string(temp_size_in_bytes) + " B, constant " +
         std::to_string(constant_size_in_bytes) + " B, peak " +
         std::to_string(peak_memory_in_bytes) + " B";
}

BufferAssignment AssignBuffers(const Program& program, const StepPlan& plan,
                               const std::vector<bool>& donated,
                               int num_threads, const FusionTiling& tiling,
                               const std::vector<int64_t>& step_scratch_bytes,
                               const std::vector<bool>& fresh_outputs) {
  const std::vector<bool> fresh = FreshValues(program, fresh_outputs);
  const int n = program.num_values();
  const int num_steps = static_cast<int>(plan.steps.size());

  // Liveness per value, in step indices.
  std::vector<int> last_use(n, -1);
  for (int s = 0; s < num_steps; ++s) {
    for (ValueId v : plan.steps[s].inputs)
      last_use[v] = std::max(last_use[v], s);
  }
  for (ValueId o : program.outputs()) last_use[o] = num_steps;

  std::vector<bool> is_output(n, false);
  for (ValueId o : program.outputs()) is_output[o] = true;

  std::vector<BufferClass> classes;
  std::vector<int> class_of(n, -1);
  auto new_class = [&](ValueId v, int def) {
    BufferClass c;
    c.values = {v};
    c.def = def;
    c.last_use = std::max(def, last_use[v]);
    c.type = program.type(v);
    class_of[v] = static_cast<int>(classes.size());
    classes.push_back(std::move(c));
  };
  auto join = [&](ValueId v, int cls) {
    class_of[v] = cls;
    classes[cls].values.push_back(v);
    classes[cls].last_use = std::max(classes[cls].last_use, last_use[v]);
  };

  for (int p = 0; p < program.num_parameters(); ++p) {
    const ValueId v = program.parameter(p);
    new_class(v, -1);
    classes.back().parameter = p;
    classes.back().donated = p < static_cast<int>(donated.size()) && donated[p];
  }
  for (ValueId v = 0; v < n; ++v) {
    if (program.instruction(v).kind() == OpKind::kConstant) {
      new_class(v, -1);
      classes.back().constant = true;
    }
  }

  BufferAssignment out;
  out.step_is_noop.assign(num_steps, false);
  for (int s = 0; s < num_steps; ++s) {
    const Step& step = plan.steps[s];
    const ValueId v = step.result;
    const ValueType& vt = program.type(v);
    const Instruction& inst = program.instruction(v);
    if (step.kind == Step::Kind::kRegion) {
      // Carry k (while: every result; scan: the first num_carries) is
      // written over operand k where that operand's storage dies here and
      // nothing else the step reads lives in it; other results are fresh.
      int num_carries = 0;
      if (const auto* w = inst.attrs_if<WhileAttrs>()) num_carries = w->num_carries;
      if (const auto* sc = inst.attrs_if<ScanAttrs>()) num_carries = sc->num_carries;
      std::vector<int> taken;
      for (size_t k = 0; k < step.members.size(); ++k) {
        const ValueId m = step.members[k];
        if (static_cast<int>(k) >= num_carries) {
          new_class(m, s);
          continue;
        }
        const ValueId o = inst.operands[static_cast<int>(k)];
        const int c = class_of[o];
        std::string why =
            WhyNotInPlace(program, classes[c], o, s, num_steps, last_use);
        // A constant initial value has nothing to overwrite: the loop's
        // buffer is where the carry first materializes, not a copy of data.
        const bool from_constant = classes[c].constant;
        if (why.empty()) {
          for (int j = 0; j < inst.operands.size(); ++j) {
            if (j != static_cast<int>(k) && class_of[inst.operands[j]] == c) {
              why = "its initial value %" + std::to_string(o) +
                    " is also operand " + std::to_string(j) + " of the loop";
            }
          }
          if (std::find(taken.begin(), taken.end(), c) != taken.end()) {
            why = "its initial value's storage is already another carry's";
          }
          if (classes[c].type.memory_kind != program.type(m).memory_kind) {
            why = "its initial value is in another memory kind";
          }
        }
        if (why.empty()) {
          join(m, c);
          taken.push_back(c);
          continue;
        }
        new_class(m, s);
        if (from_constant) continue;
        out.in_place_misses.push_back(InPlaceMiss{
            m,
            "loop carry " + std::to_string(k) + " of " +
                std::string(op_kind_name(inst.kind())) + " %" +
                std::to_string(v),
            why + " (the loop starts from a copy)"});
      }
      continue;
    }
    if (inst.kind() == OpKind::kReshape) {
      const int c = class_of[inst.operands[0]];
      // A reshape's result is in device memory even when its operand is
      // not (only transfers change kinds): it shares only a same-kind buffer.
      if (c >= 0 && classes[c].writable() &&
          classes[c].type.memory_kind == vt.memory_kind &&
          !(fresh[v] && classes[c].parameter >= 0)) {
        join(v, c);
        out.step_is_noop[s] = true;
        continue;
      }
    }
    if (IsSameKindTransfer(program, v)) {
      // An optimization barrier (a checkpoint's recomputation starts from
      // one): it only had to keep CSE apart, its copy is never needed. Both
      // values read the same bytes; nothing writes them while the class is
      // alive (in place needs the whole class dead). Not for an output of
      // a read-only buffer: that would return the parameter or constant
      // itself.
      const int c = class_of[inst.operands[0]];
      if (c >= 0 && (classes[c].writable() || !is_output[v]) &&
          !(fresh[v] && classes[c].parameter >= 0)) {
        join(v, c);
        out.step_is_noop[s] = true;
        continue;
      }
    }
    int chosen = -1;
    if (InPlaceCapable(program, step)) {
      const InPlaceTargets targets = InPlaceTargetsOf(program, step);
      for (ValueId o : targets.candidates) {
        const int c = class_of[o];
        if (c < 0) continue;
        const BufferClass& cls = classes[c];
        if (fresh[v] && cls.parameter >= 0) continue;
        if (!cls.writable() || cls.last_use != s ||
            cls.type.byte_size() != vt.byte_size() ||
            cls.type.memory_kind != vt.memory_kind ||
            program.type(o).num_elements() != vt.num_elements()) {
          continue;
        }
        // The values read while the result is written (dus/scatter: the
        // updates and indices; a dot accumulate: the dot's operands) must
        // not live in the target.
        if (std::any_of(targets.must_not_share.begin(),
                        targets.must_not_share.end(),
                        [&](ValueId x) { return class_of[x] == c; })) {
          continue;
        }
        // Prefer donated storage: that is what makes donation pay off.
        if (chosen < 0 || (cls.donated && !classes[chosen].donated)) chosen = c;
      }
    }
    if (chosen >= 0) {
      join(v, chosen);
    } else {
      new_class(v, s);
      if (step.kind == Step::Kind::kOp &&
          (inst.kind() == OpKind::kDynamicUpdateSlice ||
           inst.kind() == OpKind::kScatter)) {
        const ValueId o = inst.operands[0];
        const int c = class_of[o];
        std::string why = WhyNotInPlace(program, classes[c], o, s, num_steps,
                                        last_use);
        if (why.empty()) {
          why = "its updates or indices share the operand's storage";
        }
        out.in_place_misses.push_back(InPlaceMiss{
            v, OpDisplayName(inst.attrs) + " %" + std::to_string(v), why});
      }
    }
  }
  for (ValueId o : program.outputs()) classes[class_of[o]].output = true;

  // Place buffers.
  out.location.assign(n, BufferLocation{});
  std::vector<int> class_output_buffer(classes.size(), -1);
  std::vector<ValueId> class_output_value(classes.size(), kNoValue);
  std::vector<bool> donated_used(program.num_parameters(), false);
  MemoryAnalysis& a = out.analysis;

  auto add_output_buffer = [&](const ValueType& type, int aliased) {
    out.output_buffers.push_back(OutputBuffer{type, aliased});
    return static_cast<int>(out.output_buffers.size()) - 1;
  };

  // Program outputs, in order.
  std::vector<ValueId> seen_outputs;
  for (ValueId o : program.outputs()) {
    const int c = class_of[o];
    BufferClass& cls = classes[c];
    OutputSource src;
    src.value = o;
    const bool repeat = std::find(seen_outputs.begin(), seen_outputs.end(),
                                  o) != seen_outputs.end();
    if (cls.parameter >= 0 && !cls.donated) {
      src.kind = OutputSource::Kind::kParameter;  // the value is the parameter
      src.index = cls.parameter;
    } else if (cls.constant || (class_output_value[c] != kNoValue &&
                                class_output_value[c] != o)) {
      // A constant, or a second view of a buffer already returned: copy.
      src.kind = OutputSource::Kind::kCopy;
      src.index = add_output_buffer(program.type(o), -1);
    } else {
      if (class_output_buffer[c] < 0) {
        int aliased = -1;
        if (cls.donated) {
          aliased = cls.parameter;
          donated_used[cls.parameter] = true;
        }
        class_output_buffer[c] = add_output_buffer(cls.type, aliased);
        class_output_value[c] = o;
      }
      src.kind = OutputSource::Kind::kBuffer;
      src.index = class_output_buffer[c];
    }
    out.outputs.push_back(src);
    if (!repeat) {
      a.output_size_in_bytes += program.type(o).byte_size();
      seen_outputs.push_back(o);
    }
  }

  // Donated buffers no output took: give them to fresh outputs of the same
  // byte size, dtype and kind that start after the donated buffer is dead.
  for (size_t c = 0; c < classes.size(); ++c) {
    const BufferClass& d = classes[c];
    if (!d.donated || donated_used[d.parameter] || d.output) continue;
    for (size_t k = 0; k < classes.size(); ++k) {
      const int b = class_output_buffer[k];
      if (b < 0 || out.output_buffers[b].aliased_parameter >= 0) continue;
      const BufferClass& target = classes[k];
      bool target_fresh = false;
      for (ValueId tv : target.values) target_fresh |= fresh[tv];
      if (target_fresh) continue;
      if (target.type.byte_size() == d.type.byte_size() &&
          target.type.dtype == d.type.dtype &&
          target.type.memory_kind == d.type.memory_kind &&
          d.last_use < target.def) {
        out.output_buffers[b].aliased_parameter = d.parameter;
        donated_used[d.parameter] = true;
        break;
      }
    }
  }
  for (const OutputBuffer& b : out.output_buffers) {
    if (b.aliased_parameter >= 0) a.alias_size_in_bytes += b.type.byte_size();
  }
  for (int p = 0; p < program.num_parameters(); ++p) {
    a.argument_size_in_bytes += program.parameter_type(p).byte_size();
    if (p < static_cast<int>(donated.size()) && donated[p] &&
        !donated_used[p]) {
      out.unusable_donations.push_back(p);
    }
  }

  // Temporaries: per memory kind, packed by lifetime.
  std::array<std::vector<BufferClass*>, kNumMemoryKinds> temps;
  std::array<std::vector<int>, kNumMemoryKinds> temp_ids;
  for (size_t c = 0; c < classes.size(); ++c) {
    BufferClass& cls = classes[c];
    if (cls.parameter >= 0 || cls.constant || cls.output) continue;
    const int k = static_cast<int>(cls.type.memory_kind);
    temps[k].push_back(&cls);
    temp_ids[k].push_back(static_cast<int>(c));
  }
  std::vector<int64_t> class_offset(classes.size(), 0);
  out.step_scratch_offset.assign(num_steps, -1);
  for (int k = 0; k < kNumMemoryKinds; ++k) {
    std::vector<ArenaInterval> intervals;
    for (const BufferClass* c : temps[k]) {
      intervals.push_back(ArenaInterval{
          AlignUp(std::max<int64_t>(c->type.byte_size(), 1), kArenaAlignment),
          c->def, c->last_use});
    }
    // Region steps' scratch: device memory alive during the step only.
    std::vector<int> scratch_steps;
    if (k == static_cast<int>(MemoryKind::kDevice)) {
      for (int st = 0; st < num_steps &&
                       st < static_cast<int>(step_scratch_bytes.size());
           ++st) {
        if (step_scratch_bytes[st] <= 0) continue;
        intervals.push_back(ArenaInterval{
            AlignUp(step_scratch_bytes[st], kArenaAlignment), st, st});
        scratch_steps.push_back(st);
      }
    }
    const ArenaPacking packing = PackArena(intervals);
    out.temp_arena_bytes[k] = packing.arena_bytes;
    for (size_t i = 0; i < temp_ids[k].size(); ++i) {
      class_offset[temp_ids[k][i]] = packing.offsets[i];
    }
    for (size_t i = 0; i < scratch_steps.size(); ++i) {
      out.step_scratch_offset[scratch_steps[i]] =
          packing.offsets[temp_ids[k].size() + i];
    }
    a.temp_size_in_bytes += out.temp_arena_bytes[k];
  }
  // Fusion scratch on the stack (fused_tiles.h) is not a temporary.
  int64_t scratch = 0;
  for (const Step& s : plan.steps) {
    const int64_t bytes = FusionScratchBytes(program, s, tiling);
    if (bytes > tiling.local_scratch_bytes) scratch = std::max(scratch, bytes);
  }
  a.temp_size_in_bytes += scratch * std::max(1, num_threads);

  // Per-value locations.
  for (size_t c = 0; c < classes.size(); ++c) {
    const BufferClass& cls = classes[c];
    BufferLocation loc;
    if (cls.parameter >= 0) {
      loc = {BufferLocation::Kind::kParameter, cls.parameter, 0};
    } else if (cls.constant) {
      loc = {BufferLocation::Kind::kConstant, cls.values[0], 0};
      a.constant_size_in_bytes += cls.type.byte_size();
    } else if (cls.output) {
      loc = {BufferLocation::Kind::kOutput, class_output_buffer[c], 0};
    } else {
      loc = {BufferLocation::Kind::kTemp, -1, class_offset[c]};
    }
    for (ValueId v : cls.values) out.location[v] = loc;
  }

  a.peak_memory_in_bytes = a.argument_size_in_bytes + a.output_size_in_bytes -
                           a.alias_size_in_bytes + a.temp_size_in_bytes +
                           a.constant_size_in_bytes;
  return out;
}

}  // namespace baton::compiler
