// Vmap against the per-example oracle, op by op: every combination of
// batched / unbatched operands, batch dimensions first, middle and last,
// batch sizes 1 and 3.
#include <gtest/gtest.h>

#include "batching/batching_test_util.h"
#include "baton/compiler/sort_ops.h"

namespace baton::compiler::batching_test {
namespace {

using V = std::vector<Tracer>;
using P = std::vector<Param>;
constexpr DType F32 = DType::kFloat32;
constexpr DType I32 = DType::kInt32;

TEST(BatchingTest, UnaryAndConvert) {
  P params{{T(F32, {2, 3})}};
  Program f = Trace(params, [](TraceContext&, const V& a) {
    return V{exp(a[0]), astype(a[0], I32), -a[0], floor(a[0])};
  });
  ExpectVmapMatchesEverywhere(f, params);
}

TEST(BatchingTest, BinaryCompareSelect) {
  P params{{T(F32, {2, 3})}, {T(F32, {2, 3})}, {T(DType::kBool, {2, 3})}};
  Program f = Trace(params, [](TraceContext&, const V& a) {
    return V{a[0] * a[1], maximum(a[0], a[1]), lt(a[0], a[1]),
             where(a[2], a[0], a[1])};
  });
  ExpectVmapMatchesEverywhere(f, params);
}

TEST(BatchingTest, IntegerBinaryIsBitwiseExact) {
  P params{{T(I32, {4})}, {T(I32, {4})}};
  Program f = Trace(params, [](TraceContext& ctx, const V& a) {
    return V{a[0] * a[1] - a[0], a[0] & a[1], a[0] + iota(ctx, I32, {4})};
  });
  ExpectVmapMatchesEverywhere(f, params);
}

TEST(BatchingTest, Transfer) {
  P params{{T(F32, {2, 2})}};
  Program f = Trace(params, [](TraceContext&, const V& a) {
    return V{to_memory_kind(a[0] + 1, MemoryKind::kPinnedHost)};
  });
  ExpectVmapMatchesEverywhere(f, params);
}

TEST(BatchingTest, BroadcastInDim) {
  P params{{T(F32, {3})}, {T(F32, {1, 3})}};
  Program f = Trace(params, [](TraceContext&, const V& a) {
    return V{broadcast_in_dim(a[0], Shape{2, 3}, {1}),
             broadcast_in_dim(a[1], Shape{2, 4, 3}, {0, 2}),
             broadcast_in_dim(a[1], Shape{3, 2}, {1, 0})};
  });
  ExpectVmapMatchesEverywhere(f, params);
}

TEST(BatchingTest, ReshapeAndTranspose) {
  P params{{T(F32, {2, 3, 2})}};
  Program f = Trace(params, [](TraceContext&, const V& a) {
    return V{reshape(a[0], {3, 4}), reshape(a[0], {12}),
             transpose(a[0], {2, 0, 1}), transpose(a[0])};
  });
  ExpectVmapMatchesEverywhere(f, params);
}

TEST(BatchingTest, Slice) {
  P params{{T(F32, {5, 4})}};
  Program f = Trace(params, [](TraceContext&, const V& a) {
    return V{slice(a[0], {1, 0}, {5, 3}, {2, 1}), slice(a[0], {0, 1}, {2, 4})};
  });
  ExpectVmapMatchesEverywhere(f, params);
}

TEST(BatchingTest, Concatenate) {
  P params{{T(F32, {2, 1})}, {T(F32, {2, 3})}, {T(F32, {2, 2})}};
  Program f = Trace(params, [](TraceContext&, const V& a) {
    return V{concatenate({a[0], a[1], a[2]}, 1)};
  });
  ExpectVmapMatchesEverywhere(f, params);
}

TEST(BatchingTest, PadWithBatchedOrUnbatchedValue) {
  P params{{T(F32, {3, 2})}, {T(F32, {})}};
  Program f = Trace(params, [](TraceContext&, const V& a) {
    return V{pad(a[0], a[1], {1, -1}, {2, 1}, {1, 0}),
             pad(a[0], a[1], {0, 2}, {-1, 0}, {0, 2})};
  });
  ExpectVmapMatchesEverywhere(f, params);
}

TEST(BatchingTest, Reduce) {
  P params{{T(F32, {2, 3, 4})}};
  Program f = Trace(params, [](TraceContext&, const V& a) {
    return V{sum(a[0], {0, 2}), max(a[0], {1}), prod(a[0]), min(a[0], {2})};
  });
  ExpectVmapMatchesEverywhere(f, params);
}

TEST(BatchingTest, DotGeneral) {
  P params{{T(F32, {2, 3})}, {T(F32, {3, 4})}};
  Program f = Trace(
      params, [](TraceContext&, const V& a) { return V{matmul(a[0], a[1])}; });
  ExpectVmapMatchesEverywhere(f, params);
}

TEST(BatchingTest, DotGeneralWithBatchAndFreeDims) {
  P params{{T(F32, {2, 3, 4})}, {T(F32, {4, 2, 5})}};
  Program f = Trace(params, [](TraceContext&, const V& a) {
    return V{dot_general(a[0], a[1], {{0}, {1}, {2}, {0}}),
             dot_general(a[0], a[1], {{}, {}, {2, 0}, {0, 1}})};
  });
  ExpectVmapMatchesEverywhere(f, params);
}

TEST(BatchingTest, DotGeneralVectors) {
  P params{{T(I32, {3})}, {T(I32, {3})}};
  Program f = Trace(params, [](TraceContext&, const V& a) {
    return V{dot_general(a[0], a[1], {{}, {}, {0}, {0}}),
             dot_general(a[0], a[1], {{}, {}, {}, {}})};  // outer product
  });
  ExpectVmapMatchesEverywhere(f, params);
}

TEST(BatchingTest, ConstantsAndIotaStayUnbatched) {
  P params{{T(F32, {3})}};
  Program f = Trace(params, [](TraceContext& ctx, const V& a) {
    Tracer c = constant(ctx, std::vector<float>{1, 2, 3}, Shape{3});
    return V{a[0] * c, c + 1, iota(ctx, F32, {3})};
  });
  ExpectVmapMatchesEverywhere(f, params);
}

TEST(BatchingTest, DynamicSlice) {
  // Starts beyond both ends exercise the clamping.
  P params{{T(F32, {5, 4})}, {T(I32, {}), -2, 6}, {T(I32, {}), -2, 6}};
  Program f = Trace(params, [](TraceContext&, const V& a) {
    return V{dynamic_slice(a[0], {a[1], a[2]}, {2, 3}),
             dynamic_slice(a[0], {a[2], a[1]}, {5, 1})};
  });
  ExpectVmapMatchesEverywhere(f, params);
}

TEST(BatchingTest, DynamicSliceMixedStartDTypes) {
  P params{{T(F32, {4, 3})},
           {T(DType::kInt64, {}), -1, 5},
           {T(DType::kUInt8, {}), 0, 4}};
  Program f = Trace(params, [](TraceContext&, const V& a) {
    return V{dynamic_slice(a[0], {a[1], a[2]}, {2, 2})};
  });
  ExpectVmapMatchesEverywhere(f, params);
}

TEST(BatchingTest, DynamicUpdateSlice) {
  P params{{T(F32, {5, 4})},
           {T(F32, {2, 3})},
           {T(I32, {}), -2, 6},
           {T(I32, {}), -2, 6}};
  Program f = Trace(params, [](TraceContext&, const V& a) {
    return V{dynamic_update_slice(a[0], a[1], {a[2], a[3]})};
  });
  ExpectVmapMatchesEverywhere(f, params);
}

TEST(BatchingTest, DynamicUpdateSliceEmptyAndFullUpdates) {
  P params{{T(I32, {3, 2})},
           {T(I32, {0, 2})},
           {T(I32, {3, 2})},
           {T(I32, {}), -1, 4}};
  Program f = Trace(params, [](TraceContext& ctx, const V& a) {
    Tracer zero = full(ctx, {}, 0, I32);
    return V{dynamic_update_slice(a[0], a[1], {a[3], zero}),
             dynamic_update_slice(a[0], a[2], {a[3], a[3]})};
  });
  ExpectVmapMatchesEverywhere(f, params);
}

TEST(BatchingTest, Gather) {
  P params{{T(F32, {5, 3})}, {T(I32, {4}), -2, 6}, {T(I32, {2, 2}), -1, 3}};
  Program f = Trace(params, [](TraceContext&, const V& a) {
    return V{take(a[0], a[1], 0), take(a[0], a[2], 1), take(a[0], a[2], 0)};
  });
  ExpectVmapMatchesEverywhere(f, params);
}

TEST(BatchingTest, Sort) {
  // Multiples of 0.25 in [-6, 6]: many ties, so stability is checked too.
  P params{{T(F32, {3, 4})}, {T(I32, {2, 3}), -3, 3}};
  Program f = Trace(params, [](TraceContext&, const V& a) {
    return V{sort(a[0], 0),
             argsort(a[0], 1, true),
             sort(a[0], -1, true),
             argsort(a[1], 0),
             sort(a[1], 1, true),
             take_along_axis_same_shape(a[0], argsort(a[0], 0), 0)};
  });
  ExpectVmapMatchesEverywhere(f, params);
}

TEST(BatchingTest, GatherRank3) {
  P params{{T(I32, {2, 4, 3})}, {T(DType::kInt64, {3}), -1, 4}};
  Program f = Trace(params, [](TraceContext&, const V& a) {
    return V{take(a[0], a[1], 1), take(a[0], a[1], 2)};
  });
  ExpectVmapMatchesEverywhere(f, params);
}

TEST(BatchingTest, GatherAndScatterWithScalarIndex) {
  P params{{T(F32, {4, 2})}, {T(I32, {}), -1, 4}, {T(F32, {4})}};
  Program f = Trace(params, [](TraceContext&, const V& a) {
    return V{take(a[0], a[1], 0), take(a[0], a[1], 1),
             scatter(a[0], a[1], a[2], 1, ScatterMode::kSet)};
  });
  ExpectVmapMatchesEverywhere(f, params);
}

TEST(BatchingTest, ScalarOperands) {
  P params{{T(F32, {})}, {T(F32, {})}};
  Program f = Trace(params, [](TraceContext& ctx, const V& a) {
    Tracer v = broadcast_in_dim(a[0], Shape{2}, {});
    return V{a[0] * a[1],
             v,
             dynamic_slice(a[1], {}, {}),
             dynamic_update_slice(a[0], a[1], {}),
             pad(v, a[1], {1}, {0}),
             reshape(a[0], {1, 1}),
             full(ctx, {}, 1.0f) + a[1]};
  });
  ExpectVmapMatchesEverywhere(f, params);
}

TEST(BatchingTest, ScatterSetAndAdd) {
  // Indices repeat and fall out of range (dropped), in both directions.
  P params{{T(F32, {5, 3})}, {T(I32, {4}), -2, 6}, {T(F32, {4, 3})}};
  Program f = Trace(params, [](TraceContext&, const V& a) {
    return V{scatter(a[0], a[1], a[2], 0, ScatterMode::kSet),
             scatter(a[0], a[1], a[2], 0, ScatterMode::kAdd),
             scatter(a[0], a[1], a[2], 0, ScatterMode::kMax)};
  });
  ExpectVmapMatchesEverywhere(f, params);
}

TEST(BatchingTest, ScatterAlongInnerAxis) {
  P params{
      {T(F32, {2, 4, 3})}, {T(I32, {2, 2}), -1, 4}, {T(F32, {2, 2, 2, 3})}};
  Program f = Trace(params, [](TraceContext&, const V& a) {
    return V{scatter(a[0], a[1], a[2], 1, ScatterMode::kAdd),
             scatter(a[0], a[1], a[2], 1, ScatterMode::kSet)};
  });
  ExpectVmapMatchesEverywhere(f, params);
}

TEST(BatchingTest, ScatterLastAxis) {
  P params{{T(I32, {3, 4})}, {T(I32, {3}), -1, 4}, {T(I32, {3, 3})}};
  Program f = Trace(params, [](TraceContext&, const V& a) {
    return V{scatter(a[0], a[1], a[2], 1, ScatterMode::kMul)};
  });
  ExpectVmapMatchesEverywhere(f, params);
}

TEST(BatchingTest, ScalarAndParameterOutputs) {
  P params{{T(F32, {})}, {T(F32, {2, 3})}};
  Program f = Trace(params, [](TraceContext&, const V& a) {
    return V{a[0], a[1], a[0] * 2, a[1]};
  });
  ExpectVmapMatchesEverywhere(f, params);
}

TEST(BatchingTest, ChainOfOps) {
  // A small MLP-like chain: batch dimensions move between ops.
  P params{{T(F32, {3})}, {T(F32, {3, 4})}, {T(F32, {4})}};
  Program f = Trace(params, [](TraceContext&, const V& a) {
    Tracer h = tanh(matmul(a[0], a[1]) + a[2]);
    Tracer s = sum(h * h);
    return V{s, transpose(reshape(h, {2, 2})), take(h, astype(a[0], I32), 0)};
  });
  ExpectVmapMatchesEverywhere(f, params);
}

TEST(BatchingTest, UnbatchedOutputsAreReportedUnbatched) {
  P params{{T(F32, {2})}, {T(F32, {2})}};
  Program f = Trace(params, [](TraceContext&, const V& a) {
    return V{a[0] + 1, a[1] * 2, a[0] + a[1]};
  });
  BatchedProgram bp = ExpectVmapMatches(f, params, {1, -1}, 3);
  EXPECT_EQ(bp.output_batched, (std::vector<bool>{true, false, true}));
  EXPECT_EQ(bp.program.type(bp.program.outputs()[1]).shape, (Shape{2}));
  EXPECT_EQ(bp.program.parameter_type(0).shape, (Shape{2, 3}));
}

TEST(BatchingTest, UnbatchedOpsAreCopiedUnchanged) {
  P params{{T(F32, {2})}, {T(F32, {2})}};
  Program f = Trace(
      params, [](TraceContext&, const V& a) { return V{exp(a[1]) * a[1]}; });
  Result<BatchedProgram> bp = transforms::Vmap(f, {0, -1}, 3);
  ASSERT_TRUE(bp.ok());
  EXPECT_EQ(bp->program.num_values(), f.num_values());
}

TEST(BatchingTest, NestedVmap) {
  P params{{T(F32, {2, 3})}, {T(F32, {3})}, {T(I32, {2}), -1, 3}};
  Program f = Trace(params, [](TraceContext&, const V& a) {
    return V{matmul(a[0], a[1]) * 2, take(a[0], a[2], 0), sum(a[0], {1})};
  });
  Result<BatchedProgram> inner = transforms::Vmap(f, {1, -1, 0}, 3);
  ASSERT_TRUE(inner.ok()) << inner.status().to_string();
  P inner_params;
  for (int i = 0; i < inner->program.num_parameters(); ++i) {
    inner_params.push_back(
        {inner->program.parameter_type(i), params[i].lo, params[i].hi});
  }
  ExpectVmapMatchesEverywhere(inner->program, inner_params);
}

TEST(BatchingTest, ZeroBatch) {
  P params{{T(F32, {2, 3})}, {T(I32, {2}), 0, 2}};
  Program f = Trace(params, [](TraceContext&, const V& a) {
    return V{sum(a[0], {1}), take(a[0], a[1], 1)};
  });
  ExpectVmapMatches(f, params, {0, 0}, 0);
  ExpectVmapMatches(f, params, {2, -1}, 0);
}

TEST(BatchingTest, InDimsOutOfRange) {
  P params{{T(F32, {2, 3})}};
  Program f = Trace(params, [](TraceContext&, const V& a) { return V{a[0]}; });
  for (int bad : {3, -2, 7}) {
    Result<BatchedProgram> r = transforms::Vmap(f, {bad}, 2);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("in_dims[0]"), std::string::npos)
        << r.status().message();
  }
  Result<BatchedProgram> wrong_count = transforms::Vmap(f, {0, 0}, 2);
  EXPECT_EQ(wrong_count.status().code(), ErrorCode::kInvalidArgument);
  Result<BatchedProgram> negative = transforms::Vmap(f, {0}, -1);
  EXPECT_EQ(negative.status().code(), ErrorCode::kInvalidArgument);
}

// Found by fuzz_program_builder's vmap check: an empty value of shape
// (2^58, 0) is valid, but batched by 2 its dimensions multiply past what a
// shape may hold. vmap refuses that up front (InvalidArgument naming the
// value), not as an internal error from a batching rule.
TEST(BatchingTest, BatchThatMakesAShapeTooLargeIsRefused) {
  const int64_t huge = int64_t{1} << 58;
  P params{{T(F32, {huge, 0})}};
  Program f = Trace(params, [](TraceContext&, const V& a) { return V{-a[0]}; });
  Result<BatchedProgram> r = transforms::Vmap(f, {0}, 2);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("too large to batch"), std::string::npos)
      << r.status().message();
  // A batch of 1 fits.
  EXPECT_TRUE(transforms::Vmap(f, {0}, 1).ok());
}

}  // namespace
}  // namespace baton::compiler::batching_test
