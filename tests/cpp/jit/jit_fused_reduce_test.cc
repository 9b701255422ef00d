// Fused reductions (step_plan.h kFusedReduce): a reduction over trailing
// dimensions reads its elementwise producer a piece at a time, so the
// producer's full-size result is never allocated, and the result is bitwise
// the one of the unfused program (producer materialized, then reduced).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>

#include "baton/compiler/step_plan.h"
#include "jit/jit_test_util.h"

namespace baton {
namespace {

using namespace baton::testing;
using compiler::Step;

using Body = std::function<Tracer(const Tracer&)>;

int CountSteps(const compiler::Program& p, Step::Kind kind) {
  int n = 0;
  for (const Step& s : compiler::PlanSteps(p).steps) n += s.kind == kind;
  return n;
}

// reduce(producer(x)) jitted twice: as it is (fused) and with the producer
// also returned (an output is materialized, so nothing fuses).
struct Pair {
  Jitted fused, unfused;
};
Pair Build(Body producer, std::function<Tracer(const Tracer&)> reduce) {
  return Pair{
      Jitted([=](TraceScope&, const std::vector<Tracer>& a) {
        return std::vector<Tracer>{reduce(producer(a[0]))};
      }, {.name = "fused"}),
      Jitted([=](TraceScope&, const std::vector<Tracer>& a) {
        Tracer y = producer(a[0]);
        return std::vector<Tracer>{reduce(y), y};
      }, {.name = "unfused"})};
}

std::vector<float> Ramp(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    v[i] = std::sin(0.37f * static_cast<float>(i)) * 3.0f + 0.001f * (i % 97);
  }
  return v;
}

void ExpectBitwise(const Array& a, const Array& b, const std::string& what) {
  ASSERT_EQ(a.nbytes(), b.nbytes()) << what;
  std::vector<char> x(a.nbytes()), y(b.nbytes());
  ThrowIfError(CopyToHost(a, x.data(), x.size()));
  ThrowIfError(CopyToHost(b, y.data(), y.size()));
  EXPECT_EQ(std::memcmp(x.data(), y.data(), x.size()), 0) << what;
}

TEST(JitFusedReduceTest, SumOfSquaresNeverAllocatesTheSquares) {
  const int64_t n = int64_t{1} << 20;
  Pair f = Build([](const Tracer& x) { return x * x; },
                 [](const Tracer& y) { return sum(y); });
  auto fused = ValueOrThrow(f.fused.Lower({Spec(Shape{n})}, Dev()));
  EXPECT_EQ(CountSteps(fused->program(), Step::Kind::kFusedReduce), 1);
  // The squares were a 4 MiB temporary; fused, the step needs only its
  // per-thread piece (kernel-local, on the stack) on the CPU, and a GPU
  // kernel its per-block partial sums (a few KiB of scratch).
  EXPECT_LE(fused->memory_analysis().temp_size_in_bytes, OnCpu() ? 0 : 16384);
  auto unfused = ValueOrThrow(f.unfused.Lower({Spec(Shape{n})}, Dev()));
  EXPECT_EQ(CountSteps(unfused->program(), Step::Kind::kFusedReduce), 0);

  Array x = Floats(Ramp(n));
  std::vector<Array> a = f.fused({x});
  std::vector<Array> b = f.unfused({x});
  ExpectBitwise(a[0], b[0], "sum(x*x)");
  double ref = 0;
  for (float v : Ramp(n)) ref += static_cast<double>(v) * v;
  EXPECT_NEAR(ToHost(a[0])[0], ref, 1e-5 * ref);
}

TEST(JitFusedReduceTest, RowReductionsAreBitwiseTheUnfusedOnes) {
  // Shapes across the reduction's splits: one long row (split between
  // threads), few long rows, many short rows (several rows a piece), rows
  // that are not a multiple of the piece, a size-0 row.
  struct Case {
    Shape shape;
    std::vector<int64_t> axes;
  };
  const std::vector<Case> cases = {
      {Shape{1}, {0}},          {Shape{31}, {0}},
      {Shape{4096}, {0}},       {Shape{4097}, {0}},
      {Shape{300001}, {0}},     {Shape{3, 50000}, {1}},
      {Shape{2, 1 << 18}, {1}}, {Shape{1000, 7}, {1}},
      {Shape{64, 5000}, {-1}},  {Shape{4, 3, 2000}, {1, 2}},
      {Shape{5, 1, 3000}, {2}}, {Shape{6, 0}, {1}},
  };
  const std::vector<std::pair<std::string, Body>> producers = {
      {"x*x", [](const Tracer& x) { return x * x; }},
      // One-op float chains, summed in registers as they are made
      // (FloatChain::SumRange): each side pattern of the op.
      {"x*0.75", [](const Tracer& x) { return x * 0.75f; }},
      {"3-x", [](const Tracer& x) { return 3.0f - x; }},
      {"x/x (0/0 is NaN)", [](const Tracer& x) { return x / x; }},
      // One op and its square, summed in registers too (a variance).
      {"(x-1)*(x-1)",
       [](const Tracer& x) { return (x - 1.0f) * (x - 1.0f); }},
      {"(2-x)*(2-x)",
       [](const Tracer& x) { return (2.0f - x) * (2.0f - x); }},
      {"(x/x)^2 (NaN)",
       [](const Tracer& x) { return (x / x) * (x / x); }},
      // Other chains keep the piece buffer.
      {"x*0.5+2", [](const Tracer& x) { return x * 0.5f + 2.0f; }},
      {"tanh(x)*2+1", [](const Tracer& x) { return tanh(x) * 2.0f + 1.0f; }},
      {"exp(x-1)", [](const Tracer& x) { return exp(x - 1.0f); }},
  };
  using Reduce = std::function<Tracer(const Tracer&, std::vector<int64_t>)>;
  const std::vector<std::pair<std::string, Reduce>> reduces = {
      {"sum", [](const Tracer& y, auto ax) { return sum(y, ax); }},
      {"max", [](const Tracer& y, auto ax) { return max(y, ax); }},
      {"min", [](const Tracer& y, auto ax) { return min(y, ax); }},
  };
  for (const Case& c : cases) {
    Array x = Floats(Ramp(c.shape.num_elements()), c.shape);
    for (const auto& [pname, producer] : producers) {
      for (const auto& [rname, reduce] : reduces) {
        const std::string what =
            rname + "(" + pname + ") over " + c.shape.to_string();
        const std::vector<int64_t> axes = c.axes;
        const Reduce& reduce_fn = reduce;  // clang 14 cannot capture a binding
        Pair f = Build(producer, [&](const Tracer& y) { return reduce_fn(y, axes); });
        auto exe = ValueOrThrow(f.fused.Lower({Spec(c.shape)}, Dev()));
        EXPECT_EQ(CountSteps(exe->program(), Step::Kind::kFusedReduce), 1)
            << what;
        ExpectBitwise(f.fused({x})[0], f.unfused({x})[0], what);
      }
    }
  }
}

TEST(JitFusedReduceTest, ChainsWithBroadcastsAndOtherDtypesFuse) {
  // Variance over rows: the row mean is broadcast inside the chain.
  const Shape shape{37, 3001};
  Pair var = Build(
      [](const Tracer& x) {
        Tracer d = x - sum(x, {1}, true) / 3001.0f;
        return d * d;
      },
      [](const Tracer& y) { return sum(y, {1}); });
  Array x = Floats(Ramp(shape.num_elements()), shape);
  auto exe = ValueOrThrow(var.fused.Lower({Spec(shape)}, Dev()));
  EXPECT_EQ(CountSteps(exe->program(), Step::Kind::kFusedReduce), 1);
  ExpectBitwise(var.fused({x})[0], var.unfused({x})[0], "variance");

  // int32: exact sums of a converted chain.
  Pair isum = Build([](const Tracer& x) { return astype(x * 7.0f, DType::kInt32) + 3; },
                    [](const Tracer& y) { return sum(y); });
  Array big = Floats(Ramp(200003));
  exe = ValueOrThrow(isum.fused.Lower({Spec(Shape{200003})}, Dev()));
  EXPECT_EQ(CountSteps(exe->program(), Step::Kind::kFusedReduce), 1);
  ExpectBitwise(isum.fused({big})[0], isum.unfused({big})[0], "int32 sum");
  // float16 products and sums accumulate in float: still bitwise.
  Pair half = Build([](const Tracer& x) { return astype(x * 0.25f, DType::kFloat16); },
                    [](const Tracer& y) { return sum(y, {0}); });
  exe = ValueOrThrow(half.fused.Lower({Spec(Shape{200003})}, Dev()));
  EXPECT_EQ(CountSteps(exe->program(), Step::Kind::kFusedReduce), 1);
  ExpectBitwise(half.fused({big})[0], half.unfused({big})[0], "float16 sum");
}

TEST(JitFusedReduceTest, LeadingAxisAndSharedProducersStayUnfused) {
  // A reduction over a leading axis (columns) is not a row reduction.
  Jitted cols([](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{sum(a[0] * a[0], {0})};
  }, {.name = "cols"});
  auto exe = ValueOrThrow(cols.Lower({Spec(Shape{64, 100})}, Dev()));
  EXPECT_EQ(CountSteps(exe->program(), Step::Kind::kFusedReduce), 0);
  // A producer read twice (softmax's exp) is materialized once, not
  // recomputed per reader.
  Jitted twice([](TraceScope&, const std::vector<Tracer>& a) {
    Tracer e = exp(a[0]);
    return std::vector<Tracer>{e / sum(e, {1}, true)};
  }, {.name = "softmax"});
  exe = ValueOrThrow(twice.Lower({Spec(Shape{8, 100})}, Dev()));
  EXPECT_EQ(CountSteps(exe->program(), Step::Kind::kFusedReduce), 0);
  std::vector<float> host = Ramp(800);
  std::vector<float> out = ToHost(twice({Floats(host, Shape{8, 100})})[0]);
  for (int r = 0; r < 8; ++r) {
    double total = 0;
    for (int c = 0; c < 100; ++c) total += out[r * 100 + c];
    EXPECT_NEAR(total, 1.0, 1e-5);
  }
}

}  // namespace
}  // namespace baton
