// BufferAssignment: where every materialized value of a program lives during
// a call, decided once at compile time (DESIGN R3, R4).
//
// Values are grouped into buffers (union-find classes):
//  - a reshape shares its operand's buffer when that buffer is writable;
//  - a same-kind transfer (an optimization barrier) shares its operand's
//    buffer, unless it is an output and that buffer is read only;
//  - an in-place-capable step (fused elementwise, dynamic_update_slice,
//    scatter) writes into the buffer of an operand that dies at that step
//    when sizes and memory kinds match -- donated parameters first, so that
//    "params - lr * grads" overwrites the donated parameters;
// then each buffer is placed:
//  - undonated parameter: the caller's argument (read only; an output that is
//    the parameter itself is returned as the same array);
//  - constant: the executable's shared constant copy;
//  - donated parameter: the donated storage, which becomes the output it was
//    joined with, or is matched to another output of equal byte size, dtype
//    and memory kind whose lifetime starts after it ends; a donated buffer
//    that no output uses is freed after the call and reported as unusable;
//  - other outputs: a fresh allocation per call;
//  - everything else: an offset in one temporary arena per memory kind,
//    packed so that buffers whose lifetimes overlap never overlap in memory.
//
// Ownership: a plain value; immutable and shareable once built.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "baton/compiler/control_flow.h"
#include "baton/compiler/fused_tiles.h"
#include "baton/compiler/ir.h"
#include "baton/compiler/step_plan.h"

namespace baton::compiler {

// What a compiled call costs (DESIGN R3: memory_analysis()).
struct MemoryAnalysis {
  int64_t argument_size_in_bytes = 0;  // all parameters
  int64_t output_size_in_bytes = 0;    // distinct outputs
  int64_t alias_size_in_bytes = 0;     // outputs written into donated inputs
  int64_t temp_size_in_bytes = 0;      // temporary arenas + fusion tiles
                                       // too large for the stack
  int64_t constant_size_in_bytes = 0;  // distinct constants
  // arguments + outputs - aliases + temporaries + constants: the most the
  // call can hold at once.
  int64_t peak_memory_in_bytes = 0;
  std::string ToString() const;
};

struct BufferLocation {
  enum class Kind : uint8_t {
    kNone,       // not materialized (virtual scalar, inner fused value)
    kParameter,  // index = parameter index (donated or not)
    kConstant,   // index = ValueId of the constant instruction
    kOutput,     // index = output buffer index
    kTemp,       // offset into the arena of the value's memory kind
  };
  Kind kind = Kind::kNone;
  int index = -1;
  int64_t offset = 0;
};

// One output allocation (or aliased donated storage) per distinct output
// buffer.
struct OutputBuffer {
  ValueType type;
  // Donated parameter whose storage this output reuses, or -1 (allocate).
  int aliased_parameter = -1;
};

// How program output i is produced.
struct OutputSource {
  enum class Kind : uint8_t {
    kBuffer,     // index = output buffer
    kParameter,  // index = parameter returned unchanged (same array)
    kCopy,       // index = output buffer to fill with a copy of `value`
  };
  Kind kind = Kind::kBuffer;
  int index = -1;
  ValueId value = kNoValue;
};

// An update that could not be written over its operand and copies it
// instead (bt.jit(require_in_place=True) turns these into InPlaceError).
struct InPlaceMiss {
  ValueId value = kNoValue;  // the update's result
  std::string what;          // "dynamic_update_slice %7", "loop carry 0 of while %9"
  std::string why;           // "its operand, argument 0, is not donated"
};

struct BufferAssignment {
  std::vector<BufferLocation> location;  // per ValueId
  // Steps that need no work: a reshape sharing its operand's buffer.
  std::vector<bool> step_is_noop;  // per step
  std::vector<OutputBuffer> output_buffers;
  std::vector<OutputSource> outputs;  // per program output
  std::array<int64_t, kNumMemoryKinds> temp_arena_bytes{};
  // Donated parameters whose storage no output uses (freed after the call).
  std::vector<int> unusable_donations;
  // Per step: offset in the device arena of the scratch a region step
  // needs while it runs (step_scratch_bytes), else -1.
  std::vector<int64_t> step_scratch_offset;
  // Updates (dynamic_update_slice, scatter, loop carries) that copy.
  std::vector<InPlaceMiss> in_place_misses;
  MemoryAnalysis analysis;
};

// Whether `v` is a transfer to its operand's own memory kind: an
// optimization barrier, which shares its operand's buffer where it can.
bool IsSameKindTransfer(const Program& program, ValueId v);

// The per-thread scratch a fused step needs (fused_tiles.h).
int64_t FusionScratchBytes(const Program& program, const Step& step,
                           const FusionTiling& tiling);

// `donated[i]` says whether parameter i is donated. `num_threads` and
// `tiling` (the backend's, fused_tiles.h) size the fusion scratch reported
// in the analysis. `step_scratch_bytes` (per step,
// or empty): device scratch a region step needs while it runs -- its
// regions' temporaries and spare carry buffers (backend-defined) -- placed
// in the arena like a temporary that lives for that step only.
//
// A region step's loop carries are written over their initial values when
// those die at the loop (and are writable, and no other operand of the
// step shares their storage); otherwise the loop starts from a copy.
//
// `fresh_outputs[i]` (per program output, or empty): output i must not be
// stored in a donated parameter's storage -- the caller gives it storage of
// its own (a scan body's stacked outputs go straight into their slice).
BufferAssignment AssignBuffers(
    const Program& program, const StepPlan& plan,
    const std::vector<bool>& donated, int num_threads,
    const FusionTiling& tiling,
    const std::vector<int64_t>& step_scratch_bytes = {},
    const std::vector<bool>& fresh_outputs = {});

// Per value: whether it is only returned as outputs marked in
// `fresh_outputs` (and so must not take a donated parameter's storage).
std::vector<bool> FreshValues(const Program& program,
                              const std::vector<bool>& fresh_outputs);

}  // namespace baton::compiler
