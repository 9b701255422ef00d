// The generated shape and indexing kernels (backend/cuda/codegen/
// emit_shape_ops.cc) against the reference interpreter: each function is
// planned as the CPU backend plans it, emitted, compiled for the host and
// run there (codegen_harness.h). Needs no GPU.
//
// These ops move storage values (scatter's combining modes aside, which
// compute as the CPU does), so every result must be bitwise the
// reference's. Most arguments are random bytes: float arguments then hold
// NaNs with payloads, signaling ones included, which any trip through a
// float register that is not a plain move would change.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "baton/backend/cuda/codegen/kernel_emitter.h"
#include "baton/compiler/passes.h"
#include "baton/compiler/step_plan.h"
#include "codegen/codegen_harness.h"

namespace baton {
namespace {

using compiler::Literal;
using namespace baton::testing;

constexpr DType kAllDTypes[] = {
    DType::kBool,     DType::kInt8,    DType::kInt16,  DType::kInt32,
    DType::kInt64,    DType::kUInt8,   DType::kUInt32, DType::kFloat16,
    DType::kBFloat16, DType::kFloat32, DType::kFloat64};
// The dtypes every op is run over (one of each width, bool and both
// 16-bit floats); kAllDTypes where the op computes.
const std::vector<DType> kDTypes = {DType::kBool,     DType::kInt8,
                                    DType::kInt64,    DType::kFloat16,
                                    DType::kBFloat16, DType::kFloat32};
constexpr DType kIndexDTypes[] = {DType::kInt8,  DType::kInt16, DType::kInt32,
                                  DType::kInt64, DType::kUInt8, DType::kUInt32};

constexpr int64_t kMin64 = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax64 = std::numeric_limits<int64_t>::max();

// Pseudo-random bytes (bool: 0 or 1), different per `seed`.
Literal Bits(DType dtype, Shape shape, uint32_t seed = 1) {
  Literal l(std::move(shape), dtype);
  auto* p = static_cast<unsigned char*>(l.untyped_mutable_data());
  uint32_t s = seed * 2654435761u + 12345u;
  for (int64_t i = 0; i < l.byte_size(); ++i) {
    s = s * 1664525u + 1013904223u;
    p[i] = static_cast<unsigned char>(s >> 24);
    if (dtype == DType::kBool) p[i] &= 1;
  }
  return l;
}

// Small values that every dtype holds exactly (bool: alternating), for ops
// that compute: scatter's add/mul/min/max.
Literal Small(DType dtype, Shape shape, int seed = 0) {
  std::vector<double> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) {
    const int64_t k = static_cast<int64_t>(i) * 7 + seed * 3;
    v[i] = dtype == DType::kBool ? k % 3 == 0 : k % 11 - 3 + 0.5 * (k % 2);
  }
  return Literal::FromDoubles(dtype, std::move(shape), v);
}

// An integer literal of `dtype` (values saturate into narrow types).
Literal Ints(DType dtype, Shape shape, const std::vector<int64_t>& v) {
  Literal l(std::move(shape), dtype);
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      for (size_t i = 0; i < v.size(); ++i) {
        l.mutable_data<T>()[i] = static_cast<T>(v[i]);
      }
    }
  });
  return l;
}
Literal Index(DType dtype, int64_t v) { return Ints(dtype, Shape{}, {v}); }

// Runs `fn` on `args` on both devices, for each dtype of `dtypes`, with
// the arguments made by `make(dtype)`.
template <typename Make>
void ForDTypes(CodegenBatch& b, const std::vector<DType>& dtypes,
               const TraceFn& fn, Make make, const std::string& name) {
  for (DType dtype : dtypes) {
    b.SetContext(std::string(dtype_name(dtype)));
    b.ExpectSameBits(name, fn, make(dtype));
  }
}

TEST(EmittedShapeOpsTest, BroadcastInDim) {
  CodegenBatch b;
  const TraceFn fn = [](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{
        broadcast_in_dim(a[0], Shape{2, 3}, {}),
        broadcast_in_dim(a[0], Shape{}, {}),
        broadcast_in_dim(a[1], Shape{2, 3, 4}, {1}),
        broadcast_in_dim(a[1], Shape{3, 2}, {0}),
        broadcast_in_dim(a[2], Shape{2, 4, 3}, {0, 2}),
        broadcast_in_dim(a[3], Shape{4, 3, 2, 5}, {0, 1, 3}),
        broadcast_in_dim(a[4], Shape{2, 4, 3, 2}, {0, 1, 2, 3}),
        broadcast_in_dim(a[4], Shape{2, 2, 3, 3}, {0, 1, 2, 3}),
        broadcast_in_dim(a[1], Shape{0, 3}, {1}),
        broadcast_in_dim(a[5], Shape{4, 0}, {1}),
    };
  };
  ForDTypes(
      b, kDTypes, fn,
      [](DType d) {
        return std::vector<Literal>{
            Bits(d, Shape{}, 1),           Bits(d, Shape{3}, 2),
            Bits(d, Shape{2, 1}, 3),       Bits(d, Shape{1, 3, 1}, 4),
            Bits(d, Shape{2, 1, 3, 1}, 5), Bits(d, Shape{0}, 6)};
      },
      "broadcast");
  b.Run();
}

TEST(EmittedShapeOpsTest, Transpose) {
  CodegenBatch b;
  const TraceFn fn = [](TraceScope&, const std::vector<Tracer>& a) {
    std::vector<Tracer> out = {transpose(a[0], {}), transpose(a[1], {0}),
                               transpose(a[2], {1, 0}),
                               transpose(a[5], {1, 0})};
    const std::vector<std::vector<int64_t>> perms3 = {
        {0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    for (const auto& p : perms3) {
      out.push_back(transpose(a[3], p));
      out.push_back(transpose(a[6], p));
    }
    for (const std::vector<int64_t>& p :
         std::vector<std::vector<int64_t>>{{3, 2, 1, 0},
                                           {0, 2, 1, 3},
                                           {3, 1, 0, 2},
                                           {1, 3, 0, 2},
                                           {2, 0, 3, 1}}) {
      out.push_back(transpose(a[4], p));
    }
    return out;
  };
  ForDTypes(
      b, kDTypes, fn,
      [](DType d) {
        return std::vector<Literal>{
            Bits(d, Shape{}, 1),           Bits(d, Shape{5}, 2),
            Bits(d, Shape{3, 7}, 3),       Bits(d, Shape{2, 3, 4}, 4),
            Bits(d, Shape{2, 3, 1, 5}, 5), Bits(d, Shape{0, 3}, 6),
            Bits(d, Shape{4, 1, 6}, 7)};
      },
      "transpose");
  b.Run();
}

TEST(EmittedShapeOpsTest, StridedSlices) {
  CodegenBatch b;
  const TraceFn fn = [](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{
        slice(a[0], {}, {}),
        slice(a[1], {2}, {9}),
        slice(a[1], {1}, {10}, {3}),
        slice(a[1], {4}, {4}),             // empty
        slice(a[1], {3}, {10}, {kMax64}),  // one element, huge stride
        slice(a[2], {1, 0}, {4, 7}, {2, 3}),
        slice(a[2], {0, 6}, {5, 7}, {1, 5}),
        slice(a[3], {1, 0, 2}, {3, 3, 5}, {1, 2, 2}),
        slice(a[4], {0, 1, 0, 1}, {2, 3, 4, 5}, {1, 1, 3, 2}),
        slice(a[4], {1, 2, 3, 4}, {2, 3, 4, 5}),
        slice(a[4], {0, 0, 0, 0}, {2, 0, 4, 5}),  // empty
    };
  };
  ForDTypes(
      b, kDTypes, fn,
      [](DType d) {
        return std::vector<Literal>{
            Bits(d, Shape{}, 1), Bits(d, Shape{10}, 2), Bits(d, Shape{5, 7}, 3),
            Bits(d, Shape{3, 4, 5}, 4), Bits(d, Shape{2, 3, 4, 5}, 5)};
      },
      "slice");
  b.Run();
}

TEST(EmittedShapeOpsTest, PadLowHighInteriorAndCrops) {
  CodegenBatch b;
  const TraceFn fn = [](TraceScope&, const std::vector<Tracer>& a) {
    const Tracer& v = a[0];  // the padding value, a traced scalar
    return std::vector<Tracer>{
        pad(a[1], v, {}, {}),
        pad(a[2], v, {2}, {3}),
        pad(a[2], v, {-2}, {-1}),
        pad(a[2], v, {1}, {2}, {2}),
        pad(a[2], v, {-3}, {-4}, {2}),  // crops into the interior
        pad(a[2], v, {-5}, {2}, {1}),
        pad(a[2], v, {-6}, {0}),  // everything cropped: empty
        pad(a[3], v, {1, -1}, {-2, 3}, {0, 1}),
        pad(a[3], v, {0, 0}, {0, 0}, {3, 0}),
        pad(a[4], v, {1, 0, -1}, {0, 2, 1}, {1, 0, 2}),
        pad(a[5], v, {1, -1, 0, 2}, {-1, 1, 1, 0}, {0, 2, 0, 1}),
        pad(a[6], v, {2, 1}, {1, 0}),  // empty operand: all padding
        pad(a[6], v, {1, 0}, {0, 0}, {4, 2}),
        pad(a[7], v, {0}, {0}, {5}),  // one element: interior unused
        pad(a[7], v, {-1}, {1}),
    };
  };
  ForDTypes(
      b, kDTypes, fn,
      [](DType d) {
        return std::vector<Literal>{
            Bits(d, Shape{}, 1),        Bits(d, Shape{}, 2),
            Bits(d, Shape{6}, 3),       Bits(d, Shape{3, 4}, 4),
            Bits(d, Shape{2, 3, 4}, 5), Bits(d, Shape{2, 3, 2, 3}, 6),
            Bits(d, Shape{2, 0}, 7),    Bits(d, Shape{1}, 8)};
      },
      "pad");
  b.Run();
}

TEST(EmittedShapeOpsTest, PadWithAConstantValue) {
  CodegenBatch b;
  const TraceFn fn = [](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{pad(a[0], 3, {1, -1}, {2, 0}, {1, 1})};
  };
  ForDTypes(
      b, kDTypes, fn,
      [](DType d) {
        return std::vector<Literal>{Bits(d, Shape{4, 5}, 9)};
      },
      "pad_constant");
  b.Run();
}

TEST(EmittedShapeOpsTest, Concatenate) {
  CodegenBatch b;
  const TraceFn fn = [](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{
        // One operand: the op itself (the tracer would return it as is).
        a[0].context()->Emit(compiler::ConcatenateAttrs{0}, {a[0]}),
        compiler::concatenate({a[0], a[1], a[0]}, 0),
        compiler::concatenate({a[2], a[3]}, 0),
        compiler::concatenate({a[2], a[4], a[2]}, 1),  // a[4] is empty along 1
        compiler::concatenate({a[5], a[5], a[6]}, 2),
        compiler::concatenate({a[7], a[7]}, 3),
        compiler::concatenate({a[7], a[7]}, 0),
        compiler::concatenate({a[4], a[4]}, 1),  // all empty
    };
  };
  ForDTypes(
      b, kDTypes, fn,
      [](DType d) {
        return std::vector<Literal>{
            Bits(d, Shape{3}, 1),       Bits(d, Shape{5}, 2),
            Bits(d, Shape{2, 3}, 3),    Bits(d, Shape{4, 3}, 4),
            Bits(d, Shape{2, 0}, 5),    Bits(d, Shape{2, 3, 1}, 6),
            Bits(d, Shape{2, 3, 4}, 7), Bits(d, Shape{2, 1, 3, 2}, 8)};
      },
      "concatenate");
  b.Run();
}

TEST(EmittedShapeOpsTest, ConcatenateOfSeventyOperands) {
  CodegenBatch b;
  // More operands than one kernel binds: split over several kernels, each
  // writing its columns. Sizes vary, some are empty, one repeats.
  const TraceFn fn = [](TraceScope&, const std::vector<Tracer>& a) {
    std::vector<Tracer> along1, along0;
    for (size_t i = 0; i < a.size(); ++i) along1.push_back(a[i]);
    along1.push_back(a[3]);
    for (const Tracer& t : a) along0.push_back(transpose(t, {1, 0}));
    return std::vector<Tracer>{concatenate(along1, 1), concatenate(along0, 0)};
  };
  ForDTypes(
      b, {DType::kFloat32, DType::kInt8, DType::kFloat16}, fn,
      [](DType d) {
        std::vector<Literal> args;
        for (int i = 0; i < 70; ++i) {
          args.push_back(Bits(d, Shape{3, i % 5 == 4 ? 0 : i % 3 + 1},
                              static_cast<uint32_t>(i + 1)));
        }
        return args;
      },
      "concatenate70");
  // The plan itself: 71 operand uses in 2 kernels.
  compiler::TraceContext ctx;
  std::vector<Tracer> xs;
  for (int i = 0; i < 71; ++i) {
    xs.push_back(ctx.AddParameter({Shape{2, 1 + i % 2}, DType::kFloat32}));
  }
  const compiler::Program p =
      compiler::Optimize(ctx.Finish({concatenate(xs, 1)}));
  auto emitted = cuda::codegen::EmitProgram(p, compiler::PlanSteps(p), {},
                                            "concatenate71");
  ASSERT_TRUE(emitted.ok()) << emitted.status().to_string();
  int kernels = 0;
  for (const cuda::codegen::Action& act : emitted->actions) {
    ASSERT_EQ(act.kind, cuda::codegen::Action::Kind::kKernel);
    EXPECT_LE(act.args.size(), cuda::codegen::kMaxKernelArgs);
    ++kernels;
  }
  EXPECT_EQ(kernels, 2);
  b.Run();
}

TEST(EmittedShapeOpsTest, DynamicSliceStartsOfEveryIntegerType) {
  CodegenBatch b;
  const TraceFn fn = [](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{
        dynamic_slice(a[0], {}, {}),
        dynamic_slice(a[1], {a[5]}, {3}),
        dynamic_slice(a[1], {a[6]}, {0}),
        dynamic_slice(a[1], {a[7]}, {10}),
        dynamic_slice(a[2], {a[5], a[6]}, {2, 3}),
        dynamic_slice(a[3], {a[7], a[5], a[6]}, {1, 2, 4}),
        dynamic_slice(a[4], {a[6], a[7], a[5], a[5]}, {1, 2, 2, 3}),
        dynamic_slice(a[4], {a[5], a[6], a[7], a[5]}, {2, 3, 4, 5}),
    };
  };
  // Starts: in range, negative, past the end (clamped to dim - size), and
  // the extremes of the type.
  const int64_t starts[][3] = {{1, 2, 0},
                               {-1, 7, 3},
                               {100, -100, 1},
                               {kMax64, kMin64, 2},
                               {kMin64, kMax64, -2}};
  for (DType index : kIndexDTypes) {
    for (const auto& s : starts) {
      b.SetContext(std::string(dtype_name(index)) + " starts " +
                   std::to_string(s[0]) + ", " + std::to_string(s[1]) + ", " +
                   std::to_string(s[2]));
      for (DType d : {DType::kFloat32, DType::kBool, DType::kFloat16}) {
        b.ExpectSameBits("dynamic_slice", fn,
                         {Bits(d, Shape{}, 1), Bits(d, Shape{10}, 2),
                          Bits(d, Shape{4, 5}, 3), Bits(d, Shape{3, 4, 5}, 4),
                          Bits(d, Shape{2, 3, 4, 5}, 5), Index(index, s[0]),
                          Index(index, s[1]), Index(index, s[2])});
      }
    }
  }
  // Starts of mixed types in one op.
  const TraceFn mixed = [](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{dynamic_slice(a[0], {a[1], a[2]}, {2, 2})};
  };
  ForDTypes(
      b, kDTypes, mixed,
      [](DType d) {
        return std::vector<Literal>{Bits(d, Shape{4, 6}, 7),
                                    Index(DType::kInt8, -128),
                                    Index(DType::kInt64, 3)};
      },
      "dynamic_slice_mixed");
  b.Run();
}

// The update written over its (donatable) operand: here every value has
// storage of its own, so this checks the copy-then-update kernels; running
// them in place over shared storage is the runner's (not yet written).
void ExpectSameDonatedOrNot(CodegenBatch& b, const TraceFn& fn,
                            const std::vector<Literal>& args,
                            const std::string& name) {
  b.ExpectSameBits(name, fn, args);
}

TEST(EmittedShapeOpsTest, DynamicUpdateSlice) {
  CodegenBatch b;
  const TraceFn fn = [](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{
        dynamic_update_slice(a[0], a[1], {}),
        dynamic_update_slice(a[2], a[3], {a[8]}),
        dynamic_update_slice(a[2], a[4], {a[9]}),  // empty update
        dynamic_update_slice(a[5], a[6], {a[8], a[9], a[10]}),
        dynamic_update_slice(a[7], a[7], {a[10], a[8], a[9], a[8]}),
        dynamic_update_slice(a[7], slice(a[7], {0, 0, 1, 1}, {1, 2, 3, 4}),
                             {a[9], a[10], a[8], a[9]}),
    };
  };
  const int64_t starts[][3] = {
      {0, 1, 2}, {-3, 9, 1}, {kMax64, kMin64, 100}, {kMin64, -1, kMax64}};
  for (DType index :
       {DType::kInt8, DType::kInt32, DType::kInt64, DType::kUInt32}) {
    for (const auto& s : starts) {
      b.SetContext(std::string(dtype_name(index)) + " starts " +
                   std::to_string(s[0]) + ", " + std::to_string(s[1]) + ", " +
                   std::to_string(s[2]));
      for (DType d : {DType::kFloat32, DType::kInt8, DType::kBool}) {
        b.ExpectSameBits(
            "dynamic_update_slice", fn,
            {Bits(d, Shape{}, 1), Bits(d, Shape{}, 2), Bits(d, Shape{9}, 3),
             Bits(d, Shape{4}, 4), Bits(d, Shape{0}, 5),
             Bits(d, Shape{3, 4, 5}, 6), Bits(d, Shape{2, 1, 3}, 7),
             Bits(d, Shape{2, 3, 4, 5}, 8), Index(index, s[0]),
             Index(index, s[1]), Index(index, s[2])});
      }
    }
  }
  b.Run();
}

TEST(EmittedShapeOpsTest, DynamicUpdateSliceInPlaceOrCopied) {
  CodegenBatch b;
  const TraceFn fn = [](TraceScope&, const std::vector<Tracer>& a) {
    // Two updates in a row: the second writes over the first's result.
    const Tracer once = dynamic_update_slice(a[0], a[1], {a[2], a[3]});
    return std::vector<Tracer>{dynamic_update_slice(once, a[1], {a[3], a[2]})};
  };
  for (DType d : kDTypes) {
    b.SetContext(std::string(dtype_name(d)));
    ExpectSameDonatedOrNot(b, fn,
                           {Bits(d, Shape{5, 6}, 1), Bits(d, Shape{2, 3}, 2),
                            Index(DType::kInt32, 4), Index(DType::kInt8, -2)},
                           "dus_in_place");
  }
  b.Run();
}

TEST(EmittedShapeOpsTest, GeneralGatherClampsIndices) {
  CodegenBatch b;
  const TraceFn fn = [](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{
        take(a[0], a[4], 0),  // table form (elementwise emitter)
        take(a[1], a[4], 0), take(a[1], a[4], 1),
        take(a[1], a[5], 1),  // scalar index: a dimension disappears
        take(a[2], a[6], 1),  // 2-D indices inside a 3-D operand
        take(a[2], a[4], 2), take(a[3], a[6], 0),
        take(a[3], a[7], 3),  // empty indices
    };
  };
  // Indices in range, negative (clamped to 0) and too large (to d - 1).
  const std::vector<int64_t> idx = {0, 2, -1, 3, 100, -128, 1, 127};
  for (DType index : kIndexDTypes) {
    b.SetContext(std::string(dtype_name(index)));
    ForDTypes(
        b, kDTypes, fn,
        [&](DType d) {
          return std::vector<Literal>{
              Bits(d, Shape{5}, 1),
              Bits(d, Shape{4, 3}, 2),
              Bits(d, Shape{2, 4, 3}, 3),
              Bits(d, Shape{3, 2, 2, 4}, 4),
              Ints(index, Shape{8}, idx),
              Ints(index, Shape{}, {-7}),
              Ints(index, Shape{2, 3}, {5, -1, 2, 0, 1, 1}),
              Ints(index, Shape{0}, {})};
        },
        "gather");
  }
  // 64-bit extremes.
  ForDTypes(
      b, {DType::kFloat32, DType::kInt8}, fn,
      [](DType d) {
        return std::vector<Literal>{
            Bits(d, Shape{5}, 1),
            Bits(d, Shape{4, 3}, 2),
            Bits(d, Shape{2, 4, 3}, 3),
            Bits(d, Shape{3, 2, 2, 4}, 4),
            Ints(DType::kInt64, Shape{8},
                 {kMin64, kMax64, 0, -1, 1, 2, kMax64 - 1, kMin64 + 1}),
            Ints(DType::kInt64, Shape{}, {kMax64}),
            Ints(DType::kInt64, Shape{2, 3}, {kMin64, 1, kMax64, 0, 2, -5}),
            Ints(DType::kInt64, Shape{0}, {})};
      },
      "gather64");
  b.Run();
}

TEST(EmittedShapeOpsTest, ScatterEveryModeAndDType) {
  CodegenBatch b;
  // Repeated, negative and too-large indices (dropped), along each axis.
  const TraceFn fn = [](TraceScope&, const std::vector<Tracer>& a) {
    std::vector<Tracer> out;
    for (int m = 0; m <= static_cast<int>(ScatterMode::kMax); ++m) {
      const auto mode = static_cast<ScatterMode>(m);
      out.push_back(scatter(a[0], a[3], a[4], 0, mode));
      out.push_back(scatter(a[1], a[3], a[5], 1, mode));
      out.push_back(scatter(a[2], a[6], a[7], 2, mode));
      out.push_back(scatter(a[1], a[8], a[9], 0, mode));  // scalar index
      out.push_back(scatter(a[1], a[3], 1, 1, mode));     // broadcast update
    }
    return out;
  };
  const std::vector<int64_t> idx = {1, 3, 1, -1, 4, 0, 1, 3, -128, 127};
  for (DType index : {DType::kInt8, DType::kInt64, DType::kUInt32}) {
    for (DType d : kAllDTypes) {
      b.SetContext(std::string(dtype_name(index)) + " indices, " +
                   std::string(dtype_name(d)));
      b.ExpectSameBits(
          "scatter", fn,
          {Small(d, Shape{4}, 1), Small(d, Shape{3, 4}, 2),
           Small(d, Shape{2, 3, 4, 2}, 3), Ints(index, Shape{10}, idx),
           Small(d, Shape{10}, 4), Small(d, Shape{3, 10}, 5),
           Ints(index, Shape{2, 3}, {3, 3, -2, 0, 3, 9}),
           Small(d, Shape{2, 3, 2, 3, 2}, 6), Ints(index, Shape{}, {2}),
           Small(d, Shape{4}, 7)});
    }
  }
  b.Run();
}

TEST(EmittedShapeOpsTest, ScatterSetMovesStorageBits) {
  CodegenBatch b;
  // kSet of random bits (NaN payloads, signaling NaNs) with repeated
  // indices: the last update wins, bit for bit.
  const TraceFn fn = [](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{scatter(a[0], a[1], a[2], 1),
                               scatter(a[0], a[3], a[2], 1)};
  };
  ForDTypes(
      b, kDTypes, fn,
      [](DType d) {
        return std::vector<Literal>{
            Bits(d, Shape{3, 5, 2}, 1),
            Ints(DType::kInt32, Shape{6}, {4, 0, 4, 2, 5, -1}),
            Bits(d, Shape{3, 6, 2}, 2),
            Ints(DType::kInt64, Shape{6}, {kMin64, kMax64, 3, 3, 3, 1})};
      },
      "scatter_bits");
  b.Run();
}

TEST(EmittedShapeOpsTest, ScatterEmptyAndDegenerate) {
  CodegenBatch b;
  const TraceFn fn = [](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{
        scatter(a[0], a[1], a[2], 0, ScatterMode::kAdd),  // no indices
        scatter(a[3], a[4], a[5], 1, ScatterMode::kAdd),  // empty axis
        scatter(a[6], a[4], a[7], 0, ScatterMode::kMax),  // empty outer
    };
  };
  ForDTypes(
      b, {DType::kFloat32, DType::kInt64, DType::kBool}, fn,
      [](DType d) {
        return std::vector<Literal>{Small(d, Shape{4, 2}, 1),
                                    Ints(DType::kInt32, Shape{0}, {}),
                                    Small(d, Shape{0, 2}, 2),
                                    Small(d, Shape{3, 0}, 3),
                                    Ints(DType::kInt32, Shape{2}, {0, 1}),
                                    Small(d, Shape{3, 2}, 4),
                                    Small(d, Shape{4, 0}, 5),
                                    Small(d, Shape{2, 0}, 6)};
      },
      "scatter_empty");
  b.Run();
}

TEST(EmittedShapeOpsTest, ScatterInPlaceOrCopied) {
  CodegenBatch b;
  const TraceFn fn = [](TraceScope&, const std::vector<Tracer>& a) {
    const Tracer once = scatter(a[0], a[1], a[2], 0, ScatterMode::kAdd);
    return std::vector<Tracer>{scatter(once, a[1], a[2], 0, ScatterMode::kSet)};
  };
  for (DType d : kDTypes) {
    b.SetContext(std::string(dtype_name(d)));
    ExpectSameDonatedOrNot(
        b, fn,
        {Small(d, Shape{5, 3}, 1), Ints(DType::kInt32, Shape{4}, {4, 0, 4, 7}),
         Small(d, Shape{4, 3}, 2)},
        "scatter_in_place");
  }
  b.Run();
}

TEST(EmittedShapeOpsTest, ReshapeAndTransferCopies) {
  CodegenBatch b;
  const TraceFn fn = [](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{
        reshape(a[0], {4, 6}),  // of a parameter: a copy into the output
        reshape(transpose(a[0], {2, 1, 0}), {24}),
        to_memory_kind(a[0], MemoryKind::kDevice),
        reshape(a[1], {1, 1}),
        reshape(a[2], {3, 0}),
    };
  };
  ForDTypes(
      b, kDTypes, fn,
      [](DType d) {
        return std::vector<Literal>{Bits(d, Shape{2, 3, 4}, 1),
                                    Bits(d, Shape{}, 2), Bits(d, Shape{0}, 3)};
      },
      "reshape");
  b.Run();
}

TEST(EmittedShapeOpsTest, EveryDTypeThroughEveryOp) {
  CodegenBatch b;
  // One program of each op, over the dtypes not covered above.
  const TraceFn fn = [](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{
        broadcast_in_dim(a[0], Shape{2, 4, 3}, {0, 2}),
        transpose(a[1], {2, 0, 1}),
        slice(a[1], {0, 1, 0}, {2, 3, 4}, {1, 2, 3}),
        pad(a[0], a[2], {1, -1}, {-1, 2}, {1, 2}),
        compiler::concatenate({a[0], a[0], a[0]}, 1),
        dynamic_slice(a[1], {a[3], a[3], a[3]}, {1, 2, 2}),
        dynamic_update_slice(a[1], a[1], {a[3], a[3], a[3]}),
        take(a[1], a[4], 1),
        scatter(a[1], a[4], take(a[1], a[4], 1), 1),
        reshape(a[1], {4, 6}),
    };
  };
  ForDTypes(
      b,
      {DType::kInt16, DType::kInt32, DType::kUInt8, DType::kUInt32,
       DType::kFloat64},
      fn,
      [](DType d) {
        return std::vector<Literal>{
            Bits(d, Shape{2, 3}, 1), Bits(d, Shape{2, 3, 4}, 2),
            Bits(d, Shape{}, 3), Index(DType::kInt32, 1),
            Ints(DType::kInt16, Shape{4}, {2, -1, 0, 9})};
      },
      "every_dtype");
  b.Run();
}

}  // namespace
}  // namespace baton
