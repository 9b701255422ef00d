// Python call stacks for allocations (DESIGN 5.5: provenance).
//
// A binding that may allocate opens an AllocationStackScope (with the GIL
// held) before calling the runtime. The scope captures the calling Python
// stack the way JAX's tracebacks do -- only (code object, instruction offset)
// pairs, no strings -- interns it in the AllocationStackTable, and opens a
// baton::AllocationSite with its StackId, so every allocation made until the
// scope closes (on this thread, GIL released or not) names that stack. A
// stack seen before costs a walk of the frames and one hash lookup, and
// allocates nothing; file, function and line (PyCode_Addr2Line) are looked up
// only when a profile is written. So a memory profile names the Python line
// of every live allocation without a recording having been started.
//
// While a profiler recording is active the site also carries the symbolized
// stack, which the recorded events (memory history, traces, scopes) keep
// after the allocation is gone.
//
// bt.config.update("capture_allocation_stacks", False) (or
// BATON_CAPTURE_ALLOCATION_STACKS=0 at import) turns the always-on capture
// off; stacks are then captured only while a recording is active.
//
// Frames inside the baton package are left out when a stack is symbolized
// (the user's code is what the stack is for); a stack of only baton frames
// keeps its innermost one.
#pragma once

#include <Python.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "baton/runtime/allocation_site.h"

namespace baton::python {

// One Python frame as captured: its code object and the offset in bytes of
// its current instruction (PyFrame_GetLasti; -1 before the first one).
struct RawFrame {
  PyCodeObject* code;
  int lasti;
};

// The process's interned Python stacks: a StackId (from 1) names one
// sequence of RawFrames, innermost first.
//
// Ownership: one per process (Global()), never destroyed -- allocations
// that name its ids may outlive the module's teardown. It holds one strong
// reference to every code object its stacks name (so a code pointer in the
// table is never reused by another object while the table holds it), and
// the symbolized CallStacks it hands out, shared with whoever keeps them.
// Memory: bounded, and not per allocation (allocations with the same stack
// share one entry). At most kMaxFrames frames in all (16 bytes each, 16 MiB),
// so at most as many stacks, each an entry and a hash-map node (~80 bytes),
// plus the strings of the stacks a profile has symbolized. The code objects
// it names stay alive with it (code compiled anew in a loop, by exec, adds
// stacks until the table is full). Once full, a new stack gets id 0 (its
// allocations then name baton's API function); interned ones keep their ids.
// Thread-safety: the GIL protects all of it. Intern runs in the bindings
// (AllocationStackScope) and Symbolize in the profiler's bindings, both with
// the GIL held, whichever thread they run on; the runtime only copies ids.
class AllocationStackTable {
 public:
  static constexpr size_t kMaxFrames = size_t{1} << 20;

  static AllocationStackTable& Global();

  // The id of the stack frames[0..count), interned if new (taking references
  // to its code objects); 0 if the table is full. `frames` is borrowed.
  StackId Intern(const RawFrame* frames, int count);

  // The user's frames of stack `id` (see the file comment), symbolized on
  // first use and then shared; nullptr for 0 or an unknown id.
  std::shared_ptr<const CallStack> Symbolize(StackId id);

  size_t stack_count() const { return entries_.size(); }
  size_t frame_count() const { return frames_.size(); }

  // Tests: fill the table at `max_frames` instead of kMaxFrames.
  void set_max_frames(size_t max_frames) { max_frames_ = max_frames; }

 private:
  struct Entry {
    uint64_t hash;
    uint32_t begin;  // into frames_
    uint32_t count;
    StackId next_same_hash;                       // 0: none
    std::shared_ptr<const CallStack> symbolized;  // made by Symbolize
  };

  size_t max_frames_ = kMaxFrames;
  std::vector<RawFrame> frames_;  // every stack's, back to back
  std::vector<Entry> entries_;    // entries_[id - 1]
  std::unordered_map<uint64_t, StackId> first_with_hash_;
};

// The user's frames of frames[0..count), looked up now. GIL held.
CallStack SymbolizeFrames(const RawFrame* frames, int count);

// Frames from files under `prefix` (the baton package) are baton's.
void SetInternalPrefix(std::string prefix);

// bt.config's capture_allocation_stacks: capture every allocating call's
// stack (true, the default) or only while a recording is active.
void SetCaptureAllocationStacks(bool enabled);
bool CaptureAllocationStacks();

class AllocationStackScope {
 public:
  AllocationStackScope();
  AllocationStackScope(const AllocationStackScope&) = delete;
  AllocationStackScope& operator=(const AllocationStackScope&) = delete;

 private:
  std::optional<AllocationSite> site_;
};

}  // namespace baton::python
