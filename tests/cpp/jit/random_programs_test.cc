// Issue 3 acceptance 2: random programs run through the planned, in-place,
// fused executor (Jitted -> CpuExecutable, after CSE and DCE) give the same
// results as the reference interpreter, which allocates every value afresh.
//
// Each program is built with the tracer from a fixed seed: random mixes of
// elementwise ops (with scalar broadcasts and dtype promotion), data
// movement, indexing, reductions and contractions over small shapes,
// including empty and rank-0 ones, in float32, int32, float16, bfloat16 and
// bool, with some parameters donated (by position or at the call site) and
// some values moved to host memory kinds. Outputs that depend only on
// elementwise and data-movement ops must be bitwise equal (two NaNs count as
// equal: their payloads are not part of any contract); outputs downstream of
// a floating-point sum, product or dot are compared within a tolerance, and
// the generator never lets such a value reach an op that would amplify a
// rounding difference (comparisons, rounding, integer conversion, indices).
//
// After each program, while its outputs are alive, each memory kind holds
// exactly the live arguments, distinct outputs and constants -- the
// program's and those of its control-flow regions, which the executable's
// region steps hold, shared by content -- (temporaries and unusable
// donations are freed) -- as soon as a computed output is
// ready (DESIGN's completion order) and again after synchronizing; once
// everything is dropped, bytes_in_use is back to where it started.
//
// BATON_RANDOM_PROGRAMS=<count> runs another number of programs;
// BATON_RANDOM_PROGRAM=<seed> runs one (as printed with a failure).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "baton/backend/cpu/fusion_tiling.h"
#include "baton/backend/simulated/simulated_backend.h"
#include "baton/compiler/buffer_assignment.h"
#include "baton/compiler/passes.h"
#include "baton/compiler/program_printer.h"
#include "baton/compiler/reference_interpreter.h"
#include "baton/compiler/step_plan.h"
#include "baton/core/config.h"
#include "baton/runtime/best_fit_allocator.h"
#include "jit/jit_test_util.h"
#include "jit/random_program_corpus.h"
#include "jit/random_program_generator.h"

namespace baton {
namespace {

using namespace baton::testing;

// Well above the 500 the issue asks for, and about 1 s in a release build.
constexpr int kDefaultNumPrograms = kRandomProgramCount;
constexpr uint64_t kBaseSeed = kRandomProgramBaseSeed;

// "" when the executor's callbacks saw what the reference's saw, in the
// same order (NaN equal to NaN); else the first difference.
std::string SamePrints(const std::vector<c::test_util::Seen>& want,
                       const std::vector<c::test_util::Seen>& got) {
  if (want.size() != got.size()) {
    return std::to_string(got.size()) + " calls, the reference made " +
           std::to_string(want.size());
  }
  for (size_t k = 0; k < want.size(); ++k) {
    const auto& w = want[k];
    const auto& o = got[k];
    bool same = w.tag == o.tag && w.operands.size() == o.operands.size();
    for (size_t i = 0; same && i < w.operands.size(); ++i) {
      same = w.operands[i].size() == o.operands[i].size();
      for (size_t e = 0; same && e < w.operands[i].size(); ++e) {
        const double a = w.operands[i][e], b = o.operands[i][e];
        same = a == b || (std::isnan(a) && std::isnan(b));
      }
    }
    if (!same) {
      return "call " + std::to_string(k) + " (" + o.tag + ", reference " +
             w.tag + ") saw other values";
    }
  }
  return "";
}

// The distinct constants (by content, as ConstantCache shares them) of `p`
// and, with `regions`, recursively, of its control-flow regions, each
// optimized as the CPU executor's region steps compile them (the simulated
// device interprets regions on the host: no device copies).
void CollectConstants(const c::Program& p,
                      std::vector<std::shared_ptr<const Literal>>& out) {
  for (const c::Instruction& inst : p.instructions()) {
    if (const auto* k = inst.attrs_if<c::ConstantAttrs>()) {
      bool seen = false;
      for (const auto& l : out) seen |= *l == *k->literal;
      if (!seen) out.push_back(k->literal);
    }
    if (c::IsControlFlow(inst.kind()) &&
        c::ControlFlowOutputIndex(inst.attrs) == 0) {
      for (const c::Program* r : c::Regions(inst.attrs)) {
        CollectConstants(c::Optimize(*r), out);
      }
    }
  }
}

int64_t Granule() {
  return static_cast<int64_t>(BestFitAllocator::Options{}.granularity);
}
int64_t Rounded(int64_t bytes) {
  const int64_t g = Granule();
  return std::max<int64_t>(g, (bytes + g - 1) / g * g);
}

std::array<int64_t, kNumMemoryKinds> InUse(Device* device) {
  std::array<int64_t, kNumMemoryKinds> v{};
  for (int k = 0; k < kNumMemoryKinds; ++k) {
    v[k] = device->memory_space(static_cast<MemoryKind>(k))
               .stats()
               .bytes_in_use;
  }
  return v;
}

// What the programs exercised, so that a change to the generator cannot
// quietly stop testing something.
struct Coverage {
  std::array<int, c::kNumOpKinds> ops{};  // instructions as traced
  int instructions = 0;
  int inexact_outputs = 0;
  int programs_with_alias = 0;     // a donated buffer holds an output
  int programs_with_in_place = 0;  // a step writes into an operand's buffer
  int donated_arguments = 0;
};

// Runs program `seed` on `device`; returns "" or a description of the
// failure.
std::string RunOne(uint64_t seed, Coverage& cov, Device* device) {
  Generated g = ProgramGenerator(seed).Generate();
  for (const c::Instruction& inst : g.program.instructions()) {
    ++cov.ops[static_cast<int>(inst.kind())];
    ++cov.instructions;
  }
  for (const Val& v : g.outputs) cov.inexact_outputs += v.exact ? 0 : 1;
  for (Donation d : g.donation) cov.donated_arguments += d != Donation::kNone;
  const std::string text = ProgramToText(c::EliminateDeadCode(g.program));
  auto fail = [&](const std::string& what) {
    std::string args;
    for (size_t i = 0; i < g.args.size(); ++i) {
      args += "  arg " + std::to_string(i) + " (" +
              std::string(memory_kind_name(g.arg_kinds[i])) +
              (g.donation[i] == Donation::kNone ? "" : ", donated") +
              "): " + g.args[i].ToString() + "\n";
    }
    return "program seed " + std::to_string(seed) + ": " + what + "\n" + text +
           args;
  };

  // The reference runs what the outputs need (values the generator dropped
  // as too large stay dead in the trace); the executor gets the whole trace.
  Result<std::vector<Literal>> want =
      c::Interpret(c::EliminateDeadCode(g.program), g.args);
  if (!want.ok()) return fail("interpreter: " + want.status().to_string());
  const std::vector<c::test_util::Seen> printed_by_reference = *g.printed;
  g.printed->clear();

  const auto base = InUse(device);
  {
    std::vector<Array> arrays;
    std::vector<ArgSpec> specs;
    std::vector<int> by_position;
    for (size_t i = 0; i < g.args.size(); ++i) {
      const Literal& l = g.args[i];
      if (g.same_array_as[i] >= 0) {
        arrays.push_back(arrays[g.same_array_as[i]]);
      } else {
        arrays.push_back(ValueOrThrow(
            DevicePut(HostBuffer{l.untyped_data(), l.shape(), l.dtype()}, device,
                      g.arg_kinds[i])));
      }
      if (g.donation[i] == Donation::kByPosition)
        by_position.push_back(static_cast<int>(i));
      specs.push_back(ArgSpec{l.shape(), l.dtype(), g.arg_kinds[i],
                              g.donation[i] != Donation::kNone});
    }
    const c::Program& program = g.program;
    Jitted f(
        [&program](TraceScope& s, const std::vector<Tracer>& a) {
          return Replay(program, s, a);
        },
        {.name = "random_program_" + std::to_string(seed),
         .donate_argnums = by_position});
    std::vector<Arg> call;
    for (size_t i = 0; i < arrays.size(); ++i) {
      if (g.donation[i] == Donation::kAtCallSite) {
        call.emplace_back(donate(arrays[i]));
      } else {
        call.emplace_back(arrays[i]);
      }
    }
    Result<std::vector<Array>> got = f.Call(std::move(call));
    if (!got.ok()) return fail("jit call failed: " + got.status().to_string());
    auto exe = ValueOrThrow(f.Lower(specs, device));
    if (exe->memory_analysis().alias_size_in_bytes > 0)
      ++cov.programs_with_alias;
    {
      // In place: a step result sharing storage with one of its inputs.
      const c::StepPlan plan = c::PlanSteps(exe->program());
      const c::BufferAssignment ba = c::AssignBuffers(
          exe->program(), plan, exe->donated(), 1, cpu::kFusionTiling);
      bool in_place = false;
      for (size_t s = 0; s < plan.steps.size(); ++s) {
        if (ba.step_is_noop[s]) continue;
        const auto& r = ba.location[plan.steps[s].result];
        for (ValueId in : plan.steps[s].inputs) {
          const auto& l = ba.location[in];
          in_place |= r.kind != c::BufferLocation::Kind::kNone &&
                      l.kind == r.kind && l.index == r.index &&
                      l.offset == r.offset;
        }
      }
      cov.programs_with_in_place += in_place;
    }
    auto fail_exe = [&](const std::string& what) {
      return fail(what + "\noptimized:\n" + exe->as_text());
    };
    if (got.value().size() != want.value().size())
      return fail_exe("output count");
    for (size_t i = 0; i < got.value().size(); ++i) {
      const Array& out = got.value()[i];
      Literal host(out.shape(), out.dtype());
      ThrowIfError(CopyToHost(out, host.untyped_mutable_data(),
                              static_cast<size_t>(host.byte_size())));
      const std::string m = Mismatch(want.value()[i], host, g.outputs[i]);
      if (!m.empty()) {
        return fail_exe("output " + std::to_string(i) + ": " + m + "\n  got " +
                        host.ToString() + "\n  reference " +
                        want.value()[i].ToString());
      }
    }
    for (size_t i = 0; i < arrays.size(); ++i) {
      if ((g.donation[i] != Donation::kNone) != arrays[i].IsDeleted()) {
        return fail_exe("argument " + std::to_string(i) +
                        (arrays[i].IsDeleted() ? " consumed but not donated"
                                               : " donated but not consumed"));
      }
    }

    // Exactly the live arguments, distinct outputs and the executable's
    // constants are in use: temporaries and unusable donated buffers are
    // gone. When some output is computed, reading it above already waited
    // for the call, and by DESIGN's completion order that suffices; a
    // second check follows a full synchronization.
    std::array<int64_t, kNumMemoryKinds> expected = base;
    std::vector<Array> live;
    auto count = [&](const Array& a) {
      if (a.IsDeleted()) return;
      for (const Array& l : live) {
        if (l.Is(a)) return;
      }
      live.push_back(a);
      expected[static_cast<int>(a.memory_kind())] += Rounded(a.nbytes());
    };
    for (const Array& a : arrays) count(a);
    for (const Array& a : got.value()) count(a);
    std::vector<std::shared_ptr<const Literal>> constants;
    // Control-flow regions are executables of their own, holding their
    // own constants (on the CPU and on the simulated device alike).
    CollectConstants(exe->program(), constants);
    for (const auto& k : constants) {
      expected[static_cast<int>(MemoryKind::kDevice)] +=
          Rounded(k->byte_size());
    }
    bool computed_output = false;
    for (const Array& o : got.value()) {
      bool is_argument = false;
      for (const Array& a : arrays) is_argument |= a.Is(o);
      computed_output |= !is_argument;
    }
    for (bool synchronized : {false, true}) {
      if (!synchronized && !computed_output) continue;
      if (synchronized) EXPECT_TRUE(device->Synchronize().ok());
      const auto in_use = InUse(device);
      for (int k = 0; k < kNumMemoryKinds; ++k) {
        if (in_use[k] != expected[k]) {
          return fail_exe(
              std::string(synchronized ? "after synchronizing, "
                                       : "once the outputs were ready, ") +
              std::string(memory_kind_name(static_cast<MemoryKind>(k))) +
              " bytes_in_use is " + std::to_string(in_use[k] - base[k]) +
              " above the start, expected " +
              std::to_string(expected[k] - base[k]) +
              " (live arguments, outputs and constants)");
        }
      }
    }
    // The loop above synchronized: every callback has run.
    if (const std::string m = SamePrints(printed_by_reference, *g.printed);
        !m.empty()) {
      return fail_exe("host callbacks: " + m);
    }
  }
  // Outputs, arguments and the executable (with its constants) are gone.
  EXPECT_TRUE(device->Synchronize().ok());
  const auto after = InUse(device);
  for (int k = 0; k < kNumMemoryKinds; ++k) {
    if (after[k] != base[k]) {
      return fail(std::string(memory_kind_name(static_cast<MemoryKind>(k))) +
                  " bytes_in_use is " + std::to_string(after[k] - base[k]) +
                  " above the start after everything was dropped (leak)");
    }
  }
  return "";
}

// Counts DonationWarnings while alive (and restores the default handler
// even if the test throws).
struct WarningCounter {
  int count = 0;
  WarningCounter() {
    set_warning_handler([this](const std::string&) { ++count; });
  }
  ~WarningCounter() { set_warning_handler(nullptr); }
};

TEST(RandomProgramsTest, PlannedExecutorMatchesReferenceInterpreter) {
  // The CPU executor; SimulatedDeviceMatchesReferenceInterpreter runs the
  // same programs on the simulated device.
  SKIP_UNLESS_CPU();
  WarningCounter warnings;
  int failures = 0;
  int programs = 0;
  Coverage cov;
  const char* only = std::getenv("BATON_RANDOM_PROGRAM");
  if (only != nullptr) {
    const std::string error =
        RunOne(std::strtoull(only, nullptr, 10), cov, Dev());
    EXPECT_EQ(error, "");
    return;
  }
  const char* count = std::getenv("BATON_RANDOM_PROGRAMS");
  const int num_programs =
      count != nullptr ? std::atoi(count) : kDefaultNumPrograms;
  for (int i = 0; i < num_programs && failures < 5; ++i) {
    const std::string error = RunOne(kBaseSeed + i, cov, Dev());
    ++programs;
    if (!error.empty()) {
      ++failures;
      ADD_FAILURE() << error;
    }
  }
  EXPECT_EQ(programs, num_programs);
  EXPECT_GE(programs, 500);
  std::string summary = std::to_string(programs) + " programs, " +
                        std::to_string(cov.instructions) + " instructions:";
  for (int k = 0; k < c::kNumOpKinds; ++k) {
    summary.append(" ").append(c::op_kind_name(static_cast<c::OpKind>(k)));
    summary.append("=").append(std::to_string(cov.ops[k]));
    // Every op kind is exercised many times, but linalg and fft, which the
    // generator does not draw (random_program_generator.h says why).
    if (static_cast<c::OpKind>(k) == c::OpKind::kLinalg ||
        static_cast<c::OpKind>(k) == c::OpKind::kFft) {
      continue;
    }
    EXPECT_GE(cov.ops[k], 20) << c::op_kind_name(static_cast<c::OpKind>(k));
  }
  summary += "; " + std::to_string(cov.inexact_outputs) +
             " outputs compared within tolerance; " +
             std::to_string(cov.donated_arguments) + " donated arguments; " +
             std::to_string(cov.programs_with_alias) +
             " programs with aliased outputs, " +
             std::to_string(cov.programs_with_in_place) +
             " with in-place steps";
  std::printf("%s\n", summary.c_str());
  EXPECT_GE(cov.programs_with_alias, 20);
  EXPECT_GE(cov.programs_with_in_place, 50);
  // Some donations cannot be used (no output of that size): those were
  // reported rather than refused.
  EXPECT_GT(warnings.count, 0);
}

// The same programs on the simulated device, through the GPU executable
// (backend/cuda/gpu_executable.h): generated kernels run as host code over
// memory the host cannot address, host steps interpreted -- the same values,
// donations and exact memory statistics as on the CPU. Fewer programs: each
// compiles its kernels with the host compiler (about 0.1 s).
TEST(RandomProgramsTest, SimulatedDeviceMatchesReferenceInterpreter) {
  WarningCounter warnings;
  Device* sim = SimulatedClient().devices()[0];
  Coverage cov;
  const char* count = std::getenv("BATON_RANDOM_PROGRAMS_SIM");
  const int num_programs = count != nullptr ? std::atoi(count) : 150;
  int failures = 0;
  for (int i = 0; i < num_programs && failures < 5; ++i) {
    const std::string error = RunOne(kBaseSeed + i, cov, sim);
    if (!error.empty()) {
      ++failures;
      ADD_FAILURE() << error;
    }
  }
  EXPECT_GE(cov.programs_with_alias, 1);
  EXPECT_GE(cov.donated_arguments, 20);
}

// Two planner bugs the random programs found, kept as plain tests.

// scatter(x, i, x): the updates are the operand itself, so the scatter must
// not write into x's buffer while it still reads updates from it (buffer
// assignment saw x once in the step's deduplicated inputs and chose it).
TEST(RandomProgramsRegressionTest, ScatterOfAnOperandIntoItselfIsNotInPlace) {
  for (bool donated : {false, true}) {
    Jitted f(
        [](TraceScope& s, const std::vector<Tracer>& a) {
          const Tracer x = a[0] * 2;
          const Tracer idx = c::constant(
              s.context(), Literal::FromVector<int32_t>({1, 2, 0, 3}));
          return std::vector<Tracer>{scatter(x, idx, x)};
        },
        {.name = "scatter_into_itself",
         .donate_argnums = donated ? std::vector<int>{0} : std::vector<int>{}});
    // x = 2a; y[idx[k]] = x[k]: y[1] = 2, y[2] = 4, y[0] = 6, y[3] = 8.
    EXPECT_EQ(ToHost(f({Floats({1, 2, 3, 4})})[0]),
              (std::vector<float>{6, 2, 4, 8}))
        << (donated ? "donated" : "temporary");
  }
}

// A reshape's result is device memory even when its operand lives in
// another kind; sharing the operand's pinned_host buffer made an output
// that claimed "device" while its storage was counted in pinned_host.
TEST(RandomProgramsRegressionTest, ReshapeOfAHostValueGetsDeviceStorage) {
  Jitted f(
      [](TraceScope&, const std::vector<Tracer>& a) {
        const Tracer h = to_memory_kind(a[0] + 1, MemoryKind::kPinnedHost);
        return std::vector<Tracer>{reshape(h, {2, 2})};
      },
      {.name = "reshape_host_value", .donate_argnums = {}});
  Array x = Floats({1, 2, 3, 4});
  EXPECT_TRUE(Dev()->Synchronize().ok());
  const auto before = InUse(Dev());
  Array y = f({x})[0];
  EXPECT_EQ(y.memory_kind(), MemoryKind::kDevice);
  EXPECT_EQ(ToHost(y), (std::vector<float>{2, 3, 4, 5}));
  EXPECT_TRUE(Dev()->Synchronize().ok());
  const auto after = InUse(Dev());
  const int dev = static_cast<int>(MemoryKind::kDevice);
  const int pinned = static_cast<int>(MemoryKind::kPinnedHost);
  EXPECT_EQ(after[pinned], before[pinned]);
  // The output, and the executable's scalar constant 1.
  EXPECT_EQ(after[dev] - before[dev], 2 * Rounded(16));
}

}  // namespace
}  // namespace baton
