// The random programs of the jit tests (jit/random_program_generator.h),
// emitted as CUDA kernels, compiled for the host and run there, against the
// reference interpreter: elementwise chains with promotion and scalar
// broadcasts, data movement, indexing with out-of-range indices,
// reductions and matmuls over small shapes, including empty and rank-0
// ones. Programs holding what the emitter refuses (host callbacks, control
// flow, sort) are left out; the others all run in one host-compiler
// invocation. Outputs the generator marks exact must be bitwise the
// reference's (two NaNs equal, as in random_programs_test.cc); those
// downstream of a float sum or dot within the generator's tolerance.
// Needs no GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "codegen/codegen_harness.h"
#include "jit/random_program_generator.h"

namespace baton {
namespace {

using namespace baton::testing;

// The corpus of emitted random programs, each with `index_bits`; returns
// the source that ran.
std::string RunCorpus(int index_bits) {
  constexpr int kPrograms = 400;
  constexpr uint64_t kBaseSeed = 20261205;
  CodegenBatch b;
  b.SetIndexBits(index_bits);
  int refused = 0;
  for (int k = 0; k < kPrograms; ++k) {
    const uint64_t seed = kBaseSeed + k;
    ProgramGenerator generator(seed);
    Generated g = generator.Generate();
    std::vector<Val> outputs = g.outputs;
    b.Expect("seed " + std::to_string(seed), g.program, g.args,
             [outputs](int o, const Literal& want, const Literal& got) {
               return Mismatch(want, got, outputs[static_cast<size_t>(o)]);
             });
    const Status s = b.KeepIfEmitted();
    if (!s.ok()) {
      EXPECT_EQ(s.code(), ErrorCode::kUnimplemented) << s.to_string();
      ++refused;
    }
  }
  // About a quarter are emitted (nvrtc_compiler_test.cc says why).
  EXPECT_GT(b.size(), kPrograms / 6) << refused << " refused";
  b.Run();
  return b.source();
}

TEST(EmittedRandomProgramsTest, MatchTheReference) {
  // These buffers are small: every kernel indexes in 32 bits.
  const std::string source = RunCorpus(0);
  EXPECT_NE(source.find("typedef bt::i32 idx;"), std::string::npos);
  EXPECT_EQ(source.find("typedef bt::i64 idx;"), std::string::npos);
}

// The same kernels with 64-bit index arithmetic throughout, the form a
// kernel takes when a buffer reaches 2^31 bytes (too big to test here).
TEST(EmittedRandomProgramsTest, MatchTheReferenceWith64BitIndices) {
  const std::string source = RunCorpus(64);
  EXPECT_NE(source.find("typedef bt::i64 idx;"), std::string::npos);
  EXPECT_EQ(source.find("typedef bt::i32 idx;"), std::string::npos);
}

}  // namespace
}  // namespace baton
