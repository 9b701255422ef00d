// The random programs of the jit tests (jit/random_program_generator.h),
// emitted as CUDA kernels, compiled for the host and run there, against the
// reference interpreter: elementwise chains with promotion and scalar
// broadcasts, data movement, indexing with out-of-range indices,
// reductions and matmuls over small shapes, including empty and rank-0
// ones. Steps the emitter refuses (host callbacks, control flow, sort) run
// on the host through the reference interpreter (EmitOptions::
// host_fallback), so the emitted steps of every program are checked; all
// programs run in one host-compiler invocation. Outputs the generator marks
// exact must be bitwise the reference's (two NaNs equal, as in
// random_programs_test.cc); those downstream of a float sum or dot within
// the generator's tolerance: the kernels sum in their own fixed order (the
// GPU's, since the emulator runs the same text), the reference in row-major
// order.
// Needs no GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "codegen/codegen_harness.h"
#include "jit/random_program_corpus.h"
#include "jit/random_program_generator.h"

namespace baton {
namespace {

using namespace baton::testing;

// The jit tests' corpus (jit/random_program_corpus.h), so that every
// program the CPU executor is checked on is checked here too.
constexpr int kPrograms = kRandomProgramCount;
constexpr uint64_t kBaseSeed = kRandomProgramBaseSeed;

struct CorpusRun {
  std::string source;  // what ran (the combined emitted source)
  int host_steps = 0, device_steps = 0;
};

// The first `programs` of the corpus, emitted with `index_bits`, steps the
// emitter refuses (sort, control flow, host callbacks, linalg) run on the
// host by the reference interpreter, everything else as emitted kernels.
CorpusRun RunCorpus(int programs, int index_bits) {
  CodegenBatch b;
  b.SetIndexBits(index_bits);
  b.SetHostFallback(true);
  // The host callbacks of a program record into its Generated: each stays
  // alive until the batch has run.
  std::vector<std::unique_ptr<Generated>> generated;
  for (int k = 0; k < programs; ++k) {
    const uint64_t seed = kBaseSeed + k;
    ProgramGenerator generator(seed);
    generated.push_back(std::make_unique<Generated>(generator.Generate()));
    const Generated& g = *generated.back();
    std::vector<Val> outputs = g.outputs;
    b.Expect("seed " + std::to_string(seed), g.program, g.args,
             [outputs](int o, const Literal& want, const Literal& got) {
               return Mismatch(want, got, outputs[static_cast<size_t>(o)]);
             });
    const Status s = b.KeepIfEmitted();
    EXPECT_TRUE(s.ok()) << "seed " << seed << ": " << s.to_string();
  }
  b.Run();
  return CorpusRun{b.source(), b.host_steps(), b.device_steps()};
}

TEST(EmittedRandomProgramsTest, MatchTheReference) {
  const CorpusRun run = RunCorpus(kPrograms, 0);
  std::printf("%d random programs: %d steps ran as emitted kernels, %d on "
              "the host\n",
              kPrograms, run.device_steps, run.host_steps);
  // Most of the work is elementwise, reductions, shape ops and dots.
  EXPECT_GT(run.device_steps, 3 * run.host_steps);
  // These buffers are small: every kernel indexes in 32 bits.
  EXPECT_NE(run.source.find("typedef bt::i32 idx;"), std::string::npos);
  EXPECT_EQ(run.source.find("typedef bt::i64 idx;"), std::string::npos);
}

// The same kernels with 64-bit index arithmetic throughout, the form a
// kernel takes when a buffer reaches 2^31 bytes (too big to test here).
TEST(EmittedRandomProgramsTest, MatchTheReferenceWith64BitIndices) {
  const CorpusRun run = RunCorpus(kPrograms / 10, 64);
  EXPECT_NE(run.source.find("typedef bt::i64 idx;"), std::string::npos);
  EXPECT_EQ(run.source.find("typedef bt::i32 idx;"), std::string::npos);
}

}  // namespace
}  // namespace baton
