// The GPU executable (backend/cuda/gpu_executable.h) on the simulated
// device: compiled programs run as the command list of generated kernels,
// emulated on the host, over memory the host cannot touch directly -- with
// the values of the CPU, the memory analysis allocated exactly, donation
// writing into the donated storage, and a failed call consuming nothing.
#include <gtest/gtest.h>

#include <string>

#include "baton/backend/cuda/cuda_platform.h"
#include "baton/backend/cuda/gpu_executable.h"
#include "baton/backend/executable.h"
#include "baton/backend/simulated/simulated_backend.h"
#include "baton/compiler/passes.h"
#include "baton/compiler/sort_ops.h"
#include "jit/jit_test_util.h"

namespace baton {
namespace {

using namespace baton::testing;

Device* Sim() { return SimulatedClient().devices()[0]; }

Array OnSim(const Array& a) {
  return ValueOrThrow(CopyArray(a, Sim(), MemoryKind::kDevice));
}

MemoryStats SimStats() {
  return Sim()->memory_space(MemoryKind::kDevice).stats();
}

std::shared_ptr<const compiler::Program> Traced(
    std::vector<compiler::ValueType> params,
    const std::function<std::vector<Tracer>(TraceContext&,
                                            const std::vector<Tracer>&)>& fn) {
  compiler::TraceContext ctx;
  std::vector<Tracer> p;
  for (const auto& t : params) p.push_back(ctx.AddParameter(t));
  return std::make_shared<const compiler::Program>(
      compiler::Optimize(ctx.Finish(fn(ctx, p))));
}

compiler::ValueType F32(Shape s) {
  return compiler::ValueType{std::move(s), DType::kFloat32, MemoryKind::kDevice};
}

// Runs `program` on the CPU and on the simulated device; both outputs.
std::pair<std::vector<Array>, std::vector<Array>> RunBoth(
    std::shared_ptr<const compiler::Program> program,
    const std::vector<Array>& cpu_args) {
  auto cpu_exe = ValueOrThrow(
      CompileExecutable(program, {}, Dev(), "on_cpu"));
  auto sim_exe = ValueOrThrow(
      CompileExecutable(program, {}, Sim(), "on_sim"));
  std::vector<CallArgument> cpu_call(cpu_args.size()), sim_call(cpu_args.size());
  for (size_t i = 0; i < cpu_args.size(); ++i) {
    cpu_call[i].array = cpu_args[i];
    sim_call[i].array = OnSim(cpu_args[i]);
  }
  return {ValueOrThrow(cpu_exe->Execute(cpu_call)),
          ValueOrThrow(sim_exe->Execute(sim_call))};
}

TEST(GpuExecutableSimTest, ElementwiseRunsOnTheSimulatedDevice) {
  auto program = Traced({F32(Shape{3})}, [](TraceContext&, const auto& p) {
    return std::vector<Tracer>{p[0] * 2.0f + 1.0f};
  });
  auto exe = ValueOrThrow(CompileExecutable(program, {false}, Sim(), "twice"));
  EXPECT_EQ(exe->device(), Sim());
  EXPECT_FALSE(exe->runs_inline());
  EXPECT_NE(exe->as_text().find("commands:"), std::string::npos);
  std::vector<CallArgument> call(1);
  call[0].array = OnSim(Floats({1, 2, 3}));
  std::vector<Array> out = ValueOrThrow(exe->Execute(call));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].device(), Sim());
  EXPECT_EQ(ToHost(out[0]), (std::vector<float>{3, 5, 7}));
}

TEST(GpuExecutableSimTest, ReductionsDotsAndHostStepsMatchTheCpu) {
  auto program = Traced(
      {F32(Shape{4, 5}), F32(Shape{5, 3})},
      [](TraceContext&, const auto& p) {
        Tracer y = matmul(p[0], p[1]);       // a GEMM (the BLAS)
        Tracer s = sum(exp(p[0]), {1});      // a fused reduction
        Tracer sorted = compiler::sort(p[0] * -1.0f, 1);  // a host step
        return std::vector<Tracer>{y, s, sorted};
      });
  std::vector<float> a(20), b(15);
  for (int i = 0; i < 20; ++i) a[i] = 0.25f * static_cast<float>((i * 7) % 11) - 1;
  for (int i = 0; i < 15; ++i) b[i] = 0.5f * static_cast<float>((i * 5) % 7) - 1;
  auto [cpu, sim] =
      RunBoth(program, {Floats(a, Shape{4, 5}), Floats(b, Shape{5, 3})});
  ASSERT_EQ(sim.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    std::vector<float> want = ToHost(cpu[i]), got = ToHost(sim[i]);
    ASSERT_EQ(want.size(), got.size());
    for (size_t e = 0; e < want.size(); ++e) {
      EXPECT_NEAR(got[e], want[e], 1e-5f * (1 + std::abs(want[e])))
          << "output " << i << " element " << e;
    }
  }
  auto exe = ValueOrThrow(CompileExecutable(program, {}, Sim(), "mixed"));
  const auto& gpu = dynamic_cast<const cuda::GpuExecutable&>(*exe);
  EXPECT_EQ(gpu.host_steps(), 1);  // the sort, and nothing else
}

TEST(GpuExecutableSimTest, DonatedStorageHoldsTheResultAndMemoryIsExact) {
  constexpr int64_t n = 1 << 16;
  Jitted scale(
      [](TraceScope&, const std::vector<Tracer>& p) {
        // A temporary between the parameter and the result.
        Tracer t = sum(p[0] * p[0]);
        return std::vector<Tracer>{p[0] / (t + 1.0f)};
      },
      {.name = "scale", .donate_argnums = {0}});
  std::vector<float> host(n, 2.0f);
  Array x = OnSim(Floats(host));
  x.BlockUntilReady();
  auto exe = ValueOrThrow(scale.Lower({Spec(Shape{n}, true)}, Sim()));
  EXPECT_TRUE(exe->unusable_donations().empty());
  Sim()->memory_space(MemoryKind::kDevice).ResetPeak();
  const MemoryStats before = SimStats();
  const void* storage = ValueOrThrow(x.impl()->buffer())->data();
  std::vector<Array> out = scale({x});
  out[0].BlockUntilReady();
  EXPECT_EQ(ValueOrThrow(out[0].impl()->buffer())->data(), storage);
  EXPECT_TRUE(x.IsDeleted());
  const MemoryStats after = SimStats();
  // The result lives in the donated storage: nothing more is in use, and
  // the peak grew by at most the temporaries the analysis promised.
  EXPECT_EQ(after.bytes_in_use, before.bytes_in_use);
  EXPECT_LE(after.peak_bytes_in_use - before.bytes_in_use,
            exe->memory_analysis().temp_size_in_bytes + 4096);
  const float want = 2.0f / (4.0f * n + 1.0f);
  std::vector<float> got = ToHost(out[0]);
  EXPECT_FLOAT_EQ(got[0], want);
  EXPECT_FLOAT_EQ(got[n - 1], want);
}

// The CUDA target needs a CUDA device: on the simulated one it fails at
// once, naming the executable and the device (Internal: nothing in baton
// asks for this; Unimplemented in a build without the CUDA backend).
TEST(GpuExecutableSimTest, TheCudaTargetRefusesADeviceThatIsNotCuda) {
  auto program = Traced({F32(Shape{2})}, [](TraceContext&, const auto& p) {
    return std::vector<Tracer>{p[0] + 1.0f};
  });
  auto exe = cuda::GpuExecutable::Compile(program, {false}, Sim(), "on_cuda",
                                          {},
                                          cuda::GpuExecutable::Target::kCuda);
  ASSERT_FALSE(exe.ok());
  EXPECT_EQ(exe.status().code(), cuda::Built() ? ErrorCode::kInternal
                                               : ErrorCode::kUnimplemented)
      << exe.status().to_string();
  EXPECT_NE(exe.status().message().find("on_cuda"), std::string::npos);
  EXPECT_NE(exe.status().message().find(Sim()->ToString()), std::string::npos)
      << exe.status().to_string();
}

}  // namespace
}  // namespace baton
