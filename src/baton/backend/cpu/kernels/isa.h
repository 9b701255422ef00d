// Which instruction set the compute-bound CPU kernel loops run with.
//
// baton compiles for baseline x86-64 (SSE2). A few loops that are limited by
// arithmetic rather than memory (the fast_math.h transcendentals) are also
// compiled for AVX2 (and some for AVX-512) with __attribute__((target(...)))
// and chosen at run time when the CPU has it. The wider variants perform the
// same IEEE operations as the baseline code (and the scalar interpreter), so
// all give bitwise-equal results; only the vector width changes.
//
// FMA: the AVX2 level is AVX2 + FMA (every AVX2 CPU from Intel and AMD has
// both), so the unary kernels compile with BATON_AVX2_TARGET, which enables
// FMA, and so does BATON_AVX512_TARGET. That fuses nothing by itself:
// -ffp-contract=off keeps GCC from forming an fma out of a * b + c, so only
// code that calls std::fma explicitly (fast_math.h's Tanh) gets one, a
// single rounding that the baseline computes bit for bit through libm's
// fmaf. Kernels that call no std::fma may keep target("avx2").
//
// The levels stack: baseline < AVX2 < AVX-512. A kernel takes the highest
// variant it has that is enabled, and AVX-512 counts as enabled only while
// AVX2 is, so SetAvx2KernelsForTesting(false) selects the baseline for every
// kernel (what the tests that compare against it mean).
#pragma once

#include <atomic>
#include <cstdint>

namespace baton::cpu {

#if defined(__x86_64__) && defined(__GNUC__)
#define BATON_KERNELS_HAVE_AVX2 1
#define BATON_KERNELS_HAVE_AVX512 1
#else
#define BATON_KERNELS_HAVE_AVX2 0
#define BATON_KERNELS_HAVE_AVX512 0
#endif

// The target attribute of the AVX2 variants that may call std::fma (above).
#define BATON_AVX2_TARGET "avx2,fma"

// The target attribute of the AVX-512 variants: F for 512-bit float and
// int32 lanes with mask registers, DQ/BW/VL so GCC may use the 8/16-bit and
// narrower-vector forms in tails and conversions, FMA for explicit std::fma
// (above; AVX-512 F implies it in hardware, not in GCC's target flags).
// Wider vectors are preferred explicitly: some -mtune settings default to
// 256-bit (GCC's option; clang, which builds the fuzzers, ignores the whole
// attribute if it is named).
#if defined(__clang__)
#define BATON_AVX512_TARGET "avx512f,avx512dq,avx512bw,avx512vl,fma"
#else
#define BATON_AVX512_TARGET \
  "avx512f,avx512dq,avx512bw,avx512vl,fma,prefer-vector-width=512"
#endif

namespace isa_detail {
// AVX2 and FMA: the AVX2 variants are compiled for both, so a CPU with AVX2
// alone (none is known from Intel or AMD, but a hypervisor may hide FMA)
// takes the baseline rather than an illegal instruction.
inline bool CpuHasAvx2() {
#if BATON_KERNELS_HAVE_AVX2
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") != 0 &&
         __builtin_cpu_supports("fma") != 0;
#else
  return false;
#endif
}
inline bool CpuHasAvx512() {
#if BATON_KERNELS_HAVE_AVX512
  __builtin_cpu_init();
  return __builtin_cpu_supports("fma") != 0 &&
         __builtin_cpu_supports("avx512f") != 0 &&
         __builtin_cpu_supports("avx512dq") != 0 &&
         __builtin_cpu_supports("avx512bw") != 0 &&
         __builtin_cpu_supports("avx512vl") != 0;
#else
  return false;
#endif
}
inline std::atomic<bool>& Avx2Flag() {
  static std::atomic<bool> flag{CpuHasAvx2()};
  return flag;
}
inline std::atomic<bool>& Avx512Flag() {
  static std::atomic<bool> flag{CpuHasAvx512()};
  return flag;
}
}  // namespace isa_detail

// True when kernels should take their AVX2 variants (the CPU has AVX2 and
// FMA).
inline bool UseAvx2Kernels() {
  return isa_detail::Avx2Flag().load(std::memory_order_relaxed);
}

// True when kernels that have an AVX-512 variant should take it.
inline bool UseAvx512Kernels() {
  return isa_detail::Avx512Flag().load(std::memory_order_relaxed) &&
         UseAvx2Kernels();
}

// Tests: turn the AVX2 variants off (or back on, where the CPU has AVX2 and
// FMA).
// Off also turns off AVX-512 (see above). Returns the previous setting.
inline bool SetAvx2KernelsForTesting(bool on) {
  return isa_detail::Avx2Flag().exchange(on && isa_detail::CpuHasAvx2());
}

// Tests: turn the AVX-512 variants off (or back on, where the CPU has
// AVX-512 F/DQ/BW/VL), so that the AVX2 ones can be compared. Returns the
// previous setting of this flag alone.
inline bool SetAvx512KernelsForTesting(bool on) {
  return isa_detail::Avx512Flag().exchange(on && isa_detail::CpuHasAvx512());
}

#if BATON_KERNELS_HAVE_AVX2
namespace isa_detail {
template <typename Body>
__attribute__((target(BATON_AVX2_TARGET))) void CallAvx2(const Body& body,
                                                        int64_t lo,
                                                        int64_t hi) {
  body(lo, hi);
}
template <typename Body>
__attribute__((target(BATON_AVX512_TARGET))) void CallAvx512(const Body& body,
                                                            int64_t lo,
                                                            int64_t hi) {
  body(lo, hi);
}
}  // namespace isa_detail
#endif

// Calls body(lo, hi) compiled for the widest instruction set enabled
// (AVX-512, AVX2, else the baseline). `body` must be a lambda marked
// __attribute__((always_inline)) (and what it calls inline functions), so
// that it is compiled into each variant rather than called out of line;
// like every variant here it must not rely on FMA contraction (isa.h top).
// For loops whose arithmetic, not memory, is the limit and that have no
// hand-written variant: the float16/bfloat16 kernels (half.h's conversions
// are a dozen vector instructions an element; 2-3x faster at 512 bits).
template <typename Body>
inline void CallWidestIsa(const Body& body, int64_t lo, int64_t hi) {
#if BATON_KERNELS_HAVE_AVX2
  if (UseAvx512Kernels()) return isa_detail::CallAvx512(body, lo, hi);
  if (UseAvx2Kernels()) return isa_detail::CallAvx2(body, lo, hi);
#endif
  body(lo, hi);
}

}  // namespace baton::cpu
