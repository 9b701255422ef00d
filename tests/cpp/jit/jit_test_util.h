// Helpers for jit tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "baton/backend/cpu/cpu_executable.h"
#include "baton/backend/cuda/cuda_platform.h"
#include "baton/backend/simulated/simulated_backend.h"
#include "baton/compiler/literal.h"
#include "baton/core/error.h"
#include "baton/jit/jit.h"
#include "baton/runtime/client.h"
#include "baton/runtime/transfer.h"

namespace baton::testing {

// The platform $BATON_TEST_PLATFORM names ("" when unset).
inline std::string TestPlatform() {
  const char* platform = std::getenv("BATON_TEST_PLATFORM");
  return platform != nullptr ? platform : "";
}

// The device the tests compute on: the CPU's first, or with
// $BATON_TEST_PLATFORM=sim the simulated accelerator's (its programs run
// through the GPU executable: tools/run_tests.sh runs the control-flow and
// jit suites both ways), or with $BATON_TEST_PLATFORM=cuda the first CUDA
// device's (the GPU executable on a GPU: tools/gpu_check.sh). Null only for
// cuda on a machine without a CUDA device, where every test is skipped
// (CudaTestEnvironment below) before any calls this.
inline Device* Dev() {
  static Device* const device = []() -> Device* {
    const std::string platform = TestPlatform();
    if (platform == "sim") return SimulatedClient().devices()[0];
    if (platform == "cuda") {
      Client& client = cuda::CudaClient();
      return client.device_count() > 0 ? client.devices()[0] : nullptr;
    }
    return Client::Default().devices()[0];
  }();
  return device;
}

// Four devices of the test platform (CPU devices, or simulated accelerators
// under $BATON_TEST_PLATFORM=sim) for the tests of meshes, shared by them;
// none of the suite's other tests uses them.
inline Client& FourMeshDevices() {
  static Client* client = TestPlatform() == "sim"
                              ? new Client(4, std::make_shared<SimulatedBackend>())
                              : new Client(4);
  return *client;
}

// With $BATON_TEST_PLATFORM=cuda and no CUDA device, skips every test of
// the program with the reason (a failure instead where
// $BATON_EXPECT_CUDA_DEVICES=1, as tools/gpu_check.sh sets it: there a GPU
// must be found).
class CudaTestEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    if (TestPlatform() != "cuda" || cuda::CudaClient().device_count() > 0) {
      return;
    }
    const char* expect = std::getenv("BATON_EXPECT_CUDA_DEVICES");
    if (expect != nullptr && std::string(expect) == "1") {
      FAIL() << "BATON_TEST_PLATFORM=cuda: " << cuda::UnavailableReason();
    }
    GTEST_SKIP() << "BATON_TEST_PLATFORM=cuda: " << cuda::UnavailableReason();
  }
};
inline ::testing::Environment* const kCudaTestEnvironment =
    ::testing::AddGlobalTestEnvironment(new CudaTestEnvironment);
inline bool OnCpu() { return Dev()->platform() == "cpu"; }

// The CPU executable behind what Jitted::Lower returned on a CPU device, for
// tests of the CPU backend's own choices (its cost model: work(),
// kInlineWorkLimit); such tests skip on another device (SKIP_UNLESS_CPU).
// Everything else is read through Executable.
inline const cpu::CpuExecutable& CpuOf(const std::shared_ptr<Executable>& exe) {
  const auto* cpu = dynamic_cast<const cpu::CpuExecutable*>(exe.get());
  if (cpu == nullptr) {
    ADD_FAILURE() << exe->name() << " is not a CpuExecutable";
    std::abort();
  }
  return *cpu;
}
#define SKIP_UNLESS_CPU()                                                  \
  do {                                                                     \
    if (!::baton::testing::OnCpu()) {                                      \
      GTEST_SKIP() << "a test of the CPU backend's own choices, not run on " \
                   << ::baton::testing::Dev()->ToString();                 \
    }                                                                      \
  } while (false)

inline Array Floats(const std::vector<float>& v, Shape shape = {},
                    MemoryKind kind = MemoryKind::kDevice) {
  if (shape.rank() == 0 && v.size() != 1) shape = Shape{int64_t(v.size())};
  return ValueOrThrow(DevicePut(HostBuffer{v.data(), shape, DType::kFloat32},
                                Dev(), kind));
}

inline Array Int32(int32_t v) {
  return ValueOrThrow(
      DevicePut(HostBuffer{&v, Shape{}, DType::kInt32}, Dev(), MemoryKind::kDevice));
}

inline std::vector<float> ToHost(const Array& a) {
  std::vector<float> out(static_cast<size_t>(a.size()));
  ThrowIfError(CopyToHost(a, out.data(), out.size() * sizeof(float)));
  return out;
}

inline MemoryStats Stats(MemoryKind k = MemoryKind::kDevice) {
  return Dev()->memory_space(k).stats();
}

inline ArgSpec Spec(Shape s, bool donated = false, DType d = DType::kFloat32) {
  return ArgSpec{std::move(s), d, MemoryKind::kDevice, donated};
}

// Replays a traced program inside a jit trace (same instructions, the jit's
// parameters).
inline std::vector<Tracer> Replay(const compiler::Program& p, TraceScope& scope,
                                  const std::vector<Tracer>& params) {
  std::vector<Tracer> v(p.num_values());
  for (compiler::ValueId id = 0; id < p.num_values(); ++id) {
    const compiler::Instruction& inst = p.instruction(id);
    if (const auto* a = inst.attrs_if<compiler::ParameterAttrs>()) {
      v[id] = params[a->index];
      continue;
    }
    std::vector<Tracer> ops;
    for (compiler::ValueId o : inst.operands) ops.push_back(v[o]);
    v[id] = scope.context().Emit(inst.attrs, ops);
  }
  std::vector<Tracer> outs;
  for (compiler::ValueId o : p.outputs()) outs.push_back(v[o]);
  return outs;
}

// A literal's value on the default device, and back.
inline Array ToArray(const compiler::Literal& l) {
  return ValueOrThrow(
      DevicePut(HostBuffer{l.untyped_data(), l.shape(), l.dtype()}, Dev(),
                MemoryKind::kDevice));
}

inline compiler::Literal ToLiteral(const Array& a) {
  compiler::Literal host(a.shape(), a.dtype());
  ThrowIfError(CopyToHost(a, host.untyped_mutable_data(),
                          static_cast<size_t>(host.byte_size())));
  return host;
}

// f(x) = x + 1, donating the listed arguments.
inline Jitted AddOne(std::vector<int> donate = {}) {
  return Jitted([](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{a[0] + 1};
  }, {.name = "add_one", .donate_argnums = std::move(donate)});
}

}  // namespace baton::testing
