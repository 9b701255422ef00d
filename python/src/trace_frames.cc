// Trace frames and operand conversion for baton._baton.lax and bt.jit
// (declared in trace_frames.h and lax_internal.h).
#include "trace_frames.h"

#include <nanobind/stl/string.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "array_caster.h"
#include "baton/core/error.h"
#include "baton/runtime/strided_import.h"
#include "conversions.h"
#include "lax_internal.h"

namespace baton::python {

using compiler::Tracer;
using compiler::WeakScalar;

// ---- Frames ----

namespace {
thread_local std::vector<std::shared_ptr<TraceFrame>> t_frames;
const std::shared_ptr<TraceFrame> kNoFrame;

// numpy objects, owned by the lax module (attribute `_lax_numpy`).
PyObject* np_ndarray = nullptr;
PyObject* np_generic = nullptr;
PyObject* np_asarray = nullptr;
PyObject* np_dtype = nullptr;
}  // namespace

void InitNumpyTypes(nb::module_& lax) {
  nb::module_ np = nb::module_::import_("numpy");
  nb::object keep = nb::make_tuple(np.attr("ndarray"), np.attr("generic"),
                                   np.attr("asarray"), np.attr("dtype"));
  lax.attr("_lax_numpy") = keep;  // owns the borrowed pointers
  np_ndarray = keep[0].ptr();
  np_generic = keep[1].ptr();
  np_asarray = keep[2].ptr();
  np_dtype = keep[3].ptr();
}

void ThrowType(const std::string& msg) { throw nb::type_error(msg.c_str()); }
void ThrowValue(const std::string& msg) { throw nb::value_error(msg.c_str()); }

TraceFrame::TraceFrame(Device* device, std::string fn_name)
    : scope_(std::make_unique<TraceScope>(&ctx_)),
      device_(device),
      fn_name_(std::move(fn_name)) {}

TraceFrame::TraceFrame(std::shared_ptr<TraceFrame> parent, Device* device,
                       std::string fn_name)
    : parent_(std::move(parent)),
      lifts_(true),
      device_(device),
      fn_name_(std::move(fn_name)) {}

bool TraceFrame::IsWithin(const TraceFrame* outer) const {
  for (const TraceFrame* f = this; f != nullptr; f = f->parent_.get()) {
    if (f == outer) return true;
  }
  return false;
}

compiler::Tracer TraceFrame::AddLifted(const compiler::ValueType& type,
                                       nb::object outer) {
  compiler::Tracer t = ctx_.AddParameter(type);
  bound_[t.id()] = outer;
  lifted_.push_back(std::move(outer));
  return t;
}

void TraceFrame::Bind(compiler::ValueId param, nb::object value) {
  bound_[param] = std::move(value);
}

nb::object TraceFrame::Bound(compiler::ValueId param) const {
  auto it = bound_.find(param);
  return it == bound_.end() ? nb::none() : it->second;
}

compiler::Tracer TraceFrame::Capture(const Array& array) {
  ThrowIfError(array.impl()->buffer().status());  // deleted: say so now
  if (array.device() != device_) {
    ThrowValue(fn_name_ + ": the captured array " + array.impl()->Describe() +
               " is on " + array.device()->ToString() +
               " but the function runs on " + device_->ToString() +
               "; move it with bt.device_put first");
  }
  if (!lifts_) {
    compiler::Tracer t = scope_->Capture(array);
    bound_[t.id()] = nb::cast(array);
    return t;
  }
  auto it = lifted_arrays_.find(array.impl());
  if (it != lifted_arrays_.end()) return it->second;
  compiler::Tracer t = AddLifted(
      compiler::ValueType{array.shape(), array.dtype(), array.memory_kind()},
      nb::cast(array));
  lifted_arrays_.emplace(array.impl(), t);
  return t;
}

compiler::Tracer TraceFrame::Lift(const PyTracer& outer) {
  if (outer.frame.get() == this) return outer.tracer;
  const auto key = std::make_pair(outer.frame.get(), outer.tracer.id());
  auto it = lifted_values_.find(key);
  if (it != lifted_values_.end()) return it->second;
  // The parent's own value for it first (lifting through every frame in
  // between), so the caller can pass it when it applies this program.
  nb::object in_parent;
  if (parent_.get() == outer.frame.get()) {
    in_parent = nb::cast(outer);
  } else {
    in_parent = nb::cast(PyTracer{parent_, parent_->Lift(outer), outer.weak});
  }
  compiler::Tracer t = AddLifted(outer.tracer.type(), std::move(in_parent));
  lifted_values_.emplace(key, t);
  return t;
}

compiler::Tracer TraceFrame::Snapshot(const void* data, size_t nbytes,
                                      Shape shape, DType dtype) {
  // The same host memory captured again (a numpy array used in many ops)
  // shares one snapshot -- if its bytes did not change in between.
  for (SnapshotEntry& e : snapshots_) {
    const compiler::Literal& lit = *e.literal;
    if (e.data == data && e.nbytes == nbytes && lit.dtype() == dtype &&
        lit.shape() == shape) {
      if (nbytes == 0 || std::memcmp(lit.untyped_data(), data, nbytes) == 0) {
        return compiler::constant(ctx_, e.literal);
      }
      e.literal = std::make_shared<const compiler::Literal>(
          compiler::Literal::FromBytes(shape, dtype, data));
      return compiler::constant(ctx_, e.literal);
    }
  }
  auto lit = std::make_shared<const compiler::Literal>(
      compiler::Literal::FromBytes(shape, dtype, data));
  snapshots_.push_back({data, nbytes, lit});
  return compiler::constant(ctx_, lit);
}

compiler::Program TraceFrame::Finish(
    const std::vector<compiler::Tracer>& outputs,
    std::vector<Array>* captured) {
  compiler::Program p = ctx_.Finish(outputs);
  *captured = scope_->captured();
  Abandon();
  return p;
}

compiler::Program TraceFrame::FinishSubtrace(
    const std::vector<compiler::Tracer>& outputs,
    std::vector<nb::object>* lifted) {
  compiler::Program p = ctx_.Finish(outputs);
  *lifted = std::move(lifted_);
  Abandon();
  return p;
}

void TraceFrame::Abandon() {
  active_ = false;
  scope_.reset();
  snapshots_.clear();
  lifted_.clear();
  lifted_values_.clear();
  lifted_arrays_.clear();
  bound_.clear();
  parent_.reset();
}

const std::shared_ptr<TraceFrame>& CurrentFrame() {
  return t_frames.empty() ? kNoFrame : t_frames.back();
}
bool IsTracing() { return !t_frames.empty(); }

FrameGuard::FrameGuard(std::shared_ptr<TraceFrame> frame) {
  t_frames.push_back(std::move(frame));
}
FrameGuard::~FrameGuard() {
  if (t_frames.back()->active()) t_frames.back()->Abandon();  // it raised
  t_frames.pop_back();
}

nb::object WrapTracer(const std::shared_ptr<TraceFrame>& frame,
                      compiler::Tracer t, bool weak) {
  return nb::cast(PyTracer{frame, std::move(t), weak});
}

const PyTracer* AsPyTracer(nb::handle h, const char* op) {
  if (!nb::isinstance<PyTracer>(h)) return nullptr;
  return &Resolve(*nb::inst_ptr<PyTracer>(h), op);
}

namespace {

// The substitutions in force on this thread (SubstitutionGuard), innermost
// last: pairs of lists (finished Tracers, the Tracers standing for them).
thread_local std::vector<std::pair<nb::list*, nb::list*>> t_substitutions;

}  // namespace

SubstitutionGuard::SubstitutionGuard(nb::list finished, nb::list values)
    : finished_(std::move(finished)), values_(std::move(values)) {
  if (finished_.size() != values_.size()) {
    ThrowValue("substituting: as many values as finished Tracers are needed");
  }
  for (nb::handle v : values_) {
    if (!nb::isinstance<PyTracer>(v)) {
      ThrowType("substituting: the values standing for Tracers must be "
                "Tracers, not " + std::string(nb::type_name(v.type()).c_str()));
    }
  }
  t_substitutions.emplace_back(&finished_, &values_);
}

SubstitutionGuard::~SubstitutionGuard() { t_substitutions.pop_back(); }

const PyTracer& Resolve(const PyTracer& t, const char* op) {
  if (t.frame->active()) return t;
  for (auto it = t_substitutions.rbegin(); it != t_substitutions.rend(); ++it) {
    const nb::list& finished = *it->first;
    for (size_t i = 0; i < finished.size(); ++i) {
      if (!nb::isinstance<PyTracer>(finished[i])) continue;
      const PyTracer* f = nb::inst_ptr<PyTracer>(finished[i]);
      if (f->frame == t.frame && f->tracer.id() == t.tracer.id()) {
        // The value standing for it may itself be substituted (nested
        // guards): resolved in turn.
        return Resolve(*nb::inst_ptr<PyTracer>((*it->second)[i]), op);
      }
    }
  }
  CheckActive(t, op);
  return t;
}

void CheckActive(const PyTracer& tr, const char* op) {
  const PyTracer* t = &tr;
  if (!t->frame->active()) {
    throw std::runtime_error(
        std::string(op) + ": this Tracer belongs to a trace of " +
        t->frame->fn_name() +
        " that has finished: it escaped the traced function (through a "
        "global, an attribute or a closure). Return traced values from the "
        "function instead.");
  }
}

bool IsPythonScalar(nb::handle h) {
  PyObject* o = h.ptr();
  if (PyObject_TypeCheck(o, reinterpret_cast<PyTypeObject*>(np_generic))) {
    return false;  // numpy scalars are strongly typed
  }
  return PyBool_Check(o) || PyLong_Check(o) || PyFloat_Check(o) ||
         PyComplex_Check(o);
}

WeakScalar ToWeakScalar(nb::handle h, const char* op) {
  PyObject* o = h.ptr();
  if (PyBool_Check(o)) return WeakScalar(o == Py_True);
  if (PyLong_Check(o)) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow != 0) {
      PyErr_SetString(
          PyExc_OverflowError,
          (std::string(op) + ": the Python int " + nb::repr(h).c_str() +
           " does not fit in 64 bits; use a numpy array with an "
           "explicit dtype")
              .c_str());
      throw nb::python_error();
    }
    return WeakScalar(static_cast<int64_t>(v));
  }
  if (PyComplex_Check(o)) {
    return WeakScalar(std::complex<double>(PyComplex_RealAsDouble(o),
                                           PyComplex_ImagAsDouble(o)));
  }
  return WeakScalar(PyFloat_AsDouble(o));
}

namespace {

std::string SupportedDTypes() {
  std::string s;
  for (int i = 0; i < kNumDTypes; ++i) {
    if (i) s += ", ";
    s += dtype_name(static_cast<DType>(i));
  }
  return s;
}

// The baton dtype of a numpy dtype object; TypeError naming `op` otherwise.
DType FromNumpyDType(nb::handle dt, const char* op) {
  const std::string name = nb::cast<std::string>(dt.attr("name"));
  if (auto t = dtype_from_name(name)) {
    if (PyObject_RichCompareBool(dt.ptr(), NumpyDType(*t).ptr(), Py_EQ) == 1) {
      return *t;
    }
  }
  ThrowType(std::string(op) + ": baton does not support dtype " +
            nb::repr(dt).c_str() + "; supported dtypes: " + SupportedDTypes());
}

}  // namespace

// A user's dtype argument: a numpy dtype, a name ("bfloat16"), a numpy
// scalar type, or Python's bool / int / float (bool, int32, float32). lax
// takes 64-bit dtypes whatever bt.config's enable_x64 (baton's own functions
// compute in them); the switch applies to data entering baton and to
// baton.numpy's dtype= arguments.
DType ToDType(nb::handle h, const char* op) {
  PyObject* o = h.ptr();
  if (o == reinterpret_cast<PyObject*>(&PyBool_Type)) return DType::kBool;
  if (o == reinterpret_cast<PyObject*>(&PyLong_Type)) return DType::kInt32;
  if (o == reinterpret_cast<PyObject*>(&PyFloat_Type)) return DType::kFloat32;
  if (nb::isinstance<nb::str>(h)) {
    if (auto t = dtype_from_name(nb::cast<std::string>(h))) return *t;
  }
  nb::object dt;
  try {
    dt = nb::borrow(np_dtype)(h);
  } catch (nb::python_error&) {
    ThrowType(std::string(op) + ": " + nb::repr(h).c_str() + " is not a dtype");
  }
  return FromNumpyDType(dt, op);
}

// A Python int (already through __index__) as int64, or a ValueError naming
// the op when it does not fit.
static int64_t DimFromIndex(nb::object idx, const char* op, const char* what) {
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(idx.ptr(), &overflow);
  if (overflow != 0) {
    ThrowValue(std::string(op) + ": " + what + " entry " +
               nb::str(idx).c_str() + " does not fit in 64 bits");
  }
  if (v == -1 && PyErr_Occurred()) throw nb::python_error();
  return static_cast<int64_t>(v);
}

std::vector<int64_t> ToDims(nb::handle h, const char* op, const char* what) {
  std::vector<int64_t> dims;
  if (PyLong_Check(h.ptr()) ||
      PyObject_TypeCheck(h.ptr(),
                         reinterpret_cast<PyTypeObject*>(np_generic))) {
    PyObject* idx = PyNumber_Index(h.ptr());
    if (idx == nullptr) throw nb::python_error();
    dims.push_back(DimFromIndex(nb::steal(idx), op, what));
    return dims;
  }
  if (!PySequence_Check(h.ptr()) || nb::isinstance<nb::str>(h)) {
    ThrowType(std::string(op) + ": " + what +
              " must be an int or a sequence of ints, not " +
              nb::type_name(h.type()).c_str());
  }
  for (nb::handle item : nb::iter(h)) {
    PyObject* idx = PyNumber_Index(item.ptr());
    if (idx == nullptr) {
      PyErr_Clear();
      ThrowType(std::string(op) + ": " + what + " must contain ints, not " +
                nb::type_name(item.type()).c_str());
    }
    dims.push_back(DimFromIndex(nb::steal(idx), op, what));
  }
  return dims;
}

namespace {

// The innermost trace when every Tracer operand belongs to it or to a frame
// enclosing it (those are lifted, as JAX traces every op into the innermost
// trace); otherwise the first Tracer operand's frame, where ToTracer reports
// the foreign operand.
template <typename Handles>
std::shared_ptr<TraceFrame> FrameOfOperands(const char* op,
                                            const Handles& operands) {
  const auto& current = CurrentFrame();
  const PyTracer* first = nullptr;
  bool all_enclosing = true;
  for (nb::handle h : operands) {
    if (const PyTracer* t = AsPyTracer(h, op)) {
      if (first == nullptr) first = t;
      if (!current || !current->IsWithin(t->frame.get())) all_enclosing = false;
    }
  }
  if (first == nullptr || all_enclosing) return current;
  return first->frame;
}

}  // namespace

// The frame an op runs in (lax_internal.h).
std::shared_ptr<TraceFrame> OpFrame(
    const char* op, std::initializer_list<nb::handle> operands) {
  if (auto f = FrameOfOperands(op, operands)) return f;
  const auto& f = CurrentFrame();
  if (!f) {
    ThrowType(std::string("lax.") + op +
              ": no Tracer operand and no function is being traced. lax "
              "functions build programs: call them inside a function traced "
              "by bt.jit (or wrap the computation in bt.jit)");
  }
  return f;
}

std::shared_ptr<TraceFrame> OpFrame(const char* op,
                                    const std::vector<nb::handle>& operands) {
  if (auto f = FrameOfOperands(op, operands)) return f;
  return OpFrame(op, {});
}

Tracer HostConstant(nb::handle h, const std::shared_ptr<TraceFrame>& frame,
                    const char* op, std::optional<DType> dtype) {
  nb::object arr;
  try {
    arr = dtype ? nb::borrow(np_asarray)(h, NumpyDType(*dtype))
                : nb::borrow(np_asarray)(h);
  } catch (nb::python_error& e) {
    ThrowType(std::string(op) + ": cannot use a " +
              nb::type_name(h.type()).c_str() + " as an array (" +
              nb::str(e.value()).c_str() + ")");
  }
  nb::object dt = arr.attr("dtype");
  if (nb::cast<std::string>(dt.attr("kind")) == "O") {
    ThrowType(std::string(op) + ": cannot use a " +
              nb::type_name(h.type()).c_str() +
              " as an array (it converts to a numpy object array)");
  }
  DType t = FromNumpyDType(dt, op);
  // With x64 off, 64-bit numpy data becomes 32-bit (as JAX): converted
  // here, before the snapshot, so the captured constant has the bytes of its
  // dtype.
  if (const DType canon = CanonicalHostDType(t); canon != t) {
    arr = arr.attr("astype")(NumpyDType(canon));
    t = canon;
  }
  if (!nb::cast<bool>(arr.attr("flags").attr("c_contiguous"))) {
    arr = arr.attr("copy")("C");
  }
  Py_buffer view;
  if (PyObject_GetBuffer(arr.ptr(), &view, PyBUF_ND) != 0) {
    throw nb::python_error();
  }
  struct Release {
    Py_buffer* v;
    ~Release() { PyBuffer_Release(v); }
  } release{&view};
  // The exporter's shape and length, checked (strided_import.h) before the
  // snapshot reads the bytes.
  static_assert(sizeof(Py_ssize_t) == sizeof(int64_t));
  BufferView bv;
  bv.buf = view.buf;
  bv.len = static_cast<int64_t>(view.len);
  bv.itemsize = static_cast<int64_t>(view.itemsize);
  bv.ndim = view.ndim;
  bv.shape = reinterpret_cast<const int64_t*>(view.shape);
  bv.strides = reinterpret_cast<const int64_t*>(view.strides);
  StridedPlan plan = ValueOrThrow(PlanBufferImport(bv, t, std::nullopt, op));
  if (!plan.contiguous) {
    ThrowType(std::string(op) + ": numpy gave a strided buffer for a "
              "C-contiguous array");
  }
  return frame->Snapshot(view.buf, static_cast<size_t>(view.len),
                         std::move(plan.shape), t);
}

bool IsNumpyData(nb::handle h) {
  return PyObject_TypeCheck(h.ptr(),
                            reinterpret_cast<PyTypeObject*>(np_ndarray)) ||
         PyObject_TypeCheck(h.ptr(),
                            reinterpret_cast<PyTypeObject*>(np_generic));
}

Tracer ToTracer(nb::handle h, const std::shared_ptr<TraceFrame>& frame,
                const char* op) {
  if (const PyTracer* t = AsPyTracer(h, op)) {
    if (t->frame == frame) return t->tracer;
    if (frame->IsWithin(t->frame.get())) return frame->Lift(*t);
    ThrowValue(std::string(op) + ": this Tracer belongs to a trace of " +
               t->frame->fn_name() + ", not to the trace of " +
               frame->fn_name() +
               " (nor to one enclosing it); a traced value can only be used "
               "in the function traced with it or in functions it calls");
  }
  if (nb::isinstance<ArrayImpl>(h)) {
    return frame->Capture(nb::cast<Array>(h));
  }
  if (nb::isinstance<Donated>(h)) {
    ThrowType(std::string(op) +
              ": a bt.donate() marker is not an array; pass it directly to a "
              "jit-compiled function (or bt.device_put)");
  }
  if (IsPythonScalar(h)) {
    const WeakScalar s = ToWeakScalar(h, op);
    return compiler::full(frame->context(), Shape{}, s);
  }
  if (h.is_none() || nb::isinstance<nb::str>(h) ||
      nb::isinstance<nb::bytes>(h)) {
    ThrowType(std::string(op) +
              ": expected an array, a Tracer or a scalar, "
              "not " +
              nb::type_name(h.type()).c_str());
  }
  return HostConstant(h, frame, op);
}

}  // namespace baton::python
