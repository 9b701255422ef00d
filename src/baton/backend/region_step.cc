#include "baton/backend/region_step.h"

#include <algorithm>
#include <cstring>

#include "baton/compiler/control_flow.h"
#include "baton/core/memory_kind.h"
#include "baton/compiler/passes.h"

namespace baton {

using compiler::BufferAssignment;
using compiler::InPlaceMiss;
using compiler::OpKind;
using compiler::OutputSource;
using compiler::Program;
using compiler::ValueId;

namespace {

constexpr int64_t kAlign = 64;

// memcpy that accepts empty copies of values without storage (null); on
// storage the host does not address, `memory`'s copy.
Status CopyBytes(const RegionMemory* memory, void* dst, const void* src,
                 int64_t bytes) {
  if (bytes <= 0 || dst == src) return OkStatus();
  if (memory != nullptr) return memory->Copy(dst, src, bytes);
  std::memcpy(dst, src, static_cast<size_t>(bytes));
  return OkStatus();
}

// The `bytes` at `src` on the host: read in place, or through `memory`.
Status ReadBytes(const RegionMemory* memory, void* dst, const void* src,
                 int64_t bytes) {
  if (memory != nullptr) return memory->Read(dst, src, bytes);
  std::memcpy(dst, src, static_cast<size_t>(bytes));
  return OkStatus();
}
int64_t AlignUp(int64_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

// Spare buffers of a running loop: (pointer, bytes), taken by exact size.
class Spares {
 public:
  void Add(void* p, int64_t bytes) { free_.push_back({p, bytes}); }
  void* Take(int64_t bytes) {
    for (size_t i = 0; i < free_.size(); ++i) {
      if (free_[i].second == bytes) {
        void* p = free_[i].first;
        free_[i] = free_.back();
        free_.pop_back();
        return p;
      }
    }
    return nullptr;  // cannot happen: the pool is sized at compile time
  }

 private:
  std::vector<std::pair<void*, int64_t>> free_;
};

}  // namespace

// One compiled region and, per output buffer, the first output written to
// it.
struct RegionStep::Region {
  std::shared_ptr<const RegionExecutable> exe;
  std::vector<int> first_output;  // per output buffer
  const BufferAssignment& assignment() const { return exe->assignment(); }
};

RegionStep::~RegionStep() = default;

Result<std::unique_ptr<RegionStep>> RegionStep::Compile(
    const Program& program, const compiler::Step& step,
    const RegionCompiler& compile, const std::string& name) {
  std::unique_ptr<RegionStep> r(new RegionStep());
  const compiler::Instruction& inst = program.instruction(step.result);
  r->kind_ = inst.kind();
  for (ValueId o : inst.operands) r->operands_.push_back(o);
  r->results_ = step.members;
  const std::string op = std::string(compiler::op_kind_name(r->kind_)) + " %" +
                         std::to_string(step.result);
  std::vector<std::pair<const Program*, std::string>> regions;
  if (const auto* w = inst.attrs_if<compiler::WhileAttrs>()) {
    r->num_carries_ = w->num_carries;
    regions = {{w->cond.get(), "condition"}, {w->body.get(), "body"}};
  } else if (const auto* s = inst.attrs_if<compiler::ScanAttrs>()) {
    r->num_carries_ = s->num_carries;
    r->num_xs_ = s->num_xs;
    r->length_ = s->length;
    r->reverse_ = s->reverse;
    regions = {{s->body.get(), "body"}};
  } else {
    const auto& c = inst.attrs_as<compiler::CaseAttrs>();
    for (size_t b = 0; b < c.branches.size(); ++b) {
      regions.push_back({c.branches[b].get(), "branch " + std::to_string(b)});
    }
  }
  const int n = r->num_carries_;
  for (int k = 0; k < n; ++k) {
    r->carry_bytes_.push_back(program.type(inst.operands[k]).byte_size());
  }
  const bool is_loop = r->kind_ != OpKind::kCase;
  int64_t arena = 0;
  std::vector<int64_t> spares;
  bool positional = true;
  for (const auto& [region, what] : regions) {
    auto optimized = std::make_shared<const Program>(compiler::Optimize(*region));
    // Loop bodies get their carries donated: new carries may overwrite old.
    std::vector<bool> donated(optimized->num_parameters(), false);
    const bool body = is_loop && what == "body";
    for (int k = 0; body && k < n; ++k) donated[k] = true;
    // A scan body's stacked outputs go straight into their slices: never
    // into a carry's storage (which would cost a copy per iteration).
    std::vector<bool> slice_outputs(optimized->outputs().size(), false);
    for (size_t i = n; body && i < slice_outputs.size(); ++i) {
      slice_outputs[i] = true;
    }
    BATON_ASSIGN_OR_RETURN(
        auto exe, compile(optimized, std::move(donated),
                          name + "/" + op + " " + what,
                          std::move(slice_outputs)));
    const BufferAssignment& a = exe->assignment();
    for (int k = 0; k < kNumMemoryKinds; ++k) {
      if (k != static_cast<int>(MemoryKind::kDevice) && a.temp_arena_bytes[k]) {
        return Unimplemented(
            name + ": the " + what + " of " + op +
            " keeps temporaries in another memory kind; move values between "
            "memory kinds outside control flow");
      }
    }
    arena = std::max(arena, a.temp_arena_bytes[static_cast<int>(MemoryKind::kDevice)]);
    auto region_ptr = std::make_unique<Region>();
    region_ptr->first_output.assign(a.output_buffers.size(), -1);
    for (size_t i = 0; i < a.outputs.size(); ++i) {
      const OutputSource& src = a.outputs[i];
      if (src.kind != OutputSource::Kind::kParameter &&
          region_ptr->first_output[src.index] < 0) {
        region_ptr->first_output[src.index] = static_cast<int>(i);
      }
    }
    for (const InPlaceMiss& m : exe->in_place_misses()) {
      r->misses_.push_back(InPlaceMiss{m.value, m.what + " in the " + what +
                                                    " of " + op, m.why});
    }
    if (body) {
      // Spares: one per new carry that needs storage of its own.
      for (int k = 0; k < n; ++k) {
        const OutputSource& src = a.outputs[k];
        // A parameter returned as it is, a value returned twice (its second
        // carry needs a copy) or a new buffer.
        const bool fresh =
            src.kind == OutputSource::Kind::kParameter ||
            region_ptr->first_output[src.index] != k ||
            a.output_buffers[src.index].aliased_parameter < 0;
        if (fresh) {
          spares.push_back(r->carry_bytes_[k]);
          const ValueId v = optimized->outputs()[k];
          r->misses_.push_back(InPlaceMiss{
              v, "loop carry " + std::to_string(k) + " of " + op,
              "the body computes the new value (%" + std::to_string(v) + " = " +
                  compiler::OpDisplayName(optimized->instruction(v).attrs) +
                  ") into storage of its own: the old value is read after it "
                  "is computed, or that op cannot write over it (each "
                  "iteration then needs a spare buffer)"});
        }
        // Carries that take each other's storage may end in a cycle the
        // final moves break through a buffer of their own; fresh ones
        // through a spare (there is always one of their size).
        if (!fresh && a.output_buffers[src.index].aliased_parameter != k) {
          positional = false;
        }
      }
    }
    region_ptr->exe = std::move(exe);
    r->regions_.push_back(std::move(region_ptr));
  }
  // Scratch: spares, the regions' arena (they run one after another), the
  // condition's result and a buffer for the final moves.
  int64_t offset = 0;
  for (int64_t bytes : spares) {
    r->spare_offsets_.push_back(offset);
    r->spare_sizes_.push_back(bytes);
    offset += AlignUp(std::max<int64_t>(bytes, 1));
  }
  r->arena_offset_ = offset;
  offset += AlignUp(arena);
  r->cond_result_offset_ = offset;
  if (r->kind_ == OpKind::kWhile) offset += kAlign;
  if (!positional && n > 0) {
    r->fixup_offset_ = offset;
    offset += AlignUp(*std::max_element(r->carry_bytes_.begin(),
                                        r->carry_bytes_.end()));
  }
  r->scratch_bytes_ = offset;
  return r;
}

int64_t RegionStep::trip_count() const {
  switch (kind_) {
    case OpKind::kWhile:
      return -1;
    case OpKind::kScan:
      return length_;
    default:
      return 1;
  }
}

std::string RegionStep::RegionsText() const {
  std::string s;
  for (const auto& region : regions_) s += region->exe->as_text();
  return s;
}

Status RegionStep::Run(const std::vector<void*>& value_data, void* scratch,
                       const void* context, const RegionMemory* memory) const {
  char* base = static_cast<char*>(scratch);
  switch (kind_) {
    case OpKind::kWhile:
      return RunWhile(value_data, base, context, memory);
    case OpKind::kScan:
      return RunScan(value_data, base, context, memory);
    default:
      return RunCase(value_data, base, context, memory);
  }
}

namespace {

// The state of one running loop: where each carry is now, the spares, and
// the storage reused from iteration to iteration.
struct LoopState {
  std::vector<void*> carries;   // current storage of each carry
  std::vector<void*> params;    // the body's parameters
  Spares spares;
  std::vector<void*> out_buffers;
  std::vector<void*> value_data;  // the region's, reused
  std::vector<void*> next;
};

}  // namespace

// Carries start in their final buffers (results_), from a copy of the
// initial value unless the parent placed them over it; the body's other
// parameters are the step's other operands; the spares lie in the scratch.
static Status StartLoop(const std::vector<ValueId>& operands,
                        const std::vector<ValueId>& results,
                        const std::vector<int64_t>& bytes,
                        const std::vector<void*>& vd, char* scratch,
                        const std::vector<int64_t>& spare_offsets,
                        const std::vector<int64_t>& spare_sizes,
                        const RegionMemory* memory, LoopState& st) {
  const size_t n = bytes.size();
  st.carries.resize(n);
  for (size_t k = 0; k < n; ++k) {
    st.carries[k] = vd[results[k]];
    const void* init = vd[operands[k]];
    if (init != st.carries[k]) {
      BATON_RETURN_IF_ERROR(CopyBytes(memory, st.carries[k], init, bytes[k]));
    }
  }
  st.params.resize(operands.size());
  for (size_t j = n; j < operands.size(); ++j) st.params[j] = vd[operands[j]];
  for (size_t i = 0; i < spare_offsets.size(); ++i) {
    st.spares.Add(scratch + spare_offsets[i], spare_sizes[i]);
  }
  return OkStatus();
}

// Moves every carry into its final buffer (a parallel move: a cycle goes
// through `fixup`).
static Status FinishCarries(const std::vector<ValueId>& results,
                            const std::vector<int64_t>& bytes,
                            const std::vector<void*>& vd, void* fixup,
                            const RegionMemory* memory, LoopState& st) {
  const size_t n = bytes.size();
  std::vector<size_t> pending;
  for (size_t k = 0; k < n; ++k) {
    if (st.carries[k] != vd[results[k]]) pending.push_back(k);
  }
  while (!pending.empty()) {
    bool progress = false;
    for (size_t i = 0; i < pending.size(); ++i) {
      const size_t k = pending[i];
      void* target = vd[results[k]];
      bool busy = false;
      for (size_t j : pending) busy |= j != k && st.carries[j] == target;
      if (busy) continue;
      BATON_RETURN_IF_ERROR(CopyBytes(memory, target, st.carries[k], bytes[k]));
      st.carries[k] = target;
      pending[i] = pending.back();
      pending.pop_back();
      progress = true;
      break;
    }
    if (!progress) {  // a cycle: park one carry in a spare or the fixup buffer
      const size_t k = pending.front();
      void* park = st.spares.Take(bytes[k]);
      if (park == nullptr) park = fixup;
      BATON_RETURN_IF_ERROR(CopyBytes(memory, park, st.carries[k], bytes[k]));
      st.carries[k] = park;
    }
  }
  return OkStatus();
}

// One iteration of a loop body: runs it over the current carries and
// moves on to its new ones. ys[j] (scan) is where stacked output j's slice
// of this iteration goes.
static Status Iterate(const RegionExecutable& exe,
                      const std::vector<int>& first_output, int n,
                      const std::vector<int64_t>& carry_bytes,
                      const std::vector<void*>& ys,
                      const std::vector<int64_t>& y_bytes, void* arena,
                      const void* context, const RegionMemory* memory,
                      LoopState& st) {
  const BufferAssignment& a = exe.assignment();
  for (int k = 0; k < n; ++k) st.params[k] = st.carries[k];
  st.out_buffers.resize(a.output_buffers.size());
  for (size_t b = 0; b < a.output_buffers.size(); ++b) {
    const int p = a.output_buffers[b].aliased_parameter;
    const int first = first_output[b];
    if (p >= 0) {
      st.out_buffers[b] = st.params[p];
    } else if (first >= n) {
      st.out_buffers[b] = ys[first - n];
    } else {
      st.out_buffers[b] = st.spares.Take(a.output_buffers[b].type.byte_size());
    }
  }
  BATON_RETURN_IF_ERROR(
      exe.RunOnCaller(st.params, st.out_buffers, arena, st.value_data,
                      context));
  st.next.resize(n);
  for (int k = 0; k < n; ++k) {
    const OutputSource& src = a.outputs[k];
    if (src.kind == OutputSource::Kind::kParameter ||
        first_output[src.index] != k) {
      const void* from = src.kind == OutputSource::Kind::kParameter
                             ? st.params[src.index]
                             : st.out_buffers[src.index];
      void* spare = st.spares.Take(carry_bytes[k]);
      BATON_RETURN_IF_ERROR(CopyBytes(memory, spare, from, carry_bytes[k]));
      st.next[k] = spare;
    } else {
      st.next[k] = st.out_buffers[src.index];
    }
  }
  for (size_t j = 0; j < ys.size(); ++j) {
    const OutputSource& src = a.outputs[n + j];
    const void* at = src.kind == OutputSource::Kind::kParameter
                         ? st.params[src.index]
                         : st.out_buffers[src.index];
    if (at != ys[j]) {
      BATON_RETURN_IF_ERROR(CopyBytes(memory, ys[j], at, y_bytes[j]));
    }
  }
  // Old carry storage no new carry uses becomes a spare.
  for (int k = 0; k < n; ++k) {
    void* old = st.carries[k];
    if (std::find(st.next.begin(), st.next.end(), old) == st.next.end()) {
      st.spares.Add(old, carry_bytes[k]);
    }
  }
  st.carries.swap(st.next);
  return OkStatus();
}

Status RegionStep::RunWhile(const std::vector<void*>& vd, char* scratch,
                            const void* context,
                            const RegionMemory* memory) const {
  const Region& cond = *regions_[0];
  const Region& body = *regions_[1];
  const int n = num_carries_;
  LoopState st;
  BATON_RETURN_IF_ERROR(StartLoop(operands_, results_, carry_bytes_, vd,
                                  scratch, spare_offsets_, spare_sizes_,
                                  memory, st));
  void* arena = scratch + arena_offset_;
  std::vector<void*> cond_out(cond.assignment().output_buffers.size(),
                              scratch + cond_result_offset_);
  std::vector<void*> cond_vd;
  const OutputSource& cond_src = cond.assignment().outputs[0];
  while (true) {
    for (int k = 0; k < n; ++k) st.params[k] = st.carries[k];
    BATON_RETURN_IF_ERROR(
        cond.exe->RunOnCaller(st.params, cond_out, arena, cond_vd, context));
    const void* flag = cond_src.kind == OutputSource::Kind::kParameter
                           ? st.params[cond_src.index]
                           : cond_out[cond_src.index];
    bool go_on = false;
    BATON_RETURN_IF_ERROR(ReadBytes(memory, &go_on, flag, sizeof(bool)));
    if (!go_on) break;
    BATON_RETURN_IF_ERROR(Iterate(*body.exe, body.first_output, n,
                                  carry_bytes_, {}, {}, arena, context, memory,
                                  st));
  }
  return FinishCarries(results_, carry_bytes_, vd,
                       fixup_offset_ >= 0 ? scratch + fixup_offset_ : nullptr,
                       memory, st);
}

Status RegionStep::RunScan(const std::vector<void*>& vd, char* scratch,
                           const void* context,
                           const RegionMemory* memory) const {
  const Region& body = *regions_[0];
  const int n = num_carries_;
  const RegionExecutable& exe = *body.exe;
  const Program& p = exe.program();
  LoopState st;
  BATON_RETURN_IF_ERROR(StartLoop(operands_, results_, carry_bytes_, vd,
                                  scratch, spare_offsets_, spare_sizes_,
                                  memory, st));
  std::vector<char*> xs_base(num_xs_);
  std::vector<int64_t> x_bytes(num_xs_);
  for (int j = 0; j < num_xs_; ++j) {
    xs_base[j] = static_cast<char*>(vd[operands_[n + j]]);
    x_bytes[j] = p.parameter_type(n + j).byte_size();
  }
  const int num_ys = static_cast<int>(results_.size()) - n;
  std::vector<char*> ys_base(num_ys);
  std::vector<int64_t> y_bytes(num_ys);
  for (int j = 0; j < num_ys; ++j) {
    ys_base[j] = static_cast<char*>(vd[results_[n + j]]);
    y_bytes[j] = p.type(p.outputs()[n + j]).byte_size();
  }
  std::vector<void*> ys(num_ys);
  void* arena = scratch + arena_offset_;
  for (int64_t i = 0; i < length_; ++i) {
    const int64_t t = reverse_ ? length_ - 1 - i : i;
    for (int j = 0; j < num_xs_; ++j) st.params[n + j] = xs_base[j] + t * x_bytes[j];
    for (int j = 0; j < num_ys; ++j) ys[j] = ys_base[j] + t * y_bytes[j];
    BATON_RETURN_IF_ERROR(Iterate(exe, body.first_output, n, carry_bytes_, ys,
                                  y_bytes, arena, context, memory, st));
  }
  return FinishCarries(results_, carry_bytes_, vd,
                       fixup_offset_ >= 0 ? scratch + fixup_offset_ : nullptr,
                       memory, st);
}

Status RegionStep::RunCase(const std::vector<void*>& vd, char* scratch,
                           const void* context,
                           const RegionMemory* memory) const {
  const int64_t count = static_cast<int64_t>(regions_.size());
  int32_t stored_index = 0;
  BATON_RETURN_IF_ERROR(ReadBytes(memory, &stored_index, vd[operands_[0]],
                                  sizeof(int32_t)));
  const int64_t index = std::clamp<int64_t>(stored_index, 0, count - 1);
  const Region& branch = *regions_[index];
  const BufferAssignment& a = branch.assignment();
  std::vector<void*> params;
  for (size_t j = 1; j < operands_.size(); ++j) params.push_back(vd[operands_[j]]);
  std::vector<void*> outs(a.output_buffers.size());
  for (size_t b = 0; b < outs.size(); ++b) {
    outs[b] = vd[results_[branch.first_output[b]]];
  }
  std::vector<void*> branch_vd;
  BATON_RETURN_IF_ERROR(branch.exe->RunOnCaller(
      params, outs, scratch + arena_offset_, branch_vd, context));
  const Program& p = branch.exe->program();
  for (size_t i = 0; i < a.outputs.size(); ++i) {
    const OutputSource& src = a.outputs[i];
    const int64_t bytes = p.type(p.outputs()[i]).byte_size();
    if (src.kind == OutputSource::Kind::kParameter) {
      BATON_RETURN_IF_ERROR(
          CopyBytes(memory, vd[results_[i]], params[src.index], bytes));
    } else if (branch.first_output[src.index] != static_cast<int>(i)) {
      // returned twice
      BATON_RETURN_IF_ERROR(
          CopyBytes(memory, vd[results_[i]], outs[src.index], bytes));
    }
  }
  return OkStatus();
}

}  // namespace baton
