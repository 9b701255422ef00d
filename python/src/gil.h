// Calling into Python from the runtime's threads.
//
// Borrowed memory (numpy arrays, DLPack imports) is given back by callbacks
// that run on whichever thread finishes the last work on the buffer -- often
// a queue worker. They take the GIL themselves; for that to never deadlock,
// every binding that blocks on runtime work (waiting for events, staging,
// holds) releases the GIL while it waits.
#pragma once

#include <nanobind/nanobind.h>

namespace baton::python {

// Runs `fn` with the GIL held, from any thread. Once the interpreter is
// shutting down it does nothing: the Python object is leaked rather than
// touched (a thread taking the GIL then would be stopped).
template <typename F>
void WithGil(F&& fn) {
  if (!Py_IsInitialized()) return;
#if PY_VERSION_HEX >= 0x030D0000
  if (Py_IsFinalizing()) return;
#else
  if (_Py_IsFinalizing()) return;
#endif
  nanobind::gil_scoped_acquire acquire;
  fn();
}

}  // namespace baton::python
