// The program a Python `_baton.transforms.Program` object holds
// (transforms.cc registers the class), for bindings in other files.
#pragma once

#include <nanobind/nanobind.h>

#include <memory>

#include "baton/compiler/ir.h"

namespace baton::python {

// The program of `h`, a transforms.Program (TypeError otherwise).
std::shared_ptr<const compiler::Program> ProgramOf(nanobind::handle h);

}  // namespace baton::python
