// Program-to-program passes run before planning a compiled program.
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include "baton/compiler/ir.h"

namespace baton::compiler {

// Removes instructions no output depends on (parameters always stay, so the
// calling convention does not change).
Program EliminateDeadCode(const Program& program);

// The passes a program goes through before buffer assignment, in order.
Program Optimize(const Program& program);

}  // namespace baton::compiler
