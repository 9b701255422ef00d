// Elementwise and reduction operation codes shared by the compiler's IR and
// the CPU kernels (one list, so the two layers cannot drift apart).
#pragma once

#include <cstdint>
#include <string_view>

namespace baton {

enum class UnaryOp : uint8_t {
  kNeg, kAbs, kExp, kLog, kTanh, kLogistic, kSqrt, kRsqrt, kSin, kCos,
  kNot,  // logical not for bool, bitwise not for integers
  kSign, kFloor, kCeil, kRound,  // round: half to even (numpy's rint)
  kLog1p, kExpm1, kTan, kAtan,
  // The parts of a complex number: real and imag give the real type of the
  // operand's parts (float32 for complex64); conj keeps the type. On a real
  // operand real and conj are the identity and imag gives zeros (numpy's).
  // abs of a complex operand is also real-typed (its modulus).
  kReal, kImag, kConj,
};

enum class BinaryOp : uint8_t {
  kAdd, kSub, kMul, kDiv, kPow, kMax, kMin, kAnd, kOr, kRem,
  kAtan2,  // atan2(lhs, rhs): the angle of the point (x = rhs, y = lhs)
  kXor,    // logical xor for bool, bitwise for integers
  // Integers only. The shift amount is read as unsigned: amounts outside
  // [0, bit width) give 0 for left and logical right shifts and the sign
  // fill (0 or -1, of the bits read as signed) for arithmetic right shifts,
  // as in XLA. Arithmetic shifts of unsigned types shift in the top bit.
  kShiftLeft, kShiftRightArithmetic, kShiftRightLogical,
  // complex(re, im): two float32 (float64) operands make a complex64
  // (complex128).
  kComplex,
};

// How many of each there are (the enumerators run 0 .. count - 1).
inline constexpr int kNumUnaryOps = static_cast<int>(UnaryOp::kConj) + 1;
inline constexpr int kNumBinaryOps = static_cast<int>(BinaryOp::kComplex) + 1;

enum class CompareOp : uint8_t { kEq, kNe, kLt, kLe, kGt, kGe };

enum class ReduceOp : uint8_t { kSum, kProd, kMax, kMin };

// The binary op a reduction folds its elements with (and partial results
// of it are combined with).
constexpr BinaryOp CombinerOf(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return BinaryOp::kAdd;
    case ReduceOp::kProd:
      return BinaryOp::kMul;
    case ReduceOp::kMax:
      return BinaryOp::kMax;
    case ReduceOp::kMin:
      return BinaryOp::kMin;
  }
  return BinaryOp::kAdd;
}

// How a scatter combines an update with the element it lands on. Add, mul,
// min and max combine as scalar::Binary does (bool add is or, mul is and).
enum class ScatterMode : uint8_t { kSet, kAdd, kMul, kMin, kMax };

std::string_view op_name(UnaryOp op);
std::string_view op_name(BinaryOp op);
std::string_view op_name(CompareOp op);
std::string_view op_name(ReduceOp op);
// "set", "add", "mul", "min", "max".
std::string_view op_name(ScatterMode mode);

}  // namespace baton
