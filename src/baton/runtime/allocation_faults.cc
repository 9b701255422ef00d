#include "baton/runtime/allocation_faults.h"

#include <atomic>

namespace baton {
namespace {

// Relaxed is enough: the counter only needs to be atomic, and a test arms
// the hook before (and stops it after) the work it observes, with the usual
// happens-before of starting and joining that work.
std::atomic<bool> g_armed{false};
std::atomic<int64_t> g_count{0};
std::atomic<int64_t> g_fail_at{0};  // 0: count only
std::atomic<int64_t> g_injected{0};

void Arm(int64_t fail_at) {
  g_armed.store(false, std::memory_order_relaxed);
  g_count.store(0, std::memory_order_relaxed);
  g_injected.store(0, std::memory_order_relaxed);
  g_fail_at.store(fail_at, std::memory_order_relaxed);
  g_armed.store(true, std::memory_order_release);
}

}  // namespace

void AllocationFaults::StartCounting() { Arm(0); }

void AllocationFaults::FailNth(int64_t n) { Arm(n < 1 ? 1 : n); }

int64_t AllocationFaults::Stop() {
  g_armed.store(false, std::memory_order_release);
  return g_count.load(std::memory_order_relaxed);
}

int64_t AllocationFaults::count() {
  return g_count.load(std::memory_order_relaxed);
}

int64_t AllocationFaults::injected() {
  return g_injected.load(std::memory_order_relaxed);
}

bool AllocationFaults::ShouldFailThisAllocation() {
  if (!g_armed.load(std::memory_order_relaxed)) return false;
  const int64_t n = g_count.fetch_add(1, std::memory_order_relaxed) + 1;
  if (n != g_fail_at.load(std::memory_order_relaxed)) return false;
  g_injected.fetch_add(1, std::memory_order_relaxed);
  return true;
}

}  // namespace baton
