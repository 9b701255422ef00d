// Unrolling scans (compiler/unroll_scans.h): the unrolled program has no
// scan left where one was named, and the reference interpreter gives it
// bitwise the scan's results -- carries, ys stacked in index order,
// reversed scans, several xs and ys, an invariant, a scan of one step and
// one without xs -- while the scans not named are copied as they are; and
// rewritten as while loops over a step counter, likewise.
#include "baton/compiler/unroll_scans.h"

#include <gtest/gtest.h>

#include <cstring>

#include "baton/compiler/reference_interpreter.h"
#include "control_flow_test_util.h"

namespace baton::compiler {
namespace {

using cf_test::CountKind;
using cf_test::EmitGroup;
using cf_test::Region;
using cf_test::Scan;
using cf_test::T;

Literal Arg(const Shape& shape, int seed) {
  std::vector<float> v(shape.num_elements());
  for (size_t k = 0; k < v.size(); ++k) {
    v[k] = 0.25f * static_cast<float>(static_cast<int>((k * 37 + seed * 11) % 9) - 4);
  }
  return Literal::FromVector(v, shape);
}

// (c, x1, x2, v) -> (c * 0.5 + x1 * x2 + v, c - x1, sum(x2)): a carry, two
// xs of different shapes' rows, an invariant, two ys.
std::shared_ptr<const Program> Body() {
  return Region({T({3}), T({3}), T({2, 3}), T({3})},
                [](TraceContext&, const auto& p) {
                  const Tracer x2 = sum(p[2], {0});
                  return std::vector<Tracer>{p[0] * 0.5 + p[1] * x2 + p[3],
                                             p[0] - p[1], x2};
                });
}

// A program of one scan over `length` steps.
Program ScanProgram(int64_t length, bool reverse) {
  TraceContext ctx;
  const Tracer c = ctx.AddParameter(T({3}));
  const Tracer x1 = ctx.AddParameter(T({length, 3}));
  const Tracer x2 = ctx.AddParameter(T({length, 2, 3}));
  const Tracer v = ctx.AddParameter(T({3}));
  const std::vector<Tracer> outs =
      EmitGroup(ctx, Scan(1, 2, length, Body(), reverse), {c, x1, x2, v});
  return ctx.Finish(outs);
}

void ExpectSameResults(const Program& a, const Program& b) {
  std::vector<Literal> args;
  for (int i = 0; i < a.num_parameters(); ++i) {
    args.push_back(Arg(a.parameter_type(i).shape, i + 1));
  }
  Result<std::vector<Literal>> want = Interpret(a, args);
  Result<std::vector<Literal>> got = Interpret(b, args);
  ASSERT_TRUE(want.ok()) << want.status().to_string();
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  ASSERT_EQ(got.value().size(), want.value().size());
  for (size_t k = 0; k < want.value().size(); ++k) {
    const Literal& w = want.value()[k];
    const Literal& g = got.value()[k];
    ASSERT_EQ(g.shape(), w.shape()) << "output " << k;
    EXPECT_EQ(std::memcmp(g.untyped_data(), w.untyped_data(),
                          static_cast<size_t>(w.byte_size())),
              0)
        << "output " << k << ": " << g.ToString() << " vs " << w.ToString();
  }
}

TEST(UnrollScansTest, UnrolledScansAndScansAsWhileLoopsGiveTheScansResults) {
  for (const int64_t length : {1, 4}) {
    for (const bool reverse : {false, true}) {
      SCOPED_TRACE("length " + std::to_string(length) +
                   (reverse ? " reversed" : ""));
      const Program p = ScanProgram(length, reverse);
      const ValueId scan = p.outputs()[0];
      ASSERT_NE(p.instruction(scan).attrs_if<ScanAttrs>(), nullptr);
      EXPECT_EQ(UnrolledSize(p, scan), length * Body()->num_values());
      Result<Program> u = UnrollScans(p, {scan});
      ASSERT_TRUE(u.ok()) << u.status().to_string();
      EXPECT_EQ(CountKind(u.value(), OpKind::kScan), 0);
      EXPECT_TRUE(u.value().Verify().ok());
      EXPECT_EQ(u.value().parameter_types(), p.parameter_types());
      EXPECT_EQ(u.value().output_types(), p.output_types());
      ExpectSameResults(p, u.value());
      // As a while loop over a step counter, named by any member.
      Result<Program> w = ScansAsWhileLoops(p, {p.outputs()[1]});
      ASSERT_TRUE(w.ok()) << w.status().to_string();
      EXPECT_EQ(CountKind(w.value(), OpKind::kScan), 0);
      EXPECT_EQ(CountKind(w.value(), OpKind::kWhile), 4);  // i, c and two ys
      EXPECT_TRUE(w.value().Verify().ok());
      EXPECT_EQ(w.value().output_types(), p.output_types());
      ExpectSameResults(p, w.value());
    }
  }
}

TEST(UnrollScansTest, AScanWithoutXsAndScansNotNamedAreCopied) {
  // Two scans: the first (no xs, a fori_loop's shape) unrolled, the second
  // reading its result copied as it is.
  TraceContext ctx;
  const Tracer c = ctx.AddParameter(T({3}));
  const Tracer xs = ctx.AddParameter(T({2, 3}));
  auto doubling = Region({T({3})}, [](TraceContext&, const auto& p) {
    return std::vector<Tracer>{p[0] * 2.0 - 1.0};
  });
  const Tracer first = EmitGroup(ctx, Scan(1, 0, 3, doubling), {c})[0];
  auto adding = Region({T({3}), T({3})}, [](TraceContext&, const auto& p) {
    return std::vector<Tracer>{p[0] + p[1], p[0]};
  });
  const std::vector<Tracer> second =
      EmitGroup(ctx, Scan(1, 1, 2, adding), {first, xs});
  const Program p = ctx.Finish({second[0], second[1], first});
  Result<Program> u = UnrollScans(p, {p.outputs()[2]});
  ASSERT_TRUE(u.ok()) << u.status().to_string();
  EXPECT_EQ(CountKind(u.value(), OpKind::kScan), 2);  // the second's group
  ExpectSameResults(p, u.value());
}

TEST(UnrollScansTest, ValuesThatAreNotScansAreRefused) {
  const Program p = ScanProgram(2, false);
  Result<Program> u = UnrollScans(p, {0});  // a parameter
  ASSERT_FALSE(u.ok());
  EXPECT_NE(u.status().message().find("not a whole scan group"),
            std::string::npos)
      << u.status().message();
  EXPECT_EQ(UnrolledSize(p, 0), 0);
  Result<Program> w = ScansAsWhileLoops(p, {0});
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("ScansAsWhileLoops: value 0"), std::string::npos)
      << w.status().message();
}

}  // namespace
}  // namespace baton::compiler
