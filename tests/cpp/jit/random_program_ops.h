// Part of jit/random_program_generator.h, which includes it at its end
// (include that header, not this one): the members of
// ProgramGenerator that draw one op each (Step picks which).
#pragma once

#include "jit/random_program_generator.h"

namespace baton::testing {

inline void ProgramGenerator::Step() {
  const int r = rng_.Int(0, 112);
  if (r > 106) {
    if (r < 109) return While();
    if (r < 111) return Scan();
    return Case();
  }
  if (r < 10) return UnaryOp_();
  if (r < 26) return BinaryOp_();
  if (r < 31) return CompareOp_();
  if (r < 36) return Where();
  if (r < 40) return Convert();
  if (r < 45) return Reshape();
  if (r < 49) return Transpose();
  if (r < 54) return Slice();
  if (r < 59) return Broadcast();
  if (r < 63) return DynamicSlice();
  if (r < 69) return DynamicUpdateSlice();
  if (r < 73) return Concatenate();
  if (r < 76) return Pad();
  if (r < 78) return Take();
  if (r < 80) return Sort();
  if (r < 86) return Scatter();
  if (r < 92) return Reduce();
  if (r < 97) return Matmul();
  if (r < 99) return Transfer();
  if (r < 101) return Duplicate();
  if (r < 103) return Constant();
  if (r < 105) return Iota();
  return Call();
}

inline void ProgramGenerator::UnaryOp_() {
  using Fn = Tracer (*)(const Tracer&);
  static const std::vector<Fn> kAll = {c::neg,
                                       c::abs,
                                       c::exp,
                                       c::log,
                                       c::tanh,
                                       c::logistic,
                                       c::sqrt,
                                       c::rsqrt,
                                       c::sin,
                                       c::cos,
                                       [](const Tracer& x) { return ~x; },
                                       c::sign,
                                       c::floor,
                                       c::ceil,
                                       c::round,
                                       c::log1p,
                                       c::expm1,
                                       c::tan,
                                       c::atan};
  // Safe on values that may be off by a rounding error: they keep the
  // error relative to the value (sin of a large, slightly-off sum would
  // not).
  static const std::vector<Fn> kSmooth = {c::neg, c::abs};
  const Val x = Any();
  Push(rng_.Pick(x.exact ? kAll : kSmooth)(x.t), {&x});
}

inline Val ProgramGenerator::Partner(const Val& a, bool exact_only) {
  return Recent([&](const Val& v) {
    if (exact_only && !v.exact) return false;
    const Shape& s = v.t.shape();
    const Shape& as = a.t.shape();
    if (s.rank() == 0 || s == as) return true;
    const int rank = std::max(s.rank(), as.rank());
    for (int i = 0; i < rank; ++i) {
      const int is = s.rank() - rank + i, ia = as.rank() - rank + i;
      const int64_t ds = is >= 0 ? s[is] : 1, da = ia >= 0 ? as[ia] : 1;
      if (ds != da && ds != 1 && da != 1) return false;
    }
    return true;
  });
}

#define BATON_TT_TS(expr)                                \
  [](const Tracer& a, const Tracer& b) { return expr; }, \
      [](const Tracer& a, WeakScalar b) { return expr; }

#define BATON_ST(expr) [](WeakScalar a, const Tracer& b) { return expr; }

inline void ProgramGenerator::BinaryOp_() {
  static const std::vector<BinaryFn> kFns = {
      {BATON_TT_TS(a + b), BATON_ST(a + b), true},
      {BATON_TT_TS(a - b), BATON_ST(a - b), true},
      {BATON_TT_TS(a * b), BATON_ST(a * b), true},
      {BATON_TT_TS(maximum(a, b)), nullptr, true},
      {BATON_TT_TS(minimum(a, b)), nullptr, true},
      {BATON_TT_TS(a / b), BATON_ST(a / b), false},
      {BATON_TT_TS(pow(a, b)), BATON_ST(pow(a, b)), false},
      {BATON_TT_TS(a & b), nullptr, false},
      {BATON_TT_TS(a | b), nullptr, false},
      {BATON_TT_TS(a ^ b), nullptr, false},
      {BATON_TT_TS(atan2(a, b)), BATON_ST(atan2(a, b)), false},
      {BATON_TT_TS(shift_left(a, b)), nullptr, false},
      {BATON_TT_TS(shift_right_arithmetic(a, b)), nullptr, false},
      {BATON_TT_TS(shift_right_logical(a, b)), nullptr, false}};
  const Val a = Any();
  if (rng_.Chance(0.1)) {
    // rem has no tracer wrapper: the IR op needs equal types.
    const Val b = Recent([&](const Val& v) {
      return v.exact && a.exact && v.t.type() == a.t.type() &&
             v.t.dtype() != DType::kBool;
    });
    return Push(ctx_.Emit(c::BinaryAttrs{BinaryOp::kRem}, {a.t, b.t}),
                {&a, &b});
  }
  BinaryFn fn = rng_.Pick(kFns);
  while (!a.exact && !fn.smooth) fn = rng_.Pick(kFns);
  if (rng_.Chance(0.3)) {
    const WeakScalar s = RandomWeakScalar();
    const bool first = fn.st != nullptr && rng_.Chance(0.3);
    return Push(first ? fn.st(s, a.t) : fn.ts(a.t, s), {&a});
  }
  const Val b = Partner(a, !fn.smooth);
  Push(fn.tt(a.t, b.t), {&a, &b});
}

#undef BATON_ST

#define BATON_CMP(f) BATON_TT_TS(f(a, b)), nullptr, false

inline void ProgramGenerator::CompareOp_() {
  static const std::vector<BinaryFn> kFns = {{BATON_CMP(eq)}, {BATON_CMP(ne)},
                                             {BATON_CMP(lt)}, {BATON_CMP(le)},
                                             {BATON_CMP(gt)}, {BATON_CMP(ge)}};
  const BinaryFn fn = rng_.Pick(kFns);
  const Val a = Exact();
  if (rng_.Chance(0.4)) return Push(fn.ts(a.t, RandomWeakScalar()), {&a});
  const Val b = Partner(a, true);
  Push(fn.tt(a.t, b.t), {&a, &b});
}

#undef BATON_CMP

#undef BATON_TT_TS

inline void ProgramGenerator::Where() {
  const Val p = Exact();
  const Val a = Partner(p, false);
  if (rng_.Chance(0.3)) {
    const WeakScalar s = RandomWeakScalar();
    return Push(rng_.Chance(0.5) ? where(p.t, a.t, s) : where(p.t, s, a.t),
                {&p, &a});
  }
  const Val b = Partner(a, false);
  Push(where(p.t, a.t, b.t), {&p, &a, &b});
}

inline void ProgramGenerator::Convert() {
  const Val x = Any();
  static const std::vector<DType> kTargets = {
      DType::kFloat32, DType::kInt32, DType::kFloat16, DType::kBFloat16,
      DType::kBool,    DType::kInt8,  DType::kUInt8,   DType::kFloat64};
  DType to = rng_.Pick(kTargets);
  if (!x.exact && !is_floating(to)) to = DType::kFloat32;
  Push(astype(x.t, to), {&x});
}

inline void ProgramGenerator::Reshape() {
  const Val x = Any();
  const int64_t n = x.t.type().num_elements();
  std::vector<int64_t> dims;
  if (n == 0) {
    const int rank = rng_.Int(1, 3);
    for (int i = 0; i < rank; ++i) dims.push_back(rng_.Int(0, 3));
    dims[rng_.Int(0, rank - 1)] = 0;
  } else {
    int rank = rng_.Int(0, 3);
    if (rank == 0 && n != 1) rank = 1;
    dims.assign(rank, 1);
    int64_t m = n;
    for (int64_t p = 2; p * p <= m; ++p) {
      while (m % p == 0) {
        dims[rng_.Int(0, rank - 1)] *= p;
        m /= p;
      }
    }
    if (m > 1) dims[rng_.Int(0, rank - 1)] *= m;
    if (rank > 0 && rng_.Chance(0.2)) dims[rng_.Int(0, rank - 1)] = -1;
  }
  Push(reshape(x.t, dims), {&x});
}

inline std::vector<int64_t> ProgramGenerator::Permutation(int rank) {
  std::vector<int64_t> p(rank);
  for (int i = 0; i < rank; ++i) p[i] = i;
  for (int i = rank - 1; i > 0; --i) std::swap(p[i], p[rng_.Int(0, i)]);
  return p;
}

inline void ProgramGenerator::Transpose() {
  const Val x = Recent([](const Val& v) { return v.t.rank() >= 2; });
  Push(transpose(x.t, Permutation(x.t.rank())), {&x});
}

inline void ProgramGenerator::Slice() {
  const Val x = Recent([](const Val& v) { return v.t.rank() >= 1; });
  std::vector<int64_t> start, limit, stride;
  for (int64_t d : x.t.shape().dims()) {
    start.push_back(rng_.Int(0, static_cast<int>(d)));
    limit.push_back(
        rng_.Int(static_cast<int>(start.back()), static_cast<int>(d)));
    stride.push_back(rng_.Int(1, 3));
  }
  Push(slice(x.t, start, limit, stride), {&x});
}

inline void ProgramGenerator::Broadcast() {
  const Val x = Any();
  std::vector<int64_t> dims;
  for (int i = rng_.Int(0, 1); i > 0; --i)
    dims.push_back(rng_.Int(0, 9) == 0 ? 0 : rng_.Int(1, 3));
  for (int64_t d : x.t.shape().dims()) {
    dims.push_back(d == 1 && rng_.Chance(0.6) ? rng_.Int(1, 4) : d);
  }
  if (dims.size() > 4) return;
  Push(broadcast_to(x.t, Shape(dims)), {&x});
}

inline void ProgramGenerator::DynamicSlice() {
  const Val x = Recent([](const Val& v) { return v.t.rank() >= 1; });
  std::vector<int64_t> sizes;
  std::vector<Tracer> starts;
  for (int64_t d : x.t.shape().dims()) {
    sizes.push_back(rng_.Int(0, static_cast<int>(d)));
    starts.push_back(IndexScalar());
  }
  Push(dynamic_slice(x.t, starts, sizes), {&x});
}

inline void ProgramGenerator::DynamicUpdateSlice() {
  const Val x = Any();
  const int rank = x.t.rank();
  const bool may_be_inexact = is_floating(x.t.dtype());
  Val u;
  const int r = rng_.Int(0, 2);
  if (r == 0) {
    u = Recent([&](const Val& v) {
      if (!may_be_inexact && !v.exact) return false;
      if (v.t.rank() != rank) return false;
      for (int i = 0; i < rank; ++i) {
        if (v.t.shape()[i] > x.t.shape()[i]) return false;
      }
      return true;
    });
  } else if (r == 1) {
    // A block of x itself (all of it, sometimes): reading and writing the
    // same buffer must still give the reference's result.
    std::vector<int64_t> start, limit;
    for (int64_t d : x.t.shape().dims()) {
      const bool whole = rng_.Chance(0.3);
      start.push_back(whole ? 0 : rng_.Int(0, static_cast<int>(d)));
      limit.push_back(whole ? d
                            : rng_.Int(static_cast<int>(start.back()),
                                       static_cast<int>(d)));
    }
    u = x;
    u.t = slice(x.t, start, limit);
    if (rng_.Chance(0.5) && x.t.dtype() != DType::kBool) u.t = neg(u.t);
  } else {
    std::vector<int64_t> dims;
    for (int64_t d : x.t.shape().dims())
      dims.push_back(rng_.Int(0, static_cast<int>(d)));
    u = Val{full(ctx_, Shape(dims), RandomWeakScalar(), x.t.dtype())};
  }
  std::vector<Tracer> starts;
  for (int i = 0; i < rank; ++i) starts.push_back(IndexScalar());
  Push(dynamic_update_slice(x.t, u.t, starts), {&x, &u});
}

inline void ProgramGenerator::Concatenate() {
  const Val x = Recent([](const Val& v) { return v.t.rank() >= 1; });
  const int axis = rng_.Int(0, x.t.rank() - 1);
  std::vector<Val> parts = {x};
  for (int i = rng_.Int(1, 3); i > 0; --i) {
    const int r = rng_.Int(0, 2);
    if (r == 0) {
      parts.push_back(Recent([&](const Val& v) {
        if (v.t.rank() != x.t.rank()) return false;
        for (int k = 0; k < x.t.rank(); ++k) {
          if (k != axis && v.t.shape()[k] != x.t.shape()[k]) return false;
        }
        return true;
      }));
    } else if (r == 1) {
      std::vector<int64_t> start(x.t.rank(), 0), limit = x.t.shape().dims();
      const int d = static_cast<int>(limit[axis]);
      start[axis] = rng_.Int(0, d);
      limit[axis] = rng_.Int(static_cast<int>(start[axis]), d);
      Val s = x;
      s.t = slice(x.t, start, limit);
      parts.push_back(s);
    } else {
      parts.push_back(x);
    }
  }
  for (int i = static_cast<int>(parts.size()) - 1; i > 0; --i) {
    std::swap(parts[i], parts[rng_.Int(0, i)]);
  }
  std::vector<Tracer> ts;
  Val merged{Tracer()};
  for (const Val& p : parts) {
    ts.push_back(p.t);
    if (!p.exact) {
      merged.exact = false;
      merged.rel = std::max(merged.rel, p.rel);
    }
  }
  // Promotion may convert an inexact float part to a lower precision;
  // Push records the result's tolerance.
  Push(concatenate(ts, axis), {&merged});
}

inline void ProgramGenerator::Pad() {
  const Val x = Any();
  std::vector<int64_t> lo, hi, in;
  for (int i = 0; i < x.t.rank(); ++i) {
    lo.push_back(rng_.Int(-1, 2));
    hi.push_back(rng_.Int(-1, 2));
    in.push_back(rng_.Int(0, 9) < 7 ? 0 : rng_.Int(1, 2));
  }
  if (rng_.Chance(0.5))
    return Push(pad(x.t, RandomWeakScalar(), lo, hi, in), {&x});
  const bool may_be_inexact = is_floating(x.t.dtype());
  const Val v = Recent([&](const Val& v) {
    return v.t.rank() == 0 && (v.exact || may_be_inexact);
  });
  Push(pad(x.t, v.t, lo, hi, in), {&x, &v});
}

inline void ProgramGenerator::Take() {
  const Val x = Recent([](const Val& v) { return v.t.rank() >= 1; });
  const int axis = rng_.Int(0, x.t.rank() - 1);
  Push(take(x.t, IndexArray(x.t.shape()[axis]),
            axis - (rng_.Chance(0.2) ? x.t.rank() : 0)),
       {&x});
}

inline void ProgramGenerator::Sort() {
  const Val x = Recent([](const Val& v) { return v.exact && v.t.rank() >= 1; });
  if (!x.exact || x.t.rank() == 0) return Take();
  const int dim = rng_.Int(0, x.t.rank() - 1);
  const bool descending = rng_.Chance(0.3);
  if (rng_.Chance(0.5)) return Push(c::sort(x.t, dim, descending), {&x});
  Push(c::argsort(x.t, dim - (rng_.Chance(0.2) ? x.t.rank() : 0), descending),
       {&x});
}

inline void ProgramGenerator::Scatter() {
  const Val x = Recent([](const Val& v) { return v.t.rank() >= 1; });
  const int axis = rng_.Int(0, x.t.rank() - 1);
  const Tracer idx = IndexArray(x.t.shape()[axis]);
  static const std::vector<c::ScatterMode> kModes = {
      c::ScatterMode::kSet, c::ScatterMode::kAdd, c::ScatterMode::kMul,
      c::ScatterMode::kMin, c::ScatterMode::kMax};
  const c::ScatterMode mode = rng_.Pick(kModes);
  const bool may_be_inexact = is_floating(x.t.dtype());
  std::vector<int64_t> target(x.t.shape().dims().begin(),
                              x.t.shape().dims().begin() + axis);
  target.insert(target.end(), idx.shape().dims().begin(),
                idx.shape().dims().end());
  target.insert(target.end(), x.t.shape().dims().begin() + axis + 1,
                x.t.shape().dims().end());
  if (Shape(target).num_elements() > kMaxElements) return;
  const int r = rng_.Int(0, 3);
  if (r == 0) {
    return Push(scatter(x.t, idx, RandomWeakScalar(), axis, mode), {&x});
  }
  Val u;
  if (r == 1 && Shape(target) == x.t.shape()) {
    u = x;  // the operand is also the updates
  } else if (r <= 2) {
    // Gathered from x itself, then changed.
    u = x;
    u.t = take(x.t, idx, axis);
    if (x.t.dtype() != DType::kBool) u.t = u.t * 2 + 1;
  } else {
    u = Recent([&](const Val& v) {
      if (!may_be_inexact && !v.exact) return false;
      const Shape& s = v.t.shape();
      if (s.rank() > static_cast<int>(target.size())) return false;
      const int off = static_cast<int>(target.size()) - s.rank();
      for (int i = 0; i < s.rank(); ++i) {
        if (s[i] != 1 && s[i] != target[off + i]) return false;
      }
      return true;
    });
  }
  Push(scatter(x.t, idx, u.t, axis, mode), {&x, &u});
}

inline void ProgramGenerator::Reduce() {
  const Val x = Any();
  int which = rng_.Int(0, 3);
  // A long product overflows in one order and hits 0 first in another
  // (inf * 0 = NaN): keep products short.
  if (which == 1 && x.t.type().num_elements() > 8) which = 0;
  std::vector<int64_t> axes;
  for (int i = 0; i < x.t.rank(); ++i) {
    if (rng_.Chance(0.5)) axes.push_back(rng_.Chance(0.2) ? i - x.t.rank() : i);
  }
  const bool keepdims = rng_.Chance(0.3);
  const bool all = rng_.Chance(0.25);
  using All = Tracer (*)(const Tracer&);
  using Axes = Tracer (*)(const Tracer&, std::vector<int64_t>, bool);
  static const All kAll[] = {c::sum, c::prod, c::max, c::min};
  static const Axes kAxes[] = {c::sum, c::prod, c::max, c::min};
  const Tracer y = all ? kAll[which](x.t) : kAxes[which](x.t, axes, keepdims);
  // Float sums and products may round in another order, and max/min
  // may pick either of two equal zeros (+0 and -0), so all float
  // reductions are compared within tolerance.
  const int64_t n = y.type().num_elements();
  Push(y, {&x}, n > 0 ? x.t.type().num_elements() / n : 1);
}

inline void ProgramGenerator::Matmul() {
  const Val a = Recent([](const Val& v) {
    return v.t.rank() >= 1 && v.t.dtype() != DType::kBool;
  });
  const auto& ad = a.t.shape().dims();
  const int64_t k = ad.back();
  const int rank = rng_.Int(1, 3);
  std::vector<int64_t> bd;
  if (rank == 1) {
    bd = {k};
  } else {
    if (rank == 3) {
      bd.push_back(ad.size() == 3 && rng_.Chance(0.7) ? ad[0] : rng_.Int(1, 3));
    }
    bd.push_back(k);
    bd.push_back(RandomDim());
  }
  const Shape bs(bd);
  Val b;
  if (rng_.Chance(0.4)) {
    b = Recent([&](const Val& v) { return v.t.shape() == bs; });
  } else {
    const DType d = rng_.Chance(0.7) ? a.t.dtype() : DType::kFloat32;
    b = Val{c::constant(ctx_, RandomLiteral(d, bs))};
  }
  Push(matmul(a.t, b.t), {&a, &b}, std::max<int64_t>(k, 1));
}

inline void ProgramGenerator::Transfer() {
  const Val x = Any();
  static const std::vector<MemoryKind> kKinds = {
      MemoryKind::kPinnedHost, MemoryKind::kUnpinnedHost, MemoryKind::kDevice};
  Push(to_memory_kind(x.t, rng_.Pick(kKinds)), {&x});
}

inline void ProgramGenerator::Duplicate() {
  const c::Program& p = ctx_.program();
  const ValueId id = rng_.Int(0, p.num_values() - 1);
  const c::Instruction& inst = p.instruction(id);
  if (inst.kind() == c::OpKind::kParameter) return;
  // A control-flow result is re-emitted with its whole group (a lone
  // member would not be a valid program).
  const std::vector<ValueId> group = c::RegionGroupOf(p, id);
  std::vector<const Val*> originals;
  for (ValueId m : group) {
    const Val* found = nullptr;
    for (const Val& v : pool_) {
      if (v.t.id() == m) found = &v;
    }
    if (found == nullptr) return;
    originals.push_back(found);
  }
  std::vector<Tracer> ops;
  for (ValueId o : inst.operands) {
    const Val* found = nullptr;
    for (const Val& w : pool_) {
      if (w.t.id() == o) found = &w;
    }
    if (found == nullptr) return;  // an operand made inside a helper
    ops.push_back(found->t);
  }
  std::vector<Val> copies;
  for (size_t k = 0; k < group.size(); ++k) {
    Val copy = *originals[k];
    copy.t = ctx_.Emit(p.instruction(group[k]).attrs, ops);
    copies.push_back(copy);
  }
  for (const Val& v : copies) pool_.push_back(v);
}

inline void ProgramGenerator::Constant() {
  const DType d = RandomDType();
  pool_.push_back(Val{c::constant(ctx_, RandomLiteral(d, RandomShape()))});
}

inline void ProgramGenerator::Call() {
  const Val x = Any();
  c::CallAttrs attrs;
  const int kind = rng_.Int(0, 2);
  if (kind == 0) {
    c::TraceContext body;
    Tracer p = body.AddParameter(ValueType{x.t.shape(), x.t.dtype()});
    attrs.body =
        std::make_shared<const c::Program>(body.Finish({maximum(p, p), p}));
    attrs.kind = c::CallKind::kCheckpoint;
    for (int i = 0; i < 2; ++i) {
      attrs.output_index = i;
      Val v = x;
      v.t = ctx_.Emit(attrs, {x.t});
      pool_.push_back(v);
    }
    return;
  }
  attrs.kind = kind == 1 ? c::CallKind::kStopGradient : c::CallKind::kName;
  attrs.name = "v";
  Val v = x;
  v.t = ctx_.Emit(attrs, {x.t});
  pool_.push_back(v);
}

inline void ProgramGenerator::Iota() {
  const Shape s = RandomShape();
  if (s.rank() == 0) return;
  pool_.push_back(
      Val{iota(ctx_, rng_.Chance(0.5) ? DType::kInt32 : DType::kFloat32, s,
               rng_.Int(0, s.rank() - 1))});
}

}  // namespace baton::testing
