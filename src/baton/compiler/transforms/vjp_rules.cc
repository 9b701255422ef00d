// Cotangent rules (vjp_internal.h) for elementwise, layout, reduction and
// contraction ops; the indexing ops are in vjp_indexing_rules.cc. The rules
// follow JAX's transpose and JVP rules, and each reads (through Get) only
// the forward values it needs, choosing the output over the input where the
// derivative allows (tanh, exp, logistic, sqrt, rsqrt), so residuals stay
// few.
#include <algorithm>
#include <numeric>

#include "baton/compiler/transforms/vjp_internal.h"
#include "baton/core/error.h"

namespace baton::compiler::transforms::vjp_internal {
namespace {

std::vector<int64_t> InversePermutation(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inv[perm[i]] = static_cast<int64_t>(i);
  return inv;
}

bool IsIdentity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Dimensions of a rank-`rank` operand that are in neither list, ascending.
std::vector<int64_t> Remaining(int rank, const std::vector<int64_t>& a,
                               const std::vector<int64_t>& b) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(a, d) && !Contains(b, d)) out.push_back(d);
  }
  return out;
}

std::vector<int64_t> Range(int64_t begin, int64_t end) {
  std::vector<int64_t> r;
  for (int64_t i = begin; i < end; ++i) r.push_back(i);
  return r;
}

// `mine` contracting dims reordered to follow the other side's contracting
// dims in ascending order (the order in which dot_general returns the other
// side's leftover dims).
std::vector<int64_t> SortedByOther(const std::vector<int64_t>& mine,
                                   const std::vector<int64_t>& other) {
  std::vector<size_t> idx(other.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(),
            [&](size_t a, size_t b) { return other[a] < other[b]; });
  std::vector<int64_t> out;
  for (size_t i : idx) out.push_back(mine[i]);
  return out;
}

std::vector<int64_t> Concat(std::vector<int64_t> a,
                            const std::vector<int64_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The transpose taking dims labelled `labels` (operand dims) to operand
// order.
std::vector<int64_t> ArgSort(const std::vector<int64_t>& labels) {
  std::vector<int64_t> perm(labels.size());
  for (size_t p = 0; p < labels.size(); ++p)
    perm[labels[p]] = static_cast<int64_t>(p);
  return perm;
}

}  // namespace

void VjpBuilder::ApplyRule(int n, const Tracer& ct) {
  const Node& nd = nodes_[n];
  switch (KindOf(nd.attrs)) {
    case OpKind::kConvert:
    case OpKind::kUnary:
    case OpKind::kBinary:
    case OpKind::kSelect:
      return ApplyElementwiseRule(n, ct);
    case OpKind::kBroadcastInDim:
    case OpKind::kReshape:
    case OpKind::kTranspose:
    case OpKind::kTransfer:
    case OpKind::kSlice:
    case OpKind::kConcatenate:
    case OpKind::kPad:
      return ApplyLayoutRule(n, ct);
    case OpKind::kDynamicSlice:
    case OpKind::kDynamicUpdateSlice:
    case OpKind::kGather:
    case OpKind::kScatter:
    case OpKind::kSort:
      return ApplyIndexingRule(n, ct);
    case OpKind::kReduce:
      return ApplyReduceRule(n, ct);
    case OpKind::kDotGeneral:
      return ApplyDotRule(n, ct);
    case OpKind::kLinalg:
      return ApplyLinalgRule(n, ct);
    case OpKind::kFft:
      return ApplyFftRule(n, ct);
    case OpKind::kCall: {
      const auto& call = std::get<CallAttrs>(nd.attrs);
      if (call.kind == CallKind::kName) {
        return AddCotangent(nd.operands[0], ct);
      }
      if (call.kind == CallKind::kShardingConstraint) {
        // As JAX transposes with_sharding_constraint: the cotangent is laid
        // out alike.
        return AddCotangent(nd.operands[0], bwd_.Emit(call, {ct}));
      }
      break;
    }
    default:
      break;
  }
  NoRule(nd.attrs);
}

void VjpBuilder::ApplyElementwiseRule(int n, const Tracer& ct) {
  const Node& nd = nodes_[n];
  const std::vector<int> ops = nd.operands;
  auto active = [&](int i) { return nodes_[ops[i]].active; };
  auto x = [&](int i) { return Get(ops[i]); };
  auto add = [&](int i, const Tracer& t) { AddCotangent(ops[i], t); };
  const DType dtype = nd.type.dtype;

  if (const auto* c = std::get_if<ConvertAttrs>(&nd.attrs)) {
    (void)c;
    const DType from = nodes_[ops[0]].type.dtype;
    if (active(0)) add(0, from == ct.dtype() ? ct : astype(ct, from));
    return;
  }
  if (std::holds_alternative<SelectAttrs>(nd.attrs)) {
    const Tracer pred = x(0);
    const Tracer zero = Zeros(bwd_, ValueType{ct.shape(), dtype});
    if (active(1)) add(1, bwd_.Emit(SelectAttrs{}, {pred, ct, zero}));
    if (active(2)) add(2, bwd_.Emit(SelectAttrs{}, {pred, zero, ct}));
    return;
  }
  if (const auto* u = std::get_if<UnaryAttrs>(&nd.attrs)) {
    switch (u->op) {
      case UnaryOp::kNeg:
        return add(0, -ct);
      case UnaryOp::kAbs:
        // Complex x: the transpose of dx -> real(conj(sign(x)) dx), as JAX
        // (grad(abs)(z) = conj(z) / |z|).
        if (is_complex(x(0).dtype())) return add(0, ct * conj(sign(x(0))));
        // As JAX: slope 1 at 0.
        return add(0, where(ge(x(0), 0), ct, -ct));
      // The parts of complex numbers, transposed as in JAX: real's
      // cotangent is ct + 0j, imag's 0 - ct j (imag of a real operand is a
      // constant zero).
      case UnaryOp::kReal:
        return add(0, astype(ct, nodes_[ops[0]].type.dtype));
      case UnaryOp::kImag:
        if (!is_complex(nodes_[ops[0]].type.dtype)) return;
        return add(0, complex(Zeros(bwd_, ValueType{ct.shape(), ct.dtype()}), -ct));
      case UnaryOp::kConj:
        return add(0, conj(ct));
      case UnaryOp::kExp:
        return add(0, ct * Get(n));
      case UnaryOp::kLog:
        return add(0, ct / x(0));
      case UnaryOp::kTanh: {
        const Tracer y = Get(n);
        return add(0, ct * (1 - y * y));
      }
      case UnaryOp::kLogistic: {
        const Tracer y = Get(n);
        return add(0, ct * (y * (1 - y)));
      }
      case UnaryOp::kSqrt:
        return add(0, (ct * 0.5) / Get(n));
      case UnaryOp::kRsqrt: {
        // d/dx x^-1/2 = -x^-3/2 / 2 = -y^3 / 2: only the output is read.
        const Tracer y = Get(n);
        return add(0, ct * (y * y * y * -0.5));
      }
      case UnaryOp::kSin:
        return add(0, ct * cos(x(0)));
      case UnaryOp::kCos:
        return add(0, -(ct * sin(x(0))));
      case UnaryOp::kLog1p:
        return add(0, ct / (x(0) + 1));
      case UnaryOp::kExpm1:
        return add(0, ct * (Get(n) + 1));
      case UnaryOp::kTan: {
        const Tracer y = Get(n);
        return add(0, ct * (y * y + 1));
      }
      case UnaryOp::kAtan: {
        const Tracer a = x(0);
        return add(0, ct / (a * a + 1));
      }
      default:
        NoRule(nd.attrs);
    }
  }
  const BinaryOp op = std::get<BinaryAttrs>(nd.attrs).op;
  switch (op) {
    case BinaryOp::kAdd:
      add(0, ct);
      add(1, ct);
      return;
    case BinaryOp::kSub:
      add(0, ct);
      if (active(1)) add(1, -ct);
      return;
    case BinaryOp::kMul:
      if (ops[0] == ops[1]) {  // x * x: one product, added twice
        const Tracer c = ct * x(0);
        add(0, c);
        add(1, c);
        return;
      }
      if (active(0)) add(0, ct * x(1));
      if (active(1)) add(1, ct * x(0));
      return;
    case BinaryOp::kDiv: {
      const Tracer q = ct / x(1);
      if (active(0)) add(0, q);
      if (active(1)) add(1, -(q * x(0) / x(1)));
      return;
    }
    case BinaryOp::kPow: {
      // As JAX: the base's derivative is 0 where the exponent is 0 (also at
      // a zero base), and the exponent's uses log(1) at a zero base.
      const Tracer a = x(0), b = x(1);
      if (active(0)) {
        const Tracer b_zero = eq(b, 0);
        const Tracer b_safe = where(b_zero, 1, b);
        const Tracer jac = where(b_zero, 0, b_safe * pow(a, b - 1));
        add(0, ct * jac);
      }
      if (active(1)) {
        const Tracer a_safe = where(eq(a, 0), 1, a);
        add(1, ct * (log(a_safe) * Get(n)));
      }
      return;
    }
    case BinaryOp::kMax:
    case BinaryOp::kMin: {
      // Ties split the cotangent evenly (JAX's balanced rule); NaN gives 0.
      const Tracer a = x(0), b = x(1);
      const Tracer half = astype(eq(a, b), dtype) * 0.5;
      const bool is_max = op == BinaryOp::kMax;
      if (active(0)) {
        add(0, ct * (astype(is_max ? gt(a, b) : lt(a, b), dtype) + half));
      }
      if (active(1)) {
        add(1, ct * (astype(is_max ? lt(a, b) : gt(a, b), dtype) + half));
      }
      return;
    }
    case BinaryOp::kAtan2: {
      // atan2(a, b): d/da = b / (a^2 + b^2), d/db = -a / (a^2 + b^2).
      const Tracer a = x(0), b = x(1);
      const Tracer q = ct / (a * a + b * b);
      if (active(0)) add(0, q * b);
      if (active(1)) add(1, -(q * a));
      return;
    }
    case BinaryOp::kComplex:
      if (active(0)) add(0, real(ct));
      if (active(1)) add(1, -imag(ct));
      return;
    case BinaryOp::kRem: {
      // a rem b = a - b * trunc(a / b).
      add(0, ct);
      if (active(1)) {
        const Tracer q = x(0) / x(1);
        add(1, -(ct * (sign(q) * floor(abs(q)))));
      }
      return;
    }
    default:
      NoRule(nd.attrs);
  }
}

void VjpBuilder::ApplyLayoutRule(int n, const Tracer& ct) {
  const Node& nd = nodes_[n];
  const std::vector<int> ops = nd.operands;
  const ValueType xt = nodes_[ops[0]].type;
  auto add = [&](int i, const Tracer& t) { AddCotangent(ops[i], t); };
  const DType dtype = nd.type.dtype;

  if (const auto* a = std::get_if<BroadcastInDimAttrs>(&nd.attrs)) {
    // Sum over the added dimensions and over size-1 dimensions that were
    // expanded; then put the kept dimensions in operand order and restore
    // the size-1 ones.
    const int rank = xt.shape.rank();
    std::vector<int64_t> kept;  // operand dims that survive the reduction
    for (int i = 0; i < rank; ++i) {
      const int64_t out =
          a->shape[static_cast<int>(a->broadcast_dimensions[i])];
      if (!(xt.shape[i] == 1 && out != 1)) kept.push_back(i);
    }
    std::vector<int64_t> kept_out;
    for (int64_t i : kept) kept_out.push_back(a->broadcast_dimensions[i]);
    std::vector<int64_t> axes;
    for (int64_t d = 0; d < a->shape.rank(); ++d) {
      if (!Contains(kept_out, d)) axes.push_back(d);
    }
    Tracer t = ct;
    if (!axes.empty()) t = bwd_.Emit(ReduceAttrs{ReduceOp::kSum, axes}, {t});
    // After the reduction the dims are the kept ones in result order.
    std::vector<int64_t> by_result(kept.size());
    std::iota(by_result.begin(), by_result.end(), 0);
    std::sort(by_result.begin(), by_result.end(),
              [&](int64_t p, int64_t q) { return kept_out[p] < kept_out[q]; });
    // Position j holds operand dim kept[by_result[j]]; we want operand order.
    std::vector<int64_t> perm(kept.size());
    for (size_t j = 0; j < by_result.size(); ++j)
      perm[by_result[j]] = static_cast<int64_t>(j);
    if (!IsIdentity(perm)) t = bwd_.Emit(TransposeAttrs{perm}, {t});
    if (t.shape() != xt.shape) t = bwd_.Emit(ReshapeAttrs{xt.shape}, {t});
    return add(0, t);
  }
  if (std::holds_alternative<ReshapeAttrs>(nd.attrs)) {
    return add(0, bwd_.Emit(ReshapeAttrs{xt.shape}, {ct}));
  }
  if (const auto* a = std::get_if<TransposeAttrs>(&nd.attrs)) {
    return add(
        0, bwd_.Emit(TransposeAttrs{InversePermutation(a->permutation)}, {ct}));
  }
  if (std::holds_alternative<TransferAttrs>(nd.attrs)) {
    Tracer t = ct;
    if (t.memory_kind() != xt.memory_kind) {
      t = bwd_.Emit(TransferAttrs{xt.memory_kind}, {t});
    }
    return add(0, t);
  }
  if (const auto* a = std::get_if<SliceAttrs>(&nd.attrs)) {
    // Zeros around and (for strides) between the slice's elements.
    PadAttrs p;
    for (int i = 0; i < xt.shape.rank(); ++i) {
      const int64_t out = ct.shape()[i];
      if (out == 0) {
        p.low.push_back(0);
        p.high.push_back(xt.shape[i]);
        p.interior.push_back(0);
        continue;
      }
      const int64_t last = a->start[i] + (out - 1) * a->stride[i];
      p.low.push_back(a->start[i]);
      p.high.push_back(xt.shape[i] - last - 1);
      p.interior.push_back(a->stride[i] - 1);
    }
    return add(0, bwd_.Emit(p, {ct, Full(bwd_, Shape{}, dtype, 0)}));
  }
  if (const auto* a = std::get_if<ConcatenateAttrs>(&nd.attrs)) {
    int64_t offset = 0;
    for (size_t i = 0; i < ops.size(); ++i) {
      const ValueType& t = nodes_[ops[i]].type;
      const int64_t size = t.shape[static_cast<int>(a->dimension)];
      if (nodes_[ops[i]].active) {
        SliceAttrs s;
        for (int d = 0; d < t.shape.rank(); ++d) {
          const bool along = d == a->dimension;
          s.start.push_back(along ? offset : 0);
          s.limit.push_back(along ? offset + size : t.shape[d]);
          s.stride.push_back(1);
        }
        add(static_cast<int>(i), bwd_.Emit(s, {ct}));
      }
      offset += size;
    }
    return;
  }
  if (const auto* a = std::get_if<PadAttrs>(&nd.attrs)) {
    // As JAX: undo the edge padding (padding with zeros where it cropped),
    // then take every (interior + 1)-th element. The padding value's
    // cotangent is what did not land on the operand.
    const int rank = xt.shape.rank();
    PadAttrs unpad;
    bool any_edge = false, any_interior = false;
    for (int i = 0; i < rank; ++i) {
      unpad.low.push_back(-a->low[i]);
      unpad.high.push_back(-a->high[i]);
      unpad.interior.push_back(0);
      any_edge |= a->low[i] != 0 || a->high[i] != 0;
      any_interior |= a->interior[i] != 0;
    }
    Tracer t = ct;
    if (any_edge) t = bwd_.Emit(unpad, {t, Full(bwd_, Shape{}, dtype, 0)});
    if (any_interior) {
      SliceAttrs s;
      for (int i = 0; i < rank; ++i) {
        s.start.push_back(0);
        s.limit.push_back(t.shape()[i]);
        s.stride.push_back(a->interior[i] + 1);
      }
      t = bwd_.Emit(s, {t});
    }
    if (nodes_[ops[0]].active) add(0, t);
    if (nodes_[ops[1]].active) {
      const std::vector<int64_t> all_ct = Range(0, ct.rank());
      const std::vector<int64_t> all_t = Range(0, t.rank());
      Tracer total = bwd_.Emit(ReduceAttrs{ReduceOp::kSum, all_ct}, {ct});
      Tracer landed = bwd_.Emit(ReduceAttrs{ReduceOp::kSum, all_t}, {t});
      add(1, total - landed);
    }
    return;
  }
  NoRule(nd.attrs);
}

void VjpBuilder::ApplyReduceRule(int n, const Tracer& ct) {
  const Node& nd = nodes_[n];
  const auto& a = std::get<ReduceAttrs>(nd.attrs);
  const int x_node = nd.operands[0];
  const ValueType xt = nodes_[x_node].type;
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < xt.shape.rank(); ++d) {
    if (!Contains(a.axes, d)) kept.push_back(d);
  }
  auto expand = [&](const Tracer& t) {
    return bwd_.Emit(BroadcastInDimAttrs{xt.shape, kept}, {t});
  };
  switch (a.op) {
    case ReduceOp::kSum:
      return AddCotangent(x_node, expand(ct));
    case ReduceOp::kMax:
    case ReduceOp::kMin: {
      // Split evenly between the elements equal to the result (JAX's
      // location indicators).
      const Tracer x = Get(x_node);
      const Tracer loc = eq(x, expand(Get(n)));
      const Tracer count = bwd_.Emit(ReduceAttrs{ReduceOp::kSum, a.axes},
                                     {astype(loc, xt.dtype)});
      const Tracer share = expand(ct / count);
      const Tracer zero = Zeros(bwd_, ValueType{xt.shape, xt.dtype});
      return AddCotangent(x_node, bwd_.Emit(SelectAttrs{}, {loc, share, zero}));
    }
    case ReduceOp::kProd: {
      // d/dx_i prod = product of the others, computed without dividing by
      // zero: from the product of the nonzero elements and the count of
      // zeros (one zero: only it has a nonzero derivative; two: none).
      const Tracer x = Get(x_node);
      const Tracer is_zero = eq(x, 0);
      const Tracer x_safe = where(is_zero, 1, x);
      const Tracer p =
          expand(bwd_.Emit(ReduceAttrs{ReduceOp::kProd, a.axes}, {x_safe}));
      const Tracer zeros = expand(bwd_.Emit(ReduceAttrs{ReduceOp::kSum, a.axes},
                                            {astype(is_zero, DType::kInt32)}));
      const Tracer others = where(is_zero, where(eq(zeros, 1), p, 0),
                                  where(eq(zeros, 0), p / x_safe, 0));
      return AddCotangent(x_node, expand(ct) * others);
    }
  }
  NoRule(nd.attrs);
}

// dot_general's transpose to each operand (JAX's _dot_general_transpose_lhs
// and _rhs): contract the cotangent with the other operand over the other
// operand's free dimensions, then transpose into the operand's order. Of
// the two operand orders of that product, the one that needs no transpose
// is chosen (x^T @ ct for a matmul's right operand, rather than (ct^T @ x)^T).
void VjpBuilder::ApplyDotRule(int n, const Tracer& ct) {
  const Node& nd = nodes_[n];
  const auto& d = std::get<DotGeneralAttrs>(nd.attrs);
  const int x_node = nd.operands[0], y_node = nd.operands[1];
  const int xr = nodes_[x_node].type.shape.rank();
  const int yr = nodes_[y_node].type.shape.rank();
  const std::vector<int64_t> x_kept =
      Remaining(xr, d.lhs_batch, d.lhs_contracting);
  const std::vector<int64_t> y_kept =
      Remaining(yr, d.rhs_batch, d.rhs_contracting);
  const int64_t nb = static_cast<int64_t>(d.lhs_batch.size());
  const int64_t nxk = static_cast<int64_t>(x_kept.size());
  const int64_t nyk = static_cast<int64_t>(y_kept.size());
  const std::vector<int64_t> ct_batch = Range(0, nb);
  const std::vector<int64_t> ct_x_free = Range(nb, nb + nxk);
  const std::vector<int64_t> ct_y_free = Range(nb + nxk, nb + nxk + nyk);

  // Cotangent of one operand ("mine"), given the other.
  auto transpose_to = [&](const Tracer& other,
                          const std::vector<int64_t>& my_batch,
                          const std::vector<int64_t>& other_batch,
                          const std::vector<int64_t>& my_kept,
                          const std::vector<int64_t>& other_kept,
                          const std::vector<int64_t>& my_contract,
                          const std::vector<int64_t>& other_contract,
                          const std::vector<int64_t>& ct_other) {
    const std::vector<int64_t> contract_sorted =
        SortedByOther(my_contract, other_contract);
    // ct first: [batch, my kept, my contracting (in other's order)].
    const std::vector<int64_t> labels_ct_first =
        Concat(Concat(my_batch, my_kept), contract_sorted);
    // other first: [batch, my contracting, my kept].
    const std::vector<int64_t> labels_other_first =
        Concat(Concat(my_batch, contract_sorted), my_kept);
    Tracer t;
    std::vector<int64_t> labels;
    if (IsIdentity(ArgSort(labels_other_first)) &&
        !IsIdentity(ArgSort(labels_ct_first))) {
      t = bwd_.Emit(
          DotGeneralAttrs{other_batch, ct_batch, other_kept, ct_other},
          {other, ct});
      labels = labels_other_first;
    } else {
      t = bwd_.Emit(
          DotGeneralAttrs{ct_batch, other_batch, ct_other, other_kept},
          {ct, other});
      labels = labels_ct_first;
    }
    const std::vector<int64_t> perm = ArgSort(labels);
    if (!IsIdentity(perm)) t = bwd_.Emit(TransposeAttrs{perm}, {t});
    return t;
  };
  if (nodes_[x_node].active) {
    AddCotangent(x_node, transpose_to(Get(y_node), d.lhs_batch, d.rhs_batch,
                                      x_kept, y_kept, d.lhs_contracting,
                                      d.rhs_contracting, ct_y_free));
  }
  if (nodes_[y_node].active) {
    AddCotangent(y_node, transpose_to(Get(x_node), d.rhs_batch, d.lhs_batch,
                                      y_kept, x_kept, d.rhs_contracting,
                                      d.lhs_contracting, ct_x_free));
  }
}

}  // namespace baton::compiler::transforms::vjp_internal
