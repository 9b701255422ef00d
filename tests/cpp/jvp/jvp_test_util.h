// Helpers for the forward-mode tests: build a program with the tracer, run
// its JVP on the reference interpreter, and compare the tangents with
// central finite differences of the original program (in float64, so a
// tight tolerance holds) or with exact expectations.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "baton/compiler/ir.h"
#include "baton/compiler/literal.h"
#include "baton/compiler/reference_interpreter.h"
#include "baton/compiler/tracer.h"
#include "baton/compiler/transforms/jvp.h"

namespace baton::compiler::jvp_test {

inline constexpr DType kF64 = DType::kFloat64;

inline ValueType F64(Shape shape) { return ValueType{std::move(shape), kF64}; }

// A program traced from `fn` over parameters of `types`.
inline Program Trace(const std::vector<ValueType>& types,
                     const std::function<std::vector<Tracer>(
                         TraceContext&, const std::vector<Tracer>&)>& fn) {
  TraceContext ctx;
  std::vector<Tracer> params;
  for (const ValueType& t : types) params.push_back(ctx.AddParameter(t));
  return ctx.Finish(fn(ctx, params));
}

inline Literal Doubles(Shape shape, const std::vector<double>& values,
                       DType dtype = kF64) {
  return Literal::FromDoubles(dtype, std::move(shape), values);
}

// Deterministic pseudo-random values in [lo, hi].
inline Literal Uniform(Shape shape, double lo, double hi, uint32_t seed,
                       DType dtype = kF64) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(shape.num_elements());
  for (double& x : v) x = dist(gen);
  return Doubles(std::move(shape), v, dtype);
}

// Jvp(program), which must succeed and verify.
inline Program JvpOf(const Program& program,
                     const std::vector<bool>& has_tangent) {
  Result<Program> jvp = transforms::Jvp(program, has_tangent);
  EXPECT_TRUE(jvp.ok()) << jvp.status().to_string();
  if (!jvp.ok()) return Program();
  Status verified = jvp->Verify();
  EXPECT_TRUE(verified.ok()) << verified.to_string();
  EXPECT_EQ(jvp->num_parameters(),
            program.num_parameters() +
                std::count(has_tangent.begin(), has_tangent.end(), true));
  EXPECT_EQ(jvp->outputs().size(), 2 * program.outputs().size());
  return std::move(jvp).value();
}

inline std::vector<Literal> Interp(const Program& program,
                                   const std::vector<Literal>& args) {
  Result<std::vector<Literal>> out = Interpret(program, args);
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  if (!out.ok()) return {};
  return std::move(out).value();
}

// The JVP's outputs: primal outputs, then one tangent per output.
struct JvpValues {
  std::vector<Literal> primals;
  std::vector<Literal> tangents;
};

inline JvpValues RunJvp(const Program& jvp, std::vector<Literal> args,
                        const std::vector<Literal>& tangents) {
  args.insert(args.end(), tangents.begin(), tangents.end());
  std::vector<Literal> out = Interp(jvp, args);
  JvpValues v;
  const size_t n = out.size() / 2;
  v.primals.assign(out.begin(), out.begin() + n);
  v.tangents.assign(out.begin() + n, out.end());
  return v;
}

inline void ExpectAllZero(const Literal& lit, const std::string& what) {
  for (int64_t i = 0; i < lit.num_elements(); ++i) {
    EXPECT_EQ(lit.GetAsDouble(i), 0.0) << what << " element " << i;
  }
}

inline void ExpectBitwiseEqual(const Literal& got, const Literal& want,
                               const std::string& what) {
  EXPECT_EQ(got.ToString(), want.ToString()) << what;
}

// Checks Jvp(program, has_tangent) at `args` against central differences
// (f(x + h t) - f(x - h t)) / 2h for random tangents t of the parameters
// with has_tangent; |jvp - fd| <= tol * max(1, |fd|). Primal outputs must
// equal the program's; integer and bool outputs must get zero tangents.
// Returns the tangents used, for further checks.
inline std::vector<Literal> ExpectMatchesFiniteDifferences(
    const Program& program, const std::vector<Literal>& args,
    const std::vector<bool>& has_tangent, double tol = 1e-6,
    uint32_t seed = 7) {
  const Program jvp = JvpOf(program, has_tangent);
  std::vector<Literal> tangents;
  for (size_t i = 0; i < args.size(); ++i) {
    if (has_tangent[i]) {
      tangents.push_back(
          Uniform(args[i].shape(), -1, 1, seed + 31 * i, args[i].dtype()));
    }
  }
  const JvpValues got = RunJvp(jvp, args, tangents);
  const std::vector<Literal> want = Interp(program, args);
  if (got.primals.size() != want.size()) {
    ADD_FAILURE() << "the JVP program has the wrong number of outputs";
    return tangents;
  }
  const double h = 1e-5;
  std::vector<Literal> plus = args, minus = args;
  for (size_t i = 0, k = 0; i < args.size(); ++i) {
    if (!has_tangent[i]) continue;
    const Literal& t = tangents[k++];
    std::vector<double> p(args[i].num_elements()), m(p.size());
    for (size_t e = 0; e < p.size(); ++e) {
      p[e] = args[i].GetAsDouble(e) + h * t.GetAsDouble(e);
      m[e] = args[i].GetAsDouble(e) - h * t.GetAsDouble(e);
    }
    plus[i] = Doubles(args[i].shape(), p, args[i].dtype());
    minus[i] = Doubles(args[i].shape(), m, args[i].dtype());
  }
  const std::vector<Literal> fp = Interp(program, plus);
  const std::vector<Literal> fm = Interp(program, minus);
  for (size_t o = 0; o < want.size(); ++o) {
    const std::string what = "output " + std::to_string(o);
    ExpectBitwiseEqual(got.primals[o], want[o], what + " (primal)");
    const Literal& t = got.tangents[o];
    EXPECT_EQ(t.dtype(), want[o].dtype()) << what;
    EXPECT_EQ(t.shape(), want[o].shape()) << what;
    if (!is_floating(want[o].dtype())) {
      ExpectAllZero(t, what + " (integer tangent)");
      continue;
    }
    for (int64_t e = 0; e < t.num_elements(); ++e) {
      const double fd = (fp[o].GetAsDouble(e) - fm[o].GetAsDouble(e)) / (2 * h);
      EXPECT_NEAR(t.GetAsDouble(e), fd, tol * std::max(1.0, std::abs(fd)))
          << what << " element " << e;
    }
  }
  return tangents;
}

// For a program linear in all its parameters: its tangents are the program
// applied to the tangents, bitwise (the rules apply the same ops).
inline void ExpectExactlyLinear(const Program& program,
                                const std::vector<Literal>& args) {
  const Program jvp = JvpOf(program, std::vector<bool>(args.size(), true));
  std::vector<Literal> tangents;
  for (size_t i = 0; i < args.size(); ++i) {
    tangents.push_back(
        Uniform(args[i].shape(), -1, 1, 100 + i, args[i].dtype()));
  }
  const JvpValues got = RunJvp(jvp, args, tangents);
  const std::vector<Literal> want = Interp(program, tangents);
  ASSERT_EQ(got.tangents.size(), want.size());
  for (size_t o = 0; o < want.size(); ++o) {
    ExpectBitwiseEqual(got.tangents[o], want[o],
                       "tangent of output " + std::to_string(o));
  }
}

// How many instructions of `program` satisfy `pred`.
inline int Count(const Program& program,
                 const std::function<bool(const Instruction&)>& pred) {
  int n = 0;
  for (const Instruction& inst : program.instructions()) n += pred(inst);
  return n;
}

}  // namespace baton::compiler::jvp_test
