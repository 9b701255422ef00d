#include "baton/compiler/unroll_scans.h"

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

}  // namespace

int64_t UnrolledSize(const Program& program, ValueId id) {
  const ScanAttrs* scan = UnrollableScan(program, id);
  if (scan == nullptr) return 0;
  return scan->length * static_cast<int64_t>(scan->body->num_values());
}

Result<Program> UnrollScans(const Program& program,
                            const std::vector<ValueId>& scans) {
  std::set<ValueId> leaders;  // first member of each group to unroll
  for (ValueId id : scans) {
    if (UnrollableScan(program, id) == nullptr) {
      std::string what = "UnrollScans: value ";
      what += std::to_string(id);
      what += " is not a whole scan group of length >= 1";
      return InvalidArgument(what);
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
    if (map[id] != kNoValue) continue;  // an unrolled group's later member
    std::vector<ValueId> ops;
    for (ValueId o : inst.operands) ops.push_back(map[o]);
    if (leaders.count(id)) {
      BATON_ASSIGN_OR_RETURN(std::vector<ValueId> results,
                             EmitUnrolled(dst, inst.attrs_as<ScanAttrs>(), ops));
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

}  // namespace baton::compiler
