#include "baton/core/op_codes.h"

namespace baton {

std::string_view op_name(UnaryOp op) {
  switch (op) {
    case UnaryOp::kNeg: return "negate";
    case UnaryOp::kAbs: return "abs";
    case UnaryOp::kExp: return "exponential";
    case UnaryOp::kLog: return "log";
    case UnaryOp::kTanh: return "tanh";
    case UnaryOp::kLogistic: return "logistic";
    case UnaryOp::kSqrt: return "sqrt";
    case UnaryOp::kRsqrt: return "rsqrt";
    case UnaryOp::kSin: return "sine";
    case UnaryOp::kCos: return "cosine";
    case UnaryOp::kNot: return "not";
    case UnaryOp::kSign: return "sign";
    case UnaryOp::kFloor: return "floor";
    case UnaryOp::kCeil: return "ceil";
    case UnaryOp::kRound: return "round_nearest_even";
    case UnaryOp::kLog1p: return "log_plus_one";
    case UnaryOp::kExpm1: return "exponential_minus_one";
    case UnaryOp::kTan: return "tan";
    case UnaryOp::kAtan: return "atan";
    case UnaryOp::kReal: return "real";
    case UnaryOp::kImag: return "imag";
    case UnaryOp::kConj: return "conj";
  }
  return "?";
}

std::string_view op_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd: return "add";
    case BinaryOp::kSub: return "subtract";
    case BinaryOp::kMul: return "multiply";
    case BinaryOp::kDiv: return "divide";
    case BinaryOp::kPow: return "power";
    case BinaryOp::kMax: return "maximum";
    case BinaryOp::kMin: return "minimum";
    case BinaryOp::kAnd: return "and";
    case BinaryOp::kOr: return "or";
    case BinaryOp::kRem: return "remainder";
    case BinaryOp::kAtan2: return "atan2";
    case BinaryOp::kXor: return "xor";
    case BinaryOp::kShiftLeft: return "shift_left";
    case BinaryOp::kShiftRightArithmetic: return "shift_right_arithmetic";
    case BinaryOp::kShiftRightLogical: return "shift_right_logical";
    case BinaryOp::kComplex: return "complex";
  }
  return "?";
}

std::string_view op_name(CompareOp op) {
  switch (op) {
    case CompareOp::kEq: return "EQ";
    case CompareOp::kNe: return "NE";
    case CompareOp::kLt: return "LT";
    case CompareOp::kLe: return "LE";
    case CompareOp::kGt: return "GT";
    case CompareOp::kGe: return "GE";
  }
  return "?";
}

std::string_view op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return "sum";
    case ReduceOp::kProd: return "prod";
    case ReduceOp::kMax: return "max";
    case ReduceOp::kMin: return "min";
  }
  return "?";
}

std::string_view op_name(ScatterMode mode) {
  switch (mode) {
    case ScatterMode::kSet: return "set";
    case ScatterMode::kAdd: return "add";
    case ScatterMode::kMul: return "mul";
    case ScatterMode::kMin: return "min";
    case ScatterMode::kMax: return "max";
  }
  return "?";
}

}  // namespace baton
