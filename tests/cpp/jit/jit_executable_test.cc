// The backend-neutral Executable (backend/executable.h): CompileExecutable
// picks the backend by the device's platform (the CPU's, or the GPU
// executable on the simulated device), the jit runs whatever it returns
// through the interface, and a call that fails consumes nothing.
#include <gtest/gtest.h>

#include <string>

#include "baton/backend/executable.h"
#include "baton/backend/simulated/simulated_backend.h"
#include "baton/compiler/passes.h"
#include "jit/jit_test_util.h"

namespace baton {
namespace {

using namespace baton::testing;

// x * 2 + 1 over float32[n].
std::shared_ptr<const compiler::Program> TwiceXPlusOne(int64_t n) {
  compiler::TraceContext ctx;
  Tracer x = ctx.AddParameter(
      compiler::ValueType{Shape{n}, DType::kFloat32, MemoryKind::kDevice});
  return std::make_shared<const compiler::Program>(
      compiler::Optimize(ctx.Finish({x * 2.0f + 1.0f})));
}

TEST(JitExecutableTest, ACpuDeviceCompilesAndRunsThroughTheInterface) {
  Result<std::shared_ptr<Executable>> exe =
      CompileExecutable(TwiceXPlusOne(3), {false}, Dev(), "twice_plus_one");
  ASSERT_TRUE(exe.ok()) << exe.status().to_string();
  const Executable& e = *exe.value();
  EXPECT_EQ(e.device(), Dev());
  EXPECT_EQ(e.name(), "twice_plus_one");
  EXPECT_EQ(e.program().num_parameters(), 1);
  EXPECT_EQ(e.donated(), std::vector<bool>{false});
  EXPECT_TRUE(e.unusable_donations().empty());
  EXPECT_NE(e.as_text().find("twice_plus_one"), std::string::npos);
  std::vector<CallArgument> call(1);
  call[0].array = Floats({1, 2, 3});
  std::vector<Array> out = ValueOrThrow(exe.value()->Execute(call));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(ToHost(out[0]), (std::vector<float>{3, 5, 7}));
  EXPECT_FALSE(call[0].array.IsDeleted());
}

TEST(JitExecutableTest, JittedLowersToTheExecutableOfItsDevice) {
  SKIP_UNLESS_CPU();
  Jitted f = AddOne();
  std::shared_ptr<Executable> exe =
      ValueOrThrow(f.Lower({Spec(Shape{4})}, Dev()));
  EXPECT_EQ(exe->device(), Dev());
  EXPECT_EQ(exe->name(), "add_one");
  EXPECT_EQ(CpuOf(exe).device(), Dev());  // the CPU backend's, on a CPU device
  EXPECT_EQ(ToHost(f({Floats({1, 2, 3, 4})})[0]),
            (std::vector<float>{2, 3, 4, 5}));
}

// Device ids are per platform: the simulated device 0 and CPU device 0 share
// id 0. One jitted function lowered for both gets an executable for each
// (its cache once returned the first device's for the second).
TEST(JitExecutableTest, OneFunctionLowersSeparatelyForDevicesOfTheSameId) {
  Device* sim = SimulatedClient().devices()[0];
  Device* cpu = Client::Default().devices()[0];
  ASSERT_EQ(sim->id(), cpu->id());
  Jitted f = AddOne();
  std::shared_ptr<Executable> on_sim = ValueOrThrow(f.Lower({Spec(Shape{4})}, sim));
  std::shared_ptr<Executable> on_cpu = ValueOrThrow(f.Lower({Spec(Shape{4})}, cpu));
  EXPECT_EQ(on_sim->device(), sim);
  EXPECT_EQ(on_cpu->device(), cpu);
  EXPECT_EQ(f.cache_size(), 2u);
}

TEST(JitExecutableTest, TheSimulatedDeviceRunsTheGpuExecutable) {
  Device* sim = SimulatedClient().devices()[0];
  ASSERT_EQ(sim->platform(), "sim");
  Result<std::shared_ptr<Executable>> exe =
      CompileExecutable(TwiceXPlusOne(3), {false}, sim, "on_sim");
  ASSERT_TRUE(exe.ok()) << exe.status().to_string();
  EXPECT_EQ(exe.value()->device(), sim);
  EXPECT_NE(exe.value()->as_text().find("commands:"), std::string::npos);

  // Through the jit, with a donation.
  Jitted f = AddOne({0});
  Array on_sim =
      ValueOrThrow(CopyArray(Floats({1, 2, 3}), sim, MemoryKind::kDevice));
  std::vector<Array> out = f({on_sim});
  EXPECT_TRUE(on_sim.IsDeleted());
  EXPECT_EQ(out[0].device(), sim);
  EXPECT_EQ(ToHost(out[0]), (std::vector<float>{2, 3, 4}));
}

TEST(JitExecutableTest, ACallThatCannotAllocateConsumesNothing) {
  Device* sim = SimulatedClient().devices()[0];
  MemorySpace& space = sim->memory_space(MemoryKind::kDevice);
  Jitted f([](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{a[0] + 1, a[0] * 2};  // two fresh outputs
  }, {.name = "two_outputs", .donate_argnums = {0}});
  Array on_sim = ValueOrThrow(
      CopyArray(Floats(std::vector<float>(1 << 16, 1.0f)), sim,
                MemoryKind::kDevice));
  on_sim.BlockUntilReady();
  space.SetLimit(space.stats().bytes_in_use);  // no room for a new output
  Result<std::vector<Array>> out = f.Call({on_sim});
  space.SetLimit(std::nullopt);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), ErrorCode::kResourceExhausted)
      << out.status().to_string();
  EXPECT_FALSE(on_sim.IsDeleted());
  EXPECT_EQ(ToHost(on_sim)[0], 1.0f);
}

}  // namespace
}  // namespace baton
