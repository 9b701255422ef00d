// Reference interpreter: iota, convert and the elementwise ops. Every
// element goes through dtype_dispatch.h / scalar_math.h, the definitions the
// CPU kernels share, so results match them bit for bit.
#include "baton/compiler/interpreter_ops.h"
#include "baton/core/dtype_dispatch.h"
#include "baton/core/scalar_math.h"

namespace baton::compiler::interpreter {

Literal EvalIota(const Instruction& inst) {
  const auto& a = inst.attrs_as<IotaAttrs>();
  Literal out = NewResult(inst);
  VisitDType(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.mutable_data<T>();
    ForEachIndex(out.shape(),
                 [&](const std::vector<int64_t>& index, int64_t i) {
                   o[i] = ConvertElement<T, int64_t>(index[a.dimension]);
                 });
  });
  return out;
}

Literal EvalConvert(const Instruction& inst, const Operands& in) {
  const Literal& x = *in[0];
  Literal out = NewResult(inst);
  VisitDType(x.dtype(), [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    VisitDType(out.dtype(), [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      const From* src = x.data<From>();
      To* dst = out.mutable_data<To>();
      for (int64_t i = 0; i < x.num_elements(); ++i) {
        dst[i] = ConvertElement<To, From>(src[i]);
      }
    });
  });
  return out;
}

Literal EvalUnary(const Instruction& inst, const Operands& in) {
  const Literal& x = *in[0];
  Literal out = NewResult(inst);
  VisitDType(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    VisitUnaryOp(inst.attrs_as<UnaryAttrs>().op, [&](auto op) {
      const T* src = x.data<T>();
      if constexpr (kIsComplex<T>) {
        // abs, real and imag write the real type of the parts.
        using O = decltype(scalar::Unary<decltype(op)::value>(T{}));
        O* dst = out.mutable_data<O>();
        for (int64_t i = 0; i < x.num_elements(); ++i) {
          dst[i] = scalar::Unary<decltype(op)::value>(src[i]);
        }
      } else {
        T* dst = out.mutable_data<T>();
        for (int64_t i = 0; i < x.num_elements(); ++i) {
          dst[i] = FromCompute<T>(
              scalar::Unary<decltype(op)::value>(ToCompute(src[i])));
        }
      }
    });
  });
  return out;
}

Literal EvalBinary(const Instruction& inst, const Operands& in) {
  const Literal &a = *in[0], &b = *in[1];
  Literal out = NewResult(inst);
  if (inst.attrs_as<BinaryAttrs>().op == BinaryOp::kComplex) {
    auto make = [&](auto tag) {
      using R = typename decltype(tag)::type;
      std::complex<R>* dst = out.mutable_data<std::complex<R>>();
      for (int64_t i = 0; i < a.num_elements(); ++i) {
        dst[i] = {a.data<R>()[i], b.data<R>()[i]};
      }
    };
    if (a.dtype() == DType::kFloat64) {
      make(TypeTag<double>{});
    } else {
      make(TypeTag<float>{});
    }
    return out;
  }
  VisitDType(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    VisitBinaryOp(inst.attrs_as<BinaryAttrs>().op, [&](auto op) {
      const T* pa = a.data<T>();
      const T* pb = b.data<T>();
      T* dst = out.mutable_data<T>();
      for (int64_t i = 0; i < a.num_elements(); ++i) {
        dst[i] = FromCompute<T>(scalar::Binary<decltype(op)::value>(
            ToCompute(pa[i]), ToCompute(pb[i])));
      }
    });
  });
  return out;
}

Literal EvalCompare(const Instruction& inst, const Operands& in) {
  const Literal &a = *in[0], &b = *in[1];
  Literal out = NewResult(inst);
  VisitDType(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    VisitCompareOp(inst.attrs_as<CompareAttrs>().op, [&](auto op) {
      const T* pa = a.data<T>();
      const T* pb = b.data<T>();
      bool* dst = out.mutable_data<bool>();
      for (int64_t i = 0; i < a.num_elements(); ++i) {
        dst[i] = scalar::Compare<decltype(op)::value>(ToCompute(pa[i]),
                                                      ToCompute(pb[i]));
      }
    });
  });
  return out;
}

Literal EvalSelect(const Instruction& inst, const Operands& in) {
  const bool* pred = in[0]->data<bool>();
  Literal out = NewResult(inst);
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    CopyElement(pred[i] ? *in[1] : *in[2], i, out, i);
  }
  return out;
}

}  // namespace baton::compiler::interpreter
