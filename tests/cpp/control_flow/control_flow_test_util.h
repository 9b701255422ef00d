// Helpers for the control-flow tests: regions traced from C++ lambdas, the
// attributes of while / scan / case groups, and emitting a whole group into
// a trace.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "baton/compiler/control_flow.h"
#include "baton/compiler/ir.h"
#include "baton/compiler/literal.h"
#include "baton/compiler/tracer.h"

namespace baton::compiler {
// Readable failures: gtest prints literals as "f32[2] {1, 2}".
inline void PrintTo(const Literal& lit, std::ostream* os) {
  *os << lit.ToString();
}
}  // namespace baton::compiler

namespace baton::compiler::cf_test {

inline ValueType T(Shape shape, DType dtype = DType::kFloat32) {
  return ValueType{std::move(shape), dtype};
}
inline ValueType I32() { return T(Shape{}, DType::kInt32); }
inline ValueType Pred() { return T(Shape{}, DType::kBool); }

using RegionFn = std::function<std::vector<Tracer>(TraceContext&,
                                                   const std::vector<Tracer>&)>;

// A region (nested program) traced from `fn` over parameters of `types`.
inline std::shared_ptr<const Program> Region(
    const std::vector<ValueType>& types, const RegionFn& fn) {
  TraceContext ctx;
  std::vector<Tracer> params;
  for (const ValueType& t : types) params.push_back(ctx.AddParameter(t));
  std::vector<Tracer> outs = fn(ctx, params);
  return std::make_shared<const Program>(ctx.Finish(outs));
}

inline WhileAttrs While(int num_carries, std::shared_ptr<const Program> cond,
                        std::shared_ptr<const Program> body) {
  WhileAttrs a;
  a.num_carries = num_carries;
  a.cond = std::move(cond);
  a.body = std::move(body);
  return a;
}

inline ScanAttrs Scan(int num_carries, int num_xs, int64_t length,
                      std::shared_ptr<const Program> body,
                      bool reverse = false) {
  ScanAttrs a;
  a.num_carries = num_carries;
  a.num_xs = num_xs;
  a.length = length;
  a.reverse = reverse;
  a.body = std::move(body);
  return a;
}

inline CaseAttrs Case(std::vector<std::shared_ptr<const Program>> branches) {
  CaseAttrs a;
  a.branches = std::move(branches);
  return a;
}

// Emits a whole region group into a trace (the tracer's counterpart of
// AddRegionGroup); throws the inference error.
inline std::vector<Tracer> EmitGroup(TraceContext& ctx, const OpAttrs& attrs,
                                     const std::vector<Tracer>& operands) {
  std::vector<Tracer> outs;
  const int n = ControlFlowNumResults(attrs);
  for (int i = 0; i < n; ++i) {
    outs.push_back(ctx.Emit(WithOutputIndex(attrs, i), operands));
  }
  return outs;
}

inline int CountKind(const Program& p, OpKind kind) {
  int n = 0;
  for (const Instruction& inst : p.instructions()) n += inst.kind() == kind;
  return n;
}

inline int CountOccurrences(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

}  // namespace baton::compiler::cf_test
