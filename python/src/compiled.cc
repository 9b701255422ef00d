// What f.lower(...) and .compile() return (Lowered, Compiled) and the
// memory analysis they report (DESIGN R3), for bt.jit.
#include <nanobind/stl/string.h>

#include "jit_cache.h"
#include "module.h"
#include "not_constructible.h"

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

  nb::class_<Compiled>(m, "Compiled", nb::type_slots(baton::python::kNotConstructibleSlots),
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
            return c.call(c.entry, std::move(args), std::move(kwargs));
          },
          "Runs this compiled program (as calling the jitted function "
          "does: donation, outputs, errors). Arguments must have the "
          "signature it was compiled for; other shapes or dtypes raise "
          "TypeError instead of compiling again.")
      .def("__repr__",
           [](const Compiled& c) { return "<Compiled " + c.fn_name + ">"; });

  nb::class_<Lowered>(m, "Lowered", nb::type_slots(baton::python::kNotConstructibleSlots),
                      "A jitted function traced for one signature "
                      "(f.lower(...)); nothing was run or consumed.")
      .def(
          "compile",
          [](const Lowered& l) {
            return Compiled{l.entry, l.fn_name, l.call};
          },
          "The compiled program (compilation happened in lower(); this "
          "returns it).")
      .def(
          "as_text", [](const Lowered& l) { return l.entry->exe->as_text(); },
          "The optimized program.")
      .def("__repr__",
           [](const Lowered& l) { return "<Lowered " + l.fn_name + ">"; });
}
