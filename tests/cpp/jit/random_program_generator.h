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
// Nor is the fft op: its results are accurate relative to the transform's
// norm, not element by element (a bin near zero has no relative
// tolerance); tests/cpp/kernels/fft_test.cc and jit/fft_programs_test.cc
// compare it with the reference, and the fuzzer draws it.
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

  // ---- Ops (random_program_ops.h) ----

  void Step();  // one random op; throws when the tracer rejects it
  void UnaryOp_();

  // A second operand for `a`: same shape, broadcast-compatible, or rank 0.
  Val Partner(const Val& a, bool exact_only);

  // One binary function in its forms tracer-tracer, tracer-scalar and
  // (where the tracer API has it) scalar-tracer, scalars weakly typed.
  struct BinaryFn {
    Tracer (*tt)(const Tracer&, const Tracer&);
    Tracer (*ts)(const Tracer&, WeakScalar);
    Tracer (*st)(WeakScalar, const Tracer&);  // may be null
    bool smooth;  // keeps a rounding error relative: fine on inexact values
  };

  void BinaryOp_();
  void CompareOp_();
  void Where();
  void Convert();
  void Reshape();
  std::vector<int64_t> Permutation(int rank);
  void Transpose();
  void Slice();
  void Broadcast();
  void DynamicSlice();
  void DynamicUpdateSlice();
  void Concatenate();
  void Pad();
  void Take();

  // Only of exact values: an inexact one could tie or swap differently.
  void Sort();

  void Scatter();
  void Reduce();
  void Matmul();
  void Transfer();

  // Re-emits an earlier instruction: CSE must merge the two.
  void Duplicate();

  void Constant();

  // A call (checkpoint group with two outputs, stop_gradient or a name):
  // expanded by InlineCalls before planning, so the executor must give the
  // values the interpreter gives by running the body.
  void Call();

  void Iota();

  // ---- Control flow (random_program_control_flow.h) ----

  // Values the regions read: all of `shape`, or rank 0 (they broadcast).
  static bool FitsRegion(const Val& v, const Shape& shape);

  // Adds up to `max_ops` random elementwise ops to a region being traced,
  // over `vals` (each of `shape` or rank 0); results join `vals`. Only ops
  // whose results are bitwise those of the reference (regions see exact
  // values only). Ops the tracer rejects are skipped.
  void RegionOps(std::vector<Tracer>& vals, const Shape& shape, int max_ops);

  // A value of `vals` of exactly `shape` (there is always one: the region's
  // own parameter), as `dtype`.
  Tracer RegionResult(const std::vector<Tracer>& vals, const Shape& shape,
                      DType dtype);

  // Emits a whole region group; pushes its results (exact: regions only
  // ever see exact values and exact ops).
  void EmitGroup(const c::OpAttrs& attrs, const std::vector<Tracer>& operands);

  // while (i < limit) { i += 1; x = f(x, invariant) }: a counter from a
  // random start (the index parameter or another integer scalar, often
  // out of range) to a small limit, or to the index parameter. Now and
  // then a second carry y of x's type (maybe x itself), so that new carries
  // swap places or share a value.
  void While();

  // scan over the slices of one xs (at most 64 of them, sometimes in
  // reverse): one or two carries (or none: a map; a second carry may start
  // from the first's value, and swap with it), maybe an invariant, one or
  // two stacked outputs, some of them a parameter of the body as it is.
  void Scan();

  // case (index) over two or three branches of one or two operands of one
  // shape; the index is often out of range (clamped). Branches may return
  // an operand as it is, or one value twice.
  void Case();

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

// The members that draw ops and control flow, defined out of the class.
#include "jit/random_program_control_flow.h"
#include "jit/random_program_ops.h"
