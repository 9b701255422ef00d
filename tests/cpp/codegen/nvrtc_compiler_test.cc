// NVRTC loaded at run time (backend/cuda/codegen/nvrtc_compiler.h) and the
// generated kernels compiled by it for a real GPU architecture (sm_90: NVRTC
// runs ptxas too), without a GPU: the device prelude, small kernels, and the
// emitted source of a corpus of random programs (the jit's random-program
// generator) in one compilation. Without NVRTC every test skips with the
// loader's reason.
#include "baton/backend/cuda/codegen/nvrtc_compiler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "baton/backend/cuda/codegen/kernel_emitter.h"
#include "codegen/codegen_harness.h"
#include "jit/random_program_generator.h"

namespace baton {
namespace {

using cuda::CompileToCubin;
using cuda::CompileToPtx;
using cuda::NvrtcUnavailableReason;
using cuda::NvrtcVersion;

constexpr char kVirtualArch[] = "compute_90";
constexpr char kRealArch[] = "sm_90";

#define BATON_SKIP_WITHOUT_NVRTC()                                       \
  do {                                                                   \
    if (!NvrtcUnavailableReason().empty()) {                             \
      GTEST_SKIP() << "NVRTC unavailable: " << NvrtcUnavailableReason(); \
    }                                                                    \
  } while (0)

TEST(NvrtcCompilerTest, LoadsHere) {
  BATON_SKIP_WITHOUT_NVRTC();
  auto version = NvrtcVersion();
  ASSERT_TRUE(version.ok()) << version.status().to_string();
  EXPECT_GE(version->first, 12);
}

TEST(NvrtcCompilerTest, CompilesThePreludeAndItsTemplates) {
  BATON_SKIP_WITHOUT_NVRTC();
  const std::string source = std::string(cuda::codegen::DevicePrelude()) + R"(
extern "C" __global__ void k(float* o, const bt::f16* h, const int* x,
                             bt::bf16* w, double* d, bool* p) {
  int i = threadIdx.x;
  o[i] = bt::binary<bt::binary_op::kAdd, float>(
      bt::to_compute(h[i]),
      (float)bt::binary<bt::binary_op::kDiv, bt::i32>(x[i], 3));
  w[i] = bt::from_compute<bt::bf16>(
      bt::unary<bt::unary_op::kTanh, float>(o[i]));
  d[i] = bt::reduce_combine<bt::reduce_op::kMax, double>(
      bt::reduce_init<bt::reduce_op::kMax, double>(),
      bt::convert<double, bt::f16>(h[i]));
  p[i] = bt::compare<bt::compare_op::kLt, bt::i64>(
      bt::binary<bt::binary_op::kShiftLeft, bt::i64>(x[i], 40),
      bt::clamp_index(x[i], 0, 7));
}
)";
  auto ptx = CompileToPtx(source, "prelude_kernel.cu", kVirtualArch);
  ASSERT_TRUE(ptx.ok()) << ptx.status().to_string();
  EXPECT_NE(ptx->find(".visible .entry k"), std::string::npos) << *ptx;
  EXPECT_NE(ptx->find(".target sm_90"), std::string::npos);
  EXPECT_EQ(ptx->find('\0'), std::string::npos);
  auto cubin = CompileToCubin(source, "prelude_kernel.cu", kRealArch);
  ASSERT_TRUE(cubin.ok()) << cubin.status().to_string();
  EXPECT_EQ(cubin->substr(0, 4),
            "\x7f"
            "ELF");
}

// --fmad=false is always passed: a product feeding a sum stays two
// instructions (mul then add), never one fma, as on the CPU backend.
TEST(NvrtcCompilerTest, NeverContractsIntoFma) {
  BATON_SKIP_WITHOUT_NVRTC();
  auto ptx = CompileToPtx(
      "extern \"C\" __global__ void f(float* o, const float* a) {\n"
      "  int i = threadIdx.x; o[i] = a[i] * a[i + 1] + a[i + 2];\n}\n",
      "fmad.cu", kVirtualArch);
  ASSERT_TRUE(ptx.ok()) << ptx.status().to_string();
  EXPECT_EQ(ptx->find("fma."), std::string::npos) << *ptx;
  EXPECT_NE(ptx->find("mul."), std::string::npos) << *ptx;
}

TEST(NvrtcCompilerTest, ASyntaxErrorReturnsTheLog) {
  BATON_SKIP_WITHOUT_NVRTC();
  auto ptx = CompileToPtx(
      "extern \"C\" __global__ void bad(float* o) {\n"
      "  o[threadIdx.x] = undeclared_identifier_xyz + 1.0f;\n}\n",
      "broken_kernel.cu", kVirtualArch);
  ASSERT_FALSE(ptx.ok());
  EXPECT_EQ(ptx.status().code(), ErrorCode::kInvalidArgument);
  const std::string& message = ptx.status().message();
  EXPECT_NE(message.find("broken_kernel.cu"), std::string::npos) << message;
  EXPECT_NE(message.find("NVRTC_ERROR_COMPILATION"), std::string::npos)
      << message;
  EXPECT_NE(message.find("undeclared_identifier_xyz"), std::string::npos)
      << message;
}

TEST(NvrtcCompilerTest, ABadOptionIsAnError) {
  BATON_SKIP_WITHOUT_NVRTC();
  auto ptx = CompileToPtx("extern \"C\" __global__ void g() {}\n", "opt.cu",
                          kVirtualArch, {"--no-such-nvrtc-option"});
  ASSERT_FALSE(ptx.ok());
  EXPECT_EQ(ptx.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(ptx.status().message().find("--no-such-nvrtc-option"),
            std::string::npos)
      << ptx.status().message();
}

// The same text, architecture and options compile once: the second call is
// a lookup that returns the same bytes; another option is another entry.
TEST(NvrtcCompilerTest, CachesByContent) {
  BATON_SKIP_WITHOUT_NVRTC();
  const std::string source = std::string(cuda::codegen::DevicePrelude()) +
                             "extern \"C\" __global__ void cached(float* o) "
                             "{ o[threadIdx.x] = 2.0f; }\n";
  auto first = CompileToCubin(source, "cached.cu", kRealArch);
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  const auto start = std::chrono::steady_clock::now();
  auto second = CompileToCubin(source, "cached.cu", kRealArch);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ASSERT_TRUE(second.ok()) << second.status().to_string();
  EXPECT_EQ(*first, *second);
  EXPECT_LT(seconds, 0.05);  // a compile of the prelude takes ~0.5 s
  auto ptx = CompileToPtx(source, "cached.cu", kVirtualArch);
  ASSERT_TRUE(ptx.ok()) << ptx.status().to_string();
  EXPECT_NE(*ptx, *first);
}

TEST(NvrtcCompilerTest, CompilesFromSeveralThreadsAtOnce) {
  BATON_SKIP_WITHOUT_NVRTC();
  constexpr int kThreads = 4;
  std::vector<std::string> ptx(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &ptx, &errors] {
      const std::string name = "kernel_" + std::to_string(t);
      const std::string source = "extern \"C\" __global__ void " + name +
                                 "(int* o) { o[threadIdx.x] = threadIdx.x * " +
                                 std::to_string(t + 2) + "; }\n";
      auto result = CompileToPtx(source, name + ".cu", kVirtualArch);
      if (result.ok()) {
        ptx[t] = std::move(result).value();
      } else {
        errors[t] = result.status().to_string();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(errors[t], "") << "thread " << t;
    EXPECT_NE(ptx[t].find(".visible .entry kernel_" + std::to_string(t)),
              std::string::npos)
        << "thread " << t;
  }
}

// The kernels of random programs (elementwise chains with promotion and
// scalar broadcasts, reductions, data movement, indexing, matmul; the
// programs with ops the emitter refuses -- sort, control flow, host
// callbacks -- are left out) compile for sm_90, all in one source.
TEST(NvrtcCompilerTest, GeneratedKernelsOfRandomProgramsCompileForSm90) {
  BATON_SKIP_WITHOUT_NVRTC();
  constexpr int kPrograms = 400;
  std::vector<cuda::codegen::EmittedProgram> emitted;
  emitted.reserve(kPrograms);
  int refused = 0;
  for (int seed = 0; seed < kPrograms; ++seed) {
    testing::ProgramGenerator generator(20261205 + seed);
    const testing::PlannedProgram p =
        testing::Plan(generator.Generate().program);
    cuda::codegen::EmitOptions options;
    options.kernel_prefix = "bt_p" + std::to_string(seed) + "_k";
    auto e = cuda::codegen::EmitProgram(p.program, p.plan, options,
                                        "random " + std::to_string(seed));
    if (!e.ok()) {
      EXPECT_EQ(e.status().code(), ErrorCode::kUnimplemented)
          << e.status().to_string();
      ++refused;
      continue;
    }
    emitted.push_back(std::move(*e));
  }
  std::vector<const cuda::codegen::EmittedProgram*> all;
  size_t kernels = 0;
  for (const auto& e : emitted) {
    all.push_back(&e);
    kernels += e.kernel_names.size();
  }
  // About a quarter of the programs are emitted: the others hold a host
  // callback (the generator adds one to two thirds of them), a control-flow
  // region or a sort.
  EXPECT_GT(emitted.size(), kPrograms / 6) << refused << " refused";
  const std::string source = cuda::codegen::CombinedSource(all);
  auto cubin = CompileToCubin(source, "random_programs.cu", kRealArch);
  ASSERT_TRUE(cubin.ok()) << cubin.status().to_string();
  EXPECT_EQ(cubin->substr(0, 4),
            "\x7f"
            "ELF");
  std::printf("%zu programs, %zu kernels, %zu bytes of source compiled\n",
              emitted.size(), kernels, source.size());
}

}  // namespace
}  // namespace baton
