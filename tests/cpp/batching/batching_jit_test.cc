// A vmapped program inlined into a jit trace (how bt.vmap under bt.jit runs)
// compiles and runs on the CPU backend with the interpreter's results.
#include <gtest/gtest.h>

#include <cmath>

#include "batching/batching_test_util.h"
#include "baton/compiler/inline_program.h"
#include "jit/jit_test_util.h"

namespace baton::compiler::batching_test {
namespace {

using V = std::vector<Tracer>;
using P = std::vector<Param>;
constexpr DType F32 = DType::kFloat32;
constexpr DType I32 = DType::kInt32;

TEST(BatchingJitTest, VmappedIndexingAndDotRunOnTheCpuBackend) {
  // Per example: x [4, 3], w [3, 2], positions [2] (float, made integers).
  P params{{T(F32, {4, 3})}, {T(F32, {3, 2})}, {T(F32, {2})}};
  Program f = Trace(params, [](TraceContext&, const V& a) {
    Tracer idx = astype(a[2], I32);
    Tracer rows = take(a[0], idx, 0);     // [2, 3]
    Tracer h = tanh(matmul(rows, a[1]));  // [2, 2]
    Tracer i0 = reshape(slice(idx, {0}, {1}), {});
    Tracer i1 = reshape(slice(idx, {1}, {2}), {});
    Tracer block = dynamic_slice(a[0], {i0, i1}, {2, 2});
    Tracer updated = scatter(a[0], idx, rows * 2, 0, ScatterMode::kAdd);
    return V{h + block, updated, pad(h, 0.5f, {1, 0}, {0, 1}, {1, 0})};
  });
  constexpr int64_t kBatch = 3;
  Result<BatchedProgram> bp = transforms::Vmap(f, {0, -1, 1}, kBatch);
  ASSERT_TRUE(bp.ok()) << bp.status().to_string();
  const Program& g = bp->program;

  Jitted jitted(
      [&](TraceScope& scope, const V& args) {
        return InlineProgram(scope.context(), g, args);
      },
      {.name = "vmapped"});
  std::vector<std::vector<float>> host;
  std::vector<Literal> literals;
  uint64_t state = 11;
  for (int i = 0; i < g.num_parameters(); ++i) {
    Param p{g.parameter_type(i), i == 2 ? -1.0 : -2.0, i == 2 ? 4.0 : 2.0};
    literals.push_back(RandomLiteral(p, p.type.shape, state));
    host.push_back(literals.back().ToVector<float>());
  }
  std::vector<Arg> args;
  for (int i = 0; i < g.num_parameters(); ++i) {
    args.push_back(testing::Floats(host[i], g.parameter_type(i).shape));
  }
  Result<std::vector<Array>> got = jitted.Call(std::move(args));
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  Result<std::vector<Literal>> want = Interpret(g, literals);
  ASSERT_TRUE(want.ok()) << want.status().to_string();
  ASSERT_EQ(got.value().size(), want.value().size());
  for (size_t o = 0; o < want.value().size(); ++o) {
    const std::vector<float> out = testing::ToHost(got.value()[o]);
    const std::vector<float> ref = want.value()[o].ToVector<float>();
    ASSERT_EQ(out.size(), ref.size());
    for (size_t i = 0; i < ref.size(); ++i) {
      EXPECT_NEAR(out[i], ref[i], 1e-5 * (1 + std::abs(ref[i])))
          << "output " << o << " element " << i;
    }
  }
}

}  // namespace
}  // namespace baton::compiler::batching_test
