// baton._baton.lax: thin, 1:1 bindings of the C++ tracer's op functions
// (baton/compiler/tracer.h).
//
// Everything follows tracer.h: numpy broadcasting, promotion with
// promote_types, weakly typed Python scalars (`x * 2` keeps x's dtype,
// bfloat16 included), shape errors raised as ValueError naming the op.
// Operands may be Tracers, baton Arrays (captured: hidden arguments of the
// program, never constants), numpy data (captured: a snapshot constant,
// de-duplicated by content) or Python scalars. These functions build
// programs: an op with no Tracer operand uses the innermost trace on this
// thread, and raises TypeError outside any trace.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <vector>

#include "array_caster.h"
#include "baton/compiler/fft_ops.h"
#include "baton/compiler/sort_ops.h"
#include "baton/core/error.h"
#include "conversions.h"
#include "lax_internal.h"
#include "module.h"
#include "trace_frames.h"

namespace baton::python {
namespace {

using compiler::Tracer;
using compiler::WeakScalar;

std::optional<std::vector<int64_t>> ToAxes(nb::handle h, const char* op) {
  if (h.is_none()) return std::nullopt;
  return ToDims(h, op, "axes");
}

compiler::ScatterMode ToScatterMode(const std::string& mode) {
  if (mode == "set") return compiler::ScatterMode::kSet;
  if (mode == "add") return compiler::ScatterMode::kAdd;
  if (mode == "mul" || mode == "multiply") return compiler::ScatterMode::kMul;
  if (mode == "min") return compiler::ScatterMode::kMin;
  if (mode == "max") return compiler::ScatterMode::kMax;
  ThrowValue(
      "scatter: mode must be 'set', 'add', 'mul', 'min' or 'max', not '" +
      mode + "'");
}

MemoryKind ToKind(const std::string& name) { return MemoryKindFromName(name); }

// Starts of dynamic_slice / dynamic_update_slice: ints or integer scalar
// Tracers (ints become int32 constants).
std::vector<Tracer> ToStarts(nb::handle h, const std::shared_ptr<TraceFrame>& f,
                             const char* op) {
  if (!PySequence_Check(h.ptr())) {
    ThrowType(std::string(op) +
              ": start_indices must be a sequence of ints or scalar Tracers");
  }
  std::vector<Tracer> starts;
  for (nb::handle s : nb::iter(h)) starts.push_back(ToTracer(s, f, op));
  return starts;
}

std::vector<int64_t> OptDims(nb::handle h, const char* op, const char* what) {
  if (h.is_none()) return {};
  return ToDims(h, op, what);
}

}  // namespace
}  // namespace baton::python

void init_lax(nb::module_& m) {
  using namespace baton;
  using namespace baton::python;
  nb::module_ lax = nb::borrow<nb::module_>(m.attr("lax"));

  // ---- Elementwise ----
  for (const BinaryDef& d : BinaryOps()) {
    const BinaryDef* def = &d;
    lax.def(
        d.name,
        [def](nb::handle x, nb::handle y) { return ApplyBinary(*def, x, y); },
        nb::arg("x").none(), nb::arg("y").none(), d.doc);
  }
  lax.def(
      "compare",
      [](nb::handle x, nb::handle y, std::string direction) {
        for (char& c : direction) c = static_cast<char>(std::tolower(c));
        for (const char* n : {"eq", "ne", "lt", "le", "gt", "ge"}) {
          if (direction == n) return ApplyBinary(FindBinary(n), x, y);
        }
        ThrowValue(
            "compare: direction must be one of eq, ne, lt, le, gt, ge, "
            "not '" +
            direction + "'");
      },
      nb::arg("x"), nb::arg("y"), nb::arg("direction"),
      "Elementwise comparison; direction 'eq', 'ne', 'lt', 'le', 'gt' or "
      "'ge'. The result is bool.");
  for (const UnaryDef& d : UnaryOps()) {
    const UnaryDef* def = &d;
    lax.def(
        d.name, [def](nb::handle x) { return ApplyUnary(*def, x); },
        nb::arg("x").none(), d.doc);
  }
  auto select = [](nb::handle pred, nb::handle on_true, nb::handle on_false) {
    constexpr const char* kOp = "select";
    auto f = OpFrame(kOp, {pred, on_true, on_false});
    const Tracer p = ToTracer(pred, f, kOp);
    const bool st = IsPythonScalar(on_true), sf = IsPythonScalar(on_false);
    const bool wt = IsWeak(on_true), wf = IsWeak(on_false);
    const bool weak = wt && wf;
    if (st && !sf) {
      return WrapTracer(f,
                        compiler::where(p, ToWeakScalar(on_true, kOp),
                                        ToTracer(on_false, f, kOp)),
                        weak);
    }
    if (sf && !st) {
      return WrapTracer(f,
                        compiler::where(p, ToTracer(on_true, f, kOp),
                                        ToWeakScalar(on_false, kOp)),
                        weak);
    }
    Tracer x = ToTracer(on_true, f, kOp), y = ToTracer(on_false, f, kOp);
    if (wt && !wf) x = Unweaken(x, y.dtype());
    if (wf && !wt) y = Unweaken(y, x.dtype());
    return WrapTracer(f, compiler::where(p, x, y), weak);
  };
  const char* select_doc =
      "on_true where pred, else on_false. pred is converted to bool "
      "(nonzero is true); the three broadcast together and on_true / "
      "on_false promote (a Python scalar takes the other's dtype).";
  lax.def("select", select, nb::arg("pred"), nb::arg("on_true"),
          nb::arg("on_false"), select_doc);
  lax.def("where", select, nb::arg("condition"), nb::arg("x"), nb::arg("y"),
          select_doc);
  auto convert = [](nb::handle x, nb::handle dtype) {
    auto f = OpFrame("convert", {x});
    return WrapTracer(f, compiler::astype(ToTracer(x, f, "convert"),
                                          ToDType(dtype, "convert")));
  };
  lax.def("convert_element_type", convert, nb::arg("x"), nb::arg("dtype"),
          "x converted to dtype (x itself when it already has it). Floats to "
          "integers truncate toward zero.");
  lax.def("astype", convert, nb::arg("x"), nb::arg("dtype"),
          "Same as convert_element_type.");
  lax.def(
      "to_memory_kind",
      [](nb::handle x, const std::string& kind) {
        auto f = OpFrame("transfer", {x});
        return WrapTracer(f, compiler::to_memory_kind(
                                 ToTracer(x, f, "transfer"), ToKind(kind)));
      },
      nb::arg("x"), nb::arg("memory_kind"),
      "x moved to memory kind 'device', 'pinned_host' or 'unpinned_host' (a "
      "copy inside the program; x itself when it is already there). This is "
      "what bt.device_put(t, memory_kind=...) does to a Tracer.");

  // ---- Shapes ----
  lax.def(
      "reshape",
      [](nb::handle x, nb::handle shape) {
        auto f = OpFrame("reshape", {x});
        return WrapTracer(f,
                          compiler::reshape(ToTracer(x, f, "reshape"),
                                            ToDims(shape, "reshape", "shape")));
      },
      nb::arg("x"), nb::arg("shape"),
      "The same elements in row-major order, in a new shape; one dimension "
      "may be -1 (inferred).");
  lax.def(
      "transpose",
      [](nb::handle x, nb::handle permutation) {
        auto f = OpFrame("transpose", {x});
        const Tracer t = ToTracer(x, f, "transpose");
        if (permutation.is_none()) return WrapTracer(f, compiler::transpose(t));
        return WrapTracer(
            f, compiler::transpose(
                   t, ToDims(permutation, "transpose", "permutation")));
      },
      nb::arg("x"), nb::arg("permutation") = nb::none(),
      "Result dimension i is x's dimension permutation[i] (negative axes "
      "allowed); without a permutation the dimensions are reversed.");
  lax.def(
      "broadcast_to",
      [](nb::handle x, nb::handle shape) {
        auto f = OpFrame("broadcast_to", {x});
        return WrapTracer(f,
                          compiler::broadcast_to(
                              ToTracer(x, f, "broadcast_to"),
                              Shape(ToDims(shape, "broadcast_to", "shape"))));
      },
      nb::arg("x"), nb::arg("shape"), "numpy broadcasting of x to shape.");
  lax.def(
      "broadcast_in_dim",
      [](nb::handle x, nb::handle shape, nb::handle dims) {
        constexpr const char* kOp = "broadcast_in_dim";
        auto f = OpFrame(kOp, {x});
        return WrapTracer(
            f, compiler::broadcast_in_dim(
                   ToTracer(x, f, kOp), Shape(ToDims(shape, kOp, "shape")),
                   ToDims(dims, kOp, "broadcast_dimensions")));
      },
      nb::arg("x"), nb::arg("shape"), nb::arg("broadcast_dimensions"),
      "StableHLO broadcast_in_dim: x's dimension i becomes result dimension "
      "broadcast_dimensions[i] (size 1 or equal).");
  lax.def(
      "slice",
      [](nb::handle x, nb::handle start, nb::handle limit, nb::handle stride) {
        auto f = OpFrame("slice", {x});
        return WrapTracer(
            f, compiler::slice(ToTracer(x, f, "slice"),
                               ToDims(start, "slice", "start_indices"),
                               ToDims(limit, "slice", "limit_indices"),
                               OptDims(stride, "slice", "strides")));
      },
      nb::arg("x"), nb::arg("start_indices"), nb::arg("limit_indices"),
      nb::arg("strides") = nb::none(),
      "Static strided slice: per dimension the elements start, start+stride, "
      "... below limit (indices must be in range; no clipping).");
  lax.def(
      "dynamic_slice",
      [](nb::handle x, nb::handle starts, nb::handle sizes) {
        constexpr const char* kOp = "dynamic_slice";
        auto f = OpFrame(kOp, {x});
        return WrapTracer(f, compiler::dynamic_slice(
                                 ToTracer(x, f, kOp), ToStarts(starts, f, kOp),
                                 ToDims(sizes, kOp, "slice_sizes")));
      },
      nb::arg("x"), nb::arg("start_indices"), nb::arg("slice_sizes"),
      "A slice of static size at traced (or int) starts, clamped so that it "
      "fits.");
  lax.def(
      "dynamic_update_slice",
      [](nb::handle x, nb::handle update, nb::handle starts) {
        constexpr const char* kOp = "dynamic_update_slice";
        auto f = OpFrame(kOp, {x, update});
        return WrapTracer(f, compiler::dynamic_update_slice(
                                 ToTracer(x, f, kOp), ToTracer(update, f, kOp),
                                 ToStarts(starts, f, kOp)));
      },
      nb::arg("x"), nb::arg("update"), nb::arg("start_indices"),
      "x with the block at start_indices replaced by update (converted to "
      "x's dtype; starts clamped). Written in place when x is dead "
      "afterwards -- across a call only if x is donated.");
  lax.def(
      "concatenate",
      [](nb::handle operands, int64_t axis) {
        std::vector<nb::handle> hs;
        for (nb::handle h : nb::iter(operands)) hs.push_back(h);
        auto f = OpFrame("concatenate", hs);
        std::vector<Tracer> ts;
        for (nb::handle h : hs) ts.push_back(ToTracer(h, f, "concatenate"));
        return WrapTracer(f, compiler::concatenate(ts, axis));
      },
      nb::arg("operands"), nb::arg("axis") = 0,
      "The operands joined along axis (may be negative); they promote to a "
      "common dtype.");
  lax.def(
      "pad",
      [](nb::handle x, nb::handle value, nb::handle low, nb::handle high,
         nb::handle interior) {
        constexpr const char* kOp = "pad";
        auto f = OpFrame(kOp, {x, value});
        const Tracer t = ToTracer(x, f, kOp);
        auto lo = ToDims(low, kOp, "low"), hi = ToDims(high, kOp, "high");
        auto in = OptDims(interior, kOp, "interior");
        if (IsPythonScalar(value)) {
          return WrapTracer(
              f, compiler::pad(t, ToWeakScalar(value, kOp), lo, hi, in));
        }
        return WrapTracer(
            f, compiler::pad(t, ToTracer(value, f, kOp), lo, hi, in));
      },
      nb::arg("x"), nb::arg("padding_value"), nb::arg("low"), nb::arg("high"),
      nb::arg("interior") = nb::none(),
      "x padded with padding_value (a scalar, converted to x's dtype): per "
      "dimension `low` before, `high` after (negative values crop) and "
      "`interior` between elements.");

  // ---- Indexing ----
  auto take = [](nb::handle x, nb::handle indices, int64_t axis,
                 bool wrap_negative, std::optional<uint64_t> fill_bits) {
    auto f = OpFrame("gather", {x, indices});
    GatherBounds bounds;
    bounds.wrap_negative = wrap_negative;
    bounds.fill = fill_bits.has_value();
    bounds.fill_bits = fill_bits.value_or(0);
    return WrapTracer(
        f, compiler::take(ToTracer(x, f, "gather"),
                          ToTracer(indices, f, "gather"), axis, bounds));
  };
  const char* take_doc =
      "numpy take along axis: result shape x.shape[:axis] + indices.shape + "
      "x.shape[axis+1:]. Out-of-range indices clamp (negative ones to 0), "
      "unless wrap_negative (an index i < 0 reads i + dim first, numpy's "
      "negative indexing) or fill_bits (the bits of one element of x's "
      "dtype, at most 8 bytes, little-endian: what an index still outside "
      "[0, dim) reads, jax.numpy.take's mode='fill').";
  for (const char* name : {"take", "gather"}) {
    lax.def(name, take, nb::arg("x"), nb::arg("indices"), nb::arg("axis") = 0,
            nb::kw_only(), nb::arg("wrap_negative") = false,
            nb::arg("fill_bits") = nb::none(), take_doc);
  }
  lax.def(
      "sort",
      [](nb::handle x, int64_t dimension, bool descending) {
        auto f = OpFrame("sort", {x});
        return WrapTracer(
            f, compiler::sort(ToTracer(x, f, "sort"), dimension, descending));
      },
      nb::arg("x"), nb::arg("dimension") = -1, nb::arg("descending") = false,
      "x sorted along `dimension` (stable; NaNs last, -0.0 == 0.0); "
      "descending gives the ascending result reversed.");
  // The fft op as it is (no promotion); bt.lax.fft (baton/_lax_fft.py)
  // normalises JAX's forms of fft_type and promotes the operand.
  lax.def(
      "_fft",
      [](nb::handle x, const std::string& fft_type, nb::handle fft_lengths) {
        compiler::FftType type;
        if (fft_type == "fft") {
          type = compiler::FftType::kFft;
        } else if (fft_type == "ifft") {
          type = compiler::FftType::kIfft;
        } else if (fft_type == "rfft") {
          type = compiler::FftType::kRfft;
        } else if (fft_type == "irfft") {
          type = compiler::FftType::kIrfft;
        } else {
          ThrowValue(
              "fft: fft_type must be 'fft', 'ifft', 'rfft' or "
              "'irfft', not '" +
              fft_type + "'");
        }
        auto f = OpFrame(fft_type.c_str(), {x});
        return WrapTracer(
            f, compiler::fft(ToTracer(x, f, fft_type.c_str()), type,
                             ToDims(fft_lengths, "fft", "fft_lengths")));
      },
      nb::arg("x"), nb::arg("fft_type"), nb::arg("fft_lengths"),
      "The fft op (jax.lax.fft without promotion): fft_type 'fft', 'ifft', "
      "'rfft' or 'irfft' over the trailing len(fft_lengths) dimensions.");
  lax.def(
      "argsort",
      [](nb::handle x, int64_t dimension, bool descending) {
        auto f = OpFrame("argsort", {x});
        return WrapTracer(f, compiler::argsort(ToTracer(x, f, "argsort"),
                                               dimension, descending));
      },
      nb::arg("x"), nb::arg("dimension") = -1, nb::arg("descending") = false,
      "The int32 permutation that stably sorts x along `dimension` "
      "(descending: by the reversed order, ties in their original order).");
  lax.def(
      "scatter",
      [](nb::handle x, nb::handle indices, nb::handle updates, int64_t axis,
         const std::string& mode) {
        constexpr const char* kOp = "scatter";
        auto f = OpFrame(kOp, {x, indices, updates});
        const Tracer t = ToTracer(x, f, kOp);
        const Tracer idx = ToTracer(indices, f, kOp);
        const auto m = ToScatterMode(mode);
        if (IsPythonScalar(updates)) {
          return WrapTracer(
              f,
              compiler::scatter(t, idx, ToWeakScalar(updates, kOp), axis, m));
        }
        return WrapTracer(
            f, compiler::scatter(t, idx, ToTracer(updates, f, kOp), axis, m));
      },
      nb::arg("x"), nb::arg("indices"), nb::arg("updates"), nb::arg("axis") = 0,
      nb::arg("mode") = "set",
      "x with the slices `indices` along axis combined with updates "
      "(broadcast to take's result shape, converted to x's dtype). mode: "
      "'set' (one of repeated indices wins), 'add', 'mul', 'min', 'max' "
      "(repeated indices accumulate). Out-of-range indices are dropped. "
      "Written in place when x is dead afterwards (.at[] is built on this).");

  // ---- Reductions ----
  struct ReduceDef {
    const char* name;
    Tracer (*all)(const Tracer&);
    Tracer (*axes)(const Tracer&, std::vector<int64_t>, bool);
  };
  static const ReduceDef kReductions[] = {
      {"sum", +[](const Tracer& x) { return compiler::sum(x); },
       +[](const Tracer& x, std::vector<int64_t> a, bool k) {
         return compiler::sum(x, std::move(a), k);
       }},
      {"prod", +[](const Tracer& x) { return compiler::prod(x); },
       +[](const Tracer& x, std::vector<int64_t> a, bool k) {
         return compiler::prod(x, std::move(a), k);
       }},
      {"max", +[](const Tracer& x) { return compiler::max(x); },
       +[](const Tracer& x, std::vector<int64_t> a, bool k) {
         return compiler::max(x, std::move(a), k);
       }},
      {"min", +[](const Tracer& x) { return compiler::min(x); },
       +[](const Tracer& x, std::vector<int64_t> a, bool k) {
         return compiler::min(x, std::move(a), k);
       }},
  };
  for (const ReduceDef& r : kReductions) {
    const ReduceDef* def = &r;
    lax.def(
        r.name,
        [def](nb::handle x, nb::handle axes, bool keepdims) {
          const std::string op = std::string("reduce ") + def->name;
          auto f = OpFrame(op.c_str(), {x});
          const Tracer t = ToTracer(x, f, op.c_str());
          auto ax = ToAxes(axes, op.c_str());
          if (!ax) {
            if (!keepdims) return WrapTracer(f, def->all(t));
            std::vector<int64_t> all(t.rank());
            for (int i = 0; i < t.rank(); ++i) all[i] = i;
            ax = std::move(all);
          }
          return WrapTracer(f, def->axes(t, std::move(*ax), keepdims));
        },
        nb::arg("x"), nb::arg("axes") = nb::none(), nb::arg("keepdims") = false,
        "Reduction over `axes` (an int or a sequence, negative allowed; None: "
        "all). sum and prod of bool, int8 and int16 give int32 and of uint8 "
        "give uint32, as in JAX.");
  }

  // ---- Contractions ----
  lax.def(
      "matmul",
      [](nb::handle a, nb::handle b) {
        auto f = OpFrame("matmul", {a, b});
        return WrapTracer(f, compiler::matmul(ToTracer(a, f, "matmul"),
                                              ToTracer(b, f, "matmul")));
      },
      nb::arg("a"), nb::arg("b"),
      "numpy matmul: 1-D operands are vectors; batch dimensions broadcast.");
  lax.def(
      "dot_general",
      [](nb::handle lhs, nb::handle rhs, nb::handle dimension_numbers) {
        constexpr const char* kOp = "dot_general";
        auto f = OpFrame(kOp, {lhs, rhs});
        auto pair = [](nb::handle h) -> std::pair<nb::object, nb::object> {
          if (!PySequence_Check(h.ptr()) || PySequence_Size(h.ptr()) != 2) {
            PyErr_Clear();
            ThrowType(
                "dot_general: dimension_numbers must be ((lhs_contracting, "
                "rhs_contracting), (lhs_batch, rhs_batch))");
          }
          return {nb::steal(PySequence_GetItem(h.ptr(), 0)),
                  nb::steal(PySequence_GetItem(h.ptr(), 1))};
        };
        auto [contracting, batch] = pair(dimension_numbers);
        auto [lc, rc] = pair(contracting);
        auto [lb, rb] = pair(batch);
        compiler::DotGeneralAttrs d;
        d.lhs_contracting = ToDims(lc, kOp, "lhs_contracting");
        d.rhs_contracting = ToDims(rc, kOp, "rhs_contracting");
        d.lhs_batch = ToDims(lb, kOp, "lhs_batch");
        d.rhs_batch = ToDims(rb, kOp, "rhs_batch");
        return WrapTracer(f, compiler::dot_general(ToTracer(lhs, f, kOp),
                                                   ToTracer(rhs, f, kOp), d));
      },
      nb::arg("lhs"), nb::arg("rhs"), nb::arg("dimension_numbers"),
      "StableHLO dot_general with JAX's dimension_numbers "
      "((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch)). Result "
      "dimensions: batch, lhs free, rhs free. Operands promote first.");

  // ---- Creation ----
  lax.def(
      "iota",
      [](nb::handle dtype, nb::handle shape, int64_t dimension) {
        auto f = OpFrame("iota", {});
        return WrapTracer(
            f,
            compiler::iota(f->context(), ToDType(dtype, "iota"),
                           Shape(ToDims(shape, "iota", "shape")), dimension));
      },
      nb::arg("dtype"), nb::arg("shape"), nb::arg("dimension") = 0,
      "result[i...] = i[dimension] (a 1-D shape gives 0, 1, 2, ...).");
  lax.def(
      "full",
      [](nb::handle shape, nb::handle value, nb::handle dtype) {
        constexpr const char* kOp = "full";
        auto f = OpFrame(kOp, {value});
        const Shape s(ToDims(shape, kOp, "shape"));
        std::optional<DType> dt;
        if (!dtype.is_none()) dt = ToDType(dtype, kOp);
        if (IsPythonScalar(value)) {
          return WrapTracer(
              f, compiler::full(f->context(), s, ToWeakScalar(value, kOp), dt));
        }
        Tracer v = ToTracer(value, f, kOp);
        if (dt) v = compiler::astype(v, *dt);
        return WrapTracer(f, compiler::broadcast_to(v, s));
      },
      nb::arg("shape"), nb::arg("fill_value"), nb::arg("dtype") = nb::none(),
      "fill_value (a scalar or a Tracer) broadcast to shape. Without a "
      "dtype: a Python scalar's own (bool, int32, float32), a Tracer's dtype.");
  lax.def(
      "zeros",
      [](nb::handle shape, nb::handle dtype) {
        auto f = OpFrame("zeros", {});
        return WrapTracer(
            f, compiler::zeros(f->context(),
                               Shape(ToDims(shape, "zeros", "shape")),
                               ToDType(dtype, "zeros")));
      },
      nb::arg("shape"),
      nb::arg("dtype") = nb::borrow(NumpyDType(DType::kFloat32)),
      "Zeros of shape and dtype.");
  lax.def(
      "ones",
      [](nb::handle shape, nb::handle dtype) {
        auto f = OpFrame("ones", {});
        return WrapTracer(
            f,
            compiler::ones(f->context(), Shape(ToDims(shape, "ones", "shape")),
                           ToDType(dtype, "ones")));
      },
      nb::arg("shape"),
      nb::arg("dtype") = nb::borrow(NumpyDType(DType::kFloat32)),
      "Ones of shape and dtype.");
  lax.def(
      "constant",
      [](nb::handle value, nb::handle dtype) {
        constexpr const char* kOp = "constant";
        auto f = OpFrame(kOp, {});
        std::optional<DType> dt;
        if (!dtype.is_none()) dt = ToDType(dtype, kOp);
        if (IsPythonScalar(value)) {
          return WrapTracer(f, compiler::full(f->context(), Shape{},
                                              ToWeakScalar(value, kOp), dt));
        }
        if (nb::isinstance<PyTracer>(value) ||
            nb::isinstance<ArrayImpl>(value)) {
          ThrowType(
              "constant: expects host data (numpy arrays, scalars, "
              "lists), not a " +
              std::string(nb::type_name(value.type()).c_str()) +
              "; use lax.capture for a baton Array");
        }
        return WrapTracer(f, HostConstant(value, f, kOp, dt));
      },
      nb::arg("value"), nb::arg("dtype") = nb::none(),
      "Host data (numpy array, numpy scalar, list) captured as a constant: "
      "copied now (a snapshot: later changes to the numpy array never reach "
      "the program) and de-duplicated by content when compiled. A Python "
      "scalar gives a 0-d bool/int32/float32 constant unless dtype is given.");
  lax.def(
      "capture",
      [](const Array& array) {
        auto f = OpFrame("capture", {});
        return WrapTracer(f, f->Capture(array));
      },
      nb::arg("array"),
      "A baton Array used by the function being traced: it becomes a hidden "
      "argument of the compiled program (never a copy, never a constant). "
      "Operators and lax functions do this for Array operands by themselves.");
  lax.def(
      "as_tracer",
      [](nb::handle x) {
        auto f = OpFrame("as_tracer", {x});
        // A Python scalar (or a weak Tracer) stays weakly typed.
        return WrapTracer(f, ToTracer(x, f, "as_tracer"), IsWeak(x));
      },
      nb::arg("x"),
      "Any operand as a Tracer of the current trace: a Tracer itself, an "
      "Array captured, host data as a constant, a Python scalar as a 0-d "
      "constant of its default dtype, weakly typed.");
  lax.def(
      "_trace_device",
      []() -> Device* {
        const auto& f = CurrentFrame();
        return f ? f->device() : nullptr;
      },
      nb::rv_policy::reference,
      "The device the innermost trace compiles for (None outside traces).");
  lax.def("is_tracing", &IsTracing,
          "True while a function is being traced on this thread (bt.jit).");
}
