// Packing of buffers with known lifetimes into one arena: offsets such that
// two buffers alive at the same time never overlap (buffer_assignment.h
// places a program's temporaries with it).
//
// This is dynamic storage allocation, NP-hard in general. The packer tries a
// few greedy orders (largest first, most bytes x steps first, longest-lived
// first, earliest first) with
// first-fit and best-fit placement and keeps the smallest arena, stopping
// early at the lower bound (the most bytes alive at one time). One order
// alone leaves holes that cost a few percent of a training step's
// temporaries; which order wins depends on the program.
//
// Thread-safety: a pure function of its arguments.
#pragma once

#include <cstdint>
#include <vector>

namespace baton::compiler {

struct ArenaInterval {
  int64_t size = 0;  // bytes, already aligned as the caller wants
  int begin = 0;     // first step it is alive in
  int end = 0;       // last step it is alive in (inclusive)
};

struct ArenaPacking {
  std::vector<int64_t> offsets;  // per interval
  int64_t arena_bytes = 0;
};

ArenaPacking PackArena(const std::vector<ArenaInterval>& intervals);

}  // namespace baton::compiler
