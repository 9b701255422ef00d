// The reference interpreter's control flow: regions run as programs of their
// own, step by step, in the plainest way (no reuse of storage).
#include <string>
#include <utility>

#include "baton/compiler/interpreter_ops.h"
#include "baton/compiler/reference_interpreter.h"
#include "baton/core/error.h"

namespace baton::compiler::interpreter {
namespace {

std::vector<Literal> Run(const Program& region, std::vector<Literal> args) {
  Result<std::vector<Literal>> outs = Interpret(region, args);
  ThrowIfError(outs.status());
  return std::move(outs).value();
}

// Slice t of `x` along its leading dimension.
Literal SliceOf(const Literal& x, int64_t t) {
  std::vector<int64_t> dims(x.shape().dims().begin() + 1, x.shape().dims().end());
  Shape shape(dims);
  const int64_t bytes = shape.num_elements() * dtype_size(x.dtype());
  return Literal::FromBytes(
      shape, x.dtype(), static_cast<const uint8_t*>(x.untyped_data()) + t * bytes);
}

std::vector<Literal> EvalWhile(const WhileAttrs& a, const Operands& in) {
  std::vector<Literal> state;
  for (const Literal* l : in) state.push_back(*l);
  while (Run(*a.cond, state)[0].GetAsInt64(0) != 0) {
    std::vector<Literal> carries = Run(*a.body, state);
    for (int i = 0; i < a.num_carries; ++i) state[i] = std::move(carries[i]);
  }
  state.resize(a.num_carries);
  return state;
}

std::vector<Literal> EvalScan(const ScanAttrs& a, const Operands& in,
                              const Instruction& inst) {
  const Program& body = *a.body;
  const int n_out = static_cast<int>(body.outputs().size());
  std::vector<Literal> results;
  for (int i = 0; i < a.num_carries; ++i) results.push_back(*in[i]);
  for (int j = a.num_carries; j < n_out; ++j) {
    const ValueType t = body.type(body.outputs()[j]);
    std::vector<int64_t> dims{a.length};
    dims.insert(dims.end(), t.shape.dims().begin(), t.shape.dims().end());
    results.emplace_back(Shape(dims), t.dtype);
  }
  (void)inst;
  for (int64_t step = 0; step < a.length; ++step) {
    const int64_t t = a.reverse ? a.length - 1 - step : step;
    std::vector<Literal> args;
    for (int i = 0; i < a.num_carries; ++i) args.push_back(results[i]);
    for (int j = 0; j < a.num_xs; ++j) {
      args.push_back(SliceOf(*in[a.num_carries + j], t));
    }
    for (size_t k = a.num_carries + a.num_xs; k < in.size(); ++k) {
      args.push_back(*in[k]);
    }
    std::vector<Literal> outs = Run(body, std::move(args));
    for (int i = 0; i < a.num_carries; ++i) results[i] = std::move(outs[i]);
    for (int j = a.num_carries; j < n_out; ++j) {
      const Literal& y = outs[j];
      if (y.byte_size() == 0) continue;  // empty slices: nothing to copy
      std::memcpy(static_cast<uint8_t*>(results[j].untyped_mutable_data()) +
                      t * y.byte_size(),
                  y.untyped_data(), static_cast<size_t>(y.byte_size()));
    }
  }
  return results;
}

std::vector<Literal> EvalCase(const CaseAttrs& a, const Operands& in) {
  const int64_t n = static_cast<int64_t>(a.branches.size());
  const int64_t index = Clamp(in[0]->GetAsInt64(0), 0, n - 1);
  std::vector<Literal> args;
  for (size_t k = 1; k < in.size(); ++k) args.push_back(*in[k]);
  return Run(*a.branches[index], std::move(args));
}

}  // namespace

std::vector<Literal> EvalControlFlow(const Instruction& inst,
                                     const Operands& in) {
  if (const auto* w = inst.attrs_if<WhileAttrs>()) return EvalWhile(*w, in);
  if (const auto* s = inst.attrs_if<ScanAttrs>()) return EvalScan(*s, in, inst);
  return EvalCase(inst.attrs_as<CaseAttrs>(), in);
}

}  // namespace baton::compiler::interpreter
