// The runtime side of bt.config (baton/core/config.h): the donation mode the
// C++ jit reads, and the route of runtime warnings to Python's `warnings`
// (as bt.DonationWarning).
#include "baton/core/config.h"

#include <nanobind/stl/string.h>

#include "baton/core/error.h"
#include "conversions.h"
#include "gil.h"
#include "module.h"

namespace {

// Runs on the thread that emits the warning (the caller of a jitted
// function), with or without the GIL. A warning the filters turn into an
// error cannot propagate through the runtime's call; it is reported as
// unraisable instead.
void WarnInPython(const std::string& message) {
  baton::python::WithGil([&]() {
    PyObject* category = PyExc_UserWarning;
    nb::object errors;
    try {
      errors = nb::module_::import_("baton.errors");
      category = errors.attr("DonationWarning").ptr();
    } catch (const nb::python_error&) {
      // During import or teardown: a plain UserWarning.
    }
    if (PyErr_WarnEx(category, message.c_str(), 1) != 0) {
      PyErr_WriteUnraisable(nullptr);
    }
  });
}

}  // namespace

void init_config(nb::module_& m) {
  baton::set_warning_handler(&WarnInPython);
  m.def(
      "_set_donation_mode",
      [](const std::string& mode) {
        if (mode == "warn") {
          baton::set_donation_mode(baton::DonationMode::kWarn);
        } else if (mode == "error") {
          baton::set_donation_mode(baton::DonationMode::kError);
        } else {
          baton::ThrowIfError(baton::InvalidArgument(
              "donation mode must be 'warn' or 'error', not '" + mode + "'"));
        }
      },
      nb::arg("mode"),
      "Sets what an unusable donation does in the runtime (bt.config "
      "calls this).");
  m.def("_set_enable_x64", &baton::python::SetEnableX64, nb::arg("enabled"),
        "Turns 64-bit host dtypes on or off where traces capture numpy data "
        "(baton._dtypes.set_x64 calls this).");
  m.def("_enable_x64", &baton::python::EnableX64,
        "Whether 64-bit host dtypes are on in the bindings.");
  m.def(
      "_emit_warning",
      [](const std::string& message) {
        nb::gil_scoped_release release;  // as from a runtime call path
        baton::EmitWarning(message);
      },
      nb::arg("message"), "Emits a runtime warning (for tests).");
  m.def(
      "_donation_mode",
      []() {
        return baton::donation_mode() == baton::DonationMode::kError ? "error"
                                                                     : "warn";
      },
      "The runtime's donation mode.");
}
