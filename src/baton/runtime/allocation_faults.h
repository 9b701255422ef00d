// AllocationFaults: a test hook that makes a chosen allocation fail, so tests
// can drive every out-of-memory path of baton and check that it fails
// cleanly (typed error, inputs intact, nothing leaked; issue 14).
//
// It sees every MemorySpace::Allocate call -- every memory kind of every
// device, process-wide -- which is where every buffer baton manages is
// allocated (arrays, outputs, temporary arenas, staging chunks, captured
// constants). Two things a test can ask:
//
//   AllocationFaults::StartCounting();        // count from 0, fail nothing
//   RunScenario();
//   int64_t k = AllocationFaults::Stop();     // K allocation sites passed
//
//   AllocationFaults::FailNth(n);             // the n-th Allocate from now
//   Status s = RunScenario();                 // ... fails, others succeed
//   bool fired = AllocationFaults::Stop() >= n;
//
// The failing Allocate returns the same ResourceExhausted status a real
// out-of-memory returns (its message says the test hook injected it).
// ScopedAllocationFaults disarms on scope exit so a failing test cannot
// leave the hook armed for the next one.
//
// Cost when disarmed: one relaxed atomic load per Allocate.
// Ownership: process-wide state; no objects to own.
// Thread-safety: all functions are thread-safe (atomics). The n-th
// allocation is the n-th in the order the counter is incremented; with
// several threads allocating at once that order is whatever the race gives,
// so scenarios that need a reproducible site allocate from one thread.
#pragma once

#include <cstdint>

namespace baton {

class AllocationFaults {
 public:
  // Counts allocations from zero without failing any.
  static void StartCounting();
  // Counts allocations from zero; the n-th (n >= 1) fails. Any earlier
  // arming is replaced.
  static void FailNth(int64_t n);
  // Disarms; returns the allocations counted since the last
  // StartCounting / FailNth (the failed one included).
  static int64_t Stop();
  // Allocations counted since the last StartCounting / FailNth (kept after
  // Stop).
  static int64_t count();
  // Failures injected since the last StartCounting / FailNth (0 or 1).
  static int64_t injected();

  // Called by MemorySpace::Allocate for every allocation: true when this one
  // must fail.
  static bool ShouldFailThisAllocation();
};

// Disarms the hook when it goes out of scope.
class ScopedAllocationFaults {
 public:
  ScopedAllocationFaults() = default;
  ~ScopedAllocationFaults() { AllocationFaults::Stop(); }
  ScopedAllocationFaults(const ScopedAllocationFaults&) = delete;
  ScopedAllocationFaults& operator=(const ScopedAllocationFaults&) = delete;
};

}  // namespace baton
