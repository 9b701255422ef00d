// The GPU executable on a CUDA device (backend/cuda/gpu_executable.h,
// Target::kCuda): compiled programs -- NVRTC kernels, cuBLASLt GEMMs,
// steps left to the host, control flow over device memory -- give the CPU
// backend's values; and where no CUDA device can be reached, compiling for
// one fails with a Status that says why (no crash).
//
// Without a GPU the device tests skip with UnavailableReason();
// tools/gpu_check.sh runs them on one (ctest -L cuda).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "baton/backend/cuda/cuda_platform.h"
#include "baton/backend/cuda/gpu_executable.h"
#include "baton/backend/executable.h"
#include "baton/compiler/literal.h"
#include "baton/compiler/passes.h"
#include "baton/compiler/sort_ops.h"
#include "baton/compiler/tracer.h"
#include "baton/core/error.h"
#include "baton/runtime/client.h"
#include "baton/runtime/transfer.h"
#include "control_flow/control_flow_test_util.h"

namespace baton {
namespace {

using compiler::Literal;
using compiler::TraceContext;
using compiler::Tracer;
using compiler::ValueType;
namespace cf = compiler::cf_test;

std::shared_ptr<const compiler::Program> Traced(
    std::vector<ValueType> params,
    const std::function<std::vector<Tracer>(TraceContext&,
                                            const std::vector<Tracer>&)>& fn) {
  TraceContext ctx;
  std::vector<Tracer> p;
  for (const auto& t : params) p.push_back(ctx.AddParameter(t));
  return std::make_shared<const compiler::Program>(
      compiler::Optimize(ctx.Finish(fn(ctx, p))));
}

ValueType F32(Shape s) {
  return ValueType{std::move(s), DType::kFloat32, MemoryKind::kDevice};
}

// Deterministic values in [-2, 2), multiples of 1/16 (exact in bfloat16).
Literal Data(Shape shape, int seed, DType dtype = DType::kFloat32) {
  std::vector<double> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = static_cast<double>((static_cast<int64_t>(i) * 37 + seed * 101) %
                               64) /
               16.0 -
           2.0;
  }
  return Literal::FromDoubles(dtype, std::move(shape), v);
}

Array Put(const Literal& l, Device* device) {
  return ValueOrThrow(DevicePut(
      HostBuffer{l.untyped_data(), l.shape(), l.dtype()}, device,
      MemoryKind::kDevice));
}

Literal Get(const Array& a) {
  Literal host(a.shape(), a.dtype());
  ThrowIfError(CopyToHost(a, host.untyped_mutable_data(),
                          static_cast<size_t>(host.byte_size())));
  return host;
}

std::vector<double> AsDoubles(const Literal& l) {
  std::vector<double> v(static_cast<size_t>(l.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = l.GetAsDouble(static_cast<int64_t>(i));
  }
  return v;
}

Device* Cpu() { return Client::Default().devices()[0]; }

class GpuExecutableCudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda::CudaClient().device_count() == 0) {
      GTEST_SKIP() << cuda::UnavailableReason();
    }
  }
  static Device* Gpu() { return cuda::CudaClient().devices()[0]; }

  // Runs `program` on the CPU and on the GPU; every output of both.
  static std::pair<std::vector<Literal>, std::vector<Literal>> RunBoth(
      std::shared_ptr<const compiler::Program> program,
      const std::vector<Literal>& args, const std::string& name) {
    auto cpu_exe = ValueOrThrow(CompileExecutable(program, {}, Cpu(), name));
    auto gpu_exe = ValueOrThrow(CompileExecutable(program, {}, Gpu(), name));
    EXPECT_NE(dynamic_cast<const cuda::GpuExecutable*>(gpu_exe.get()),
              nullptr);
    std::vector<CallArgument> cpu_call(args.size()), gpu_call(args.size());
    for (size_t i = 0; i < args.size(); ++i) {
      cpu_call[i].array = Put(args[i], Cpu());
      gpu_call[i].array = Put(args[i], Gpu());
    }
    std::vector<Array> cpu = ValueOrThrow(cpu_exe->Execute(cpu_call));
    std::vector<Array> gpu = ValueOrThrow(gpu_exe->Execute(gpu_call));
    std::vector<Literal> want, got;
    for (const Array& a : cpu) want.push_back(Get(a));
    for (const Array& a : gpu) {
      EXPECT_EQ(a.device(), Gpu());
      got.push_back(Get(a));
    }
    return {std::move(want), std::move(got)};
  }

  // Each element within `rel` of the CPU's, relative to `scale` (or to the
  // element's magnitude when that is larger).
  static void ExpectNear(const Literal& want, const Literal& got, double rel,
                         double scale, const std::string& what) {
    ASSERT_EQ(want.shape(), got.shape()) << what;
    const std::vector<double> w = AsDoubles(want), g = AsDoubles(got);
    for (size_t i = 0; i < w.size(); ++i) {
      ASSERT_NEAR(g[i], w[i], rel * std::max(scale, std::abs(w[i])))
          << what << " element " << i;
    }
  }
};

// Compiled for a device whose GPU cannot be reached (a Client over the
// CUDA backend on a machine without a driver or GPU): a clear Status at
// compile time, through the platform's dispatch too -- never a crash.
TEST(GpuExecutableCuda, CompilingForAnUnreachableDeviceSaysWhy) {
  if (!cuda::Built()) GTEST_SKIP() << cuda::UnavailableReason();
  if (cuda::CudaClient().device_count() > 0) {
    GTEST_SKIP() << "a CUDA device exists";
  }
  Client client(1, cuda::CudaDeviceBackend());
  Device* dev = client.devices()[0];
  ASSERT_EQ(dev->platform(), "cuda");
  auto program = Traced({F32(Shape{4})}, [](TraceContext&, const auto& p) {
    return std::vector<Tracer>{p[0] * 2.0f};
  });
  auto direct = cuda::GpuExecutable::Compile(
      program, {false}, dev, "unreachable", {},
      cuda::GpuExecutable::Target::kCuda);
  ASSERT_FALSE(direct.ok());
  EXPECT_EQ(direct.status().code(), ErrorCode::kFailedPrecondition)
      << direct.status().to_string();
  const std::string& message = direct.status().message();
  EXPECT_NE(message.find("unreachable on cuda:0"), std::string::npos)
      << message;
  EXPECT_NE(message.find("compute capability"), std::string::npos) << message;
  auto dispatched = CompileExecutable(program, {false}, dev, "dispatched");
  ASSERT_FALSE(dispatched.ok());
  EXPECT_EQ(dispatched.status().code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(dispatched.status().message().find("dispatched"),
            std::string::npos);
}

// float32 elementwise kernels give the CPU's bits (no FMA contraction, the
// same exp), over more items than one block and not a multiple of it.
TEST_F(GpuExecutableCudaTest, ElementwiseGivesTheCpusBits) {
  const int64_t n = 100003;
  auto program = Traced({F32(Shape{n})}, [](TraceContext&, const auto& p) {
    return std::vector<Tracer>{p[0] * 3.0f + 1.0f, exp(p[0]) * p[0] - 0.5f};
  });
  auto [want, got] = RunBoth(program, {Data(Shape{n}, 1)}, "elementwise");
  ASSERT_EQ(got.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_EQ(got[i].byte_size(), want[i].byte_size());
    EXPECT_EQ(std::memcmp(got[i].untyped_data(), want[i].untyped_data(),
                          static_cast<size_t>(got[i].byte_size())),
              0)
        << "output " << i;
  }
}

TEST_F(GpuExecutableCudaTest, ReductionsMatchTheCpu) {
  auto program = Traced({F32(Shape{300, 517})}, [](TraceContext&,
                                                   const auto& p) {
    return std::vector<Tracer>{sum(p[0] * p[0], {1}), sum(p[0], {0}),
                               sum(p[0])};
  });
  auto [want, got] = RunBoth(program, {Data(Shape{300, 517}, 2)}, "reduce");
  ASSERT_EQ(got.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    ExpectNear(want[i], got[i], 1e-5, 1.0, "output " + std::to_string(i));
  }
}

// cuBLASLt with the row-major mapping: plain, either operand stored
// transposed, batched; float32 in full precision (TF32 would miss the
// bound by about a hundred times), bfloat16 accumulating in float32.
TEST_F(GpuExecutableCudaTest, GemmsMatchTheCpu) {
  const int64_t m = 37, k = 253, n = 29, b = 3;
  auto program = Traced(
      {F32(Shape{m, k}), F32(Shape{k, n}), F32(Shape{k, m}), F32(Shape{n, k}),
       F32(Shape{b, m, k}), F32(Shape{b, k, n})},
      [](TraceContext&, const auto& p) {
        return std::vector<Tracer>{
            matmul(p[0], p[1]),             // as stored
            matmul(transpose(p[2]), p[1]),  // a stored [k][m]
            matmul(p[0], transpose(p[3])),  // b stored [n][k]
            matmul(p[4], p[5]),             // a batch of 3
        };
      });
  auto [want, got] = RunBoth(
      program,
      {Data(Shape{m, k}, 1), Data(Shape{k, n}, 2), Data(Shape{k, m}, 3),
       Data(Shape{n, k}, 4), Data(Shape{b, m, k}, 5), Data(Shape{b, k, n}, 6)},
      "gemms");
  ASSERT_EQ(got.size(), 4u);
  // |a|, |b| <= 2: each sum of k products is bounded by 4k.
  for (size_t i = 0; i < 4; ++i) {
    ExpectNear(want[i], got[i], 1e-6, 4.0 * k, "product " + std::to_string(i));
  }
  auto bf16 = Traced({ValueType{Shape{m, k}, DType::kBFloat16,
                                MemoryKind::kDevice},
                      ValueType{Shape{k, n}, DType::kBFloat16,
                                MemoryKind::kDevice}},
                     [](TraceContext&, const auto& p) {
                       return std::vector<Tracer>{matmul(p[0], p[1])};
                     });
  auto [want16, got16] = RunBoth(
      bf16,
      {Data(Shape{m, k}, 7, DType::kBFloat16),
       Data(Shape{k, n}, 8, DType::kBFloat16)},
      "bf16 gemm");
  ASSERT_EQ(got16.size(), 1u);
  EXPECT_EQ(got16[0].dtype(), DType::kBFloat16);
  // Rounded once to bfloat16 (8 bits) from float32 sums in another order.
  ExpectNear(want16[0], got16[0], 1.0 / 64, 1.0, "bf16 product");
}

// A step no kernel covers (sort) runs on the host between kernels, its
// inputs and results copied across.
TEST_F(GpuExecutableCudaTest, HostStepsRunBetweenKernels) {
  auto program = Traced({F32(Shape{6, 50})}, [](TraceContext&,
                                                const auto& p) {
    Tracer sorted = compiler::sort(p[0] * -1.0f, 1);
    return std::vector<Tracer>{sorted + 1.0f};
  });
  auto [want, got] = RunBoth(program, {Data(Shape{6, 50}, 3)}, "sorted");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(std::memcmp(got[0].untyped_data(), want[0].untyped_data(),
                        static_cast<size_t>(got[0].byte_size())),
            0);
  auto exe = ValueOrThrow(CompileExecutable(program, {}, Gpu(), "sorted"));
  EXPECT_EQ(dynamic_cast<const cuda::GpuExecutable&>(*exe).host_steps(), 1);
}

// while, scan and case over device memory: the regions' kernels enqueued
// on the stream, carries copied on the device, the condition and the
// index read back.
TEST_F(GpuExecutableCudaTest, ControlFlowRunsOverDeviceMemory) {
  const ValueType x = cf::T(Shape{1000});
  // while (i < limit) { i += 1; v = v * 0.5 + w }
  auto cond = cf::Region({cf::I32(), x, cf::I32(), x},
                         [](TraceContext&, const auto& a) {
                           return std::vector<Tracer>{lt(a[0], a[2])};
                         });
  auto body = cf::Region({cf::I32(), x, cf::I32(), x},
                         [](TraceContext&, const auto& a) {
                           return std::vector<Tracer>{a[0] + 1,
                                                      a[1] * 0.5f + a[3]};
                         });
  // scan over the 4 rows of xs: c += row, ys = c * row
  const ValueType row = cf::T(Shape{1000});
  auto scan_body = cf::Region({row, row}, [](TraceContext&, const auto& a) {
    return std::vector<Tracer>{a[0] + a[1], a[0] * a[1]};
  });
  auto branch0 = cf::Region({x}, [](TraceContext&, const auto& a) {
    return std::vector<Tracer>{a[0] - 1.0f};
  });
  auto branch1 = cf::Region({x}, [](TraceContext&, const auto& a) {
    return std::vector<Tracer>{a[0] * 4.0f};
  });
  auto program = Traced(
      {ValueType{Shape{}, DType::kInt32, MemoryKind::kDevice}, F32(Shape{1000}),
       ValueType{Shape{}, DType::kInt32, MemoryKind::kDevice}, F32(Shape{1000}),
       F32(Shape{4, 1000}),
       ValueType{Shape{}, DType::kInt32, MemoryKind::kDevice}},
      [&](TraceContext& ctx, const auto& p) {
        std::vector<Tracer> w = cf::EmitGroup(
            ctx, cf::While(2, cond, body), {p[0], p[1], p[2], p[3]});
        std::vector<Tracer> s =
            cf::EmitGroup(ctx, cf::Scan(1, 1, 4, scan_body), {w[1], p[4]});
        std::vector<Tracer> c =
            cf::EmitGroup(ctx, cf::Case({branch0, branch1}), {p[5], s[0]});
        return std::vector<Tracer>{w[0], s[0], s[1], c[0]};
      });
  Literal limit = Literal::Scalar<int32_t>(7);
  Literal start = Literal::Scalar<int32_t>(0);
  Literal index = Literal::Scalar<int32_t>(1);
  auto [want, got] = RunBoth(
      program,
      {start, Data(Shape{1000}, 1), limit, Data(Shape{1000}, 2),
       Data(Shape{4, 1000}, 3), index},
      "control flow");
  ASSERT_EQ(got.size(), 4u);
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].byte_size(), want[i].byte_size());
    EXPECT_EQ(std::memcmp(got[i].untyped_data(), want[i].untyped_data(),
                          static_cast<size_t>(got[i].byte_size())),
              0)
        << "output " << i;
  }
}

}  // namespace
}  // namespace baton
