#include "baton/compiler/sharding_propagation.h"

#include <algorithm>
#include <optional>

#include "baton/compiler/control_flow.h"
#include "baton/compiler/effects.h"
#include "baton/compiler/step_plan.h"
#include "baton/core/dot_dimensions.h"

namespace baton::compiler {

int64_t DeviceMesh::SizeOf(const std::vector<int>& axes) const {
  int64_t n = 1;
  for (int a : axes) n *= axis_sizes[a];
  return n;
}

Sharding Sharding::Replicated(int rank) {
  Sharding s;
  s.dims.resize(rank);
  return s;
}

bool Sharding::IsReplicated() const {
  for (const auto& d : dims) {
    if (!d.empty()) return false;
  }
  return true;
}

std::string Sharding::ToString(const DeviceMesh& mesh) const {
  size_t last = dims.size();
  while (last > 0 && dims[last - 1].empty()) --last;
  std::string s = "P(";
  for (size_t d = 0; d < last; ++d) {
    if (d > 0) s += ", ";
    if (dims[d].empty()) {
      s += "None";
      continue;
    }
    if (dims[d].size() > 1) s += "(";
    for (size_t k = 0; k < dims[d].size(); ++k) {
      if (k > 0) s += ", ";
      s += "'" + mesh.axis_names[dims[d][k]] + "'";
    }
    if (dims[d].size() > 1) s += ")";
  }
  return s + ")";
}

int ShardingPlan::num_all_gathers() const {
  int n = 0;
  for (const ShardingStep& s : steps) {
    for (const Reshard& r : s.reshards) n += r.kind == Reshard::Kind::kAllGather;
  }
  return n;
}

int ShardingPlan::num_all_reduces() const {
  int n = 0;
  for (const ShardingStep& s : steps) n += !s.all_reduce_axes.empty();
  return n;
}

std::string ShardingPlan::ToText(const Program& program,
                                 const DeviceMesh& mesh) const {
  std::string text;
  for (ValueId v = 0; v < program.num_values(); ++v) {
    const ShardingStep& step = steps[v];
    if (sharding[v].IsReplicated() && step.reshards.empty() &&
        step.all_reduce_axes.empty()) {
      continue;
    }
    // Appended piece by piece (GCC 12 warns, wrongly, on one long sum).
    text += "%";
    text += std::to_string(v);
    text += " = ";
    text += op_kind_name(program.instruction(v).kind());
    text += " ";
    text += sharding[v].ToString(mesh);
    for (const Reshard& r : step.reshards) {
      text += r.kind == Reshard::Kind::kAllGather ? ", all-gather" : ", slice";
      text += " of operand " + std::to_string(r.operand) + " " +
              r.from.ToString(mesh) + " -> " + r.to.ToString(mesh);
    }
    if (!step.all_reduce_axes.empty()) {
      text += ", then all-reduce (" + std::string(op_name(step.all_reduce_op)) +
              ") over";
      for (int a : step.all_reduce_axes) text += " '" + mesh.axis_names[a] + "'";
    }
    if (step.computed.has_value()) {
      text += ", computed as " + step.computed->ToString(mesh) + " and sliced";
    }
    if (step.region_stage) {
      text += program.instruction(v).kind() == OpKind::kCase ? ", a case stage"
                                                             : ", a loop stage";
    }
    text += "\n";
  }
  return text;
}

namespace {

// How many ways `s` splits the value (the product over dimensions).
int64_t Ways(const Sharding& s, const DeviceMesh& mesh) {
  int64_t n = 1;
  for (const auto& d : s.dims) n *= mesh.SizeOf(d);
  return n;
}

// `s` with every dimension its axes do not divide left whole.
Sharding Fit(Sharding s, const Shape& shape, const DeviceMesh& mesh) {
  for (int d = 0; d < shape.rank(); ++d) {
    if (!s.dims[d].empty() && shape.dim(d) % mesh.SizeOf(s.dims[d]) != 0) {
      s.dims[d].clear();
    }
  }
  return s;
}

}  // namespace

Reshard::Kind ReshardKind(const Sharding& from, const Sharding& to) {
  for (size_t d = 0; d < from.dims.size(); ++d) {
    const auto& f = from.dims[d];
    const auto& t = to.dims[d];
    // Slicing keeps what is split and splits further (`to` extends `from`).
    if (f.size() > t.size() || !std::equal(f.begin(), f.end(), t.begin())) {
      return Reshard::Kind::kAllGather;
    }
  }
  return Reshard::Kind::kSlice;
}

namespace {

// A sharding constraint resolved over the mesh: its layout, with the
// dimensions it leaves as the operand has them (kUnconstrainedAxis) whole.
struct Constraint {
  Sharding sharding;
  std::vector<bool> unconstrained;  // per dimension
};

class Propagator {
 public:
  Propagator(const Program& p, const DeviceMesh& mesh,
             std::vector<std::optional<Constraint>> constraints)
      : p_(p), mesh_(mesh), constraints_(std::move(constraints)) {
    plan_.sharding.resize(p.num_values());
    plan_.steps.resize(p.num_values());
  }

  ShardingPlan Run(const std::vector<Sharding>& parameters) {
    for (ValueId v = 0; v < p_.num_values(); ++v) {
      const Instruction& inst = p_.instruction(v);
      const int rank = inst.type.shape.rank();
      Sharding out = Sharding::Replicated(rank);
      switch (inst.kind()) {
        case OpKind::kParameter:
          out = parameters[inst.attrs_as<ParameterAttrs>().index];
          break;
        case OpKind::kConstant:
        case OpKind::kIota:
          break;
        case OpKind::kBroadcastInDim:
          out = Broadcast(v, inst);
          break;
        case OpKind::kTranspose:
          out = Transpose(inst);
          break;
        case OpKind::kReduce:
          out = Reduce(v, inst);
          break;
        case OpKind::kDotGeneral:
          out = Dot(v, inst);
          break;
        case OpKind::kReshape:
          out = ReshapeOf(v, inst);
          break;
        case OpKind::kSlice:
        case OpKind::kDynamicSlice:
        case OpKind::kDynamicUpdateSlice:
        case OpKind::kPad:
        case OpKind::kSort:
        case OpKind::kFft:
          out = KeepUntouched(v, inst);
          break;
        case OpKind::kLinalg:
          out = Batched(v, inst);
          break;
        case OpKind::kWhile:
        case OpKind::kScan:
        case OpKind::kCase:
          out = ControlFlow(v, inst);
          break;
        case OpKind::kConcatenate:
          out = Concatenate(v, inst);
          break;
        case OpKind::kGather:
          out = Gather(v, inst);
          break;
        case OpKind::kScatter:
          out = Scatter(v, inst);
          break;
        case OpKind::kCall:
          if (constraints_[v].has_value()) {  // with_sharding_constraint
            out = Constrained(inst, *constraints_[v]);
            Need(v, 0, out);
            break;
          }
          [[fallthrough]];
        default:
          if (IsElementwise(inst.kind()) || inst.kind() == OpKind::kTransfer) {
            out = Elementwise(v, inst);
          } else {
            for (int k = 0; k < inst.operands.size(); ++k) {
              Need(v, k, Sharding::Replicated(
                             p_.type(inst.operands[k]).shape.rank()));
            }
          }
          break;
      }
      plan_.sharding[v] = std::move(out);
    }
    BroadcastIntoTheirUsersLayout();
    return std::move(plan_);
  }

 private:
  // Backward, for broadcasts: a replicated broadcast that every user slices
  // to one layout is made in that layout instead (each device broadcasts
  // into its block; nothing is sliced). Where a split dimension comes from
  // an operand dimension, the operand is read sliced instead -- a slice of
  // the smaller value -- and, visited users first, a chain of broadcasts
  // (a scalar to a vector to a batch: the cotangent of a mean) is made in
  // its users' layout all the way up. A bias or a scalar broadcast next to
  // a split batch is the common case.
  void BroadcastIntoTheirUsersLayout() {
    std::vector<std::vector<std::pair<ValueId, size_t>>> users(p_.num_values());
    // Every read of each value: operands and outputs.
    std::vector<int> reads(p_.num_values(), 0);
    for (ValueId u = 0; u < p_.num_values(); ++u) {
      for (ValueId o : p_.instruction(u).operands) ++reads[o];
    }
    for (ValueId o : p_.outputs()) ++reads[o];
    for (ValueId v = 0; v < p_.num_values(); ++v) {
      const auto& reshards = plan_.steps[v].reshards;
      for (size_t r = 0; r < reshards.size(); ++r) {
        users[p_.instruction(v).operands[reshards[r].operand]].push_back({v, r});
      }
    }
    for (ValueId v = p_.num_values() - 1; v >= 0; --v) {
      const Instruction& inst = p_.instruction(v);
      if (inst.kind() != OpKind::kBroadcastInDim || users[v].empty() ||
          !plan_.sharding[v].IsReplicated() || !plan_.steps[v].reshards.empty()) {
        continue;
      }
      // Every read of v is a reshard (none reads it as it is) to one layout.
      if (reads[v] != static_cast<int>(users[v].size())) continue;
      const auto& first = plan_.steps[users[v][0].first].reshards[users[v][0].second];
      bool same = first.kind == Reshard::Kind::kSlice;
      for (const auto& [u, r] : users[v]) same &= plan_.steps[u].reshards[r].to == first.to;
      if (!same) continue;
      const Sharding to = first.to;
      // The operand's layout: the split of each result dimension it
      // stretches to (a stretched dimension of size 1 stays whole).
      const auto& a = inst.attrs_as<BroadcastInDimAttrs>();
      const ValueId operand = inst.operands[0];
      const Shape& in = p_.type(operand).shape;
      Sharding from = Sharding::Replicated(in.rank());
      for (int d = 0; d < in.rank(); ++d) {
        const auto out_dim = static_cast<size_t>(a.broadcast_dimensions[d]);
        if (in.dim(d) == a.shape.dim(out_dim)) from.dims[d] = to.dims[out_dim];
      }
      if (!Of(operand).IsReplicated() && !(Of(operand) == from)) continue;
      plan_.sharding[v] = to;
      // Marked here, dropped after the loop (the indices in `users` stay
      // valid until then).
      for (const auto& [u, r] : users[v]) plan_.steps[u].reshards[r].operand = -1;
      if (!from.IsReplicated()) {
        Need(v, 0, from);
        users[operand].push_back({v, plan_.steps[v].reshards.size() - 1});
      }
    }
    for (ShardingStep& step : plan_.steps) {
      step.reshards.erase(
          std::remove_if(step.reshards.begin(), step.reshards.end(),
                         [](const Reshard& x) { return x.operand < 0; }),
          step.reshards.end());
    }
  }

  const Sharding& Of(ValueId v) const { return plan_.sharding[v]; }

  // Operand k of instruction v is read as `to`.
  void Need(ValueId v, int k, const Sharding& to) {
    const Sharding& from = Of(p_.instruction(v).operands[k]);
    if (from == to) return;
    plan_.steps[v].reshards.push_back(Reshard{k, from, to, ReshardKind(from, to)});
  }

  Sharding Elementwise(ValueId v, const Instruction& inst) {
    const int rank = inst.type.shape.rank();
    Sharding best = Sharding::Replicated(rank);
    int64_t best_ways = 1;
    for (int k = 0; k < inst.operands.size(); ++k) {
      const Sharding& s = Of(inst.operands[k]);
      if (static_cast<int>(s.dims.size()) != rank) continue;
      const int64_t w = Ways(s, mesh_);
      if (w > best_ways) {
        best = s;
        best_ways = w;
      }
    }
    // Dimensions the most split operand leaves whole take another
    // operand's split where its axes are still free (P('x') + P(None, 'y')
    // is P('x', 'y'), as in JAX): each operand is then only sliced.
    std::vector<int> used;
    for (const auto& axes : best.dims) used.insert(used.end(), axes.begin(), axes.end());
    for (int k = 0; k < inst.operands.size(); ++k) {
      const Sharding& s = Of(inst.operands[k]);
      if (static_cast<int>(s.dims.size()) != rank) continue;
      for (int d = 0; d < rank; ++d) {
        if (!best.dims[d].empty() || s.dims[d].empty()) continue;
        bool free = true;
        for (int a : s.dims[d]) {
          free &= std::find(used.begin(), used.end(), a) == used.end();
        }
        if (!free) continue;
        best.dims[d] = s.dims[d];
        used.insert(used.end(), s.dims[d].begin(), s.dims[d].end());
      }
    }
    for (int k = 0; k < inst.operands.size(); ++k) {
      if (p_.type(inst.operands[k]).shape.rank() == rank) Need(v, k, best);
    }
    return best;
  }

  Sharding Broadcast(ValueId v, const Instruction& inst) {
    const auto& a = inst.attrs_as<BroadcastInDimAttrs>();
    const Shape& in = p_.type(inst.operands[0]).shape;
    Sharding want = Of(inst.operands[0]);
    Sharding out = Sharding::Replicated(a.shape.rank());
    for (int d = 0; d < in.rank(); ++d) {
      const int to = static_cast<int>(a.broadcast_dimensions[d]);
      if (in.dim(d) == a.shape.dim(to)) {
        out.dims[to] = want.dims[d];
      } else {
        want.dims[d].clear();  // a size-1 dimension stretched: whole
      }
    }
    Need(v, 0, want);
    return out;
  }

  Sharding Transpose(const Instruction& inst) {
    const auto& perm = inst.attrs_as<TransposeAttrs>().permutation;
    const Sharding& in = Of(inst.operands[0]);
    Sharding out = Sharding::Replicated(static_cast<int>(perm.size()));
    for (size_t d = 0; d < perm.size(); ++d) out.dims[d] = in.dims[perm[d]];
    return out;
  }

  Sharding Reduce(ValueId v, const Instruction& inst) {
    const auto& a = inst.attrs_as<ReduceAttrs>();
    const Sharding& in = Of(inst.operands[0]);
    Sharding out;
    ShardingStep& step = plan_.steps[v];
    for (int d = 0; d < static_cast<int>(in.dims.size()); ++d) {
      if (std::find(a.axes.begin(), a.axes.end(), d) == a.axes.end()) {
        out.dims.push_back(in.dims[d]);
      } else {
        step.all_reduce_axes.insert(step.all_reduce_axes.end(),
                                    in.dims[d].begin(), in.dims[d].end());
      }
    }
    std::sort(step.all_reduce_axes.begin(), step.all_reduce_axes.end());
    step.all_reduce_op = a.op;
    return out;
  }

  Sharding Dot(ValueId v, const Instruction& inst) {
    const auto& a = inst.attrs_as<DotGeneralAttrs>();
    Sharding lhs = Of(inst.operands[0]);
    Sharding rhs = Of(inst.operands[1]);
    const std::vector<int64_t> lhs_free = DotFreeDimensions(
        static_cast<int>(lhs.dims.size()), a.lhs_batch, a.lhs_contracting);
    const std::vector<int64_t> rhs_free = DotFreeDimensions(
        static_cast<int>(rhs.dims.size()), a.rhs_batch, a.rhs_contracting);
    // Batch and contracting dimensions pair up: the right-hand side follows
    // the left where they differ (sliced when it is whole there).
    auto pair_up = [&](const std::vector<int64_t>& l,
                       const std::vector<int64_t>& r) {
      for (size_t k = 0; k < l.size(); ++k) {
        auto& ld = lhs.dims[l[k]];
        auto& rd = rhs.dims[r[k]];
        if (ld.empty() && !rd.empty()) {
          ld = rd;
        } else {
          rd = ld;
        }
      }
    };
    pair_up(a.lhs_batch, a.rhs_batch);
    pair_up(a.lhs_contracting, a.rhs_contracting);
    // Each mesh axis once: batch, contracting (the partial sums), left free,
    // right free; a later use is dropped (gathered) from its operand.
    std::vector<int> used;
    auto claim = [&](std::vector<int>& axes) {
      std::vector<int> kept;
      for (int x : axes) {
        if (std::find(used.begin(), used.end(), x) == used.end()) {
          kept.push_back(x);
          used.push_back(x);
        } else {
          break;  // the axes after a dropped one cannot stay major-first
        }
      }
      axes = kept;
    };
    for (size_t k = 0; k < a.lhs_batch.size(); ++k) {
      claim(lhs.dims[a.lhs_batch[k]]);
      rhs.dims[a.rhs_batch[k]] = lhs.dims[a.lhs_batch[k]];
    }
    for (size_t k = 0; k < a.lhs_contracting.size(); ++k) {
      claim(lhs.dims[a.lhs_contracting[k]]);
      rhs.dims[a.rhs_contracting[k]] = lhs.dims[a.lhs_contracting[k]];
    }
    for (int64_t d : lhs_free) claim(lhs.dims[d]);
    for (int64_t d : rhs_free) claim(rhs.dims[d]);
    lhs = Fit(std::move(lhs), p_.type(inst.operands[0]).shape, mesh_);
    rhs = Fit(std::move(rhs), p_.type(inst.operands[1]).shape, mesh_);
    // Paired dimensions have one size and, from here, one split, so Fit
    // keeps or drops them alike. A contracting dimension split on both
    // sides leaves partial sums.
    std::vector<int> partial;
    for (int64_t d : a.lhs_contracting) {
      partial.insert(partial.end(), lhs.dims[d].begin(), lhs.dims[d].end());
    }
    Need(v, 0, lhs);
    Need(v, 1, rhs);
    Sharding out;
    for (int64_t d : a.lhs_batch) out.dims.push_back(lhs.dims[d]);
    for (int64_t d : lhs_free) out.dims.push_back(lhs.dims[d]);
    for (int64_t d : rhs_free) out.dims.push_back(rhs.dims[d]);
    std::sort(partial.begin(), partial.end());
    plan_.steps[v].all_reduce_axes = partial;
    plan_.steps[v].all_reduce_op = ReduceOp::kSum;
    return out;
  }

  Sharding ReshapeOf(ValueId v, const Instruction& inst) {
    const Shape& in = p_.type(inst.operands[0]).shape;
    const Shape& out_shape = inst.type.shape;
    Sharding want = Of(inst.operands[0]);
    Sharding out = Sharding::Replicated(out_shape.rank());
    // Walk both shapes in groups of equal element count.
    int i = 0, o = 0;
    while (i < in.rank() || o < out_shape.rank()) {
      const int i0 = i, o0 = o;
      int64_t pi = i < in.rank() ? in.dim(i++) : 1;
      int64_t po = o < out_shape.rank() ? out_shape.dim(o++) : 1;
      while (pi != po) {
        if (pi < po && i < in.rank()) {
          pi *= in.dim(i++);
        } else if (o < out_shape.rank()) {
          po *= out_shape.dim(o++);
        } else {
          break;
        }
      }
      // Group: input dims [i0, i), output dims [o0, o).
      if (!SplitThroughGroup(in, want, i0, i, out_shape, out, o0, o)) {
        for (int d = i0; d < i; ++d) want.dims[d].clear();
      }
    }
    Need(v, 0, want);
    return out;
  }

  // A reshape group's split, carried from input dims [i0, i1) (laid out as
  // `in_s`) to output dims [o0, o1) of `out_s`: the group's elements in
  // order are split over one list of mesh axes, major first, when its
  // split dimensions come first, each but the last split into blocks of
  // one (a (4, 2, c) split ('a', 'b', None) is 8c split ('a', 'b')). The
  // list is dealt to the output dimensions the same way: a prefix whose
  // ways equal a dimension's size splits it into blocks of one and the rest
  // goes on; the last part divides its dimension. Dimensions of size 1
  // carry nothing. False (nothing written) when the group's split cannot
  // be carried so (then its input is gathered).
  bool SplitThroughGroup(const Shape& in, const Sharding& in_s, int i0, int i1,
                         const Shape& out_shape, Sharding& out_s, int o0,
                         int o1) const {
    std::vector<int> axes;  // the group's linear split, major first
    bool closed = false;    // a later split dimension would not be contiguous
    for (int d = i0; d < i1; ++d) {
      if (in.dim(d) == 1) continue;
      const auto& split = in_s.dims[d];
      if (split.empty()) {
        closed = true;
        continue;
      }
      if (closed) return false;
      axes.insert(axes.end(), split.begin(), split.end());
      if (in.dim(d) != mesh_.SizeOf(split)) closed = true;
    }
    std::vector<std::vector<int>> dealt(o1 - o0);
    size_t next = 0;
    for (int d = o0; d < o1 && next < axes.size(); ++d) {
      if (out_shape.dim(d) == 1) continue;
      std::vector<int> part;
      int64_t ways = 1;
      bool exact = false;
      while (next < axes.size()) {
        ways *= mesh_.axis_sizes[axes[next]];
        part.push_back(axes[next++]);
        if (ways == out_shape.dim(d)) {
          exact = true;
          break;
        }
        if (ways > out_shape.dim(d)) return false;
      }
      if (!exact && (next < axes.size() || out_shape.dim(d) % ways != 0)) return false;
      dealt[d - o0] = std::move(part);
    }
    if (next < axes.size()) return false;
    for (int d = o0; d < o1; ++d) out_s.dims[d] = std::move(dealt[d - o0]);
    return true;
  }

  // Per dimension of operand 0, whether the op reads or writes it other
  // than element for element (a slice that does not take all of it, a
  // padded one, the sorted one, ...): those must be whole on each device;
  // the others keep their split (the block of the result is the op on the
  // block of the operand).
  std::vector<bool> Touched(const Instruction& inst) const {
    const Shape& in = p_.type(inst.operands[0]).shape;
    std::vector<bool> touched(in.rank(), false);
    for (int d = 0; d < in.rank(); ++d) {
      if (const auto* a = inst.attrs_if<SliceAttrs>()) {
        touched[d] = a->start[d] != 0 || a->limit[d] != in.dim(d) || a->stride[d] != 1;
      } else if (const auto* a = inst.attrs_if<DynamicSliceAttrs>()) {
        touched[d] = a->slice_sizes[d] != in.dim(d);
      } else if (inst.kind() == OpKind::kDynamicUpdateSlice) {
        touched[d] = p_.type(inst.operands[1]).shape.dim(d) != in.dim(d);
      } else if (const auto* a = inst.attrs_if<PadAttrs>()) {
        touched[d] = a->low[d] != 0 || a->high[d] != 0 || a->interior[d] != 0;
      } else if (const auto* a = inst.attrs_if<SortAttrs>()) {
        touched[d] = a->dimension == d;
      } else if (const auto* a = inst.attrs_if<FftAttrs>()) {  // the last ones
        touched[d] = d >= in.rank() - static_cast<int>(a->lengths.size());
      }
    }
    return touched;
  }

  // `s` with the dimensions `whole` marks left whole.
  static Sharding Whole(Sharding s, const std::vector<bool>& whole) {
    for (size_t d = 0; d < whole.size(); ++d) {
      if (whole[d]) s.dims[d].clear();
    }
    return s;
  }

  // Slices, dynamic slices and updates, pads and sorts: the operand's
  // layout, with the dimensions the op touches whole (gathered first if
  // split); a dynamic update takes its update's instead where that is more
  // split (a row of split gradients written into a replicated buffer keeps
  // the split: the buffer is sliced, nothing gathered), and reads both in
  // it.
  Sharding KeepUntouched(ValueId v, const Instruction& inst) {
    const std::vector<bool> touched = Touched(inst);
    Sharding s = Whole(Of(inst.operands[0]), touched);
    if (inst.kind() == OpKind::kDynamicUpdateSlice) {
      const Sharding u = Whole(Of(inst.operands[1]), touched);
      if (Ways(u, mesh_) > Ways(s, mesh_)) s = u;
      Need(v, 1, s);
    }
    Need(v, 0, s);
    return KeepSplit(v, s, Of(inst.operands[0]));
  }

  // The layout of v, computed as `computed`: `computed` with each
  // dimension it leaves whole split as `operand` splits it, where v's size
  // there divides by that split and its axes are free (JAX's layouts:
  // x[0:8], jnp.sort(x, axis=0), a concatenation or a dynamic update along
  // a split dimension stay split; x[1:4] and a pad to 18 rows of 4 blocks
  // do not). Where that differs from `computed`, the step records that the
  // op computes in `computed` and each device slices its block after.
  Sharding KeepSplit(ValueId v, const Sharding& computed, const Sharding& operand) {
    const Shape& shape = p_.type(v).shape;
    Sharding out = computed;
    if (operand.dims.size() != out.dims.size()) return out;
    std::vector<int> used;
    for (const auto& axes : out.dims) used.insert(used.end(), axes.begin(), axes.end());
    for (size_t d = 0; d < out.dims.size(); ++d) {
      const std::vector<int>& axes = operand.dims[d];
      if (!out.dims[d].empty() || axes.empty()) continue;
      if (shape.dim(static_cast<int>(d)) % mesh_.SizeOf(axes) != 0) continue;
      bool free = true;
      for (int a : axes) free &= std::find(used.begin(), used.end(), a) == used.end();
      if (!free) continue;
      out.dims[d] = axes;
      used.insert(used.end(), axes.begin(), axes.end());
    }
    if (out != computed) plan_.steps[v].computed = computed;
    return out;
  }

  // A control-flow group's decision (made at its first instruction, used
  // by the rest: they share operands and regions).
  struct RegionGroup {
    const void* key = nullptr;          // the first region's identity
    std::vector<Sharding> operands;     // the layout each operand is read in
    std::vector<Sharding> outputs;      // per output_index
    std::vector<std::shared_ptr<const ShardingPlan>> regions;  // empty: whole
    bool region_stage = false;  // run as a stage (LoopStage, CaseStage)
  };

  // Meet of two layouts: the dimensions split alike, the rest whole.
  static Sharding Meet(const Sharding& a, const Sharding& b) {
    Sharding m = a;
    for (size_t d = 0; d < m.dims.size(); ++d) {
      if (a.dims[d] != b.dims[d]) m.dims[d].clear();
    }
    return m;
  }

  // While, scan and case on each device's blocks, when their regions need
  // no communication there: each region is propagated with its parameters
  // laid out as the loop's operands (a scan's xs without their leading,
  // iterated dimension); where a region wants a parameter in another
  // layout it is given that one (resharded once, before the op, instead of
  // in every iteration), and a carry whose result comes out otherwise than
  // it goes in is met with it; a few rounds settle them. A region that
  // still needs a reshard or an all-reduce inside, has side effects, or
  // does not settle: the op reads its operands whole, as before.
  Sharding ControlFlow(ValueId v, const Instruction& inst) {
    const Program* first_region = Regions(inst.attrs).front();
    const int output_index = ControlFlowOutputIndex(inst.attrs);
    if (group_.key != first_region || output_index == 0) {
      group_ = DecideRegions(inst);
      group_.key = first_region;
    }
    for (int k = 0; k < inst.operands.size(); ++k) Need(v, k, group_.operands[k]);
    plan_.steps[v].regions = group_.regions;
    plan_.steps[v].region_stage = group_.region_stage;
    return group_.outputs[output_index];
  }

  RegionGroup DecideRegions(const Instruction& inst) {
    RegionGroup g;
    const int n_ops = static_cast<int>(inst.operands.size());
    // Whole, as every other op: the fallback.
    for (int k = 0; k < n_ops; ++k) {
      g.operands.push_back(Sharding::Replicated(p_.type(inst.operands[k]).shape.rank()));
    }
    const std::vector<const Program*> regions = Regions(inst.attrs);
    int carries = 0, xs = 0, first_param_operand = 0;
    if (const auto* a = inst.attrs_if<WhileAttrs>()) {
      carries = a->num_carries;
    } else if (const auto* a = inst.attrs_if<ScanAttrs>()) {
      carries = a->num_carries;
      xs = a->num_xs;
    } else {
      first_param_operand = 1;  // the branch index
    }
    // The results: the last region's outputs (a while's body returns its
    // carries, a scan's body its carries and y slices, a branch the results).
    std::vector<Shape> out_shapes;
    for (ValueId o : regions.back()->outputs()) {
      out_shapes.push_back(regions.back()->type(o).shape);
    }
    // A scan's ys have the body's y slices' rank plus the leading one.
    const bool scan = inst.kind() == OpKind::kScan;
    auto whole = [&]() {
      for (size_t j = 0; j < out_shapes.size(); ++j) {
        const int ys = scan && static_cast<int>(j) >= carries ? 1 : 0;
        g.outputs.push_back(Sharding::Replicated(out_shapes[j].rank() + ys));
      }
      return g;
    };
    for (const Program* r : regions) {
      if (HasSideEffect(*r)) return whole();
    }
    // A region needing communication inside: a loop or case stage, or
    // whole.
    auto communicates = [&]() {
      std::optional<RegionGroup> stage =
          inst.kind() == OpKind::kCase ? CaseStage(inst) : LoopStage(inst);
      return stage.has_value() ? std::move(*stage) : whole();
    };
    // The regions' parameters: the operands after the branch index; a
    // scan's xs without their leading dimension.
    std::vector<Sharding> params;
    for (int k = first_param_operand; k < n_ops; ++k) {
      Sharding s = Of(inst.operands[k]);
      const int j = k - first_param_operand;
      if (j >= carries && j < carries + xs) s.dims.erase(s.dims.begin());
      params.push_back(std::move(s));
    }
    const int rounds = 8;
    std::vector<std::shared_ptr<const ShardingPlan>> plans;
    for (int round = 0; round <= rounds; ++round) {
      plans.clear();
      bool settled = true;
      for (const Program* r : regions) {
        Result<ShardingPlan> plan = PropagateShardings(*r, mesh_, params);
        if (!plan.ok()) return whole();
        // Reshards of parameters: the parameter in that layout instead.
        for (ValueId u = 0; u < r->num_values(); ++u) {
          const ShardingStep& step = plan.value().steps[u];
          // A block sliced after the op is each device's own: not a
          // block program's (the same program on every device).
          if (!step.all_reduce_axes.empty() || step.computed.has_value()) {
            return communicates();
          }
          for (const Reshard& rs : step.reshards) {
            const ValueId o = r->instruction(u).operands[rs.operand];
            const auto* param = r->instruction(o).attrs_if<ParameterAttrs>();
            if (param == nullptr) return communicates();  // every iteration
            Sharding& want = params[param->index];
            want = want == rs.from ? rs.to : Meet(want, rs.to);
            settled = false;
          }
        }
        plans.push_back(std::make_shared<const ShardingPlan>(std::move(plan.value())));
      }
      // A carry comes out of the body as it goes in.
      const Program* body = regions.back();
      const ShardingPlan& body_plan = *plans.back();
      for (int i = 0; i < carries && settled; ++i) {
        const Sharding& out = body_plan.sharding[body->outputs()[i]];
        if (out != params[i]) {
          params[i] = Meet(params[i], out);
          settled = false;
        }
      }
      if (settled) break;
      if (round == rounds) return whole();
    }
    // Every branch's results laid out alike.
    std::vector<Sharding> outs;
    for (size_t j = 0; j < out_shapes.size(); ++j) {
      const Sharding& s = plans[regions.size() - 1]->sharding[regions.back()->outputs()[j]];
      for (size_t b = 0; b + 1 < regions.size() && inst.kind() == OpKind::kCase; ++b) {
        if (plans[b]->sharding[regions[b]->outputs()[j]] != s) return whole();
      }
      outs.push_back(s);
    }
    for (int k = first_param_operand; k < n_ops; ++k) {
      Sharding s = params[k - first_param_operand];
      const int j = k - first_param_operand;
      if (j >= carries && j < carries + xs) s.dims.insert(s.dims.begin(), std::vector<int>{});
      g.operands[k] = std::move(s);
    }
    if (scan) {
      for (size_t j = carries; j < outs.size(); ++j) {  // ys: [length, ...]
        outs[j].dims.insert(outs[j].dims.begin(), std::vector<int>{});
      }
    }
    g.outputs = std::move(outs);
    g.regions = std::move(plans);
    return g;
  }

  // The layouts of inst's operands from the first'th on (a region
  // stage's parameters: a case's operands after its branch index).
  std::vector<Sharding> OperandLayouts(const Instruction& inst, int first) {
    std::vector<Sharding> layouts;
    for (int k = first; k < inst.operands.size(); ++k) layouts.push_back(Of(inst.operands[k]));
    return layouts;
  }
  static bool AnySplit(const std::vector<Sharding>& layouts) {
    return std::any_of(layouts.begin(), layouts.end(),
                       [](const Sharding& s) { return !s.IsReplicated(); });
  }

  // A while loop whose regions need communication (and have no side
  // effects: DecideRegions checked): run as a stage of its own when an
  // operand is split, so the split operands stay split and each
  // iteration's collectives run inside it (spmd_partitioner.h, SpmdLoop),
  // where read whole every device would gather them. The carries keep
  // their operands' layouts, met with the body's results until they agree
  // -- a result that only splits its carry further is taken instead (the
  // operand is sliced before the loop, no communication: a scan's stacked
  // outputs start as replicated zeros and are written split) -- and a
  // result laid out otherwise is resharded at the body's end. Nullopt
  // (read whole) when nothing is split, and for scans and conditionals.
  std::optional<RegionGroup> LoopStage(const Instruction& inst) {
    const auto* loop = inst.attrs_if<WhileAttrs>();
    if (loop == nullptr) return std::nullopt;
    std::vector<Sharding> params = OperandLayouts(inst, 0);
    if (!AnySplit(params)) return std::nullopt;
    const Program& body = *loop->body;
    for (int round = 0; round < 8; ++round) {
      Result<ShardingPlan> plan = PropagateShardings(body, mesh_, params);
      if (!plan.ok()) return std::nullopt;
      bool settled = true;
      for (int i = 0; i < loop->num_carries; ++i) {
        const Sharding& out = plan.value().sharding[body.outputs()[i]];
        if (out == params[i]) continue;
        const bool further = round < 4 && ReshardKind(params[i], out) == Reshard::Kind::kSlice;
        params[i] = further ? out : Meet(params[i], out);
        settled = false;
      }
      if (settled) break;
    }
    RegionGroup g;
    g.operands = params;
    g.outputs.assign(params.begin(), params.begin() + loop->num_carries);
    g.region_stage = true;
    return g;
  }

  // A conditional whose branches need communication (and have no side
  // effects: DecideRegions checked): run as a stage of its own when an
  // operand is split (spmd_partitioner.h, SpmdCase), so each branch runs on
  // the split blocks with its collectives inside, where read whole every
  // device would gather them. The operands keep their layouts; each result
  // is laid out as the branches' propagation lays it out where they agree,
  // whole in the dimensions where they do not (a branch computing it
  // otherwise reshards it at its end). Nullopt (read whole) when nothing is
  // split or a branch cannot be propagated.
  std::optional<RegionGroup> CaseStage(const Instruction& inst) {
    const auto& c = inst.attrs_as<CaseAttrs>();
    RegionGroup g;
    g.operands.push_back(Of(inst.operands[0]));  // the index: a scalar
    const std::vector<Sharding> params = OperandLayouts(inst, 1);
    if (!AnySplit(params) || c.branches.empty()) return std::nullopt;
    for (size_t b = 0; b < c.branches.size(); ++b) {
      const Program& branch = *c.branches[b];
      Result<ShardingPlan> plan = PropagateShardings(branch, mesh_, params);
      if (!plan.ok()) return std::nullopt;
      for (size_t j = 0; j < branch.outputs().size(); ++j) {
        const Sharding& s = plan.value().sharding[branch.outputs()[j]];
        if (b == 0) {
          g.outputs.push_back(s);
        } else {
          g.outputs[j] = Meet(g.outputs[j], s);
        }
      }
    }
    g.operands.insert(g.operands.end(), params.begin(), params.end());
    g.region_stage = true;
    return g;
  }

  // Linear algebra over a batch of matrices (op_attrs.h, LinalgAttrs):
  // every operand's batch (leading) dimensions split as operand 0's, the
  // matrices whole; the result's batch dimensions likewise, the rest whole
  // (a batch of decompositions split over the devices, each device
  // factoring its own matrices).
  Sharding Batched(ValueId v, const Instruction& inst) {
    const int batch = p_.type(inst.operands[0]).shape.rank() - 2;
    std::vector<bool> matrix(batch + 2, false);
    matrix[batch] = matrix[batch + 1] = true;
    const Sharding s = Whole(Of(inst.operands[0]), matrix);
    for (int k = 0; k < inst.operands.size(); ++k) {
      if (p_.type(inst.operands[k]).shape.rank() == batch + 2) Need(v, k, s);
    }
    Sharding out = Sharding::Replicated(inst.type.shape.rank());
    for (int d = 0; d < batch; ++d) out.dims[d] = s.dims[d];
    return out;
  }

  // The most split operand's layout, the joined dimension whole, for every
  // operand.
  Sharding Concatenate(ValueId v, const Instruction& inst) {
    const int64_t joined = inst.attrs_as<ConcatenateAttrs>().dimension;
    std::vector<bool> whole(inst.type.shape.rank(), false);
    whole[joined] = true;
    int most = 0;  // the most split operand (before the joined dimension is)
    Sharding best = Whole(Of(inst.operands[0]), whole);
    for (int k = 1; k < inst.operands.size(); ++k) {
      Sharding s = Whole(Of(inst.operands[k]), whole);
      if (Ways(s, mesh_) > Ways(best, mesh_)) {
        best = std::move(s);
        most = k;
      }
    }
    for (int k = 0; k < inst.operands.size(); ++k) Need(v, k, best);
    return KeepSplit(v, best, Of(inst.operands[most]));
  }

  // take(operand, indices, axis): the operand whole along `axis` and split
  // as it is elsewhere; the indices split as they are, where their axes
  // are not the operand's. The result is operand[:axis] + indices +
  // operand[axis+1:], laid out the same (an embedding lookup of a
  // replicated table by batch-split ids stays split by batch).
  Sharding Gather(ValueId v, const Instruction& inst) {
    const int64_t axis = inst.attrs_as<GatherAttrs>().axis;
    Sharding table = Of(inst.operands[0]);
    table.dims[axis].clear();
    Sharding ids = Of(inst.operands[1]);
    std::vector<int> used;
    for (const auto& axes : table.dims) used.insert(used.end(), axes.begin(), axes.end());
    for (auto& axes : ids.dims) {
      for (int a : axes) {
        if (std::find(used.begin(), used.end(), a) != used.end()) {
          axes.clear();
          break;
        }
      }
    }
    Need(v, 0, table);
    Need(v, 1, ids);
    Sharding out;
    out.dims.assign(table.dims.begin(), table.dims.begin() + axis);
    out.dims.insert(out.dims.end(), ids.dims.begin(), ids.dims.end());
    out.dims.insert(out.dims.end(), table.dims.begin() + axis + 1, table.dims.end());
    return out;
  }

  // scatter(operand, indices, updates, axis): each device applies every
  // update to its block -- the operand whole along `axis` and split as it
  // is elsewhere, the indices whole, the updates laid out as the operand
  // around the indices' dimensions (whole).
  Sharding Scatter(ValueId v, const Instruction& inst) {
    const int64_t axis = inst.attrs_as<ScatterAttrs>().axis;
    Sharding s = Of(inst.operands[0]);
    s.dims[axis].clear();
    const int index_rank = p_.type(inst.operands[1]).shape.rank();
    Sharding updates;
    updates.dims.assign(s.dims.begin(), s.dims.begin() + axis);
    updates.dims.resize(updates.dims.size() + index_rank);
    updates.dims.insert(updates.dims.end(), s.dims.begin() + axis + 1, s.dims.end());
    Need(v, 0, s);
    Need(v, 1, Sharding::Replicated(index_rank));
    Need(v, 2, updates);
    return KeepSplit(v, s, Of(inst.operands[0]));
  }

  // A constraint's layout: its dimensions, and the operand's for those it
  // leaves unconstrained (where their axes are not taken by the others).
  Sharding Constrained(const Instruction& inst, const Constraint& c) const {
    Sharding s = c.sharding;
    const Sharding& x = Of(inst.operands[0]);
    std::vector<int> used;
    for (const auto& axes : s.dims) used.insert(used.end(), axes.begin(), axes.end());
    for (size_t d = 0; d < s.dims.size(); ++d) {
      if (!c.unconstrained[d]) continue;
      bool free = true;
      for (int a : x.dims[d]) {
        free &= std::find(used.begin(), used.end(), a) == used.end();
      }
      if (free) s.dims[d] = x.dims[d];
    }
    return s;
  }

  const Program& p_;
  const DeviceMesh& mesh_;
  // Per value: the layout a sharding constraint (CallKind::
  // kShardingConstraint) gives it.
  std::vector<std::optional<Constraint>> constraints_;
  ShardingPlan plan_;
  RegionGroup group_;  // the control-flow group being propagated
};

// The layout a sharding constraint names, by the mesh's axis names;
// InvalidArgument naming the value for an axis the mesh does not have or a
// layout CheckSharding refuses.
Result<Constraint> ConstraintSharding(const Program& program, ValueId v,
                                      const DeviceMesh& mesh) {
  const auto& call = program.instruction(v).attrs_as<CallAttrs>();
  const Shape& shape = program.type(v).shape;
  const std::string what = "with_sharding_constraint on %" + std::to_string(v) +
                           " (shape " + shape.to_string() + ")";
  Constraint c;
  Sharding& s = c.sharding;
  for (const auto& names : call.sharding) {
    c.unconstrained.push_back(names.size() == 1 &&
                              names[0] == kUnconstrainedAxis);
    if (c.unconstrained.back()) {
      s.dims.emplace_back();
      continue;
    }
    std::vector<int> axes;
    for (const std::string& name : names) {
      auto it = std::find(mesh.axis_names.begin(), mesh.axis_names.end(), name);
      if (it == mesh.axis_names.end()) {
        std::string known;
        for (const auto& n : mesh.axis_names) known += (known.empty() ? "'" : ", '") + n + "'";
        return InvalidArgument(what + ": the mesh has no axis '" + name +
                               "' (its axes: " + known + ")");
      }
      axes.push_back(static_cast<int>(it - mesh.axis_names.begin()));
    }
    s.dims.push_back(std::move(axes));
  }
  BATON_RETURN_IF_ERROR(CheckSharding(shape, mesh, s, what));
  return c;
}

Status CheckParameter(const Program& program, const DeviceMesh& mesh,
                      const Sharding& s, int index) {
  const Shape& shape = program.parameter_type(index).shape;
  return CheckSharding(shape, mesh, s,
                       "parameter " + std::to_string(index) + " (shape " +
                           shape.to_string() + ")");
}

}  // namespace

Status CheckSharding(const Shape& shape, const DeviceMesh& mesh,
                     const Sharding& s, const std::string& what) {
  if (static_cast<int>(s.dims.size()) != shape.rank()) {
    return InvalidArgument(what + ": its sharding names " +
                           std::to_string(s.dims.size()) +
                           " dimensions; it has " +
                           std::to_string(shape.rank()));
  }
  std::vector<int> used;
  for (int d = 0; d < shape.rank(); ++d) {
    for (int a : s.dims[d]) {
      if (a < 0 || a >= static_cast<int>(mesh.axis_sizes.size())) {
        return InvalidArgument(what + ": dimension " + std::to_string(d) +
                               " names mesh axis " + std::to_string(a) +
                               "; the mesh has " +
                               std::to_string(mesh.axis_sizes.size()));
      }
      if (std::find(used.begin(), used.end(), a) != used.end()) {
        return InvalidArgument(what + ": mesh axis '" + mesh.axis_names[a] +
                               "' splits two dimensions; an axis splits at "
                               "most one");
      }
      used.push_back(a);
    }
    if (shape.dim(d) % mesh.SizeOf(s.dims[d]) != 0) {
      return InvalidArgument(
          what + ": dimension " + std::to_string(d) + " (" +
          std::to_string(shape.dim(d)) + ") does not divide into " +
          std::to_string(mesh.SizeOf(s.dims[d])) + " equal blocks over " +
          s.ToString(mesh));
    }
  }
  return OkStatus();
}

Result<ShardingPlan> PropagateShardings(const Program& program,
                                        const DeviceMesh& mesh,
                                        const std::vector<Sharding>& parameters) {
  if (static_cast<int>(parameters.size()) != program.num_parameters()) {
    return InvalidArgument("PropagateShardings: " +
                           std::to_string(parameters.size()) +
                           " shardings for " +
                           std::to_string(program.num_parameters()) +
                           " parameters");
  }
  if (mesh.axis_names.size() != mesh.axis_sizes.size()) {
    return InvalidArgument("PropagateShardings: the mesh has " +
                           std::to_string(mesh.axis_names.size()) +
                           " axis names and " +
                           std::to_string(mesh.axis_sizes.size()) + " sizes");
  }
  for (int i = 0; i < program.num_parameters(); ++i) {
    BATON_RETURN_IF_ERROR(CheckParameter(program, mesh, parameters[i], i));
  }
  std::vector<std::optional<Constraint>> constraints(program.num_values());
  for (ValueId v = 0; v < program.num_values(); ++v) {
    const auto* call = program.instruction(v).attrs_if<CallAttrs>();
    if (call == nullptr || call->kind != CallKind::kShardingConstraint) continue;
    BATON_ASSIGN_OR_RETURN(constraints[v], ConstraintSharding(program, v, mesh));
  }
  return Propagator(program, mesh, std::move(constraints)).Run(parameters);
}

}  // namespace baton::compiler
