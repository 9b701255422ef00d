// Elementwise kernels: unary, binary, compare, select and convert over n
// contiguous elements.
//
// Every element is computed exactly as baton::scalar (core/scalar_math.h)
// computes it, in the same compute type (float for float16/bfloat16, with
// ToCompute/FromCompute around each op), so results are bitwise equal to the
// reference interpreter's. Simple float ops are auto-vectorized; that changes
// no result because each element is still one IEEE operation.
//
// Aliasing: `out` may be the same pointer as any input (in-place execution
// relies on it); it must not partially overlap one. A scalar operand (see
// ScalarOperand) is read once before anything is written.
// Ownership: pointers are borrowed for the call only; nothing is kept.
// Thread-safety: pure functions of their arguments; calls over ~64K elements
// (fewer for transcendental ops) are split across ThreadPool::Global().
#pragma once

#include <cstdint>

#include "baton/core/dtype.h"
#include "baton/core/op_codes.h"

namespace baton::cpu {

// Which operand of a binary op, if any, is one element broadcast to all n.
enum class ScalarOperand : uint8_t { kNone, kLhs, kRhs };

// out[i] = op(in[i]); in and out have `dtype`, except that abs, real and
// imag of a complex `dtype` write its real type (real_dtype(dtype)).
void Unary(UnaryOp op, DType dtype, const void* in, void* out, int64_t n);

// out[i] = op(lhs[i], rhs[i]); all three have `dtype`. With `scalar` set,
// that operand holds a single element used for every i. kComplex takes
// float32 (float64) operands of `dtype` and writes complex_dtype(dtype).
void Binary(BinaryOp op, DType dtype, const void* lhs, const void* rhs,
            void* out, int64_t n, ScalarOperand scalar = ScalarOperand::kNone);

// out[i] = op(lhs[i], rhs[i]) as bool; lhs and rhs have `dtype`.
void Compare(CompareOp op, DType dtype, const void* lhs, const void* rhs,
             bool* out, int64_t n, ScalarOperand scalar = ScalarOperand::kNone);

// Which operands of a select hold a single element broadcast to all n.
struct SelectScalars {
  bool pred = false;
  bool on_true = false;
  bool on_false = false;
};

// out[i] = pred[i] ? on_true[i] : on_false[i]; on_true, on_false and out have
// `dtype` (only its size matters: select moves bits; 1 to 16 bytes).
void Select(DType dtype, const bool* pred, const void* on_true,
            const void* on_false, void* out, int64_t n,
            SelectScalars scalars = {});

// out[i] = ConvertElement<to>(in[i]) (dtype_dispatch.h: float->int
// truncates and saturates, NaN -> 0, -> bool is != 0). In place (out == in)
// only when both types have the same size.
void Convert(DType from, DType to, const void* in, void* out, int64_t n);

}  // namespace baton::cpu
