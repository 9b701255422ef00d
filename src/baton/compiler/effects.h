// Side effects in the IR: which instructions do something besides computing
// their value, and what every pass owes them.
//
// A host callback (op_attrs.h HostCallbackAttrs) is the one effect; a call
// or control-flow op has one when a program nested in it does, at any depth.
// An effectful instruction
//  - is never removed by dead-code elimination, though nothing reads it (a
//    region or call group with one keeps all its members);
//  - is never merged with an equal one by common-subexpression elimination;
//  - keeps its place in program order relative to the program's other
//    effects when a pass reorders instructions (the memory schedule), so
//    bt.debug.print output comes in the order the program was written.
// Transformations copy effects into what they build: forward-mode
// derivatives keep each one with its primal operands, reverse mode keeps
// them in the forward program, and batching calls a callback once per
// example (as JAX's debug callbacks under vmap).
//
// Thread-safety: pure functions of finished programs.
#pragma once

#include "baton/compiler/ir.h"

namespace baton::compiler {

// Whether an instruction with these attributes has a side effect.
bool HasSideEffect(const OpAttrs& attrs);

// Whether any instruction of `program` (or of a program nested in it) has
// one.
bool HasSideEffect(const Program& program);

}  // namespace baton::compiler
