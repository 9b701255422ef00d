// Runs one IR instruction on the CPU with the kernels in kernels/.
//
// Operand and result storage is dense row-major. An operand that is a
// "virtual scalar" (step_plan.h) is passed as its one-element source with
// `scalar` set; only elementwise instructions receive such operands and must
// broadcast them. `out` may be the very storage of operand 0 (and, for
// elementwise ops, of any operand) when buffer assignment chose to compute in
// place: elementwise kernels handle that naturally; dynamic_update_slice and
// scatter then touch only the updated region (O(update) work); every other
// instruction never gets an aliased `out`.
//
// Thread-safety: pure function of its arguments (kernels may use the global
// ThreadPool internally).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "baton/backend/cpu/kernels/dot.h"
#include "baton/compiler/ir.h"
#include "baton/core/status.h"

namespace baton::cpu {

// The dimension numbers of a dot_general instruction, as kernels/dot.h takes
// them.
DotDimensions DotDimensionsOf(const compiler::DotGeneralAttrs& attrs);

struct OperandData {
  const void* data = nullptr;
  const compiler::ValueType* type = nullptr;  // the operand's IR type
  bool scalar = false;  // one element standing for a broadcast of it
};

// The scratch RunInstruction needs for `inst` of `program`, in bytes: a
// dot_general's (kernels/dot.h DotGeneralScratchBytes); 0 for every other
// instruction. The executable reserves it in its arena for the step.
int64_t InstructionScratchBytes(const compiler::Program& program,
                                const compiler::Instruction& inst);

// Computes instruction `inst` (not a parameter or constant) into `out`, with
// `scratch` of at least InstructionScratchBytes.
// Errors only for an instruction the CPU backend cannot run (Unimplemented)
// or a malformed call (Internal).
Status RunInstruction(const compiler::Instruction& inst,
                      std::span<const OperandData> operands, void* out,
                      std::span<std::byte> scratch);

// Runs an elementwise instruction (unary, binary, compare, select, convert)
// over `count` elements: each non-scalar operand holds `count` elements at
// its `data`, and `out` receives `count` results. Fused steps call it tile by
// tile; RunInstruction calls it for whole arrays. A table gather
// (step_plan.h) in a fused step is run here too: its operand 0 is the whole
// table, its indices `count` elements like any other operand.
Status RunElementwise(const compiler::Instruction& inst,
                      std::span<const OperandData> operands, void* out,
                      int64_t count);

}  // namespace baton::cpu
