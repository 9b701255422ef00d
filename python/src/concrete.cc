// Concrete values of traced values (declared in trace_frames.h).
//
// bt.grad, bt.vjp, bt.jvp and their siblings called outside bt.jit trace
// the user's function like jit does, but the arguments are known: they bind
// them to the trace's parameters (TraceFrame::Bind; sub-traces bind the
// outer values their parameters stand for). A value whose every parameter
// is bound can then be computed: the program so far, cut down to that
// value, runs in the reference interpreter on the bound values, each of
// which is itself made concrete first (a Tracer of the parent frame through
// the parent's bindings). This is what lets a differentiated function use
// Python control flow on its values (`if x > 0:`) as it does in JAX; under
// bt.jit nothing is bound and the usual ConcretizationTypeError stays.
//
// The trace is specialized to what Python decided: a fresh trace is made
// on every such call (run_eagerly never reuses a compiled program).
#include <nanobind/stl/string.h>

#include <optional>
#include <string>
#include <vector>

#include "baton/compiler/passes.h"
#include "baton/compiler/reference_interpreter.h"
#include "conversions.h"
#include "trace_frames.h"

namespace baton::python {
namespace {

using compiler::Literal;
using compiler::Program;
using compiler::ValueId;

// Host data (an Array, numpy data or a Python scalar) as a literal of
// `type`'s shape and dtype (converted as numpy converts, as the trace did
// when it was bound); nullopt if it does not have that shape.
std::optional<Literal> HostLiteral(nb::handle value,
                                   const compiler::ValueType& type) {
  nb::module_ np = nb::module_::import_("numpy");
  nb::object a = np.attr("asarray")(value, NumpyDType(type.dtype));
  nb::tuple shape = nb::cast<nb::tuple>(a.attr("shape"));
  if (static_cast<int>(nb::len(shape)) != type.shape.rank()) {
    return std::nullopt;
  }
  for (int i = 0; i < type.shape.rank(); ++i) {
    if (nb::cast<int64_t>(shape[i]) != type.shape.dims()[i]) {
      return std::nullopt;
    }
  }
  nb::bytes data = nb::cast<nb::bytes>(a.attr("tobytes")());  // C order
  return Literal::FromBytes(type.shape, type.dtype, data.c_str());
}

std::optional<Literal> Concrete(const std::shared_ptr<TraceFrame>& frame,
                                ValueId id);

// The concrete value a bound parameter stands for.
std::optional<Literal> BoundLiteral(nb::handle bound,
                                    const compiler::ValueType& type) {
  if (bound.is_none()) return std::nullopt;
  if (nb::isinstance<PyTracer>(bound)) {
    const PyTracer* outer = nb::inst_ptr<PyTracer>(bound);
    if (!outer->frame->active()) return std::nullopt;
    return Concrete(outer->frame, outer->tracer.id());
  }
  return HostLiteral(bound, type);
}

std::optional<Literal> Concrete(const std::shared_ptr<TraceFrame>& frame,
                                ValueId id) {
  if (!frame->active()) return std::nullopt;
  Program cut = frame->context().program();
  if (!cut.SetOutputs({id}).ok()) return std::nullopt;
  // Computing a value runs none of the program's prints or callbacks.
  cut = compiler::EliminateDeadCode(cut, compiler::Effects::kDrop);
  // Which parameters the value depends on (the others need no binding).
  std::vector<bool> used(cut.num_values(), false);
  for (const compiler::Instruction& inst : cut.instructions()) {
    for (ValueId o : inst.operands) used[o] = true;
  }
  for (ValueId o : cut.outputs()) used[o] = true;
  const Program& full = frame->context().program();
  if (cut.num_parameters() != full.num_parameters()) return std::nullopt;
  std::vector<Literal> args;
  args.reserve(cut.num_parameters());
  for (int i = 0; i < cut.num_parameters(); ++i) {
    const compiler::ValueType& type = cut.parameter_type(i);
    if (!used[cut.parameter(i)]) {
      args.emplace_back(type.shape, type.dtype);  // zeros, never read
      continue;
    }
    std::optional<Literal> v =
        BoundLiteral(frame->Bound(full.parameter(i)), type);
    if (!v) return std::nullopt;
    args.push_back(std::move(*v));
  }
  Result<std::vector<Literal>> out = Status();
  {
    nb::gil_scoped_release release;
    out = compiler::Interpret(cut, args);
  }
  if (!out.ok() || out.value().size() != 1) return std::nullopt;
  return std::move(out.value()[0]);
}

}  // namespace

nb::object ConcreteValue(const PyTracer& t) {
  std::optional<Literal> v = Concrete(t.frame, t.tracer.id());
  if (!v) return nb::none();
  return NumpyCopy(v->untyped_data(), v->shape(), v->dtype());
}

}  // namespace baton::python
