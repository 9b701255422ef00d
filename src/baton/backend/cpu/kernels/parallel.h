// How the CPU kernels split one call across ThreadPool::Global().
//
// Ranges of equal size, a few per pool thread (ThreadPool::kChunksPerThread),
// claimed by whichever thread is free: a thread slowed by other processes
// leaves its share to the others. Small calls stay on the calling thread,
// because waking the pool (~10 µs) costs more than it saves.
#pragma once

#include <algorithm>
#include <cstdint>

#include "baton/runtime/thread_pool.h"

namespace baton::cpu {

// Items per range below which splitting does not pay, by per-item cost.
// A copy or an add moves ~8-12 bytes an item; a transcendental costs ~5 ns.
inline constexpr int64_t kCheapGrain = 32 * 1024;
inline constexpr int64_t kExpensiveGrain = 4 * 1024;
// fast_math.h's float32 exp/log/tanh/logistic cost ~0.6 ns an item
// (AVX-512), so an 8K range is ~5 µs. Before the pool's workers polled
// before sleeping (thread_pool.cc), a helper often started tens of µs late
// and a 2^16 call split in two took ~70 µs against ~42 µs unsplit, so the
// grain was 64K; with polling, 8K ranges measured faster from 2^14 up
// (tanh sweep: 2^14 1.5 -> 1.04-1.31x JAX's time, 2^16 0.87 -> 0.57-0.62x).
// Since such calls run on the caller (cpu_executable.h), a 2^14 tanh (~13
// us on one AVX2 core) is faster unsplit: split, its first call after a
// pause waits for a sleeping helper. On the 2-vCPU AMD VM, samples of 20
// calls after a 1 ms pause, interleaved with JAX's: median 38.7 -> 25.5 us
// (JAX 37-38), back to back 16.5 -> 14.3 us; so ranges are 16K.
inline constexpr int64_t kTranscendentalGrain = 16 * 1024;

// Calls fn(begin, end) on disjoint ranges covering [0, n): up to
// ThreadPool::kChunksPerThread ranges per pool thread, each at least `grain`
// items and, except the last, a multiple of `align` items (so threads do not write to the same cache line).
// Runs fn(0, n) on the caller when n < 2 * grain. Returns when all are done.
// `fn` must be safe to call concurrently on disjoint ranges.
template <typename F>
void ParallelRanges(int64_t n, int64_t grain, F&& fn, int64_t align = 16) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  ThreadPool& pool = ThreadPool::Global();
  int64_t parts = std::min<int64_t>(
      ThreadPool::kChunksPerThread * pool.num_threads(), n / grain);
  if (parts <= 1) {
    fn(int64_t{0}, n);
    return;
  }
  align = std::max<int64_t>(align, 1);
  int64_t per = (n + parts - 1) / parts;
  per = (per + align - 1) / align * align;
  parts = (n + per - 1) / per;
  pool.ParallelFor(parts, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      fn(p * per, std::min(n, (p + 1) * per));
    }
  });
}

}  // namespace baton::cpu
