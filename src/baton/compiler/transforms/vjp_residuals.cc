// What the backward program reads from the forward one (vjp_internal.h):
// residuals, values re-emitted because they are cheap, and values inside a
// checkpoint recomputed from what its policy saved.
#include <algorithm>
#include <string>

#include "baton/compiler/transforms/vjp_internal.h"
#include "baton/core/error.h"

namespace baton::compiler::transforms::vjp_internal {

int VjpBuilder::Resolve(int n) const {
  while (nodes_[n].value_of >= 0) n = nodes_[n].value_of;
  return n;
}

// One memo entry per value: however many rules read a value, it is saved
// (or re-emitted, or recomputed) once, so residuals are de-duplicated.
// Depth-first without recursion, since a recomputed chain inside a
// checkpoint can be as long as the body: a value is decided (saved or
// not) when first reached, and emitted once its operands are.
Tracer VjpBuilder::GetFor(int n, int asker_region) {
  n = Resolve(n);
  if (memo_[n].source != Source::kNone) return memo_[n].value;
  struct Item {
    int node;
    int asker;
    bool expanded;
  };
  std::vector<Item> stack = {{n, asker_region, false}};
  while (!stack.empty()) {
    const Item it = stack.back();
    Memo& memo = memo_[it.node];
    if (memo.source != Source::kNone) {
      stack.pop_back();
      continue;
    }
    const Node& nd = nodes_[it.node];
    if (it.expanded) {
      memo.value = Recompute(it.node, /*barrier_saved_operands=*/!nd.remat);
      memo.source = nd.remat ? Source::kRemat : Source::kRecomputed;
      stack.pop_back();
      continue;
    }
    const Region* offload = nullptr;
    if (!nd.remat && !recompute_[it.node] &&
        (nd.kind == NodeKind::kParameter ||
         Saveable(it.node, it.asker, &offload))) {
      memo.value = SaveResidual(it.node, offload);
      memo.source = offload ? Source::kOffloaded : Source::kSaved;
      stack.pop_back();
      continue;
    }
    stack.back().expanded = true;
    if (nd.kind != NodeKind::kOp) continue;  // zero tangents read nothing
    for (size_t i = nd.operands.size(); i-- > 0;) {
      const int o = Resolve(nd.operands[i]);
      if (memo_[o].source == Source::kNone) {
        stack.push_back({o, nd.region, false});
      }
    }
  }
  return memo_[n].value;
}

// Re-emits node n's op in the backward program. For a recomputed checkpoint
// value whose operands are all saved residuals, one of them (the smallest)
// goes through a same-kind transfer first: without it the recomputation
// would be exactly the forward program's op on exactly the same values, and
// common-subexpression elimination of the joint program would merge the
// two, keeping the value alive across the passes -- the memory
// checkpointing is meant to save. Ops downstream of a recomputed value
// differ from the forward's already and need no barrier.
Tracer VjpBuilder::Recompute(int n, bool barrier_saved_operands) {
  const Node& nd = nodes_[n];
  if (nd.kind == NodeKind::kZeroTangent) return Zeros(bwd_, nd.type);
  if (nd.kind != NodeKind::kOp) {
    throw Error(Internal("vjp: cannot recompute a value of this kind"));
  }
  std::vector<Tracer> ins;
  ins.reserve(nd.operands.size());
  bool distinct = false;  // already differs from the forward's op
  int smallest = -1;      // the smallest saved operand
  for (size_t i = 0; i < nd.operands.size(); ++i) {
    ins.push_back(GetFor(nd.operands[i], nd.region));
    const Memo& m = memo_[Resolve(nd.operands[i])];
    distinct |=
        m.source == Source::kRecomputed || m.source == Source::kOffloaded;
    if (m.source == Source::kSaved &&
        (smallest < 0 ||
         ins[i].type().byte_size() < ins[smallest].type().byte_size())) {
      smallest = static_cast<int>(i);
    }
  }
  if (barrier_saved_operands && !distinct && smallest >= 0) {
    Memo& m = memo_[Resolve(nd.operands[smallest])];
    if (!m.barrier.valid()) {
      m.barrier = bwd_.Emit(TransferAttrs{m.value.memory_kind()}, {m.value});
    }
    ins[smallest] = m.barrier;
  }
  return bwd_.Emit(nd.attrs, ins);
}

// A value may be saved unless a checkpoint containing both the value and
// the rule that reads it has a policy that does not save it (a checkpoint
// that contains the value but not the reader only exposes it as one of its
// outputs, which the enclosing scope may save).
bool VjpBuilder::Saveable(int n, int asker_region,
                          const Region** offload) const {
  for (int r = nodes_[n].region; r >= 0; r = regions_[r].parent) {
    bool common = false;
    for (int a = asker_region; a >= 0 && !common; a = regions_[a].parent) {
      common = a == r;
    }
    if (!common) continue;
    if (!PolicyAllows(regions_[r], n)) return false;
    if (!*offload && regions_[r].policy.kind ==
                         CheckpointPolicy::Kind::kOffloadDotsWithNoBatchDims) {
      *offload = &regions_[r];
    }
  }
  return true;
}

bool VjpBuilder::PolicyAllows(const Region& region, int n) const {
  const Node& nd = nodes_[n];
  const auto* dot = nd.kind == NodeKind::kOp
                        ? std::get_if<DotGeneralAttrs>(&nd.attrs)
                        : nullptr;
  using Kind = CheckpointPolicy::Kind;
  switch (region.policy.kind) {
    case Kind::kNothingSaveable:
      return false;
    case Kind::kEverythingSaveable:
      return true;
    case Kind::kDotsSaveable:
      return dot != nullptr;
    case Kind::kDotsWithNoBatchDimsSaveable:
    case Kind::kOffloadDotsWithNoBatchDims:
      return dot != nullptr && dot->lhs_batch.empty();
    case Kind::kSaveOnlyTheseNames:
      for (const std::string& name : nd.names) {
        for (const std::string& allowed : region.policy.names) {
          if (name == allowed) return true;
        }
      }
      return false;
  }
  return false;
}

Tracer VjpBuilder::SaveResidual(int n, const Region* offload) {
  const Node& nd = nodes_[n];
  Tracer f = nd.fwd;
  if (offload && f.memory_kind() == offload->policy.offload_dst) {
    offload = nullptr;  // already where the policy would put it
  }
  if (offload) {
    const MemoryKind dst = offload->policy.offload_dst;
    f = nd.offloaded.valid() && nd.offloaded.memory_kind() == dst
            ? nd.offloaded
            : fwd_.Emit(TransferAttrs{dst}, {f});
  }
  residual_fwd_.push_back(f);
  residuals_.push_back(Residual{f.type(), Describe(n)});
  residual_node_.push_back(offload ? -1 : n);
  Tracer p = bwd_.AddParameter(f.type());
  if (offload) p = bwd_.Emit(TransferAttrs{offload->policy.offload_src}, {p});
  return p;
}

namespace {

// Elementwise ops (and broadcasts) cheap enough to recompute in the
// backward program, where they fuse into its elementwise steps. Not the
// transcendental ones (exp, log, tanh, pow, ...): those cost more than the
// memory their result takes between the passes is worth here.
bool IsCheapElementwise(const OpAttrs& attrs) {
  switch (KindOf(attrs)) {
    case OpKind::kConvert:
    case OpKind::kCompare:
    case OpKind::kSelect:
    case OpKind::kBroadcastInDim:
      return true;
    case OpKind::kUnary:
      switch (std::get<UnaryAttrs>(attrs).op) {
        case UnaryOp::kNeg:
        case UnaryOp::kAbs:
        case UnaryOp::kNot:
        case UnaryOp::kSign:
        case UnaryOp::kFloor:
        case UnaryOp::kCeil:
        case UnaryOp::kRound:
          return true;
        default:
          return false;
      }
    case OpKind::kBinary:
      switch (std::get<BinaryAttrs>(attrs).op) {
        case BinaryOp::kAdd:
        case BinaryOp::kSub:
        case BinaryOp::kMul:
        case BinaryOp::kDiv:
        case BinaryOp::kMax:
        case BinaryOp::kMin:
        case BinaryOp::kAnd:
        case BinaryOp::kOr:
        case BinaryOp::kXor:
        case BinaryOp::kShiftLeft:
        case BinaryOp::kShiftRightArithmetic:
        case BinaryOp::kShiftRightLogical:
          return true;
        default:
          return false;
      }
    default:
      return false;
  }
}

// At most this many recomputed ops on any chain from saved values.
constexpr int kMaxRecomputeDepth = 4;

}  // namespace

// A top-level residual (outside every checkpoint, with no checkpoint_name)
// computed by a cheap elementwise op from operands that are residuals
// themselves (or parameters, or constants, or recomputed in turn, up to
// kMaxRecomputeDepth ops deep) need not be saved: the operands stay alive
// for the backward pass anyway, so recomputing it keeps nothing larger
// alive in its place (no operand is larger than the value either). Nodes
// are visited in tape order, operands first.
std::vector<bool> VjpBuilder::RecomputableResiduals() const {
  std::vector<bool> out(nodes_.size(), false);
  std::vector<int> depth(nodes_.size(), 0);
  for (size_t n = 0; n < nodes_.size(); ++n) {
    const Node& nd = nodes_[n];
    if (!saved_[n] || nd.kind != NodeKind::kOp || nd.region >= 0 ||
        !nd.names.empty() || nd.value_of >= 0 ||
        !IsCheapElementwise(nd.attrs)) {
      continue;
    }
    bool ok = true;
    int d = 1;
    for (int operand : nd.operands) {
      const int o = Resolve(operand);
      const Node& od = nodes_[o];
      if (od.type.byte_size() > nd.type.byte_size()) ok = false;
      if (od.remat || (saved_[o] && !out[o])) continue;
      // A broadcast of an argument (a layer norm's scale, a bias) is
      // recomputed from the argument, which stays alive for the caller
      // anyway, instead of keeping the broadcast's full-size result.
      if (od.kind == NodeKind::kParameter &&
          std::holds_alternative<BroadcastInDimAttrs>(nd.attrs)) {
        continue;
      }
      if (out[o] && depth[o] < kMaxRecomputeDepth) {
        d = std::max(d, depth[o] + 1);
        continue;
      }
      ok = false;
    }
    if (!ok) continue;
    out[n] = true;
    depth[n] = d;
  }
  return out;
}

std::string VjpBuilder::Describe(int n) const {
  const Node& nd = nodes_[n];
  std::string what;
  if (nd.kind == NodeKind::kParameter) {
    what = "argument " + std::to_string(nd.param_index);
  } else if (const auto* call = std::get_if<CallAttrs>(&nd.attrs)) {
    what = "output of " + std::string(call_kind_name(call->kind));
  } else {
    what = "output of " + OpDisplayName(nd.attrs);
  }
  if (!nd.names.empty()) what += " named '" + nd.names.front() + "'";
  return what;
}

}  // namespace baton::compiler::transforms::vjp_internal
