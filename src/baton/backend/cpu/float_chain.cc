#include "baton/backend/cpu/float_chain.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>

#include "baton/backend/cpu/kernels/isa.h"
#include "baton/backend/cpu/kernels/reduce_run.h"
#include "baton/backend/cpu/kernels/vector_loop.h"
#include "baton/compiler/op_attrs.h"
#include "baton/core/scalar_math.h"

namespace baton::cpu {

using compiler::ValueId;
using Kind = FloatChain::Source::Kind;

std::unique_ptr<FloatChain> FloatChain::TryPlan(
    const compiler::Program& program, const compiler::StepPlan& plan,
    const compiler::Step& step,
    const std::vector<std::vector<int>>& operand_member) {
  if (step.members.empty() ||
      step.members.size() > static_cast<size_t>(kMaxMembers)) {
    return nullptr;
  }
  const int64_t total = program.type(step.result).num_elements();
  auto chain = std::unique_ptr<FloatChain>(new FloatChain());
  for (size_t i = 0; i < step.members.size(); ++i) {
    const compiler::Instruction& inst = program.instruction(step.members[i]);
    const auto* bin = inst.attrs_if<compiler::BinaryAttrs>();
    if (bin == nullptr || inst.type.dtype != DType::kFloat32 ||
        inst.operands.size() != 2) {
      return nullptr;
    }
    if (bin->op != BinaryOp::kAdd && bin->op != BinaryOp::kSub &&
        bin->op != BinaryOp::kMul && bin->op != BinaryOp::kDiv) {
      return nullptr;
    }
    MicroOp m;
    m.op = bin->op;
    Source* sources[2] = {&m.a, &m.b};
    for (size_t k = 0; k < 2; ++k) {
      const ValueId o = inst.operands[k];
      Source& s = *sources[k];
      if (operand_member[i][k] >= 0) {
        s.kind = Kind::kMember;
        s.member = operand_member[i][k];
        continue;
      }
      if (program.type(o).dtype != DType::kFloat32) return nullptr;
      if (plan.scalar_source[o] != compiler::kNoValue) {
        s.kind = Kind::kScalar;
        s.value = plan.scalar_source[o];
      } else if (program.type(o).num_elements() == total) {
        s.kind = Kind::kArray;
        s.value = o;
      } else if (program.type(o).num_elements() == 1) {
        s.kind = Kind::kScalar;
        s.value = o;
      } else {
        return nullptr;
      }
    }
    BindLoops(m);
    chain->ops_.push_back(m);
  }
  // Pairs: member i feeds only member i + 1, both with one scalar side.
  for (size_t i = 0; i + 1 < chain->ops_.size(); ++i) {
    int readers = 0;
    for (size_t j = i + 1; j < chain->ops_.size(); ++j) {
      const MicroOp& m = chain->ops_[j];
      readers +=
          (m.a.kind == Kind::kMember && m.a.member == static_cast<int>(i)) +
          (m.b.kind == Kind::kMember && m.b.member == static_cast<int>(i));
    }
    if (readers != 1) continue;
    BindPair(chain->ops_[i], chain->ops_[i + 1], static_cast<int>(i));
    if (chain->ops_[i].pair_baseline != nullptr) ++i;  // i + 1 is taken
  }
  const auto& ops = chain->ops_;
  chain->whole_range_ =
      (ops.size() == 1 &&
       !(ops[0].a.kind == Kind::kScalar && ops[0].b.kind == Kind::kScalar)) ||
      (ops.size() == 2 && ops[0].pair_baseline != nullptr);
  // op(a, b) then its square: summed in registers too (SumRange).
  auto is_first = [](const Source& s) {
    return s.kind == Kind::kMember && s.member == 0;
  };
  chain->squared_ =
      ops.size() == 2 && ops[1].op == BinaryOp::kMul && is_first(ops[1].a) &&
      is_first(ops[1].b) &&
      !(ops[0].a.kind == Kind::kScalar && ops[0].b.kind == Kind::kScalar);
  return chain;
}

void FloatChain::RunWhole(const std::vector<void*>& value_data, float* out,
                          int64_t begin, int64_t end) const {
  const bool avx2 = UseAvx2Kernels() && ops_.front().avx2 != nullptr;
  const MicroOp& m = ops_[0];
  auto array = [&](const Source& s) {
    return static_cast<const float*>(value_data[s.value]) + begin;
  };
  auto scalar = [&](const Source& s) {
    return *static_cast<const float*>(value_data[s.value]);
  };
  const bool l1 = m.a.kind == Kind::kScalar;
  if (ops_.size() == 1) {
    const bool r1 = m.b.kind == Kind::kScalar;
    (avx2 ? m.avx2 : m.baseline)(
        l1 ? nullptr : array(m.a), r1 ? nullptr : array(m.b),
        l1 ? scalar(m.a) : 0.0f, r1 ? scalar(m.b) : 0.0f, out, end - begin);
    return;
  }
  const MicroOp& m2 = ops_[1];
  const bool l2 = m2.a.kind == Kind::kScalar;
  (avx2 && m.pair_avx2 ? m.pair_avx2 : m.pair_baseline)(
      array(l1 ? m.b : m.a), scalar(l1 ? m.a : m.b), scalar(l2 ? m2.a : m2.b),
      out, end - begin);
}

double FloatChain::SumRange(const std::vector<void*>& value_data, int64_t begin,
                            int64_t count) const {
  const MicroOp& m = ops_[0];
  const bool avx2 = UseAvx2Kernels() && m.sum_avx2 != nullptr;
  const MicroOp::SumFn fn =
      squared_ ? (avx2 ? m.sum_squared_avx2 : m.sum_squared_baseline)
               : (avx2 ? m.sum_avx2 : m.sum_baseline);
  const bool l = m.a.kind == Kind::kScalar, r = m.b.kind == Kind::kScalar;
  auto array = [&](const Source& s) {
    return static_cast<const float*>(value_data[s.value]) + begin;
  };
  auto scalar = [&](const Source& s) {
    return *static_cast<const float*>(value_data[s.value]);
  };
  return fn(l ? nullptr : array(m.a), r ? nullptr : array(m.b),
            l ? scalar(m.a) : 0.0f, r ? scalar(m.b) : 0.0f, count);
}

namespace {

enum class Pattern { kArrays, kLhsScalar, kRhsScalar };

template <BinaryOp op, Pattern p>
__attribute__((always_inline)) inline void BlockBody(const float* a,
                                                     const float* b, float as,
                                                     float bs, float* d,
                                                     int64_t n) {
  VectorLoop(0, n, [=](int64_t j) {
    d[j] = scalar::Binary<op, float>(p == Pattern::kLhsScalar ? as : a[j],
                                     p == Pattern::kRhsScalar ? bs : b[j]);
  });
}

template <BinaryOp op, Pattern p>
void BlockBaseline(const float* a, const float* b, float as, float bs, float* d,
                   int64_t n) {
  BlockBody<op, p>(a, b, as, bs, d, n);
}

#if BATON_KERNELS_HAVE_AVX2
// The same loop for AVX2 (no FMA: isa.h), bitwise equal to the baseline.
template <BinaryOp op, Pattern p>
__attribute__((target("avx2"))) void BlockAvx2(const float* a, const float* b,
                                               float as, float bs, float* d,
                                               int64_t n) {
  BlockBody<op, p>(a, b, as, bs, d, n);
}
#endif

// The sum of BlockBody's d[0, n), each eight of its elements made in a
// vector register and handed to the sum as they are made: the same IEEE
// operation and NaN canonicalization per element as BlockBody, summed in
// SumFloatRunBody's order, so the bits of summing BlockBody's output.
// kSquared: of d[j] * d[j] (the chain op, then mul(op, op): a variance's
// (x - mean)^2); only the square is made a canonical NaN, the bits of
// canonicalizing both (a NaN operand gives a NaN product).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"  // vectors only in inlined code
template <BinaryOp op, Pattern p, bool kSquared>
__attribute__((always_inline)) inline double SumBody(const float* a,
                                                     const float* b, float as,
                                                     float bs, int64_t n) {
  using reduce_detail::Float8;
  using reduce_detail::LoadFloat8;
  const float nan = scalar::CanonicalNaN(std::bit_cast<float>(0x7fc00000u));
  // The lambdas capture scalars only: a vector captured by value would be
  // passed by value (an ABI that differs with and without AVX).
  return reduce_detail::SumFloatRunOf(
      n,
      [=](int64_t i, Float8 * v) __attribute__((always_inline)) {
        const Float8 a8 = {as, as, as, as, as, as, as, as};
        const Float8 b8 = {bs, bs, bs, bs, bs, bs, bs, bs};
        const Float8 nan8 = {nan, nan, nan, nan, nan, nan, nan, nan};
        const Float8 x = p == Pattern::kLhsScalar ? a8 : LoadFloat8(a + i);
        const Float8 y = p == Pattern::kRhsScalar ? b8 : LoadFloat8(b + i);
        Float8 r;
        if constexpr (op == BinaryOp::kAdd) r = x + y;
        if constexpr (op == BinaryOp::kSub) r = x - y;
        if constexpr (op == BinaryOp::kMul) r = x * y;
        if constexpr (op == BinaryOp::kDiv) r = x / y;
        if constexpr (kSquared) r = r * r;
        *v = r == r ? r : nan8;  // NOLINT: the NaN test
      },
      [=](int64_t i) __attribute__((always_inline)) {
        const float t =
            scalar::Binary<op, float>(p == Pattern::kLhsScalar ? as : a[i],
                                      p == Pattern::kRhsScalar ? bs : b[i]);
        return kSquared ? scalar::Binary<BinaryOp::kMul, float>(t, t) : t;
      });
}
#pragma GCC diagnostic pop

template <BinaryOp op, Pattern p, bool kSquared>
double SumBaseline(const float* a, const float* b, float as, float bs,
                   int64_t n) {
  return SumBody<op, p, kSquared>(a, b, as, bs, n);
}

#if BATON_KERNELS_HAVE_AVX2
template <BinaryOp op, Pattern p, bool kSquared>
__attribute__((target("avx2"))) double SumAvx2(const float* a, const float* b,
                                               float as, float bs, int64_t n) {
  return SumBody<op, p, kSquared>(a, b, as, bs, n);
}
#endif

template <BinaryOp op, Pattern p>
void BindOne(FloatChain::MicroOp& m) {
  m.baseline = &BlockBaseline<op, p>;
  m.sum_baseline = &SumBaseline<op, p, false>;
  m.sum_squared_baseline = &SumBaseline<op, p, true>;
#if BATON_KERNELS_HAVE_AVX2
  m.avx2 = &BlockAvx2<op, p>;
  m.sum_avx2 = &SumAvx2<op, p, false>;
  m.sum_squared_avx2 = &SumAvx2<op, p, true>;
#endif
}

template <BinaryOp op>
void Bind(Pattern p, FloatChain::MicroOp& m) {
  switch (p) {
    case Pattern::kArrays:
      return BindOne<op, Pattern::kArrays>(m);
    case Pattern::kLhsScalar:
      return BindOne<op, Pattern::kLhsScalar>(m);
    case Pattern::kRhsScalar:
      return BindOne<op, Pattern::kRhsScalar>(m);
  }
}

// The IEEE operation alone, without scalar::Binary's NaN canonicalization.
template <BinaryOp op>
__attribute__((always_inline)) inline float Raw(float a, float b) {
  if constexpr (op == BinaryOp::kAdd) return a + b;
  if constexpr (op == BinaryOp::kSub) return a - b;
  if constexpr (op == BinaryOp::kMul) return a * b;
  return a / b;
}

// Pair loops: Op1 with its scalar on the left when L1, then Op2 likewise.
// Only the result is made a canonical NaN: add, sub, mul and div return a
// NaN for any NaN operand, so a NaN between the two ops ends as the
// canonical NaN either way -- the same bits as canonicalizing both.
template <BinaryOp op1, bool l1, BinaryOp op2, bool l2>
__attribute__((always_inline)) inline void PairBody(const float* a, float s1,
                                                    float s2, float* d,
                                                    int64_t n) {
  VectorLoop(0, n, [=](int64_t j) {
    const float t = l1 ? Raw<op1>(s1, a[j]) : Raw<op1>(a[j], s1);
    d[j] = scalar::CanonicalNaN(l2 ? Raw<op2>(s2, t) : Raw<op2>(t, s2));
  });
}

template <BinaryOp op1, bool l1, BinaryOp op2, bool l2>
void PairBaseline(const float* a, float s1, float s2, float* d, int64_t n) {
  PairBody<op1, l1, op2, l2>(a, s1, s2, d, n);
}

#if BATON_KERNELS_HAVE_AVX2
template <BinaryOp op1, bool l1, BinaryOp op2, bool l2>
__attribute__((target("avx2"))) void PairAvx2(const float* a, float s1,
                                              float s2, float* d, int64_t n) {
  PairBody<op1, l1, op2, l2>(a, s1, s2, d, n);
}
#endif

template <BinaryOp op1, bool l1, BinaryOp op2, bool l2>
void BindPairLoops(FloatChain::MicroOp& m) {
  m.pair_baseline = &PairBaseline<op1, l1, op2, l2>;
#if BATON_KERNELS_HAVE_AVX2
  m.pair_avx2 = &PairAvx2<op1, l1, op2, l2>;
#endif
}

template <BinaryOp op1, bool l1, BinaryOp op2>
void BindPairSecond(bool l2, FloatChain::MicroOp& m) {
  if (l2) return BindPairLoops<op1, l1, op2, true>(m);
  return BindPairLoops<op1, l1, op2, false>(m);
}

template <BinaryOp op1, bool l1>
void BindPairOp2(BinaryOp op2, bool l2, FloatChain::MicroOp& m) {
  switch (op2) {
    case BinaryOp::kAdd:
      return BindPairSecond<op1, l1, BinaryOp::kAdd>(l2, m);
    case BinaryOp::kSub:
      return BindPairSecond<op1, l1, BinaryOp::kSub>(l2, m);
    case BinaryOp::kMul:
      return BindPairSecond<op1, l1, BinaryOp::kMul>(l2, m);
    default:
      return BindPairSecond<op1, l1, BinaryOp::kDiv>(l2, m);
  }
}

template <BinaryOp op1>
void BindPairOp1(bool l1, BinaryOp op2, bool l2, FloatChain::MicroOp& m) {
  if (l1) return BindPairOp2<op1, true>(op2, l2, m);
  return BindPairOp2<op1, false>(op2, l2, m);
}

}  // namespace

void FloatChain::BindPair(MicroOp& first, const MicroOp& second,
                          int first_index) {
  // first: one array or member side, one scalar side.
  const bool l1 = first.a.kind == Kind::kScalar;
  const Source& a1 = l1 ? first.b : first.a;
  if ((first.a.kind == Kind::kScalar) == (first.b.kind == Kind::kScalar) ||
      a1.kind == Kind::kScalar) {
    return;
  }
  // second: first's result on one side, a scalar on the other.
  const bool l2 = second.a.kind == Kind::kScalar;
  const Source& from = l2 ? second.b : second.a;
  const Source& other = l2 ? second.a : second.b;
  if (other.kind != Kind::kScalar || from.kind != Kind::kMember ||
      from.member != first_index) {
    return;
  }
  switch (first.op) {
    case BinaryOp::kAdd:
      return BindPairOp1<BinaryOp::kAdd>(l1, second.op, l2, first);
    case BinaryOp::kSub:
      return BindPairOp1<BinaryOp::kSub>(l1, second.op, l2, first);
    case BinaryOp::kMul:
      return BindPairOp1<BinaryOp::kMul>(l1, second.op, l2, first);
    default:
      return BindPairOp1<BinaryOp::kDiv>(l1, second.op, l2, first);
  }
}

void FloatChain::BindLoops(MicroOp& m) {
  const bool lhs = m.a.kind == Kind::kScalar, rhs = m.b.kind == Kind::kScalar;
  // Both scalar: the lhs is read as a scalar, the rhs from a splat row.
  const Pattern p = lhs ? Pattern::kLhsScalar
                        : (rhs ? Pattern::kRhsScalar : Pattern::kArrays);
  switch (m.op) {
    case BinaryOp::kAdd:
      return Bind<BinaryOp::kAdd>(p, m);
    case BinaryOp::kSub:
      return Bind<BinaryOp::kSub>(p, m);
    case BinaryOp::kMul:
      return Bind<BinaryOp::kMul>(p, m);
    default:
      return Bind<BinaryOp::kDiv>(p, m);
  }
}

void FloatChain::Run(const std::vector<void*>& value_data, float* out,
                     int64_t begin, int64_t end) const {
  if (whole_range_) return RunWhole(value_data, out, begin, end);
  const bool avx2 = UseAvx2Kernels() && ops_.front().avx2 != nullptr;
  alignas(64) float rows[kMaxMembers][kBlock];
  // An op whose operands are both scalars reads its rhs from a splat row.
  alignas(64) float splat[kMaxMembers][kBlock];
  const size_t n_ops = ops_.size();
  // Everything but the block offset, resolved once per call (a loop body
  // runs this once per iteration, so per-block lookups would add up): each
  // side's base pointer, whether it advances with the block, its scalar.
  struct Resolved {
    BlockFn fn;
    PairFn pair;  // set: this member and the next run as one pass
    const float* a;
    const float* b;
    bool a_moves, b_moves;
    float as, bs;
  };
  Resolved r[kMaxMembers];
  for (size_t i = 0; i < n_ops; ++i) {
    const MicroOp& m = ops_[i];
    Resolved& x = r[i];
    x.fn = avx2 ? m.avx2 : m.baseline;
    x.pair = avx2 && m.pair_avx2 ? m.pair_avx2 : m.pair_baseline;
    auto side = [&](const Source& src, const float** p, bool* moves,
                    float* scalar) {
      *moves = false;
      *scalar = 0.0f;
      *p = splat[i];
      if (src.kind == Kind::kMember) {
        *p = rows[src.member];
      } else if (src.kind == Kind::kArray) {
        *p = static_cast<const float*>(value_data[src.value]);
        *moves = true;
      } else {
        *scalar = *static_cast<const float*>(value_data[src.value]);
      }
    };
    side(m.a, &x.a, &x.a_moves, &x.as);
    side(m.b, &x.b, &x.b_moves, &x.bs);
    if (m.a.kind == Kind::kScalar && m.b.kind == Kind::kScalar) {
      std::fill(splat[i], splat[i] + kBlock, x.bs);
    }
  }
  for (int64_t at = begin; at < end; at += kBlock) {
    const int64_t n = std::min(kBlock, end - at);
    for (size_t i = 0; i < n_ops; ++i) {
      const Resolved& x = r[i];
      if (x.pair != nullptr) {
        // This member's array side, its scalar, the next member's scalar.
        const Resolved& y = r[i + 1];
        const bool l1 = ops_[i].a.kind == Kind::kScalar;
        const float* a =
            l1 ? (x.b_moves ? x.b + at : x.b) : (x.a_moves ? x.a + at : x.a);
        const bool l2 = ops_[i + 1].a.kind == Kind::kScalar;
        ++i;
        float* d = i + 1 == n_ops ? out + (at - begin) : rows[i];
        x.pair(a, l1 ? x.as : x.bs, l2 ? y.as : y.bs, d, n);
        continue;
      }
      // The last member writes the result directly: every member has read
      // this block's inputs by then, and an input that is the output itself
      // (in place) is read at the same index it is written.
      float* d = i + 1 == n_ops ? out + (at - begin) : rows[i];
      x.fn(x.a_moves ? x.a + at : x.a, x.b_moves ? x.b + at : x.b, x.as, x.bs,
           d, n);
    }
  }
}

}  // namespace baton::cpu
