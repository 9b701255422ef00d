// Which sanitizer a test binary was built with, for the few tests that
// scale their work down under ThreadSanitizer (or skip a deliberate race).
// ThreadSanitizer runs instrumented code 5-20x slower; a test whose large
// sizes exist for value coverage (checked in the release and ASan builds)
// keeps the sizes that reach its parallel paths and drops the repetitions.
#pragma once

#if defined(__SANITIZE_THREAD__)
#define BATON_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define BATON_TSAN 1
#endif
#endif

namespace baton::testing {

#ifdef BATON_TSAN
inline constexpr bool kThreadSanitizer = true;
#else
inline constexpr bool kThreadSanitizer = false;
#endif

}  // namespace baton::testing
