// Helpers for the reverse-mode tests: build a program with the tracer, run
// transforms::Vjp, run forward then backward with the reference
// interpreter, and compare with central finite differences (float64).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "baton/compiler/inline_program.h"
#include "baton/compiler/ir.h"
#include "baton/compiler/literal.h"
#include "baton/compiler/reference_interpreter.h"
#include "baton/compiler/tracer.h"
#include "baton/compiler/transforms/vjp.h"

namespace baton::compiler::vjp_test {

using transforms::Vjp;
using transforms::VjpPrograms;

using Fn = std::function<std::vector<Tracer>(TraceContext&,
                                             const std::vector<Tracer>&)>;

inline ValueType F64(Shape shape) {
  return ValueType{std::move(shape), DType::kFloat64};
}
inline ValueType I32(Shape shape) {
  return ValueType{std::move(shape), DType::kInt32};
}

inline Program Build(const std::vector<ValueType>& params, const Fn& fn) {
  TraceContext ctx;
  std::vector<Tracer> ps;
  for (const ValueType& t : params) ps.push_back(ctx.AddParameter(t));
  return ctx.Finish(fn(ctx, ps));
}

inline std::shared_ptr<const Program> Body(const std::vector<ValueType>& params,
                                           const Fn& fn) {
  return std::make_shared<const Program>(Build(params, fn));
}

// Emits a call group (one call per body output); identity calls give one.
inline std::vector<Tracer> EmitCall(TraceContext& ctx, CallAttrs attrs,
                                    const std::vector<Tracer>& operands) {
  const int n = attrs.body ? static_cast<int>(attrs.body->outputs().size()) : 1;
  std::vector<Tracer> outs;
  for (int i = 0; i < n; ++i) {
    attrs.output_index = i;
    outs.push_back(ctx.Emit(attrs, operands));
  }
  return outs;
}

inline Literal Random(const ValueType& t, uint32_t seed, double lo = -1.0,
                      double hi = 1.0) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(t.num_elements());
  for (double& x : v) x = dist(gen);
  return Literal::FromDoubles(t.dtype, t.shape, v);
}

inline Literal Values(DType dtype, Shape shape, const std::vector<double>& v) {
  return Literal::FromDoubles(dtype, std::move(shape), v);
}

inline std::vector<Literal> MustInterpret(const Program& p,
                                          const std::vector<Literal>& args) {
  Result<std::vector<Literal>> r = Interpret(p, args);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  if (!r.ok()) return {};
  return std::move(r).value();
}

inline VjpPrograms MustVjp(const Program& p, const std::vector<bool>& wrt) {
  Result<VjpPrograms> r = Vjp(p, wrt);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  if (!r.ok()) return {};
  EXPECT_TRUE(r->forward.Verify().ok()) << r->forward.Verify().to_string();
  EXPECT_TRUE(r->backward.Verify().ok()) << r->backward.Verify().to_string();
  EXPECT_EQ(r->forward.outputs().size(),
            p.outputs().size() + r->residuals.size());
  EXPECT_EQ(r->backward.num_parameters(),
            static_cast<int>(r->residuals.size() + p.outputs().size()));
  for (size_t i = 0; i < r->residuals.size(); ++i) {
    EXPECT_EQ(r->residuals[i].type,
              r->forward.type(r->forward.outputs()[p.outputs().size() + i]));
    EXPECT_EQ(r->residuals[i].type,
              r->backward.parameter_type(static_cast<int>(i)));
  }
  return std::move(r).value();
}

// Cotangents for the outputs: random for floats, zeros for the rest.
inline std::vector<Literal> OutputCotangents(const Program& p, uint32_t seed) {
  std::vector<Literal> cts;
  for (const ValueType& t : p.output_types()) {
    cts.push_back(is_floating(t.dtype) ? Random(t, seed++)
                                       : Literal(t.shape, t.dtype));
  }
  return cts;
}

// Runs forward then backward; checks the primal outputs against the
// program's own. Returns the cotangents of the wrt parameters.
inline std::vector<Literal> RunVjp(const Program& p, const VjpPrograms& v,
                                   const std::vector<Literal>& args,
                                   const std::vector<Literal>& cts) {
  const std::vector<Literal> expected = MustInterpret(p, args);
  const std::vector<Literal> fwd = MustInterpret(v.forward, args);
  if (fwd.size() != p.outputs().size() + v.residuals.size()) {
    ADD_FAILURE() << "forward returned " << fwd.size() << " values";
    return {};
  }
  for (size_t k = 0; k < expected.size(); ++k) {
    EXPECT_TRUE(expected[k] == fwd[k])
        << "primal output " << k << ": " << fwd[k].ToString() << " vs "
        << expected[k].ToString();
  }
  std::vector<Literal> bargs(fwd.begin() + static_cast<long>(expected.size()),
                             fwd.end());
  bargs.insert(bargs.end(), cts.begin(), cts.end());
  return MustInterpret(v.backward, bargs);
}

// <cts, f(args)> over the floating-point outputs.
inline double Pairing(const Program& p, const std::vector<Literal>& args,
                      const std::vector<Literal>& cts) {
  const std::vector<Literal> outs = MustInterpret(p, args);
  double s = 0;
  for (size_t k = 0; k < outs.size(); ++k) {
    if (!is_floating(outs[k].dtype())) continue;
    for (int64_t e = 0; e < outs[k].num_elements(); ++e) {
      s += outs[k].GetAsDouble(e) * cts[k].GetAsDouble(e);
    }
  }
  return s;
}

// Vjp's gradients against central differences of <ct, f(x)>; float64.
inline void ExpectGradients(const Program& p, const std::vector<bool>& wrt,
                            const std::vector<Literal>& args, double tol = 1e-6,
                            uint32_t seed = 7) {
  const VjpPrograms v = MustVjp(p, wrt);
  if (::testing::Test::HasFailure()) return;
  const std::vector<Literal> cts = OutputCotangents(p, seed);
  const std::vector<Literal> grads = RunVjp(p, v, args, cts);
  size_t g = 0;
  const double h = 1e-5;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!wrt[i]) continue;
    ASSERT_LT(g, grads.size());
    const Literal& grad = grads[g++];
    ASSERT_EQ(grad.shape(), args[i].shape());
    ASSERT_EQ(grad.dtype(), args[i].dtype());
    for (int64_t e = 0; e < args[i].num_elements(); ++e) {
      std::vector<Literal> plus = args, minus = args;
      plus[i].Set<double>(e, args[i].Get<double>(e) + h);
      minus[i].Set<double>(e, args[i].Get<double>(e) - h);
      const double num =
          (Pairing(p, plus, cts) - Pairing(p, minus, cts)) / (2 * h);
      const double got = grad.GetAsDouble(e);
      EXPECT_NEAR(got, num, tol * std::max(1.0, std::abs(num)))
          << "parameter " << i << " element " << e;
    }
  }
  EXPECT_EQ(g, grads.size());
}

// Forward and backward inlined into one program:
// (params..., output cotangents...) -> (outputs..., wrt cotangents...).
inline Program JointProgram(const Program& p, const VjpPrograms& v) {
  Program joint;
  std::vector<ValueId> params, cts;
  for (const ValueType& t : p.parameter_types()) {
    params.push_back(joint.AddParameter(t).value());
  }
  for (const ValueType& t : p.output_types()) {
    cts.push_back(joint.AddParameter(t).value());
  }
  std::vector<ValueId> fwd = InlineInto(joint, v.forward, params).value();
  std::vector<ValueId> outs(
      fwd.begin(), fwd.begin() + static_cast<long>(p.outputs().size()));
  std::vector<ValueId> bargs(
      fwd.begin() + static_cast<long>(p.outputs().size()), fwd.end());
  bargs.insert(bargs.end(), cts.begin(), cts.end());
  std::vector<ValueId> grads = InlineInto(joint, v.backward, bargs).value();
  outs.insert(outs.end(), grads.begin(), grads.end());
  EXPECT_TRUE(joint.SetOutputs(outs).ok());
  return joint;
}

inline int CountOps(const Program& p,
                    const std::function<bool(const Instruction&)>& pred) {
  int n = 0;
  for (const Instruction& inst : p.instructions()) n += pred(inst) ? 1 : 0;
  return n;
}

inline bool IsUnary(const Instruction& inst, UnaryOp op) {
  const auto* u = inst.attrs_if<UnaryAttrs>();
  return u && u->op == op;
}

}  // namespace baton::compiler::vjp_test
