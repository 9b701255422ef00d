// Arrays freed by Python's cycle collector (bt.array_garbage_collection_guard).
//
// An array should be freed when its last reference goes (R: deterministic
// release); one that sits in a reference cycle holds its memory until the
// cycle collector runs, whenever that is. To find such arrays the bindings
// wrap the Array type's tp_dealloc: while a thread is inside a collection
// (baton._gc_guard brackets each one with _gc_collection_begin/_end from
// gc.callbacks, only while the guard is on), each Array deallocated on that
// thread that still held storage is described ("float32(1024,) on cpu:0,
// 4096 bytes, allocated at train.py:12 (step)": the line from the
// always-on allocation stacks, allocation_stacks.h) in a per-thread list,
// which _gc_collection_end returns.
// Outside a collection the wrapper costs one thread-local load.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "allocation_stacks.h"
#include "baton/runtime/array.h"
#include "baton/runtime/device.h"
#include "baton/runtime/memory_space.h"
#include "gc_guard.h"
#include "module.h"

namespace baton::python {
namespace {

// nanobind's own deallocator of the Array type, which the wrapper calls.
destructor g_array_dealloc = nullptr;

struct Collection {
  bool active = false;
  std::vector<std::string> collected;
};
thread_local Collection t_collection;

// Where the storage was allocated: the user's innermost frame of its
// allocation's stack, or "" when none was captured.
std::string AllocatedAt(const TrackedBuffer& buffer) {
  const MemorySpace* space = buffer.memory_space();
  if (space == nullptr) return "";  // borrowed memory
  const auto address = reinterpret_cast<uint64_t>(buffer.data());
  for (const LiveAllocation& a : space->LiveAllocations()) {
    if (a.address != address) continue;
    std::shared_ptr<const CallStack> stack = a.stack;
    if (!stack) stack = AllocationStackTable::Global().Symbolize(a.stack_id);
    if (!stack || stack->empty()) return "";
    const StackFrame& f = stack->front();
    return ", allocated at " + f.file + ":" + std::to_string(f.line) + " (" +
           f.function + ")";
  }
  return "";
}

void ArrayDealloc(PyObject* self) {
  if (t_collection.active && nb::inst_ready(self)) {
    const ArrayImpl* a = nb::inst_ptr<ArrayImpl>(self);
    auto buffer = a->buffer();
    if (buffer.ok()) {  // deleted or donated arrays hold nothing
      t_collection.collected.push_back(
          a->Describe() + " on " + a->device()->ToString() + ", " +
          std::to_string(a->nbytes()) + " bytes" +
          AllocatedAt(*buffer.value()));
    }
  }
  g_array_dealloc(self);
}

}  // namespace

void WrapArrayDealloc(PyObject* array_type) {
  auto* tp = reinterpret_cast<PyTypeObject*>(array_type);
  g_array_dealloc = tp->tp_dealloc;
  tp->tp_dealloc = ArrayDealloc;
}

}  // namespace baton::python

void init_gc_guard(nb::module_& m) {
  using baton::python::t_collection;
  m.def(
      "_gc_collection_begin",
      [] {
        t_collection.active = true;
        t_collection.collected.clear();
      },
      "From now on, arrays deallocated on this thread are noted (call at "
      "the start of a cycle collection).");
  m.def(
      "_gc_collection_end",
      [] {
        t_collection.active = false;
        return std::move(t_collection.collected);
      },
      "Stops noting; the arrays deallocated on this thread since "
      "_gc_collection_begin that still held storage, described.");
}
