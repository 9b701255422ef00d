#include "baton/compiler/unroll_scans.h"

#include <memory>
#include <set>
#include <string>
#include <utility>

#include "baton/compiler/control_flow.h"
#include "baton/compiler/inline_program.h"

namespace baton::compiler {
namespace {

// The scan group of `id` when it is whole and unrollable, else null.
const ScanAttrs* UnrollableScan(const Program& p, ValueId id) {
  if (id < 0 || id >= p.num_values()) return nullptr;
  const auto* scan = p.instruction(id).attrs_if<ScanAttrs>();
  if (scan == nullptr || scan->length < 1 || !scan->body) return nullptr;
  if (static_cast<int>(RegionGroupOf(p, id).size()) !=
      ControlFlowNumResults(p.instruction(id).attrs)) {
    return nullptr;
  }
  return scan;
}

// `v` without its leading dimension of 1.
Result<ValueId> DropLeading(Program& dst, ValueId v) {
  const std::vector<int64_t>& dims = dst.type(v).shape.dims();
  return dst.Add(ReshapeAttrs{Shape(std::vector<int64_t>(dims.begin() + 1, dims.end()))},
                 OperandList{v});
}

// Emits the unrolled scan (attrs `scan`, operands `ops` of dst) and returns
// its results in output order: the final carries, then the stacked ys.
Result<std::vector<ValueId>> EmitUnrolled(Program& dst, const ScanAttrs& scan,
                                          const std::vector<ValueId>& ops) {
  const int nc = scan.num_carries, nx = scan.num_xs;
  std::vector<ValueId> carries(ops.begin(), ops.begin() + nc);
  const int ny = static_cast<int>(scan.body->outputs().size()) - nc;
  // ys[j][i]: step i's y_j with a leading dimension of 1.
  std::vector<std::vector<ValueId>> ys(ny, std::vector<ValueId>(scan.length));
  for (int64_t t = 0; t < scan.length; ++t) {
    const int64_t i = scan.reverse ? scan.length - 1 - t : t;
    std::vector<ValueId> args = carries;
    for (int k = 0; k < nx; ++k) {
      const ValueId xs = ops[nc + k];
      const std::vector<int64_t>& dims = dst.type(xs).shape.dims();
      std::vector<int64_t> start(dims.size(), 0), limit = dims;
      start[0] = i;
      limit[0] = i + 1;
      BATON_ASSIGN_OR_RETURN(
          ValueId row,
          dst.Add(SliceAttrs{start, limit, std::vector<int64_t>(dims.size(), 1)},
                  OperandList{xs}));
      BATON_ASSIGN_OR_RETURN(ValueId x, DropLeading(dst, row));
      args.push_back(x);
    }
    // The invariants, the same every step.
    args.insert(args.end(), ops.begin() + nc + nx, ops.end());
    BATON_ASSIGN_OR_RETURN(std::vector<ValueId> outs,
                           InlineInto(dst, *scan.body, args));
    carries.assign(outs.begin(), outs.begin() + nc);
    for (int j = 0; j < ny; ++j) {
      std::vector<int64_t> dims{1};
      for (int64_t d : dst.type(outs[nc + j]).shape.dims()) dims.push_back(d);
      BATON_ASSIGN_OR_RETURN(ys[j][i], dst.Add(ReshapeAttrs{Shape(dims)},
                                               OperandList{outs[nc + j]}));
    }
  }
  std::vector<ValueId> results = std::move(carries);
  for (int j = 0; j < ny; ++j) {
    if (ys[j].size() == 1) {
      results.push_back(ys[j][0]);
      continue;
    }
    OperandList pieces;
    for (ValueId y : ys[j]) pieces.push_back(y);
    BATON_ASSIGN_OR_RETURN(ValueId stacked,
                           dst.Add(ConcatenateAttrs{0}, std::move(pieces)));
    results.push_back(stacked);
  }
  return results;
}

// A constant: `literal`, broadcast to `shape` when that has a rank.
Result<ValueId> Constant(Program& dst, Literal literal, const Shape& shape = Shape{}) {
  BATON_ASSIGN_OR_RETURN(
      ValueId c, dst.Add(ConstantAttrs{std::make_shared<const Literal>(std::move(literal))},
                         OperandList{}));
  if (shape.rank() == 0) return c;
  return dst.Add(BroadcastInDimAttrs{shape, {}}, OperandList{c});
}

Result<ValueId> Int32(Program& dst, int64_t value) {
  return Constant(dst, Literal::Scalar<int32_t>(static_cast<int32_t>(value)));
}

// (start, 0, ..., 0): the operands after the array of a dynamic slice or
// update at row `row` of an array of `rank`.
Result<std::vector<ValueId>> RowStarts(Program& dst, ValueId row, int rank) {
  std::vector<ValueId> starts{row};
  if (rank > 1) {
    BATON_ASSIGN_OR_RETURN(ValueId zero, Int32(dst, 0));
    starts.resize(rank, zero);
  }
  return starts;
}

// The while loop's body: (i, carries..., ys..., xs..., invariants...) ->
// (i + 1, carries..., ys with row t written), t = i (length - 1 - i when
// reversed), the scan's body given row t of each xs.
Result<Program> WhileBody(const ScanAttrs& scan, const std::vector<ValueType>& types) {
  const int nc = scan.num_carries, nx = scan.num_xs;
  const int ny = static_cast<int>(scan.body->outputs().size()) - nc;
  Program b;
  std::vector<ValueId> params;
  for (const ValueType& t : types) {
    BATON_ASSIGN_OR_RETURN(ValueId v, b.AddParameter(t));
    params.push_back(v);
  }
  const ValueId i = params[0];
  ValueId t = i;
  if (scan.reverse) {
    BATON_ASSIGN_OR_RETURN(ValueId last, Int32(b, scan.length - 1));
    BATON_ASSIGN_OR_RETURN(t, b.Add(BinaryAttrs{BinaryOp::kSub}, OperandList{last, i}));
  }
  std::vector<ValueId> args(params.begin() + 1, params.begin() + 1 + nc);
  for (int k = 0; k < nx; ++k) {
    const ValueId xs = params[1 + nc + ny + k];
    std::vector<int64_t> sizes = b.type(xs).shape.dims();
    sizes[0] = 1;
    BATON_ASSIGN_OR_RETURN(std::vector<ValueId> starts,
                           RowStarts(b, t, static_cast<int>(sizes.size())));
    OperandList operands{xs};
    for (ValueId s : starts) operands.push_back(s);
    BATON_ASSIGN_OR_RETURN(ValueId row, b.Add(DynamicSliceAttrs{sizes}, std::move(operands)));
    BATON_ASSIGN_OR_RETURN(ValueId x, DropLeading(b, row));
    args.push_back(x);
  }
  args.insert(args.end(), params.begin() + 1 + nc + ny + nx, params.end());
  BATON_ASSIGN_OR_RETURN(std::vector<ValueId> outs, InlineInto(b, *scan.body, args));
  BATON_ASSIGN_OR_RETURN(ValueId one, Int32(b, 1));
  BATON_ASSIGN_OR_RETURN(ValueId next, b.Add(BinaryAttrs{BinaryOp::kAdd}, OperandList{i, one}));
  std::vector<ValueId> results{next};
  results.insert(results.end(), outs.begin(), outs.begin() + nc);
  for (int j = 0; j < ny; ++j) {
    const ValueId ys = params[1 + nc + j];
    std::vector<int64_t> dims{1};
    for (int64_t d : b.type(outs[nc + j]).shape.dims()) dims.push_back(d);
    BATON_ASSIGN_OR_RETURN(ValueId y, b.Add(ReshapeAttrs{Shape(dims)}, OperandList{outs[nc + j]}));
    BATON_ASSIGN_OR_RETURN(std::vector<ValueId> starts,
                           RowStarts(b, t, static_cast<int>(dims.size())));
    OperandList operands{ys, y};
    for (ValueId s : starts) operands.push_back(s);
    BATON_ASSIGN_OR_RETURN(ValueId written,
                           b.Add(DynamicUpdateSliceAttrs{}, std::move(operands)));
    results.push_back(written);
  }
  BATON_RETURN_IF_ERROR(b.SetOutputs(std::move(results)));
  return b;
}

// Emits the scan (attrs `scan`, operands `ops` of dst) as a while loop over
// a step counter and returns its results in output order.
Result<std::vector<ValueId>> EmitAsWhile(Program& dst, const ScanAttrs& scan,
                                         const std::vector<ValueId>& ops) {
  const int nc = scan.num_carries;
  const int ny = static_cast<int>(scan.body->outputs().size()) - nc;
  // Operands: the counter, the carries and the ys (zeros) are carried; the
  // xs and the invariants are read as they are.
  BATON_ASSIGN_OR_RETURN(ValueId zero, Int32(dst, 0));
  std::vector<ValueId> operands{zero};
  operands.insert(operands.end(), ops.begin(), ops.begin() + nc);
  for (int j = 0; j < ny; ++j) {
    const ValueType& y = scan.body->type(scan.body->outputs()[nc + j]);
    std::vector<int64_t> dims{scan.length};
    for (int64_t d : y.shape.dims()) dims.push_back(d);
    BATON_ASSIGN_OR_RETURN(ValueId ys, Constant(dst, Literal(Shape{}, y.dtype), Shape(dims)));
    operands.push_back(ys);
  }
  operands.insert(operands.end(), ops.begin() + nc, ops.end());
  std::vector<ValueType> types;
  for (ValueId v : operands) types.push_back(dst.type(v));
  WhileAttrs loop;
  loop.num_carries = 1 + nc + ny;
  BATON_ASSIGN_OR_RETURN(Program body, WhileBody(scan, types));
  loop.body = std::make_shared<const Program>(std::move(body));
  Program cond;
  std::vector<ValueId> params;
  for (const ValueType& t : types) {
    BATON_ASSIGN_OR_RETURN(ValueId v, cond.AddParameter(t));
    params.push_back(v);
  }
  BATON_ASSIGN_OR_RETURN(ValueId length, Int32(cond, scan.length));
  BATON_ASSIGN_OR_RETURN(ValueId more, cond.Add(CompareAttrs{CompareOp::kLt},
                                                OperandList{params[0], length}));
  BATON_RETURN_IF_ERROR(cond.SetOutputs({more}));
  loop.cond = std::make_shared<const Program>(std::move(cond));
  BATON_ASSIGN_OR_RETURN(std::vector<ValueId> results,
                         AddRegionGroup(dst, std::move(loop), operands));
  return std::vector<ValueId>(results.begin() + 1, results.end());
}

using EmitScan = Result<std::vector<ValueId>> (*)(Program&, const ScanAttrs&,
                                                  const std::vector<ValueId>&);

// `program` with the scan groups `scans` names emitted by `emit`, every
// other instruction copied as it is. `what` names the caller in errors.
Result<Program> RewriteScans(const Program& program, const std::vector<ValueId>& scans,
                             EmitScan emit, const char* what) {
  std::set<ValueId> leaders;  // first member of each group to rewrite
  for (ValueId id : scans) {
    if (UnrollableScan(program, id) == nullptr) {
      std::string message = what;
      message += ": value ";
      message += std::to_string(id);
      message += " is not a whole scan group of length >= 1";
      return InvalidArgument(message);
    }
    leaders.insert(RegionGroupOf(program, id).front());
  }
  Program dst;
  std::vector<ValueId> map(program.num_values(), kNoValue);
  for (ValueId id = 0; id < program.num_values(); ++id) {
    const Instruction& inst = program.instruction(id);
    if (inst.attrs_if<ParameterAttrs>() != nullptr) {
      BATON_ASSIGN_OR_RETURN(map[id], dst.AddParameter(inst.type));
      continue;
    }
    if (map[id] != kNoValue) continue;  // a rewritten group's later member
    std::vector<ValueId> ops;
    for (ValueId o : inst.operands) ops.push_back(map[o]);
    if (leaders.count(id)) {
      BATON_ASSIGN_OR_RETURN(std::vector<ValueId> results,
                             emit(dst, inst.attrs_as<ScanAttrs>(), ops));
      const std::vector<ValueId> members = RegionGroupOf(program, id);
      for (size_t m = 0; m < members.size(); ++m) map[members[m]] = results[m];
      continue;
    }
    OperandList list;
    for (ValueId v : ops) list.push_back(v);
    BATON_ASSIGN_OR_RETURN(map[id], dst.Add(inst.attrs, std::move(list)));
  }
  std::vector<ValueId> outputs;
  for (ValueId o : program.outputs()) outputs.push_back(map[o]);
  BATON_RETURN_IF_ERROR(dst.SetOutputs(std::move(outputs)));
  return dst;
}

}  // namespace

int64_t UnrolledSize(const Program& program, ValueId id) {
  const ScanAttrs* scan = UnrollableScan(program, id);
  if (scan == nullptr) return 0;
  return scan->length * static_cast<int64_t>(scan->body->num_values());
}

Result<Program> UnrollScans(const Program& program,
                            const std::vector<ValueId>& scans) {
  return RewriteScans(program, scans, &EmitUnrolled, "UnrollScans");
}

Result<Program> ScansAsWhileLoops(const Program& program,
                                  const std::vector<ValueId>& scans) {
  return RewriteScans(program, scans, &EmitAsWhile, "ScansAsWhileLoops");
}

}  // namespace baton::compiler
