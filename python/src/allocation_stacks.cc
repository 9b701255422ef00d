#include "allocation_stacks.h"

// CPython 3.11's frames, read in place: the public API (PyFrame_GetBack)
// would make a frame object for every frame it passes that has none yet.
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
#define BATON_READ_INTERPRETER_FRAMES 1
#define Py_BUILD_CORE 1
#include <internal/pycore_frame.h>
#undef Py_BUILD_CORE
#elif PY_VERSION_HEX < 0x030B0000
#include <frameobject.h>  // PyFrameObject's fields (f_lasti)
#endif

#include <algorithm>
#include <atomic>
#include <utility>

#include "baton/runtime/trace_recorder.h"

namespace baton::python {
namespace {

// The innermost frames kept of a deeper stack.
constexpr int kMaxStackDepth = 64;

std::atomic<bool> capture_enabled{true};

// Files under this prefix (the baton package) are not the user's frames.
// Set once at import, read under the GIL.
std::string& InternalPrefix() {
  static std::string* prefix = new std::string();
  return *prefix;
}

std::string Utf8(PyObject* s) {
  if (s == nullptr || !PyUnicode_Check(s)) return "";
  Py_ssize_t n = 0;
  const char* c = PyUnicode_AsUTF8AndSize(s, &n);
  if (c == nullptr) {
    PyErr_Clear();
    return "";
  }
  return std::string(c, static_cast<size_t>(n));
}

uint64_t HashFrames(const RawFrame* frames, int count) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(count);
  for (int i = 0; i < count; ++i) {
    const uint64_t k =
        static_cast<uint64_t>(reinterpret_cast<uintptr_t>(frames[i].code)) ^
        (static_cast<uint64_t>(static_cast<uint32_t>(frames[i].lasti)) << 40);
    h = (h ^ k) * 0xFF51AFD7ED558CCDull;
    h ^= h >> 32;
  }
  return h;
}

bool SameFrame(const RawFrame& a, const RawFrame& b) {
  return a.code == b.code && a.lasti == b.lasti;
}

#if !BATON_READ_INTERPRETER_FRAMES
// The offset in bytes of `frame`'s current instruction, as PyFrame_GetLasti
// (3.11+) gives it; -1 before the first one.
int FrameLasti(PyFrameObject* frame) {
#if PY_VERSION_HEX >= 0x030B0000
  return PyFrame_GetLasti(frame);
#elif PY_VERSION_HEX >= 0x030A0000
  return frame->f_lasti < 0 ? -1 : frame->f_lasti * 2;  // in code units
#else
  return frame->f_lasti;  // in bytes
#endif
}
#endif

// Fills `out` with the calling thread's innermost Python frames (at most
// `max`); returns how many. The code pointers are borrowed: the executing
// frames keep them alive until the binding returns.
int WalkFrames(RawFrame* out, int max) {
  int n = 0;
#if BATON_READ_INTERPRETER_FRAMES
  // What PyEval_GetFrame and PyFrame_GetBack walk, less the frame objects.
  _PyInterpreterFrame* frame = PyThreadState_GET()->cframe->current_frame;
  for (; frame != nullptr && n < max; frame = frame->previous) {
    if (_PyFrame_IsIncomplete(frame)) continue;
    const int lasti = _PyInterpreterFrame_LASTI(frame);
    out[n++] = RawFrame{
        frame->f_code,
        lasti < 0 ? -1 : lasti * static_cast<int>(sizeof(_Py_CODEUNIT))};
  }
#else
  PyFrameObject* frame = PyEval_GetFrame();  // borrowed
  Py_XINCREF(frame);
  while (frame != nullptr && n < max) {
    PyCodeObject* code = PyFrame_GetCode(frame);  // new reference
    out[n++] = RawFrame{code, FrameLasti(frame)};
    Py_DECREF(code);                               // the frame holds another
    PyFrameObject* back = PyFrame_GetBack(frame);  // new reference
    Py_DECREF(frame);
    frame = back;
  }
  Py_XDECREF(frame);
#endif
  return n;
}

}  // namespace

AllocationStackTable& AllocationStackTable::Global() {
  static AllocationStackTable* table = new AllocationStackTable();
  return *table;
}

StackId AllocationStackTable::Intern(const RawFrame* frames, int count) {
  if (count <= 0) return 0;
  const uint64_t hash = HashFrames(frames, count);
  auto it = first_with_hash_.find(hash);
  const StackId head = it == first_with_hash_.end() ? 0 : it->second;
  for (StackId id = head; id != 0; id = entries_[id - 1].next_same_hash) {
    const Entry& e = entries_[id - 1];
    if (e.count == static_cast<uint32_t>(count) &&
        std::equal(frames, frames + count, frames_.data() + e.begin,
                   SameFrame)) {
      return id;
    }
  }
  if (frames_.size() + static_cast<size_t>(count) > max_frames_) return 0;
  const uint32_t begin = static_cast<uint32_t>(frames_.size());
  for (int i = 0; i < count; ++i) {
    Py_INCREF(reinterpret_cast<PyObject*>(frames[i].code));
    frames_.push_back(frames[i]);
  }
  entries_.push_back(
      Entry{hash, begin, static_cast<uint32_t>(count), head, nullptr});
  const StackId id = static_cast<StackId>(entries_.size());
  first_with_hash_[hash] = id;
  return id;
}

std::shared_ptr<const CallStack> AllocationStackTable::Symbolize(StackId id) {
  if (id == 0 || id > entries_.size()) return nullptr;
  Entry& e = entries_[id - 1];
  if (!e.symbolized) {
    e.symbolized = std::make_shared<const CallStack>(
        SymbolizeFrames(frames_.data() + e.begin, static_cast<int>(e.count)));
  }
  return e.symbolized;
}

CallStack SymbolizeFrames(const RawFrame* frames, int count) {
  CallStack stack;
  const std::string& prefix = InternalPrefix();
  StackFrame innermost_internal;
  bool have_internal = false;
  for (int i = 0; i < count; ++i) {
    PyCodeObject* code = frames[i].code;
    StackFrame f;
    f.file = Utf8(code->co_filename);
    const bool internal =
        !prefix.empty() && f.file.compare(0, prefix.size(), prefix) == 0;
    if (internal && (have_internal || !stack.empty())) continue;
#if PY_VERSION_HEX >= 0x030B0000
    f.function = Utf8(code->co_qualname);
#else
    f.function = Utf8(code->co_name);
#endif
    f.line = PyCode_Addr2Line(code, frames[i].lasti);
    if (!internal) {
      stack.push_back(std::move(f));
    } else {
      innermost_internal = std::move(f);
      have_internal = true;
    }
  }
  if (stack.empty() && have_internal) {
    stack.push_back(std::move(innermost_internal));
  }
  return stack;
}

void SetInternalPrefix(std::string prefix) {
  InternalPrefix() = std::move(prefix);
}

void SetCaptureAllocationStacks(bool enabled) {
  capture_enabled.store(enabled, std::memory_order_relaxed);
}

bool CaptureAllocationStacks() {
  return capture_enabled.load(std::memory_order_relaxed);
}

AllocationStackScope::AllocationStackScope() {
  const bool capture = CaptureAllocationStacks();
  const bool recording = TraceRecorder::Global().enabled();
  if (!capture && !recording) return;
  RawFrame frames[kMaxStackDepth];
  const int count = WalkFrames(frames, kMaxStackDepth);
  AllocationStackTable& table = AllocationStackTable::Global();
  const StackId id = capture ? table.Intern(frames, count) : 0;
  std::shared_ptr<const CallStack> stack;
  if (recording) {
    stack =
        id != 0
            ? table.Symbolize(id)
            : std::make_shared<const CallStack>(SymbolizeFrames(frames, count));
  }
  site_.emplace(std::move(stack), id);
}

}  // namespace baton::python
