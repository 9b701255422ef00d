// AllocationSite: where an allocation came from (DESIGN R9, section 5.5).
//
// Every allocation records what it is (AllocationKind) and the C++ API
// function that made it. While a profiler recording is active
// (TraceRecorder::enabled()), a front end may also name the call stack of its
// caller: it opens an AllocationSite on the calling thread around the call,
// and every allocation that thread makes meanwhile keeps that stack. Sites
// nest (the innermost wins) and cost nothing when no recording is active,
// because the front end then opens none.
//
// Ownership: a CallStack is immutable and shared (std::shared_ptr) by every
// allocation and event that names it.
// Thread-safety: the current site is per thread; everything else is
// immutable.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace baton {

enum class AllocationKind : uint8_t {
  kArray,      // the storage of an Array
  kConstant,   // a compiled program's captured constant
  kTemporary,  // a program's temporaries while it runs
  kStaging,    // the host staging pool of transfers
};

// "array", "constant", "temporary", "staging".
const char* allocation_kind_name(AllocationKind kind);

struct StackFrame {
  std::string function;
  std::string file;
  int line = 0;
};
using CallStack = std::vector<StackFrame>;  // innermost frame first

// What an allocation is, for out-of-memory messages and the profiler.
// Implicitly made from a string: an array's storage allocated by `api`.
struct AllocationLabel {
  AllocationLabel(std::string text, AllocationKind kind = AllocationKind::kArray,
                  const char* api = "baton::Allocate")
      : text(std::move(text)), kind(kind), api(api) {}
  AllocationLabel(const char* text)  // NOLINT: implicit, as std::string
      : AllocationLabel(std::string(text)) {}
  std::string text;     // "float32(8, 1024)", "staging chunk", ...
  AllocationKind kind;
  const char* api;      // a string literal: the C++ API function
};

class AllocationSite {
 public:
  explicit AllocationSite(std::shared_ptr<const CallStack> stack);
  ~AllocationSite();
  AllocationSite(const AllocationSite&) = delete;
  AllocationSite& operator=(const AllocationSite&) = delete;

  // The innermost open site's stack on this thread, or nullptr.
  static std::shared_ptr<const CallStack> Current();

 private:
  std::shared_ptr<const CallStack> stack_;
  AllocationSite* outer_;
};

}  // namespace baton
