// What f.lower(...) and .compile() return (Lowered, Compiled) and the
// memory analysis they report (DESIGN R3), for bt.jit.
#include <nanobind/stl/string.h>

#include <stdexcept>
#include <string>
#include <utility>

#include "jit_cache.h"
#include "module.h"
#include "not_constructible.h"

namespace baton::python {
namespace {

// Lowered and Compiled hold their jitted function (jit_cache.h): the
// garbage collector sees that reference, and can break a cycle through it.
template <typename T>
int TraverseFn(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(Py_TYPE(self));
  if (!nb::inst_ready(self)) return 0;
  Py_VISIT(nb::inst_ptr<T>(self)->fn.ptr());
  return 0;
}

template <typename T>
int ClearFn(PyObject* self) {
  if (nb::inst_ready(self)) {
    nb::object dropped = std::move(nb::inst_ptr<T>(self)->fn);  // Py_CLEAR
  }
  return 0;
}

template <typename T>
const T& Live(const T& x) {
  if (!x.fn.is_valid()) {
    throw std::runtime_error(
        "<" + x.fn_name +
        ">: this compiled function was cleared by the garbage collector (its "
        "jitted function is gone); lower() the jitted function again");
  }
  return x;
}

PyType_Slot compiled_slots[] = {
    BATON_REFUSE_NEW_SLOT,
    {Py_tp_traverse, reinterpret_cast<void*>(&TraverseFn<Compiled>)},
    {Py_tp_clear, reinterpret_cast<void*>(&ClearFn<Compiled>)},
    {0, nullptr}};
PyType_Slot lowered_slots[] = {
    BATON_REFUSE_NEW_SLOT,
    {Py_tp_traverse, reinterpret_cast<void*>(&TraverseFn<Lowered>)},
    {Py_tp_clear, reinterpret_cast<void*>(&ClearFn<Lowered>)},
    {0, nullptr}};

}  // namespace
}  // namespace baton::python

void init_compiled(nb::module_& m) {
  using namespace baton;
  using namespace baton::python;

  nb::class_<compiler::MemoryAnalysis>(
      m, "MemoryAnalysis", nb::type_slots(baton::python::kNotConstructibleSlots),
      "What one call of a compiled function holds, in bytes (DESIGN R3).")
      .def_ro("argument_size_in_bytes",
              &compiler::MemoryAnalysis::argument_size_in_bytes,
              "All parameters, captured (hidden) arguments included.")
      .def_ro("output_size_in_bytes",
              &compiler::MemoryAnalysis::output_size_in_bytes,
              "Distinct outputs.")
      .def_ro("alias_size_in_bytes",
              &compiler::MemoryAnalysis::alias_size_in_bytes,
              "Outputs written into donated arguments' storage.")
      .def_ro("temp_size_in_bytes",
              &compiler::MemoryAnalysis::temp_size_in_bytes, "Temporaries.")
      .def_ro("constant_size_in_bytes",
              &compiler::MemoryAnalysis::constant_size_in_bytes,
              "Distinct captured constants (each stored once).")
      .def_ro("peak_memory_in_bytes",
              &compiler::MemoryAnalysis::peak_memory_in_bytes,
              "arguments + outputs - aliases + temporaries + constants.")
      .def("__repr__", [](const compiler::MemoryAnalysis& a) {
        return "MemoryAnalysis(" + a.ToString() + ")";
      });

  nb::class_<Compiled>(m, "Compiled", nb::type_slots(compiled_slots),
                       "A compiled signature of a jitted function "
                       "(f.lower(...).compile()).")
      .def(
          "memory_analysis",
          [](const Compiled& c) { return c.entry->exe->memory_analysis(); },
          "Argument, output, alias, temporary, constant and peak bytes of "
          "one call.")
      .def(
          "as_text", [](const Compiled& c) { return c.entry->exe->as_text(); },
          "The optimized program with its memory analysis.")
      .def(
          "__call__",
          [](const Compiled& c, nb::args args, nb::kwargs kwargs) {
            const Compiled& live = Live(c);
            return live.call(live.fn, live.entry, std::move(args),
                             std::move(kwargs));
          },
          "Runs this compiled program (as calling the jitted function "
          "does: donation, outputs, errors). Arguments must have the "
          "signature it was compiled for; other shapes or dtypes raise "
          "TypeError instead of compiling again.")
      .def("__repr__",
           [](const Compiled& c) { return "<Compiled " + c.fn_name + ">"; });

  nb::class_<Lowered>(m, "Lowered", nb::type_slots(lowered_slots),
                      "A jitted function traced for one signature "
                      "(f.lower(...)); nothing was run or consumed.")
      .def(
          "compile",
          [](const Lowered& l) {
            const Lowered& live = Live(l);
            return Compiled{live.entry, live.fn_name, live.fn, live.call};
          },
          "The compiled program (compilation happened in lower(); this "
          "returns it).")
      .def(
          "as_text", [](const Lowered& l) { return l.entry->exe->as_text(); },
          "The optimized program.")
      .def("__repr__",
           [](const Lowered& l) { return "<Lowered " + l.fn_name + ">"; });
}
