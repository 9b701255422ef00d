// baton._baton.transforms: the C++ side of bt.grad, bt.vjp, bt.jvp, bt.vmap,
// bt.checkpoint and the custom rules (baton/_subtrace.py and the modules on
// top of it hold the Python API; DESIGN.md section 5.1).
//
// Everything here works on Programs, not on Python functions:
//   - subtrace(fn, avals, name) traces `fn` into a Program in a frame nested
//     in the current one (trace_frames.h): outer Tracers and baton Arrays it
//     uses become extra parameters, returned so the caller can pass them;
//   - jvp / vjp / vmap transform Programs (compiler/transforms/);
//   - inline(program, operands) re-emits a Program into the current trace;
//   - emit_call emits a call group (stop_gradient, checkpoint_name,
//     checkpoint, custom_jvp, custom_vjp; op_attrs.h CallAttrs).
//
// Errors: a transform's Unimplemented status raises NotImplementedError (an
// op without a derivative or batching rule, named in the message), its
// InvalidArgument TypeError for differentiation and ValueError for
// batching, its FailedPrecondition (an op that cannot be differentiated in
// this direction: reverse mode through while_loop) ValueError, as JAX
// raises them.
//
// Ownership: a Program handle shares an immutable compiler::Program (cheap to
// copy, safe to read from any thread). Thread-safety: tracing functions run
// on the calling thread with the GIL held (trace_frames.h).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "array_caster.h"
#include "program_handle.h"
#include "baton/compiler/control_flow.h"
#include "baton/compiler/effects.h"
#include "baton/compiler/inline_program.h"
#include "baton/compiler/passes.h"
#include "baton/compiler/program_printer.h"
#include "baton/compiler/transforms/batching.h"
#include "baton/compiler/transforms/jvp.h"
#include "baton/compiler/transforms/vjp.h"
#include "baton/core/error.h"
#include "baton/runtime/client.h"
#include "conversions.h"
#include "lax_internal.h"
#include "module.h"
#include "trace_frames.h"
#include "not_constructible.h"

namespace baton::python {
namespace {

using compiler::CallAttrs;
using compiler::CallKind;
using compiler::CheckpointPolicy;
using compiler::Program;
using compiler::Tracer;
using compiler::ValueType;

// What Python holds: a finished, immutable program.
struct ProgramHandle {
  std::shared_ptr<const Program> program;
};

nb::tuple ShapeTuple(const Shape& s) {
  nb::list l;
  for (int64_t d : s.dims()) l.append(d);
  return nb::tuple(l);
}

nb::list Avals(const std::vector<ValueType>& types) {
  nb::list l;
  for (const ValueType& t : types) {
    l.append(nb::make_tuple(ShapeTuple(t.shape),
                            std::string(dtype_name(t.dtype)),
                            std::string(memory_kind_name(t.memory_kind))));
  }
  return l;
}

// A transform's failure as the Python exception JAX raises for it.
[[noreturn]] void RaiseTransformError(const Status& s, PyObject* invalid) {
  PyObject* type = PyExc_RuntimeError;
  if (s.code() == ErrorCode::kUnimplemented) type = PyExc_NotImplementedError;
  if (s.code() == ErrorCode::kInvalidArgument) type = invalid;
  if (s.code() == ErrorCode::kFailedPrecondition) type = PyExc_ValueError;
  PyErr_SetString(type, s.message().c_str());
  throw nb::python_error();
}

template <typename T>
T OrRaise(Result<T> r, PyObject* invalid) {
  if (!r.ok()) RaiseTransformError(r.status(), invalid);
  return std::move(r).value();
}

ProgramHandle Share(Program p) {
  return ProgramHandle{std::make_shared<const Program>(std::move(p))};
}

// (shape, dtype[, weak[, memory_kind]]) from Python.
ValueType ParseAval(nb::handle aval, bool* weak) {
  nb::sequence seq = nb::borrow<nb::sequence>(aval);
  const size_t n = nb::len(seq);
  if (n < 2 || n > 4) {
    ThrowType("subtrace: an aval is (shape, dtype[, weak[, memory_kind]])");
  }
  ValueType t;
  t.shape = Shape(ToDims(seq[0], "subtrace", "shape"));
  t.dtype = ToDType(seq[1], "subtrace");
  *weak = n > 2 && nb::cast<bool>(seq[2]);
  if (n > 3 && !seq[3].is_none()) {
    auto k = memory_kind_from_name(nb::cast<std::string>(seq[3]));
    if (!k) ThrowValue("subtrace: unknown memory kind");
    t.memory_kind = *k;
  }
  return t;
}

// Traces fn(*tracers) in a frame nested in the current one. `values`, where
// given, are the outer values (Tracers, Arrays, host data) the parameters
// stand for (TraceFrame::Bind).
nb::tuple Subtrace(nb::callable fn, nb::sequence avals, std::string name,
                   nb::object values) {
  std::shared_ptr<TraceFrame> parent = CurrentFrame();
  Device* device = parent ? parent->device() : DefaultDevice();
  auto frame = std::make_shared<TraceFrame>(parent, device, name);
  nb::list tracers;
  for (nb::handle a : nb::iter(avals)) {
    bool weak = false;
    ValueType t = ParseAval(a, &weak);
    Tracer p = frame->context().AddParameter(t);
    if (!values.is_none()) {
      frame->Bind(p.id(), nb::borrow(values[nb::len(tracers)]));
    }
    tracers.append(WrapTracer(frame, p, weak));
  }
  // On the stack until finished; the guard abandons it if fn raises.
  FrameGuard guard(frame);
  nb::object outs = fn(*tracers);
  std::vector<Tracer> out_tracers;
  nb::list out_weak;
  for (nb::handle o : nb::iter(outs)) {
    out_tracers.push_back(ToTracer(o, frame, name.c_str()));
    out_weak.append(IsWeak(o));
  }
  std::vector<nb::object> lifted;
  Program p = frame->FinishSubtrace(out_tracers, &lifted);
  nb::list lifted_list;
  for (nb::object& o : lifted) lifted_list.append(std::move(o));
  return nb::make_tuple(Share(std::move(p)), lifted_list, out_weak);
}

// The frame operands go to: the innermost trace (they are lifted into it).
std::shared_ptr<TraceFrame> InnermostFrame(const char* op,
                                           const std::vector<nb::handle>& hs) {
  if (!CurrentFrame()) {
    ThrowType(std::string(op) +
              ": no function is being traced (baton's transformations run "
              "programs inside a trace; call them through bt.jit)");
  }
  return OpFrame(op, hs);
}

std::vector<Tracer> Operands(const std::shared_ptr<TraceFrame>& frame,
                             const std::vector<nb::handle>& hs,
                             const char* op) {
  std::vector<Tracer> ts;
  ts.reserve(hs.size());
  for (nb::handle h : hs) ts.push_back(ToTracer(h, frame, op));
  return ts;
}

nb::list Wrap(const std::shared_ptr<TraceFrame>& frame,
              const std::vector<Tracer>& ts, nb::handle weak) {
  nb::list out;
  for (size_t i = 0; i < ts.size(); ++i) {
    const bool w = !weak.is_none() && nb::cast<bool>(weak[i]) &&
                   ts[i].dtype() != DType::kBool;
    out.append(WrapTracer(frame, ts[i], w));
  }
  return out;
}

nb::list Inline(const ProgramHandle& p, std::vector<nb::handle> operands,
                nb::handle weak, bool expand_calls) {
  auto frame = InnermostFrame("inline", operands);
  std::vector<Tracer> args = Operands(frame, operands, "inline");
  std::vector<Tracer> outs =
      compiler::InlineProgram(frame->context(), *p.program, args, expand_calls);
  return Wrap(frame, outs, weak);
}

CallKind ParseCallKind(const std::string& s) {
  if (s == "checkpoint") return CallKind::kCheckpoint;
  if (s == "stop_gradient") return CallKind::kStopGradient;
  if (s == "name") return CallKind::kName;
  if (s == "sharding_constraint") return CallKind::kShardingConstraint;
  if (s == "custom_jvp") return CallKind::kCustomJvp;
  if (s == "custom_vjp") return CallKind::kCustomVjp;
  ThrowValue("emit_call: unknown call kind '" + s + "'");
}

// (kind, names, offload_src, offload_dst) from bt.checkpoint_policies.
CheckpointPolicy ParsePolicy(nb::handle h) {
  CheckpointPolicy p;
  if (h.is_none()) return p;
  nb::sequence seq = nb::borrow<nb::sequence>(h);
  const std::string kind = nb::cast<std::string>(seq[0]);
  using K = CheckpointPolicy::Kind;
  if (kind == "nothing_saveable") {
    p.kind = K::kNothingSaveable;
  } else if (kind == "everything_saveable") {
    p.kind = K::kEverythingSaveable;
  } else if (kind == "dots_saveable") {
    p.kind = K::kDotsSaveable;
  } else if (kind == "dots_with_no_batch_dims_saveable") {
    p.kind = K::kDotsWithNoBatchDimsSaveable;
  } else if (kind == "save_only_these_names") {
    p.kind = K::kSaveOnlyTheseNames;
  } else if (kind == "offload_dot_with_no_batch_dims") {
    p.kind = K::kOffloadDotsWithNoBatchDims;
  } else {
    ThrowValue("checkpoint: unknown policy '" + kind + "'");
  }
  for (nb::handle n : nb::iter(seq[1])) {
    p.names.push_back(nb::cast<std::string>(n));
  }
  auto kind_of = [](nb::handle k, MemoryKind dflt) {
    if (k.is_none()) return dflt;
    auto m = memory_kind_from_name(nb::cast<std::string>(k));
    if (!m) ThrowValue("checkpoint: unknown memory kind in an offload policy");
    return *m;
  };
  p.offload_src = kind_of(seq[2], MemoryKind::kDevice);
  p.offload_dst = kind_of(seq[3], MemoryKind::kPinnedHost);
  return p;
}

std::shared_ptr<const Program> OptProgram(nb::handle h) {
  if (h.is_none()) return nullptr;
  return nb::cast<const ProgramHandle&>(h).program;
}

}  // namespace

std::shared_ptr<const Program> ProgramOf(nb::handle h) {
  return nb::cast<const ProgramHandle&>(h).program;
}

namespace {

// One call instruction per output of the body (one for bodiless kinds),
// adjacent, as transforms/call_group.h expects.
nb::list EmitCall(const std::string& kind, std::vector<nb::handle> operands,
                  nb::handle body, nb::handle rule, nb::handle rule2,
                  nb::handle policy, const std::string& name, nb::handle weak,
                  std::vector<std::vector<std::string>> sharding) {
  CallAttrs a;
  a.sharding = std::move(sharding);
  a.kind = ParseCallKind(kind);
  a.body = OptProgram(body);
  a.rule = OptProgram(rule);
  a.rule2 = OptProgram(rule2);
  a.policy = ParsePolicy(policy);
  a.name = name;
  auto frame = InnermostFrame(kind.c_str(), operands);
  // Operands first: converting them may emit (constants, lifted values),
  // which must not separate the members of the group.
  std::vector<Tracer> args = Operands(frame, operands, kind.c_str());
  const int n = a.body ? static_cast<int>(a.body->outputs().size()) : 1;
  std::vector<Tracer> outs;
  for (int i = 0; i < n; ++i) {
    a.output_index = i;
    outs.push_back(frame->context().Emit(a, args));
  }
  return Wrap(frame, outs, weak);
}

// `program` with one more output: a bool[] constant (a token).
std::shared_ptr<const Program> WithTokenOutput(const Program& program) {
  Program p = program;
  auto token = std::make_shared<const compiler::Literal>(
      compiler::Literal::FromDoubles(DType::kBool, Shape{}, {1}));
  std::vector<compiler::ValueId> outputs = p.outputs();
  outputs.push_back(p.Add(compiler::ConstantAttrs{std::move(token)}, {}).value());
  ThrowIfError(p.SetOutputs(std::move(outputs)));
  return std::make_shared<const Program>(std::move(p));
}

// One control-flow instruction per result (a region group, adjacent:
// compiler/control_flow.h). kind: "while" (programs = cond, body), "scan"
// (programs = body), "case" (programs = branches; operand 0 the index).
nb::list EmitControlFlow(const std::string& kind,
                         std::vector<nb::handle> operands, nb::list programs,
                         int num_carries, int num_xs, int64_t length,
                         bool reverse, nb::handle weak) {
  std::vector<std::shared_ptr<const Program>> progs;
  for (nb::handle h : programs) progs.push_back(OptProgram(h));
  compiler::OpAttrs attrs;
  if (kind == "while") {
    if (progs.size() != 2) ThrowValue("emit_control_flow: while takes cond, body");
    attrs = compiler::WhileAttrs{0, num_carries, progs[0], progs[1]};
  } else if (kind == "scan") {
    if (progs.size() != 1) ThrowValue("emit_control_flow: scan takes a body");
    attrs = compiler::ScanAttrs{0, num_carries, num_xs, length, reverse, progs[0]};
  } else if (kind == "case") {
    attrs = compiler::CaseAttrs{0, progs};
  } else {
    ThrowValue("emit_control_flow: unknown kind '" + kind + "'");
  }
  auto frame = InnermostFrame(kind.c_str(), operands);
  std::vector<Tracer> args = Operands(frame, operands, kind.c_str());
  const int n = compiler::ControlFlowNumResults(attrs);
  if (n == 0) {
    // Nothing to compute. A loop or branch that only prints still runs:
    // it gets one result that nothing reads, a token (effects.h keeps it).
    if (!compiler::HasSideEffect(attrs)) return nb::list();
    if (kind == "while") {
      ThrowValue("emit_control_flow: a while loop needs a carry");
    }
    if (auto* c = std::get_if<compiler::CaseAttrs>(&attrs)) {
      for (auto& b : c->branches) b = WithTokenOutput(*b);
    } else {
      auto& sc = std::get<compiler::ScanAttrs>(attrs);
      sc.body = WithTokenOutput(*sc.body);  // one more y: a token per step
    }
    frame->context().Emit(compiler::WithOutputIndex(attrs, 0), args);
    return nb::list();
  }
  std::vector<Tracer> outs;
  for (int i = 0; i < n; ++i) {
    outs.push_back(frame->context().Emit(compiler::WithOutputIndex(attrs, i), args));
  }
  return Wrap(frame, outs, weak);
}

std::vector<bool> Bools(nb::handle h) {
  std::vector<bool> v;
  for (nb::handle b : nb::iter(h)) v.push_back(nb::cast<bool>(b));
  return v;
}

}  // namespace
}  // namespace baton::python

void init_transforms(nb::module_& m) {
  using namespace baton;
  using namespace baton::python;
  nb::module_ t = m.def_submodule(
      "transforms",
      "Program transformations behind bt.grad, bt.vjp, bt.jvp, bt.vmap, "
      "bt.checkpoint and custom rules (use those, not this module).");

  nb::class_<ProgramHandle>(
      t, "Program", nb::type_slots(baton::python::kNotConstructibleSlots),
      "A traced program (immutable): parameters, instructions, outputs.")
      .def(
          "as_text",
          [](const ProgramHandle& p) {
            return compiler::ProgramToText(*p.program);
          },
          "The program as text (the form jit's as_text() shows).")
      .def_prop_ro(
          "num_parameters",
          [](const ProgramHandle& p) { return p.program->num_parameters(); })
      .def_prop_ro(
          "num_outputs",
          [](const ProgramHandle& p) { return p.program->outputs().size(); })
      .def_prop_ro(
          "parameter_avals",
          [](const ProgramHandle& p) {
            return Avals(p.program->parameter_types());
          },
          "[(shape, dtype name, memory kind)] of the parameters.")
      .def_prop_ro(
          "output_avals",
          [](const ProgramHandle& p) {
            return Avals(p.program->output_types());
          },
          "[(shape, dtype name, memory kind)] of the outputs.")
      .def(
          "with_outputs",
          [](const ProgramHandle& p, std::vector<int> outputs) {
            std::vector<compiler::ValueId> ids;
            for (int i : outputs) {
              if (i < 0 || i >= static_cast<int>(p.program->outputs().size())) {
                ThrowValue("with_outputs: output index out of range");
              }
              ids.push_back(p.program->outputs()[i]);
            }
            Program q = *p.program;
            ThrowIfError(q.SetOutputs(std::move(ids)));
            return Share(std::move(q));
          },
          nb::arg("outputs"),
          "The same program returning only outputs[i], in that order.")
      .def(
          "inline_calls",
          [](const ProgramHandle& p) {
            return Share(compiler::InlineCalls(*p.program));
          },
          "The program with every call replaced by its body.")
      .def("__repr__", [](const ProgramHandle& p) {
        return compiler::ProgramToText(*p.program);
      });

  t.def("subtrace", &Subtrace, nb::arg("fn"), nb::arg("avals"), nb::arg("name"),
        nb::arg("values") = nb::none(),
        "Traces fn(*tracers), one Tracer per aval (shape, dtype, weak, "
        "memory_kind), in a trace nested in the current one; fn returns a "
        "flat sequence of outputs. Returns (program, lifted, out_weak): "
        "`lifted` are the outer Tracers and Arrays fn used, which the "
        "program takes as parameters after the explicit ones. `values`: "
        "what each parameter stands for, where known (concrete.cc).");
  t.def(
      "bind",
      [](nb::sequence tracers, nb::sequence values) {
        if (nb::len(tracers) != nb::len(values)) {
          ThrowValue("bind: one value per Tracer");
        }
        for (size_t i = 0; i < nb::len(tracers); ++i) {
          const PyTracer* p = AsPyTracer(tracers[i], "bind");
          if (p == nullptr) ThrowType("bind: not a Tracer");
          p->frame->Bind(p->tracer.id(), nb::borrow(values[i]));
        }
      },
      nb::arg("tracers"), nb::arg("values"),
      "Says which concrete value each parameter Tracer stands for, so values "
      "computed from them can be made concrete (bool(), int(), float()); "
      "used by transformations called outside bt.jit.");
  t.def("inline", &Inline, nb::arg("program"), nb::arg("operands"),
        nb::arg("weak") = nb::none(), nb::arg("expand_calls") = false,
        "Re-emits `program` into the current trace with these operands "
        "(Tracers, Arrays, host data); returns its outputs as Tracers "
        "(weakly typed where `weak` says).");
  t.def(
      "jvp",
      [](const ProgramHandle& p, nb::handle has_tangent) {
        std::vector<bool> ht = Bools(has_tangent);
        Result<Program> r = Status();
        {
          nb::gil_scoped_release release;
          r = compiler::transforms::Jvp(*p.program, ht);
        }
        return Share(OrRaise(std::move(r), PyExc_TypeError));
      },
      nb::arg("program"), nb::arg("has_tangent"),
      "(params..., tangents of params with has_tangent) -> (outputs..., "
      "output tangents...) (compiler/transforms/jvp.h).");
  t.def(
      "vjp",
      [](const ProgramHandle& p, nb::handle wrt) {
        std::vector<bool> w = Bools(wrt);
        Result<compiler::transforms::VjpPrograms> r = Status();
        {
          nb::gil_scoped_release release;
          r = compiler::transforms::Vjp(*p.program, w);
        }
        auto v = OrRaise(std::move(r), PyExc_TypeError);
        nb::list residuals;
        for (const auto& res : v.residuals) {
          residuals.append(nb::make_tuple(
              ShapeTuple(res.type.shape),
              std::string(dtype_name(res.type.dtype)), res.what));
        }
        return nb::make_tuple(Share(std::move(v.forward)),
                              Share(std::move(v.backward)), residuals);
      },
      nb::arg("program"), nb::arg("wrt"),
      "(forward, backward, residuals) (compiler/transforms/vjp.h); "
      "residuals are (shape, dtype name, what).");
  t.def(
      "vmap",
      [](const ProgramHandle& p, std::vector<int> in_dims, int64_t size) {
        Result<compiler::transforms::BatchedProgram> r = Status();
        {
          nb::gil_scoped_release release;
          r = compiler::transforms::Vmap(*p.program, in_dims, size);
        }
        auto b = OrRaise(std::move(r), PyExc_ValueError);
        nb::list batched;
        for (bool x : b.output_batched) batched.append(x);
        return nb::make_tuple(Share(std::move(b.program)), batched);
      },
      nb::arg("program"), nb::arg("in_dims"), nb::arg("batch_size"),
      "(program, output_batched) (compiler/transforms/batching.h): batched "
      "outputs have the batch dimension first.");
  // A context manager over SubstitutionGuard (trace_frames.h).
  struct Substituting {
    Substituting(nb::list f, nb::list v)
        : finished(std::move(f)), values(std::move(v)) {}
    nb::list finished, values;
    std::optional<SubstitutionGuard> guard;
  };
  nb::class_<Substituting>(
      t, "substituting",
      "with substituting(finished, values): each Tracer of `finished` (of a "
      "trace that has finished) stands for the Tracer at the same position "
      "of `values` wherever an op uses it, on this thread, inside the block.")
      .def(nb::init<nb::list, nb::list>(), nb::arg("finished"),
           nb::arg("values"))
      .def("__enter__",
           [](Substituting& s) {
             if (s.guard) ThrowValue("substituting: already entered");
             s.guard.emplace(s.finished, s.values);
           })
      .def("__exit__", [](Substituting& s, nb::args) { s.guard.reset(); });
  t.def(
      "value_key",
      [](nb::handle h) -> nb::object {
        if (nb::isinstance<PyTracer>(h)) {
          const PyTracer* pt = nb::inst_ptr<PyTracer>(h);
          return nb::make_tuple(reinterpret_cast<uintptr_t>(pt->frame.get()),
                                pt->tracer.id());
        }
        return nb::int_(reinterpret_cast<uintptr_t>(h.ptr()));
      },
      nb::arg("x"),
      "A hashable identity of a traced value (equal for two Python Tracers "
      "of the same value) or of any other object (its identity).");
  t.def("emit_control_flow", &EmitControlFlow, nb::arg("kind"),
        nb::arg("operands"), nb::arg("programs"), nb::arg("num_carries") = 0,
        nb::arg("num_xs") = 0, nb::arg("length") = 0,
        nb::arg("reverse") = false, nb::arg("weak") = nb::none(),
        "Emits a control-flow op (while, scan, case; compiler/op_attrs.h) "
        "into the current trace; returns one Tracer per result.");
  t.def("emit_call", &EmitCall, nb::arg("kind"), nb::arg("operands"),
        nb::arg("body") = nb::none(), nb::arg("rule") = nb::none(),
        nb::arg("rule2") = nb::none(), nb::arg("policy") = nb::none(),
        nb::arg("name") = "", nb::arg("weak") = nb::none(),
        nb::arg("sharding") = std::vector<std::vector<std::string>>{},
        "Emits a call group into the current trace (kind: checkpoint, "
        "stop_gradient, name, sharding_constraint (`sharding`: per "
        "dimension the mesh axis names splitting it), custom_jvp, "
        "custom_vjp); returns one Tracer per output of the body (one for "
        "the bodiless kinds).");
}
