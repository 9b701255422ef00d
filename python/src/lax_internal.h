// Helpers shared by the files behind baton._baton.lax (trace_frames.cc,
// lax_elementwise.cc, tracer_class.cc, lax.cc): argument conversion and the
// elementwise op table. Not part of trace_frames.h's interface to jit.cc.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "baton/compiler/tracer.h"
#include "trace_frames.h"

namespace nb = nanobind;

namespace baton::python {

// Imports numpy's ndarray / generic / asarray / dtype once (kept alive by
// the `lax` module).
void InitNumpyTypes(nb::module_& lax);

[[noreturn]] void ThrowType(const std::string& msg);
[[noreturn]] void ThrowValue(const std::string& msg);

// A Python bool / int / float as the tracer's weakly typed scalar
// (OverflowError for ints beyond 64 bits).
compiler::WeakScalar ToWeakScalar(nb::handle h, const char* op);
// An int or a sequence of ints (numpy integers too); TypeError naming `op`
// and `what` otherwise.
std::vector<int64_t> ToDims(nb::handle h, const char* op, const char* what);
// The frame an op runs in: the innermost trace on this thread when every
// Tracer operand belongs to it or to a frame enclosing it (ToTracer lifts
// those), else the first Tracer operand's; TypeError outside any trace.
std::shared_ptr<TraceFrame> OpFrame(const char* op,
                                    std::initializer_list<nb::handle> operands);
std::shared_ptr<TraceFrame> OpFrame(const char* op,
                                    const std::vector<nb::handle>& operands);
// Host data (anything np.asarray takes) as a snapshot constant of `frame`.
compiler::Tracer HostConstant(nb::handle h,
                              const std::shared_ptr<TraceFrame>& frame,
                              const char* op,
                              std::optional<DType> dtype = std::nullopt);

// ---- Elementwise ops (lax_elementwise.cc) ----

using TT = compiler::Tracer (*)(const compiler::Tracer&,
                                const compiler::Tracer&);
using TS = compiler::Tracer (*)(const compiler::Tracer&, compiler::WeakScalar);
using ST = compiler::Tracer (*)(compiler::WeakScalar, const compiler::Tracer&);

// A binary op: the Tracer form, and the forms with a weak scalar on the
// right / left (null where tracer.h has none: the scalar becomes a 0-d
// constant of the dtype it would take).
struct BinaryDef {
  const char* name;
  TT tt;
  TS ts;
  ST st;
  const char* doc;
};

struct UnaryDef {
  const char* name;
  compiler::Tracer (*fn)(const compiler::Tracer&);
  const char* doc;
};

std::span<const BinaryDef> BinaryOps();
std::span<const UnaryDef> UnaryOps();
const BinaryDef& FindBinary(const std::string& name);
const UnaryDef& FindUnary(const std::string& name);
// Applied to any operands (see ToTracer); a new Python Tracer, weak when
// every operand is weak (comparisons give strongly typed bool).
nb::object ApplyBinary(const BinaryDef& d, nb::handle a, nb::handle b);
nb::object ApplyUnary(const UnaryDef& d, nb::handle x);

// A weakly typed operand: a Python scalar or a weak Tracer.
bool IsWeak(nb::handle h);
// A weak Tracer converted the way a scalar of its kind would be next to a
// value of dtype `other` (WeakScalar::ResultDType).
compiler::Tracer Unweaken(const compiler::Tracer& t, DType other);

}  // namespace baton::python
