// Golden tests of the generated CUDA source: for a handful of small
// programs, the kernels KernelEmitter writes (the text after the prelude)
// and the actions that launch them, spelled out here so that a change to
// the generator shows up in review as a change to what it generates. The
// results of these kernels are tested elsewhere (emitted_*_test.cc); this
// file pins their form: index width, fusion, the reduction's two phases,
// the GEMM's transposed operands, a repeated kernel launched again.
//
// A mismatch prints the whole new text; when the change is intended, paste
// it over the old one.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "baton/backend/cuda/codegen/kernel_emitter.h"
#include "codegen/codegen_harness.h"

namespace baton {
namespace {

using namespace baton::testing;
namespace cg = cuda::codegen;

// The kernels' text (one line for each, the comments of the emitter kept)
// and one line per action.
std::string Generated(const compiler::Program& traced) {
  const PlannedProgram p = Plan(traced);
  auto emitted = cg::EmitProgram(p.program, p.plan, {}, "golden");
  if (!emitted.ok()) return emitted.status().to_string();
  std::string out = emitted->source.substr(emitted->kernels_offset);
  for (const cg::Action& a : emitted->actions) {
    switch (a.kind) {
      case cg::Action::Kind::kKernel:
        out += "launch " + emitted->kernel_names[a.kernel] + " x" +
               std::to_string(a.threads) + "\n";
        break;
      case cg::Action::Kind::kCopy:
        out += "copy " + std::to_string(a.bytes) + " bytes\n";
        break;
      case cg::Action::Kind::kGemm:
        out += "gemm " + std::string(dtype_name(a.dtype)) + " " +
               std::to_string(a.batch) + "x" + std::to_string(a.m) + "x" +
               std::to_string(a.n) + "x" + std::to_string(a.k) +
               (a.trans_a ? " a^T" : "") + (a.trans_b ? " b^T" : "") + "\n";
        break;
      case cg::Action::Kind::kHostStep:
        out += "host step " + std::to_string(a.step) + "\n";
        break;
    }
  }
  return out;
}

void ExpectGenerated(const compiler::Program& traced, const std::string& want) {
  const std::string got = Generated(traced);
  EXPECT_EQ(got, want) << "the generated text is now:\n" << got;
}


// x * 2 + 1: one fused kernel, 32-bit indices, each scalar read as element 0
// of its one-element constant (a virtual scalar: never broadcast in memory).
TEST(EmittedSourceGoldenTest, FusedElementwiseChain) {
  compiler::TraceContext ctx;
  Tracer x = ctx.AddParameter({Shape{1024}, DType::kFloat32});
  ExpectGenerated(ctx.Finish({x * 2 + 1}), R"golden(
// step 0
BATON_FN void bt_k0_body(bt::i32 i, const KernelArgs& a) {
  typedef bt::i32 idx;
  // %3 = multiply
  const float t0 = bt::from_compute<float>(bt::binary<2, float>(bt::to_compute(((const float*)a.p[0])[i]), bt::to_compute(((const float*)a.p[1])[0])));
  // %6 = add
  const float t1 = bt::from_compute<float>(bt::binary<0, float>(bt::to_compute(t0), bt::to_compute(((const float*)a.p[2])[0])));
  ((float*)a.p[3])[i] = t1;
}
#ifdef BATON_HOST_EMULATION
extern "C" void bt_k0(bt::i64 n, const KernelArgs* a) {
  for (bt::i64 i = 0; i < n; ++i) bt_k0_body((bt::i32)i, *a);
}
#else
extern "C" __global__ void bt_k0(const KernelArgs a, bt::i64 n) {
  for (unsigned i = (unsigned)blockIdx.x * blockDim.x + threadIdx.x; i < (unsigned)n;
       i += (unsigned)blockDim.x * gridDim.x)
    bt_k0_body((bt::i32)i, a);
}
#endif
launch bt_k0 x1024
)golden");
}

// sum(x * x) over rows of 1000: the product computed inside the reduction,
// float32 accumulated in double, parts per row combined in order.
TEST(EmittedSourceGoldenTest, FusedRowReduction) {
  compiler::TraceContext ctx;
  Tracer x = ctx.AddParameter({Shape{4, 1000}, DType::kFloat32});
  ExpectGenerated(ctx.Finish({sum(x * x, {1})}), R"golden(
// step 0
BATON_FN void bt_k0_body(bt::i32 i, const KernelArgs& a) {
  typedef bt::i32 idx;
  const idx o = i / 63;
  const idx j = i % 63;
  const idx base = (((o) * 1000));
  double acc = bt::reduce_init<0, double>();
  for (idx r = j; r < 1000; r += 63) {
    const idx x_at = base + ((r));
    // %1 = multiply
    const float t0 = bt::from_compute<float>(bt::binary<2, float>(bt::to_compute(((const float*)a.p[0])[x_at]), bt::to_compute(((const float*)a.p[0])[x_at])));
    const double x = (double)bt::to_compute(t0);
    acc = bt::reduce_combine<0, double>(acc, x);
  }
  ((double*)a.p[1])[o * 63 + j] = acc;
}
#ifdef BATON_HOST_EMULATION
extern "C" void bt_k0(bt::i64 n, const KernelArgs* a) {
  for (bt::i64 i = 0; i < n; ++i) bt_k0_body((bt::i32)i, *a);
}
#else
extern "C" __global__ void bt_k0(const KernelArgs a, bt::i64 n) {
  for (unsigned i = (unsigned)blockIdx.x * blockDim.x + threadIdx.x; i < (unsigned)n;
       i += (unsigned)blockDim.x * gridDim.x)
    bt_k0_body((bt::i32)i, a);
}
#endif

// step 0
BATON_FN void bt_k1_body(bt::i32 i, const KernelArgs& a) {
  typedef bt::i32 idx;
  double acc = bt::reduce_init<0, double>();
  for (idx j = 0; j < 63; ++j) {
    const double x = ((const double*)a.p[0])[i * 63 + j];
    acc = bt::reduce_combine<0, double>(acc, x);
  }
  ((float*)a.p[1])[i] = bt::from_compute<float>((float)(acc));
}
#ifdef BATON_HOST_EMULATION
extern "C" void bt_k1(bt::i64 n, const KernelArgs* a) {
  for (bt::i64 i = 0; i < n; ++i) bt_k1_body((bt::i32)i, *a);
}
#else
extern "C" __global__ void bt_k1(const KernelArgs a, bt::i64 n) {
  for (unsigned i = (unsigned)blockIdx.x * blockDim.x + threadIdx.x; i < (unsigned)n;
       i += (unsigned)blockDim.x * gridDim.x)
    bt_k1_body((bt::i32)i, a);
}
#endif
launch bt_k0 x252
launch bt_k1 x4
)golden");
}

// A matmul's two gradients, x^T g and g w^T: GEMMs reading an operand
// transposed, no transpose kernel.
TEST(EmittedSourceGoldenTest, MatmulGradientsReadOperandsTransposed) {
  compiler::TraceContext ctx;
  Tracer x = ctx.AddParameter({Shape{8, 16}, DType::kFloat32});
  Tracer w = ctx.AddParameter({Shape{16, 4}, DType::kFloat32});
  Tracer g = ctx.AddParameter({Shape{8, 4}, DType::kFloat32});
  ExpectGenerated(
      ctx.Finish({dot_general(x, g, compiler::DotGeneralAttrs{{}, {}, {0}, {0}}),
                  dot_general(g, w, compiler::DotGeneralAttrs{{}, {}, {1}, {1}})}),
      R"golden(gemm float32 1x16x4x8 a^T
gemm float32 1x8x16x4 b^T
)golden");
}

// The same chain on two arrays: one kernel, launched twice.
TEST(EmittedSourceGoldenTest, ARepeatedKernelIsLaunchedAgain) {
  compiler::TraceContext ctx;
  Tracer a = ctx.AddParameter({Shape{256}, DType::kFloat32});
  Tracer b = ctx.AddParameter({Shape{256}, DType::kFloat32});
  ExpectGenerated(ctx.Finish({tanh(a) * 3, tanh(b) * 3}),
                  R"golden(
// step 0
BATON_FN void bt_k0_body(bt::i32 i, const KernelArgs& a) {
  typedef bt::i32 idx;
  // %2 = tanh
  const float t0 = bt::from_compute<float>(bt::unary<4, float>(bt::to_compute(((const float*)a.p[0])[i])));
  // %5 = multiply
  const float t1 = bt::from_compute<float>(bt::binary<2, float>(bt::to_compute(t0), bt::to_compute(((const float*)a.p[1])[0])));
  ((float*)a.p[2])[i] = t1;
}
#ifdef BATON_HOST_EMULATION
extern "C" void bt_k0(bt::i64 n, const KernelArgs* a) {
  for (bt::i64 i = 0; i < n; ++i) bt_k0_body((bt::i32)i, *a);
}
#else
extern "C" __global__ void bt_k0(const KernelArgs a, bt::i64 n) {
  for (unsigned i = (unsigned)blockIdx.x * blockDim.x + threadIdx.x; i < (unsigned)n;
       i += (unsigned)blockDim.x * gridDim.x)
    bt_k0_body((bt::i32)i, a);
}
#endif
launch bt_k0 x256
launch bt_k0 x256
)golden");
}

// take(table, indices): indices read as int64 and clamped, as the CPU does.
TEST(EmittedSourceGoldenTest, TakeClampsIndices) {
  compiler::TraceContext ctx;
  Tracer table = ctx.AddParameter({Shape{10, 3}, DType::kFloat32});
  Tracer indices = ctx.AddParameter({Shape{5}, DType::kInt32});
  ExpectGenerated(ctx.Finish({take(table, indices)}), R"golden(
// step 0
BATON_FN void bt_k0_body(bt::i32 i, const KernelArgs& a) {
  typedef bt::i32 idx;
  const idx o = i / 15;
  const idx j = (i / 3) % 5;
  const idx c = i % 3;
  bt::i64 t_raw = (bt::i64)(((const bt::i32*)a.p[0])[j]);
  const idx t = bt::clamp_index(t_raw, 0, 9);
  ((float*)a.p[2])[i] = ((const float*)a.p[1])[(o * 10 + t) * 3 + c];
}
#ifdef BATON_HOST_EMULATION
extern "C" void bt_k0(bt::i64 n, const KernelArgs* a) {
  for (bt::i64 i = 0; i < n; ++i) bt_k0_body((bt::i32)i, *a);
}
#else
extern "C" __global__ void bt_k0(const KernelArgs a, bt::i64 n) {
  for (unsigned i = (unsigned)blockIdx.x * blockDim.x + threadIdx.x; i < (unsigned)n;
       i += (unsigned)blockDim.x * gridDim.x)
    bt_k0_body((bt::i32)i, a);
}
#endif
launch bt_k0 x15
)golden");
}

TEST(EmittedSourceGoldenTest, TakeWrapsNegativesAndFillsTheRest) {
  // jax.numpy.take's default: i < 0 reads i + 10, then a position outside
  // [0, 10) reads the fill (float32 NaN's bits), in the gather's one pass.
  compiler::TraceContext ctx;
  Tracer table = ctx.AddParameter({Shape{10, 3}, DType::kFloat32});
  Tracer indices = ctx.AddParameter({Shape{5}, DType::kInt32});
  GatherBounds bounds;
  bounds.wrap_negative = true;
  bounds.fill = true;
  bounds.fill_bits = 0x7fc00000;
  ExpectGenerated(ctx.Finish({take(table, indices, 0, bounds)}), R"golden(
// step 0
BATON_FN void bt_k0_body(bt::i32 i, const KernelArgs& a) {
  typedef bt::i32 idx;
  const idx o = i / 15;
  const idx j = (i / 3) % 5;
  const idx c = i % 3;
  bt::i64 t_raw = (bt::i64)(((const bt::i32*)a.p[0])[j]);
  if (t_raw < 0) t_raw += 10;
  const bool t_inside = t_raw >= 0 && t_raw < 10;
  const idx t = bt::clamp_index(t_raw, 0, 9);
  ((float*)a.p[2])[i] = t_inside ? ((const float*)a.p[1])[(o * 10 + t) * 3 + c] : bt::from_bits((bt::u32)0x7fc00000ull);
}
#ifdef BATON_HOST_EMULATION
extern "C" void bt_k0(bt::i64 n, const KernelArgs* a) {
  for (bt::i64 i = 0; i < n; ++i) bt_k0_body((bt::i32)i, *a);
}
#else
extern "C" __global__ void bt_k0(const KernelArgs a, bt::i64 n) {
  for (unsigned i = (unsigned)blockIdx.x * blockDim.x + threadIdx.x; i < (unsigned)n;
       i += (unsigned)blockDim.x * gridDim.x)
    bt_k0_body((bt::i32)i, a);
}
#endif
launch bt_k0 x15
)golden");
}

}  // namespace
}  // namespace baton
