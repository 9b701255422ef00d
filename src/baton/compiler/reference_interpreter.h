// The reference interpreter: runs a Program on host Literals in the plainest
// way possible, as the yardstick the planned, in-place executor is tested
// against (issue 3, acceptance 1 and 2).
//
// Every value gets a fresh Literal (no buffer reuse, no aliasing); loops are
// naive and in row-major order. Elementwise ops go through scalar_math.h, as
// the CPU kernels do, so elementwise results are bitwise equal to theirs.
// Reductions accumulate in the compute type (float for float16/bfloat16) in
// row-major order of the reduced elements; dot_general accumulates each
// output in the compute type over the contracting indices in row-major
// order. transfer is a copy (memory kinds do not exist on the host). A host
// callback is called with its operands' Literals, in program order (a call
// group with one calls it once per member: the interpreter runs a call's
// body for each of its results).
//
// Stateless and thread-safe: it only reads the program and the arguments.
#pragma once

#include <vector>

#include "baton/compiler/ir.h"
#include "baton/compiler/literal.h"
#include "baton/core/status.h"

namespace baton::compiler {

// Runs `program` on `args` (one per parameter, matching its shape and
// dtype) and returns one Literal per program output.
//
// Errors: InvalidArgument for a wrong number of arguments or an argument
// whose shape or dtype differs from its parameter's; Internal if the program
// fails Program::Verify; a host callback's error as it returned it (the
// values after it are not computed).
Result<std::vector<Literal>> Interpret(const Program& program,
                                       const std::vector<Literal>& args);

}  // namespace baton::compiler
