// Layout kernels against naive index-by-index loops: every element size,
// ranks 0-4, empty dims, strides, negative padding, and >1M elements.
#include "baton/backend/cpu/kernels/shape_ops.h"

#include <gtest/gtest.h>

#include "kernel_test_util.h"

namespace baton::cpu {
namespace {

using testing::AllDTypes;
using testing::BitEqual;
using testing::HostArray;
using testing::RandomArray;
using testing::Ravel;
using testing::Unravel;

// One dtype per element size, then the rest for the small cases.
const DType kSizeDTypes[] = {DType::kUInt8, DType::kFloat16, DType::kFloat32,
                             DType::kInt64};

HostArray RefBroadcast(const HostArray& in, const std::vector<int64_t>& bdims,
                       const Shape& out_shape) {
  HostArray out(in.dtype(), out_shape);
  for (int64_t f = 0; f < out.size(); ++f) {
    const std::vector<int64_t> oi = Unravel(f, out_shape.dims());
    std::vector<int64_t> ii(in.shape().rank());
    for (int k = 0; k < in.shape().rank(); ++k) {
      ii[k] = in.shape()[k] == 1 ? 0 : oi[bdims[k]];
    }
    out.CopyElement(f, in, Ravel(ii, in.shape().dims()));
  }
  return out;
}

TEST(BroadcastInDimTest, MatchesReference) {
  struct Case {
    Shape in;
    std::vector<int64_t> bdims;
    Shape out;
  };
  const std::vector<Case> cases = {
      {Shape{}, {}, Shape{}},
      {Shape{}, {}, Shape{3, 4}},
      {Shape{4}, {1}, Shape{3, 4}},
      {Shape{3}, {0}, Shape{3, 4}},
      {Shape{1, 4}, {0, 1}, Shape{3, 4}},
      {Shape{2, 1, 3}, {0, 1, 2}, Shape{2, 5, 3}},
      {Shape{2, 1, 3}, {0, 2, 3}, Shape{2, 7, 5, 3}},
      {Shape{3, 2}, {1, 0}, Shape{2, 3}},  // dims may permute
      {Shape{0}, {1}, Shape{3, 0}},
      {Shape{5}, {0}, Shape{5, 0}},
      {Shape{1, 2048}, {0, 1}, Shape{1024, 2048}},  // 2M: parallel rows
      {Shape{2048, 1}, {0, 1}, Shape{2048, 1024}},  // 2M: parallel fills
      {Shape{}, {}, Shape{1 << 21}},
  };
  std::mt19937_64 rng(10);
  for (const Case& c : cases) {
    for (DType t : AllDTypes()) {
      if (c.out.num_elements() > 100000 &&
          std::find(std::begin(kSizeDTypes), std::end(kSizeDTypes), t) ==
              std::end(kSizeDTypes)) {
        continue;
      }
      SCOPED_TRACE(c.in.to_string() + " -> " + c.out.to_string() + " " +
                   std::string(dtype_name(t)));
      const HostArray in = RandomArray(t, c.in, rng);
      HostArray out(t, c.out);
      BroadcastInDim(t, in.data(), c.in, c.bdims, out.data(), c.out);
      ASSERT_TRUE(BitEqual(RefBroadcast(in, c.bdims, c.out), out));
    }
  }
}

HostArray RefTranspose(const HostArray& in, const std::vector<int64_t>& perm) {
  std::vector<int64_t> out_dims(perm.size());
  for (size_t d = 0; d < perm.size(); ++d) out_dims[d] = in.shape()[perm[d]];
  HostArray out(in.dtype(), Shape(out_dims));
  for (int64_t f = 0; f < out.size(); ++f) {
    const std::vector<int64_t> oi = Unravel(f, out_dims);
    std::vector<int64_t> ii(perm.size());
    for (size_t d = 0; d < perm.size(); ++d) ii[perm[d]] = oi[d];
    out.CopyElement(f, in, Ravel(ii, in.shape().dims()));
  }
  return out;
}

TEST(TransposeTest, MatchesReference) {
  struct Case {
    Shape in;
    std::vector<int64_t> perm;
  };
  const std::vector<Case> cases = {
      {Shape{}, {}},
      {Shape{7}, {0}},
      {Shape{3, 5}, {1, 0}},
      {Shape{33, 70}, {1, 0}},   // tile edges
      {Shape{130, 67}, {1, 0}},  // several tiles, ragged
      {Shape{2, 3, 4}, {2, 0, 1}},
      {Shape{9, 40, 50}, {0, 2, 1}},  // batched 2-D transposes
      {Shape{40, 9, 50}, {2, 1, 0}},
      {Shape{4, 1, 3, 1}, {3, 2, 1, 0}},
      {Shape{2, 3, 4, 5}, {1, 3, 0, 2}},
      {Shape{3, 0, 2}, {2, 1, 0}},
      {Shape{1500, 1400}, {1, 0}},  // 2.1M: parallel tiles
      {Shape{64, 128, 160}, {2, 1, 0}},
  };
  std::mt19937_64 rng(11);
  for (const Case& c : cases) {
    for (DType t : AllDTypes()) {
      if (c.in.num_elements() > 100000 &&
          std::find(std::begin(kSizeDTypes), std::end(kSizeDTypes), t) ==
              std::end(kSizeDTypes)) {
        continue;
      }
      SCOPED_TRACE(c.in.to_string() + " " + std::string(dtype_name(t)));
      const HostArray in = RandomArray(t, c.in, rng);
      const HostArray expected = RefTranspose(in, c.perm);
      HostArray out(t, expected.shape());
      Transpose(t, in.data(), c.in, c.perm, out.data());
      ASSERT_TRUE(BitEqual(expected, out));
    }
  }
}

TEST(SliceTest, MatchesReference) {
  struct Case {
    Shape in;
    std::vector<int64_t> start, limit, stride;
  };
  const std::vector<Case> cases = {
      {Shape{}, {}, {}, {}},
      {Shape{10}, {2}, {7}, {1}},
      {Shape{10}, {1}, {10}, {3}},
      {Shape{10}, {4}, {4}, {1}},  // empty
      {Shape{6, 8}, {1, 2}, {5, 8}, {2, 3}},
      {Shape{4, 5, 6}, {0, 1, 0}, {4, 5, 6}, {1, 1, 5}},
      {Shape{3, 4, 5, 6}, {1, 0, 2, 1}, {3, 4, 5, 6}, {1, 2, 1, 2}},
      {Shape{0, 4}, {0, 1}, {0, 3}, {1, 1}},
      {Shape{2048, 1100}, {3, 5}, {2048, 1095}, {1, 1}},  // >1M, row copies
      {Shape{2048, 2100}, {0, 1}, {2048, 2100}, {1, 2}},  // strided, >1M
  };
  std::mt19937_64 rng(12);
  for (const Case& c : cases) {
    for (DType t : AllDTypes()) {
      if (c.in.num_elements() > 100000 &&
          std::find(std::begin(kSizeDTypes), std::end(kSizeDTypes), t) ==
              std::end(kSizeDTypes)) {
        continue;
      }
      SCOPED_TRACE(c.in.to_string() + " " + std::string(dtype_name(t)));
      const HostArray in = RandomArray(t, c.in, rng);
      std::vector<int64_t> out_dims(c.start.size());
      for (size_t d = 0; d < out_dims.size(); ++d) {
        out_dims[d] = std::max<int64_t>(
            0, (c.limit[d] - c.start[d] + c.stride[d] - 1) / c.stride[d]);
      }
      HostArray expected(t, Shape(out_dims));
      for (int64_t f = 0; f < expected.size(); ++f) {
        std::vector<int64_t> idx = Unravel(f, out_dims);
        for (size_t d = 0; d < idx.size(); ++d) {
          idx[d] = c.start[d] + idx[d] * c.stride[d];
        }
        expected.CopyElement(f, in, Ravel(idx, c.in.dims()));
      }
      HostArray out(t, Shape(out_dims));
      Slice(t, in.data(), c.in, c.start, c.limit, c.stride, out.data());
      ASSERT_TRUE(BitEqual(expected, out));
    }
  }
}

TEST(ConcatenateTest, MatchesReference) {
  struct Case {
    std::vector<Shape> shapes;
    int dim;
  };
  const std::vector<Case> cases = {
      {{Shape{3}, Shape{4}}, 0},
      {{Shape{2, 3}, Shape{1, 3}, Shape{4, 3}}, 0},
      {{Shape{2, 3}, Shape{2, 0}, Shape{2, 5}}, 1},
      {{Shape{2, 3, 4}, Shape{2, 1, 4}}, 1},
      {{Shape{2, 3, 4}, Shape{2, 3, 1}, Shape{2, 3, 7}}, 2},
      {{Shape{0, 3}, Shape{0, 2}}, 1},
      {{Shape{700, 1000}, Shape{700, 600}}, 1},  // >1M
      {{Shape{600, 1024}, Shape{500, 1024}}, 0},
  };
  std::mt19937_64 rng(13);
  for (const Case& c : cases) {
    std::vector<int64_t> out_dims = c.shapes[0].dims();
    out_dims[c.dim] = 0;
    for (const Shape& s : c.shapes) out_dims[c.dim] += s[c.dim];
    for (DType t : AllDTypes()) {
      if (Shape(out_dims).num_elements() > 100000 &&
          std::find(std::begin(kSizeDTypes), std::end(kSizeDTypes), t) ==
              std::end(kSizeDTypes)) {
        continue;
      }
      SCOPED_TRACE(Shape(out_dims).to_string() + " " +
                   std::string(dtype_name(t)));
      std::vector<HostArray> ins;
      std::vector<const void*> ptrs;
      for (const Shape& s : c.shapes) ins.push_back(RandomArray(t, s, rng));
      for (const HostArray& a : ins) ptrs.push_back(a.data());
      HostArray expected(t, Shape(out_dims));
      for (int64_t f = 0; f < expected.size(); ++f) {
        std::vector<int64_t> idx = Unravel(f, out_dims);
        size_t k = 0;
        while (idx[c.dim] >= c.shapes[k][c.dim])
          idx[c.dim] -= c.shapes[k++][c.dim];
        expected.CopyElement(f, ins[k], Ravel(idx, c.shapes[k].dims()));
      }
      HostArray out(t, Shape(out_dims));
      Concatenate(t, ptrs, c.shapes, c.dim, out.data());
      ASSERT_TRUE(BitEqual(expected, out));
    }
  }
}

TEST(PadTest, MatchesReferenceIncludingCropping) {
  struct Case {
    Shape in;
    std::vector<int64_t> low, high, interior;
  };
  const std::vector<Case> cases = {
      {Shape{}, {}, {}, {}},
      {Shape{5}, {2}, {3}, {0}},
      {Shape{5}, {0}, {0}, {2}},
      {Shape{5}, {-2}, {-1}, {0}},  // crop both ends
      {Shape{5}, {-3}, {2}, {1}},   // crop into interior padding
      {Shape{5}, {-3}, {-2}, {0}},  // crops everything: empty
      {Shape{4}, {-9}, {3}, {1}},   // crops all of the input, keeps padding
      {Shape{3, 4}, {1, -1}, {2, 1}, {1, 0}},
      {Shape{2, 3, 4}, {0, 1, -1}, {1, -1, 2}, {2, 0, 1}},
      {Shape{0, 3}, {2, 1}, {1, 0}, {3, 1}},
      {Shape{2, 2, 2, 2}, {1, 0, -1, 0}, {0, 1, 1, -1}, {0, 1, 0, 2}},
      {Shape{3, 4, 5}, {1, 0, -1}, {2, -1, 3}, {0, 0, 0}},  // border fill
      {Shape{4, 3, 2}, {0, 2, 0}, {0, 0, 1}, {0, 0, 0}},
      {Shape{2, 3}, {0, 0}, {0, 0}, {0, 0}},         // no padding at all
      {Shape{1000, 1000}, {3, -2}, {5, 7}, {0, 0}},  // >1M
      {Shape{700, 800}, {0, 1}, {1, 0}, {1, 1}},
  };
  std::mt19937_64 rng(14);
  for (const Case& c : cases) {
    const int rank = c.in.rank();
    std::vector<int64_t> out_dims(rank);
    for (int d = 0; d < rank; ++d) {
      out_dims[d] = c.low[d] + c.high[d] + c.in[d] +
                    std::max<int64_t>(c.in[d] - 1, 0) * c.interior[d];
    }
    for (DType t : AllDTypes()) {
      if (c.in.num_elements() > 100000 &&
          std::find(std::begin(kSizeDTypes), std::end(kSizeDTypes), t) ==
              std::end(kSizeDTypes)) {
        continue;
      }
      SCOPED_TRACE(c.in.to_string() + " -> " + Shape(out_dims).to_string() +
                   " " + std::string(dtype_name(t)));
      const HostArray in = RandomArray(t, c.in, rng);
      const HostArray pad_value = RandomArray(t, Shape{}, rng);
      HostArray expected(t, Shape(out_dims));
      for (int64_t f = 0; f < expected.size(); ++f) {
        const std::vector<int64_t> oi = Unravel(f, out_dims);
        std::vector<int64_t> ii(rank);
        bool from_input = true;
        for (int d = 0; d < rank; ++d) {
          const int64_t p = oi[d] - c.low[d];
          const int64_t step = c.interior[d] + 1;
          if (p < 0 || p % step != 0 || p / step >= c.in[d]) {
            from_input = false;
          } else {
            ii[d] = p / step;
          }
        }
        if (from_input) {
          expected.CopyElement(f, in, Ravel(ii, c.in.dims()));
        } else {
          expected.CopyElement(f, pad_value, 0);
        }
      }
      HostArray out(t, Shape(out_dims));
      Pad(t, in.data(), c.in, pad_value.data(), c.low, c.high, c.interior,
          out.data());
      ASSERT_TRUE(BitEqual(expected, out));
    }
  }
}

TEST(IotaTest, EveryDimensionAndDType) {
  const std::vector<Shape> shapes = {
      Shape{},           Shape{0},       Shape{7},         Shape{3, 4},
      Shape{2, 3, 4, 5}, Shape{4, 0, 3}, Shape{3, 1 << 19}};
  for (const Shape& s : shapes) {
    for (int dim = 0; dim < std::max(1, s.rank()); ++dim) {
      for (DType t : AllDTypes()) {
        SCOPED_TRACE(s.to_string() + " dim=" + std::to_string(dim) + " " +
                     std::string(dtype_name(t)));
        HostArray expected(t, s);
        VisitDType(t, [&](auto tag) {
          using T = typename decltype(tag)::type;
          for (int64_t f = 0; f < expected.size(); ++f) {
            const int64_t v = s.rank() == 0 ? 0 : Unravel(f, s.dims())[dim];
            expected.as<T>()[f] = ConvertElement<T, int64_t>(v);
          }
        });
        HostArray out(t, s);
        Iota(t, s, dim, out.data());
        ASSERT_TRUE(BitEqual(expected, out));
      }
    }
  }
}

TEST(CopyTest, LargeAndSelf) {
  std::mt19937_64 rng(15);
  const HostArray in = RandomArray(DType::kFloat32, Shape{(1 << 21) + 7}, rng);
  HostArray out(DType::kFloat32, in.shape());
  Copy(in.data(), out.data(), static_cast<int64_t>(in.nbytes()));
  EXPECT_TRUE(BitEqual(in, out));
  Copy(out.data(), out.data(), static_cast<int64_t>(out.nbytes()));  // no-op
  EXPECT_TRUE(BitEqual(in, out));
  Copy(in.data(), out.data(), 0);
}

}  // namespace
}  // namespace baton::cpu
