// Helpers for the control-flow transformation tests: regions traced with
// the tracer, region groups emitted whole, and the programs the tests share
// (a running-product scan, a fori-style scan and while loop, a two-branch
// case).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <vector>

#include "baton/compiler/control_flow.h"
#include "baton/compiler/ir.h"
#include "baton/compiler/literal.h"
#include "baton/compiler/tracer.h"

namespace baton::compiler::cf_test {

using V = std::vector<Tracer>;
using Fn = std::function<V(TraceContext&, const V&)>;

inline ValueType F64(Shape shape = Shape{}) {
  return ValueType{std::move(shape), DType::kFloat64};
}
inline ValueType I32(Shape shape = Shape{}) {
  return ValueType{std::move(shape), DType::kInt32};
}

inline Program Build(const std::vector<ValueType>& params, const Fn& fn) {
  TraceContext ctx;
  V ps;
  for (const ValueType& t : params) ps.push_back(ctx.AddParameter(t));
  return ctx.Finish(fn(ctx, ps));
}

inline std::shared_ptr<const Program> Region(
    const std::vector<ValueType>& params, const Fn& fn) {
  return std::make_shared<const Program>(Build(params, fn));
}

// The whole region group of `attrs` (output_index ignored).
inline V Emit(TraceContext& ctx, const OpAttrs& attrs, const V& operands) {
  V outs;
  for (int i = 0; i < ControlFlowNumResults(attrs); ++i) {
    outs.push_back(ctx.Emit(WithOutputIndex(attrs, i), operands));
  }
  return outs;
}

inline int CountKind(const Program& p, OpKind kind) {
  int n = 0;
  for (const Instruction& inst : p.instructions()) n += inst.kind() == kind;
  return n;
}

// The first instruction of `kind` in p, or nullptr.
inline const Instruction* FirstOf(const Program& p, OpKind kind) {
  for (const Instruction& inst : p.instructions()) {
    if (inst.kind() == kind) return &inst;
  }
  return nullptr;
}

// (init f64[], xs f64[n]) -> (final product, running products f64[n]):
// carry p, body (p, x) -> (p * x, p * x).
inline Program RunningProduct(int64_t n, bool reverse = false) {
  ScanAttrs s;
  s.num_carries = 1;
  s.num_xs = 1;
  s.length = n;
  s.reverse = reverse;
  s.body = Region({F64(), F64()}, [](TraceContext&, const V& q) {
    const Tracer p = q[0] * q[1];
    return V{p, p};
  });
  return Build({F64(), F64(Shape{n})}, [&](TraceContext& ctx, const V& q) {
    return Emit(ctx, s, {q[0], q[1]});
  });
}

// fori_loop(0, 3, lambda i, x: x * x + 0.5 + i * c, x) lowered to a scan
// with an int32 counter carry: (x f64[k], c f64[k]) -> (x_final, i_final).
inline Program ForiScan(int64_t trips, Shape shape) {
  ScanAttrs s;
  s.num_carries = 2;
  s.length = trips;
  s.body =
      Region({I32(), F64(shape), F64(shape)}, [](TraceContext&, const V& q) {
        const Tracer i = q[0];
        const Tracer x = q[1];
        const Tracer fi = astype(i, DType::kFloat64);
        return V{i + 1, x * x + 0.5 + broadcast_to(fi, x.shape()) * q[2]};
      });
  return Build({F64(shape), F64(shape)}, [&](TraceContext& ctx, const V& q) {
    const Tracer zero = constant(ctx, Literal::Scalar<int32_t>(0));
    const V r = Emit(ctx, s, {zero, q[0], q[1]});
    return V{r[1], r[0]};
  });
}

// The same loop with dynamic bounds: a while loop (i < n).
inline Program ForiWhile(Shape shape) {
  WhileAttrs w;
  w.num_carries = 2;
  w.cond = Region({I32(), F64(shape), I32()},
                  [](TraceContext&, const V& q) { return V{lt(q[0], q[2])}; });
  w.body = Region({I32(), F64(shape), I32()}, [](TraceContext&, const V& q) {
    return V{q[0] + 1, q[1] * q[1] + 0.5};
  });
  return Build({F64(shape), I32()}, [&](TraceContext& ctx, const V& q) {
    const Tracer zero = constant(ctx, Literal::Scalar<int32_t>(0));
    return V{Emit(ctx, w, {zero, q[0], q[1]})[1]};
  });
}

// lax.switch(index, [b0, b1], x, y): b0 = (sin(x) * y, x + y),
// b1 = (x * x * 3, x) (b1 does not read y).
inline Program TwoBranchCase(Shape shape) {
  CaseAttrs c;
  c.branches.push_back(
      Region({F64(shape), F64(shape)}, [](TraceContext&, const V& q) {
        return V{sin(q[0]) * q[1], q[0] + q[1]};
      }));
  c.branches.push_back(
      Region({F64(shape), F64(shape)}, [](TraceContext&, const V& q) {
        return V{q[0] * q[0] * 3, q[0]};
      }));
  return Build({I32(), F64(shape), F64(shape)},
               [&](TraceContext& ctx, const V& q) {
                 return Emit(ctx, c, {q[0], q[1], q[2]});
               });
}

}  // namespace baton::compiler::cf_test
