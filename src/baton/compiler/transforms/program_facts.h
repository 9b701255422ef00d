// Facts about programs that several transformations ask: which ops can
// carry a derivative, which parameters a program reads.
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <vector>

#include "baton/compiler/ir.h"

namespace baton::compiler::transforms {

// False for ops whose result never carries a derivative although it may be
// floating point: parameters and constants (as ops), iota, compares,
// piecewise-constant unary ops (floor, ceil, round, sign, not) and
// stop_gradient.
bool IsDifferentiable(const OpAttrs& attrs);

// Per parameter of `program`: whether some instruction or output reads it.
std::vector<bool> UsedParameters(const Program& program);

}  // namespace baton::compiler::transforms
