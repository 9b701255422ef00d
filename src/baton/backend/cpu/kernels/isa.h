// Which instruction set the compute-bound CPU kernel loops run with.
//
// baton compiles for baseline x86-64 (SSE2). A few loops that are limited by
// arithmetic rather than memory (the fast_math.h transcendentals) are also
// compiled for AVX2 with __attribute__((target("avx2"))) and chosen at run
// time when the CPU has it. AVX2 only, never FMA: the AVX2 code performs the
// same IEEE operations as the baseline code (and the scalar interpreter), so
// all give bitwise-equal results; only the vector width changes.
#pragma once

#include <atomic>

namespace baton::cpu {

#if defined(__x86_64__) && defined(__GNUC__)
#define BATON_KERNELS_HAVE_AVX2 1
#else
#define BATON_KERNELS_HAVE_AVX2 0
#endif

namespace isa_detail {
inline std::atomic<bool>& Avx2Flag() {
  static std::atomic<bool> flag{[] {
#if BATON_KERNELS_HAVE_AVX2
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
#else
    return false;
#endif
  }()};
  return flag;
}
}  // namespace isa_detail

// True when kernels should take their AVX2 variants.
inline bool UseAvx2Kernels() {
  return isa_detail::Avx2Flag().load(std::memory_order_relaxed);
}

// Tests: turn the AVX2 variants off (or back on, where the CPU has AVX2).
// Returns the previous setting.
inline bool SetAvx2KernelsForTesting(bool on) {
  bool supported = false;
#if BATON_KERNELS_HAVE_AVX2
  __builtin_cpu_init();
  supported = __builtin_cpu_supports("avx2") != 0;
#endif
  return isa_detail::Avx2Flag().exchange(on && supported);
}

}  // namespace baton::cpu
