// Reference interpreter: reduce and dot_general, accumulating in the compute
// type (float for float16/bfloat16, the type itself otherwise) in row-major
// order, through scalar_math.h's combine functions.
#include <algorithm>
#include <memory>

#include "baton/compiler/interpreter_ops.h"
#include "baton/core/dtype_dispatch.h"
#include "baton/core/scalar_math.h"

namespace baton::compiler::interpreter {

Literal EvalReduce(const Instruction& inst, const Operands& in) {
  const auto& a = inst.attrs_as<ReduceAttrs>();
  const Literal& x = *in[0];
  Literal out = NewResult(inst);
  const std::vector<int64_t> out_strides = out.shape().strides();
  // Which operand dimensions survive, in order.
  std::vector<int> kept;
  for (int d = 0; d < x.shape().rank(); ++d) {
    if (std::find(a.axes.begin(), a.axes.end(), d) == a.axes.end()) {
      kept.push_back(d);
    }
  }
  VisitDType(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    VisitReduceOp(a.op, [&](auto op) {
      constexpr ReduceOp kOp = decltype(op)::value;
      // Not std::vector<C>: C may be bool, and vector<bool> has no C&.
      const int64_t n = out.num_elements();
      std::unique_ptr<C[]> acc(new C[n]);
      std::fill(acc.get(), acc.get() + n, scalar::ReduceInit<kOp, C>());
      const T* src = x.data<T>();
      // Visiting the operand in row-major order combines the elements of
      // each output in row-major order of the reduced axes.
      std::vector<int64_t> out_index(kept.size());
      ForEachIndex(
          x.shape(), [&](const std::vector<int64_t>& index, int64_t i) {
            for (size_t k = 0; k < kept.size(); ++k)
              out_index[k] = index[kept[k]];
            C& slot = acc[Offset(out_index, out_strides)];
            slot = scalar::ReduceCombine<kOp, C>(slot, ToCompute(src[i]));
          });
      T* dst = out.mutable_data<T>();
      for (int64_t i = 0; i < n; ++i) dst[i] = FromCompute<T>(acc[i]);
    });
  });
  return out;
}

Literal EvalDotGeneral(const Instruction& inst, const Operands& in) {
  const auto& a = inst.attrs_as<DotGeneralAttrs>();
  const Literal &lhs = *in[0], &rhs = *in[1];
  auto free_dims = [](const Shape& shape, const std::vector<int64_t>& batch,
                      const std::vector<int64_t>& contracting) {
    std::vector<int64_t> free;
    for (int d = 0; d < shape.rank(); ++d) {
      if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
          std::find(contracting.begin(), contracting.end(), d) ==
              contracting.end()) {
        free.push_back(d);
      }
    }
    return free;
  };
  const std::vector<int64_t> lhs_free =
      free_dims(lhs.shape(), a.lhs_batch, a.lhs_contracting);
  const std::vector<int64_t> rhs_free =
      free_dims(rhs.shape(), a.rhs_batch, a.rhs_contracting);
  std::vector<int64_t> contracting_sizes;
  for (int64_t d : a.lhs_contracting) {
    contracting_sizes.push_back(lhs.shape()[static_cast<int>(d)]);
  }
  const Shape contracting_shape(contracting_sizes);
  const std::vector<int64_t> lhs_strides = lhs.shape().strides();
  const std::vector<int64_t> rhs_strides = rhs.shape().strides();
  Literal out = NewResult(inst);
  const size_t nb = a.lhs_batch.size();

  VisitDType(lhs.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const T* pl = lhs.data<T>();
    const T* pr = rhs.data<T>();
    T* dst = out.mutable_data<T>();
    std::vector<int64_t> li(lhs.shape().rank()), ri(rhs.shape().rank());
    ForEachIndex(
        out.shape(), [&](const std::vector<int64_t>& index, int64_t i) {
          // Result index = batch..., lhs free..., rhs free...
          for (size_t k = 0; k < nb; ++k) {
            li[a.lhs_batch[k]] = index[k];
            ri[a.rhs_batch[k]] = index[k];
          }
          for (size_t k = 0; k < lhs_free.size(); ++k) {
            li[lhs_free[k]] = index[nb + k];
          }
          for (size_t k = 0; k < rhs_free.size(); ++k) {
            ri[rhs_free[k]] = index[nb + lhs_free.size() + k];
          }
          C acc = C(0);
          ForEachIndex(contracting_shape,
                       [&](const std::vector<int64_t>& c, int64_t) {
                         for (size_t k = 0; k < c.size(); ++k) {
                           li[a.lhs_contracting[k]] = c[k];
                           ri[a.rhs_contracting[k]] = c[k];
                         }
                         const C prod = scalar::Binary<BinaryOp::kMul, C>(
                             ToCompute(pl[Offset(li, lhs_strides)]),
                             ToCompute(pr[Offset(ri, rhs_strides)]));
                         acc = scalar::Binary<BinaryOp::kAdd, C>(acc, prod);
                       });
          dst[i] = FromCompute<T>(acc);
        });
  });
  return out;
}

}  // namespace baton::compiler::interpreter
