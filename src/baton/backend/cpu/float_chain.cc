#include "baton/backend/cpu/float_chain.h"

#include <algorithm>
#include <cstring>

#include "baton/backend/cpu/kernels/isa.h"
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
  return chain;
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

template <BinaryOp op, Pattern p>
void BindOne(FloatChain::MicroOp& m) {
  m.baseline = &BlockBaseline<op, p>;
#if BATON_KERNELS_HAVE_AVX2
  m.avx2 = &BlockAvx2<op, p>;
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

}  // namespace

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
  const bool avx2 = UseAvx2Kernels() && ops_.front().avx2 != nullptr;
  alignas(64) float rows[kMaxMembers][kBlock];
  // An op whose operands are both scalars reads its rhs from a splat row.
  alignas(64) float splat[kMaxMembers][kBlock];
  const size_t n_ops = ops_.size();
  for (size_t i = 0; i < n_ops; ++i) {
    const MicroOp& m = ops_[i];
    if (m.a.kind == Kind::kScalar && m.b.kind == Kind::kScalar) {
      const float v = *static_cast<const float*>(value_data[m.b.value]);
      std::fill(splat[i], splat[i] + kBlock, v);
    }
  }
  auto scalar_value = [&](const Source& s) {
    return s.kind == Kind::kScalar
               ? *static_cast<const float*>(value_data[s.value])
               : 0.0f;
  };
  for (int64_t at = begin; at < end; at += kBlock) {
    const int64_t n = std::min(kBlock, end - at);
    for (size_t i = 0; i < n_ops; ++i) {
      const MicroOp& m = ops_[i];
      auto pointer = [&](const Source& s) -> const float* {
        if (s.kind == Kind::kMember) return rows[s.member];
        if (s.kind == Kind::kArray) {
          return static_cast<const float*>(value_data[s.value]) + at;
        }
        return splat[i];
      };
      // The last member writes the result directly: every member has read
      // this block's inputs by then, and an input that is the output itself
      // (in place) is read at the same index it is written.
      float* d = i + 1 == n_ops ? out + at : rows[i];
      (avx2 ? m.avx2 : m.baseline)(pointer(m.a), pointer(m.b),
                                   scalar_value(m.a), scalar_value(m.b), d, n);
    }
  }
}

}  // namespace baton::cpu
