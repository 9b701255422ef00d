// Gathers that read out-of-range indices as GatherBounds says
// (core/gather_bounds.h): negatives wrapped once, the rest clamped or read
// as a fill value -- jax.numpy's take and x[i] -- in the gather's one pass.
// Each gives bitwise what the same take spelled with compare, select and
// add ops around a clamping gather gives, on this device (the CPU kernels,
// or the CUDA kernels emulated on the simulated device; a lone gather and
// one fused with the ops making its indices) and in the reference
// interpreter, for every index type, table shape and axis.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "baton/compiler/reference_interpreter.h"
#include "baton/compiler/step_plan.h"
#include "jit/jit_test_util.h"

namespace baton {
namespace {

using namespace baton::testing;

// The bits of `v` as GatherBounds::fill_bits.
template <typename T>
uint64_t BitsOf(T v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof v);
  return bits;
}

// take(x, i, axis) as `bounds` reads it, written out with the ops a
// front end would emit around a clamping gather.
Tracer Spelled(const Tracer& x, const Tracer& i, int64_t axis,
               const GatherBounds& bounds, const Tracer& fill) {
  const int64_t n = x.shape()[static_cast<int>(axis)];
  Tracer j = astype(i, DType::kInt64);
  if (bounds.wrap_negative) j = where(lt(j, int64_t{0}), j + n, j);
  Tracer got = take(x, j, axis);
  if (!bounds.fill) return got;
  const Tracer inside = ge(j, int64_t{0}) & lt(j, n);
  // The mask over the result: the index dimensions sit at `axis`.
  std::vector<int64_t> dims;
  for (int d = 0; d < i.rank(); ++d) dims.push_back(axis + d);
  return where(broadcast_in_dim(inside, got.shape(), dims), got,
               broadcast_in_dim(fill, got.shape(), {}));
}

struct Case {
  std::string name;
  Shape table;
  int64_t axis;
  DType dtype;
  DType index_dtype;
  std::vector<int64_t> indices;
};

// Indices on both sides of the range and exactly at its edges.
std::vector<int64_t> Spread(int64_t n, int64_t count) {
  std::vector<int64_t> v = {0, n - 1, -1, -n, n, -n - 1};
  for (int64_t k = 0; v.size() < static_cast<size_t>(count); ++k) {
    v.push_back((k * 7919) % (3 * n) - n - n / 2);
  }
  return v;
}

compiler::Literal IndexLiteral(DType dtype, const std::vector<int64_t>& v) {
  std::vector<double> d(v.begin(), v.end());
  return compiler::Literal::FromDoubles(
      dtype, Shape{static_cast<int64_t>(v.size())}, d);
}

compiler::Literal TableLiteral(DType dtype, const Shape& shape) {
  std::vector<double> v(static_cast<size_t>(shape.num_elements()));
  for (size_t k = 0; k < v.size(); ++k) {
    v[k] = dtype == DType::kBool ? (k % 3 == 0) : 0.25 * k - 7;
  }
  return compiler::Literal::FromDoubles(dtype, shape, v);
}

uint64_t FillFor(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return BitsOf(std::nanf(""));
    case DType::kInt32:
      return BitsOf(int32_t{-2147483647 - 1});
    case DType::kBool:
      return 1;
    default:
      return BitsOf(int64_t{-5});
  }
}

TEST(JitGatherBoundsTest, EachBoundsReadsAsTheSpelledOutOps) {
  const std::vector<Case> cases = {
      // A one-dimensional float table: the fused table gather and, with
      // int32 indices, the vectorized gather on AVX2.
      {"f32 table, s32 ids", Shape{3000}, 0, DType::kFloat32, DType::kInt32,
       Spread(3000, 5000)},
      {"f32 table, s8 ids", Shape{100}, 0, DType::kFloat32, DType::kInt8,
       Spread(100, 300)},
      {"s32 table, s64 ids", Shape{77}, 0, DType::kInt32, DType::kInt64,
       Spread(77, 300)},
      {"bool table, s32 ids", Shape{50}, 0, DType::kBool, DType::kInt32,
       Spread(50, 200)},
      // Rows (an embedding lookup) and a middle axis.
      {"f32 rows", Shape{40, 9}, 0, DType::kFloat32, DType::kInt32,
       Spread(40, 100)},
      {"s64 middle axis", Shape{3, 20, 4}, 1, DType::kInt64, DType::kInt32,
       Spread(20, 60)},
      // Unsigned indices never wrap; the large ones clamp or fill.
      {"f32 table, u8 ids", Shape{30}, 0, DType::kFloat32, DType::kUInt8,
       {0, 29, 30, 31, 200, 255, 7}},
  };
  for (const Case& c : cases) {
    for (int variant = 0; variant < 3; ++variant) {
      GatherBounds bounds;
      bounds.wrap_negative = variant != 1;
      bounds.fill = variant != 0;
      bounds.fill_bits = bounds.fill ? FillFor(c.dtype) : 0;
      const std::string what =
          c.name + (bounds.wrap_negative ? ", wrap" : "") +
          (bounds.fill ? ", fill" : "");
      // fill as a one-element parameter of the table's dtype.
      compiler::Literal fill(Shape{}, c.dtype);
      std::memcpy(fill.untyped_mutable_data(), &bounds.fill_bits,
                  dtype_size(c.dtype));
      const compiler::Literal table = TableLiteral(c.dtype, c.table);
      const compiler::Literal idx = IndexLiteral(c.index_dtype, c.indices);
      const int64_t axis = c.axis;
      Jitted one([axis, bounds](TraceScope&, const std::vector<Tracer>& a) {
        return std::vector<Tracer>{take(a[0], a[1], axis, bounds)};
      }, {.name = "one_pass"});
      Jitted spelled([axis, bounds](TraceScope&, const std::vector<Tracer>& a) {
        return std::vector<Tracer>{Spelled(a[0], a[1], axis, bounds, a[2])};
      }, {.name = "spelled"});
      const Array x = ToArray(table), i = ToArray(idx);
      const compiler::Literal got = ToLiteral(one({x, i})[0]);
      const compiler::Literal want =
          ToLiteral(spelled({x, i, ToArray(fill)})[0]);
      EXPECT_EQ(got, want) << what << "\n got " << got.ToString()
                           << "\nwant " << want.ToString();

      // The reference interpreter's meaning is the same.
      compiler::TraceContext ctx;
      Tracer tx = ctx.AddParameter({table.shape(), table.dtype()});
      Tracer ti = ctx.AddParameter({idx.shape(), idx.dtype()});
      auto ref = compiler::Interpret(ctx.Finish({take(tx, ti, axis, bounds)}),
                                     {table, idx});
      ASSERT_TRUE(ref.ok()) << what << ": " << ref.status().to_string();
      EXPECT_EQ(ref.value()[0], want) << what;

      // A one-dimensional table fuses with the ops computing its indices
      // (step_plan.h IsTableGather): the fused step reads bounds alike.
      if (c.table.rank() != 1) continue;
      Jitted fused([bounds](TraceScope&, const std::vector<Tracer>& a) {
        return std::vector<Tracer>{take(a[0], (a[1] ^ 5) ^ 5, 0, bounds)};
      }, {.name = "fused_pass"});
      auto exe = ValueOrThrow(
          fused.Lower({Spec(table.shape(), false, table.dtype()),
                       Spec(idx.shape(), false, idx.dtype())},
                      Dev()));
      const compiler::StepPlan plan = compiler::PlanSteps(exe->program());
      ASSERT_EQ(plan.steps.size(), 1u) << what;
      EXPECT_EQ(plan.steps[0].kind, compiler::Step::Kind::kFusedElementwise)
          << what;
      EXPECT_EQ(ToLiteral(fused({x, i})[0]), want) << what << " (fused)";
    }
  }
}

TEST(JitGatherBoundsTest, AnEmptyAxisFillsOrIsRefused) {
  GatherBounds fill;
  fill.fill = true;
  fill.fill_bits = BitsOf(2.5f);
  Jitted filled([fill](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{take(a[0], a[1], 0, fill)};
  }, {.name = "fill_empty"});
  const std::vector<float> none;
  Array empty = Floats(none, Shape{0});
  Array ids = ToArray(IndexLiteral(DType::kInt32, {0, -1, 3}));
  EXPECT_EQ(ToHost(filled({empty, ids})[0]),
            (std::vector<float>{2.5f, 2.5f, 2.5f}));
  // Clamping into an empty axis has nothing to read.
  Jitted clamped([](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{take(a[0], a[1])};
  }, {.name = "clamp_empty"});
  auto refused = clamped.Lower(
      {Spec(Shape{0}), Spec(Shape{3}, false, DType::kInt32)}, Dev());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("empty"), std::string::npos)
      << refused.status().message();
}

TEST(JitGatherBoundsTest, AFillLargerThanEightBytesIsRefused) {
  GatherBounds fill;
  fill.fill = true;
  Jitted f([fill](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{take(a[0], a[1], 0, fill)};
  }, {.name = "fill_c128"});
  auto refused = f.Lower({Spec(Shape{4}, false, DType::kComplex128),
                          Spec(Shape{2}, false, DType::kInt32)},
                         Dev());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("at most 8 bytes"),
            std::string::npos)
      << refused.status().message();
}

}  // namespace
}  // namespace baton
