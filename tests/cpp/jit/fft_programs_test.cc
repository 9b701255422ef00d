// Programs with the fft op, compiled by the jit for the CPU backend
// (pocketfft), agree with the reference interpreter's plain DFT; their
// JVPs and VJPs agree with finite differences and with the adjoint
// identity; and the CUDA emitter refuses the op saying so.
#include <gtest/gtest.h>

#include <complex>
#include <random>

#include "baton/backend/cuda/codegen/kernel_emitter.h"
#include "baton/compiler/fft_ops.h"
#include "baton/compiler/memory_schedule.h"
#include "baton/compiler/passes.h"
#include "baton/compiler/reference_interpreter.h"
#include "baton/compiler/step_plan.h"
#include "baton/compiler/transforms/jvp.h"
#include "baton/compiler/transforms/vjp.h"
#include "jit/jit_test_util.h"

namespace baton {
namespace {

using namespace baton::testing;
namespace c = compiler;
using c::FftType;

c::Literal RandomLiteral(Shape shape, DType dtype, uint64_t seed) {
  c::Literal l(shape, dtype);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> d(0, 1);
  for (int64_t i = 0; i < l.num_elements(); ++i) {
    if (dtype == DType::kComplex64) {
      l.Set<complex64>(
          i, {static_cast<float>(d(rng)), static_cast<float>(d(rng))});
    } else if (dtype == DType::kFloat64) {
      l.Set<double>(i, d(rng));
    } else {
      l.Set<float>(i, static_cast<float>(d(rng)));
    }
  }
  return l;
}

double MaxAbsDiff(const c::Literal& a, const c::Literal& b) {
  EXPECT_EQ(a.shape(), b.shape());
  EXPECT_EQ(a.dtype(), b.dtype());
  double m = 0;
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    if (a.dtype() == DType::kComplex64) {
      m = std::max<double>(m,
                           std::abs(a.Get<complex64>(i) - b.Get<complex64>(i)));
    } else if (a.dtype() == DType::kFloat64) {
      m = std::max(m, std::abs(a.Get<double>(i) - b.Get<double>(i)));
    } else {
      m = std::max<double>(m, std::abs(a.Get<float>(i) - b.Get<float>(i)));
    }
  }
  return m;
}

// A spectral smoothing filter and a 2-D transform pair:
// f(x: f32[3, 16], z: c64[4, 6, 5]) ->
//   irfft(rfft(x) * decay), ifft(fft2(z) * z), |fft(z)|^2 summed.
std::vector<Tracer> SpectralProgram(const std::vector<Tracer>& a) {
  const Tracer &x = a[0], &z = a[1];
  const Tracer spectrum = c::fft(x, FftType::kRfft, {16});  // c64[3, 9]
  const Tracer decay = c::astype(
      c::exp(c::astype(c::iota(*x.context(), DType::kFloat32, Shape{3, 9}, 1),
                       DType::kFloat32) *
             -0.3f),
      DType::kComplex64);
  const Tracer smooth = c::fft(spectrum * decay, FftType::kIrfft, {16});
  const Tracer z2 =
      c::fft(c::fft(z, FftType::kFft, {6, 5}) * z, FftType::kIfft, {6, 5});
  const Tracer power = c::sum(c::real(c::fft(z, FftType::kFft, {5}) *
                                      c::conj(c::fft(z, FftType::kFft, {5}))),
                              {2});
  const Tracer cube = c::fft(z, FftType::kFft, {4, 6, 5});
  return {smooth, z2, power, cube};
}

TEST(FftProgramsTest, CpuBackendMatchesTheReferenceInterpreter) {
  const std::vector<c::ValueType> types = {{Shape{3, 16}, DType::kFloat32},
                                           {Shape{4, 6, 5}, DType::kComplex64}};
  c::TraceContext ctx;
  std::vector<Tracer> params;
  for (const c::ValueType& t : types) params.push_back(ctx.AddParameter(t));
  const c::Program program = ctx.Finish(SpectralProgram(params));
  const std::vector<c::Literal> args = {
      RandomLiteral({3, 16}, DType::kFloat32, 1),
      RandomLiteral({4, 6, 5}, DType::kComplex64, 2)};
  auto reference = c::Interpret(program, args);
  ASSERT_TRUE(reference.ok()) << reference.status().to_string();

  Jitted f(
      [&program](TraceScope& s, const std::vector<Tracer>& a) {
        return Replay(program, s, a);
      },
      {.name = "fft_program"});
  std::vector<Arg> call;
  for (const c::Literal& l : args) call.emplace_back(ToArray(l));
  auto got = f.Call(std::move(call));
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  ASSERT_EQ(got.value().size(), reference.value().size());
  const double tolerance[] = {1e-5, 1e-3, 1e-3, 1e-4};
  for (size_t i = 0; i < got.value().size(); ++i) {
    SCOPED_TRACE("output " + std::to_string(i));
    EXPECT_LT(MaxAbsDiff(ToLiteral(got.value()[i]), reference.value()[i]),
              tolerance[i]);
  }
}

// sum(w * irfft(rfft(x) * g)) in float64, with its derivative checked
// against central differences through the JVP and the VJP: rfft's and
// irfft's transposes (the zero-padded fft, the doubled bins) are what the
// VJP exercises.
c::Program RealSpectralLoss(int64_t n) {
  c::TraceContext ctx;
  const Tracer x = ctx.AddParameter({Shape{2, n}, DType::kFloat64});
  const Tracer spectrum = c::fft(x, FftType::kRfft, {n});
  const int64_t half = n / 2 + 1;
  std::vector<complex128> g(static_cast<size_t>(half));
  for (int64_t k = 0; k < half; ++k) g[k] = {1.0 / (1 + k), 0.5 * k};
  const Tracer filt = c::constant(ctx, c::Literal::FromVector(g, Shape{half}));
  const Tracer y = c::fft(spectrum * c::broadcast_to(filt, spectrum.shape()),
                          FftType::kIrfft, {n});
  std::vector<double> w(static_cast<size_t>(2 * n));
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(1.0 + i);
  const Tracer wt = c::constant(ctx, c::Literal::FromVector(w, Shape{2, n}));
  return ctx.Finish({c::sum(y * wt, {0, 1}) +
                     c::sum(c::real(spectrum) * c::imag(spectrum), {0, 1})});
}

double Eval(const c::Program& p, const c::Literal& x) {
  return c::Interpret(p, {x}).value()[0].Get<double>(0);
}

TEST(FftProgramsTest, VjpAndJvpMatchFiniteDifferences) {
  for (int64_t n : {8, 7}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const c::Program loss = RealSpectralLoss(n);
    const c::Literal x = RandomLiteral({2, n}, DType::kFloat64, 5);
    auto vjp = c::transforms::Vjp(loss, {true});
    ASSERT_TRUE(vjp.ok()) << vjp.status().to_string();
    // forward: x -> (loss, residuals...); backward: (residuals..., ct) ->
    // gradient.
    const auto fwd = c::Interpret(vjp.value().forward, {x});
    ASSERT_TRUE(fwd.ok()) << fwd.status().to_string();
    std::vector<c::Literal> bwd_args(fwd.value().begin() + 1,
                                     fwd.value().end());
    bwd_args.push_back(c::Literal::Scalar<double>(1.0));
    const auto bwd = c::Interpret(vjp.value().backward, bwd_args);
    ASSERT_TRUE(bwd.ok()) << bwd.status().to_string();
    const c::Literal grad = bwd.value()[0];
    ASSERT_EQ(grad.shape(), x.shape());
    const double h = 1e-6;
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      c::Literal up = x, down = x;
      up.Set<double>(i, x.Get<double>(i) + h);
      down.Set<double>(i, x.Get<double>(i) - h);
      const double fd = (Eval(loss, up) - Eval(loss, down)) / (2 * h);
      EXPECT_NEAR(grad.Get<double>(i), fd, 1e-6 * (1 + std::abs(fd)))
          << "element " << i;
    }
    // JVP along a random direction equals <grad, direction>.
    auto jvp = c::transforms::Jvp(loss, {true});
    ASSERT_TRUE(jvp.ok()) << jvp.status().to_string();
    const c::Literal dir = RandomLiteral({2, n}, DType::kFloat64, 9);
    const auto jv = c::Interpret(jvp.value(), {x, dir});
    ASSERT_TRUE(jv.ok()) << jv.status().to_string();
    double expected = 0;
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      expected += grad.Get<double>(i) * dir.Get<double>(i);
    }
    EXPECT_NEAR(jv.value().back().Get<double>(0), expected,
                1e-9 * (1 + std::abs(expected)));
  }
}

TEST(FftProgramsTest, TheCudaEmitterRefusesTheFftSayingSo) {
  c::TraceContext ctx;
  const Tracer x = ctx.AddParameter({Shape{8}, DType::kFloat32});
  const c::Program planned = c::ScheduleForMemory(
      c::Optimize(ctx.Finish({c::real(c::fft(x, FftType::kRfft, {8}))})), {});
  const auto emitted = cuda::codegen::EmitProgram(
      planned, c::PlanSteps(planned), cuda::codegen::EmitOptions{}, "f");
  ASSERT_FALSE(emitted.ok());
  EXPECT_EQ(emitted.status().code(), ErrorCode::kUnimplemented);
  EXPECT_NE(emitted.status().message().find("does not run on CUDA yet"),
            std::string::npos)
      << emitted.status().to_string();
}

}  // namespace
}  // namespace baton
