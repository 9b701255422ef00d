// What KernelEmitter (backend/cuda/codegen/kernel_emitter.h) hands back,
// apart from the kernels' results (the emitted_*_test.cc files): kernel
// names and prefixes, one prelude per combined source, the refusal of ops
// it does not emit, and $BATON_DUMP_CUDA_SOURCE.
#include "baton/backend/cuda/codegen/kernel_emitter.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "baton/backend/cuda/codegen/host_kernel_runner.h"
#include "baton/compiler/sort_ops.h"
#include "codegen/codegen_harness.h"

namespace baton {
namespace {

using compiler::Literal;
using namespace baton::testing;
namespace cg = cuda::codegen;

// A fused chain and a reduction of a [4, 8] float32 parameter.
PlannedProgram ChainAndSum() {
  compiler::TraceContext ctx;
  Tracer x = ctx.AddParameter({Shape{4, 8}, DType::kFloat32});
  Tracer y = exp(x) * 2 + 1;
  return Plan(ctx.Finish({y, sum(y * y, {1})}));
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

TEST(KernelEmitterTest, PrefixNamesEveryKernelAndSourcesCombine) {
  const PlannedProgram p = ChainAndSum();
  cg::EmitOptions a_options, b_options;
  a_options.kernel_prefix = "first_k";
  b_options.kernel_prefix = "second_k";
  auto a = cg::EmitProgram(p.program, p.plan, a_options, "a");
  auto b = cg::EmitProgram(p.program, p.plan, b_options, "b");
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  ASSERT_FALSE(a->kernel_names.empty());
  for (const std::string& name : a->kernel_names) {
    EXPECT_EQ(name.rfind("first_k", 0), 0u) << name;
  }
  EXPECT_EQ(a->source.substr(0, cg::DevicePrelude().size()),
            cg::DevicePrelude());
  EXPECT_LE(a->kernels_offset, a->source.size());
  EXPECT_EQ(a->source.substr(a->kernels_offset).find("namespace bt"),
            std::string::npos);
  // One prelude (and one KernelArgs), both programs' kernels.
  const std::string both = cg::CombinedSource({&*a, &*b});
  EXPECT_EQ(Count(both, "struct KernelArgs"), 1u);
  for (const std::string& name : b->kernel_names) {
    EXPECT_NE(both.find("void " + name + "("), std::string::npos) << name;
  }
  EXPECT_EQ(cg::CombinedSource({}), "");
}

TEST(KernelEmitterTest, RefusesWhatItDoesNotEmitNamingIt) {
  compiler::TraceContext ctx;
  Tracer x = ctx.AddParameter({Shape{16}, DType::kFloat32});
  const PlannedProgram p = Plan(ctx.Finish({sort(x * 2)}));
  auto e = cg::EmitProgram(p.program, p.plan, {}, "sorting");
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), ErrorCode::kUnimplemented);
  const std::string& m = e.status().message();
  EXPECT_NE(m.find("sorting: sort"), std::string::npos) << m;
  EXPECT_NE(m.find("does not run on CUDA yet"), std::string::npos) << m;
}

TEST(KernelEmitterTest, DumpsTheSourceWhenAsked) {
  char dir[] = "/tmp/baton-dump-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  ASSERT_EQ(setenv("BATON_DUMP_CUDA_SOURCE", dir, 1), 0);
  const PlannedProgram p = ChainAndSum();
  auto e = cg::EmitProgram(p.program, p.plan, {}, "my fn/1");
  unsetenv("BATON_DUMP_CUDA_SOURCE");
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    files.push_back(entry.path());
  }
  ASSERT_EQ(files.size(), 1u);
  const std::string file = files[0].filename().string();
  EXPECT_EQ(file.rfind("my_fn_1.", 0), 0u) << file;
  EXPECT_EQ(files[0].extension(), ".cu");
  std::ifstream in(files[0]);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), e->source);
  std::filesystem::remove_all(dir);
  // Unset: nothing is written.
  ASSERT_TRUE(cg::EmitProgram(p.program, p.plan, {}, "quiet").ok());
}

// A GEMM action cannot run on the host: RunOnHost says so rather than
// skipping it.
// Under AddressSanitizer the emulated kernels are instrumented
// (host_kernel_runner.cc): a kernel reading past a buffer stops there, and
// the report names the generated kernel and its line in the emitted source.
// Here the parameter's storage is a quarter of what the program says.
#if defined(__SANITIZE_ADDRESS__)
#define BATON_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BATON_TEST_ASAN 1
#endif
#endif
TEST(KernelEmitterDeathTest, AnOutOfBoundsReadStopsAtTheGeneratedLine) {
#ifndef BATON_TEST_ASAN
  GTEST_SKIP() << "needs an AddressSanitizer build (tools/build.sh asan)";
#else
  compiler::TraceContext ctx;
  Tracer x = ctx.AddParameter({Shape{64}, DType::kFloat32});
  const PlannedProgram p = Plan(ctx.Finish({x * 2 + 1}));
  auto e = cg::EmitProgram(p.program, p.plan, {}, "out_of_bounds");
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  auto library = cg::HostKernelLibrary::Compile(e->source, "out_of_bounds");
  ASSERT_TRUE(library.ok()) << library.status().to_string();
  std::vector<std::vector<char>> storage(p.program.num_values());
  std::vector<void*> slots(p.program.num_values(), nullptr);
  for (compiler::ValueId v = 0; v < p.program.num_values(); ++v) {
    if (!p.plan.materialized[v]) continue;
    const bool parameter = v == p.program.parameter(0);
    storage[v].assign(static_cast<size_t>(p.program.type(v).byte_size() /
                                          (parameter ? 4 : 1)),
                      0);
    slots[v] = storage[v].data();
  }
  EXPECT_DEATH(
      (void)cg::RunOnHost(library->get(), *e, slots,
                          std::vector<void*>(p.plan.steps.size())),
      "heap-buffer-overflow(.|\n)*bt_k0_body(.|\n)*\\.cc:[0-9]+");
#endif
}

}  // namespace
}  // namespace baton
