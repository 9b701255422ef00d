#include "baton/backend/launch_plan.h"

namespace baton {

LaunchPlan::Counters& LaunchPlan::Counters::operator+=(const Counters& o) {
  direct += o.direct;
  captures += o.captures;
  replays += o.replays;
  updates += o.updates;
  updated_nodes += o.updated_nodes;
  recaptures += o.recaptures;
  abandoned += o.abandoned;
  return *this;
}

bool LaunchPlan::SameTopology(const std::vector<LaunchNode>& a,
                              const std::vector<LaunchNode>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].SameCommand(b[i]) ||
        a[i].pointers.size() != b[i].pointers.size()) {
      return false;
    }
  }
  return true;
}

const char* LaunchPlan::ModeName(Mode mode) {
  switch (mode) {
    case Mode::kDirect: return "direct";
    case Mode::kCapture: return "capture";
    case Mode::kReplay: return "replay";
    case Mode::kUpdate: return "update";
    case Mode::kRecapture: return "recapture";
  }
  return "?";
}

LaunchPlan::Decision LaunchPlan::Direct() {
  ++counters_.direct;
  return Decision{Mode::kDirect, {}};
}

LaunchPlan::Decision LaunchPlan::Recapture(
    const std::vector<LaunchNode>& nodes) {
  if (++recaptures_in_a_row_ > options_.max_recaptures_in_a_row) {
    // Re-recording every call: launching directly is cheaper.
    abandoned_ = true;
    counters_.abandoned = 1;
    has_recording_ = false;
    recorded_.clear();
    return Direct();
  }
  recorded_ = nodes;
  ++counters_.recaptures;
  return Decision{Mode::kRecapture, {}};
}

LaunchPlan::Decision LaunchPlan::Next(const std::vector<LaunchNode>& nodes) {
  if (abandoned_) return Direct();
  if (static_cast<int>(nodes.size()) < options_.min_nodes) {
    // Not worth a graph; a recording of another topology is stale now.
    has_recording_ = false;
    recorded_.clear();
    same_topology_calls_ = 0;
    last_.clear();
    return Direct();
  }
  if (has_recording_) {
    if (!SameTopology(recorded_, nodes)) return Recapture(nodes);
    Decision d{Mode::kReplay, {}};
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (nodes[i].pointers == recorded_[i].pointers) continue;
      if (nodes[i].kind == LaunchNode::Kind::kGemm &&
          !options_.gemm_updatable) {
        return Recapture(nodes);
      }
      d.updated_nodes.push_back(static_cast<int>(i));
    }
    recaptures_in_a_row_ = 0;
    if (d.updated_nodes.empty()) {
      ++counters_.replays;
      return d;
    }
    for (int i : d.updated_nodes) {
      recorded_[static_cast<size_t>(i)].pointers =
          nodes[static_cast<size_t>(i)].pointers;
    }
    d.mode = Mode::kUpdate;
    ++counters_.updates;
    counters_.updated_nodes += static_cast<int64_t>(d.updated_nodes.size());
    return d;
  }
  // Warming up.
  if (same_topology_calls_ > 0 && SameTopology(last_, nodes)) {
    ++same_topology_calls_;
  } else {
    same_topology_calls_ = 1;
    last_ = nodes;
  }
  if (same_topology_calls_ < options_.capture_after) return Direct();
  recorded_ = nodes;
  has_recording_ = true;
  recaptures_in_a_row_ = 0;
  same_topology_calls_ = 0;
  last_.clear();
  ++counters_.captures;
  return Decision{Mode::kCapture, {}};
}

void LaunchPlan::Drop() {
  has_recording_ = false;
  recorded_.clear();
  same_topology_calls_ = 0;
  last_.clear();
  recaptures_in_a_row_ = 0;
}

}  // namespace baton
