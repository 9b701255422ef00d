// LaunchPlan: how repeated runs of one piece of a device command list reuse
// what an earlier run recorded -- on a CUDA device, a CUDA graph; on the
// simulated device, the recorded node list itself, executed by the host
// emulation -- decided call by call from the run's resolved nodes.
//
// A run of a segment of the command list (kernel launches, copies, GEMMs;
// no step that needs the host in between) is resolved, for one call, into
// LaunchNodes: which command each is and the device addresses it binds. The
// plan compares them with what it recorded and says what the next run does:
//  - kDirect: run the nodes as plain launches, recording nothing. While
//    warming up (fewer than Options::capture_after calls in a row with the
//    same topology), for segments of fewer than Options::min_nodes nodes
//    (a graph of one launch saves nothing), and for good once the plan was
//    abandoned (below).
//  - kCapture: the capture_after-th call in a row with the same topology:
//    record these nodes (capture a graph) and run them.
//  - kReplay: same topology, same addresses: run the recorded nodes as
//    they are.
//  - kUpdate: same topology, some kernel or copy node binds other
//    addresses (outputs that alternate between buffers, a donated buffer
//    that moved): those nodes' parameters are updated in the recording
//    (Decision::updated_nodes), then it runs.
//  - kRecapture: the topology changed -- a different number of nodes, a
//    node of another command (a copy whose source and destination became
//    the same storage is no node at all) -- or a GEMM node binds other
//    addresses (Options::gemm_updatable false: cuBLASLt's captured kernels
//    take their operands among parameters baton does not own, so only a
//    new capture changes them). The recording is replaced by these nodes.
//    After Options::max_recaptures_in_a_row recaptures with no replay or
//    update between them the plan is abandoned: re-recording every call
//    costs more than launching directly, so every later call is kDirect.
// Topology is the sequence of (kind, command) of the nodes: within one
// compiled command list a command fixes its kernel, its work-item count,
// its byte count and its GEMM shape. A program compiled again (another
// shape) is another command list with a plan of its own.
//
// The plan decides; its owner does what the decision says (captures,
// updates and launches the graph, or runs the recorded nodes) and calls
// Drop() when the device refused (a capture or update that failed), after
// which the plan warms up again from the next call.
//
// Ownership: a value; owns copies of the nodes it recorded.
// Thread-safety: none; its owner serialises calls (the GPU executable
// holds one mutex per segment).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace baton {

struct LaunchNode {
  enum class Kind : uint8_t { kKernel, kCopy, kGemm };
  Kind kind = Kind::kKernel;
  // Which command of the list it is (what it does besides its addresses).
  int command = -1;
  // Device addresses: a kernel's arguments in order; a copy's dst, src; a
  // GEMM's a, b, c.
  std::vector<void*> pointers;

  bool SameCommand(const LaunchNode& other) const {
    return kind == other.kind && command == other.command;
  }
};

class LaunchPlan {
 public:
  struct Options {
    int capture_after = 3;  // calls in a row with one topology
    int min_nodes = 2;      // smaller segments always run directly
    int max_recaptures_in_a_row = 3;
    bool gemm_updatable = false;  // see the class comment
  };
  enum class Mode { kDirect, kCapture, kReplay, kUpdate, kRecapture };
  struct Decision {
    Mode mode = Mode::kDirect;
    // kUpdate: the indices (into the nodes) whose addresses changed.
    std::vector<int> updated_nodes;
  };
  // Calls by decision since the plan was made.
  struct Counters {
    int64_t direct = 0;
    int64_t captures = 0;
    int64_t replays = 0;
    int64_t updates = 0;
    int64_t updated_nodes = 0;  // summed over updates
    int64_t recaptures = 0;
    int64_t abandoned = 0;  // 1 once the plan gave up graphing
    Counters& operator+=(const Counters& o);
  };

  LaunchPlan() = default;
  explicit LaunchPlan(Options options) : options_(options) {}

  // Decides how this call's run of `nodes` goes and records accordingly:
  // after kCapture/kRecapture recorded() is `nodes`, after kUpdate the
  // updated nodes' addresses are `nodes`' (the others were equal).
  Decision Next(const std::vector<LaunchNode>& nodes);
  // The device could not capture or update: forget the recording; the
  // next call warms up again.
  void Drop();

  // What a replay runs (empty while nothing is recorded).
  const std::vector<LaunchNode>& recorded() const { return recorded_; }
  bool has_recording() const { return has_recording_; }
  bool abandoned() const { return abandoned_; }
  const Counters& counters() const { return counters_; }
  const Options& options() const { return options_; }

  static bool SameTopology(const std::vector<LaunchNode>& a,
                           const std::vector<LaunchNode>& b);
  static const char* ModeName(Mode mode);

 private:
  Decision Direct();
  Decision Recapture(const std::vector<LaunchNode>& nodes);

  Options options_;
  std::vector<LaunchNode> recorded_;  // valid when has_recording_
  bool has_recording_ = false;
  bool abandoned_ = false;
  // Warm-up: the last call's nodes and how many calls in a row had their
  // topology.
  std::vector<LaunchNode> last_;
  int same_topology_calls_ = 0;
  int recaptures_in_a_row_ = 0;
  Counters counters_;
};

}  // namespace baton
