// What the compiler fuzzers check of a program's transformations (JVP, VJP,
// vmap), programs with control flow, calls and custom rules included: each
// transformation either refuses the program with a message (Unimplemented
// for an op without a rule; InvalidArgument or FailedPrecondition for a
// documented refusal such as forward-mode through custom_vjp or reverse mode
// through a while loop with dynamic bounds) or returns programs that verify, that
// the reference interpreter runs, and whose results agree with the
// program's own:
//  - JVP with zero tangents: the primal outputs are the program's outputs
//    (bitwise where no reduction or dot may round differently), every
//    tangent has its output's type and is zero (or NaN: 0 * inf) unless a
//    custom rule made it (HasCustomRule).
//  - VJP: the forward program's primal outputs are the program's outputs;
//    the backward program, given zero cotangents, returns one cotangent of
//    each differentiated parameter's type, zero (or NaN) unless a custom
//    rule made it.
//  - vmap over a batch of two copies of the arguments: each batched
//    output's two slices, and each unbatched output, equal the program's
//    outputs.
// Called by CheckProgram once the interpreter has run the program (so only
// for programs small and bounded enough to interpret). Included by
// program_checks.h, after the helpers it uses (FuzzFail, SameValues,
// MayRoundDifferently).
#pragma once

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "baton/compiler/reference_interpreter.h"
#include "baton/compiler/transforms/batching.h"
#include "baton/compiler/transforms/jvp.h"
#include "baton/compiler/transforms/vjp.h"

namespace baton::fuzz {

namespace transforms = c::transforms;

// A refusal a transformation may give, with a message; anything else fails.
inline void CheckRefusal(const Status& s, const char* what,
                         const c::Program& p) {
  if ((s.code() == ErrorCode::kUnimplemented ||
       s.code() == ErrorCode::kInvalidArgument ||
       s.code() == ErrorCode::kFailedPrecondition) &&
      !s.message().empty()) {
    return;
  }
  FuzzFail(std::string(what) + " failed unexpectedly: " + s.to_string(), &p);
}

// Every element zero, or NaN (a zero tangent times an infinite derivative).
inline bool ZeroOrNaN(const c::Literal& l) {
  for (int64_t i = 0; i < l.num_elements(); ++i) {
    const double v = l.GetAsDouble(i);
    if (v != 0.0 && !std::isnan(v)) return false;
  }
  return true;
}

// Whether `p` (its regions, call bodies and rules included) calls a
// custom_jvp or custom_vjp function. Their rules are the user's: the
// fuzzer's agree with the body on primal outputs (RuleCallingBody in
// fuzz_program_builder.cc), but the tangents and cotangents they return are
// random values, not zero for zero inputs as a linear map's would be.
inline bool HasCustomRule(const c::Program& p) {
  for (c::ValueId id = 0; id < p.num_values(); ++id) {
    const c::Instruction& inst = p.instruction(id);
    for (const c::Program* r : c::Regions(inst.attrs)) {
      if (HasCustomRule(*r)) return true;
    }
    const auto* call = inst.attrs_if<c::CallAttrs>();
    if (!call) continue;
    if (call->kind == c::CallKind::kCustomJvp ||
        call->kind == c::CallKind::kCustomVjp) {
      return true;
    }
    if (call->body && HasCustomRule(*call->body)) return true;
  }
  return false;
}

inline std::vector<c::Literal> InterpretOrFail(
    const c::Program& t, const std::vector<c::Literal>& args,
    const char* what, const c::Program& original) {
  if (Status s = t.Verify(); !s.ok()) {
    FuzzFail(std::string(what) + " produced a program that fails Verify: " +
                 s.message(),
             &original);
  }
  Result<std::vector<c::Literal>> out = c::Interpret(t, args);
  if (!out.ok()) {
    FuzzFail(std::string("the interpreter refused the ") + what +
                 " program: " + out.status().message(),
             &original);
  }
  return std::move(out).value();
}

inline void CheckPrimalsAgree(const std::vector<c::Literal>& got,
                              const std::vector<c::Literal>& want,
                              bool exact, const char* what,
                              const c::Program& p) {
  if (got.size() < want.size()) {
    FuzzFail(std::string(what) + " returned fewer outputs than the program",
             &p);
  }
  for (size_t i = 0; i < want.size(); ++i) {
    if (got[i].shape() != want[i].shape() ||
        got[i].dtype() != want[i].dtype()) {
      FuzzFail(std::string(what) + " output " + std::to_string(i) +
                   " is not of the program's type",
               &p);
    }
    if (exact && !SameValues(got[i], want[i])) {
      FuzzFail(std::string(what) + " changed output " + std::to_string(i) +
                   ": " + want[i].ToString() + " became " +
                   got[i].ToString(),
               &p);
    }
  }
}

inline void CheckJvp(const c::Program& p, const std::vector<c::Literal>& args,
                     const std::vector<c::Literal>& want, bool exact) {
  std::vector<bool> has_tangent(p.num_parameters());
  std::vector<c::Literal> jvp_args = args;
  bool any = false;
  for (int i = 0; i < p.num_parameters(); ++i) {
    const c::ValueType& t = p.parameter_type(i);
    has_tangent[i] = is_floating(t.dtype);
    if (has_tangent[i]) {
      jvp_args.emplace_back(t.shape, t.dtype);  // a zero tangent
      any = true;
    }
  }
  if (!any) return;
  Result<c::Program> jvp = transforms::Jvp(p, has_tangent);
  if (!jvp.ok()) return CheckRefusal(jvp.status(), "Jvp", p);
  const std::vector<c::Literal> got =
      InterpretOrFail(jvp.value(), jvp_args, "Jvp", p);
  if (got.size() != 2 * want.size()) {
    FuzzFail("Jvp returned " + std::to_string(got.size()) +
                 " outputs for a program of " + std::to_string(want.size()),
             &p);
  }
  CheckPrimalsAgree(got, want, exact, "Jvp", p);
  const bool custom = HasCustomRule(p);
  for (size_t i = 0; i < want.size(); ++i) {
    const c::Literal& tangent = got[want.size() + i];
    if (tangent.shape() != want[i].shape() ||
        tangent.dtype() != want[i].dtype()) {
      FuzzFail("Jvp tangent " + std::to_string(i) +
                   " is not of its output's type",
               &p);
    }
    if (!custom && !ZeroOrNaN(tangent)) {
      FuzzFail("Jvp with zero tangents gave tangent " + std::to_string(i) +
                   " = " + tangent.ToString(),
               &p);
    }
  }
}

inline void CheckVjp(const c::Program& p, const std::vector<c::Literal>& args,
                     const std::vector<c::Literal>& want, bool exact) {
  std::vector<bool> wrt(p.num_parameters());
  bool any = false;
  for (int i = 0; i < p.num_parameters(); ++i) {
    wrt[i] = is_floating(p.parameter_type(i).dtype);
    any = any || wrt[i];
  }
  if (!any) return;
  Result<transforms::VjpPrograms> vjp = transforms::Vjp(p, wrt);
  if (!vjp.ok()) return CheckRefusal(vjp.status(), "Vjp", p);
  const std::vector<c::Literal> forward =
      InterpretOrFail(vjp.value().forward, args, "Vjp forward", p);
  if (forward.size() != want.size() + vjp.value().residuals.size()) {
    FuzzFail("Vjp forward returned " + std::to_string(forward.size()) +
                 " outputs, not the outputs and the residuals",
             &p);
  }
  CheckPrimalsAgree(forward, want, exact, "Vjp forward", p);
  std::vector<c::Literal> backward_args(forward.begin() + want.size(),
                                        forward.end());
  for (const c::Literal& w : want) {
    backward_args.emplace_back(w.shape(), w.dtype());  // zero cotangents
  }
  const std::vector<c::Literal> cts =
      InterpretOrFail(vjp.value().backward, backward_args, "Vjp backward", p);
  const bool custom = HasCustomRule(p);
  size_t k = 0;
  for (int i = 0; i < p.num_parameters(); ++i) {
    if (!wrt[i]) continue;
    if (k >= cts.size()) FuzzFail("Vjp backward returned too few cotangents", &p);
    const c::ValueType& t = p.parameter_type(i);
    if (cts[k].shape() != t.shape || cts[k].dtype() != t.dtype) {
      FuzzFail("Vjp cotangent of parameter " + std::to_string(i) +
                   " is not of its type",
               &p);
    }
    if (!custom && !ZeroOrNaN(cts[k])) {
      FuzzFail("Vjp with zero cotangents gave parameter " + std::to_string(i) +
                   " the cotangent " + cts[k].ToString(),
               &p);
    }
    ++k;
  }
  if (k != cts.size()) FuzzFail("Vjp backward returned extra outputs", &p);
}

// Two copies of `l` stacked along a new leading dimension.
inline c::Literal StackTwice(const c::Literal& l) {
  std::vector<int64_t> dims{2};
  for (int64_t d : l.shape().dims()) dims.push_back(d);
  c::Literal out(Shape(dims), l.dtype());
  if (l.byte_size() == 0) return out;
  auto* bytes = static_cast<uint8_t*>(out.untyped_mutable_data());
  std::memcpy(bytes, l.untyped_data(), static_cast<size_t>(l.byte_size()));
  std::memcpy(bytes + l.byte_size(), l.untyped_data(),
              static_cast<size_t>(l.byte_size()));
  return out;
}

// Slice `s` (0 or 1) of a literal stacked along its first dimension.
inline c::Literal Unstack(const c::Literal& l, int s) {
  const std::vector<int64_t>& all = l.shape().dims();
  const Shape shape(std::vector<int64_t>(all.begin() + 1, all.end()));
  if (l.byte_size() == 0) return c::Literal(shape, l.dtype());
  const int64_t half = l.byte_size() / 2;
  return c::Literal::FromBytes(
      shape, l.dtype(),
      static_cast<const uint8_t*>(l.untyped_data()) + s * half);
}

inline void CheckVmap(const c::Program& p, const std::vector<c::Literal>& args,
                      const std::vector<c::Literal>& want, bool exact) {
  if (p.num_parameters() == 0) return;
  Result<transforms::BatchedProgram> batched = transforms::Vmap(
      p, std::vector<int>(p.num_parameters(), 0), /*batch_size=*/2);
  if (!batched.ok()) return CheckRefusal(batched.status(), "Vmap", p);
  std::vector<c::Literal> stacked;
  for (const c::Literal& a : args) stacked.push_back(StackTwice(a));
  const std::vector<c::Literal> got =
      InterpretOrFail(batched.value().program, stacked, "Vmap", p);
  const std::vector<bool>& is_batched = batched.value().output_batched;
  if (got.size() != want.size() || is_batched.size() != want.size()) {
    FuzzFail("Vmap changed the number of outputs", &p);
  }
  for (size_t i = 0; i < want.size(); ++i) {
    std::vector<c::Literal> slices;
    if (is_batched[i]) {
      if (got[i].shape().rank() != want[i].shape().rank() + 1 ||
          got[i].shape().dims()[0] != 2) {
        FuzzFail("Vmap output " + std::to_string(i) +
                     " is batched but has no leading batch of 2",
                 &p);
      }
      slices = {Unstack(got[i], 0), Unstack(got[i], 1)};
    } else {
      slices = {got[i]};
    }
    for (const c::Literal& s : slices) {
      CheckPrimalsAgree({s}, {want[i]}, exact, "Vmap", p);
    }
  }
}

inline void CheckTransforms(const c::Program& p,
                            const std::vector<c::Literal>& args,
                            const std::vector<c::Literal>& want) {
  const bool exact = !MayRoundDifferently(p, nullptr);
  CheckJvp(p, args, want, exact);
  CheckVjp(p, args, want, exact);
  CheckVmap(p, args, want, exact);
}

}  // namespace baton::fuzz
