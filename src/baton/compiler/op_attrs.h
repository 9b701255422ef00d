// The operations of the IR and their attributes.
//
// Every op has one small attribute struct (empty for ops that have none);
// OpAttrs is the variant of all of them, in the order of OpKind, so an
// instruction's kind is always its attributes' variant index and the two
// cannot disagree. Operand order is given beside each struct. Semantics
// follow StableHLO unless said otherwise; all dimension lists are in the
// operand's (or result's) dimension numbering, 0-based.
//
// All types here are plain values: copyable, comparable with ==, and safe to
// share between threads once built.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "baton/compiler/literal.h"
#include "baton/compiler/value_type.h"
#include "baton/core/gather_bounds.h"
#include "baton/core/linalg_kind.h"
#include "baton/core/op_codes.h"

namespace baton::compiler {

class HostCallback;  // host_callback.h

enum class OpKind : uint8_t {
  kParameter,
  kConstant,
  kIota,
  kConvert,
  kUnary,
  kBinary,
  kCompare,
  kSelect,
  kBroadcastInDim,
  kReshape,
  kTranspose,
  kSlice,
  kDynamicSlice,
  kDynamicUpdateSlice,
  kConcatenate,
  kPad,
  kGather,
  kScatter,
  kReduce,
  kDotGeneral,
  kTransfer,
  kSort,
  kLinalg,
  kHostCallback,
  kCall,
  kWhile,
  kScan,
  kCase,
  kFft,
  // A new kind goes here, with its attribute struct in OpAttrs below (at the
  // same position), and every rule tests/cpp/op_registry checks.
};

// StableHLO-style names: "parameter", "broadcast_in_dim", "dot_general", ...
std::string_view op_kind_name(OpKind kind);

// How scatter combines an update with the element it lands on (shared with
// the kernels; op_name(mode) gives "set", "add", ...).
using baton::ScatterMode;
// Which decomposition or solve a linalg op is (core/linalg_kind.h).
using baton::LinalgKind;

// No operands. Parameter `index` of the program, with its declared type
// (which keeps its own memory kind). Indices are dense, in program order.
struct ParameterAttrs {
  int index = 0;
  ValueType type;
  bool operator==(const ParameterAttrs&) const = default;
};

// No operands. A value known at compile time. The literal is immutable and
// shared; == compares identity (content de-duplication is a pass's job).
struct ConstantAttrs {
  std::shared_ptr<const Literal> literal;
  bool operator==(const ConstantAttrs&) const = default;
};

// No operands. Result[i...] = i[dimension], converted to dtype.
struct IotaAttrs {
  Shape shape;
  DType dtype = DType::kInt32;
  int64_t dimension = 0;
  bool operator==(const IotaAttrs&) const = default;
};

// (operand). Elementwise type conversion (ConvertElement semantics).
struct ConvertAttrs {
  DType dtype = DType::kFloat32;
  bool operator==(const ConvertAttrs&) const = default;
};

// (operand). Elementwise, per scalar_math.h.
struct UnaryAttrs {
  UnaryOp op = UnaryOp::kNeg;
  bool operator==(const UnaryAttrs&) const = default;
};

// (lhs, rhs) of equal shape and dtype: the IR never broadcasts implicitly.
struct BinaryAttrs {
  BinaryOp op = BinaryOp::kAdd;
  bool operator==(const BinaryAttrs&) const = default;
};

// (lhs, rhs) of equal shape and dtype; the result is bool.
struct CompareAttrs {
  CompareOp op = CompareOp::kEq;
  bool operator==(const CompareAttrs&) const = default;
};

// (pred, on_true, on_false), all of one shape; pred is bool.
struct SelectAttrs {
  bool operator==(const SelectAttrs&) const = default;
};

// (operand). Operand dimension i becomes result dimension
// broadcast_dimensions[i]; it must be 1 (repeated) or the result's size.
struct BroadcastInDimAttrs {
  Shape shape;
  std::vector<int64_t> broadcast_dimensions;
  bool operator==(const BroadcastInDimAttrs&) const = default;
};

// (operand). Same elements in row-major order, new shape.
struct ReshapeAttrs {
  Shape shape;
  bool operator==(const ReshapeAttrs&) const = default;
};

// (operand). Result dimension i is operand dimension permutation[i].
struct TransposeAttrs {
  std::vector<int64_t> permutation;
  bool operator==(const TransposeAttrs&) const = default;
};

// (operand). Static strided slice: per dimension, elements
// start, start+stride, ... below limit.
struct SliceAttrs {
  std::vector<int64_t> start;
  std::vector<int64_t> limit;
  std::vector<int64_t> stride;
  bool operator==(const SliceAttrs&) const = default;
};

// (operand, start_0, ..., start_{rank-1}): integer scalars. Each start is
// clamped to [0, dim - slice_size] so the slice always fits.
struct DynamicSliceAttrs {
  std::vector<int64_t> slice_sizes;
  bool operator==(const DynamicSliceAttrs&) const = default;
};

// (operand, update, start_0, ..., start_{rank-1}): starts clamped to
// [0, dim - update_dim]. The result is the operand with the block replaced.
struct DynamicUpdateSliceAttrs {
  bool operator==(const DynamicUpdateSliceAttrs&) const = default;
};

// (operand_0, ..., operand_{n-1}), n >= 1, joined along `dimension`.
struct ConcatenateAttrs {
  int64_t dimension = 0;
  bool operator==(const ConcatenateAttrs&) const = default;
};

// (operand, padding_value): padding_value is a scalar of the operand's dtype.
// Per dimension: `low` before, `high` after (negative values crop) and
// `interior` (>= 0) between neighbouring elements.
struct PadAttrs {
  std::vector<int64_t> low;
  std::vector<int64_t> high;
  std::vector<int64_t> interior;
  bool operator==(const PadAttrs&) const = default;
};

// (operand, indices): numpy `take` along `axis`. Result shape:
// operand[:axis] + indices + operand[axis+1:]. An index outside [0, dim)
// reads as `bounds` says (core/gather_bounds.h): by default clamped to
// [0, dim - 1]; jax.numpy's take wraps negatives and fills the rest.
struct GatherAttrs {
  int64_t axis = 0;
  GatherBounds bounds = {};
  bool operator==(const GatherAttrs&) const = default;
};

// (operand, indices, updates): the inverse of gather with the same axis;
// updates are shaped like gather's result. Updates whose index is out of
// range are dropped; repeated indices combine in row-major order of the
// updates (for kSet the last one wins).
struct ScatterAttrs {
  int64_t axis = 0;
  ScatterMode mode = ScatterMode::kSet;
  bool operator==(const ScatterAttrs&) const = default;
};

// (operand). Reduces over `axes`, which disappear from the shape.
struct ReduceAttrs {
  ReduceOp op = ReduceOp::kSum;
  std::vector<int64_t> axes;
  bool operator==(const ReduceAttrs&) const = default;
};

// (lhs, rhs). Result dimensions: batch..., lhs free..., rhs free..., each
// group in operand order (StableHLO dot_general).
struct DotGeneralAttrs {
  std::vector<int64_t> lhs_batch;
  std::vector<int64_t> rhs_batch;
  std::vector<int64_t> lhs_contracting;
  std::vector<int64_t> rhs_contracting;
  bool operator==(const DotGeneralAttrs&) const = default;
};

// (operand). The same value, moved to another memory kind (a copy).
struct TransferAttrs {
  MemoryKind memory_kind = MemoryKind::kDevice;
  bool operator==(const TransferAttrs&) const = default;
};

// (operand): any dtype. The result has the operand's shape: its values
// sorted along `dimension` (indices == false), or (indices == true) the
// int32 permutation that sorts them, so that values = take_along_axis(
// operand, permutation, dimension). The sort is stable. Order (as
// jax.numpy): integers and bool (false < true) by value; floats by value
// with -0.0 == +0.0 and every NaN equal to the others and after +inf.
// Descending: the permutation is the stable sort by the reversed order
// (equal keys still in their original order, NaNs first), while the values
// are the ascending values reversed (jnp.sort(descending=True) and
// jnp.argsort(descending=True, stable=True)); the two agree up to the bit
// patterns of equal keys (-0.0 / +0.0, NaN payloads).
struct SortAttrs {
  int64_t dimension = 0;
  bool descending = false;
  bool indices = false;
  bool operator==(const SortAttrs&) const = default;
};

// A dense linear-algebra decomposition or solve, computed by LAPACK
// (core/linalg_lapack.h). Operands are float32 or float64 (the front end
// upcasts 16-bit floats) and batched over their leading dimensions: the
// last two are the matrix, row-major, and every operand has the same
// leading (batch) dimensions. Multi-result decompositions pack their
// results into one array (the IR has one result per instruction), so the
// decomposition runs once; the front end slices the parts out. Per kind
// (fields not named are ignored, and should be left at their defaults):
//
// kCholesky (a[..., n, n]), `lower`: reads the `lower` (else upper)
//   triangle of a and gives L (lower) or U = L^T (upper) of a = L L^T,
//   [..., n, n], the other triangle zero. A matrix that is not positive
//   definite gives NaN in all of its n*n entries (as jax).
// kTriangularSolve (a[..., n, n], b[..., n, k] when left_side, else
//   b[..., k, n]), `lower`, `transpose_a`, `left_side`, `unit_diagonal`:
//   x of b's shape with op(a) x = b (left_side) or x op(a) = b, where
//   op(a) = a^T if transpose_a, else a; only the `lower` (else upper)
//   triangle of a is read, and with unit_diagonal its diagonal is taken
//   to be ones (not read).
// kLu (a[..., n, n]): [..., n, n + 1]. Columns 0..n-1: L and U packed
//   (L below the diagonal with its unit diagonal implied, U on and above
//   it); column n: the row permutation p (as the result's dtype, exact for
//   n < 2^24) with a[p, :] = L U (jax.lax.linalg.lu's permutation, not
//   LAPACK's pivot swaps). Partial pivoting (getrf); a singular a still
//   gives its factors (U with a zero on its diagonal).
// kQr (a[..., m, n]), `full_matrices`: with k = min(m, n) and c = m if
//   full_matrices else k, a flat [..., m*c + c*n]: Q (m x c, orthonormal
//   columns), then R (c x n, upper triangular), each row-major, a = Q R.
// kEigh (a[..., n, n], symmetric), `lower`: reads the `lower` (else upper)
//   triangle; [..., n, n + 1]: the orthonormal eigenvectors in columns
//   0..n-1 (column j for eigenvalue j), the eigenvalues ascending in
//   column n; a = V diag(w) V^T. No convergence: NaN everywhere.
// kSvd (a[..., m, n]), `full_matrices`: with k = min(m, n), u = m and
//   v = n if full_matrices else u = v = k, a flat [..., m*u + k + v*n]:
//   U (m x u), s (k, descending, >= 0), Vt (v x n), each row-major;
//   a = U[:, :k] diag(s) Vt[:k, :]. No convergence: NaN everywhere.
// kSchur (a[..., n, n]): [..., n, 2n], the real Schur form a = Z T Z^T
//   (LAPACK's gees, eigenvalues in the order it finds them): T
//   quasi-upper-triangular (1x1 blocks for real eigenvalues, 2x2 for
//   complex pairs) in columns 0..n-1, the orthogonal Z in n..2n-1. No
//   convergence, or a NaN or infinity in a: NaN everywhere.
// The fields are core's LinalgOptions (kind, lower, transpose_a, left_side,
// unit_diagonal, full_matrices), which the LAPACK routines take as they are.
struct LinalgAttrs : LinalgOptions {
  bool operator==(const LinalgAttrs&) const = default;
};

class Program;  // ir.h

// (operands...): any number, of any types. Each time it runs, calls
// `callback` on the host with the operands' values (bt.debug.print,
// bt.debug.callback). It is the IR's one side effect: passes keep it though
// nothing reads its result, never merge two, and keep effects in program
// order (effects.h). The result is a bool[] token that nothing needs to
// read. == compares the callback's identity.
struct HostCallbackAttrs {
  std::shared_ptr<const HostCallback> callback;
  bool operator==(const HostCallbackAttrs&) const = default;
};

// What a call stands for. Calls exist for the transformations
// (compiler/transforms/): each kind tells autodiff or batching something the
// plain ops cannot. Before a program is planned or interpreted,
// InlineCalls (passes.h) replaces every call by its body, so no backend ever
// sees one.
enum class CallKind : uint8_t {
  // The body, differentiated by recomputing it in the backward pass from the
  // call's operands (bt.checkpoint); `policy` says which of its values the
  // forward pass may keep instead.
  kCheckpoint,
  // Identity on its single operand (no body) whose derivative is zero
  // (lax.stop_gradient).
  kStopGradient,
  // Identity on its single operand (no body) that names the value for
  // checkpoint policies (bt.ad_checkpoint.checkpoint_name); `name`.
  kName,
  // The body with a user's JVP rule (bt.custom_jvp): `rule` takes (primals...,
  // tangents...) and returns (outputs..., output tangents...).
  kCustomJvp,
  // The body with a user's VJP rule (bt.custom_vjp): `rule` is the forward
  // rule, (primals...) -> (outputs..., residuals...); `rule2` the backward
  // rule, (residuals..., output cotangents...) -> (primal cotangents...).
  kCustomVjp,
  // Identity on its single operand (no body) that lays the value out over
  // the mesh as `sharding` says (lax.with_sharding_constraint inside jit).
  // Its derivatives are constrained alike. InlineCalls drops it unless asked
  // to keep it: only the SPMD partitioner (spmd_partitioner.h) reads it.
  kShardingConstraint,
};
std::string_view call_kind_name(CallKind kind);

// Which values of a checkpointed body the forward pass keeps for the
// backward pass (bt.checkpoint_policies); everything else is recomputed.
struct CheckpointPolicy {
  enum class Kind : uint8_t {
    kNothingSaveable,  // also the default of bt.checkpoint (policy=None)
    kEverythingSaveable,
    kDotsSaveable,
    kDotsWithNoBatchDimsSaveable,
    kSaveOnlyTheseNames,  // values named (kName calls) in `names`
    // Like kDotsWithNoBatchDimsSaveable, but the kept values are moved to
    // `offload_dst` for the time between the passes and back to
    // `offload_src` when the backward pass needs them.
    kOffloadDotsWithNoBatchDims,
  };
  Kind kind = Kind::kNothingSaveable;
  std::vector<std::string> names;
  MemoryKind offload_src = MemoryKind::kDevice;
  MemoryKind offload_dst = MemoryKind::kPinnedHost;
  bool operator==(const CheckpointPolicy&) const = default;
};

// (operands...): the body's parameters, in order. A call produces ONE value,
// output `output_index` of its body: a body with n outputs is called by n
// call instructions with equal attributes except output_index, emitted one
// after the other (a "call group", see transforms/call_group.h), so the IR
// keeps one value per instruction. Bodies and rules are immutable and
// shared; == compares their identity.
inline constexpr char kUnconstrainedAxis[] = "?";

struct CallAttrs {
  CallKind kind = CallKind::kCheckpoint;
  int output_index = 0;
  std::shared_ptr<const Program> body;   // null for kStopGradient and kName
  std::shared_ptr<const Program> rule;   // kCustomJvp, kCustomVjp (forward)
  std::shared_ptr<const Program> rule2;  // kCustomVjp (backward)
  CheckpointPolicy policy;               // kCheckpoint
  std::string name;  // kName: the value's name; others: the function's
  // kShardingConstraint: per dimension of the value, the names of the mesh
  // axes splitting it, major first (empty: whole; {kUnconstrainedAxis}:
  // as the operand is, JAX's P.UNCONSTRAINED -- vmap's batch dimension).
  std::vector<std::vector<std::string>> sharding;
  bool operator==(const CallAttrs&) const = default;
};

// Control flow (control_flow.h has the helpers passes use). Like calls, a
// control-flow op with n results is n instructions with equal attributes
// except output_index, emitted one after the other (a "region group"); the
// group runs once. Unlike calls they stay in the program down to the
// executor, which runs their regions (nested programs) repeatedly or
// conditionally. Regions are immutable and shared; == compares identity.

// (carries..., invariants...): `num_carries` initial loop values, then the
// values the regions read that do not change. `cond`: (carries...,
// invariants...) -> bool[]; `body`: (carries..., invariants...) ->
// (carries...), each of its carry's type. Result i: carry i when `cond`
// first returns false (lax.while_loop).
struct WhileAttrs {
  int output_index = 0;
  int num_carries = 0;
  std::shared_ptr<const Program> cond;
  std::shared_ptr<const Program> body;
  bool operator==(const WhileAttrs&) const = default;
};

// (carries..., xs..., invariants...): `num_carries` initial carries, then
// `num_xs` arrays with leading dimension `length`, then invariants.
// `body`: (carries..., x slices..., invariants...) -> (carries..., y
// slices...). Iteration t (t = length-1 .. 0 when `reverse`) reads slice t
// of each x and writes slice t of each stacked y. Results: the final
// carries, then the ys stacked to [length, ...] (lax.scan).
struct ScanAttrs {
  int output_index = 0;
  int num_carries = 0;
  int num_xs = 0;
  int64_t length = 0;
  bool reverse = false;
  std::shared_ptr<const Program> body;
  bool operator==(const ScanAttrs&) const = default;
};

// (index, operands...): index is an int32 scalar, clamped to
// [0, branches - 1]; the chosen branch, (operands...) -> (results...), runs
// (lax.switch; lax.cond is a case of two branches, false first). All
// branches have the same result types.
struct CaseAttrs {
  int output_index = 0;
  std::vector<std::shared_ptr<const Program>> branches;
  bool operator==(const CaseAttrs&) const = default;
};

// Which discrete Fourier transform an fft op computes (jax.lax.FftType).
enum class FftType : uint8_t {
  kFft,    // complex -> complex, forward (exp(-2 pi i jk/n))
  kIfft,   // complex -> complex, inverse, scaled by 1/N
  kRfft,   // real -> complex: the last dimension becomes n/2 + 1
  kIrfft,  // complex -> real, inverse, scaled by 1/N: the last dimension
           // of the operand is n/2 + 1 and becomes n
};
// "fft", "ifft", "rfft", "irfft".
std::string_view fft_type_name(FftType type);

// (operand). A multi-dimensional DFT over the operand's trailing
// lengths.size() dimensions (1 to 3, as jax.lax.fft), batched over the
// leading ones; N is the product of `lengths`. kFft/kIfft: complex operand,
// trailing dimensions == lengths, same type out. kRfft: float operand,
// trailing dimensions == lengths, result of the complex dtype with the last
// dimension lengths.back()/2 + 1. kIrfft: complex operand whose trailing
// dimensions are lengths with the last one lengths.back()/2 + 1; the result
// is of the real dtype with trailing dimensions == lengths (the imaginary
// parts of the self-conjugate bins are ignored, as numpy). The inverse
// types are normalised by 1/N (jax.lax.fft).
struct FftAttrs {
  FftType type = FftType::kFft;
  std::vector<int64_t> lengths;
  bool operator==(const FftAttrs&) const = default;
};

// In OpKind order (checked below).
using OpAttrs =
    std::variant<ParameterAttrs, ConstantAttrs, IotaAttrs, ConvertAttrs,
                 UnaryAttrs, BinaryAttrs, CompareAttrs, SelectAttrs,
                 BroadcastInDimAttrs, ReshapeAttrs, TransposeAttrs, SliceAttrs,
                 DynamicSliceAttrs, DynamicUpdateSliceAttrs, ConcatenateAttrs,
                 PadAttrs, GatherAttrs, ScatterAttrs, ReduceAttrs,
                 DotGeneralAttrs, TransferAttrs, SortAttrs, LinalgAttrs,
                 HostCallbackAttrs, CallAttrs, WhileAttrs, ScanAttrs, CaseAttrs,
                 FftAttrs>;

inline OpKind KindOf(const OpAttrs& attrs) {
  return static_cast<OpKind>(attrs.index());
}

// The op's name as users see it in messages: "add", "compare LT",
// "reduce sum", "scatter add", "broadcast_in_dim".
std::string OpDisplayName(const OpAttrs& attrs);

// How many kinds there are (they run 0 .. kNumOpKinds - 1): one per
// attribute struct, so a new op is counted (and iterated by the op
// registry test) as soon as it has its attributes; the checks below keep
// the enumerators in step with the structs.
inline constexpr int kNumOpKinds =
    static_cast<int>(std::variant_size_v<OpAttrs>);
// kFft is the last kind: one added after it takes its place here.
static_assert(static_cast<int>(OpKind::kFft) + 1 == kNumOpKinds,
              "OpKind and OpAttrs differ in length");
#define BATON_CHECK_ATTRS_ORDER(kind, type)                           \
  static_assert(                                                      \
      std::is_same_v<std::variant_alternative_t<                      \
                         static_cast<size_t>(OpKind::kind), OpAttrs>, \
                     type>)
BATON_CHECK_ATTRS_ORDER(kParameter, ParameterAttrs);
BATON_CHECK_ATTRS_ORDER(kConstant, ConstantAttrs);
BATON_CHECK_ATTRS_ORDER(kIota, IotaAttrs);
BATON_CHECK_ATTRS_ORDER(kConvert, ConvertAttrs);
BATON_CHECK_ATTRS_ORDER(kUnary, UnaryAttrs);
BATON_CHECK_ATTRS_ORDER(kBinary, BinaryAttrs);
BATON_CHECK_ATTRS_ORDER(kCompare, CompareAttrs);
BATON_CHECK_ATTRS_ORDER(kSelect, SelectAttrs);
BATON_CHECK_ATTRS_ORDER(kBroadcastInDim, BroadcastInDimAttrs);
BATON_CHECK_ATTRS_ORDER(kReshape, ReshapeAttrs);
BATON_CHECK_ATTRS_ORDER(kTranspose, TransposeAttrs);
BATON_CHECK_ATTRS_ORDER(kSlice, SliceAttrs);
BATON_CHECK_ATTRS_ORDER(kDynamicSlice, DynamicSliceAttrs);
BATON_CHECK_ATTRS_ORDER(kDynamicUpdateSlice, DynamicUpdateSliceAttrs);
BATON_CHECK_ATTRS_ORDER(kConcatenate, ConcatenateAttrs);
BATON_CHECK_ATTRS_ORDER(kPad, PadAttrs);
BATON_CHECK_ATTRS_ORDER(kGather, GatherAttrs);
BATON_CHECK_ATTRS_ORDER(kScatter, ScatterAttrs);
BATON_CHECK_ATTRS_ORDER(kReduce, ReduceAttrs);
BATON_CHECK_ATTRS_ORDER(kDotGeneral, DotGeneralAttrs);
BATON_CHECK_ATTRS_ORDER(kTransfer, TransferAttrs);
BATON_CHECK_ATTRS_ORDER(kSort, SortAttrs);
BATON_CHECK_ATTRS_ORDER(kLinalg, LinalgAttrs);
BATON_CHECK_ATTRS_ORDER(kHostCallback, HostCallbackAttrs);
BATON_CHECK_ATTRS_ORDER(kCall, CallAttrs);
BATON_CHECK_ATTRS_ORDER(kWhile, WhileAttrs);
BATON_CHECK_ATTRS_ORDER(kScan, ScanAttrs);
BATON_CHECK_ATTRS_ORDER(kCase, CaseAttrs);
BATON_CHECK_ATTRS_ORDER(kFft, FftAttrs);
#undef BATON_CHECK_ATTRS_ORDER

}  // namespace baton::compiler
