#include "not_constructible.h"

#include <string>
#include <string_view>

namespace baton::python {
namespace {

// How a user gets an object of each class.
std::string_view HowToGet(std::string_view name) {
  if (name == "Array") {
    return "make arrays with bt.device_put, bt.numpy.asarray, bt.zeros, ...";
  }
  if (name == "Donated") return "bt.donate(x) returns one";
  if (name == "Device") return "use bt.devices() or bt.local_devices()";
  if (name == "Tracer") return "tracers exist only inside a traced function";
  if (name == "Compiled" || name == "Lowered" || name == "MemoryAnalysis") {
    return "use bt.jit(f).lower(...).compile()";
  }
  if (name == "HostViewHold") return "use x.host_view()";
  return "baton functions return them";
}

}  // namespace

PyObject* RefuseNew(PyTypeObject* type, PyObject*, PyObject*) {
  std::string_view full = type->tp_name;  // "baton._baton.Array"
  const size_t dot = full.rfind('.');
  const std::string_view name =
      dot == std::string_view::npos ? full : full.substr(dot + 1);
  const std::string msg = "baton." + std::string(name) +
                          " objects cannot be created directly: " +
                          std::string(HowToGet(name)) + ".";
  PyErr_SetString(PyExc_TypeError, msg.c_str());
  return nullptr;
}

PyType_Slot kNotConstructibleSlots[] = {BATON_REFUSE_NEW_SLOT, {0, nullptr}};

}  // namespace baton::python
