// Text form of programs (what `as_text()` shows), StableHLO-flavoured:
//
//   func(%0: f32[8]{pinned_host}, %1: f32[8]) -> (%4) {
//     %2 = constant(2) : f32[]
//     %3 = broadcast_in_dim(%2), dims=[] : f32[8]
//     %4 = add(%0, %3) : f32[8]
//   }
//
// Constants of up to kMaxPrintedConstantElements elements show their values;
// larger ones show type and size, e.g. constant(<f32[4096] 16384 bytes>).
// Stateless; safe to call from any thread on a finished Program.
#pragma once

#include <string>

#include "baton/compiler/ir.h"

namespace baton::compiler {

inline constexpr int64_t kMaxPrintedConstantElements = 16;

std::string ProgramToText(const Program& program);

// One instruction without its trailing newline: "%3 = add(%1, %2) : f32[4]".
// Parameters print as "%0 = parameter(0) : f32[8]".
std::string InstructionToText(const Program& program, ValueId id);

}  // namespace baton::compiler
