// Indexing kernels against naive loops: clamped starts, in-place updates,
// gather clamping, scatter dropping and accumulating duplicates.
#include "baton/backend/cpu/kernels/indexing.h"

#include <gtest/gtest.h>

#include <type_traits>

#include "baton/backend/cpu/kernels/isa.h"
#include "baton/core/scalar_math.h"
#include "kernel_test_util.h"

namespace baton::cpu {
namespace {

using testing::AllDTypes;
using testing::BitEqual;
using testing::FillOptions;
using testing::HostArray;
using testing::RandomArray;
using testing::Ravel;
using testing::Unravel;

std::vector<int64_t> ClampStarts(const Shape& operand,
                                 const std::vector<int64_t>& starts,
                                 const std::vector<int64_t>& sizes) {
  std::vector<int64_t> s(starts.size());
  for (size_t d = 0; d < s.size(); ++d) {
    s[d] = std::min(std::max<int64_t>(starts[d], 0),
                    operand[static_cast<int>(d)] - sizes[d]);
  }
  return s;
}

struct WindowCase {
  Shape operand;
  std::vector<int64_t> starts;
  std::vector<int64_t> sizes;
};

const std::vector<WindowCase>& WindowCases() {
  static const std::vector<WindowCase> kCases = {
      {Shape{}, {}, {}},
      {Shape{10}, {3}, {4}},
      {Shape{10}, {-5}, {4}},  // clamps to 0
      {Shape{10}, {9}, {4}},   // clamps to 6
      {Shape{10}, {2}, {10}},  // whole dim: start forced to 0
      {Shape{10}, {5}, {0}},   // empty window
      {Shape{4, 6}, {1, 100}, {2, 3}},
      {Shape{3, 4, 5}, {-1, 2, 1}, {2, 2, 5}},
      {Shape{2, 3, 4, 5}, {1, 1, 1, 1}, {1, 2, 3, 4}},
      {Shape{0, 3}, {0, 1}, {0, 2}},
      {Shape{2048, 1024}, {100, 7}, {1500, 1000}},  // >1M window
  };
  return kCases;
}

TEST(DynamicSliceTest, ClampsStartsIntoRange) {
  std::mt19937_64 rng(20);
  for (const WindowCase& c : WindowCases()) {
    for (DType t : AllDTypes()) {
      if (c.operand.num_elements() > 100000 && t != DType::kFloat32 &&
          t != DType::kUInt8) {
        continue;
      }
      SCOPED_TRACE(c.operand.to_string() + " " + std::string(dtype_name(t)));
      const HostArray in = RandomArray(t, c.operand, rng);
      const std::vector<int64_t> s = ClampStarts(c.operand, c.starts, c.sizes);
      HostArray expected(t, Shape(c.sizes));
      for (int64_t f = 0; f < expected.size(); ++f) {
        std::vector<int64_t> idx = Unravel(f, c.sizes);
        for (size_t d = 0; d < idx.size(); ++d) idx[d] += s[d];
        expected.CopyElement(f, in, Ravel(idx, c.operand.dims()));
      }
      HostArray out(t, Shape(c.sizes));
      DynamicSlice(t, in.data(), c.operand, c.starts, c.sizes, out.data());
      ASSERT_TRUE(BitEqual(expected, out));
    }
  }
}

TEST(DynamicUpdateSliceTest, CopyingAndInPlaceAgree) {
  std::mt19937_64 rng(21);
  for (const WindowCase& c : WindowCases()) {
    for (DType t : AllDTypes()) {
      if (c.operand.num_elements() > 100000 && t != DType::kFloat32 &&
          t != DType::kUInt8) {
        continue;
      }
      SCOPED_TRACE(c.operand.to_string() + " " + std::string(dtype_name(t)));
      const HostArray operand = RandomArray(t, c.operand, rng);
      const HostArray update = RandomArray(t, Shape(c.sizes), rng);
      const std::vector<int64_t> s = ClampStarts(c.operand, c.starts, c.sizes);
      HostArray expected = operand;
      for (int64_t f = 0; f < update.size(); ++f) {
        std::vector<int64_t> idx = Unravel(f, c.sizes);
        for (size_t d = 0; d < idx.size(); ++d) idx[d] += s[d];
        expected.CopyElement(Ravel(idx, c.operand.dims()), update, f);
      }
      HostArray out(t, c.operand);
      DynamicUpdateSlice(t, operand.data(), c.operand, update.data(),
                         update.shape(), c.starts, out.data());
      ASSERT_TRUE(BitEqual(expected, out)) << "out != operand";
      HostArray inplace = operand;
      DynamicUpdateSlice(t, inplace.data(), c.operand, update.data(),
                         update.shape(), c.starts, inplace.data());
      ASSERT_TRUE(BitEqual(expected, inplace)) << "out == operand";
    }
  }
}

// Gather/scatter cases: operand shape, axis, indices (with out-of-range
// ones) and the shape of the indices array.
struct TakeCase {
  Shape operand;
  int axis;
  std::vector<int64_t> indices;
};

const std::vector<TakeCase>& TakeCases() {
  static const std::vector<TakeCase> kCases = {
      {Shape{5}, 0, {0, 4, 2, 2}},
      {Shape{5}, 0, {-1, 7, 3, 100, -100}},  // clamp / drop
      {Shape{5}, 0, {}},
      {Shape{4, 3}, 0, {3, 0, 1, 1, 9}},
      {Shape{4, 3}, 1, {2, 2, 0, -2}},
      {Shape{2, 6, 3}, 1, {5, 0, 5, 5, 1, 6}},
      {Shape{2, 3, 4, 5}, 3, {4, 0, 1}},
      {Shape{2, 3, 4, 5}, 0, {1, 1, 0}},
      {Shape{3, 0}, 0, {1, 2}},
      {Shape{0, 2}, 0, {0, 1}},  // nothing to take: zeros / all dropped
  };
  return kCases;
}

template <typename I>
HostArray MakeIndices(const std::vector<int64_t>& v, DType dt) {
  HostArray a(dt, Shape{static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) a.as<I>()[i] = static_cast<I>(v[i]);
  return a;
}

HostArray IndicesAs(DType dt, const std::vector<int64_t>& v) {
  return dt == DType::kInt32 ? MakeIndices<int32_t>(v, dt)
                             : MakeIndices<int64_t>(v, dt);
}

Shape TakeShape(const Shape& operand, int axis, int64_t n) {
  std::vector<int64_t> dims = operand.dims();
  dims[axis] = n;
  return Shape(dims);
}

HostArray RefGather(const HostArray& in, int axis,
                    const std::vector<int64_t>& idx) {
  const Shape out_shape =
      TakeShape(in.shape(), axis, static_cast<int64_t>(idx.size()));
  HostArray out(in.dtype(), out_shape);
  const int64_t d = in.shape()[axis];
  for (int64_t f = 0; f < out.size(); ++f) {
    std::vector<int64_t> i = Unravel(f, out_shape.dims());
    i[axis] = std::clamp<int64_t>(idx[i[axis]], 0, d - 1);
    out.CopyElement(f, in, Ravel(i, in.shape().dims()));
  }
  return out;
}

TEST(GatherTest, ClampsIndicesForInt32AndInt64) {
  std::mt19937_64 rng(22);
  for (const TakeCase& c : TakeCases()) {
    for (DType it : {DType::kInt32, DType::kInt64}) {
      for (DType t : AllDTypes()) {
        SCOPED_TRACE(c.operand.to_string() + " axis=" + std::to_string(c.axis) +
                     " " + std::string(dtype_name(t)));
        const HostArray in = RandomArray(t, c.operand, rng);
        const HostArray idx = IndicesAs(it, c.indices);
        const Shape out_shape = TakeShape(
            c.operand, c.axis, static_cast<int64_t>(c.indices.size()));
        HostArray out(t, out_shape);
        Gather(t, in.data(), c.operand, idx.data(), it, idx.size(), c.axis,
               out.data());
        if (c.operand[c.axis] == 0) {
          const auto* bytes = static_cast<const uint8_t*>(out.data());
          for (size_t b = 0; b < out.nbytes(); ++b) ASSERT_EQ(bytes[b], 0);
          continue;
        }
        ASSERT_TRUE(BitEqual(RefGather(in, c.axis, c.indices), out));
      }
    }
  }
}

TEST(GatherTest, LargeTakeOfRowsAndElements) {
  std::mt19937_64 rng(23);
  const HostArray table = RandomArray(DType::kFloat32, Shape{1000, 512}, rng);
  std::vector<int64_t> rows(3000);
  for (auto& r : rows) r = static_cast<int64_t>(rng() % 1100) - 50;
  const HostArray idx = IndicesAs(DType::kInt64, rows);
  HostArray out(DType::kFloat32, Shape{3000, 512});  // 1.5M elements
  Gather(DType::kFloat32, table.data(), table.shape(), idx.data(),
         DType::kInt64, idx.size(), 0, out.data());
  EXPECT_TRUE(BitEqual(RefGather(table, 0, rows), out));

  const HostArray vec = RandomArray(DType::kInt16, Shape{5000}, rng);
  std::vector<int64_t> picks(1 << 20);
  for (auto& p : picks) p = static_cast<int64_t>(rng() % 5000);
  const HostArray idx32 = IndicesAs(DType::kInt32, picks);
  HostArray out2(DType::kInt16, Shape{1 << 20});
  Gather(DType::kInt16, vec.data(), vec.shape(), idx32.data(), DType::kInt32,
         idx32.size(), 0, out2.data());
  EXPECT_TRUE(BitEqual(RefGather(vec, 0, picks), out2));
}

// Indices of any integer dtype; values that do not fit are the caller's
// concern (each test picks values the dtype holds).
HostArray IndicesOfType(DType dt, const std::vector<int64_t>& v) {
  HostArray a(dt, Shape{static_cast<int64_t>(v.size())});
  VisitDType(dt, [&](auto tag) {
    using I = typename decltype(tag)::type;
    if constexpr (std::is_arithmetic_v<I>) {
      for (size_t i = 0; i < v.size(); ++i) a.as<I>()[i] = static_cast<I>(v[i]);
    } else {
      ADD_FAILURE() << "indices of a non-numeric dtype";
    }
  });
  return a;
}

// The one-axis vector loop (split sooner once the table passes 1 MiB),
// split over threads, for every integer index dtype: negative indices clamp
// to 0 and those past the end to the last element, as in the generic walk.
TEST(GatherTest, VectorTakeClampsEveryIndexDType) {
  std::mt19937_64 rng(24);
  const struct {
    DType index;
    int64_t lo, hi;  // index values drawn from [lo, hi)
  } kIndexCases[] = {
      {DType::kInt8, -128, 128},
      {DType::kUInt8, 0, 256},
      {DType::kInt16, -32768, 32768},
      {DType::kInt32, -1000, 600000},
      {DType::kUInt32, 0, 4000000000},
      {DType::kInt64, -(int64_t{1} << 40), int64_t{1} << 40},
  };
  for (int64_t d : {int64_t{200}, int64_t{1} << 19}) {  // in cache; 2 MiB
    const HostArray table = RandomArray(DType::kFloat32, Shape{d}, rng);
    for (const auto& c : kIndexCases) {
      SCOPED_TRACE("d=" + std::to_string(d) + " " +
                   std::string(dtype_name(c.index)));
      std::vector<int64_t> picks(70000);
      for (auto& p : picks) {
        p = c.lo +
            static_cast<int64_t>(rng() % static_cast<uint64_t>(c.hi - c.lo));
      }
      picks[0] = c.lo;  // the extremes, and the edges of the range
      picks[1] = c.hi - 1;
      picks[2] = std::min<int64_t>(d - 1, c.hi - 1);
      const HostArray idx = IndicesOfType(c.index, picks);
      for (bool avx2 : {false, true}) {  // int32: the vpgatherdd loop too
        const bool was = SetAvx2KernelsForTesting(avx2);
        HostArray out(DType::kFloat32, Shape{idx.size()});
        Gather(DType::kFloat32, table.data(), table.shape(), idx.data(),
               c.index, idx.size(), 0, out.data());
        SetAvx2KernelsForTesting(was);
        ASSERT_TRUE(BitEqual(RefGather(table, 0, picks), out));
      }
    }
  }
}

// Thread ranges that start in the middle of an outer row (rows = outer * n
// is split evenly, not at multiples of n), for rows of one and of several
// elements and 1/2/8-byte elements.
TEST(GatherTest, SplitsMidRowKeepOuterOffsets) {
  std::mt19937_64 rng(25);
  const struct {
    Shape operand;
    int axis;
  } kCases[] = {{Shape{7, 3001}, 1}, {Shape{5, 2999, 3}, 1}, {Shape{3, 9}, 0}};
  for (const auto& c : kCases) {
    for (DType t : {DType::kUInt8, DType::kFloat16, DType::kInt64}) {
      SCOPED_TRACE(c.operand.to_string() + " " + std::string(dtype_name(t)));
      const HostArray in = RandomArray(t, c.operand, rng);
      const int64_t d = c.operand[c.axis];
      std::vector<int64_t> picks(c.axis == 0 ? 50000 : 13001);
      for (auto& p : picks) p = static_cast<int64_t>(rng() % (d + 20)) - 10;
      const HostArray idx = IndicesOfType(DType::kInt32, picks);
      HostArray out(t, TakeShape(c.operand, c.axis, idx.size()));
      Gather(t, in.data(), c.operand, idx.data(), DType::kInt32, idx.size(),
             c.axis, out.data());
      ASSERT_TRUE(BitEqual(RefGather(in, c.axis, picks), out));
    }
  }
}

HostArray RefScatter(ScatterMode mode, const HostArray& operand, int axis,
                     const std::vector<int64_t>& idx, const HostArray& upd) {
  HostArray out = operand;
  const int64_t d = operand.shape()[axis];
  VisitDType(operand.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    for (int64_t f = 0; f < upd.size(); ++f) {  // row-major update order
      std::vector<int64_t> i = Unravel(f, upd.shape().dims());
      const int64_t target = idx[i[axis]];
      if (target < 0 || target >= d) continue;
      i[axis] = target;
      T& dst = out.as<T>()[Ravel(i, operand.shape().dims())];
      const C x = ToCompute(dst), u = ToCompute(upd.as<T>()[f]);
      switch (mode) {
        case ScatterMode::kSet:
          dst = upd.as<T>()[f];
          break;
        case ScatterMode::kAdd:
          dst = FromCompute<T>(scalar::Binary<BinaryOp::kAdd, C>(x, u));
          break;
        case ScatterMode::kMul:
          dst = FromCompute<T>(scalar::Binary<BinaryOp::kMul, C>(x, u));
          break;
        case ScatterMode::kMin:
          dst = FromCompute<T>(scalar::Binary<BinaryOp::kMin, C>(x, u));
          break;
        case ScatterMode::kMax:
          dst = FromCompute<T>(scalar::Binary<BinaryOp::kMax, C>(x, u));
          break;
      }
    }
  });
  return out;
}

constexpr ScatterMode kModes[] = {ScatterMode::kSet, ScatterMode::kAdd,
                                  ScatterMode::kMul, ScatterMode::kMin,
                                  ScatterMode::kMax};

TEST(ScatterTest, DropsOutOfRangeAndAppliesDuplicatesInOrder) {
  std::mt19937_64 rng(24);
  for (const TakeCase& c : TakeCases()) {
    for (ScatterMode mode : kModes) {
      for (DType t : AllDTypes()) {
        SCOPED_TRACE(c.operand.to_string() + " axis=" + std::to_string(c.axis) +
                     " mode=" + std::to_string(static_cast<int>(mode)) + " " +
                     std::string(dtype_name(t)));
        FillOptions opt;
        opt.specials = true;
        opt.int_range = 100;
        const HostArray operand = RandomArray(t, c.operand, rng, opt);
        const HostArray upd =
            RandomArray(t,
                        TakeShape(c.operand, c.axis,
                                  static_cast<int64_t>(c.indices.size())),
                        rng, opt);
        const DType it = rng() % 2 ? DType::kInt32 : DType::kInt64;
        const HostArray idx = IndicesAs(it, c.indices);
        const HostArray expected =
            RefScatter(mode, operand, c.axis, c.indices, upd);
        HostArray out(t, c.operand);
        Scatter(mode, t, operand.data(), c.operand, idx.data(), it, idx.size(),
                upd.data(), c.axis, out.data());
        ASSERT_TRUE(BitEqual(expected, out)) << "out != operand";
        HostArray inplace = operand;
        Scatter(mode, t, inplace.data(), c.operand, idx.data(), it, idx.size(),
                upd.data(), c.axis, inplace.data());
        ASSERT_TRUE(BitEqual(expected, inplace)) << "out == operand";
      }
    }
  }
}

TEST(ScatterTest, AddAccumulatesManyDuplicates) {
  // Every update hits one of 3 rows: each row gets ~1/3 of them, in order.
  HostArray operand(DType::kInt32, Shape{3, 4});
  for (int64_t i = 0; i < 12; ++i) operand.as<int32_t>()[i] = 0;
  std::vector<int64_t> rows(999);
  for (size_t j = 0; j < rows.size(); ++j)
    rows[j] = static_cast<int64_t>(j % 3);
  HostArray upd(DType::kInt32, Shape{999, 4});
  for (int64_t i = 0; i < upd.size(); ++i) upd.as<int32_t>()[i] = 1;
  const HostArray idx = IndicesAs(DType::kInt64, rows);
  Scatter(ScatterMode::kAdd, DType::kInt32, operand.data(), operand.shape(),
          idx.data(), DType::kInt64, idx.size(), upd.data(), 0, operand.data());
  for (int64_t i = 0; i < 12; ++i) EXPECT_EQ(operand.as<int32_t>()[i], 333);
}

TEST(ScatterTest, LargeInPlaceRowsAndColumns) {
  std::mt19937_64 rng(25);
  for (ScatterMode mode : {ScatterMode::kSet, ScatterMode::kAdd}) {
    // Few outer rows, long inner rows: the column split; and many outer rows.
    for (const auto& [shape, axis] :
         {std::pair{Shape{1, 16, 70000}, 1}, std::pair{Shape{4096, 300}, 1}}) {
      SCOPED_TRACE(shape.to_string());
      const HostArray operand = RandomArray(DType::kFloat32, shape, rng);
      std::vector<int64_t> idx(40);
      for (auto& i : idx)
        i = static_cast<int64_t>(rng() % (shape[axis] + 8)) - 4;
      const HostArray upd = RandomArray(
          DType::kFloat32,
          TakeShape(shape, axis, static_cast<int64_t>(idx.size())), rng);
      const HostArray idx_arr = IndicesAs(DType::kInt32, idx);
      const HostArray expected = RefScatter(mode, operand, axis, idx, upd);
      HostArray inplace = operand;
      Scatter(mode, DType::kFloat32, inplace.data(), shape, idx_arr.data(),
              DType::kInt32, idx_arr.size(), upd.data(), axis, inplace.data());
      ASSERT_TRUE(BitEqual(expected, inplace));
    }
  }
}

}  // namespace
}  // namespace baton::cpu
