// Dot accumulate steps (step_plan.h kDotAccumulate, CPU backend): an add or
// subtract of a dot_general (optionally times a scalar) and a same-typed
// addend runs as one GEMM with beta = 1 into the result. The product is
// never allocated, and a donated addend (an SGD step's parameter) is
// updated where it lies. Values are checked against the same program with
// the product also returned (so it is materialized and added separately).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "baton/backend/cpu/cpu_executable.h"
#include "baton/backend/cpu/kernels/dot.h"
#include "baton/compiler/step_plan.h"
#include "jit/jit_test_util.h"

namespace baton {
namespace {

using namespace baton::testing;
using compiler::Step;

int CountDotAccumulates(const compiler::Program& p) {
  int n = 0;
  for (const Step& s : compiler::PlanSteps(p, cpu::CpuStepPlanOptions()).steps) {
    n += s.kind == Step::Kind::kDotAccumulate;
  }
  return n;
}

std::vector<float> Ramp(int64_t n, float phase) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    v[i] = std::sin(0.37f * static_cast<float>(i) + phase);
  }
  return v;
}

// Three operands: (addend, lhs, rhs).
using Body = std::function<Tracer(const Tracer& c, const Tracer& a,
                                  const Tracer& b, Tracer* product)>;

// `body` jitted as it is and with its product also returned.
struct Pair {
  Jitted fused, unfused;
};
Pair Build(const std::string& name, Body body, std::vector<int> donate = {}) {
  return Pair{
      Jitted(
          [=](TraceScope&, const std::vector<Tracer>& x) {
            Tracer product;
            return std::vector<Tracer>{body(x[0], x[1], x[2], &product)};
          },
          {.name = name, .donate_argnums = donate}),
      Jitted(
          [=](TraceScope&, const std::vector<Tracer>& x) {
            Tracer product;
            Tracer y = body(x[0], x[1], x[2], &product);
            return std::vector<Tracer>{y, product};
          },
          {.name = name + "_unfused"})};
}

void ExpectClose(const std::vector<float>& got, const std::vector<float>& want,
                 const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  float scale = 1e-6f;
  for (float w : want) scale = std::max(scale, std::abs(w));
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 2e-6f * scale) << what << " at " << i;
  }
}

TEST(JitDotAccumulateTest, SgdUpdateAddsTheProductIntoTheDonatedParameter) {
  // p - lr * (h^T . dz): the weight update of a dense layer's SGD step.
  const Shape p_shape{96, 80}, h_shape{32, 96}, dz_shape{32, 80};
  Pair f = Build(
      "sgd",
      [](const Tracer& p, const Tracer& h, const Tracer& dz, Tracer* g) {
        *g = matmul(transpose(h), dz);
        return p - 0.01f * *g;
      },
      {0});
  auto exe = ValueOrThrow(f.fused.Lower(
      {Spec(p_shape, true), Spec(h_shape), Spec(dz_shape)}, Dev()));
  EXPECT_EQ(CountDotAccumulates(exe->program()), 1);
  const std::vector<float> p = Ramp(p_shape.num_elements(), 0.0f),
                           h = Ramp(h_shape.num_elements(), 1.0f),
                           dz = Ramp(dz_shape.num_elements(), 2.0f);
  if (OnCpu()) {
    // No product-sized temporary; the result is the donated parameter.
    EXPECT_EQ(exe->memory_analysis().temp_size_in_bytes, 0);
    EXPECT_EQ(exe->memory_analysis().alias_size_in_bytes, p_shape.num_elements() * 4);
  }
  Array pa = Floats(p, p_shape);
  Array ha = Floats(h, h_shape), dza = Floats(dz, dz_shape);
  const void* storage = ValueOrThrow(pa.impl()->buffer())->data();
  Dev()->memory_space(MemoryKind::kDevice).ResetPeak();
  const MemoryStats before = Stats();
  Array out = f.fused({pa, ha, dza})[0];
  out.BlockUntilReady();
  if (OnCpu()) {
    EXPECT_EQ(ValueOrThrow(out.impl()->buffer())->data(), storage);
    // The call allocated nothing: no product, no new parameter.
    EXPECT_EQ(Stats().peak_bytes_in_use, before.bytes_in_use);
  }
  // Against a float64 reference.
  std::vector<float> got = ToHost(out);
  for (int64_t i = 0; i < 96; ++i) {
    for (int64_t j = 0; j < 80; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < 32; ++k) acc += double(h[k * 96 + i]) * dz[k * 80 + j];
      const double want = p[i * 80 + j] - 0.01 * acc;
      ASSERT_NEAR(got[i * 80 + j], want, 1e-5) << i << "," << j;
    }
  }
}

TEST(JitDotAccumulateTest, EveryFormMatchesTheUnfusedProgram) {
  struct Case {
    std::string name;
    Shape c, a, b;
    Body body;
  };
  auto mm = [](const Tracer& a, const Tracer& b, Tracer* g) {
    *g = matmul(a, b);
    return *g;
  };
  const std::vector<Case> cases = {
      {"c + a@b", {16, 24}, {16, 40}, {40, 24},
       [=](auto& c, auto& a, auto& b, Tracer* g) { return c + mm(a, b, g); }},
      {"a@b + c", {16, 24}, {16, 40}, {40, 24},
       [=](auto& c, auto& a, auto& b, Tracer* g) { return mm(a, b, g) + c; }},
      {"c - a@b", {16, 24}, {16, 40}, {40, 24},
       [=](auto& c, auto& a, auto& b, Tracer* g) { return c - mm(a, b, g); }},
      {"c - a@b*3", {16, 24}, {16, 40}, {40, 24},
       [=](auto& c, auto& a, auto& b, Tracer* g) { return c - mm(a, b, g) * 3.0f; }},
      {"c + 0.5*a@b", {16, 24}, {16, 40}, {40, 24},
       [=](auto& c, auto& a, auto& b, Tracer* g) { return c + 0.5f * mm(a, b, g); }},
      {"c + a@b.T", {16, 24}, {16, 40}, {24, 40},
       [=](auto& c, auto& a, auto& b, Tracer* g) {
         *g = matmul(a, transpose(b));
         return c + *g;
       }},
      {"batched", {3, 8, 5}, {3, 8, 7}, {3, 7, 5},
       [=](auto& c, auto& a, auto& b, Tracer* g) { return c + mm(a, b, g); }},
      {"empty contraction", {4, 3}, {4, 0}, {0, 3},
       [=](auto& c, auto& a, auto& b, Tracer* g) { return c - mm(a, b, g); }},
  };
  for (const Case& k : cases) {
    for (bool donate : {false, true}) {
      const std::string what = k.name + (donate ? " (donated)" : "");
      Pair f = Build(k.name, k.body, donate ? std::vector<int>{0} : std::vector<int>{});
      auto exe = ValueOrThrow(
          f.fused.Lower({Spec(k.c, donate), Spec(k.a), Spec(k.b)}, Dev()));
      EXPECT_EQ(CountDotAccumulates(exe->program()), 1) << what;
      if (OnCpu()) EXPECT_EQ(exe->memory_analysis().temp_size_in_bytes, 0) << what;
      const std::vector<float> c = Ramp(k.c.num_elements(), 0.5f);
      auto args = [&] {
        return std::vector<Arg>{Floats(c, k.c),
                                  Floats(Ramp(k.a.num_elements(), 1.5f), k.a),
                                  Floats(Ramp(k.b.num_elements(), 2.5f), k.b)};
      };
      std::vector<float> want = ToHost(f.unfused(args())[0]);
      ExpectClose(ToHost(f.fused(args())[0]), want, what);
    }
  }
}

TEST(JitDotAccumulateTest, FloatSixtyFourAccumulatesInDouble) {
  Pair f = Build("f64", [](const Tracer& c, const Tracer& a, const Tracer& b,
                           Tracer* g) {
    *g = matmul(a, b);
    return c - 0.25 * *g;
  });
  const Shape s{12, 12};
  auto exe = ValueOrThrow(f.fused.Lower(
      {Spec(s, false, DType::kFloat64), Spec(s, false, DType::kFloat64),
       Spec(s, false, DType::kFloat64)},
      Dev()));
  EXPECT_EQ(CountDotAccumulates(exe->program()), 1);
  std::vector<double> c(144), a(144), b(144);
  for (int i = 0; i < 144; ++i) {
    c[i] = std::cos(i * 0.1);
    a[i] = std::sin(i * 0.2);
    b[i] = std::sin(i * 0.3 + 1);
  }
  auto put = [&](const std::vector<double>& v) {
    return ValueOrThrow(DevicePut(HostBuffer{v.data(), s, DType::kFloat64},
                                  Dev(), MemoryKind::kDevice));
  };
  Array ca = put(c), aa = put(a), ba = put(b);
  Array out = f.fused({ca, aa, ba})[0];
  std::vector<double> got(144);
  ThrowIfError(CopyToHost(out, got.data(), got.size() * sizeof(double)));
  for (int i = 0; i < 12; ++i) {
    for (int j = 0; j < 12; ++j) {
      double acc = 0;
      for (int k = 0; k < 12; ++k) acc += a[i * 12 + k] * b[k * 12 + j];
      EXPECT_NEAR(got[i * 12 + j], c[i * 12 + j] - 0.25 * acc, 1e-13);
    }
  }
}

TEST(JitDotAccumulateTest, AddingThePlainProductIsBitwiseTheUnfusedProgram) {
  // With alpha = 1 the BLAS adds its product into the addend in one
  // rounding, as the unfused add does, up to the longest contraction it
  // adds in one step. A 384 x 320 output runs on OpenBLAS's threads.
  const int64_t depth = cpu::DotAccumulateMaxDepth(DType::kFloat32);
  ASSERT_GT(depth, 0);
  EXPECT_EQ(depth % 8, 0);
  Pair f = Build("plain", [](const Tracer& c, const Tracer& a, const Tracer& b,
                             Tracer* g) {
    *g = matmul(a, b);
    return c + *g;
  });
  for (int64_t k : {int64_t{1}, int64_t{24}, depth}) {
    for (const auto& [m, n] : {std::pair<int64_t, int64_t>{8, 8}, {384, 320}}) {
      const std::string what = std::to_string(m) + "x" + std::to_string(n) +
                               "x" + std::to_string(k);
      const Shape cs{m, n}, as{m, k}, bs{k, n};
      auto exe = ValueOrThrow(f.fused.Lower({Spec(cs), Spec(as), Spec(bs)}, Dev()));
      EXPECT_EQ(CountDotAccumulates(exe->program()), 1) << what;
      auto args = [&] {
        return std::vector<Arg>{Floats(Ramp(cs.num_elements(), 0.5f), cs),
                                Floats(Ramp(as.num_elements(), 1.5f), as),
                                Floats(Ramp(bs.num_elements(), 2.5f), bs)};
      };
      EXPECT_EQ(ToHost(f.fused(args())[0]), ToHost(f.unfused(args())[0])) << what;
    }
  }
}

TEST(JitDotAccumulateTest, OtherShapesOfProgramStayAsTheyWere) {
  using Body = std::function<std::vector<Tracer>(const std::vector<Tracer>&)>;
  struct Case {
    std::string name;
    Body body;
    DType dtype = DType::kFloat32;
    std::vector<Shape> shapes = {Shape{8, 8}, Shape{8, 8}, Shape{8, 8}};
  };
  const Body plain = [](const auto& x) {
    return std::vector<Tracer>{x[0] + matmul(x[1], x[2])};
  };
  const int64_t too_deep = cpu::DotAccumulateMaxDepth(DType::kFloat32) + 8;
  const std::vector<Case> cases = {
      // The product is read twice, or returned: it must exist.
      {"product read twice",
       [](const auto& x) {
         Tracer g = matmul(x[1], x[2]);
         return std::vector<Tracer>{x[0] + g, g * g};
       }},
      {"product returned",
       [](const auto& x) {
         Tracer g = matmul(x[1], x[2]);
         return std::vector<Tracer>{x[0] + g, g};
       }},
      // The addend is also the dot's operand: the GEMM could not write over
      // it while reading it, and the unfused add can (a donated c is
      // reused).
      {"c + c@b",
       [](const auto& x) { return std::vector<Tracer>{x[0] + matmul(x[0], x[2])}; }},
      // product - addend would need beta = -1.
      {"a@b - c",
       [](const auto& x) { return std::vector<Tracer>{matmul(x[1], x[2]) - x[0]}; }},
      // The add is part of a longer chain (tanh(c + a@b)): it fuses there.
      {"inside a chain",
       [](const auto& x) {
         return std::vector<Tracer>{tanh(x[0] + matmul(x[1], x[2]))};
       }},
      // A bias row is broadcast, not an addend of the product's type.
      {"bias row",
       [](const auto& x) {
         return std::vector<Tracer>{matmul(x[1], x[2]) + sum(x[0], {0})};
       }},
      // A product times a non-scalar.
      {"times a matrix",
       [](const auto& x) {
         return std::vector<Tracer>{x[0] + matmul(x[1], x[2]) * x[0]};
       }},
      {"int32", plain, DType::kInt32},
      {"float16", plain, DType::kFloat16},
      // gemv adds its product into the output piece by piece, and OpenBLAS
      // adds each block of a long contraction separately: the sum would be
      // rounded at the addend's scale several times.
      {"matrix-vector", plain, DType::kFloat32,
       {Shape{16, 1}, Shape{16, 40}, Shape{40, 1}}},
      {"vector-matrix", plain, DType::kFloat32,
       {Shape{1, 24}, Shape{1, 40}, Shape{40, 24}}},
      {"contraction of " + std::to_string(too_deep), plain, DType::kFloat32,
       {Shape{8, 8}, Shape{8, too_deep}, Shape{too_deep, 8}}},
  };
  for (const Case& k : cases) {
    Jitted f([body = k.body](TraceScope&, const std::vector<Tracer>& x) {
      return body(x);
    }, {.name = "other"});
    std::vector<ArgSpec> specs;
    for (const Shape& shape : k.shapes) specs.push_back(Spec(shape, false, k.dtype));
    auto exe = ValueOrThrow(f.Lower(specs, Dev()));
    EXPECT_EQ(CountDotAccumulates(exe->program()), 0) << k.name;
  }
}

}  // namespace
}  // namespace baton
