// FloatChain: a fused step made only of float32 add, sub, mul and div, run a
// 256-element block at a time through every member, with the intermediates
// in small L1 rows, instead of one pass per member over a larger tile.
//
// The general fused runner (fused_runner.h) stores each member's tile and
// reloads it for the next member: for ((x*2+1)*x-0.5)/3 that is five
// load/op/store passes an element. Here each block goes through all members
// at once, so an element is loaded once and stored once. Every element still
// goes through scalar::Binary in the same order, so results are bitwise equal
// to the general runner and to the reference interpreter.
//
// Ownership: planned once per executable; points into its Program.
// Thread-safety: Run is const; disjoint ranges may run concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "baton/compiler/ir.h"
#include "baton/compiler/step_plan.h"
#include "baton/core/op_codes.h"

namespace baton::cpu {

class FloatChain {
 public:
  static constexpr int kMaxMembers = 16;
  static constexpr int64_t kBlock = 256;

  // A plan for `step` (a kFusedElementwise step of `program`), or null when
  // it has a member that is not a float32 binary add/sub/mul/div, more than
  // kMaxMembers members, or an operand that is neither an earlier member, a
  // float32 array of the result's size nor a one-element scalar.
  // `operand_member[i][k]`: the member producing operand k of member i, or -1.
  static std::unique_ptr<FloatChain> TryPlan(
      const compiler::Program& program, const compiler::StepPlan& plan,
      const compiler::Step& step,
      const std::vector<std::vector<int>>& operand_member);

  // Computes result elements [begin, end) into out[0, end - begin);
  // `value_data` as for FusedStep::Run.
  void Run(const std::vector<void*>& value_data, float* out, int64_t begin,
           int64_t end) const;

  // Whether SumRange serves this chain: one op (not both sides scalars),
  // or one op and its square (sum((a - b) * (a - b)), a variance). (Other
  // chains keep the piece buffer: run a block at a time into an L1 row as
  // the sum reached it, or member by member through eight elements, they
  // measured no faster.)
  bool SumsInRegisters() const {
    return ((whole_range_ && ops_.size() == 1) || squared_) &&
           ops_[0].sum_baseline != nullptr;
  }
  // The float32 sum of result elements [begin, begin + count), computed in
  // registers as they are made: bitwise the sum of the elements Run writes,
  // summed from memory (kernels/reduce_run.h SumFloatRunOf). A fused
  // reduction's piece then never goes through a buffer, which reads x in
  // sum(x * x) at the bandwidth of sum(x). SumsInRegisters() must hold.
  double SumRange(const std::vector<void*>& value_data, int64_t begin,
                  int64_t count) const;

  struct Source {
    enum class Kind : uint8_t { kMember, kArray, kScalar };
    Kind kind = Kind::kArray;
    int member = -1;                               // kMember
    compiler::ValueId value = compiler::kNoValue;  // kArray, kScalar
  };
  // d[j] = a[j] op b[j] for j < n; a scalar side reads `as` / `bs` instead.
  using BlockFn = void (*)(const float* a, const float* b, float as, float bs,
                           float* d, int64_t n);
  // d[j] = op2(op1(a[j], s1), s2) with each scalar on the side the ops
  // have it: two members in one pass (x * 0.99 + 0.01, p - lr * g's
  // scalar forms), bitwise equal to running them one after the other.
  using PairFn = void (*)(const float* a, float s1, float s2, float* d,
                          int64_t n);
  struct MicroOp {
    BinaryOp op = BinaryOp::kAdd;
    Source a, b;
    BlockFn baseline = nullptr;  // the loop for this op and scalar pattern
    BlockFn avx2 = nullptr;      // the same loop compiled for AVX2 (isa.h)
    // Set on the first of two members run as one pass (the next member
    // reads only this one's result and a scalar; nothing else reads it).
    PairFn pair_baseline = nullptr;
    PairFn pair_avx2 = nullptr;
    // The sum of the loop's d[0, n) (SumRange), for an op run alone.
    using SumFn = double (*)(const float* a, const float* b, float as, float bs,
                             int64_t n);
    SumFn sum_baseline = nullptr;
    SumFn sum_avx2 = nullptr;
    // The same of d[j] * d[j] (the chain op and then its square).
    SumFn sum_squared_baseline = nullptr;
    SumFn sum_squared_avx2 = nullptr;
  };

 private:
  // One op (not both sides scalar) or one pair: runs as one loop over the
  // whole range, with no intermediate rows (RunWhole).
  bool whole_range_ = false;
  // Two members: ops_[0] and then mul(ops_[0], ops_[0]).
  bool squared_ = false;
  void RunWhole(const std::vector<void*>& value_data, float* out, int64_t begin,
                int64_t end) const;
  static void BindLoops(MicroOp& m);  // sets baseline/avx2 for m's op and kinds
  // Sets first's pair loops when `first` and `second` can run as one pass.
  static void BindPair(MicroOp& first, const MicroOp& second, int first_index);
  std::vector<MicroOp>
      ops_;  // one per member, in order; the last is the result
};

}  // namespace baton::cpu
