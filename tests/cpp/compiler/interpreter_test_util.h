// Helpers for the reference interpreter tests: run one op on literals.
#pragma once

#include <gtest/gtest.h>

#include <ostream>
#include <vector>

#include "baton/compiler/ir.h"
#include "baton/compiler/literal.h"
#include "baton/compiler/reference_interpreter.h"

namespace baton::compiler {
// Readable failures: gtest prints literals as "f32[2] {1, 2}".
inline void PrintTo(const Literal& lit, std::ostream* os) {
  *os << lit.ToString();
}
}  // namespace baton::compiler

namespace baton::compiler::test_util {

inline constexpr DType kAllDTypes[] = {
    DType::kBool,     DType::kInt8,    DType::kInt16,  DType::kInt32,
    DType::kInt64,    DType::kUInt8,   DType::kUInt32, DType::kFloat16,
    DType::kBFloat16, DType::kFloat32, DType::kFloat64};

// A literal of `dtype` holding `values` (converted as convert() would).
inline Literal D(DType dtype, Shape shape, const std::vector<double>& values) {
  return Literal::FromDoubles(dtype, std::move(shape), values);
}

// 0, 1, 2, ... in row-major order.
inline Literal Iota(DType dtype, Shape shape) {
  std::vector<double> values(shape.num_elements());
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i);
  return D(dtype, std::move(shape), values);
}

template <typename T>
Literal L(std::vector<T> values, Shape shape) {
  return Literal::FromVector(values, std::move(shape));
}
template <typename T>
Literal L(std::vector<T> values) {
  return Literal::FromVector(values);
}

// Builds parameters of the arguments' types, applies one op to all of them
// in order, and interprets the program. Fails the test (and returns an
// empty float literal) if the op is rejected.
inline Literal RunOp(const OpAttrs& attrs, const std::vector<Literal>& args) {
  Program p;
  OperandList operands;
  for (const Literal& arg : args) {
    operands.push_back(
        p.AddParameter(ValueType{arg.shape(), arg.dtype()}).value());
  }
  Result<ValueId> id = p.Add(attrs, operands);
  EXPECT_TRUE(id.ok()) << id.status().to_string();
  if (!id.ok()) return Literal();
  EXPECT_TRUE(p.SetOutputs({id.value()}).ok());
  Result<std::vector<Literal>> out = Interpret(p, args);
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  if (!out.ok()) return Literal();
  return out.value()[0];
}

}  // namespace baton::compiler::test_util
