// libFuzzer target: the IR builder and shape inference (compiler/ir.h,
// shape_inference.h), then everything downstream of a program that built.
//
// The input is a stream of choices (fuzz_input.h): how many instructions,
// then for each an op kind -- every OpKind, calls and control flow with
// small regions included -- its operands (mostly well-typed picks, now and
// then any value or an id that does not exist) and its attributes (mostly
// plausible, sometimes hostile: negative or huge sizes up to INT64_MAX,
// out-of-range axes, wrong list lengths, empty lists). Invariants:
//  - Program::Add never crashes, overflows or trips a sanitizer: a bad op
//    returns a non-OK Status and leaves the program unchanged; every value
//    it accepts has a shape that passes Shape::Check().
//  - The program that results goes through program_checks.h: Verify,
//    printer, passes, reference interpreter and CPU backend, which must all
//    accept it and agree.
// While loops are bounded by construction (a counter below a small limit)
// unless the input asks for free-form regions, which are then only
// verified, printed and optimized, never run.
#include <algorithm>
#include <atomic>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "baton/compiler/control_flow.h"
#include "baton/compiler/host_callback.h"
#include "program_builder_base.h"

namespace baton::fuzz {
namespace {

constexpr int kMaxDepth = 2;

// Reads every byte of its operands (so the sanitizers check that the
// executors pass whole, live operands) and does nothing else.
class ReadingCallback final : public c::HostCallback {
 public:
  Status Call(std::span<const c::HostCallbackOperand> operands) const override {
    unsigned sum = 0;
    for (const c::HostCallbackOperand& op : operands) {
      const auto* p = static_cast<const unsigned char*>(op.data);
      for (int64_t i = 0; i < op.type->byte_size(); ++i) sum += p[i];
    }
    sink_.fetch_add(sum, std::memory_order_relaxed);
    return OkStatus();
  }
  std::string name() const override { return "read"; }

 private:
  mutable std::atomic<unsigned> sink_{0};
};

class Builder : public BuilderBase {
 public:
  using BuilderBase::BuilderBase;

  // A program with these parameters and `steps` random instructions.
  void Build(const std::vector<ValueType>& params, int steps) {
    for (const ValueType& t : params) {
      if (!p_.AddParameter(t).ok())
        FuzzFail("AddParameter of a valid type failed");
    }
    for (int i = 0; i < steps && s_.budget > 0 && !in_.empty(); ++i) Step();
  }

  void Step() {
    --s_.budget;
    Result<ValueId> r = Emit(in_.Int(0, c::kNumOpKinds + 3));
    if (!r.ok() && r.status().message().empty())
      FuzzFail("an error without a message");
  }

 private:
  Result<ValueId> Constant() {
    if (in_.Byte() >= 250) return Add(c::ConstantAttrs{nullptr}, {});
    std::vector<int64_t> dims(in_.Int(0, 2));
    for (int64_t& d : dims) d = in_.Int(0, 4);
    const DType dtype = RandomDType();
    c::Literal lit(Shape(dims), dtype);
    auto* b = static_cast<uint8_t*>(lit.untyped_mutable_data());
    in_.Bytes(b, static_cast<size_t>(lit.byte_size()));
    if (dtype == DType::kBool) {
      for (int64_t i = 0; i < lit.byte_size(); ++i) b[i] &= 1;
    }
    return Add(
        c::ConstantAttrs{std::make_shared<const c::Literal>(std::move(lit))},
        {});
  }

  Result<ValueId> BroadcastInDim() {
    const ValueId x = Any();
    if (!Valid(x) || in_.Byte() >= 230) {
      const Shape s = RandomShape();
      return Add(c::BroadcastInDimAttrs{s, Axes(in_.Int(0, 4), s.rank())}, {x});
    }
    const Shape xs = T(x).shape;
    const int extra = in_.Int(0, 2);
    const int rank = xs.rank() + extra;
    std::vector<int64_t> positions(rank);
    std::iota(positions.begin(), positions.end(), 0);
    for (int i = 0; i < extra; ++i)
      positions.erase(positions.begin() + in_.Pick(positions.size()));
    std::vector<int64_t> out(rank);
    for (int64_t& d : out) d = in_.Dim();
    for (int i = 0; i < xs.rank(); ++i) {
      if (xs[i] != 1 || in_.Bool()) out[positions[i]] = xs[i];
    }
    return Add(c::BroadcastInDimAttrs{Shape(out), positions}, {x});
  }

  Result<ValueId> Reshape() {
    const ValueId x = Any();
    if (!Valid(x) || in_.Byte() >= 230)
      return Add(c::ReshapeAttrs{RandomShape()}, {x});
    std::vector<int64_t> d = T(x).shape.dims();
    for (int k = in_.Int(0, 2); k > 0; --k) {
      const int op = in_.Int(0, 3);
      const size_t i = in_.Pick(d.size() + 1);
      if (op == 0) d.insert(d.begin() + i, 1);
      if (op == 1 && i + 1 < d.size()) {
        d[i] *= d[i + 1];
        d.erase(d.begin() + i + 1);
      }
      if (op == 2 && i < d.size() && d[i] % 2 == 0 && d[i] > 0) {
        d[i] /= 2;
        d.insert(d.begin() + i, 2);
      }
      if (op == 3 && i < d.size() && d[i] == 1) d.erase(d.begin() + i);
    }
    return Add(c::ReshapeAttrs{Shape(d)}, {x});
  }

  Result<ValueId> Slice() {
    const ValueId x = Any();
    if (!Valid(x)) return Add(c::SliceAttrs{}, {x});
    const Shape s = T(x).shape;
    c::SliceAttrs a;
    for (int i = 0; i < s.rank(); ++i) {
      const int64_t start = in_.Index(s[i] + 1);
      const int64_t left = start >= 0 && start <= s[i] ? s[i] - start + 1 : 1;
      a.start.push_back(start);
      a.limit.push_back(WrappingAdd(start, left > 0 ? in_.Index(left) : 0));
      a.stride.push_back(in_.Byte() < 230 ? in_.Int(1, 3) : in_.Hostile());
    }
    if (in_.Byte() >= 240) a.limit = Smalls(ListLength(s.rank()));
    if (in_.Byte() >= 250) a.start.push_back(0);
    return Add(std::move(a), {x});
  }

  Result<ValueId> DynamicSlice(bool update) {
    const ValueId x = Any();
    OperandList ops{x};
    if (!Valid(x)) return Add(c::DynamicSliceAttrs{}, ops);
    const Shape s = T(x).shape;
    if (update) {
      ops.push_back(FindOr([&](const ValueType& t) {
        if (t.shape.rank() != s.rank() || t.dtype != T(x).dtype) return false;
        for (int i = 0; i < s.rank(); ++i) {
          if (t.shape[i] > s[i]) return false;
        }
        return true;
      }));
    }
    const int n = ListLength(s.rank());
    for (int i = 0; i < n; ++i) ops.push_back(IndexScalar());
    if (update) return Add(c::DynamicUpdateSliceAttrs{}, ops);
    std::vector<int64_t> sizes;
    for (int i = 0; i < ListLength(s.rank()); ++i) {
      sizes.push_back(i < s.rank() ? in_.Index(s[i] + 1) : in_.Small());
    }
    return Add(c::DynamicSliceAttrs{sizes}, ops);
  }

  Result<ValueId> Concatenate() {
    // Many copies of one value, usually a large one, stress the summed
    // dimension.
    const bool many = in_.Byte() >= 240;
    const ValueId x = !many ? Any() : FindOr([](const ValueType& t) {
      for (int64_t d : t.shape.dims()) {
        if (d > kMaxElements / 17) return true;
      }
      return false;
    });
    OperandList ops{x};
    const int n = many ? in_.Int(16, 40) : in_.Int(0, 3);
    for (int i = 0; i < n; ++i) {
      ops.push_back(!many && (in_.Bool() || !Valid(x))
                        ? FindOr([&](const ValueType& t) {
                            return Valid(x) &&
                                   t.shape.rank() == T(x).shape.rank() &&
                                   t.dtype == T(x).dtype;
                          })
                        : x);
    }
    const int rank = Valid(x) ? T(x).shape.rank() : 1;
    return Add(c::ConcatenateAttrs{in_.Index(rank)}, ops);
  }

  Result<ValueId> Pad() {
    const ValueId x = Any();
    const int rank = Valid(x) ? T(x).shape.rank() : 0;
    ValueId v = FindOr([&](const ValueType& t) {
      return Valid(x) && t.shape.rank() == 0 && t.dtype == T(x).dtype;
    });
    if (Valid(x) && in_.Bool()) {  // a padding value of the right type
      Result<ValueId> k = ScalarInt(T(x).dtype, in_.Small());
      if (k.ok()) v = k.value();
    }
    c::PadAttrs a{Smalls(ListLength(rank)), Smalls(ListLength(rank)), {}};
    for (int i = 0; i < ListLength(rank); ++i) {
      a.interior.push_back(in_.Byte() < 230 ? in_.Int(0, 2) : in_.Hostile());
    }
    return Add(std::move(a), {x, v});
  }

  ValueId Indices() {
    return FindOr([](const ValueType& t) { return is_integer(t.dtype); });
  }

  Result<ValueId> Scatter() {
    const ValueId x = Any(), idx = Indices();
    const int rank = Valid(x) ? T(x).shape.rank() : 1;
    const int64_t axis = in_.Index(rank);
    ValueId updates = Any();
    if (in_.Bool()) {  // shaped like the gather, usually
      Result<ValueId> g = Add(c::GatherAttrs{axis}, {x, idx});
      if (g.ok()) updates = g.value();
    }
    return Add(c::ScatterAttrs{axis, static_cast<ScatterMode>(in_.Int(0, 4))},
               {x, idx, updates});
  }

  Result<ValueId> DotGeneral() {
    const ValueId l = Any();
    const ValueId r = in_.Bool() ? l : FindOr([&](const ValueType& t) {
      return Valid(l) && t.dtype == T(l).dtype;
    });
    c::DotGeneralAttrs a;
    if (Valid(l) && Valid(r) && in_.Byte() < 230) {
      // Pairs of equal-sized dimensions: batch first, then contracting.
      std::vector<bool> lu(T(l).shape.rank()), ru(T(r).shape.rank());
      const int pairs = in_.Int(0, 3);
      for (int k = 0; k < pairs; ++k) {
        for (int i = 0; i < T(l).shape.rank(); ++i) {
          for (int j = 0; j < T(r).shape.rank(); ++j) {
            if (lu[i] || ru[j] || T(l).shape[i] != T(r).shape[j] ||
                in_.Byte() < 128)
              continue;
            lu[i] = ru[j] = true;
            const bool batch = in_.Bool() && a.lhs_contracting.empty();
            (batch ? a.lhs_batch : a.lhs_contracting).push_back(i);
            (batch ? a.rhs_batch : a.rhs_contracting).push_back(j);
            i = T(l).shape.rank();
            break;
          }
        }
      }
    } else {
      const int rl = Valid(l) ? T(l).shape.rank() : 1,
                rr = Valid(r) ? T(r).shape.rank() : 1;
      a = {Axes(in_.Int(0, 2), rl), Axes(in_.Int(0, 2), rr),
           Axes(in_.Int(0, 2), rl), Axes(in_.Int(0, 2), rr)};
    }
    return Add(std::move(a), {l, r});
  }

  // Operands for a region: `n` values (valid ones; a region's parameters
  // are their types).
  std::vector<ValueId> RegionOperands(int n) {
    std::vector<ValueId> ops;
    for (int i = 0; i < n && p_.num_values() > 0; ++i) {
      ops.push_back(static_cast<ValueId>(
          p_.num_values() - 1 - in_.Pick(std::min(p_.num_values(), 12))));
    }
    return ops;
  }
  std::vector<ValueType> TypesOf(const std::vector<ValueId>& ids) {
    std::vector<ValueType> t;
    for (ValueId v : ids) t.push_back(T(v));
    return t;
  }
  std::shared_ptr<const Program> Region(const std::vector<ValueType>& params) {
    auto b = std::make_unique<Builder>(in_, s_, depth_ + 1);
    b->Build(params, in_.Int(0, 6));
    b->SetOutputs(b->SomeOutputs(0, 3));
    return std::make_shared<const Program>(std::move(b->program()));
  }
  std::shared_ptr<const Program> RegionReturning(
      const std::vector<ValueType>& params,
      const std::vector<ValueType>& results) {
    Builder b(in_, s_, depth_ + 1);
    b.Build(params, in_.Int(0, 6));
    b.SetOutputs(b.OutputsOfTypes(results));
    return std::make_shared<const Program>(std::move(b.program()));
  }

  // A custom rule (custom_jvp's, or custom_vjp's forward) whose primal
  // outputs are the body's own, as a correct user rule's are: a checkpoint
  // call of `body` on the rule's first parameters, then random values of the
  // `rest` types (the tangents; random ops may come before either). JVP and
  // VJP take a custom function's primal outputs from its rule, as JAX does,
  // and neither checks them against the body's; a rule that disagreed would
  // make the transform checks' "same primal outputs" fail on a program that
  // is differentiated correctly.
  std::shared_ptr<const Program> RuleCallingBody(
      const std::shared_ptr<const Program>& body,
      const std::vector<ValueType>& params,
      const std::vector<ValueType>& rest) {
    Builder b(in_, s_, depth_ + 1);
    b.Build(params, in_.Int(0, 6));
    std::vector<ValueId> outs;
    OperandList primals;
    for (int i = 0; i < body->num_parameters(); ++i) primals.push_back(i);
    c::CallAttrs call;
    call.kind = c::CallKind::kCheckpoint;
    call.body = body;
    for (size_t i = 0; i < body->outputs().size(); ++i) {
      call.output_index = static_cast<int>(i);
      const Result<ValueId> r = b.Add(call, primals);
      outs.push_back(r.ok() ? r.value() : b.Any());
    }
    for (ValueId v : b.OutputsOfTypes(rest)) outs.push_back(v);
    b.SetOutputs(outs);
    return std::make_shared<const Program>(std::move(b.program()));
  }

  // Emits a control-flow op: whole (usually) or one member only.
  Result<ValueId> Group(OpAttrs attrs, std::vector<ValueId> ops) {
    // Now and then an operand that does not exist (a valid substitute could
    // unbound a while loop's counter).
    if (!ops.empty() && in_.Byte() >= 250) {
      ops[in_.Pick(ops.size())] =
          in_.Bool() ? -1 - in_.Int(0, 2) : p_.num_values() + in_.Int(0, 2);
    }
    if (in_.Byte() >= 245) {
      s_.whole_groups = false;
      return Add(c::WithOutputIndex(std::move(attrs), in_.Int(-1, 2)),
                 OperandList(ops));
    }
    const int before = p_.num_values();
    Result<std::vector<ValueId>> r =
        c::AddRegionGroup(p_, std::move(attrs), ops);
    if (r.ok() && r.value().empty())
      FuzzFail("AddRegionGroup returned no values");
    return Checked(before, r.ok() ? Result<ValueId>(r.value().back())
                                  : Result<ValueId>(r.status()));
  }

  Result<ValueId> While() {
    std::vector<ValueId> carries = RegionOperands(in_.Int(0, 3));
    const std::vector<ValueId> inv = RegionOperands(in_.Int(0, 2));
    if (in_.Byte() >= 240) {  // free-form regions: may never stop
      std::vector<ValueId> ops = carries;
      ops.insert(ops.end(), inv.begin(), inv.end());
      const std::vector<ValueType> types = TypesOf(ops);
      s_.while_trips = -1;
      return Group(
          c::WhileAttrs{0, static_cast<int>(carries.size()) + in_.Int(-1, 1),
                        Region(types), Region(types)},
          ops);
    }
    // Bounded: carry 0 counts up to `limit`.
    const int64_t limit = in_.Int(0, 6);
    if (s_.while_trips >= 0) s_.while_trips = std::max(s_.while_trips, limit);
    Result<ValueId> zero = ScalarInt(DType::kInt32, 0);
    if (!zero.ok()) return zero;
    std::vector<ValueId> ops{zero.value()};
    ops.insert(ops.end(), carries.begin(), carries.end());
    ops.insert(ops.end(), inv.begin(), inv.end());
    const std::vector<ValueType> types = TypesOf(ops);
    Program cond;
    for (const ValueType& t : types) (void)cond.AddParameter(t);
    Result<ValueId> k =
        cond.Add(c::ConstantAttrs{std::make_shared<const c::Literal>(
                     c::Literal::Scalar<int32_t>(limit))},
                 {});
    Result<ValueId> lt =
        cond.Add(c::CompareAttrs{CompareOp::kLt}, {0, k.value()});
    if (!lt.ok() || !cond.SetOutputs({lt.value()}).ok())
      FuzzFail("while condition");
    Builder body(in_, s_, depth_ + 1);
    body.Build(types, in_.Int(0, 6));
    Result<ValueId> one = body.ScalarInt(DType::kInt32, 1);
    Result<ValueId> next =
        body.Add(c::BinaryAttrs{BinaryOp::kAdd}, {0, one.value()});
    std::vector<ValueId> outs{next.value()};
    for (ValueId v : body.OutputsOfTypes(TypesOf(carries))) outs.push_back(v);
    body.SetOutputs(outs);
    return Group(c::WhileAttrs{0, 1 + static_cast<int>(carries.size()),
                               std::make_shared<const Program>(std::move(cond)),
                               std::make_shared<const Program>(
                                   std::move(body.program()))},
                 ops);
  }

  Result<ValueId> Scan() {
    const std::vector<ValueId> carries = RegionOperands(in_.Int(0, 2));
    std::vector<ValueId> xs;
    int64_t length = in_.Byte() < 230 ? in_.Int(0, 4) : in_.Hostile();
    const int nx = in_.Int(0, 2);
    for (int j = 0; j < nx; ++j) {
      ValueId x =
          j == 0 ? Find([](const ValueType& t) { return t.shape.rank() > 0; })
                 : Find([&](const ValueType& t) {
                     return t.shape.rank() > 0 && t.shape[0] == length;
                   });
      if (x == c::kNoValue) break;
      if (j == 0 && in_.Byte() < 240) length = T(x).shape[0];
      xs.push_back(x);
    }
    const std::vector<ValueId> inv = RegionOperands(in_.Int(0, 1));
    std::vector<ValueId> ops = carries;
    ops.insert(ops.end(), xs.begin(), xs.end());
    ops.insert(ops.end(), inv.begin(), inv.end());
    std::vector<ValueType> params = TypesOf(ops);
    for (size_t j = 0; j < xs.size(); ++j) {
      ValueType& t = params[carries.size() + j];
      std::vector<int64_t> d = t.shape.dims();
      d.erase(d.begin());
      t.shape = Shape(d);
    }
    Builder body(in_, s_, depth_ + 1);
    body.Build(params, in_.Int(0, 6));
    std::vector<ValueId> outs = body.OutputsOfTypes(TypesOf(carries));
    for (ValueId y : body.SomeOutputs(0, 2)) outs.push_back(y);
    body.SetOutputs(outs);
    return Group(c::ScanAttrs{0, static_cast<int>(carries.size()),
                              static_cast<int>(xs.size()), length, in_.Bool(),
                              std::make_shared<const Program>(
                                  std::move(body.program()))},
                 ops);
  }

  Result<ValueId> Case() {
    std::vector<ValueId> ops{FindOr([](const ValueType& t) {
      return t.shape.rank() == 0 && t.dtype == DType::kInt32;
    })};
    if (in_.Bool()) {
      Result<ValueId> i = ScalarInt(DType::kInt32, in_.Small());
      if (i.ok()) ops[0] = i.value();
    }
    for (ValueId v : RegionOperands(in_.Int(0, 3))) ops.push_back(v);
    if (!Valid(ops[0])) return Add(c::CaseAttrs{}, OperandList(ops));
    const std::vector<ValueType> params =
        TypesOf(std::vector<ValueId>(ops.begin() + 1, ops.end()));
    c::CaseAttrs a;
    a.branches.push_back(Region(params));
    const std::vector<ValueType> results = a.branches[0]->output_types();
    for (int b = in_.Int(0, 2); b > 0; --b)
      a.branches.push_back(RegionReturning(params, results));
    return Group(std::move(a), ops);
  }

  Result<ValueId> Call() {
    c::CallAttrs a;
    a.kind = static_cast<c::CallKind>(in_.Int(0, 4));
    if (a.kind == c::CallKind::kStopGradient || a.kind == c::CallKind::kName) {
      a.name = std::string(in_.Int(0, 3), 'n');
      return Add(std::move(a), {Any()});
    }
    const std::vector<ValueId> ops = RegionOperands(in_.Int(0, 3));
    const std::vector<ValueType> params = TypesOf(ops);
    a.body = Region(params);
    const std::vector<ValueType> outs = a.body->output_types();
    std::vector<ValueType> doubled = params;
    doubled.insert(doubled.end(), params.begin(), params.end());
    if (a.kind == c::CallKind::kCustomJvp) {
      a.rule = RuleCallingBody(a.body, doubled, outs);
    } else if (a.kind == c::CallKind::kCustomVjp) {
      a.rule = RuleCallingBody(a.body, params, {});
      a.rule2 = RegionReturning(outs, params);
    }
    // A call group: one call per body output (sometimes only one of them).
    const int n = in_.Byte() < 240 ? static_cast<int>(outs.size()) : 1;
    Result<ValueId> last = InvalidArgument("call: no outputs");
    for (int i = 0; i < n; ++i) {
      c::CallAttrs ai = a;
      ai.output_index = n == 1 && outs.size() != 1 ? in_.Int(-1, 3) : i;
      last = Add(std::move(ai), OperandList(ops));
      if (!last.ok()) return last;
    }
    return last;
  }

  Result<ValueId> Emit(int kind) {
    using K = c::OpKind;
    switch (static_cast<K>(kind)) {
      case K::kParameter:
        if (depth_ == 0 && in_.Bool()) {
          const int before = p_.num_values();
          return Checked(before, p_.AddParameter(RandomType()));
        }
        return Add(c::ParameterAttrs{static_cast<int>(WrappingAdd(
                                         p_.num_parameters(), in_.Small())),
                                     RandomType()},
                   {});
      case K::kConstant:
        return Constant();
      case K::kIota: {
        const Shape s = RandomShape();
        return Add(c::IotaAttrs{s, RandomDType(), in_.Index(s.rank())}, {});
      }
      case K::kConvert:
        return Add(c::ConvertAttrs{RandomDType()}, {Any()});
      case K::kUnary:
        return Add(
            c::UnaryAttrs{static_cast<UnaryOp>(in_.Int(0, kNumUnaryOps - 1))},
            {Any()});
      case K::kBinary:
      case K::kCompare: {
        const ValueId a = Any();
        const ValueId b = FindOr([&](const ValueType& t) {
          return Valid(a) && t.shape == T(a).shape && t.dtype == T(a).dtype;
        });
        if (static_cast<K>(kind) == K::kBinary) {
          return Add(c::BinaryAttrs{static_cast<BinaryOp>(
                         in_.Int(0, kNumBinaryOps - 1))},
                     {a, b});
        }
        return Add(c::CompareAttrs{static_cast<CompareOp>(in_.Int(0, 5))},
                   {a, b});
      }
      case K::kSelect: {
        const ValueId t = Any();
        auto same = [&](bool pred) {
          return FindOr([&](const ValueType& u) {
            return Valid(t) && u.shape == T(t).shape &&
                   (pred ? u.dtype == DType::kBool : u.dtype == T(t).dtype);
          });
        };
        const ValueId pred = same(true);
        return Add(c::SelectAttrs{}, {pred, t, same(false)});
      }
      case K::kBroadcastInDim:
        return BroadcastInDim();
      case K::kReshape:
        return Reshape();
      case K::kTranspose: {
        const ValueId x = Any();
        return Add(
            c::TransposeAttrs{Permutation(Valid(x) ? T(x).shape.rank() : 1)},
            {x});
      }
      case K::kSlice:
        return Slice();
      case K::kDynamicSlice:
        return DynamicSlice(false);
      case K::kDynamicUpdateSlice:
        return DynamicSlice(true);
      case K::kConcatenate:
        return Concatenate();
      case K::kPad:
        return Pad();
      case K::kGather: {
        const ValueId x = Any();
        return Add(c::GatherAttrs{in_.Index(Valid(x) ? T(x).shape.rank() : 1)},
                   {x, Indices()});
      }
      case K::kScatter:
        return Scatter();
      case K::kReduce: {
        const ValueId x = Any();
        const int rank = Valid(x) ? T(x).shape.rank() : 1;
        std::vector<int64_t> axes = Axes(in_.Int(0, rank), rank);
        if (in_.Bool()) {  // distinct, as a front end gives them
          std::sort(axes.begin(), axes.end());
          axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
        }
        return Add(c::ReduceAttrs{static_cast<ReduceOp>(in_.Int(0, 3)), axes},
                   {x});
      }
      case K::kDotGeneral:
        return DotGeneral();
      case K::kTransfer:
        return Add(c::TransferAttrs{static_cast<MemoryKind>(
                       in_.Int(0, kNumMemoryKinds - 1))},
                   {Any()});
      case K::kSort: {
        const ValueId x = Any();
        return Add(c::SortAttrs{in_.Index(Valid(x) ? T(x).shape.rank() : 1),
                                in_.Bool(), in_.Bool()},
                   {x});
      }
      case K::kLinalg: {
        // Mostly a float matrix (or batch of them); b, for a triangular
        // solve, any value of a's type or not.
        c::LinalgAttrs a;
        a.kind = static_cast<LinalgKind>(in_.Int(0, kNumLinalgKinds - 1));
        a.lower = in_.Bool();
        a.transpose_a = in_.Bool();
        a.left_side = in_.Bool();
        a.unit_diagonal = in_.Bool();
        a.full_matrices = in_.Bool();
        const ValueId x = FindOr([](const ValueType& t) {
          return is_floating(t.dtype) && t.shape.rank() >= 2;
        });
        if (a.kind != LinalgKind::kTriangularSolve) return Add(a, {x});
        return Add(a, {x, FindOr([&](const ValueType& t) {
                         return Valid(x) && t.dtype == T(x).dtype &&
                                t.shape.rank() == T(x).shape.rank();
                       })});
      }
      case K::kFft: {
        // Mostly lengths the operand fits (its trailing dimensions; irfft's
        // last one n with n/2 + 1 stored), of a fitting dtype when one is
        // there; now and then lengths from nowhere, which inference rejects.
        const auto type = static_cast<c::FftType>(in_.Int(0, 3));
        const ValueId x = FindOr([&](const ValueType& t) {
          const bool fits = type == c::FftType::kRfft
                                ? t.dtype == DType::kFloat32 ||
                                      t.dtype == DType::kFloat64
                                : is_complex(t.dtype);
          return fits && t.shape.rank() >= 1;
        });
        std::vector<int64_t> lengths;
        if (Valid(x) && T(x).shape.rank() >= 1 && in_.Byte() < 240) {
          const Shape& s = T(x).shape;
          const int k = in_.Int(1, std::min(3, s.rank()));
          for (int i = s.rank() - k; i < s.rank(); ++i) lengths.push_back(s[i]);
          if (type == c::FftType::kIrfft) {
            lengths.back() = 2 * (lengths.back() - 1) + in_.Int(0, 1);
          }
        } else {
          for (int k = in_.Int(0, 4); k > 0; --k) lengths.push_back(in_.Small());
        }
        return Add(c::FftAttrs{type, lengths}, {x});
      }
      case K::kHostCallback: {
        // Zero to three operands of any type; now and then no callback
        // (which inference rejects).
        OperandList ops;
        for (int k = in_.Int(0, 3); k > 0; --k) ops.push_back(Any());
        if (in_.Byte() >= 250) return Add(c::HostCallbackAttrs{nullptr}, ops);
        static const auto reader = std::make_shared<const ReadingCallback>();
        return Add(c::HostCallbackAttrs{reader}, ops);
      }
      case K::kCall:
        if (depth_ < kMaxDepth) return Call();
        break;
      case K::kWhile:
        if (depth_ < kMaxDepth) return While();
        break;
      case K::kScan:
        if (depth_ < kMaxDepth) return Scan();
        break;
      case K::kCase:
        if (depth_ < kMaxDepth) return Case();
        break;
    }
    // Past the op kinds: a unary op on a recent value, so chains grow.
    return Add(
        c::UnaryAttrs{static_cast<UnaryOp>(in_.Int(0, kNumUnaryOps - 1))},
        {Any()});
  }
};

}  // namespace
}  // namespace baton::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace baton::fuzz;
  FuzzInput in(data, size);
  Session session;
  Builder b(in, session, 0);
  std::vector<c::ValueType> params;
  const int steps = in.Int(1, 40);
  b.Build(params, steps);
  b.SetOutputs(b.SomeOutputs(0, 4));
  CheckProgram(b.program(), in, session.whole_groups, session.while_trips,
               /*run_backend=*/in.Byte() < 200);
  return 0;
}
