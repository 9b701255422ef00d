// The machinery behind transforms::Vjp (vjp.h), shared by its source files:
// vjp.cc (driver: recording the forward program, the reverse sweep, final
// assembly), vjp_residuals.cc (what the backward program reads from the
// forward one: residuals, rematerialized constants, checkpoint recompute)
// and the per-op cotangent rules (vjp_rules.cc, vjp_indexing_rules.cc,
// vjp_linalg_rules.cc).
// Not part of the API.
//
// How it works. The input program is recorded, instruction by instruction,
// into a tape of Nodes while the forward program is emitted; calls are
// flattened on the way (checkpoint bodies and custom rules are recorded in
// place, checkpoint bodies inside a Region that carries their policy), so
// one reverse sweep over the tape handles everything. Control-flow groups
// are recorded as one node per result; their rule (control_flow_vjp.cc)
// differentiates the regions with Vjp itself and runs the whole group's
// backward op when the sweep reaches it. Each node knows its
// value in the forward program; the backward program reads such a value only
// through Get(), which decides, per value, whether it is a residual (a
// parameter of the backward program, returned by the forward one), a cheap
// value re-emitted in the backward program (constants and what is computed
// from them alone), or, inside a checkpoint whose policy does not save it,
// recomputed in the backward program from saved values behind a same-kind
// transfer (an optimization barrier CSE cannot see through).
//
// Ownership: a VjpBuilder owns the two programs under construction (two
// TraceContexts) and the tape; it is used once, by one thread.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "baton/compiler/ir.h"
#include "baton/compiler/tracer.h"
#include "baton/compiler/transforms/vjp.h"

namespace baton::compiler::transforms::vjp_internal {

// A checkpointed body being recorded (one per call group instance).
struct Region {
  int parent = -1;  // enclosing region, -1 for the top level
  CheckpointPolicy policy;
};

enum class NodeKind : uint8_t {
  kParameter,  // parameter `param_index` of the input program
  kOp,         // an instruction (attrs, operand nodes)
  // The value of node value_of, never differentiated: how a custom rule
  // sees the primal operands of its call (the rule itself says how
  // cotangents flow, so the rule's own ops must not add to them).
  kView,
  // custom_jvp: the tangent fed to the user's rule for operand operands[0]
  // (zeros in the forward program); its cotangent is the operand's.
  kZeroTangent,
  // custom_jvp: output of the call; value of the rule's primal output
  // (value_of), cotangent goes to the rule's tangent output (operands[0]).
  kCustomJvpOut,
  // custom_vjp: output `out_index` of group `group`; value of the forward
  // rule's output (value_of).
  kCustomVjpOut,
  // A result of a control-flow op (or a residual it stacks): output
  // `out_index` of control-flow group `group` (-1: never differentiated).
  // Always top-level (region -1), so it is saved, never recomputed.
  kControlFlowOut,
};

struct Node {
  NodeKind kind = NodeKind::kOp;
  ValueType type;
  Tracer fwd;  // this node's value in the forward program
  OpAttrs attrs;
  std::vector<int> operands;  // node ids (see NodeKind)
  int value_of = -1;          // a node whose value this one is, or -1
  int param_index = -1;
  int region = -1;
  int group = -1;
  int out_index = 0;
  bool active = false;  // depends differentiably on a wrt parameter
  // A value that depends on no parameter and is cheap to compute again
  // (constants, iota and elementwise/layout ops of them): re-emitted in the
  // backward program instead of being saved.
  bool remat = false;
  std::vector<std::string> names;  // checkpoint_name()s of this value
  // For a value an offloading checkpoint policy may save: its transfer to
  // the policy's offload_dst, emitted right after the value so the device
  // copy can be freed early (dead code if the value is not saved).
  Tracer offloaded;
};

struct CustomVjpGroup {
  std::shared_ptr<const Program> bwd;
  std::vector<int> operands;   // the call's operand nodes
  std::vector<int> residuals;  // forward-rule outputs after the primal ones
  std::vector<int> outputs;    // the kCustomVjpOut nodes, in output order
  bool done = false;
};

// A differentiated while, scan or case (control_flow_vjp.cc): its backward
// op, decided when it is recorded, and where that op's operands come from
// and its results go.
struct ControlFlowGroup {
  // Refused (a while loop): the message of the error, once reached.
  std::string refused;
  OpAttrs backward;  // a scan or case, output_index 0
  struct Operand {
    enum class Kind : uint8_t {
      kForward,    // Get(node)
      kCotangent,  // node's cotangent (zeros if it has none)
      kZeros,      // zeros of node's type
    };
    Kind kind = Kind::kForward;
    int node = -1;
  };
  std::vector<Operand> operands;
  std::vector<int> targets;  // per backward result: the node it is the
                             // cotangent contribution of (-1: none)
  bool done = false;
};

class VjpBuilder {
 public:
  VjpBuilder() = default;
  VjpBuilder(const VjpBuilder&) = delete;
  VjpBuilder& operator=(const VjpBuilder&) = delete;

  // Throws baton::Error on failure (Vjp turns it back into a Status).
  // `recompute`, indexed by node (the tape is the same for every run on one
  // program), marks saved values to recompute in the backward program
  // instead (from a previous run's RecomputableResiduals); empty: none.
  VjpPrograms Run(const Program& program, const std::vector<bool>& wrt,
                  std::vector<bool> recompute = {});
  // After Run: the residuals it saved that are cheap elementwise functions
  // (vjp_residuals.cc) of other residuals, parameters and constants, so a
  // second run with them marked saves fewer values. Indexed by node.
  std::vector<bool> RecomputableResiduals() const;

  // ---- used by the rules (vjp_rules.cc, vjp_indexing_rules.cc) ----
  TraceContext& bwd() { return bwd_; }
  const Node& node(int n) const { return nodes_[n]; }
  // Node n's forward value, as the backward program sees it.
  Tracer Get(int n);
  // Adds a contribution to node n's cotangent (ignored unless n is active).
  void AddCotangent(int n, Tracer contribution);

 private:
  // Recording (vjp.cc).
  std::vector<int> Record(const Program& src, const std::vector<int>& args,
                          int region);
  std::vector<int> RecordCall(const CallAttrs& call,
                              const std::vector<int>& operands, int region);
  int AddNode(Node node);
  int AddOpNode(const OpAttrs& attrs, const std::vector<int>& operands,
                int region);
  int AddView(int target, int region);
  // A control-flow group (control_flow_vjp.cc): its result nodes.
  std::vector<int> RecordControlFlow(const OpAttrs& attrs,
                                     const std::vector<int>& operands);

  // The reverse sweep (vjp.cc) and the rules (vjp_rules.cc).
  void Backprop(int n, const Tracer& ct);
  void BackpropCustomVjp(CustomVjpGroup& group);
  void BackpropControlFlow(ControlFlowGroup& group);  // control_flow_vjp.cc
  void ApplyRule(int n, const Tracer& ct);
  void ApplyElementwiseRule(int n, const Tracer& ct);
  void ApplyLayoutRule(int n, const Tracer& ct);
  void ApplyIndexingRule(int n, const Tracer& ct);  // vjp_indexing_rules.cc
  void ApplyReduceRule(int n, const Tracer& ct);
  void ApplyDotRule(int n, const Tracer& ct);
  void ApplyLinalgRule(int n, const Tracer& ct);  // vjp_linalg_rules.cc
  void ApplyFftRule(int n, const Tracer& ct);     // vjp_fft_rules.cc

  // Residuals and recompute (vjp_residuals.cc).
  enum class Source : uint8_t {
    kNone,
    kSaved,
    kOffloaded,
    kRemat,
    kRecomputed
  };
  struct Memo {
    Tracer value;
    Source source = Source::kNone;
    Tracer barrier;  // the value behind a same-kind transfer, made once
  };
  int Resolve(int n) const;
  Tracer GetFor(int n, int asker_region);
  Tracer Recompute(int n, bool barrier_saved_operands);
  bool Saveable(int n, int asker_region, const Region** offload) const;
  bool PolicyAllows(const Region& region, int n) const;
  Tracer SaveResidual(int n, const Region* offload);
  std::string Describe(int n) const;

  TraceContext fwd_;
  TraceContext bwd_;
  std::vector<Node> nodes_;
  std::vector<Region> regions_;
  std::vector<CustomVjpGroup> groups_;
  std::vector<ControlFlowGroup> cf_groups_;
  std::vector<Memo> memo_;            // per node, filled by Get
  std::vector<Tracer> ct_;            // per node: its cotangent so far
  int current_region_ = -1;           // region of the node whose rule runs
  int num_ct_params_ = 0;             // backward parameters made for cotangents
  std::vector<Tracer> residual_fwd_;  // forward values of the residuals
  std::vector<Residual> residuals_;
  std::vector<int> residual_node_;  // per residual: its node, -1 offloaded
  std::vector<bool> saved_;         // per node: a residual the result reads
  std::vector<bool> recompute_;     // per node: saved in a previous run
};

// Throws baton::Error(Unimplemented(...)) naming the op.
[[noreturn]] void NoRule(const OpAttrs& attrs, const std::string& why = "");

// Helpers for rules, all emitting into t's context.
Tracer Zeros(TraceContext& ctx, const ValueType& type);
Tracer Full(TraceContext& ctx, const Shape& shape, DType dtype, double value);

}  // namespace baton::compiler::transforms::vjp_internal
