// AllocationSite: where an allocation came from (DESIGN R9, section 5.5).
//
// Every allocation records what it is (AllocationKind) and the C++ API
// function that made it. A front end may also name the call stack of its
// caller: it opens an AllocationSite on the calling thread around the call,
// and every allocation that thread makes meanwhile keeps that site. Sites
// nest (the innermost wins). A site carries two things:
//  - a StackId, an interned stack the front end can symbolize later (Python:
//    python/src/allocation_stacks.h). Every live allocation keeps it, so a
//    memory profile names the caller even when nothing was recording.
//  - while a profiler recording is active (TraceRecorder::enabled()), the
//    symbolized CallStack, which recorded events keep after the allocation is
//    gone.
//
// Ownership: a CallStack is immutable and shared (std::shared_ptr) by every
// allocation and event that names it. A StackId is a plain number; what it
// names is owned by the front end that made it.
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

// A front end's interned call stack; 0: none.
using StackId = uint32_t;

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
  // `stack` may be null (no recording active); `stack_id` may be 0.
  explicit AllocationSite(std::shared_ptr<const CallStack> stack,
                          StackId stack_id = 0);
  ~AllocationSite();
  AllocationSite(const AllocationSite&) = delete;
  AllocationSite& operator=(const AllocationSite&) = delete;

  // The innermost open site's stack on this thread, or nullptr.
  static std::shared_ptr<const CallStack> Current();
  // The innermost open site's StackId on this thread, or 0.
  static StackId CurrentStackId();

 private:
  std::shared_ptr<const CallStack> stack_;
  StackId stack_id_;
  AllocationSite* outer_;
};

}  // namespace baton
