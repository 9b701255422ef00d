// NVRTC loaded at run time (backend/cuda/codegen/nvrtc_compiler.h) and the
// generated kernels compiled by it for a real GPU architecture (sm_90: NVRTC
// runs ptxas too), without a GPU: the device prelude, small kernels, every
// kernel of the random-program corpus (in chunks, on every core) and the
// MLP training step's program, whose cold compile time is printed. The disk
// cache: nvrtc_disk_cache_test.cc. Without NVRTC every test skips with the
// loader's reason.
#include "baton/backend/cuda/codegen/nvrtc_compiler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "baton/backend/cuda/codegen/kernel_emitter.h"
#include "baton/compiler/inline_program.h"
#include "baton/compiler/transforms/vjp.h"
#include "codegen/codegen_harness.h"
#include "codegen/nvrtc_test_util.h"
#include "jit/random_program_corpus.h"
#include "jit/random_program_generator.h"

namespace baton {
namespace {

using cuda::CompileToCubin;
using cuda::CompileToPtx;
using cuda::NvrtcUnavailableReason;
using cuda::NvrtcVersion;

using testing::kRealArch;  // nvrtc_test_util.h, with BATON_SKIP_WITHOUT_NVRTC
using testing::kVirtualArch;

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

// The emitted sources of the random-program corpus
// (jit/random_program_corpus.h: elementwise chains with promotion and
// scalar broadcasts, reductions, data movement, indexing, matmul; the steps
// the emitter refuses -- sort, control flow, host callbacks -- have no
// kernel), emitted as emitted_random_programs_test.cc runs them, in chunks
// of kProgramsPerChunk programs: NVRTC's time grows faster than linearly
// with the kernels in one program (all 4,000 programs in one source took
// over 15 minutes), and chunks compile in parallel.
struct Corpus {
  std::vector<std::string> chunks;
  size_t programs = 0;
  size_t kernels = 0;
  size_t bytes = 0;
};

Corpus RandomProgramCorpus() {
  constexpr int kProgramsPerChunk = 100;
  Corpus corpus;
  std::vector<cuda::codegen::EmittedProgram> chunk;
  auto close_chunk = [&] {
    std::vector<const cuda::codegen::EmittedProgram*> all;
    for (const auto& e : chunk) all.push_back(&e);
    corpus.chunks.push_back(cuda::codegen::CombinedSource(all));
    corpus.bytes += corpus.chunks.back().size();
    chunk.clear();
  };
  for (int k = 0; k < testing::kRandomProgramCount; ++k) {
    testing::ProgramGenerator generator(testing::kRandomProgramBaseSeed + k);
    const testing::PlannedProgram p =
        testing::Plan(generator.Generate().program);
    cuda::codegen::EmitOptions options;
    options.kernel_prefix = "bt_p" + std::to_string(k) + "_k";
    options.host_fallback = true;
    auto e = cuda::codegen::EmitProgram(p.program, p.plan, options,
                                        "random " + std::to_string(k));
    EXPECT_TRUE(e.ok()) << e.status().to_string();
    if (!e.ok()) continue;
    if (e->kernel_names.empty()) continue;
    corpus.kernels += e->kernel_names.size();
    ++corpus.programs;
    chunk.push_back(std::move(*e));
    if (chunk.size() == kProgramsPerChunk) close_chunk();
  }
  if (!chunk.empty()) close_chunk();
  return corpus;
}

TEST(NvrtcCompilerTest, ParsesThePtxasReport) {
  const std::vector<cuda::KernelResources> r = cuda::ParsePtxasReport(
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'a' for 'sm_90'\n"
      "ptxas info    : Function properties for a\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, "
      "0 bytes spill loads\n"
      "ptxas info    : Used 10 registers, used 0 barriers\n"
      "ptxas info    : Compile time = 3.689 ms\n"
      "ptxas info    : Function properties for _Z6helperi\n"
      "ptxas         .     24 bytes stack frame, 8 bytes spill stores, "
      "4 bytes spill loads\n"
      "ptxas info    : Compiling entry function 'b' for 'sm_90'\n"
      "ptxas info    : Function properties for b\n"
      "ptxas         .     16 bytes stack frame, 12 bytes spill stores, "
      "20 bytes spill loads\n"
      "ptxas info    : Used 255 registers, 380 bytes cmem[0]\n"
      "an unrelated line\n");
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].name, "a");
  EXPECT_TRUE(r[0].entry);
  EXPECT_EQ(r[0].registers, 10);
  EXPECT_EQ(r[0].stack_bytes, 0);
  EXPECT_EQ(r[1].name, "_Z6helperi");
  EXPECT_FALSE(r[1].entry);
  EXPECT_EQ(r[1].registers, -1);
  EXPECT_EQ(r[1].stack_bytes, 24);
  EXPECT_EQ(r[1].spill_store_bytes, 8);
  EXPECT_EQ(r[1].spill_load_bytes, 4);
  EXPECT_EQ(r[2].name, "b");
  EXPECT_TRUE(r[2].entry);
  EXPECT_EQ(r[2].registers, 255);
  EXPECT_EQ(r[2].stack_bytes, 16);
  EXPECT_EQ(r[2].spill_store_bytes, 12);
  EXPECT_EQ(r[2].spill_load_bytes, 20);
  EXPECT_TRUE(cuda::ParsePtxasReport("").empty());
}

// A kernel with a local array too large for registers, indexed at run time,
// gets a stack frame (1 KiB):
// the report says so (the parse is not vacuous on real ptxas output).
TEST(NvrtcCompilerTest, ReportsAStackFrame) {
  BATON_SKIP_WITHOUT_NVRTC();
  cuda::NvrtcCompiler compiler({});
  auto out = compiler.CompileToCubin(
      "extern \"C\" __global__ void framed(float* o, int j) {\n"
      "  float a[256];\n"
      "  for (int i = 0; i < 256; ++i) a[i] = o[i * threadIdx.x];\n"
      "  o[threadIdx.x] = a[j & 255];\n}\n"
      "extern \"C\" __global__ void plain(float* o) { o[threadIdx.x] = 1; }\n",
      "framed.cu", kRealArch);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_EQ(out->resources.size(), 2u);
  for (const cuda::KernelResources& r : out->resources) {
    EXPECT_TRUE(r.entry) << r.name;
    EXPECT_GT(r.registers, 0) << r.name;
    EXPECT_EQ(r.stack_bytes, r.name == "framed" ? 1024 : 0) << r.name;
  }
}

// CUDA's sinf/cosf/tanf (and sin/cos/tan) keep a small local array for
// the Payne-Hanek reduction of huge arguments (|x| > ~1e5): a kernel calling
// them has a stack frame of a few tens of bytes, touched only on that path.
constexpr int kTrigFrameBytes = 64;

// The kernels of an emitted source whose body computes a sine, cosine or
// tangent (the emitter comments every op with its name: "// %5 = sine").
std::set<std::string> KernelsCallingTrig(const std::string& source) {
  std::set<std::string> names;
  const std::string head = "BATON_FN void ";
  for (size_t at = source.find(head); at != std::string::npos;
       at = source.find(head, at + 1)) {
    const size_t name_end = source.find("_body(", at);
    const size_t body_end = source.find("\n}\n", at);
    if (name_end == std::string::npos || body_end == std::string::npos) break;
    const std::string body = source.substr(at, body_end - at);
    for (const char* op : {" = sine\n", " = cosine\n", " = tan\n"}) {
      if (body.find(op) != std::string::npos) {
        names.insert(source.substr(at + head.size(),
                                   name_end - at - head.size()));
      }
    }
  }
  return names;
}

// Issue 33's acceptance: every generated kernel of the corpus compiles for
// sm_90 (to a CUBIN: NVVM then ptxas) with no spills, no stack frame (but
// CUDA's trigonometry's, above) and at most kRegisterCap registers. The cap: at 128 registers per thread an SM
// (64 Ki registers) still holds 512 threads, two blocks of 256; the
// generated kernels are grid-stride loops that need a few tens (the corpus
// peaked at 32 with NVRTC 13.0; the test prints it), so a kernel past 128
// has grown something (an unrolled row, a local array) that should be
// looked at, not a higher cap. The chunks compile on every core, through
// the default compiler's disk cache (a rerun compiles nothing).
TEST(NvrtcCompilerTest, EveryGeneratedKernelCompilesForSm90WithinResources) {
  BATON_SKIP_WITHOUT_NVRTC();
  constexpr int kRegisterCap = 128;
  const Corpus corpus = RandomProgramCorpus();
  auto compiled = cuda::NvrtcCompiler::Default().CompileToCubins(
      corpus.chunks, "random_programs.cu", kRealArch);
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  const std::vector<cuda::CompiledCubin>& out = *compiled;
  size_t entries = 0, trig_frames = 0;
  int max_registers = 0;
  std::string max_name;
  int64_t stack_and_spills = 0;
  for (size_t c = 0; c < out.size(); ++c) {
    EXPECT_EQ(out[c].cubin.substr(0, 4),
              "\x7f"
              "ELF");
    const std::set<std::string> trig = KernelsCallingTrig(corpus.chunks[c]);
    for (const cuda::KernelResources& r : out[c].resources) {
      stack_and_spills +=
          r.stack_bytes + r.spill_store_bytes + r.spill_load_bytes;
      if (r.stack_bytes > 0 && trig.count(r.name) > 0) {
        EXPECT_LE(r.stack_bytes, kTrigFrameBytes) << r.name;
        ++trig_frames;
      } else {
        EXPECT_EQ(r.stack_bytes, 0) << r.name;
      }
      EXPECT_EQ(r.spill_store_bytes, 0) << r.name;
      EXPECT_EQ(r.spill_load_bytes, 0) << r.name;
      if (!r.entry) continue;
      ++entries;
      EXPECT_GT(r.registers, 0) << r.name;
      EXPECT_LE(r.registers, kRegisterCap) << r.name;
      if (r.registers > max_registers) {
        max_registers = r.registers;
        max_name = r.name;
      }
    }
  }
  // Every emitted kernel is an entry ptxas reports on.
  EXPECT_EQ(entries, corpus.kernels);
  std::printf(
      "ptxas sm_90: %zu programs, %zu kernels in %zu sources (%zu bytes), "
      "max %d registers (%s), %lld bytes of stack and spills (%zu "
      "sin/cos/tan frames)\n",
      corpus.programs, entries, corpus.chunks.size(), corpus.bytes,
      max_registers, max_name.c_str(),
      static_cast<long long>(stack_and_spills), trig_frames);
}

// The MLP training step's program (as the examples' and benchmarks' MLP:
// two dense layers, tanh, a mean squared error), its gradient by
// transforms::Vjp and an SGD update of the four parameters, in one program
// traced, optimized and planned as the jit plans it. Parameters: w1, b1,
// w2, b2, x, y; outputs: the four updated parameters and the loss.
compiler::Program MlpTrainingStep() {
  constexpr int64_t kBatch = 128;
  constexpr int64_t kIn = 784;
  constexpr int64_t kHidden = 512;
  constexpr int64_t kOut = 10;
  using compiler::TraceContext;
  using compiler::ValueType;
  const std::vector<ValueType> params = {
      {Shape{kIn, kHidden}, DType::kFloat32},
      {Shape{kHidden}, DType::kFloat32},
      {Shape{kHidden, kOut}, DType::kFloat32},
      {Shape{kOut}, DType::kFloat32},
      {Shape{kBatch, kIn}, DType::kFloat32},
      {Shape{kBatch, kOut}, DType::kFloat32}};
  auto trace = [&params](const auto& fn) {
    TraceContext ctx;
    std::vector<Tracer> p;
    for (const ValueType& t : params) p.push_back(ctx.AddParameter(t));
    return ctx.Finish(fn(ctx, p));
  };
  const compiler::Program loss =
      trace([](TraceContext&, const std::vector<Tracer>& p) {
        const Tracer h = tanh(matmul(p[4], p[0]) + p[1]);
        const Tracer out = matmul(h, p[2]) + p[3];
        const Tracer d = out - p[5];
        return std::vector<Tracer>{sum(d * d) * (1.0 / (kBatch * kOut))};
      });
  auto vjp =
      compiler::transforms::Vjp(loss, {true, true, true, true, false, false});
  EXPECT_TRUE(vjp.ok()) << vjp.status().to_string();
  if (!vjp.ok()) return compiler::Program();
  return trace([&vjp](TraceContext& ctx, const std::vector<Tracer>& p) {
    const std::vector<Tracer> fwd =
        compiler::InlineProgram(ctx, vjp->forward, p);
    std::vector<Tracer> bargs(fwd.begin() + 1, fwd.end());
    bargs.push_back(full(ctx, Shape{}, 1.0, DType::kFloat32));
    const std::vector<Tracer> grads =
        compiler::InlineProgram(ctx, vjp->backward, bargs);
    std::vector<Tracer> outs;
    for (int i = 0; i < 4; ++i) outs.push_back(p[i] - grads[i] * 0.01);
    outs.push_back(fwd[0]);
    return outs;
  });
}

// Partition: each source is the prelude and whole kernels; every kernel is
// in exactly the part part_of_kernel names; the parts are balanced.
TEST(KernelPartitionTest, EveryKernelInOnePartEachAfterThePrelude) {
  const testing::PlannedProgram p = testing::Plan(MlpTrainingStep());
  auto emitted =
      cuda::codegen::EmitProgram(p.program, p.plan, {}, "mlp training step");
  ASSERT_TRUE(emitted.ok()) << emitted.status().to_string();
  const size_t kernels = emitted->kernel_names.size();
  ASSERT_GT(kernels, 4u);
  for (int parts : {1, 3, 1000}) {
    SCOPED_TRACE(parts);
    const cuda::codegen::PartitionedSource out =
        cuda::codegen::Partition(*emitted, parts);
    ASSERT_EQ(out.sources.size(),
              std::min(kernels, static_cast<size_t>(parts)));
    ASSERT_EQ(out.part_of_kernel.size(), kernels);
    const std::string head =
        emitted->source.substr(0, emitted->kernels_offset);
    size_t total = 0;
    for (const std::string& source : out.sources) {
      EXPECT_EQ(source.compare(0, head.size(), head), 0);
      total += source.size() - head.size();
    }
    EXPECT_EQ(total, emitted->source.size() - head.size());
    for (size_t k = 0; k < kernels; ++k) {
      const std::string definition =
          "void " + emitted->kernel_names[k] + "(";
      for (size_t part = 0; part < out.sources.size(); ++part) {
        EXPECT_EQ(out.sources[part].find(definition) != std::string::npos,
                  static_cast<int>(part) == out.part_of_kernel[k])
            << emitted->kernel_names[k] << " in part " << part;
      }
    }
  }
  EXPECT_TRUE(cuda::codegen::Partition(cuda::codegen::EmittedProgram{}, 4)
                  .sources.empty());
}

// Issue 33's acceptance figure: one cold NVRTC compile (no memory or disk
// cache) of the MLP training step's whole emitted source, to a CUBIN for
// sm_90, printed, not asserted (a wall-clock limit would fail on a busy CI
// machine; the figure is reported). Its kernels meet the resource checks.
TEST(NvrtcCompilerTest, ColdCompileOfTheMlpTrainingStep) {
  BATON_SKIP_WITHOUT_NVRTC();
  const testing::PlannedProgram p = testing::Plan(MlpTrainingStep());
  ASSERT_TRUE(p.program.Verify().ok());
  auto emitted =
      cuda::codegen::EmitProgram(p.program, p.plan, {}, "mlp training step");
  ASSERT_TRUE(emitted.ok()) << emitted.status().to_string();
  size_t gemms = 0;
  for (const cuda::codegen::Action& a : emitted->actions) {
    gemms += a.kind == cuda::codegen::Action::Kind::kGemm;
  }
  EXPECT_GE(gemms, 4u);  // two forward, at least two backward products
  ASSERT_TRUE(NvrtcVersion().ok());  // NVRTC is loaded before the clock
  cuda::NvrtcCompiler cold({});
  const auto start = std::chrono::steady_clock::now();
  auto out = cold.CompileToCubin(emitted->source, "mlp_step.cu", kRealArch);
  const double ms = std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start)
                        .count();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(cold.compiles(), 1);
  int max_registers = 0;
  size_t entries = 0;
  for (const cuda::KernelResources& r : out->resources) {
    EXPECT_EQ(r.stack_bytes + r.spill_store_bytes + r.spill_load_bytes, 0)
        << r.name;
    if (!r.entry) continue;
    ++entries;
    max_registers = std::max(max_registers, r.registers);
  }
  EXPECT_EQ(entries, emitted->kernel_names.size());
  // The same kernels in one source per core, compiled side by side
  // (codegen::Partition, CompileToCubins): how an executable compiles.
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const cuda::codegen::PartitionedSource parts =
      cuda::codegen::Partition(*emitted, static_cast<int>(cores));
  cuda::NvrtcCompiler parallel({});
  const auto parallel_start = std::chrono::steady_clock::now();
  auto parallel_out =
      parallel.CompileToCubins(parts.sources, "mlp_step.cu", kRealArch);
  const double parallel_ms =
      std::chrono::duration<double, std::milli>(
          std::chrono::steady_clock::now() - parallel_start)
          .count();
  ASSERT_TRUE(parallel_out.ok()) << parallel_out.status().to_string();
  ASSERT_EQ(parallel_out->size(), parts.sources.size());
  size_t parallel_entries = 0;
  for (const cuda::CompiledCubin& c : *parallel_out) {
    for (const cuda::KernelResources& r : c.resources) {
      parallel_entries += r.entry;
    }
  }
  EXPECT_EQ(parallel_entries, entries);
  EXPECT_EQ(parallel.compiles(), static_cast<int64_t>(parts.sources.size()));
  std::printf(
      "MLP training step: %zu kernels, %zu GEMMs, %zu bytes of source, cold "
      "NVRTC compile to sm_90 %.1f ms in one source, %.1f ms in %zu sources "
      "on %u threads, max %d registers\n",
      entries, gemms, emitted->source.size(), ms, parallel_ms,
      parts.sources.size(), cores, max_registers);
}

}  // namespace
}  // namespace baton
