// A generator of random traced programs for the random-programs test
// (random_programs_test.cc; issue 3, acceptance 2).
//
// From a seed it builds one program with the tracer: parameters of random
// shape (empty, rank-0, now and then one long dimension), dtype and memory
// kind, some donated, one sometimes passed twice; then a random mix of
// elementwise ops (with weakly typed scalars and promotion), data movement,
// indexing (take/scatter with out-of-range indices), reductions, matmul,
// transfers, duplicated instructions (for CSE), constants and control flow:
// a while loop (a counter and one or two carries), a scan (up to two
// carries or none, the slices of one xs, maybe an invariant) and a case (two or
// three branches over one or two operands, at a random index, clamped), each
// region a small random elementwise program; then up to two host callbacks
// of small exact values (what they saw must match the reference's calls).
// Ops the tracer rejects are skipped. The linalg op (kLinalg) is deliberately not drawn: on random
// matrices (ill-conditioned, rarely positive definite) its results are
// neither exact nor within a relative tolerance of the reference under
// another rounding; tests/cpp/kernels/linalg_test.cc compares the kernel
// with the interpreter instead, and the transformation tests cover it.
//
// Each value carries whether it must equal the reference bitwise or within a
// relative tolerance: floating-point reductions and dots may round in
// another order, and such values only reach ops that keep a rounding error
// relative (never comparisons, rounding, integer conversion or indices).
//
// Not thread-safe; one generator per program.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "baton/compiler/control_flow.h"
#include "baton/compiler/literal.h"
#include "baton/compiler/sort_ops.h"
#include "baton/compiler/tracer.h"
#include "baton/core/error.h"
#include "compiler/recording_callback.h"

namespace baton::testing {

namespace c = compiler;
using c::Literal;
using c::ValueId;
using c::ValueType;
using c::WeakScalar;

// Deterministic for a seed (on one standard library).
class Rng {
 public:
  explicit Rng(uint64_t seed) : gen_(seed) {}
  int Int(int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(gen_);
  }
  bool Chance(double p) {
    return std::uniform_real_distribution<double>(0, 1)(gen_) < p;
  }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(Int(0, static_cast<int>(v.size()) - 1))];
  }

 private:
  std::mt19937_64 gen_;
};

// Machine epsilon of a floating dtype (0 for the others).
inline double Eps(DType d) {
  switch (d) {
    case DType::kFloat16:
      return 9.77e-4;
    case DType::kBFloat16:
      return 7.82e-3;
    case DType::kFloat32:
      return 1.2e-7;
    case DType::kFloat64:
      return 2.3e-16;
    default:
      return 0;
  }
}

// The relative error one rounding-order difference may cause in `d`: a few
// ulps for 16-bit floats (computed in float, rounded once), more for float32
// (accumulated in another order, sequentially in the reference).
inline double BaseTolerance(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16 ? 8 * Eps(d)
                                                       : 512 * Eps(d);
}

// A value of the program being built and how far it may be from the
// reference: exact (bitwise), or within `rel` relative to the magnitude of
// the output it reaches.
struct Val {
  Tracer t;
  bool exact = true;
  double rel = 0;
};

constexpr int64_t kMaxElements = 300000;  // per value, to keep programs quick

enum class Donation { kNone, kByPosition, kAtCallSite };

struct Generated {
  c::Program program;  // as traced (not optimized)
  std::vector<Literal> args;
  std::vector<MemoryKind> arg_kinds;
  std::vector<Donation> donation;
  // Per parameter: the earlier parameter whose array is passed for it too,
  // or -1 (an array of its own).
  std::vector<int> same_array_as;
  std::vector<Val> outputs;
  // What the program's host callbacks saw, in call order, appended by every
  // run (the test clears it between the reference and the executor).
  std::shared_ptr<std::vector<c::test_util::Seen>> printed =
      std::make_shared<std::vector<c::test_util::Seen>>();
};

// Builds one random program with the tracer. Ops the tracer rejects (an
// invalid combination the generator did not rule out) are skipped.
class ProgramGenerator {
 public:
  explicit ProgramGenerator(uint64_t seed) : rng_(seed), seed_(seed) {}

  Generated Generate() {
    Generated g;
    const int num_arrays = rng_.Int(1, 3);
    for (int i = 0; i < num_arrays; ++i) {
      if (i > 0 && rng_.Chance(0.1)) {
        // The same array passed twice (when neither use is donated).
        const int j = rng_.Int(0, i - 1);
        AddParameter(g, g.args[j], g.arg_kinds[j]);
        if (g.donation[j] == Donation::kNone) {
          g.donation.back() = Donation::kNone;
          g.same_array_as.back() = j;
        }
        continue;
      }
      const DType d = RandomDType();
      const Shape s = RandomShape();
      MemoryKind kind = MemoryKind::kDevice;
      if (rng_.Chance(0.08)) {
        kind = rng_.Chance(0.5) ? MemoryKind::kPinnedHost
                                : MemoryKind::kUnpinnedHost;
      }
      AddParameter(g, RandomLiteral(d, s), kind);
    }
    if (rng_.Chance(0.5)) {
      AddParameter(g, Literal::Scalar<int32_t>(rng_.Int(-3, 7)),
                   MemoryKind::kDevice);
      index_param_ = pool_.back().t;
    }
    const int num_ops = rng_.Int(3, 14);
    for (int attempts = 0, done = 0; done < num_ops && attempts < 80;
         ++attempts) {
      const size_t before = pool_.size();
      try {
        Step();
      } catch (const Error&) {
        // Rejected by shape inference: try another op.
      }
      if (pool_.size() > before) ++done;
    }
    AddPrints(g);
    g.outputs.push_back(pool_.back());
    for (int extra = rng_.Int(0, 2); extra > 0; --extra) {
      g.outputs.push_back(Recent([](const Val&) { return true; }));
    }
    std::vector<Tracer> outs;
    for (const Val& v : g.outputs) outs.push_back(v.t);
    g.program = ctx_.Finish(outs);
    return g;
  }

 private:
  // Up to two host callbacks of exact values of the program (small ones),
  // drawn from a generator of their own so that everything else is what
  // this seed always built.
  void AddPrints(Generated& g) {
    std::mt19937_64 fx(seed_ * 0x9e3779b97f4a7c15ULL + 1);
    std::vector<Tracer> candidates;
    for (const Val& v : pool_) {
      if (v.exact && v.t.shape().num_elements() <= 4096) {
        candidates.push_back(v.t);
      }
    }
    const int prints = static_cast<int>(fx() % 3);
    for (int k = 0; k < prints && !candidates.empty(); ++k) {
      std::vector<Tracer> operands = {candidates[fx() % candidates.size()]};
      if (fx() % 2) operands.push_back(candidates[fx() % candidates.size()]);
      ctx_.Emit(c::test_util::Callback("print " + std::to_string(k),
                                       g.printed.get()),
                operands);
    }
  }

  // ---- Random data ----

  DType RandomDType() {
    const int r = rng_.Int(0, 99);
    if (r < 48) return DType::kFloat32;
    if (r < 72) return DType::kInt32;
    if (r < 81) return DType::kFloat16;
    if (r < 90) return DType::kBFloat16;
    return DType::kBool;
  }

  Shape RandomShape(int max_rank = 3) {
    const int rank =
        std::min(max_rank, rng_.Int(0, 99) < 12 ? 0 : rng_.Int(1, 3));
    std::vector<int64_t> dims;
    for (int i = 0; i < rank; ++i) dims.push_back(RandomDim());
    // Now and then one long dimension, so that fused steps span several
    // tiles and kernels split work across threads.
    if (rank >= 1 && rank <= 2 && rng_.Chance(0.03)) {
      dims[rng_.Int(0, rank - 1)] = rng_.Int(4000, 70000);
    }
    return Shape(std::move(dims));
  }

  int64_t RandomDim() {
    const int r = rng_.Int(0, 99);
    if (r < 5) return 0;
    if (r < 25) return 1;
    return rng_.Int(2, 5);
  }

  // Small dyadic values (exact in every float type), some negative, so that
  // log, sqrt and pow also produce NaN and infinities now and then.
  Literal RandomLiteral(DType d, const Shape& s) {
    std::vector<double> v(static_cast<size_t>(s.num_elements()));
    for (double& x : v) {
      if (d == DType::kBool) {
        x = rng_.Int(0, 1);
      } else if (is_floating(d)) {
        x = rng_.Int(-12, 12) / 4.0;
      } else {
        x = rng_.Int(-5, 9);
      }
    }
    return Literal::FromDoubles(d, s, v);
  }

  WeakScalar RandomWeakScalar() {
    switch (rng_.Int(0, 5)) {
      case 0:
        return WeakScalar(rng_.Int(-3, 4));
      case 1:
        return WeakScalar(rng_.Int(-8, 8) / 4.0);
      case 2:
        return WeakScalar(rng_.Chance(0.5));
      case 3:
        return WeakScalar(2);
      case 4:
        return WeakScalar(0.5f);
      default:
        return WeakScalar(1);
    }
  }

  void AddParameter(Generated& g, Literal lit, MemoryKind kind) {
    Tracer t = ctx_.AddParameter(ValueType{lit.shape(), lit.dtype(), kind});
    const int r = rng_.Int(0, 99);
    g.donation.push_back(r < 70   ? Donation::kNone
                         : r < 85 ? Donation::kByPosition
                                  : Donation::kAtCallSite);
    g.args.push_back(std::move(lit));
    g.arg_kinds.push_back(kind);
    g.same_array_as.push_back(-1);
    pool_.push_back(Val{t});
  }

  // ---- Picking operands ----

  // A pool value satisfying `pred`, most often a recent one (so chains
  // form); throws (skipping the op) when there is none.
  template <typename Pred>
  Val Recent(Pred pred) {
    std::vector<size_t> ok;
    for (size_t i = 0; i < pool_.size(); ++i) {
      if (pred(pool_[i])) ok.push_back(i);
    }
    if (ok.empty())
      throw InvalidArgumentError(InvalidArgument("no suitable operand"));
    if (rng_.Chance(0.6)) {
      const int back =
          std::min<int>(rng_.Int(0, 2), static_cast<int>(ok.size()) - 1);
      return pool_[ok[ok.size() - 1 - back]];
    }
    return pool_[rng_.Pick(ok)];
  }
  Val Any() {
    return Recent([](const Val&) { return true; });
  }
  Val Exact() {
    return Recent([](const Val& v) { return v.exact; });
  }

  // Records `t` as a new value whose inputs were `from`. `combined` > 0:
  // this op adds up (or otherwise combines) that many elements per result
  // element, in an order that may differ from the reference's. A value too
  // large to keep the test quick is dropped (left dead, so neither side
  // computes it).
  void Push(Tracer t, std::initializer_list<const Val*> from,
            int64_t combined = 0) {
    if (t.type().num_elements() > kMaxElements) {
      throw InvalidArgumentError(InvalidArgument("value too large"));
    }
    Val v{t};
    for (const Val* f : from) {
      if (!f->exact) {
        v.exact = false;
        v.rel = std::max(v.rel, f->rel);
      }
    }
    double here = 0;
    if (combined > 0 && is_floating(t.dtype())) {
      v.exact = false;
      here = BaseTolerance(t.dtype()) *
             std::sqrt(static_cast<double>(std::max<int64_t>(combined, 1)));
    }
    if (!v.exact) v.rel = std::max({v.rel, here, BaseTolerance(t.dtype())});
    pool_.push_back(v);
  }

  // A rank-0 integer tracer for a dynamic start.
  Tracer IndexScalar() {
    const int r = rng_.Int(0, 9);
    if (r < 4 && index_param_.valid()) return index_param_;
    if (r < 6) {
      for (size_t i = pool_.size(); i-- > 0;) {
        const Val& v = pool_[i];
        if (v.exact && v.t.rank() == 0 && is_integer(v.t.dtype())) return v.t;
      }
    }
    return full(ctx_, Shape{}, rng_.Int(-2, 6), DType::kInt32);
  }

  // Integer indices into a dimension of size `dim`, some out of range.
  Tracer IndexArray(int64_t dim) {
    if (rng_.Chance(0.2)) {
      for (size_t i = pool_.size(); i-- > 0;) {
        const Val& v = pool_[i];
        if (v.exact && v.t.dtype() == DType::kInt32 && v.t.rank() <= 2) {
          return v.t;
        }
      }
    }
    const Shape s = RandomShape(2);
    std::vector<int32_t> v(static_cast<size_t>(s.num_elements()));
    for (int32_t& x : v) x = rng_.Int(-2, static_cast<int>(dim) + 1);
    return c::constant(ctx_, Literal::FromVector(v, s));
  }

  // ---- Ops ----

  void Step() {
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

  void UnaryOp_() {
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

  // A second operand for `a`: same shape, broadcast-compatible, or rank 0.
  Val Partner(const Val& a, bool exact_only) {
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

  // One binary function in its forms tracer-tracer, tracer-scalar and
  // (where the tracer API has it) scalar-tracer, scalars weakly typed.
  struct BinaryFn {
    Tracer (*tt)(const Tracer&, const Tracer&);
    Tracer (*ts)(const Tracer&, WeakScalar);
    Tracer (*st)(WeakScalar, const Tracer&);  // may be null
    bool smooth;  // keeps a rounding error relative: fine on inexact values
  };
#define BATON_TT_TS(expr)                                \
  [](const Tracer& a, const Tracer& b) { return expr; }, \
      [](const Tracer& a, WeakScalar b) { return expr; }
#define BATON_ST(expr) [](WeakScalar a, const Tracer& b) { return expr; }

  void BinaryOp_() {
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

  void CompareOp_() {
    static const std::vector<BinaryFn> kFns = {
        {BATON_CMP(eq)}, {BATON_CMP(ne)}, {BATON_CMP(lt)},
        {BATON_CMP(le)}, {BATON_CMP(gt)}, {BATON_CMP(ge)}};
    const BinaryFn fn = rng_.Pick(kFns);
    const Val a = Exact();
    if (rng_.Chance(0.4)) return Push(fn.ts(a.t, RandomWeakScalar()), {&a});
    const Val b = Partner(a, true);
    Push(fn.tt(a.t, b.t), {&a, &b});
  }

#undef BATON_CMP
#undef BATON_TT_TS

  void Where() {
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

  void Convert() {
    const Val x = Any();
    static const std::vector<DType> kTargets = {
        DType::kFloat32, DType::kInt32, DType::kFloat16, DType::kBFloat16,
        DType::kBool,    DType::kInt8,  DType::kUInt8,   DType::kFloat64};
    DType to = rng_.Pick(kTargets);
    if (!x.exact && !is_floating(to)) to = DType::kFloat32;
    Push(astype(x.t, to), {&x});
  }

  void Reshape() {
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

  std::vector<int64_t> Permutation(int rank) {
    std::vector<int64_t> p(rank);
    for (int i = 0; i < rank; ++i) p[i] = i;
    for (int i = rank - 1; i > 0; --i) std::swap(p[i], p[rng_.Int(0, i)]);
    return p;
  }

  void Transpose() {
    const Val x = Recent([](const Val& v) { return v.t.rank() >= 2; });
    Push(transpose(x.t, Permutation(x.t.rank())), {&x});
  }

  void Slice() {
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

  void Broadcast() {
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

  void DynamicSlice() {
    const Val x = Recent([](const Val& v) { return v.t.rank() >= 1; });
    std::vector<int64_t> sizes;
    std::vector<Tracer> starts;
    for (int64_t d : x.t.shape().dims()) {
      sizes.push_back(rng_.Int(0, static_cast<int>(d)));
      starts.push_back(IndexScalar());
    }
    Push(dynamic_slice(x.t, starts, sizes), {&x});
  }

  void DynamicUpdateSlice() {
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

  void Concatenate() {
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

  void Pad() {
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

  void Take() {
    const Val x = Recent([](const Val& v) { return v.t.rank() >= 1; });
    const int axis = rng_.Int(0, x.t.rank() - 1);
    Push(take(x.t, IndexArray(x.t.shape()[axis]),
              axis - (rng_.Chance(0.2) ? x.t.rank() : 0)),
         {&x});
  }

  // Only of exact values: an inexact one could tie or swap differently.
  void Sort() {
    const Val x =
        Recent([](const Val& v) { return v.exact && v.t.rank() >= 1; });
    if (!x.exact || x.t.rank() == 0) return Take();
    const int dim = rng_.Int(0, x.t.rank() - 1);
    const bool descending = rng_.Chance(0.3);
    if (rng_.Chance(0.5)) return Push(c::sort(x.t, dim, descending), {&x});
    Push(c::argsort(x.t, dim - (rng_.Chance(0.2) ? x.t.rank() : 0), descending),
         {&x});
  }

  void Scatter() {
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

  void Reduce() {
    const Val x = Any();
    int which = rng_.Int(0, 3);
    // A long product overflows in one order and hits 0 first in another
    // (inf * 0 = NaN): keep products short.
    if (which == 1 && x.t.type().num_elements() > 8) which = 0;
    std::vector<int64_t> axes;
    for (int i = 0; i < x.t.rank(); ++i) {
      if (rng_.Chance(0.5))
        axes.push_back(rng_.Chance(0.2) ? i - x.t.rank() : i);
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

  void Matmul() {
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
        bd.push_back(ad.size() == 3 && rng_.Chance(0.7) ? ad[0]
                                                        : rng_.Int(1, 3));
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

  void Transfer() {
    const Val x = Any();
    static const std::vector<MemoryKind> kKinds = {MemoryKind::kPinnedHost,
                                                   MemoryKind::kUnpinnedHost,
                                                   MemoryKind::kDevice};
    Push(to_memory_kind(x.t, rng_.Pick(kKinds)), {&x});
  }

  // Re-emits an earlier instruction: CSE must merge the two.
  void Duplicate() {
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

  // ---- Control flow ----

  // Values the regions read: all of `shape`, or rank 0 (they broadcast).
  static bool FitsRegion(const Val& v, const Shape& shape) {
    return v.exact && (v.t.shape() == shape || v.t.rank() == 0);
  }

  // Adds up to `max_ops` random elementwise ops to a region being traced,
  // over `vals` (each of `shape` or rank 0); results join `vals`. Only ops
  // whose results are bitwise those of the reference (regions see exact
  // values only). Ops the tracer rejects are skipped.
  void RegionOps(std::vector<Tracer>& vals, const Shape& shape, int max_ops) {
    for (int k = rng_.Int(0, max_ops); k > 0; --k) {
      const Tracer a = rng_.Pick(vals);
      const Tracer b = rng_.Pick(vals);
      try {
        Tracer r;
        switch (rng_.Int(0, 8)) {
          case 0:
            r = a + b;
            break;
          case 1:
            r = a - b;
            break;
          case 2:
            r = a * b;
            break;
          case 3:
            r = maximum(a, b);
            break;
          case 4:
            r = minimum(a, b);
            break;
          case 5:
            r = rng_.Chance(0.5) ? neg(a) : abs(a);
            break;
          case 6:
            r = where(gt(a, b), a, b);
            break;
          case 7:
            r = a * RandomWeakScalar();
            break;
          default:
            r = a + RandomWeakScalar();
            break;
        }
        if (r.shape() == shape || r.rank() == 0) vals.push_back(r);
      } catch (const Error&) {
        // Rejected (e.g. bool arithmetic): try another.
      }
    }
  }

  // A value of `vals` of exactly `shape` (there is always one: the region's
  // own parameter), as `dtype`.
  Tracer RegionResult(const std::vector<Tracer>& vals, const Shape& shape,
                      DType dtype) {
    std::vector<Tracer> fit;
    for (const Tracer& v : vals) {
      if (v.shape() == shape) fit.push_back(v);
    }
    // Recent values most often, so that the ops made are used.
    const Tracer t = rng_.Chance(0.6) ? fit.back() : rng_.Pick(fit);
    return astype(t, dtype);
  }

  // Emits a whole region group; pushes its results (exact: regions only
  // ever see exact values and exact ops).
  void EmitGroup(const c::OpAttrs& attrs, const std::vector<Tracer>& operands) {
    const int n = c::ControlFlowNumResults(attrs);
    std::vector<Val> outs;
    for (int i = 0; i < n; ++i) {
      outs.push_back(Val{ctx_.Emit(c::WithOutputIndex(attrs, i), operands)});
    }
    for (const Val& v : outs) pool_.push_back(v);
  }

  // while (i < limit) { i += 1; x = f(x, invariant) }: a counter from a
  // random start (the index parameter or another integer scalar, often
  // out of range) to a small limit, or to the index parameter. Now and
  // then a second carry y of x's type (maybe x itself), so that new carries
  // swap places or share a value.
  void While() {
    const Val x = Recent([](const Val& v) { return v.exact; });
    const Shape& s = x.t.shape();
    // The start, kept near the limits so that loops stay short.
    const Tracer i0 =
        minimum(maximum(astype(IndexScalar(), DType::kInt32), -4), 8);
    std::vector<Tracer> operands{i0, x.t};
    std::vector<ValueType> types{ValueType{Shape{}, DType::kInt32},
                                 ValueType{s, x.t.dtype()}};
    const bool second = rng_.Chance(0.3);
    if (second) {
      const Val y = Recent([&](const Val& v) {
        return v.exact && v.t.shape() == s && v.t.dtype() == x.t.dtype();
      });
      operands.push_back(y.t);
      types.push_back(types.back());
    }
    const int num_carries = second ? 3 : 2;
    const bool limit_param = index_param_.valid() && rng_.Chance(0.3);
    if (limit_param) {
      operands.push_back(index_param_);
      types.push_back(ValueType{Shape{}, DType::kInt32});
    }
    if (rng_.Chance(0.5)) {
      const Val inv = Recent([&](const Val& v) { return FitsRegion(v, s); });
      operands.push_back(inv.t);
      types.push_back(ValueType{inv.t.shape(), inv.t.dtype()});
    }
    const int limit = rng_.Int(-1, 6);
    c::TraceContext cond;
    std::vector<Tracer> cp;
    for (const ValueType& t : types) cp.push_back(cond.AddParameter(t));
    const Tracer go =
        limit_param ? lt(cp[0], cp[num_carries]) : lt(cp[0], limit);
    c::TraceContext body;
    std::vector<Tracer> bp;
    for (const ValueType& t : types) bp.push_back(body.AddParameter(t));
    std::vector<Tracer> vals(bp.begin() + 1, bp.end());
    if (limit_param)
      vals.erase(vals.begin() + num_carries - 1);  // not the limit
    const std::vector<Tracer> carries(vals.begin(),
                                      vals.begin() + num_carries - 1);
    RegionOps(vals, s, 4);
    std::vector<Tracer> outs{bp[0] + 1};
    for (int k = 1; k < num_carries; ++k) {
      const int r = rng_.Int(0, 5);
      if (r == 0) {
        outs.push_back(rng_.Pick(carries));  // an old carry, maybe swapped
      } else if (r == 1 && k > 1) {
        outs.push_back(outs[1]);  // the same new value twice
      } else {
        outs.push_back(RegionResult(vals, s, x.t.dtype()));
      }
    }
    c::WhileAttrs attrs;
    attrs.num_carries = num_carries;
    attrs.cond = std::make_shared<const c::Program>(cond.Finish({go}));
    attrs.body = std::make_shared<const c::Program>(body.Finish(outs));
    EmitGroup(attrs, operands);
  }

  // scan over the slices of one xs (at most 64 of them, sometimes in
  // reverse): one or two carries (or none: a map; a second carry may start
  // from the first's value, and swap with it), maybe an invariant, one or
  // two stacked outputs, some of them a parameter of the body as it is.
  void Scan() {
    const Val xs = Recent([](const Val& v) {
      return v.exact && v.t.rank() >= 1 && v.t.shape()[0] <= 64;
    });
    const int64_t length = xs.t.shape()[0];
    const Shape s(std::vector<int64_t>(xs.t.shape().dims().begin() + 1,
                                       xs.t.shape().dims().end()));
    const bool has_carry = rng_.Chance(0.85);
    std::vector<Tracer> operands;
    std::vector<ValueType> types;
    DType carry_dtype = xs.t.dtype();
    if (has_carry) {
      Tracer init;
      if (rng_.Chance(0.5)) {
        init =
            Recent([&](const Val& v) { return v.exact && v.t.shape() == s; }).t;
      } else {
        init = full(ctx_, s, RandomWeakScalar(),
                    rng_.Chance(0.5) ? xs.t.dtype() : RandomDType());
      }
      carry_dtype = init.dtype();
      operands.push_back(init);
      types.push_back(ValueType{s, carry_dtype});
      if (rng_.Chance(0.3)) {  // a second carry of the same type
        operands.push_back(
            rng_.Chance(0.3) ? init
                             : full(ctx_, s, RandomWeakScalar(), carry_dtype));
        types.push_back(types.back());
      }
    }
    const int num_carries = static_cast<int>(operands.size());
    operands.push_back(xs.t);
    types.push_back(ValueType{s, xs.t.dtype()});
    if (rng_.Chance(0.4)) {
      const Val inv = Recent([&](const Val& v) { return FitsRegion(v, s); });
      operands.push_back(inv.t);
      types.push_back(ValueType{inv.t.shape(), inv.t.dtype()});
    }
    c::TraceContext body;
    std::vector<Tracer> vals;
    for (const ValueType& t : types) vals.push_back(body.AddParameter(t));
    const std::vector<Tracer> params = vals;
    RegionOps(vals, s, 4);
    std::vector<Tracer> outs;
    for (int k = 0; k < num_carries; ++k) {
      // Carry 1 may be carry 0's old value (they swap) or its new one.
      const int r = rng_.Int(0, 5);
      outs.push_back(k == 1 && r == 0   ? params[0]
                     : k == 1 && r == 1 ? outs[0]
                                        : RegionResult(vals, s, carry_dtype));
    }
    for (int j = rng_.Int(has_carry ? 0 : 1, 2); j > 0; --j) {
      const int r = rng_.Int(0, 9);
      if (r == 0) {
        outs.push_back(params[num_carries]);  // the x slice itself
      } else if (r == 1 && has_carry) {
        outs.push_back(rng_.Chance(0.5) ? params[0] : outs[0]);  // a carry
      } else {
        outs.push_back(RegionResult(vals, s, rng_.Pick(vals).dtype()));
      }
    }
    c::ScanAttrs attrs;
    attrs.num_carries = num_carries;
    attrs.num_xs = 1;
    attrs.length = length;
    attrs.reverse = rng_.Chance(0.3);
    attrs.body = std::make_shared<const c::Program>(body.Finish(outs));
    EmitGroup(attrs, operands);
  }

  // case (index) over two or three branches of one or two operands of one
  // shape; the index is often out of range (clamped). Branches may return
  // an operand as it is, or one value twice.
  void Case() {
    const Val a = Exact();
    const Shape& s = a.t.shape();
    std::vector<Tracer> operands{astype(IndexScalar(), DType::kInt32), a.t};
    std::vector<ValueType> types{ValueType{s, a.t.dtype()}};
    if (rng_.Chance(0.5)) {
      const Val b = Recent([&](const Val& v) { return FitsRegion(v, s); });
      operands.push_back(b.t);
      types.push_back(ValueType{b.t.shape(), b.t.dtype()});
    }
    std::vector<DType> result_dtypes;
    for (int k = rng_.Int(1, 2); k > 0; --k) {
      result_dtypes.push_back(rng_.Chance(0.6) ? a.t.dtype()
                                               : rng_.Pick(types).dtype);
    }
    c::CaseAttrs attrs;
    for (int b = rng_.Int(2, 3); b > 0; --b) {
      c::TraceContext branch;
      std::vector<Tracer> vals;
      for (const ValueType& t : types) vals.push_back(branch.AddParameter(t));
      RegionOps(vals, s, 3);
      std::vector<Tracer> outs;
      for (DType d : result_dtypes) {
        outs.push_back(!outs.empty() && outs[0].dtype() == d && rng_.Chance(0.3)
                           ? outs[0]  // the same value twice
                           : RegionResult(vals, s, d));
      }
      attrs.branches.push_back(
          std::make_shared<const c::Program>(branch.Finish(outs)));
    }
    EmitGroup(attrs, operands);
  }

  void Constant() {
    const DType d = RandomDType();
    pool_.push_back(Val{c::constant(ctx_, RandomLiteral(d, RandomShape()))});
  }

  // A call (checkpoint group with two outputs, stop_gradient or a name):
  // expanded by InlineCalls before planning, so the executor must give the
  // values the interpreter gives by running the body.
  void Call() {
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

  void Iota() {
    const Shape s = RandomShape();
    if (s.rank() == 0) return;
    pool_.push_back(
        Val{iota(ctx_, rng_.Chance(0.5) ? DType::kInt32 : DType::kFloat32, s,
                 rng_.Int(0, s.rank() - 1))});
  }

  Rng rng_;
  uint64_t seed_;
  c::TraceContext ctx_;
  std::vector<Val> pool_;
  Tracer index_param_;
};

// "" when `got` matches `want` as `v` demands (bitwise when v.exact, else
// within v.rel of the largest finite reference value), else what differs.
// The random-program tests of the CPU executor and of the generated kernels
// both judge their results with it.
inline std::string Mismatch(const c::Literal& want, const c::Literal& got,
                            const Val& v) {
  if (want.shape() != got.shape() || want.dtype() != got.dtype()) {
    return "type " + got.ToString() + " vs reference " + want.ToString();
  }
  const size_t elem = dtype_size(want.dtype());
  const auto* w = static_cast<const uint8_t*>(want.untyped_data());
  const auto* g = static_cast<const uint8_t*>(got.untyped_data());
  double scale = 0;
  if (!v.exact) {
    for (int64_t i = 0; i < want.num_elements(); ++i) {
      const double x = std::fabs(want.GetAsDouble(i));
      if (std::isfinite(x)) scale = std::max(scale, x);
    }
  }
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    if (std::memcmp(w + i * elem, g + i * elem, elem) == 0) continue;
    const double a = want.GetAsDouble(i), b = got.GetAsDouble(i);
    if (std::isnan(a) && std::isnan(b)) continue;
    if (!v.exact && std::fabs(a - b) <= v.rel * std::max(std::fabs(a), scale)) {
      continue;
    }
    std::ostringstream os;
    os << "element " << i << ": got " << got.ElementToString(i)
       << ", reference " << want.ElementToString(i)
       << (v.exact ? " (bitwise expected)" : " (beyond tolerance)");
    return os.str();
  }
  return "";
}

}  // namespace baton::testing
