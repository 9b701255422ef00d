// The generated reduction and dot_general kernels (backend/cuda/codegen/
// emit_reduce.cc, emit_dot.cc) against the reference interpreter: each
// function is planned as the CPU backend plans it, emitted, compiled for the
// host and run there (codegen_harness.h). Needs no GPU.
//
// Integer and bool results, float max/min, and float sums whose every
// partial sum is exact (small integers) must be bitwise the reference's;
// so must float16/bfloat16/float64 sums over short rows, which the emitted
// kernels add in the reference's order and accumulator (one work item per
// output, in row-major order). Other float sums, products and dots add in
// another order (parts per output, and float32 sums accumulate in double as
// the CPU backend does) and are compared within a tolerance.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "baton/backend/cuda/codegen/kernel_emitter.h"
#include "baton/compiler/passes.h"
#include "baton/compiler/step_plan.h"
#include "codegen/codegen_harness.h"

namespace baton {
namespace {

using compiler::DotGeneralAttrs;
using compiler::Literal;
using namespace baton::testing;

constexpr DType kReduceDTypes[] = {
    DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
    DType::kInt32,   DType::kInt64,   DType::kInt8,    DType::kUInt8,
    DType::kUInt32,  DType::kBool};

// Values of `shape` that neither overflow a product of a few hundred
// (floats near 1, integers in [-3, 3]) nor repeat with a short period.
Literal Data(DType dtype, Shape shape, double scale = 1.0) {
  std::vector<double> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) {
    const double s = std::sin(0.37 * static_cast<double>(i) + 0.1);
    if (dtype == DType::kBool) {
      v[i] = s > 0.3;
    } else if (is_floating(dtype)) {
      v[i] = 1.0 + 0.05 * s * scale;
    } else {
      v[i] = std::round(3.0 * s);
    }
  }
  return Literal::FromDoubles(dtype, std::move(shape), v);
}

// A ramp in about [-3, 3] (floats) for sums and dots.
Literal Ramp(DType dtype, Shape shape) {
  std::vector<double> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) {
    const double s = std::sin(0.37 * static_cast<double>(i)) * 3.0;
    v[i] = is_floating(dtype) ? s + 0.001 * static_cast<double>(i % 97)
                              : std::round(s * 5.0);
  }
  return Literal::FromDoubles(dtype, std::move(shape), v);
}

double SumTolerance(DType dtype) {
  return dtype == DType::kFloat16 || dtype == DType::kBFloat16 ? 2e-2 : 1e-5;
}

// Sum and product (compared within a tolerance for floats), max and min
// (always bitwise) of `x`, over each of `axes`: one function for each
// pair, so each compiles once.
void ExpectReductionsMatch(CodegenBatch& b, const Literal& x,
                           const std::vector<std::vector<int64_t>>& axes) {
  const TraceFn sum_prod = [=](TraceScope&, const std::vector<Tracer>& a) {
    std::vector<Tracer> out;
    for (const std::vector<int64_t>& r : axes) {
      out.push_back(sum(a[0], r));
      out.push_back(prod(a[0], r));
    }
    return out;
  };
  const TraceFn max_min = [=](TraceScope&, const std::vector<Tracer>& a) {
    std::vector<Tracer> out;
    for (const std::vector<int64_t>& r : axes) {
      out.push_back(max(a[0], r));
      out.push_back(min(a[0], r));
    }
    return out;
  };
  const std::string shape = x.shape().to_string();
  if (is_floating(x.dtype())) {
    // Products of a few hundred values near 1 round a few hundred times.
    b.ExpectClose("sum_prod " + shape, sum_prod, {x},
                  std::max(1e-4, SumTolerance(x.dtype())));
  } else {
    b.ExpectSameBits("sum_prod " + shape, sum_prod, {x});
  }
  b.ExpectSameBits("max_min " + shape, max_min, {x});
}

TEST(EmittedReduceTest, EveryOpDTypeAndAxes) {
  CodegenBatch b;
  // Leading, middle, trailing, several, all and no axes.
  const std::vector<std::vector<int64_t>> axes = {
      {0}, {1}, {2}, {0, 2}, {1, 2}, {0, 1}, {0, 1, 2}, {}};
  for (DType dtype : kReduceDTypes) {
    b.SetContext(std::string(dtype_name(dtype)));
    ExpectReductionsMatch(b, Data(dtype, Shape{5, 6, 300}), axes);
  }
  b.Run();
}

TEST(EmittedReduceTest, LongAndShortRowsAndColumns) {
  CodegenBatch b;
  for (DType dtype : {DType::kFloat32, DType::kInt32, DType::kFloat16}) {
    b.SetContext(std::string(dtype_name(dtype)));
    ExpectReductionsMatch(b, Data(dtype, Shape{100000}), {{0}});
    ExpectReductionsMatch(b, Data(dtype, Shape{1000, 3}), {{1}, {0}});
    ExpectReductionsMatch(b, Data(dtype, Shape{20000, 3}), {{0}, {1}});
    ExpectReductionsMatch(b, Data(dtype, Shape{2, 1, 40000}), {{0, 2}, {2}});
  }
  // Long float sums of a ramp (where cancellation and rounding matter).
  const TraceFn fn = [](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{sum(a[0]), sum(a[0], {0})};
  };
  b.ExpectClose("sums", fn, {Ramp(DType::kFloat32, Shape{100000, 2})}, 1e-5);
  b.Run();
}

TEST(EmittedReduceTest, EmptyArraysGiveTheIdentity) {
  CodegenBatch b;
  const TraceFn fn = [](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{sum(a[0], {0}), prod(a[0], {0}), max(a[0], {0}),
                               min(a[0]),      sum(a[0], {1}),  max(a[0], {1})};
  };
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kInt32,
                      DType::kUInt8, DType::kFloat64}) {
    b.SetContext(std::string(dtype_name(dtype)));
    b.ExpectSameBits("empty", fn, {Literal(Shape{0, 5}, dtype)});
  }
  b.Run();
}

TEST(EmittedReduceTest, MaxAndMinPropagateNaN) {
  CodegenBatch b;
  std::vector<double> v(4 * 300, 0.5);
  v[17] = std::nan("");
  v[300 + 299] = -std::nan("");
  v[900] = -INFINITY;
  const TraceFn fn = [](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{max(a[0], {1}), min(a[0], {1}), max(a[0]),
                               min(a[0], {0})};
  };
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kFloat64}) {
    b.SetContext(std::string(dtype_name(dtype)));
    b.ExpectSameBits("nan", fn,
                     {Literal::FromDoubles(dtype, Shape{4, 300}, v)});
  }
  b.Run();
}

TEST(EmittedReduceTest, FusedReductions) {
  CodegenBatch b;
  const TraceFn fn = [](TraceScope&, const std::vector<Tracer>& a) {
    const Tracer& x = a[0];  // [rows, n]
    const double n = static_cast<double>(x.shape()[1]);
    Tracer mean = sum(x, {1}) / n;
    Tracer centered = x - broadcast_in_dim(mean, x.shape(), {0});
    return std::vector<Tracer>{sum(x * x), sum(x * x, {-1}) / n,  // mean(x*x)
                               sum(centered * centered, {1}),  // variance * n
                               max(abs(x) * 2 + 1, {1})};
  };
  for (DType dtype :
       {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64}) {
    b.SetContext(std::string(dtype_name(dtype)));
    b.ExpectClose("fused", fn, {Ramp(dtype, Shape{7, 1000})},
                  SumTolerance(dtype));
    b.ExpectClose("fused", fn, {Ramp(dtype, Shape{2, 50000})},
                  SumTolerance(dtype));
  }
  const TraceFn ints = [](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{sum(a[0] * a[0]), sum(a[0] * 3 - 1, {1}),
                               max(abs(a[0]) - 2, {1})};
  };
  b.ExpectSameBits("ints", ints, {Ramp(DType::kInt32, Shape{9, 3000})});
  b.Run();
}

// Sums whose partial sums are all small integers are exact in any order:
// the two-phase kernels (parts per output, then the parts in order) must
// give the reference's bits.
TEST(EmittedReduceTest, ExactSumsAreBitwiseInAnyOrder) {
  CodegenBatch b;
  const TraceFn fn = [](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{sum(a[0]), sum(a[0], {0}), sum(a[0], {1}),
                               sum(a[0] * 2 - 1, {1})};
  };
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16}) {
    b.SetContext(std::string(dtype_name(dtype)));
    // Data() of an integer dtype: integers in [-3, 3]; |sums| < 2048.
    const Literal ints = Data(DType::kInt32, Shape{40, 500});
    std::vector<double> v(static_cast<size_t>(ints.num_elements()));
    for (size_t i = 0; i < v.size(); ++i) {
      v[i] = ints.GetAsDouble(static_cast<int64_t>(i));
    }
    b.ExpectSameBits("exact_sums", fn,
                     {Literal::FromDoubles(dtype, Shape{40, 500}, v)});
  }
  b.Run();
}

// A short row (up to 64 elements) is reduced by one work item in row-major
// order, in the reference's accumulator for these types: the bits match.
TEST(EmittedReduceTest, ShortRowSumsFollowTheReferenceOrder) {
  CodegenBatch b;
  const TraceFn fn = [](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{sum(a[0], {1}), sum(a[0] * a[0], {1}),
                               prod(a[0], {1})};
  };
  for (DType dtype : {DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    b.SetContext(std::string(dtype_name(dtype)));
    b.ExpectSameBits("short_rows", fn, {Ramp(dtype, Shape{33, 61})});
  }
  b.Run();
}

DotGeneralAttrs Dims(std::vector<int64_t> lb, std::vector<int64_t> rb,
                     std::vector<int64_t> lc, std::vector<int64_t> rc) {
  return DotGeneralAttrs{std::move(lb), std::move(rb), std::move(lc),
                         std::move(rc)};
}

double DotTolerance(DType dtype) {
  if (dtype == DType::kFloat16 || dtype == DType::kBFloat16) return 2e-2;
  return is_floating(dtype) ? 1e-4 : 0.0;
}

void ExpectDotsMatch(CodegenBatch& b, DType dtype) {
  const TraceFn fn = [](TraceScope&, const std::vector<Tracer>& a) {
    const Tracer &m = a[0], &n = a[1], &v = a[2];     // [7,9], [9,5], [9]
    const Tracer &bm = a[3], &bn = a[4], &bx = a[5];  // [3,7,9] [3,9,5] [7,3,9]
    return std::vector<Tracer>{
        matmul(m, n),                                   // [7, 5]
        matmul(bm, bn),                                 // batched
        dot_general(n, n, Dims({}, {}, {0}, {0})),      // contracting dim 0
        dot_general(m, m, Dims({}, {}, {1}, {1})),      // m m^T
        dot_general(bx, bn, Dims({1}, {0}, {2}, {1})),  // batch not first
        dot_general(v, n, Dims({}, {}, {0}, {0})),      // vector-matrix
        dot_general(m, v, Dims({}, {}, {1}, {0})),      // matrix-vector
        dot_general(v, v, Dims({}, {}, {0}, {0})),      // inner product
        matmul(v, n)};                                  // numpy's 1-D matmul
  };
  const std::vector<Literal> args = {
      Ramp(dtype, Shape{7, 9}),    Ramp(dtype, Shape{9, 5}),
      Ramp(dtype, Shape{9}),       Ramp(dtype, Shape{3, 7, 9}),
      Ramp(dtype, Shape{3, 9, 5}), Ramp(dtype, Shape{7, 3, 9})};
  if (is_floating(dtype)) {
    b.ExpectClose("dots", fn, args, DotTolerance(dtype));
  } else {
    b.ExpectSameBits("dots", fn, args);
  }
}

TEST(EmittedDotTest, MatmulsBatchesAndTransposedOperands) {
  CodegenBatch b;
  for (DType dtype :
       {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
        DType::kInt32, DType::kInt8, DType::kUInt8, DType::kInt64}) {
    b.SetContext(std::string(dtype_name(dtype)));
    ExpectDotsMatch(b, dtype);
  }
  b.Run();
}

// The same dots as GEMM actions (EmitOptions::library_gemm): each operand
// read as stored or transposed by the library -- the host's BLAS here
// (host_gemm.h), cuBLAS on a GPU -- half types widened to float32 and
// rounded once; integer dots stay kernels.
TEST(EmittedDotTest, GemmActionsMatchTheReference) {
  CodegenBatch b;
  b.SetLibraryGemm(true);
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                      DType::kBFloat16, DType::kInt32}) {
    b.SetContext(std::string(dtype_name(dtype)));
    ExpectDotsMatch(b, dtype);
  }
  b.Run();
}

// Integer dots wrap in their own type, as the CPU's loops do (shape
// inference refuses bool dots, so there are none to test).
TEST(EmittedDotTest, IntegerDotsWrap) {
  CodegenBatch b;
  const TraceFn fn = [](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{dot_general(a[0], a[1], Dims({}, {}, {1}, {0})),
                               dot_general(a[0], a[0], Dims({}, {}, {0}, {0}))};
  };
  for (DType dtype : {DType::kInt32, DType::kInt8, DType::kUInt32,
                      DType::kInt16, DType::kInt64}) {
    b.SetContext(std::string(dtype_name(dtype)));
    std::vector<double> x(36), y(24);
    for (size_t i = 0; i < x.size(); ++i) x[i] = 99991.0 * ((i * 7) % 11) - 4e5;
    for (size_t i = 0; i < y.size(); ++i) y[i] = 77777.0 * ((i * 5) % 13) + 3;
    // FromDoubles saturates into the narrow types: products still wrap.
    b.ExpectSameBits("int_dot", fn,
                     {Literal::FromDoubles(dtype, Shape{6, 6}, x),
                      Literal::FromDoubles(dtype, Shape{6, 4}, y)});
  }
  b.Run();
}

TEST(EmittedDotTest, LongAndEmptyContractions) {
  CodegenBatch b;
  const TraceFn fn = [](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{matmul(a[0], a[1]), matmul(a[2], a[3])};
  };
  b.ExpectClose("long_k", fn,
                {Ramp(DType::kFloat32, Shape{2, 5000}),
                 Ramp(DType::kFloat32, Shape{5000, 3}),
                 Literal(Shape{4, 0}, DType::kFloat32),
                 Literal(Shape{0, 3}, DType::kFloat32)},
                1e-4);
  b.Run();
}

// With a GEMM library (as on a GPU with cuBLAS), float dots are GEMM
// actions reading each operand as stored ([batch, m, k] / [batch, k, n]) or
// transposed ([batch, k, m] / [batch, n, k]: trans_a / trans_b), into
// scratch by a transpose kernel only when it is neither; integer dots stay
// kernels.
TEST(EmittedDotTest, GemmActionsAndTransposes) {
  struct Case {
    Shape lhs, rhs;
    DotGeneralAttrs dims;
    DType dtype;
    int kernels;  // transposes (or the integer kernel)
    int gemms;
    bool trans_a, trans_b;
  };
  const Case cases[] = {
      {Shape{7, 9}, Shape{9, 5}, Dims({}, {}, {1}, {0}), DType::kFloat32, 0, 1,
       false, false},
      // x^T y and x y^T: the gradients of a matmul.
      {Shape{9, 7}, Shape{9, 5}, Dims({}, {}, {0}, {0}), DType::kFloat32, 0, 1,
       true, false},
      {Shape{7, 9}, Shape{5, 9}, Dims({}, {}, {1}, {1}), DType::kFloat16, 0, 1,
       false, true},
      {Shape{9, 7}, Shape{5, 9}, Dims({}, {}, {0}, {1}), DType::kFloat32, 0, 1,
       true, true},
      {Shape{3, 7, 9}, Shape{3, 9, 5}, Dims({0}, {0}, {2}, {1}),
       DType::kBFloat16, 0, 1, false, false},
      // The batch dimension inside: neither order, one transpose.
      {Shape{7, 3, 9}, Shape{3, 9, 5}, Dims({1}, {0}, {2}, {1}),
       DType::kFloat64, 1, 1, false, false},
      {Shape{7, 9}, Shape{9, 5}, Dims({}, {}, {1}, {0}), DType::kInt32, 1, 0,
       false, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.lhs.to_string() + " x " + c.rhs.to_string());
    compiler::TraceContext ctx;
    Tracer a = ctx.AddParameter({c.lhs, c.dtype});
    Tracer b = ctx.AddParameter({c.rhs, c.dtype});
    const compiler::Program p =
        compiler::Optimize(ctx.Finish({dot_general(a, b, c.dims)}));
    const compiler::StepPlan plan = compiler::PlanSteps(p);
    auto emitted = cuda::codegen::EmitProgram(p, plan, {.library_gemm = true},
                                              "gemm_plan");
    ASSERT_TRUE(emitted.ok()) << emitted.status().to_string();
    int kernels = 0, gemms = 0;
    for (const cuda::codegen::Action& act : emitted->actions) {
      kernels += act.kind == cuda::codegen::Action::Kind::kKernel;
      if (act.kind != cuda::codegen::Action::Kind::kGemm) continue;
      ++gemms;
      EXPECT_EQ(act.dtype, c.dtype);
      EXPECT_EQ(act.batch * act.m * act.n,
                p.type(p.outputs()[0]).num_elements());
      EXPECT_EQ(act.k, 9);
      EXPECT_EQ(act.trans_a, c.trans_a);
      EXPECT_EQ(act.trans_b, c.trans_b);
      EXPECT_EQ(act.c.kind, cuda::codegen::BufferRef::Kind::kSlot);
      // An operand read in place is its parameter's slot; a transposed one
      // lives in scratch.
      const int scratch =
          (act.a.kind == cuda::codegen::BufferRef::Kind::kScratch) +
          (act.b.kind == cuda::codegen::BufferRef::Kind::kScratch);
      EXPECT_EQ(scratch, c.kernels);
    }
    EXPECT_EQ(kernels, c.kernels);
    EXPECT_EQ(gemms, c.gemms);
  }
}

}  // namespace
}  // namespace baton
