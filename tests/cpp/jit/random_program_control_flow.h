// Part of jit/random_program_generator.h, which includes it at its end
// (include that header, not this one): the members of
// ProgramGenerator that draw while, scan and case groups and the
// elementwise programs of their regions.
#pragma once

#include "jit/random_program_generator.h"

namespace baton::testing {

inline bool ProgramGenerator::FitsRegion(const Val& v, const Shape& shape) {
  return v.exact && (v.t.shape() == shape || v.t.rank() == 0);
}

inline void ProgramGenerator::RegionOps(std::vector<Tracer>& vals,
                                        const Shape& shape, int max_ops) {
  for (int k = rng_.Int(0, max_ops); k > 0; --k) {
    const Tracer a = rng_.Pick(vals);
    const Tracer b = rng_.Pick(vals);
    try {
      Tracer r;
      switch (rng_.Int(0, 8)) {
        case 0:
          r = a + b;
          break;
        case 1:
          r = a - b;
          break;
        case 2:
          r = a * b;
          break;
        case 3:
          r = maximum(a, b);
          break;
        case 4:
          r = minimum(a, b);
          break;
        case 5:
          r = rng_.Chance(0.5) ? neg(a) : abs(a);
          break;
        case 6:
          r = where(gt(a, b), a, b);
          break;
        case 7:
          r = a * RandomWeakScalar();
          break;
        default:
          r = a + RandomWeakScalar();
          break;
      }
      if (r.shape() == shape || r.rank() == 0) vals.push_back(r);
    } catch (const Error&) {
      // Rejected (e.g. bool arithmetic): try another.
    }
  }
}

inline Tracer ProgramGenerator::RegionResult(const std::vector<Tracer>& vals,
                                             const Shape& shape, DType dtype) {
  std::vector<Tracer> fit;
  for (const Tracer& v : vals) {
    if (v.shape() == shape) fit.push_back(v);
  }
  // Recent values most often, so that the ops made are used.
  const Tracer t = rng_.Chance(0.6) ? fit.back() : rng_.Pick(fit);
  return astype(t, dtype);
}

inline void ProgramGenerator::EmitGroup(const c::OpAttrs& attrs,
                                        const std::vector<Tracer>& operands) {
  const int n = c::ControlFlowNumResults(attrs);
  std::vector<Val> outs;
  for (int i = 0; i < n; ++i) {
    outs.push_back(Val{ctx_.Emit(c::WithOutputIndex(attrs, i), operands)});
  }
  for (const Val& v : outs) pool_.push_back(v);
}

inline void ProgramGenerator::While() {
  const Val x = Recent([](const Val& v) { return v.exact; });
  const Shape& s = x.t.shape();
  // The start, kept near the limits so that loops stay short.
  const Tracer i0 =
      minimum(maximum(astype(IndexScalar(), DType::kInt32), -4), 8);
  std::vector<Tracer> operands{i0, x.t};
  std::vector<ValueType> types{ValueType{Shape{}, DType::kInt32},
                               ValueType{s, x.t.dtype()}};
  const bool second = rng_.Chance(0.3);
  if (second) {
    const Val y = Recent([&](const Val& v) {
      return v.exact && v.t.shape() == s && v.t.dtype() == x.t.dtype();
    });
    operands.push_back(y.t);
    types.push_back(types.back());
  }
  const int num_carries = second ? 3 : 2;
  const bool limit_param = index_param_.valid() && rng_.Chance(0.3);
  if (limit_param) {
    operands.push_back(index_param_);
    types.push_back(ValueType{Shape{}, DType::kInt32});
  }
  if (rng_.Chance(0.5)) {
    const Val inv = Recent([&](const Val& v) { return FitsRegion(v, s); });
    operands.push_back(inv.t);
    types.push_back(ValueType{inv.t.shape(), inv.t.dtype()});
  }
  const int limit = rng_.Int(-1, 6);
  c::TraceContext cond;
  std::vector<Tracer> cp;
  for (const ValueType& t : types) cp.push_back(cond.AddParameter(t));
  const Tracer go = limit_param ? lt(cp[0], cp[num_carries]) : lt(cp[0], limit);
  c::TraceContext body;
  std::vector<Tracer> bp;
  for (const ValueType& t : types) bp.push_back(body.AddParameter(t));
  std::vector<Tracer> vals(bp.begin() + 1, bp.end());
  if (limit_param) vals.erase(vals.begin() + num_carries - 1);  // not the limit
  const std::vector<Tracer> carries(vals.begin(),
                                    vals.begin() + num_carries - 1);
  RegionOps(vals, s, 4);
  std::vector<Tracer> outs{bp[0] + 1};
  for (int k = 1; k < num_carries; ++k) {
    const int r = rng_.Int(0, 5);
    if (r == 0) {
      outs.push_back(rng_.Pick(carries));  // an old carry, maybe swapped
    } else if (r == 1 && k > 1) {
      outs.push_back(outs[1]);  // the same new value twice
    } else {
      outs.push_back(RegionResult(vals, s, x.t.dtype()));
    }
  }
  c::WhileAttrs attrs;
  attrs.num_carries = num_carries;
  attrs.cond = std::make_shared<const c::Program>(cond.Finish({go}));
  attrs.body = std::make_shared<const c::Program>(body.Finish(outs));
  EmitGroup(attrs, operands);
}

inline void ProgramGenerator::Scan() {
  const Val xs = Recent([](const Val& v) {
    return v.exact && v.t.rank() >= 1 && v.t.shape()[0] <= 64;
  });
  const int64_t length = xs.t.shape()[0];
  const Shape s(std::vector<int64_t>(xs.t.shape().dims().begin() + 1,
                                     xs.t.shape().dims().end()));
  const bool has_carry = rng_.Chance(0.85);
  std::vector<Tracer> operands;
  std::vector<ValueType> types;
  DType carry_dtype = xs.t.dtype();
  if (has_carry) {
    Tracer init;
    if (rng_.Chance(0.5)) {
      init =
          Recent([&](const Val& v) { return v.exact && v.t.shape() == s; }).t;
    } else {
      init = full(ctx_, s, RandomWeakScalar(),
                  rng_.Chance(0.5) ? xs.t.dtype() : RandomDType());
    }
    carry_dtype = init.dtype();
    operands.push_back(init);
    types.push_back(ValueType{s, carry_dtype});
    if (rng_.Chance(0.3)) {  // a second carry of the same type
      operands.push_back(rng_.Chance(0.3)
                             ? init
                             : full(ctx_, s, RandomWeakScalar(), carry_dtype));
      types.push_back(types.back());
    }
  }
  const int num_carries = static_cast<int>(operands.size());
  operands.push_back(xs.t);
  types.push_back(ValueType{s, xs.t.dtype()});
  if (rng_.Chance(0.4)) {
    const Val inv = Recent([&](const Val& v) { return FitsRegion(v, s); });
    operands.push_back(inv.t);
    types.push_back(ValueType{inv.t.shape(), inv.t.dtype()});
  }
  c::TraceContext body;
  std::vector<Tracer> vals;
  for (const ValueType& t : types) vals.push_back(body.AddParameter(t));
  const std::vector<Tracer> params = vals;
  RegionOps(vals, s, 4);
  std::vector<Tracer> outs;
  for (int k = 0; k < num_carries; ++k) {
    // Carry 1 may be carry 0's old value (they swap) or its new one.
    const int r = rng_.Int(0, 5);
    outs.push_back(k == 1 && r == 0   ? params[0]
                   : k == 1 && r == 1 ? outs[0]
                                      : RegionResult(vals, s, carry_dtype));
  }
  for (int j = rng_.Int(has_carry ? 0 : 1, 2); j > 0; --j) {
    const int r = rng_.Int(0, 9);
    if (r == 0) {
      outs.push_back(params[num_carries]);  // the x slice itself
    } else if (r == 1 && has_carry) {
      outs.push_back(rng_.Chance(0.5) ? params[0] : outs[0]);  // a carry
    } else {
      outs.push_back(RegionResult(vals, s, rng_.Pick(vals).dtype()));
    }
  }
  c::ScanAttrs attrs;
  attrs.num_carries = num_carries;
  attrs.num_xs = 1;
  attrs.length = length;
  attrs.reverse = rng_.Chance(0.3);
  attrs.body = std::make_shared<const c::Program>(body.Finish(outs));
  EmitGroup(attrs, operands);
}

inline void ProgramGenerator::Case() {
  const Val a = Exact();
  const Shape& s = a.t.shape();
  std::vector<Tracer> operands{astype(IndexScalar(), DType::kInt32), a.t};
  std::vector<ValueType> types{ValueType{s, a.t.dtype()}};
  if (rng_.Chance(0.5)) {
    const Val b = Recent([&](const Val& v) { return FitsRegion(v, s); });
    operands.push_back(b.t);
    types.push_back(ValueType{b.t.shape(), b.t.dtype()});
  }
  std::vector<DType> result_dtypes;
  for (int k = rng_.Int(1, 2); k > 0; --k) {
    result_dtypes.push_back(rng_.Chance(0.6) ? a.t.dtype()
                                             : rng_.Pick(types).dtype);
  }
  c::CaseAttrs attrs;
  for (int b = rng_.Int(2, 3); b > 0; --b) {
    c::TraceContext branch;
    std::vector<Tracer> vals;
    for (const ValueType& t : types) vals.push_back(branch.AddParameter(t));
    RegionOps(vals, s, 3);
    std::vector<Tracer> outs;
    for (DType d : result_dtypes) {
      outs.push_back(!outs.empty() && outs[0].dtype() == d && rng_.Chance(0.3)
                         ? outs[0]  // the same value twice
                         : RegionResult(vals, s, d));
    }
    attrs.branches.push_back(
        std::make_shared<const c::Program>(branch.Finish(outs)));
  }
  EmitGroup(attrs, operands);
}

}  // namespace baton::testing
