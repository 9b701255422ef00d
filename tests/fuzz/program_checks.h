// What the compiler fuzzers (fuzz_program_builder.cc, fuzz_tracer.cc) do
// with a program that built: every consumer of a finished Program must
// accept it without a crash, UB or sanitizer report, and the results must
// agree.
//
//   1. Verify() passes (when the builder emitted whole region groups:
//      Program::Add checks each instruction, Verify re-checks them all).
//   2. The printer prints it; each pass (DCE, CSE, call inlining, Optimize)
//      returns a program that verifies, with the same parameter and output
//      types.
//   3. When every value (regions included) has at most kMaxInterpElements
//      elements, every loop is known to stop (the fuzzers build bounded
//      while loops) and the estimated work is small, the reference
//      interpreter runs it on arguments decoded from the input and gives
//      outputs of the declared types, the same (bitwise, NaNs alike) for the
//      optimized program.
//   4. The program's JVP, VJP and vmap agree with it (transform_checks.h),
//      and so does its partitioning over a mesh of 2 or 2 x 2 devices with
//      seeded parameter layouts, run by the SPMD interpreter
//      (partition_checks.h).
//   5. Then the CPU backend compiles (or refuses as Unimplemented, a
//      documented limitation) and runs the optimized program; its
//      outputs have the declared types and equal the interpreter's bitwise
//      wherever no floating-point reduction or dot (whose rounding order may
//      differ) is upstream.
// A violated invariant aborts with a description (libFuzzer reports it as a
// crash, with the input).
//
// Not thread-safe; the fuzzers are single-threaded (the CPU backend's own
// threads aside).
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "baton/backend/cpu/cpu_executable.h"
#include "baton/compiler/control_flow.h"
#include "baton/compiler/ir.h"
#include "baton/compiler/passes.h"
#include "baton/compiler/program_printer.h"
#include "baton/compiler/reference_interpreter.h"
#include "baton/runtime/client.h"
#include "baton/runtime/transfer.h"
#include "fuzz_input.h"

namespace baton::fuzz {

namespace c = compiler;

inline constexpr int64_t kMaxInterpElements = 4096;
inline constexpr double kMaxInterpWork = 2e5;

[[noreturn]] inline void FuzzFail(const std::string& what,
                                  const c::Program* program = nullptr) {
  std::fprintf(stderr, "fuzz invariant violated: %s\n", what.c_str());
  if (program) {
    std::fprintf(stderr, "%s\n", c::ProgramToText(*program).c_str());
  }
  std::abort();
}

// Estimated element operations of one run, or a negative number when some
// value is too large or a loop's trip count is unknown. `while_trips`: the
// most iterations a while loop of this program can run (the fuzzers bound
// them); -1 if unbounded.
inline double EstimateWork(const c::Program& p, int64_t while_trips) {
  double work = 0;
  for (c::ValueId id = 0; id < p.num_values(); ++id) {
    const c::Instruction& inst = p.instruction(id);
    const int64_t n = inst.type.num_elements();
    if (n > kMaxInterpElements) return -1;
    work += static_cast<double>(n) + 1;
    for (c::ValueId o : inst.operands) {
      work += static_cast<double>(p.type(o).num_elements());
    }
    if (const auto* f = inst.attrs_if<c::FftAttrs>()) {
      // The interpreter's plain DFT: each element sums along every length.
      double sum = 0;
      for (int64_t l : f->lengths) sum += static_cast<double>(l);
      work += static_cast<double>(n) * sum;
    }
    if (const auto* d = inst.attrs_if<c::DotGeneralAttrs>()) {
      double k = 1;
      for (int64_t dim : d->lhs_contracting) {
        k *= static_cast<double>(
            p.type(inst.operands[0]).shape[static_cast<int>(dim)]);
      }
      work += static_cast<double>(n) * k;
    }
    if (const auto* call = inst.attrs_if<c::CallAttrs>()) {
      if (call->body) {  // the interpreter runs the body for each call
        const double w = EstimateWork(*call->body, while_trips);
        if (w < 0) return -1;
        work += w + 1;
      }
      continue;
    }
    if (!c::IsControlFlow(inst.kind()) ||
        c::ControlFlowOutputIndex(inst.attrs) != 0) {
      continue;
    }
    double trips = 1;
    if (const auto* s = inst.attrs_if<c::ScanAttrs>()) {
      trips = static_cast<double>(s->length);
    } else if (inst.kind() == c::OpKind::kWhile) {
      if (while_trips < 0) return -1;
      trips = static_cast<double>(while_trips) + 1;
    }
    for (const c::Program* r : c::Regions(inst.attrs)) {
      const double w = EstimateWork(*r, while_trips);
      if (w < 0) return -1;
      work += trips * (w + 1);
    }
    if (work > kMaxInterpWork) return -1;
  }
  return work;
}

// Whether the program's results could depend on a rounding order: a
// floating-point reduction or dot anywhere (regions included).
inline bool MayRoundDifferently(const c::Program& p,
                                std::vector<bool>* per_value) {
  bool any = false;
  if (per_value) per_value->assign(p.num_values(), false);
  for (c::ValueId id = 0; id < p.num_values(); ++id) {
    const c::Instruction& inst = p.instruction(id);
    bool v = false;
    // linalg: LAPACK's own blocking and threading may differ between the
    // interpreter's call and the kernel's (split across pool threads).
    if (inst.kind() == c::OpKind::kReduce ||
        inst.kind() == c::OpKind::kDotGeneral ||
        inst.kind() == c::OpKind::kLinalg) {
      v = is_inexact(p.type(inst.operands[0]).dtype);
    }
    // fft: pocketfft's factorisation against the interpreter's plain DFT.
    if (inst.kind() == c::OpKind::kFft) v = true;
    for (const c::Program* r : c::Regions(inst.attrs)) {
      v = v || MayRoundDifferently(*r, nullptr);
    }
    if (const auto* call = inst.attrs_if<c::CallAttrs>()) {
      if (call->body) v = v || MayRoundDifferently(*call->body, nullptr);
    }
    if (per_value) {
      for (c::ValueId o : inst.operands) v = v || (*per_value)[o];
      (*per_value)[id] = v;
    }
    any = any || v;
  }
  return any;
}

// Bitwise equality, except that two NaNs are equal (payloads are no
// contract).
inline bool SameValues(const c::Literal& a, const c::Literal& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  const size_t elem = dtype_size(a.dtype());
  const auto* x = static_cast<const uint8_t*>(a.untyped_data());
  const auto* y = static_cast<const uint8_t*>(b.untyped_data());
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    if (std::memcmp(x + i * elem, y + i * elem, elem) == 0) continue;
    if (is_floating(a.dtype()) && std::isnan(a.GetAsDouble(i)) &&
        std::isnan(b.GetAsDouble(i))) {
      continue;
    }
    if (is_complex(a.dtype())) {
      // Part by part: equal bits, or NaN in both.
      const size_t part = elem / 2;
      bool same = true;
      for (size_t k = 0; k < 2; ++k) {
        const uint8_t* px = x + i * elem + k * part;
        const uint8_t* py = y + i * elem + k * part;
        if (std::memcmp(px, py, part) == 0) continue;
        double dx, dy;
        if (part == 4) {
          float fx, fy;
          std::memcpy(&fx, px, 4);
          std::memcpy(&fy, py, 4);
          dx = fx;
          dy = fy;
        } else {
          std::memcpy(&dx, px, 8);
          std::memcpy(&dy, py, 8);
        }
        same = same && std::isnan(dx) && std::isnan(dy);
      }
      if (same) continue;
    }
    return false;
  }
  return true;
}

inline void CheckSameSignature(const c::Program& a, const c::Program& b,
                               const char* pass) {
  if (a.parameter_types() != b.parameter_types()) {
    FuzzFail(std::string(pass) + " changed the parameter types", &a);
  }
  if (a.output_types() != b.output_types()) {
    FuzzFail(std::string(pass) + " changed the output types", &a);
  }
  if (Status s = b.Verify(); !s.ok()) {
    FuzzFail(std::string(pass) +
                 " produced a program that fails Verify: " + s.message(),
             &a);
  }
}

}  // namespace baton::fuzz

// The transformation and partitioning checks use FuzzFail, SameValues and
// MayRoundDifferently above; CheckProgram below calls them.
#include "transform_checks.h"  // NOLINT(build/include_order)
#include "partition_checks.h"   // NOLINT(build/include_order)

namespace baton::fuzz {

inline Device* FuzzDevice() { return Client::Default().devices()[0]; }

// Runs `program` on the CPU backend; compares with `want` where exact.
inline void CheckCpuBackend(const c::Program& optimized,
                            const std::vector<c::Literal>& args,
                            const std::vector<c::Literal>& want) {
  Device* dev = FuzzDevice();
  auto program = std::make_shared<const c::Program>(optimized);
  Result<std::shared_ptr<cpu::CpuExecutable>> exe = cpu::CpuExecutable::Compile(
      program, std::vector<bool>(program->num_parameters(), false), dev,
      "fuzz");
  if (!exe.ok()) {
    // A documented limitation (e.g. memory-kind moves inside a loop body)
    // is refused as Unimplemented, with a message; anything else is a bug.
    if (exe.status().code() == ErrorCode::kUnimplemented &&
        !exe.status().message().empty()) {
      return;
    }
    FuzzFail("CpuExecutable::Compile refused a verified program: " +
                 exe.status().to_string(),
             program.get());
  }
  std::vector<CallArgument> call(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const c::Literal& l = args[i];
    Result<Array> a =
        DevicePut(HostBuffer{l.untyped_data(), l.shape(), l.dtype()}, dev,
                  program->parameter_type(static_cast<int>(i)).memory_kind);
    if (!a.ok()) FuzzFail("DevicePut failed: " + a.status().message());
    call[i].array = std::move(a).value();
  }
  Result<std::vector<Array>> got = exe.value()->Execute(call);
  if (!got.ok()) {
    FuzzFail("Execute failed: " + got.status().message(), program.get());
  }
  std::vector<bool> inexact;
  MayRoundDifferently(*program, &inexact);
  const std::vector<c::ValueType> types = program->output_types();
  if (got.value().size() != want.size()) FuzzFail("output count differs");
  for (size_t i = 0; i < want.size(); ++i) {
    const Array& out = got.value()[i];
    if (out.shape() != types[i].shape || out.dtype() != types[i].dtype ||
        out.memory_kind() != types[i].memory_kind) {
      FuzzFail(
          "CPU output " + std::to_string(i) + " is not of its declared type",
          program.get());
    }
    c::Literal host(out.shape(), out.dtype());
    if (Status s = CopyToHost(out, host.untyped_mutable_data(),
                              static_cast<size_t>(host.byte_size()));
        !s.ok()) {
      FuzzFail("CopyToHost failed: " + s.message());
    }
    if (!inexact[program->outputs()[i]] && !SameValues(host, want[i])) {
      FuzzFail("CPU output " + std::to_string(i) + " is " + host.ToString() +
                   ", the reference interpreter says " + want[i].ToString(),
               program.get());
    }
  }
}

// The checks at the top of this file. `whole_groups`: the builder emitted
// region groups whole (so Verify must pass). `while_trips`: the bound on
// any while loop's iterations, -1 when unknown. `run_backend`: also
// compile and run on the CPU backend.
inline void CheckProgram(const c::Program& p, FuzzInput& in, bool whole_groups,
                         int64_t while_trips, bool run_backend) {
  if (Status s = p.Verify(); !s.ok()) {
    if (whole_groups) FuzzFail("Verify failed: " + s.message(), &p);
    // Verify said why; the interpreter and the backend refuse it too.
    if (c::Interpret(p, {}).ok()) FuzzFail("Interpret ran a bad program", &p);
    auto bad = std::make_shared<const c::Program>(p);
    if (cpu::CpuExecutable::Compile(
            bad, std::vector<bool>(p.num_parameters(), false), FuzzDevice(),
            "fuzz")
            .ok()) {
      FuzzFail("CpuExecutable::Compile accepted a program that fails Verify",
               &p);
    }
    return;
  }
  const std::string text = c::ProgramToText(p);
  if (text.empty()) FuzzFail("empty program text");
  for (c::ValueId id = 0; id < p.num_values(); ++id) {
    (void)c::InstructionToText(p, id);
  }
  CheckSameSignature(p, c::EliminateDeadCode(p), "EliminateDeadCode");
  CheckSameSignature(p, c::EliminateCommonSubexpressions(p),
                     "EliminateCommonSubexpressions");
  CheckSameSignature(p, c::InlineCalls(p), "InlineCalls");
  const c::Program optimized = c::Optimize(p);
  CheckSameSignature(p, optimized, "Optimize");
  (void)c::ProgramToText(optimized);

  if (EstimateWork(p, while_trips) < 0 ||
      EstimateWork(optimized, while_trips) < 0) {
    return;
  }
  // Arguments: the input's remaining bytes, then a pattern.
  std::vector<c::Literal> args;
  uint32_t fill = 0x9e3779b9u;
  for (int i = 0; i < p.num_parameters(); ++i) {
    const c::ValueType& t = p.parameter_type(i);
    c::Literal lit(t.shape, t.dtype);
    auto* bytes = static_cast<uint8_t*>(lit.untyped_mutable_data());
    for (int64_t b = 0; b < lit.byte_size(); ++b) {
      fill = fill * 1664525u + 1013904223u;
      bytes[b] = in.empty() ? static_cast<uint8_t>(fill >> 24) : in.Byte();
    }
    if (t.dtype == DType::kBool) {  // a bool byte is 0 or 1
      for (int64_t b = 0; b < lit.byte_size(); ++b) bytes[b] &= 1;
    }
    args.push_back(std::move(lit));
  }
  Result<std::vector<c::Literal>> want = c::Interpret(p, args);
  if (!want.ok()) {
    FuzzFail("the interpreter refused a verified program: " +
                 want.status().message(),
             &p);
  }
  const std::vector<c::ValueType> types = p.output_types();
  for (size_t i = 0; i < types.size(); ++i) {
    if (want.value()[i].shape() != types[i].shape ||
        want.value()[i].dtype() != types[i].dtype) {
      FuzzFail("interpreter output " + std::to_string(i) +
                   " is not of its declared type",
               &p);
    }
  }
  Result<std::vector<c::Literal>> again = c::Interpret(optimized, args);
  if (!again.ok()) {
    FuzzFail("the interpreter refused the optimized program: " +
                 again.status().message(),
             &optimized);
  }
  for (size_t i = 0; i < types.size(); ++i) {
    if (!SameValues(want.value()[i], again.value()[i])) {
      FuzzFail("Optimize changed output " + std::to_string(i) + ": " +
                   want.value()[i].ToString() + " became " +
                   again.value()[i].ToString(),
               &p);
    }
  }
  CheckTransforms(p, args, want.value());
  CheckPartitioned(p, args, want.value(), fill);
  if (run_backend) CheckCpuBackend(optimized, args, want.value());
}

}  // namespace baton::fuzz
