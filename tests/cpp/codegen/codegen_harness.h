// The generated CUDA kernels without a GPU: functions traced into programs,
// planned as the CPU backend plans them, emitted by KernelEmitter
// (backend/cuda/codegen/kernel_emitter.h), compiled for the host
// (host_kernel_runner.h) and run there, then compared with the reference
// interpreter (compiler/reference_interpreter.h).
//
// One host-compiler invocation per batch: every case of a CodegenBatch is
// emitted with its own kernel prefix and compiled in one source, because
// starting the compiler costs far more than the kernels it builds.
//
// Use:
//   CodegenBatch b;
//   b.ExpectSameBits("tanh_mul", [](TraceScope&, const std::vector<Tracer>& a)
//   {
//     return std::vector<Tracer>{a[0] * a[1] + 1};
//   }, {Literal::FromVector<float>({1, 2}), Literal::FromVector<float>({3,
//   4})}); b.ExpectClose("exp", ..., 1e-6);  // where libm differs from the
//   CPU's
//                                      // approximations (core/fast_math.h)
//   b.Run();  // emits, compiles, runs and compares every case
//
// Not thread-safe; one batch per test.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "baton/backend/cuda/codegen/host_kernel_runner.h"
#include "baton/backend/cuda/codegen/host_step.h"
#include "baton/backend/cuda/codegen/kernel_emitter.h"
#include "baton/compiler/literal.h"
#include "baton/compiler/memory_schedule.h"
#include "baton/compiler/passes.h"
#include "baton/compiler/reference_interpreter.h"
#include "baton/compiler/step_plan.h"
#include "baton/compiler/tracer.h"
#include "baton/core/error.h"
#include "baton/jit/jit.h"

namespace baton::testing {

// A program as the CPU backend would run it: traced, optimized, scheduled
// for memory and planned into steps.
struct PlannedProgram {
  compiler::Program program;
  compiler::StepPlan plan;
};

inline PlannedProgram Plan(const compiler::Program& traced) {
  PlannedProgram p;
  p.program = compiler::ScheduleForMemory(compiler::Optimize(traced), {});
  p.plan = compiler::PlanSteps(p.program);
  return p;
}

// `fn` traced on parameters shaped like `args`.
inline compiler::Program TraceOn(const TraceFn& fn,
                                 const std::vector<compiler::Literal>& args) {
  compiler::TraceContext ctx;
  TraceScope scope(&ctx);
  std::vector<Tracer> params;
  for (const compiler::Literal& l : args) {
    params.push_back(
        ctx.AddParameter(compiler::ValueType{l.shape(), l.dtype()}));
  }
  return ctx.Finish(fn(scope, params));
}

// A step left to the host (EmitOptions::host_fallback): run by the
// reference interpreter (codegen/host_step.h).
inline Status RunStepOnHost(const PlannedProgram& p, int step_index,
                            const std::vector<void*>& value_data) {
  return cuda::codegen::RunStepOnHost(p.program, p.plan, step_index,
                                      value_data);
}

// Runs one emitted program's actions on the host: each materialized value
// gets storage of its own (parameters and constants filled in), each step
// its scratch; returns the outputs.
inline Result<std::vector<compiler::Literal>> RunEmittedOnHost(
    const cuda::codegen::HostKernelLibrary& library,
    const cuda::codegen::EmittedProgram& emitted, const PlannedProgram& p,
    const std::vector<compiler::Literal>& args) {
  const compiler::Program& program = p.program;
  std::vector<std::vector<char>> storage(program.num_values());
  std::vector<void*> value_data(program.num_values(), nullptr);
  for (compiler::ValueId v = 0; v < program.num_values(); ++v) {
    if (!p.plan.materialized[v]) continue;
    // One byte at least: every slot has an address, as on a device.
    storage[v].assign(
        static_cast<size_t>(std::max<int64_t>(program.type(v).byte_size(), 1)),
        0);
    value_data[v] = storage[v].data();
    const compiler::Instruction& inst = program.instruction(v);
    const auto* c = inst.attrs_if<compiler::ConstantAttrs>();
    if (c != nullptr && c->literal->byte_size() > 0) {
      std::memcpy(storage[v].data(), c->literal->untyped_data(),
                  static_cast<size_t>(c->literal->byte_size()));
    }
  }
  for (int i = 0; i < program.num_parameters(); ++i) {
    if (args[i].byte_size() == 0) continue;  // its data may be null
    std::memcpy(value_data[program.parameter(i)], args[i].untyped_data(),
                static_cast<size_t>(args[i].byte_size()));
  }
  std::vector<std::vector<char>> scratch(emitted.step_scratch_bytes.size());
  std::vector<void*> step_scratch(scratch.size(), nullptr);
  for (size_t s = 0; s < scratch.size(); ++s) {
    if (emitted.step_scratch_bytes[s] == 0) continue;
    scratch[s].assign(static_cast<size_t>(emitted.step_scratch_bytes[s]), 0);
    step_scratch[s] = scratch[s].data();
  }
  BATON_RETURN_IF_ERROR(cuda::codegen::RunOnHost(
      &library, emitted, value_data, step_scratch,
      [&](int step) { return RunStepOnHost(p, step, value_data); }));
  std::vector<compiler::Literal> out;
  for (compiler::ValueId o : program.outputs()) {
    const compiler::ValueType& t = program.type(o);
    compiler::Literal l(t.shape, t.dtype);
    // An output that is a virtual scalar reads its one-element source.
    const compiler::ValueId src = p.plan.scalar_source[o] != compiler::kNoValue
                                      ? p.plan.scalar_source[o]
                                      : o;
    if (src != o) {
      const size_t width = dtype_size(t.dtype);
      for (int64_t i = 0; i < t.num_elements(); ++i) {
        std::memcpy(static_cast<char*>(l.untyped_mutable_data()) + i * width,
                    value_data[src], width);
      }
    } else if (l.byte_size() > 0) {
      std::memcpy(l.untyped_mutable_data(), value_data[o],
                  static_cast<size_t>(l.byte_size()));
    }
    out.push_back(std::move(l));
  }
  return out;
}

// "" when `got` has `want`'s dtype, shape and bytes, else where they
// differ.
inline std::string BitsMismatch(const compiler::Literal& want,
                                const compiler::Literal& got) {
  if (want.dtype() != got.dtype() || want.shape() != got.shape()) {
    return "type " + got.ToString() + " vs reference " + want.ToString();
  }
  const auto* wb = static_cast<const unsigned char*>(want.untyped_data());
  const auto* gb = static_cast<const unsigned char*>(got.untyped_data());
  const size_t width = dtype_size(want.dtype());
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    if (std::memcmp(wb + i * width, gb + i * width, width) != 0) {
      return "element " + std::to_string(i) + ": reference " +
             want.ElementToString(i) + ", emitted " + got.ElementToString(i);
    }
  }
  return "";
}

// "" when every element is within `rtol` relative to max(1, |want|)
// (NaN == NaN, equal infinities), else the first that is not.
inline std::string CloseMismatch(const compiler::Literal& want,
                                 const compiler::Literal& got, double rtol) {
  if (want.dtype() != got.dtype() || want.shape() != got.shape()) {
    return "type " + got.ToString() + " vs reference " + want.ToString();
  }
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    const double x = want.GetAsDouble(i), y = got.GetAsDouble(i);
    if (std::isnan(x) && std::isnan(y)) continue;
    if (x == y) continue;
    if (!(std::abs(x - y) <= rtol * std::max(1.0, std::abs(x)))) {
      return "element " + std::to_string(i) + ": reference " +
             std::to_string(x) + ", emitted " + std::to_string(y);
    }
  }
  return "";
}

class CodegenBatch {
 public:
  // Bitwise equal to the reference, output by output.
  void ExpectSameBits(const std::string& name, const TraceFn& fn,
                      const std::vector<compiler::Literal>& args) {
    Add(name, fn, args, -1);
  }
  // Within `rtol` (CloseMismatch).
  void ExpectClose(const std::string& name, const TraceFn& fn,
                   const std::vector<compiler::Literal>& args, double rtol) {
    Add(name, fn, args, rtol);
  }
  // "" when output `o` of the emitted program (`got`) is close enough to
  // the reference's (`want`), else what differs.
  using Checker = std::function<std::string(
      int o, const compiler::Literal& want, const compiler::Literal& got)>;
  // A case traced elsewhere (the random programs), checked by `check`.
  void Expect(const std::string& name, const compiler::Program& traced,
              const std::vector<compiler::Literal>& args, Checker check) {
    cases_.push_back(
        Case{Named(name), Plan(traced), args, -1, std::move(check)});
  }
  // Whether the emitter accepts a case like the last one added; drops it
  // (returning the emitter's error) when not, so that a corpus can hold
  // programs the code generator does not cover yet.
  Status KeepIfEmitted() {
    const Case& c = cases_.back();
    cuda::codegen::EmitOptions options;
    options.host_fallback = host_fallback_;
    auto e = cuda::codegen::EmitProgram(c.planned.program, c.planned.plan,
                                        options, c.name);
    if (!e.ok()) cases_.pop_back();
    return e.status();
  }

  int size() const { return static_cast<int>(cases_.size()); }

  // Appended to the names of the cases added next (a dtype, in loops).
  void SetContext(const std::string& context) { context_ = context; }
  // EmitOptions::index_bits for every case (0: per kernel; 64: forced).
  void SetIndexBits(int bits) { index_bits_ = bits; }
  // EmitOptions::host_fallback for every case: steps the emitter refuses
  // run on the host through the reference interpreter (RunStepOnHost), so
  // the other steps of such programs are tested too.
  void SetHostFallback(bool on) { host_fallback_ = on; }
  // EmitOptions::library_gemm for every case: float dots become GEMM
  // actions, run by the host's BLAS (host_gemm.h) as cuBLAS runs them on a
  // GPU. Off by default: dots are kernels.
  void SetLibraryGemm(bool on) { library_gemm_ = on; }
  // How many steps of the cases run so far were left to the host, and how
  // many ran as emitted actions.
  int host_steps() const { return host_steps_; }
  int device_steps() const { return device_steps_; }

  // Emits every case (dots as kernels unless SetLibraryGemm), compiles them in
  // one host-compiler run, runs each and compares it with the reference.
  void Run() {
    if (cases_.empty()) return;
    std::vector<cuda::codegen::EmittedProgram> emitted(cases_.size());
    std::vector<const cuda::codegen::EmittedProgram*> all;
    for (size_t c = 0; c < cases_.size(); ++c) {
      cuda::codegen::EmitOptions options;
      options.library_gemm = library_gemm_;
      options.kernel_prefix = "bt_p" + std::to_string(c) + "_k";
      options.index_bits = index_bits_;
      options.host_fallback = host_fallback_;
      auto e = cuda::codegen::EmitProgram(cases_[c].planned.program,
                                          cases_[c].planned.plan, options,
                                          cases_[c].name);
      ASSERT_TRUE(e.ok()) << cases_[c].name << ": " << e.status().to_string();
      emitted[c] = std::move(*e);
      all.push_back(&emitted[c]);
      std::vector<bool> on_host(cases_[c].planned.plan.steps.size(), false);
      for (const cuda::codegen::Action& a : emitted[c].actions) {
        if (a.kind == cuda::codegen::Action::Kind::kHostStep) {
          on_host[static_cast<size_t>(a.step)] = true;
        }
      }
      for (bool h : on_host) (h ? host_steps_ : device_steps_)++;
    }
    source_ = cuda::codegen::CombinedSource(all);
    auto library =
        cuda::codegen::HostKernelLibrary::Compile(source_, "codegen batch");
    ASSERT_TRUE(library.ok()) << library.status().to_string();
    for (size_t c = 0; c < cases_.size(); ++c) {
      const Case& k = cases_[c];
      SCOPED_TRACE(k.name);
      auto want = compiler::Interpret(k.planned.program, k.args);
      ASSERT_TRUE(want.ok()) << want.status().to_string();
      auto got = RunEmittedOnHost(**library, emitted[c], k.planned, k.args);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      ASSERT_EQ(want->size(), got->size());
      for (size_t o = 0; o < want->size(); ++o) {
        const std::string m =
            k.check      ? k.check(static_cast<int>(o), (*want)[o], (*got)[o])
            : k.rtol < 0 ? BitsMismatch((*want)[o], (*got)[o])
                         : CloseMismatch((*want)[o], (*got)[o], k.rtol);
        EXPECT_EQ(m, "") << "output " << o
                         << "\nreference: " << (*want)[o].ToString()
                         << "\nemitted:   " << (*got)[o].ToString();
      }
    }
  }

  // The combined source of the last Run (what NVRTC would compile).
  const std::string& source() const { return source_; }

 private:
  struct Case {
    std::string name;
    PlannedProgram planned;
    std::vector<compiler::Literal> args;
    double rtol;    // < 0: bitwise
    Checker check;  // when set, instead of rtol
  };
  void Add(const std::string& name, const TraceFn& fn,
           const std::vector<compiler::Literal>& args, double rtol) {
    cases_.push_back(
        Case{Named(name), Plan(TraceOn(fn, args)), args, rtol, nullptr});
  }
  std::string Named(const std::string& name) const {
    return context_.empty() ? name : name + " [" + context_ + "]";
  }

  std::vector<Case> cases_;
  std::string context_;
  int index_bits_ = 0;
  bool host_fallback_ = false;
  int host_steps_ = 0, device_steps_ = 0;
  bool library_gemm_ = false;
  std::string source_;
};

}  // namespace baton::testing
