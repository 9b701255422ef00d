// Programs on complex numbers, compiled by the jit for the CPU backend
// (fused elementwise steps, fused reductions, the complex GEMM, in-place
// steps), give exactly what the reference interpreter gives; and the ops
// without a complex form are refused when the program is built, naming the
// reason.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <random>

#include "baton/backend/cuda/codegen/kernel_emitter.h"
#include "baton/compiler/memory_schedule.h"
#include "baton/compiler/passes.h"
#include "baton/compiler/reference_interpreter.h"
#include "baton/compiler/step_plan.h"
#include "jit/jit_test_util.h"

namespace baton {
namespace {

using namespace baton::testing;
namespace c = compiler;

c::Literal RandomComplex64(Shape shape, uint64_t seed) {
  c::Literal l(shape, DType::kComplex64);
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> d(0, 1.5f);
  for (int64_t i = 0; i < l.num_elements(); ++i) {
    l.Set<complex64>(i, {d(rng), d(rng)});
  }
  return l;
}

c::Literal RandomFloat32(Shape shape, uint64_t seed) {
  c::Literal l(shape, DType::kFloat32);
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> d(0, 1.5f);
  for (int64_t i = 0; i < l.num_elements(); ++i) l.Set<float>(i, d(rng));
  return l;
}

// f(z: c64[6,5], w: c64[5,4], x: f32[6,5]) -> 6 outputs mixing every
// complex op the CPU backend has.
std::vector<Tracer> ComplexProgram(const std::vector<Tracer>& a) {
  const Tracer &z = a[0], &w = a[1], &x = a[2];
  const Tracer e = c::exp(z) * c::conj(z);                       // c64
  const Tracer mixed = c::real(e) + c::abs(z) * x - c::imag(z);  // f32
  const Tracer built = c::complex(x, mixed) / (z + 1);           // c64
  const Tracer prod = c::matmul(z, w);                           // c64 GEMM
  const Tracer rows = c::sum(built * built, {1});                // fused reduce
  const Tracer picked = c::where(c::ne(z, built), c::sqrt(z), c::tanh(z));
  return {mixed, built, prod, rows, picked, c::astype(z, DType::kFloat32)};
}

TEST(ComplexProgramsTest, CpuBackendMatchesTheReferenceInterpreter) {
  const std::vector<c::ValueType> types = {
      {Shape{6, 5}, DType::kComplex64},
      {Shape{5, 4}, DType::kComplex64},
      {Shape{6, 5}, DType::kFloat32}};
  c::TraceContext ctx;
  std::vector<Tracer> params;
  for (const c::ValueType& t : types) params.push_back(ctx.AddParameter(t));
  const c::Program program = ctx.Finish(ComplexProgram(params));
  const std::vector<c::Literal> args = {RandomComplex64({6, 5}, 1),
                                        RandomComplex64({5, 4}, 2),
                                        RandomFloat32({6, 5}, 3)};
  auto reference = c::Interpret(program, args);
  ASSERT_TRUE(reference.ok()) << reference.status().to_string();

  Jitted f([&program](TraceScope& s, const std::vector<Tracer>& a) {
    return Replay(program, s, a);
  }, {.name = "complex_program"});
  std::vector<Arg> call;
  for (const c::Literal& l : args) call.emplace_back(ToArray(l));
  auto got = f.Call(std::move(call));
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  ASSERT_EQ(got.value().size(), reference.value().size());
  for (size_t i = 0; i < got.value().size(); ++i) {
    SCOPED_TRACE("output " + std::to_string(i));
    const c::Literal cpu = ToLiteral(got.value()[i]);
    const c::Literal& ref = reference.value()[i];
    ASSERT_EQ(cpu.dtype(), ref.dtype());
    if (i == 2) {
      // The GEMM is the BLAS's (its own summation order): close, not equal.
      for (int64_t k = 0; k < cpu.num_elements(); ++k) {
        const complex64 g = cpu.Get<complex64>(k), r = ref.Get<complex64>(k);
        EXPECT_NEAR(g.real(), r.real(), 1e-4f * (1 + std::abs(r)));
        EXPECT_NEAR(g.imag(), r.imag(), 1e-4f * (1 + std::abs(r)));
      }
    } else {
      EXPECT_TRUE(cpu == ref) << cpu.ToString() << "\nvs\n" << ref.ToString();
    }
  }
  // Spot values against std::complex.
  const complex64 z0 = args[0].Get<complex64>(0);
  EXPECT_EQ(reference.value()[5].Get<float>(0), z0.real());
}

TEST(ComplexProgramsTest, TheCudaEmitterRefusesComplexStepsSayingSo) {
  c::TraceContext ctx;
  const Tracer z = ctx.AddParameter({Shape{8}, DType::kComplex64});
  const c::Program planned =
      c::ScheduleForMemory(c::Optimize(ctx.Finish({c::exp(z) * z})), {});
  const auto emitted = cuda::codegen::EmitProgram(
      planned, c::PlanSteps(planned), cuda::codegen::EmitOptions{}, "f");
  ASSERT_FALSE(emitted.ok());
  EXPECT_EQ(emitted.status().code(), ErrorCode::kUnimplemented);
  EXPECT_NE(emitted.status().message().find("complex numbers"),
            std::string::npos)
      << emitted.status().to_string();
}

TEST(ComplexProgramsTest, OpsWithoutAComplexFormAreRefused) {
  c::TraceContext ctx;
  const Tracer z = ctx.AddParameter({Shape{3}, DType::kComplex64});
  auto refused = [&](const std::function<void()>& build,
                     const std::string& why) {
    try {
      build();
      ADD_FAILURE() << "not refused: " << why;
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos)
          << e.what();
    }
  };
  refused([&] { c::floor(z); }, "not defined for complex operands");
  refused([&] { c::atan2(z, z); }, "not defined for complex operands");
  refused([&] { c::complex(z, z); }, "takes real parts");
  // The compare op itself has no order; the tracer's lt/gt are
  // lexicographic (below), built from the parts.
  refused([&] { ctx.Emit(c::CompareAttrs{CompareOp::kLt}, {z, z}); },
          "complex numbers have no order");
}

TEST(ComplexProgramsTest, OrderIsLexicographicAsInJax) {
  // (1+2j, 1+1j, 0+5j, nan) against (1+1j, 1+2j, 0+5j, 0): real parts
  // first, imaginary parts on a tie.
  c::TraceContext ctx;
  const Tracer a = ctx.AddParameter({Shape{4}, DType::kComplex64});
  const Tracer b = ctx.AddParameter({Shape{4}, DType::kComplex64});
  const c::Program p = ctx.Finish({c::lt(a, b), c::ge(a, b), c::maximum(a, b),
                                   c::minimum(a, b), c::max(a, {0})});
  c::Literal la(Shape{4}, DType::kComplex64), lb(Shape{4}, DType::kComplex64);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const complex64 av[] = {{1, 2}, {1, 1}, {0, 5}, {nan, 0}};
  const complex64 bv[] = {{1, 1}, {1, 2}, {0, 5}, {0, 0}};
  for (int i = 0; i < 4; ++i) {
    la.Set<complex64>(i, av[i]);
    lb.Set<complex64>(i, bv[i]);
  }
  auto r = c::Interpret(p, {la, lb});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const auto& out = r.value();
  const bool lt[] = {false, true, false, false}, ge[] = {true, false, true, false};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(out[0].Get<bool>(i), lt[i]) << i;
    EXPECT_EQ(out[1].Get<bool>(i), ge[i]) << i;
  }
  EXPECT_EQ(out[2].Get<complex64>(0), complex64(1, 2));
  EXPECT_EQ(out[2].Get<complex64>(1), complex64(1, 2));
  EXPECT_EQ(out[3].Get<complex64>(0), complex64(1, 1));
  EXPECT_TRUE(std::isnan(out[2].Get<complex64>(3).real()));  // NaN wins
  EXPECT_TRUE(std::isnan(out[4].Get<complex64>(0).real()));
  // The CPU backend agrees.
  Jitted f([&p](TraceScope& s, const std::vector<Tracer>& x) {
    return Replay(p, s, x);
  }, {.name = "order"});
  auto got = f.Call({ToArray(la), ToArray(lb)});
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  for (size_t i = 0; i < out.size(); ++i) {
    const c::Literal cpu = ToLiteral(got.value()[i]);
    if (i >= 2) continue;  // NaN payloads aside, checked below
    EXPECT_TRUE(cpu == out[i]) << i;
  }
  EXPECT_EQ(ToLiteral(got.value()[2]).Get<complex64>(0), complex64(1, 2));
}

}  // namespace
}  // namespace baton
