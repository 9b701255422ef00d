// FusedTiles: how a fused elementwise step (step_plan.h) lays out the
// per-thread scratch its inner values live in while it runs tile by tile.
//
// Each inner member writes one tile into a scratch slot; a slot is reused
// once every member that reads its value has run, so a chain of any length
// needs two slots, and a tile never holds more elements than the step's
// result (a fused chain on scalars needs a few bytes, not a 4096-element tile
// per member). Planned once per executable; the CPU runner and the memory
// analysis (buffer_assignment.h) both read it.
//
// Thread-safety: a pure function of its arguments.
#pragma once

#include <cstdint>
#include <vector>

#include "baton/compiler/ir.h"
#include "baton/compiler/step_plan.h"

namespace baton::compiler {

// How a backend sizes the tiles of its fused steps: machine numbers (cache
// sizes, stack budgets) the compiler takes as parameters instead of
// deciding them. The CPU backend's are cpu::kFusionTiling
// (backend/cpu/fusion_tiling.h).
struct FusionTiling {
  // Elements per fused tile at most.
  int64_t max_tile_elements = 1;
  // Scratch of at most this many bytes is the runner's own (on the running
  // thread's stack: no allocation per call, and, like any kernel's locals,
  // not a temporary the memory analysis counts). Larger scratch is
  // allocated per thread and counted (buffer_assignment.h).
  int64_t local_scratch_bytes = 0;
};

struct FusedTiles {
  int64_t tile_elements = 1;  // min(max_tile_elements, result elements)
  int64_t slot_bytes = 0;     // tile_elements * widest inner element
  int num_slots = 0;
  // Per member of the step (in step.members order): the scratch slot its
  // value is written to; -1 for the step's result (written to its buffer).
  std::vector<int> slot;
  // Per member: for each operand, the member index producing it, or -1 when
  // it is a materialized value (read from its own storage).
  std::vector<std::vector<int>> operand_member;

  int64_t scratch_bytes() const { return slot_bytes * num_slots; }
};

// `step` must be a kFusedElementwise step of `program`.
FusedTiles PlanFusedTiles(const Program& program, const Step& step,
                          const FusionTiling& tiling);

}  // namespace baton::compiler
