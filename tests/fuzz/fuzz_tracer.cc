// libFuzzer target: the C++ tracing API (compiler/tracer.h) -- the builder
// surface the Python front end's lax and numpy functions call: numpy
// broadcasting, dtype promotion, weakly typed scalars, reshape with -1,
// negative axes, keepdims, matmul's batch broadcasting, integer powers.
//
// The input picks a sequence of tracer calls with operands from the values
// traced so far and arguments that are mostly plausible and sometimes
// hostile (huge or negative sizes, out-of-range axes, scalars that do not
// fit the dtype). Invariants:
//  - a tracer function either returns a Tracer or throws a baton::Error
//    (InvalidArgumentError naming the op) -- no other exception, no crash,
//    no UB or sanitizer report;
//  - the program Finish returns passes program_checks.h (Verify, printer,
//    passes, reference interpreter, CPU backend, all agreeing).
#include <memory>
#include <string>
#include <vector>

#include "baton/compiler/tracer.h"
#include "baton/core/error.h"
#include "fuzz_input.h"
#include "program_checks.h"

namespace baton::fuzz {
namespace {

using c::TraceContext;
using c::Tracer;
using c::WeakScalar;

class TracerFuzzer {
 public:
  explicit TracerFuzzer(FuzzInput& in) : in_(in) {}

  c::Program Run() {
    const int steps = in_.Int(1, 32);
    for (int i = 0; i < steps && !in_.empty(); ++i) {
      try {
        Tracer t = Step();
        if (!t.valid()) {
          FuzzFail("tracer call " + std::to_string(last_) +
                   " returned an empty Tracer");
        }
        if (t.context() != &ctx_) FuzzFail("a Tracer of another context");
        if (!(t.type() == ctx_.program().type(t.id()))) {
          FuzzFail("a Tracer's type differs from its value's", &ctx_.program());
        }
        values_.push_back(t);
      } catch (const Error& e) {
        if (std::string(e.what()).empty())
          FuzzFail("an error without a message");
      }
    }
    std::vector<Tracer> outs;
    for (int n = in_.Int(0, 3); n > 0 && !values_.empty(); --n)
      outs.push_back(Pick());
    try {
      return ctx_.Finish(outs);
    } catch (const Error&) {
      // An empty Tracer among the outputs: refused, the trace still open.
      return ctx_.Finish({});
    }
  }

 private:
  // A traced value; an empty Tracer when there is none (the function must
  // throw for it).
  Tracer Pick() {
    if (values_.empty() || in_.Byte() >= 252) return Tracer();
    const size_t n = values_.size();
    return in_.Bool() ? values_[n - 1 - in_.Pick(std::min<size_t>(n, 8))]
                      : values_[in_.Pick(n)];
  }
  DType RandomDType() { return static_cast<DType>(in_.Int(0, kNumDTypes - 1)); }
  Shape RandomShape() {
    std::vector<int64_t> d(in_.Int(0, 4));
    for (int64_t& x : d) x = in_.Dim();
    return Shape(d);
  }
  WeakScalar Scalar() {
    switch (in_.Int(0, 2)) {
      case 0:
        return WeakScalar(in_.Bool());
      case 1:
        return WeakScalar(in_.Byte() < 200 ? in_.Small() : in_.Hostile());
      default: {
        static constexpr double kValues[] = {0.5,  -2.0, 1e300,
                                             -0.0, 3.0,  1e-30};
        return WeakScalar(kValues[in_.Pick(6)]);
      }
    }
  }
  // An axis for rank `rank`: numpy's range [-rank, rank), sometimes outside.
  int64_t Axis(int rank) {
    const uint8_t b = in_.Byte();
    if (b < 230 && rank > 0)
      return static_cast<int64_t>(in_.Pick(2 * rank)) - rank;
    return in_.Small();
  }
  std::vector<int64_t> Axes(int rank) {
    std::vector<int64_t> v(in_.Int(0, rank + (in_.Byte() >= 240 ? 1 : 0)));
    for (int64_t& a : v) a = Axis(rank);
    return v;
  }
  std::vector<int64_t> Smalls(int n) {
    std::vector<int64_t> v(n);
    for (int64_t& x : v) x = in_.Small();
    return v;
  }
  int Rank(const Tracer& t) { return t.valid() ? t.rank() : 0; }
  // A shape t can broadcast to (numpy rules), usually.
  Shape BroadcastTarget(const Tracer& t) {
    if (!t.valid() || in_.Byte() >= 230) return RandomShape();
    std::vector<int64_t> d;
    for (int i = in_.Int(0, 2); i > 0; --i) d.push_back(in_.Dim());
    for (int64_t x : t.shape().dims()) d.push_back(x == 1 ? in_.Dim() : x);
    return Shape(d);
  }
  std::vector<int64_t> ReshapeDims(const Tracer& t) {
    if (!t.valid() || in_.Byte() >= 220) {
      std::vector<int64_t> d(in_.Int(0, 4));
      for (int64_t& x : d) {
        const uint8_t b = in_.Byte();
        x = b < 60 ? -1 : b < 200 ? in_.Dim() : in_.Hostile();
      }
      return d;
    }
    std::vector<int64_t> d = t.shape().dims();
    if (in_.Bool()) d.insert(d.begin() + in_.Pick(d.size() + 1), 1);
    if (!d.empty() && in_.Bool()) d[in_.Pick(d.size())] = -1;
    return d;
  }

  Tracer Step() {
    const Tracer a = Pick();
    last_ = in_.Int(0, 19);
    switch (last_) {
      case 0:
        return ctx_.AddParameter(c::ValueType{
            RandomShape(), RandomDType(),
            static_cast<MemoryKind>(in_.Int(0, kNumMemoryKinds - 1))});
      case 1: {  // binary, tracer or weak scalar on either side
        const int form = in_.Int(0, 2);
        const Tracer b = Pick();
        const WeakScalar s = Scalar();
        switch (in_.Int(0, 8)) {
          case 0:
            return form == 0 ? a + b : form == 1 ? a + s : s + a;
          case 1:
            return form == 0 ? a - b : form == 1 ? a - s : s - a;
          case 2:
            return form == 0 ? a * b : form == 1 ? a * s : s * a;
          case 3:
            return form == 0 ? a / b : form == 1 ? a / s : s / a;
          case 4:
            return form == 0 ? (a & b) : (a & s);
          case 5:
            return form == 0 ? (a | b) : (a | s);
          case 6:
            return form == 0 ? c::maximum(a, b) : c::maximum(a, s);
          case 7:
            return form == 0 ? c::minimum(a, b) : c::minimum(a, s);
          default:
            return form == 0   ? c::pow(a, b)
                   : form == 1 ? c::pow(a, s)
                               : c::pow(s, a);
        }
      }
      case 2: {
        const bool scalar = in_.Bool();
        const Tracer b = Pick();
        const WeakScalar s = Scalar();
        switch (in_.Int(0, 5)) {
          case 0:
            return scalar ? c::eq(a, s) : c::eq(a, b);
          case 1:
            return scalar ? c::ne(a, s) : c::ne(a, b);
          case 2:
            return scalar ? c::lt(a, s) : c::lt(a, b);
          case 3:
            return scalar ? c::le(a, s) : c::le(a, b);
          case 4:
            return scalar ? c::gt(a, s) : c::gt(a, b);
          default:
            return scalar ? c::ge(a, s) : c::ge(a, b);
        }
      }
      case 3: {
        using Fn = Tracer (*)(const Tracer&);
        static constexpr Fn kFns[] = {
            c::exp, c::log,   c::tanh, c::logistic, c::sqrt, c::rsqrt, c::sin,
            c::cos, c::floor, c::ceil, c::round,    c::abs,  c::sign,  c::neg};
        if (in_.Byte() < 20) return ~a;
        return kFns[in_.Pick(14)](a);
      }
      case 4: {
        const Tracer t = Pick(), f = Pick();
        switch (in_.Int(0, 2)) {
          case 0:
            return c::where(a, t, f);
          case 1:
            return c::where(a, t, Scalar());
          default:
            return c::where(a, Scalar(), f);
        }
      }
      case 5:
        if (in_.Bool()) return c::astype(a, RandomDType());
        return c::to_memory_kind(
            a, static_cast<MemoryKind>(in_.Int(0, kNumMemoryKinds - 1)));
      case 6:
        return c::reshape(a, ReshapeDims(a));
      case 7:
        if (in_.Bool()) return c::transpose(a);
        return c::transpose(a, Axes(Rank(a)));
      case 8:
        if (in_.Bool()) return c::broadcast_to(a, BroadcastTarget(a));
        {
          const Shape s = BroadcastTarget(a);
          return c::broadcast_in_dim(a, s, Axes(s.rank()));
        }
      case 9: {
        std::vector<int64_t> start, limit, stride;
        for (int i = 0; i < Rank(a); ++i) {
          const int64_t d = a.shape()[i];
          start.push_back(in_.Index(d + 1));
          limit.push_back(in_.Byte() < 200 ? d : in_.Index(d + 1));
          stride.push_back(in_.Byte() < 200 ? in_.Int(1, 3) : in_.Small());
        }
        if (in_.Byte() < 40) stride.clear();
        if (in_.Byte() >= 245) start = Smalls(in_.Int(0, 4));
        return c::slice(a, start, limit, stride);
      }
      case 10: {
        std::vector<Tracer> starts;
        for (int i = in_.Byte() < 230 ? Rank(a) : in_.Int(0, 4); i > 0; --i) {
          starts.push_back(Pick());
        }
        if (in_.Bool()) return c::dynamic_update_slice(a, Pick(), starts);
        std::vector<int64_t> sizes;
        for (int i = 0; i < Rank(a); ++i)
          sizes.push_back(in_.Index(a.shape()[i] + 1));
        return c::dynamic_slice(a, starts, sizes);
      }
      case 11: {
        std::vector<Tracer> xs{a};
        for (int i = in_.Int(0, 3); i > 0; --i)
          xs.push_back(in_.Bool() ? a : Pick());
        if (in_.Byte() < 5) xs.clear();
        return c::concatenate(xs, Axis(Rank(a)));
      }
      case 12: {
        const int r = Rank(a);
        std::vector<int64_t> interior(in_.Bool() ? 0 : r);
        for (int64_t& x : interior)
          x = in_.Byte() < 230 ? in_.Int(0, 2) : in_.Small();
        if (in_.Bool())
          return c::pad(a, Scalar(), Smalls(r), Smalls(r), interior);
        return c::pad(a, Pick(), Smalls(r), Smalls(r), interior);
      }
      case 13: {
        const Tracer idx = Pick();
        if (in_.Bool()) return c::take(a, idx, Axis(Rank(a)));
        const auto mode = static_cast<ScatterMode>(in_.Int(0, 4));
        if (in_.Bool())
          return c::scatter(a, idx, Scalar(), Axis(Rank(a)), mode);
        return c::scatter(a, idx, Pick(), Axis(Rank(a)), mode);
      }
      case 14: {
        const bool all = in_.Bool(), keep = in_.Bool();
        const std::vector<int64_t> axes = Axes(Rank(a));
        switch (in_.Int(0, 3)) {
          case 0:
            return all ? c::sum(a) : c::sum(a, axes, keep);
          case 1:
            return all ? c::prod(a) : c::prod(a, axes, keep);
          case 2:
            return all ? c::max(a) : c::max(a, axes, keep);
          default:
            return all ? c::min(a) : c::min(a, axes, keep);
        }
      }
      case 15: {
        const Tracer b = Pick();
        if (in_.Bool()) return c::matmul(a, b);
        c::DotGeneralAttrs d{Axes(Rank(a)), Axes(Rank(b)), Axes(Rank(a)),
                             Axes(Rank(b))};
        return c::dot_general(a, b, d);
      }
      case 16: {
        const Shape s = RandomShape();
        switch (in_.Int(0, 3)) {
          case 0:
            return c::iota(ctx_, RandomDType(), s, Axis(s.rank()));
          case 1:
            return c::full(ctx_, s, Scalar(),
                           in_.Bool() ? std::optional<DType>(RandomDType())
                                      : std::nullopt);
          case 2:
            return in_.Bool() ? c::zeros(ctx_, s, RandomDType())
                              : c::ones(ctx_, s, RandomDType());
          default: {
            std::vector<int32_t> v(in_.Int(0, 6));
            for (int32_t& x : v) x = static_cast<int32_t>(in_.Small());
            return c::constant(ctx_, v, Shape{static_cast<int64_t>(v.size())});
          }
        }
      }
      case 17: {  // integer powers: chains of multiplications
        const int64_t n = in_.Byte() < 200 ? in_.Small() : in_.Hostile();
        return c::pow(a, WeakScalar(n));
      }
      case 18:
        return -a;
      default: {  // a tracer of another, finished-later context
        TraceContext other;
        const Tracer foreign =
            other.AddParameter(c::ValueType{Shape{}, DType::kFloat32});
        return a + foreign;
      }
    }
  }

  FuzzInput& in_;
  TraceContext ctx_;
  std::vector<Tracer> values_;
  int last_ = -1;  // the kind of call being made, for messages
};

}  // namespace
}  // namespace baton::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace baton::fuzz;
  FuzzInput in(data, size);
  TracerFuzzer f(in);
  const c::Program program = f.Run();
  CheckProgram(program, in, /*whole_groups=*/true, /*while_trips=*/0,
               /*run_backend=*/in.Byte() < 200);
  return 0;
}
