#include "baton/compiler/step_plan.h"

#include <algorithm>

#include "baton/compiler/control_flow.h"

namespace baton::compiler {

bool IsElementwise(OpKind kind) {
  switch (kind) {
    case OpKind::kUnary:
    case OpKind::kBinary:
    case OpKind::kCompare:
    case OpKind::kSelect:
    case OpKind::kConvert:
      return true;
    default:
      return false;
  }
}

bool IsTableGather(const Program& program, ValueId v) {
  const Instruction& inst = program.instruction(v);
  return inst.kind() == OpKind::kGather &&
         program.type(inst.operands[0]).shape.rank() == 1;
}

bool InPlaceCapable(const Program& program, const Step& step) {
  if (step.kind == Step::Kind::kDotAccumulate) return true;
  if (step.kind == Step::Kind::kFusedElementwise) {
    // A table is read at random positions while the result is written.
    return std::none_of(
        step.members.begin(), step.members.end(),
        [&](ValueId m) { return IsTableGather(program, m); });
  }
  if (step.kind != Step::Kind::kOp) return false;
  const OpKind k = program.instruction(step.result).kind();
  return IsElementwise(k) || k == OpKind::kDynamicUpdateSlice ||
         k == OpKind::kScatter;
}

InPlaceTargets InPlaceTargetsOf(const Program& program, const Step& step) {
  InPlaceTargets t;
  if (!InPlaceCapable(program, step)) return t;
  if (step.kind == Step::Kind::kDotAccumulate) {
    t.candidates = {step.inputs[0]};  // the addend
    const Instruction& dot = program.instruction(step.members[0]);
    t.must_not_share.assign(dot.operands.begin(), dot.operands.end());
    return t;
  }
  const Instruction& inst = program.instruction(step.result);
  if (step.kind == Step::Kind::kOp && !IsElementwise(inst.kind())) {
    // dynamic_update_slice / scatter: only operand 0 may be reused. The
    // operands themselves are read: step.inputs lists a value once, so
    // scatter(x, i, x) would show only x, at position 0.
    t.candidates = {step.inputs[0]};
    t.must_not_share.assign(inst.operands.begin() + 1, inst.operands.end());
    return t;
  }
  t.candidates = step.inputs;
  return t;
}

DotAccumulate DotAccumulateOf(const Program& program, const StepPlan& plan,
                              const Step& step) {
  DotAccumulate d;
  d.dot = step.members.front();
  const Instruction& root = program.instruction(step.result);
  d.negate = root.attrs_as<BinaryAttrs>().op == BinaryOp::kSub;
  const ValueId product = step.members[step.members.size() - 2];
  d.addend = root.operands[0] == product ? root.operands[1] : root.operands[0];
  if (product != d.dot) {  // dot * s or s * dot
    const Instruction& mul = program.instruction(product);
    const ValueId s =
        mul.operands[0] == d.dot ? mul.operands[1] : mul.operands[0];
    d.scale = plan.scalar_source[s];
  }
  return d;
}

namespace {

bool IsBinary(const Instruction& inst, BinaryOp op) {
  const auto* a = inst.attrs_if<BinaryAttrs>();
  return a != nullptr && a->op == op;
}

}  // namespace

bool AsRegularBroadcast(const Program& program, ValueId v,
                        RegularBroadcast* out) {
  const Instruction& inst = program.instruction(v);
  const auto* b = inst.attrs_if<BroadcastInDimAttrs>();
  if (b == nullptr) return false;
  const Shape& src = program.type(inst.operands[0]).shape;
  const Shape& dst = inst.type.shape;
  int64_t last = -1;  // result dimension of the previous non-unit operand dim
  int64_t count = 1;
  for (int i = 0; i < src.rank(); ++i) {
    if (src[i] == 1) continue;
    const int64_t d = b->broadcast_dimensions[i];
    if ((last >= 0 && d != last + 1) || src[i] != dst[static_cast<int>(d)]) {
      return false;
    }
    last = d;
    count *= src[i];
  }
  if (last < 0) return false;  // one element: a virtual scalar's job
  int64_t inner = 1;
  for (int j = static_cast<int>(last) + 1; j < dst.rank(); ++j) inner *= dst[j];
  *out = RegularBroadcast{inner, count};
  return true;
}

StepPlan PlanSteps(const Program& program, const StepPlanOptions& options) {
  const int n = program.num_values();
  std::vector<std::vector<ValueId>> users(n);  // distinct users
  for (ValueId v = 0; v < n; ++v) {
    for (ValueId o : program.instruction(v).operands) {
      if (users[o].empty() || users[o].back() != v) users[o].push_back(v);
    }
  }
  std::vector<bool> is_output(n, false);
  for (ValueId o : program.outputs()) is_output[o] = true;

  StepPlan plan;
  plan.scalar_source.assign(n, kNoValue);
  plan.step_of.assign(n, -1);
  plan.materialized.assign(n, true);

  // Virtual scalars.
  for (ValueId v = 0; v < n; ++v) {
    const Instruction& inst = program.instruction(v);
    if (inst.kind() != OpKind::kBroadcastInDim || is_output[v]) continue;
    const ValueId src = inst.operands[0];
    if (program.type(src).num_elements() != 1 || users[v].empty()) continue;
    const bool all_elementwise =
        std::all_of(users[v].begin(), users[v].end(), [&](ValueId u) {
          return IsElementwise(program.instruction(u).kind());
        });
    if (!all_elementwise) continue;
    // Resolve chains (broadcast of a virtual scalar).
    plan.scalar_source[v] =
        plan.scalar_source[src] != kNoValue ? plan.scalar_source[src] : src;
    plan.materialized[v] = false;
  }

  // Fusion: an elementwise value (or a table gather, or a regular
  // broadcast) folds into the group of its users when every user is an
  // elementwise op of its size (or a table gather reading it as indices) and
  // all of them are in one group, unless it is an output. Groups are
  // directed acyclic graphs, not just trees: a value read by several members
  // of one group (threefry's rotated words, a polynomial's argument) lives
  // in a tile slot until its last reader in the tile has run, instead of
  // being materialized at full size and splitting the chain into steps whose
  // full-size results are alive at once. Visiting values last to first
  // settles every user's group before its operands ask. A group stays
  // convex: a member's users are all in its group, so no path leaves the
  // group and comes back, and the group runs as one step.
  std::vector<ValueId> fused_into(n, kNoValue);  // the group's root
  auto group_root = [&](ValueId u) {
    return fused_into[u] != kNoValue ? fused_into[u] : u;
  };
  for (ValueId v = n - 1; v >= 0; --v) {
    const Instruction& inst = program.instruction(v);
    if (is_output[v] || users[v].empty() || !plan.materialized[v]) continue;
    RegularBroadcast pattern;
    if (!IsElementwise(inst.kind()) && !IsTableGather(program, v) &&
        !AsRegularBroadcast(program, v, &pattern)) {
      continue;
    }
    const ValueId root = group_root(users[v][0]);
    const bool fusible =
        std::all_of(users[v].begin(), users[v].end(), [&](ValueId u) {
          const Instruction& user = program.instruction(u);
          const bool into =
              IsElementwise(user.kind()) ||
              (IsTableGather(program, u) && user.operands[0] != v);
          return into && group_root(u) == root &&
                 program.type(u).num_elements() == inst.type.num_elements();
        });
    if (fusible) {
      fused_into[v] = root;
      plan.materialized[v] = false;
    }
  }
  // A reduction over trailing dimensions takes in its operand's chain when
  // it is the chain's only reader.
  std::vector<bool> feeds_reduce(n, false);
  for (ValueId r = 0; r < n; ++r) {
    const Instruction& inst = program.instruction(r);
    const auto* attrs = inst.attrs_if<ReduceAttrs>();
    if (attrs == nullptr) continue;
    const ValueId o = inst.operands[0];
    int64_t rows = 0, row = 0;
    if (is_output[o] || users[o].size() != 1 || !plan.materialized[o] ||
        fused_into[o] != kNoValue ||
        !IsElementwise(program.instruction(o).kind()) ||
        !AsRowReduction(program.type(o).shape, attrs->axes, &rows, &row)) {
      continue;
    }
    feeds_reduce[o] = true;
    plan.materialized[o] = false;
  }
  auto root_of = [&](ValueId v) { return group_root(v); };
  // Members of each fused group, in program order.
  std::vector<std::vector<ValueId>> group(n);
  for (ValueId v = 0; v < n; ++v) {
    if (fused_into[v] != kNoValue) group[root_of(v)].push_back(v);
  }

  // kDotAccumulate: an add/subtract root of one or two values whose other
  // operand is a materialized addend of its type. Per root: the dot, else
  // kNoValue.
  std::vector<ValueId> accumulated_dot(n, kNoValue);
  if (options.dot_accumulates) {
    // The dot of `x` when x is a dot (or a dot times a virtual scalar, fused
    // into `root`) that only `root` reads; else kNoValue.
    auto product_dot = [&](ValueId x, ValueId root) -> ValueId {
      auto sole_dot = [&](ValueId d, ValueId user) {
        return program.instruction(d).kind() == OpKind::kDotGeneral &&
               !is_output[d] && users[d].size() == 1 && users[d][0] == user &&
               plan.materialized[d];
      };
      if (sole_dot(x, root)) return x;
      const Instruction& mul = program.instruction(x);
      if (!IsBinary(mul, BinaryOp::kMul) || fused_into[x] != root ||
          users[x].size() != 1) {
        return kNoValue;
      }
      for (int i = 0; i < 2; ++i) {
        const ValueId d = mul.operands[i], s = mul.operands[1 - i];
        if (d != s && sole_dot(d, x) && plan.scalar_source[s] != kNoValue) {
          return d;
        }
      }
      return kNoValue;
    };
    for (ValueId r = 0; r < n; ++r) {
      const Instruction& inst = program.instruction(r);
      const bool add = IsBinary(inst, BinaryOp::kAdd);
      if ((!add && !IsBinary(inst, BinaryOp::kSub)) || !plan.materialized[r] ||
          (inst.type.dtype != DType::kFloat32 &&
           inst.type.dtype != DType::kFloat64)) {
        continue;
      }
      // addend + product (add: either order), addend - product.
      for (int i = add ? 0 : 1; i < 2; ++i) {
        const ValueId x = inst.operands[i], addend = inst.operands[1 - i];
        const ValueId d = product_dot(x, r);
        const size_t fused = d == x ? 0 : 1;  // the multiply, if any
        if (d == kNoValue || addend == d || group[r].size() != fused ||
            !plan.materialized[addend] || program.type(addend) != inst.type ||
            program.type(d) != inst.type) {
          continue;
        }
        // An addend the GEMM also reads (c + c @ w) could not take the
        // result in place: the unfused add can, and a donated c is reused.
        const Instruction& dot = program.instruction(d);
        if (program.type(dot.operands[0]).dtype != inst.type.dtype ||
            program.type(dot.operands[1]).dtype != inst.type.dtype ||
            dot.operands[0] == addend || dot.operands[1] == addend ||
            !options.dot_accumulates(program, d)) {
          continue;
        }
        accumulated_dot[r] = d;
        plan.materialized[d] = false;
        break;
      }
    }
  }

  auto add_input = [&](Step& step, ValueId operand) {
    if (plan.scalar_source[operand] != kNoValue) {
      operand = plan.scalar_source[operand];
    }
    if (std::find(step.inputs.begin(), step.inputs.end(), operand) ==
        step.inputs.end()) {
      step.inputs.push_back(operand);
    }
  };

  for (ValueId v = 0; v < n; ++v) {
    const OpKind kind = program.instruction(v).kind();
    if (kind == OpKind::kParameter || kind == OpKind::kConstant) continue;
    if (!plan.materialized[v]) continue;  // virtual or inner fused value
    Step step;
    step.result = v;
    if (IsControlFlow(kind)) {
      if (ControlFlowOutputIndex(program.instruction(v).attrs) != 0) continue;
      step.kind = Step::Kind::kRegion;
      step.members = RegionGroupOf(program, v);
      for (ValueId o : program.instruction(v).operands) add_input(step, o);
      for (ValueId m : step.members) {
        plan.step_of[m] = static_cast<int>(plan.steps.size());
      }
      plan.steps.push_back(std::move(step));
      continue;
    }
    const Instruction& inst = program.instruction(v);
    if (inst.kind() == OpKind::kReduce && feeds_reduce[inst.operands[0]]) {
      const ValueId o = inst.operands[0];
      step.kind = Step::Kind::kFusedReduce;
      step.members = group[o];
      step.members.push_back(o);
      step.members.push_back(v);
      for (size_t i = 0; i + 1 < step.members.size(); ++i) {
        for (ValueId x : program.instruction(step.members[i]).operands) {
          if (fused_into[x] == kNoValue || root_of(x) != o) add_input(step, x);
        }
      }
    } else if (accumulated_dot[v] != kNoValue) {
      step.kind = Step::Kind::kDotAccumulate;
      step.members = {accumulated_dot[v]};
      step.members.insert(step.members.end(), group[v].begin(), group[v].end());
      step.members.push_back(v);
      const DotAccumulate roles = DotAccumulateOf(program, plan, step);
      add_input(step, roles.addend);
      for (ValueId o : program.instruction(roles.dot).operands) {
        add_input(step, o);
      }
      if (roles.scale != kNoValue) add_input(step, roles.scale);
    } else if (!group[v].empty()) {
      step.kind = Step::Kind::kFusedElementwise;
      step.members = group[v];
      step.members.push_back(v);
      for (ValueId m : step.members) {
        for (ValueId o : program.instruction(m).operands) {
          if (fused_into[o] == kNoValue || root_of(o) != v) add_input(step, o);
        }
      }
    } else {
      step.members = {v};
      for (ValueId o : program.instruction(v).operands) add_input(step, o);
    }
    plan.step_of[v] = static_cast<int>(plan.steps.size());
    plan.steps.push_back(std::move(step));
  }
  return plan;
}

Step ProducerOf(const Step& step) {
  Step producer;
  producer.kind = Step::Kind::kFusedElementwise;
  producer.members.assign(step.members.begin(), step.members.end() - 1);
  producer.result = producer.members.back();
  producer.inputs = step.inputs;
  return producer;
}

bool AsRowReduction(const Shape& shape, const std::vector<int64_t>& axes,
                    int64_t* rows, int64_t* row) {
  std::vector<bool> reduced(shape.rank(), false);
  for (int64_t a : axes) reduced[static_cast<size_t>(a)] = true;
  int64_t kept = 1, red = 1;
  bool seen_reduced = false;
  for (int d = 0; d < shape.rank(); ++d) {
    if (shape[d] == 1) continue;
    if (reduced[d]) {
      seen_reduced = true;
      red *= shape[d];
    } else {
      if (seen_reduced) return false;  // a kept dimension after a reduced one
      kept *= shape[d];
    }
  }
  *rows = kept;
  *row = red;
  return true;
}

}  // namespace baton::compiler
