// The Python `Tracer` class (baton._baton.lax.Tracer): metadata, numpy-style
// operators with weakly typed Python scalars, and clear errors where a
// concrete value is needed. Creates the `lax` submodule; lax.cc adds the
// op functions.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "array_caster.h"
#include "baton/core/error.h"
#include "conversions.h"
#include "errors.h"
#include "lax_internal.h"
#include "module.h"
#include "trace_frames.h"
#include "not_constructible.h"

namespace baton::python {
namespace {

using compiler::Tracer;

nb::tuple ShapeTuple(const Shape& s) {
  nb::list l;
  for (int64_t d : s.dims()) l.append(d);
  return nb::tuple(l);
}

std::string TracerRepr(const PyTracer& t) {
  std::string s = "Tracer(shape=" + t.tracer.shape().to_string() +
                  ", dtype=" + std::string(dtype_name(t.tracer.dtype()));
  if (t.tracer.memory_kind() != MemoryKind::kDevice) {
    s += ", memory_kind=" +
         std::string(memory_kind_name(t.tracer.memory_kind()));
  }
  if (t.weak) s += ", weak_type=True";
  if (!t.frame->active()) s += ", escaped";
  return s + ")";
}

// Raises `type` (a ConcretizationTypeError or a sibling; errors.h).
[[noreturn]] void Concretization(const PyTracer& t, const char* what,
                                 PyObject* type) {
  ThrowPythonError(
      type, std::string("a traced value (") + TracerRepr(t) +
                ") has no concrete value while " + t.frame->fn_name() +
                " is being traced, so it cannot be used as " + what +
                ". Use lax.where for data-dependent choices, or mark the "
                "argument static (static_argnums / static_argnames).");
}

// `t`'s concrete value converted by numpy's `method` (__bool__, __int__,
// ...) where it has one (concrete.cc); otherwise raises as Concretization.
nb::object Concretized(const PyTracer& t, const char* what, const char* method,
                       PyObject* type) {
  nb::object v = ConcreteValue(Resolve(t, what));
  if (v.is_none()) Concretization(t, what, type);
  return v.attr(method)();  // numpy's rules (size-1 arrays only, ...)
}

// Operands a Tracer operator accepts; anything else gives NotImplemented.
bool OperatorOperand(nb::handle h) {
  return nb::isinstance<PyTracer>(h) || nb::isinstance<ArrayImpl>(h) ||
         IsPythonScalar(h) || IsNumpyData(h);
}

nb::object NotImplemented() { return nb::borrow(Py_NotImplemented); }

}  // namespace
}  // namespace baton::python

void init_tracer(nb::module_& m) {
  using namespace baton;
  using namespace baton::python;
  nb::module_ lax = m.def_submodule(
      "lax",
      "The tracer's operations (baton/compiler/tracer.h), for code that runs "
      "inside bt.jit.\n\n"
      "Each function takes Tracers, baton Arrays (captured as hidden "
      "arguments, never copied into the program), numpy data (a snapshot "
      "constant, de-duplicated by content) or Python scalars (weakly typed: "
      "x * 2 keeps x's dtype). Operands broadcast as in numpy and promote "
      "with numpy/JAX rules. Shape and dtype errors raise ValueError naming "
      "the op, at trace time.");

  InitNumpyTypes(lax);

  // ---- Tracer ----
  nb::class_<PyTracer> cls(
      lax, "Tracer", nb::type_slots(baton::python::kNotConstructibleSlots),
      "A value inside a function being traced by bt.jit: it has a shape, a "
      "dtype and a memory kind but no values. Operators (+ - * / ** % @, "
      "comparisons, & | ~, unary -) follow numpy broadcasting with weakly "
      "typed Python scalars. Using it where a concrete value is needed "
      "(bool(), int(), np.asarray) raises TypeError; using it after its "
      "trace has finished raises RuntimeError.");
  cls.def_prop_ro(
         "shape",
         [](const PyTracer& t) { return ShapeTuple(t.tracer.shape()); },
         "The dimensions, as a tuple of ints.")
      .def_prop_ro(
          "dtype",
          [](const PyTracer& t) {
            return nb::borrow(NumpyDType(t.tracer.dtype()));
          },
          "The element type, as a numpy dtype (bfloat16 from ml_dtypes).")
      .def_prop_ro(
          "ndim", [](const PyTracer& t) { return t.tracer.rank(); },
          "The number of dimensions.")
      .def_prop_ro(
          "size",
          [](const PyTracer& t) { return t.tracer.shape().num_elements(); },
          "The number of elements.")
      .def_prop_ro(
          "nbytes",
          [](const PyTracer& t) { return t.tracer.type().byte_size(); },
          "Bytes of the elements.")
      .def_prop_ro(
          "memory_kind",
          [](const PyTracer& t) {
            return std::string(memory_kind_name(t.tracer.memory_kind()));
          },
          "'device', 'pinned_host' or 'unpinned_host'.")
      .def_prop_ro(
          "weak_type", [](const PyTracer& t) { return t.weak; },
          "True for a value that stands for a Python scalar (a jit argument "
          "passed as a Python bool/int/float): like a literal, it takes the "
          "other operand's dtype in binary ops and select.")
      .def("__repr__", &TracerRepr)
      .def(
          "astype",
          [](const PyTracer& self, nb::handle dtype) {
            const PyTracer& t = Resolve(self, "astype");
            return WrapTracer(
                t.frame, compiler::astype(t.tracer, ToDType(dtype, "astype")));
          },
          nb::arg("dtype"), "The value converted to `dtype`.")
      .def(
          "reshape",
          [](const PyTracer& self, nb::args shape) {
            const PyTracer& t = Resolve(self, "reshape");
            nb::handle h = shape.size() == 1
                               ? nb::handle(PyTuple_GET_ITEM(shape.ptr(), 0))
                               : nb::handle(shape);
            return WrapTracer(
                t.frame,
                compiler::reshape(t.tracer, ToDims(h, "reshape", "shape")));
          },
          "The same elements in a new shape (one dimension may be -1).")
      .def_prop_ro(
          "T",
          [](const PyTracer& self) {
            const PyTracer& t = Resolve(self, "transpose");
            return WrapTracer(t.frame, compiler::transpose(t.tracer));
          },
          "The transpose (dimensions reversed).")
      .def("__len__",
           [](const PyTracer& t) -> int64_t {
             if (t.tracer.rank() == 0) {
               ThrowType("len() of unsized object (a 0-d Tracer)");
             }
             return t.tracer.shape()[0];
           })
      // Where the trace's arguments are known (bt.grad & co. called outside
      // bt.jit: concrete.cc), a value converts as an array would; otherwise
      // these raise JAX's error classes.
      .def("__bool__",
           [](const PyTracer& t) -> nb::object {
             return Concretized(t, "a Python bool", "__bool__",
                                TracerBoolConversionErrorType());
           })
      .def("__int__",
           [](const PyTracer& t) -> nb::object {
             return Concretized(t, "a Python int", "__int__",
                                ConcretizationTypeErrorType());
           })
      .def("__float__",
           [](const PyTracer& t) -> nb::object {
             return Concretized(t, "a Python float", "__float__",
                                ConcretizationTypeErrorType());
           })
      .def("__index__",
           [](const PyTracer& t) -> nb::object {
             return Concretized(t, "an index", "__index__",
                                TracerIntegerConversionErrorType());
           })
      .def("__array__",
           [](const PyTracer& t, nb::args, nb::kwargs) -> nb::object {
             Concretization(t, "a numpy array",
                            TracerArrayConversionErrorType());
           })
      .def("__neg__",
           [](nb::handle self) {
             // -x of a bool is refused as bnp.negative refuses it, with
             // numpy's and JAX's class (the lax op would say ValueError).
             const PyTracer* t = AsPyTracer(self, "negative");
             if (t != nullptr && t->tracer.dtype() == DType::kBool) {
               ThrowType(
                   "negative: not defined for bool operands (numpy and JAX "
                   "refuse it too); use logical_not (the ~ operator), or "
                   "convert to an integer dtype first");
             }
             return ApplyUnary(FindUnary("neg"), self);
           })
      .def("__pos__", [](nb::handle self) { return nb::borrow(self); })
      .def("__abs__",
           [](nb::handle self) { return ApplyUnary(FindUnary("abs"), self); })
      .def("__invert__", [](nb::handle self) {
        return ApplyUnary(FindUnary("bitwise_not"), self);
      });
  struct Dunder {
    const char* name;
    const char* op;
    bool reflected;
  };
  static const Dunder kDunders[] = {
      {"__add__", "add", false},         {"__radd__", "add", true},
      {"__sub__", "sub", false},         {"__rsub__", "sub", true},
      {"__mul__", "mul", false},         {"__rmul__", "mul", true},
      {"__truediv__", "true_divide", false},
      {"__rtruediv__", "true_divide", true},
      {"__mod__", "mod", false},         {"__rmod__", "mod", true},
      {"__pow__", "pow", false},         {"__rpow__", "pow", true},
      {"__and__", "bitwise_and", false}, {"__rand__", "bitwise_and", true},
      {"__or__", "bitwise_or", false},   {"__ror__", "bitwise_or", true},
      {"__xor__", "bitwise_xor", false}, {"__rxor__", "bitwise_xor", true},
      {"__eq__", "eq", false},           {"__ne__", "ne", false},
      {"__lt__", "lt", false},           {"__le__", "le", false},
      {"__gt__", "gt", false},           {"__ge__", "ge", false},
  };
  for (const Dunder& d : kDunders) {
    const BinaryDef* def = &FindBinary(d.op);
    const bool reflected = d.reflected;
    cls.def(
        d.name,
        [def, reflected](nb::handle self, nb::handle other) {
          if (!OperatorOperand(other)) return NotImplemented();
          return reflected ? ApplyBinary(*def, other, self)
                           : ApplyBinary(*def, self, other);
        },
        nb::arg("other").none());
  }
  auto matmul = [](nb::handle a, nb::handle b) {
    auto frame = OpFrame("matmul", {a, b});
    Tracer x = ToTracer(a, frame, "matmul");
    Tracer y = ToTracer(b, frame, "matmul");
    // A contraction size mismatch is a TypeError, as in JAX (DESIGN 5.4).
    if (x.rank() > 0 && y.rank() > 0) {
      const int64_t ka = x.shape()[x.rank() - 1];
      const int64_t kb = y.rank() == 1 ? y.shape()[0] : y.shape()[y.rank() - 2];
      if (ka != kb) {
        ThrowType("matmul: contracting dimensions differ (" +
                  std::to_string(ka) + " vs " + std::to_string(kb) + ") in " +
                  x.shape().to_string() + " @ " + y.shape().to_string() +
                  "; the last axis of the left operand must match the "
                  "second-to-last (or only) axis of the right one");
      }
    }
    return WrapTracer(frame, compiler::matmul(x, y));
  };
  cls.def(
      "__matmul__",
      [matmul](nb::handle self, nb::handle other) {
        if (!OperatorOperand(other)) return NotImplemented();
        return matmul(self, other);
      },
      nb::arg("other").none());
  cls.def(
      "__rmatmul__",
      [matmul](nb::handle self, nb::handle other) {
        if (!OperatorOperand(other)) return NotImplemented();
        return matmul(other, self);
      },
      nb::arg("other").none());
  // numpy defers to the Tracer's reflected operators (np_array + tracer).
  cls.attr("__array_ufunc__") = nb::none();
  cls.attr("__array_priority__") = 1000;
  cls.attr("__hash__") = nb::none();
}
