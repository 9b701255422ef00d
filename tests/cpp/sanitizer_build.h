// Which sanitizer a test binary was built with, for the few tests that
// scale their work down under a sanitizer (or skip a deliberate race).
// ThreadSanitizer runs instrumented code 5-20x slower, AddressSanitizer
// 2-3x; a test whose large sizes exist for value coverage (checked in the
// release build) keeps the sizes that reach its parallel paths and drops
// repetitions that run the same code.
#pragma once

#if defined(__SANITIZE_THREAD__)
#define BATON_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define BATON_TSAN 1
#endif
#endif

#if defined(__SANITIZE_ADDRESS__)
#define BATON_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BATON_ASAN 1
#endif
#endif

namespace baton::testing {

#ifdef BATON_TSAN
inline constexpr bool kThreadSanitizer = true;
#else
inline constexpr bool kThreadSanitizer = false;
#endif

#ifdef BATON_ASAN
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif

}  // namespace baton::testing
