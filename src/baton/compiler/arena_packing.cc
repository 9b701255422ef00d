#include "baton/compiler/arena_packing.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <utility>

namespace baton::compiler {
namespace {

// Beyond this many intervals only the first order is tried: each try is
// quadratic.
constexpr size_t kMaxIntervalsForSearch = 2000;

bool Overlap(const ArenaInterval& a, const ArenaInterval& b) {
  return a.begin <= b.end && b.begin <= a.end;
}

// Places the intervals in `order`, each at the lowest offset that fits
// (first fit) or in the smallest hole that fits (best fit).
ArenaPacking Place(const std::vector<ArenaInterval>& in,
                   const std::vector<size_t>& order, bool best_fit) {
  ArenaPacking out;
  out.offsets.assign(in.size(), 0);
  std::vector<size_t> placed;
  std::vector<std::pair<int64_t, int64_t>> busy;  // [begin, end) in bytes
  for (size_t i : order) {
    const ArenaInterval& c = in[i];
    busy.clear();
    for (size_t j : placed) {
      if (Overlap(c, in[j])) {
        busy.emplace_back(out.offsets[j], out.offsets[j] + in[j].size);
      }
    }
    std::sort(busy.begin(), busy.end());
    int64_t offset = -1;
    int64_t best_hole = 0;
    int64_t cursor = 0;  // end of the busy bytes seen so far
    for (const auto& [b, e] : busy) {
      if (b > cursor && b - cursor >= c.size) {
        const int64_t hole = b - cursor;
        if (offset < 0 || (best_fit && hole < best_hole)) {
          offset = cursor;
          best_hole = hole;
          if (!best_fit) break;
        }
      }
      cursor = std::max(cursor, e);
    }
    if (offset < 0) offset = cursor;  // on top of everything alive with it
    out.offsets[i] = offset;
    out.arena_bytes = std::max(out.arena_bytes, offset + c.size);
    placed.push_back(i);
  }
  return out;
}

// The most bytes alive at one step: no packing can do better.
int64_t LowerBound(const std::vector<ArenaInterval>& in) {
  std::map<int, int64_t> delta;  // step -> change in live bytes
  for (const ArenaInterval& c : in) {
    delta[c.begin] += c.size;
    delta[c.end + 1] -= c.size;
  }
  int64_t live = 0, most = 0;
  for (const auto& [step, d] : delta) most = std::max(most, live += d);
  return most;
}

}  // namespace

ArenaPacking PackArena(const std::vector<ArenaInterval>& in) {
  auto sorted = [&](auto less) {
    std::vector<size_t> order(in.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), less);
    return order;
  };
  auto length = [&](size_t i) {
    return static_cast<int64_t>(in[i].end - in[i].begin);
  };
  const std::vector<std::vector<size_t>> orders = {
      sorted([&](size_t a, size_t b) { return in[a].size > in[b].size; }),
      sorted([&](size_t a, size_t b) {  // bytes x steps: what it blocks
        return in[a].size * (length(a) + 1) > in[b].size * (length(b) + 1);
      }),
      sorted([&](size_t a, size_t b) {
        return length(a) != length(b) ? length(a) > length(b)
                                      : in[a].size > in[b].size;
      }),
      sorted([&](size_t a, size_t b) {
        return in[a].begin != in[b].begin ? in[a].begin < in[b].begin
                                          : in[a].size > in[b].size;
      }),
  };
  ArenaPacking best = Place(in, orders[0], /*best_fit=*/false);
  if (in.size() > kMaxIntervalsForSearch) return best;
  const int64_t bound = LowerBound(in);
  for (const auto& order : orders) {
    for (bool best_fit : {false, true}) {
      if (best.arena_bytes <= bound) return best;
      ArenaPacking p = Place(in, order, best_fit);
      if (p.arena_bytes < best.arena_bytes) best = std::move(p);
    }
  }
  return best;
}

}  // namespace baton::compiler
