// StepPlan: how a Program's instructions become executable steps.
//
//  - A broadcast_in_dim of a one-element value whose users are all
//    elementwise ops is never materialized: kernels read the scalar instead
//    (a "virtual scalar").
//  - Graphs of elementwise ops (unary, binary, compare, select, convert) of
//    one size form one fused step that runs tile by tile: inner values live
//    in small per-thread tiles, never in whole-array temporaries, and memory
//    is traversed once. An inner value may have several readers, as long as
//    all of them are members of the same step (threefry reads each word
//    twice a round; splitting there left a dozen full-size temporaries
//    alive at once); a value also read outside the step is materialized.
//  - A broadcast_in_dim whose single user is such an elementwise op, and
//    whose operand's elements repeat in one regular pattern (a "row" or
//    "column" broadcast: a bias added to every row, a per-row statistic
//    subtracted from every element) joins that fused step: the runner
//    expands the operand one tile at a time, so the full-size broadcast is
//    never materialized.
//  - A gather from a one-dimensional table (take: result element i is
//    table[clamp(indices[i])]) is elementwise in its indices: it joins such
//    a step like an elementwise op, its index chain fused into it and it
//    into its single elementwise user (take's fill-mode select), so
//    take(a, idx) with its index wrap and out-of-range fill is one pass.
//    The table is read whole, at random positions; such a step never
//    writes over its inputs.
//  - A reduction over trailing dimensions (every kept dimension before
//    every reduced one, as sum(x * x) or mean(x * x, axis=-1) have), whose
//    operand is such an elementwise chain (or one elementwise op) that
//    nothing else reads, is one fused reduction step: the runner computes
//    the chain a block at a time and reduces each block as it is made, so
//    the chain's full-size result is never materialized (one pass over the
//    inputs instead of write + read of a temporary).
//  - A control-flow op's region group (control_flow.h) is one kRegion step
//    whose members are the group's results; it runs at once.
//  - With StepPlanOptions::dot_accumulates (a backend whose GEMM can add
//    into its output: the CPU's BLAS with beta = 1), an add or subtract of
//    float32/float64 whose one operand is a dot_general read by nothing else
//    (or such a dot times a scalar) and whose other operand is a
//    materialized value of its type that the dot does not read (the addend)
//    is one kDotAccumulate step:
//    the addend is copied into the result (nothing to copy when the result
//    takes over the addend's storage: a donated parameter of an SGD step)
//    and the GEMM adds alpha times the product into it. p - lr * (h^T . dz),
//    x + h @ w and acc + a @ b then make no product-sized temporary, no
//    pass that zeroes the GEMM's output and no separate add pass. Only an
//    add or subtract that would otherwise be a step of its own (alone, or
//    with the scalar multiply as its one fused member) is taken.
//  - Every other instruction (except parameters and constants, which already
//    have storage) is a step of its own.
//
// Ownership: a plain value; safe to share between threads once built.
#pragma once

#include <functional>
#include <vector>

#include "baton/compiler/ir.h"

namespace baton::compiler {

struct Step {
  enum class Kind : uint8_t {
    kOp,
    kFusedElementwise,
    kFusedReduce,
    kRegion,
    kDotAccumulate,
  };
  Kind kind = Kind::kOp;
  ValueId result = kNoValue;  // kRegion: the group's first member
  // kFusedElementwise: the fused values in program order, `result` last.
  // kFusedReduce: the producing chain in program order (its result, the
  // reduce's operand, next to last), then the reduce, `result`.
  // kRegion: the group's results in output order. kOp: {result}.
  // kDotAccumulate: the dot, the scalar multiply if there is one, then the
  // add or subtract, `result` (DotAccumulateOf names their roles).
  std::vector<ValueId> members;
  // Materialized values the step reads, in first-use order, without repeats
  // (a virtual scalar is replaced by the value it broadcasts).
  // kDotAccumulate: the addend first.
  std::vector<ValueId> inputs;
};

struct StepPlan {
  std::vector<Step> steps;  // program order
  // Per value: the one-element value a virtual scalar broadcasts, else
  // kNoValue.
  std::vector<ValueId> scalar_source;
  // Per value: index of the step whose result it is, else -1 (parameters,
  // constants, virtual scalars, inner values of fused steps).
  std::vector<int> step_of;
  // Per value: whether it has storage of its own (parameters, constants, step
  // results).
  std::vector<bool> materialized;
};

// What a backend's executable can run beyond the steps every backend runs.
struct StepPlanOptions {
  // kDotAccumulate steps (above), for the dots this says yes to: a backend
  // whose GEMM adds the whole product into its output in one rounding for
  // that dot (not block by block, which would round the sum at the
  // output's scale once per block). Null: none.
  std::function<bool(const Program&, ValueId dot)> dot_accumulates;
};

// Plans the steps of `program` (which should have been through DCE).
StepPlan PlanSteps(const Program& program, const StepPlanOptions& options = {});

// The roles of a kDotAccumulate step's members: result = addend + alpha *
// dot, where alpha is `scale`'s one element (1 when `scale` is kNoValue),
// negated when `negate` (addend - dot, addend - dot * s).
struct DotAccumulate {
  ValueId dot = kNoValue;
  ValueId addend = kNoValue;
  ValueId scale = kNoValue;  // a one-element value (a virtual scalar's source)
  bool negate = false;
};
DotAccumulate DotAccumulateOf(const Program& program, const StepPlan& plan,
                              const Step& step);

// The elementwise chain of kFusedReduce step `step`, as a kFusedElementwise
// step of its own (members and inputs the same, less the reduce): what the
// runner and the memory analysis plan its tiles from.
Step ProducerOf(const Step& step);

// Whether reducing `axes` of `shape` reduces trailing dimensions only (size-1
// dimensions aside): the reduce's output element r then covers input
// elements [r * row, (r + 1) * row) of the row-major input. Sets `rows` (the
// output's elements) and `row` (the reduced elements per output) when so.
bool AsRowReduction(const Shape& shape, const std::vector<int64_t>& axes,
                    int64_t* rows, int64_t* row);

// Whether `kind` is computed element by element with no cross-element access.
bool IsElementwise(OpKind kind);

// Whether `v` is a gather from a one-dimensional table (IsTableGather): its
// result is shaped like its indices (operand 1), element for element.
bool IsTableGather(const Program& program, ValueId v);

// Whether step `step` may write its result over one of its inputs' storage
// (elementwise, fused elementwise, dynamic_update_slice, scatter,
// kDotAccumulate): what the memory schedule and buffer assignment both plan
// in-place updates by.
bool InPlaceCapable(const Program& program, const Step& step);

// For an InPlaceCapable step: the inputs whose storage its result may take
// over, and the values that must not live in the chosen one's storage (they
// are read while the result is written). Elementwise steps: any input,
// nothing excluded. dynamic_update_slice and scatter: operand 0, not shared
// with the updates or indices. kDotAccumulate: the addend, not shared with
// the dot's operands.
struct InPlaceTargets {
  std::vector<ValueId> candidates;
  std::vector<ValueId> must_not_share;
};
InPlaceTargets InPlaceTargetsOf(const Program& program, const Step& step);

// A broadcast_in_dim whose result element i is operand element
// (i / inner) % count: the operand's non-unit dimensions map onto
// consecutive result dimensions.
struct RegularBroadcast {
  int64_t inner = 1;  // result elements per operand element, consecutively
  int64_t count = 1;  // operand elements
};
// The pattern of broadcast `v`, or false when it has none.
bool AsRegularBroadcast(const Program& program, ValueId v,
                        RegularBroadcast* out);

}  // namespace baton::compiler
