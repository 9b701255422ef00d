#include "baton/compiler/fused_tiles.h"

#include <algorithm>
#include <unordered_map>

namespace baton::compiler {

FusedTiles PlanFusedTiles(const Program& program, const Step& step,
                          const FusionTiling& tiling) {
  FusedTiles t;
  const size_t n = step.members.size();
  t.tile_elements =
      std::clamp<int64_t>(program.type(step.result).num_elements(), 1,
                          std::max<int64_t>(1, tiling.max_tile_elements));
  std::unordered_map<ValueId, int> member_of;
  for (size_t i = 0; i < n; ++i) member_of[step.members[i]] = static_cast<int>(i);

  // Operand sources and the last member reading each member's value.
  t.operand_member.resize(n);
  std::vector<size_t> last_use(n, 0);
  for (size_t i = 0; i < n; ++i) {
    for (ValueId o : program.instruction(step.members[i]).operands) {
      auto it = member_of.find(o);
      const int m = it == member_of.end() ? -1 : it->second;
      t.operand_member[i].push_back(m);
      if (m >= 0) last_use[m] = std::max(last_use[m], i);
    }
  }

  // Slots: a member's slot is free again once its last reader has run (not
  // during that reader, which writes while it reads).
  int64_t widest = 1;
  std::vector<int> free_slots;
  std::vector<std::vector<int>> released_before(n + 1);  // by member index
  t.slot.assign(n, -1);
  for (size_t i = 0; i < n; ++i) {
    for (int s : released_before[i]) free_slots.push_back(s);
    if (step.members[i] == step.result) continue;
    widest = std::max<int64_t>(widest, dtype_size(program.type(step.members[i]).dtype));
    if (free_slots.empty()) {
      t.slot[i] = t.num_slots++;
    } else {
      t.slot[i] = free_slots.back();
      free_slots.pop_back();
    }
    released_before[std::max(last_use[i], i) + 1].push_back(t.slot[i]);
  }
  t.slot_bytes = t.tile_elements * widest;
  return t;
}

}  // namespace baton::compiler
