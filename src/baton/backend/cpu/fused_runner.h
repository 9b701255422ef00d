// Runs a fused elementwise step tile by tile (step_plan.h): inner values live
// in per-thread scratch tiles (fused_tiles.h: slots reused along the chain),
// the result is written straight to its buffer, and memory is traversed once
// for the whole chain.
//
// In place is safe: every tile reads all of its inputs before the result of
// that tile is written, and an aliased input is read at the same positions.
//
// Ownership: a FusedStep is planned once per executable (it points into the
// executable's Program, which must outlive it).
// Thread-safety: Run is const and may run concurrently; it splits tiles
// across the global ThreadPool.
#pragma once

#include <memory>
#include <vector>

#include "baton/backend/cpu/float_chain.h"
#include "baton/backend/cpu/fusion_tiling.h"
#include "baton/backend/cpu/instruction_runner.h"
#include "baton/compiler/fused_tiles.h"
#include "baton/compiler/step_plan.h"

namespace baton::cpu {

class FusedStep {
 public:
  // `step` must be a kFusedElementwise step of `program` planned by `plan`.
  FusedStep(const compiler::Program& program, const compiler::StepPlan& plan,
            const compiler::Step& step);

  // `value_data[v]` is the storage of every materialized value the step reads
  // (or, for a virtual scalar's source, its one element); `out` the result's.
  Status Run(const std::vector<void*>& value_data, void* out) const;

  // Computes result elements [begin, begin + count) into dst (element
  // `begin` at dst[0]) on the calling thread: what Run splits between
  // threads, and what a fused reduction (fused_reduce_runner.h) asks for a
  // piece at a time.
  Status RunRange(const std::vector<void*>& value_data, void* dst,
                  int64_t begin, int64_t count) const;

  // The float32 chain the step runs as (float_chain.h), or null.
  const FloatChain* float_chain() const { return chain_.get(); }

 private:
  // Elementwise ops take at most three operands (select).
  static constexpr size_t kMaxOperands = 3;
  static constexpr int64_t kLocalScratchBytes =
      kFusionTiling.local_scratch_bytes;
  struct Operand {
    const compiler::ValueType* type = nullptr;
    int slot = -1;  // scratch slot of the inner member producing it, or
    compiler::ValueId value = compiler::kNoValue;  // a materialized value
    bool scalar = false;                           // one element, broadcast
    bool whole = false;  // a table gather's table: passed whole, not a tile
    int64_t element_bytes = 0;
  };
  struct Member {
    const compiler::Instruction* inst = nullptr;
    std::vector<Operand> operands;
    int slot = -1;  // scratch slot written, or -1: the step's result
    int64_t element_bytes = 0;
    // A regular broadcast (step_plan.h): its tile is expanded from operand
    // 0 instead of computed elementwise.
    bool broadcast = false;
    compiler::RegularBroadcast pattern;
  };
  // Writes result elements [begin, begin + count) of broadcast `m`.
  static void ExpandBroadcast(const Member& m, const void* src, int64_t begin,
                              int64_t count, void* dst);
  compiler::FusedTiles tiles_;
  std::vector<Member> members_;
  int64_t total_elements_ = 0;
  bool too_many_operands_ = false;  // never planned so; checked in Run
  // Set when the whole step is float32 arithmetic: run block by block in
  // registers (float_chain.h) instead of tile by tile.
  std::unique_ptr<FloatChain> chain_;
};

}  // namespace baton::cpu
