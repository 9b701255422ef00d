#include "baton/compiler/memory_schedule.h"

#include <algorithm>
#include <set>
#include <utility>

#include "baton/compiler/buffer_assignment.h"
#include "baton/compiler/effects.h"
#include "baton/compiler/step_plan.h"

namespace baton::compiler {
namespace {

// The buffer classes of buffer_assignment.h, followed as steps are
// scheduled: which values share storage, and how many unscheduled steps
// still read it. Indexed by the class's first value (its root).
struct LiveBuffers {
  std::vector<ValueId> root;   // per value; kNoValue until it has storage
  std::vector<int> remaining;  // per root: unscheduled readers of the class
  std::vector<bool> pinned;    // per root: holds an output (never freed)
  std::vector<bool> temp;      // per root: neither parameter nor constant
  std::vector<bool> writable;  // per root: may be overwritten in place
};

// Device bytes and other-kind bytes a step would add to what is alive.
struct Delta {
  int64_t device = 0;
  int64_t other = 0;
  ValueId join = kNoValue;  // class the result would share, if any
  // The result is an output that could overwrite a donated parameter it
  // reads, once that parameter's other readers have run: computed now, it
  // would need storage of its own while the parameter's is freed unused.
  bool waits_for_donation = false;
};

class Scheduler {
 public:
  Scheduler(const Program& program, const std::vector<bool>& donated,
            const std::vector<bool>& fresh_outputs)
      : p_(program),
        plan_(PlanSteps(program)),
        fresh_(FreshValues(program, fresh_outputs)) {
    const int n = p_.num_values();
    readers_.assign(n, 0);
    for (const Step& s : plan_.steps) {
      for (ValueId m : s.inputs) ++readers_[m];
    }
    is_output_.assign(n, false);
    for (ValueId o : p_.outputs()) is_output_[o] = true;
    live_.root.assign(n, kNoValue);
    live_.remaining.assign(n, 0);
    live_.pinned.assign(n, false);
    live_.temp.assign(n, false);
    live_.writable.assign(n, false);
    for (ValueId v = 0; v < n; ++v) {
      const Instruction& inst = p_.instruction(v);
      if (inst.kind() == OpKind::kParameter) {
        const int index = inst.attrs_as<ParameterAttrs>().index;
        NewClass(v, /*temp=*/false,
                 index < static_cast<int>(donated.size()) && donated[index]);
      } else if (inst.kind() == OpKind::kConstant) {
        NewClass(v, /*temp=*/false, /*writable=*/false);
      }
    }
  }

  // Step indices in the order they should run.
  std::vector<int> Order() {
    const int num_steps = static_cast<int>(plan_.steps.size());
    std::vector<int> pending(num_steps, 0);
    std::vector<std::vector<int>> consumers(num_steps);
    for (int s = 0; s < num_steps; ++s) {
      for (ValueId m : plan_.steps[s].inputs) {
        const int t = plan_.step_of[m];
        if (t < 0) continue;
        ++pending[s];  // inputs are distinct, so producers are too
        consumers[t].push_back(s);
      }
    }
    // Effects run in program order: each waits for the one before it
    // (effects.h), as if it read that one's result.
    int last_effect = -1;
    for (int s = 0; s < num_steps; ++s) {
      if (!HasSideEffect(p_.instruction(plan_.steps[s].result).attrs)) continue;
      if (last_effect >= 0) {
        ++pending[s];
        consumers[last_effect].push_back(s);
      }
      last_effect = s;
    }
    std::set<int> ready;  // by original position
    for (int s = 0; s < num_steps; ++s) {
      if (pending[s] == 0) ready.insert(s);
    }
    std::vector<int> order;
    order.reserve(num_steps);
    while (!ready.empty()) {
      // The pullable step that frees the most (device bytes first), the
      // earliest of equals; else the next one in the original order that
      // does not wait for a donated buffer's other readers (else the next).
      int next = *ready.begin();
      Delta best;
      bool found = false;
      for (int s : ready) {
        if (!Evaluate(s).waits_for_donation) {
          next = s;
          break;
        }
      }
      for (int s : ready) {
        const Delta d = Evaluate(s);
        if (!Pullable(s, d)) continue;
        if (!found || d.device < best.device ||
            (d.device == best.device && d.other < best.other)) {
          next = s;
          best = d;
          found = true;
        }
      }
      ready.erase(next);
      Schedule(next);
      order.push_back(next);
      for (int c : consumers[next]) {
        if (--pending[c] == 0) ready.insert(c);
      }
    }
    return order;
  }

  const StepPlan& plan() const { return plan_; }

 private:
  void NewClass(ValueId v, bool temp, bool writable) {
    live_.root[v] = v;
    live_.remaining[v] = readers_[v];
    live_.pinned[v] = is_output_[v];
    live_.temp[v] = temp;
    live_.writable[v] = writable;
  }

  // Whether running `s` now frees at least what it allocates.
  bool Pullable(int s, const Delta& d) const {
    // A same-kind transfer is an optimization barrier in front of a
    // checkpoint's recomputation: it must stay where the backward pass
    // needs it, never move up into the forward pass.
    if (IsSameKindTransfer(p_, plan_.steps[s].result)) return false;
    // A region step stays in program order (its regions' own memory is not
    // modelled here).
    if (plan_.steps[s].kind == Step::Kind::kRegion) return false;
    if (d.waits_for_donation) return false;
    return d.device < 0 || (d.device == 0 && d.other <= 0);
  }

  Delta Evaluate(int s) const {
    const Step& step = plan_.steps[s];
    const ValueId v = step.result;
    const ValueType& vt = p_.type(v);
    const Instruction& inst = p_.instruction(v);
    // Readers of each class among the step's inputs (few: a linear scan).
    std::vector<std::pair<ValueId, int>> reads;
    for (ValueId m : step.inputs) {
      const ValueId r = live_.root[m];
      auto it = std::find_if(reads.begin(), reads.end(),
                             [&](const auto& e) { return e.first == r; });
      if (it == reads.end()) {
        reads.emplace_back(r, 1);
      } else {
        ++it->second;
      }
    }
    auto dies = [&](ValueId r) {
      for (const auto& [root, count] : reads) {
        if (root == r) return !live_.pinned[r] && live_.remaining[r] == count;
      }
      return false;
    };
    Delta d;
    // Views that share their operand's buffer (buffer_assignment.h).
    // A fresh output never shares a parameter's (donated) storage.
    auto allowed = [&](ValueId r) { return !fresh_[v] || live_.temp[r]; };
    if (inst.kind() == OpKind::kReshape) {
      const ValueId r = live_.root[inst.operands[0]];
      if (live_.writable[r] && p_.type(r).memory_kind == vt.memory_kind &&
          allowed(r)) {
        d.join = r;
      }
    } else if (IsSameKindTransfer(p_, v)) {
      const ValueId r = live_.root[inst.operands[0]];
      if ((live_.writable[r] || !is_output_[v]) && allowed(r)) d.join = r;
    }
    if (d.join == kNoValue && InPlaceCapable(p_, step)) {
      // As buffer assignment chooses (buffer_assignment.cc).
      const InPlaceTargets targets = InPlaceTargetsOf(p_, step);
      for (ValueId o : targets.candidates) {
        const ValueId r = live_.root[o];
        if (!allowed(r) || !live_.writable[r] || !dies(r) ||
            p_.type(r).byte_size() != vt.byte_size() ||
            p_.type(r).memory_kind != vt.memory_kind ||
            p_.type(o).num_elements() != vt.num_elements()) {
          continue;
        }
        if (std::any_of(targets.must_not_share.begin(),
                        targets.must_not_share.end(),
                        [&](ValueId x) { return live_.root[x] == r; })) {
          continue;
        }
        if (d.join == kNoValue || (!live_.temp[r] && live_.temp[d.join])) {
          d.join = r;  // prefer donated storage, as buffer assignment does
        }
      }
      if (is_output_[v] && !fresh_[v] &&
          (d.join == kNoValue || live_.temp[d.join])) {
        for (ValueId o : step.inputs) {
          const ValueId r = live_.root[o];
          if (live_.writable[r] && !live_.temp[r] && !dies(r) &&
              p_.type(r).byte_size() == vt.byte_size() &&
              p_.type(r).memory_kind == vt.memory_kind) {
            d.waits_for_donation = true;
          }
        }
      }
    }
    auto add = [&](const ValueType& t, int64_t bytes) {
      (t.memory_kind == MemoryKind::kDevice ? d.device : d.other) += bytes;
    };
    for (const auto& [r, count] : reads) {
      if (r != d.join && live_.temp[r] && dies(r)) {
        add(p_.type(r), -p_.type(r).byte_size());
      }
    }
    if (step.kind == Step::Kind::kRegion) {
      for (ValueId m : step.members) add(p_.type(m), p_.type(m).byte_size());
      return d;
    }
    if (d.join == kNoValue) add(vt, vt.byte_size());
    return d;
  }

  void Schedule(int s) {
    const Delta d = Evaluate(s);
    const Step& step = plan_.steps[s];
    for (ValueId m : step.inputs) --live_.remaining[live_.root[m]];
    if (step.kind == Step::Kind::kRegion) {
      for (ValueId m : step.members) {
        NewClass(m, /*temp=*/true, /*writable=*/true);
      }
      return;
    }
    const ValueId v = step.result;
    if (d.join == kNoValue) {
      NewClass(v, /*temp=*/true, /*writable=*/true);
      return;
    }
    live_.root[v] = d.join;
    live_.remaining[d.join] += readers_[v];
    if (is_output_[v]) live_.pinned[d.join] = true;
  }

  const Program& p_;
  const StepPlan plan_;
  const std::vector<bool> fresh_;  // per value (FreshValues)
  std::vector<int> readers_;  // per value: steps that read it
  std::vector<bool> is_output_;
  LiveBuffers live_;
};

// Builds the program with the steps in `order`: parameters first, every
// other value not in a step (constant, virtual scalar) right before its
// first user.
Program Emit(const Program& p, const StepPlan& plan,
             const std::vector<int>& order) {
  const int n = p.num_values();
  Program out;
  std::vector<ValueId> remap(n, kNoValue);
  for (int i = 0; i < p.num_parameters(); ++i) {
    remap[p.parameter(i)] = out.AddParameter(p.parameter_type(i)).value();
  }
  // Re-adding checked instructions of a valid program, operands first,
  // cannot fail. Recursion depth is bounded by chains of values outside
  // steps (broadcasts of constants), which are short.
  auto emit = [&](auto& self, ValueId v) -> void {
    if (remap[v] != kNoValue) return;
    const Instruction& inst = p.instruction(v);
    OperandList operands;
    for (ValueId o : inst.operands) {
      self(self, o);
      operands.push_back(remap[o]);
    }
    remap[v] = out.Add(inst.attrs, operands).value();
  };
  for (int s : order) {
    for (ValueId m : plan.steps[s].members) emit(emit, m);
  }
  for (ValueId v = 0; v < n; ++v) emit(emit, v);  // e.g. constant outputs
  std::vector<ValueId> outputs;
  for (ValueId o : p.outputs()) outputs.push_back(remap[o]);
  (void)out.SetOutputs(std::move(outputs));
  return out;
}

}  // namespace

Program ScheduleForMemory(const Program& program,
                          const std::vector<bool>& donated,
                          const std::vector<bool>& fresh_outputs) {
  Scheduler scheduler(program, donated, fresh_outputs);
  const std::vector<int> order = scheduler.Order();
  bool unchanged = true;
  for (size_t i = 0; i < order.size(); ++i) {
    unchanged &= order[i] == static_cast<int>(i);
  }
  if (unchanged) return program;
  return Emit(program, scheduler.plan(), order);
}

}  // namespace baton::compiler
