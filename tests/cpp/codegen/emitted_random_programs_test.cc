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

// As random_programs_test.cc's Mismatch: "" when `got` matches `want` as
// `v` demands.
std::string Mismatch(const Literal& want, const Literal& got, const Val& v) {
  if (want.shape() != got.shape() || want.dtype() != got.dtype()) {
    return "type " + got.ToString() + " vs reference " + want.ToString();
  }
  const size_t elem = dtype_size(want.dtype());
  const auto* w = static_cast<const uint8_t*>(want.untyped_data());
  const auto* g = static_cast<const uint8_t*>(got.untyped_data());
  double scale = 0;
  if (!v.exact) {
    for (int64_t i = 0; i < want.num_elements(); ++i) {
      const double x = std::fabs(want.GetAsDouble(i));
      if (std::isfinite(x)) scale = std::max(scale, x);
    }
  }
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    if (std::memcmp(w + i * elem, g + i * elem, elem) == 0) continue;
    const double a = want.GetAsDouble(i), b = got.GetAsDouble(i);
    if (std::isnan(a) && std::isnan(b)) continue;
    if (!v.exact && std::fabs(a - b) <= v.rel * std::max(std::fabs(a), scale)) {
      continue;
    }
    return "element " + std::to_string(i) + ": emitted " +
           got.ElementToString(i) + ", reference " + want.ElementToString(i) +
           (v.exact ? " (bitwise expected)" : " (beyond tolerance)");
  }
  return "";
}

TEST(EmittedRandomProgramsTest, MatchTheReference) {
  constexpr int kPrograms = 400;
  constexpr uint64_t kBaseSeed = 20261205;
  CodegenBatch b;
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
}

}  // namespace
}  // namespace baton
