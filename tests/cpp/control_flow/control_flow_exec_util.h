// Helpers for the control-flow executor tests (control_flow_exec_*_test.cc):
// run a program through the jit on the CPU device and compare it with the
// reference interpreter, checking donation and device memory on the way.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "baton/compiler/program_printer.h"
#include "baton/compiler/reference_interpreter.h"
#include "control_flow/control_flow_test_util.h"
#include "jit/jit_test_util.h"

namespace baton::cf_exec {

using namespace baton::testing;
namespace c = compiler;
using c::Literal;
using c::Program;
using c::ValueId;
using c::ValueType;
using c::cf_test::EmitGroup;
using c::cf_test::I32;
using c::cf_test::Region;
using c::cf_test::T;
using ::testing::HasSubstr;

inline constexpr int64_t kMiB = 1 << 20;
inline constexpr int64_t kKiB = 1 << 10;

// A program traced from `fn` over parameters of `types`.
inline Program Build(const std::vector<ValueType>& types,
                     const c::cf_test::RegionFn& fn) {
  return *Region(types, fn);
}

// A literal of `shape` and `dtype` with small varied values (exact in every
// float type), different per `seed`.
inline Literal Data(Shape shape, uint32_t seed, DType dtype = DType::kFloat32) {
  std::vector<double> v(static_cast<size_t>(shape.num_elements()));
  uint32_t s = seed * 2654435761u + 12345u;
  for (double& x : v) {
    s = s * 1664525u + 1013904223u;
    const int r = static_cast<int>((s >> 16) % 17) - 8;
    x = dtype == DType::kInt32 ? r : r / 8.0;
  }
  return Literal::FromDoubles(dtype, std::move(shape), v);
}

inline std::vector<ArgSpec> SpecsOf(const std::vector<Literal>& args,
                                    const std::vector<int>& donate) {
  std::vector<ArgSpec> specs;
  for (size_t i = 0; i < args.size(); ++i) {
    const bool d = std::find(donate.begin(), donate.end(),
                             static_cast<int>(i)) != donate.end();
    specs.push_back(
        ArgSpec{args[i].shape(), args[i].dtype(), MemoryKind::kDevice, d});
  }
  return specs;
}

// "" when `got` equals `want` (bitwise, NaNs alike) or, with rtol > 0, is
// within rtol of it relative to want's largest magnitude.
inline std::string Mismatch(const Literal& want, const Literal& got,
                            double rtol) {
  if (want.shape() != got.shape() || want.dtype() != got.dtype()) {
    return "type " + got.ToString() + " vs reference " + want.ToString();
  }
  double scale = 0;
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    scale = std::max(scale, std::fabs(want.GetAsDouble(i)));
  }
  const size_t elem = dtype_size(want.dtype());
  const auto* w = static_cast<const uint8_t*>(want.untyped_data());
  const auto* g = static_cast<const uint8_t*>(got.untyped_data());
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    if (std::memcmp(w + i * elem, g + i * elem, elem) == 0) continue;
    const double a = want.GetAsDouble(i), b = got.GetAsDouble(i);
    if (std::isnan(a) && std::isnan(b)) continue;
    if (rtol > 0 && std::fabs(a - b) <= rtol * std::max(scale, 1e-30)) continue;
    return "element " + std::to_string(i) + ": got " + got.ElementToString(i) +
           ", reference " + want.ElementToString(i);
  }
  return "";
}

struct RunOptions {
  std::vector<int> donate;  // by position
  double rtol = 0;          // 0: bitwise
};

// Runs `p` on `args` through the jit with `donate`d arguments and expects
// the reference interpreter's outputs; undonated arguments must be left as
// they were, donated ones consumed, and device memory back at its level
// once everything is dropped. Returns the executable's in-place misses.
inline std::vector<c::InPlaceMiss> ExpectMatchesReference(
    const Program& p, const std::vector<Literal>& args,
    const RunOptions& opt = {}, const std::string& what = "") {
  SCOPED_TRACE(what);
  Result<std::vector<Literal>> want = c::Interpret(p, args);
  EXPECT_TRUE(want.ok()) << want.status().to_string() << ProgramToText(p);
  if (!want.ok()) return {};
  EXPECT_TRUE(Dev()->Synchronize().ok());
  const int64_t base = Stats().bytes_in_use;
  std::vector<c::InPlaceMiss> misses;
  {
    Jitted f([&p](TraceScope& s,
                  const std::vector<Tracer>& a) { return Replay(p, s, a); },
             {.name = "control_flow", .donate_argnums = opt.donate});
    std::vector<Array> arrays;
    std::vector<Arg> call;
    for (const Literal& l : args) {
      arrays.push_back(ToArray(l));
      call.emplace_back(arrays.back());
    }
    Result<std::vector<Array>> got = f.Call(std::move(call));
    EXPECT_TRUE(got.ok()) << got.status().to_string() << ProgramToText(p);
    if (!got.ok()) return {};
    auto exe = ValueOrThrow(f.Lower(SpecsOf(args, opt.donate), Dev()));
    misses = exe->in_place_misses();
    // The loops run as region steps: the optimizer keeps them (and inlining
    // a call may bring more).
    int loops = 0, compiled_loops = 0;
    for (c::OpKind k :
         {c::OpKind::kWhile, c::OpKind::kScan, c::OpKind::kCase}) {
      loops += c::cf_test::CountKind(p, k);
      compiled_loops += c::cf_test::CountKind(exe->program(), k);
    }
    EXPECT_GE(compiled_loops, loops) << exe->as_text();
    EXPECT_EQ(got.value().size(), want.value().size());
    for (size_t i = 0; i < got.value().size() && i < want.value().size(); ++i) {
      const Literal host = ToLiteral(got.value()[i]);
      const std::string m = Mismatch(want.value()[i], host, opt.rtol);
      EXPECT_EQ(m, "") << "output " << i << "\n  got " << host.ToString()
                       << "\n  reference " << want.value()[i].ToString() << "\n"
                       << exe->as_text();
    }
    for (size_t i = 0; i < arrays.size(); ++i) {
      const bool donated = std::find(opt.donate.begin(), opt.donate.end(),
                                     static_cast<int>(i)) != opt.donate.end();
      EXPECT_EQ(arrays[i].IsDeleted(), donated) << "argument " << i;
      if (!donated) {
        // The initial values are read only: the loop ran on copies.
        EXPECT_EQ(ToLiteral(arrays[i]), args[i]) << "argument " << i;
      }
    }
  }
  EXPECT_TRUE(Dev()->Synchronize().ok());
  EXPECT_EQ(Stats().bytes_in_use, base) << "device memory after the call";
  return misses;
}

inline std::string MissesText(const std::vector<c::InPlaceMiss>& misses) {
  std::string s;
  for (const auto& m : misses) s += m.what + ": " + m.why + "\n";
  return s;
}

}  // namespace baton::cf_exec
