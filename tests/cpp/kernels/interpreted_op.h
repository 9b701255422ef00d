// The reference interpreter's value of one op: what the kernel tests
// compare a CPU kernel with (sort, linalg, fft). Builds a program of one
// instruction over parameters of the operands' types and interprets it.
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "baton/compiler/ir.h"
#include "baton/compiler/literal.h"
#include "baton/compiler/reference_interpreter.h"

namespace baton::cpu::testing {

inline compiler::Literal InterpretedOp(
    const compiler::OpAttrs& attrs,
    const std::vector<compiler::Literal>& operands) {
  compiler::Program p;
  compiler::OperandList ops;
  for (const compiler::Literal& l : operands) {
    ops.push_back(
        p.AddParameter(compiler::ValueType{l.shape(), l.dtype()}).value());
  }
  const compiler::ValueId out = p.Add(attrs, ops).value();
  EXPECT_TRUE(p.SetOutputs({out}).ok());
  return compiler::Interpret(p, operands).value()[0];
}

}  // namespace baton::cpu::testing
