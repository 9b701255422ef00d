#include "fault_injection/fault_scenarios.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>

#include "baton/compiler/tracer.h"
#include "baton/jit/jit.h"
#include "baton/runtime/allocation_faults.h"
#include "baton/runtime/staging_pool.h"
#include "baton/runtime/transfer.h"
#include "control_flow/control_flow_test_util.h"
#include "runtime/runtime_test_util.h"

namespace baton::fault_testing {
namespace {

namespace cf = compiler::cf_test;
using Kind = ConsumedReason::Kind;

constexpr MemoryKind kAllKinds[] = {MemoryKind::kDevice,
                                    MemoryKind::kPinnedHost,
                                    MemoryKind::kUnpinnedHost};

// Small integers (and halves) stay exact through every operation below, so
// results are compared for equality.
std::vector<float> Pattern(int64_t n, int seed) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 7 + seed) % 4);
  return v;
}

Result<Array> Put(const std::vector<float>& v, Shape shape, Device* d,
                  MemoryKind kind = MemoryKind::kDevice) {
  return DevicePut(HostBuffer{v.data(), std::move(shape), DType::kFloat32}, d,
                   kind);
}

Input MustPut(const std::vector<float>& v, Shape shape, Device* d,
              MemoryKind kind = MemoryKind::kDevice,
              Kind consumed = Kind::kLive) {
  Array a = testing::ValueOrThrowForTest(Put(v, std::move(shape), d, kind));
  return Input{std::move(a), v, consumed};
}

Inputs NoInputs(const std::vector<Device*>&) { return {}; }

// ---- transfers -------------------------------------------------------------

Scenario DevicePutScenario(MemoryKind kind) {
  return {"device_put_" + std::string(memory_kind_name(kind)), NoInputs,
          [kind](Inputs&, const std::vector<Device*>& d) -> Status {
            const std::vector<float> host = Pattern(3000, 1);
            BATON_ASSIGN_OR_RETURN(Array a, Put(host, Shape{3000}, d[0], kind));
            return ExpectValues(a, host, "device_put result");
          }};
}

// The asynchronous contract: `on_done` runs once after the copy, and never
// for a call that fails (the caller still owns its memory then).
Scenario AsyncDevicePutScenario() {
  return {"device_put_async", NoInputs,
          [](Inputs&, const std::vector<Device*>& d) -> Status {
            const std::vector<float> host = Pattern(5000, 2);
            std::atomic<int> done{0};
            Result<Array> a = DevicePut(
                HostBuffer{host.data(), Shape{5000}, DType::kFloat32}, d[0],
                MemoryKind::kDevice,
                HostBufferSemantics::kImmutableUntilTransferCompletes,
                [&done] { done++; });
            if (!a.ok()) {
              return done.load() == 0
                         ? a.status()
                         : Internal("on_done ran for a failed device_put");
            }
            BATON_RETURN_IF_ERROR(ExpectValues(*a, host, "async device_put"));
            return done.load() == 1 ? OkStatus()
                                    : Internal("on_done did not run once");
          }};
}

Scenario FullAndEmptyScenario() {
  return {"full_and_empty", NoInputs,
          [](Inputs&, const std::vector<Device*>& d) -> Status {
            const float value = 3.5f;
            std::vector<Array> made;
            for (MemoryKind kind : kAllKinds) {
              BATON_ASSIGN_OR_RETURN(
                  Array a, Full(Shape{40, 25}, DType::kFloat32, &value, d[0],
                                kind));
              made.push_back(a);
            }
            BATON_ASSIGN_OR_RETURN(
                Array e, Empty(Shape{1000}, DType::kFloat32, d[1],
                               MemoryKind::kPinnedHost));
            for (const Array& a : made) {
              BATON_RETURN_IF_ERROR(ExpectValues(
                  a, std::vector<float>(1000, value), "full result"));
            }
            return e.nbytes() == 4000 ? OkStatus() : Internal("empty size");
          }};
}

// One array copied around every memory kind and to the other device.
Scenario CopyBetweenKindsScenario() {
  return {"copy_between_kinds",
          [](const std::vector<Device*>& d) {
            Inputs in;
            in.arrays.push_back(MustPut(Pattern(2048, 3), Shape{2048}, d[0]));
            return in;
          },
          [](Inputs& in, const std::vector<Device*>& d) -> Status {
            const Input& src = in.arrays[0];
            const std::pair<Device*, MemoryKind> hops[] = {
                {d[0], MemoryKind::kPinnedHost},
                {d[0], MemoryKind::kUnpinnedHost},
                {d[1], MemoryKind::kDevice},
                {d[1], MemoryKind::kPinnedHost},
                {d[0], MemoryKind::kDevice}};
            Array at = src.array;
            for (const auto& [device, kind] : hops) {
              BATON_ASSIGN_OR_RETURN(at, CopyArray(at, device, kind));
            }
            return ExpectValues(at, src.values, "copied array");
          }};
}

// device_put(into=) while a computation still reads the old value: the new
// bytes go through the staging pool, two chunks here.
Scenario OverwriteThroughStagingScenario() {
  constexpr int64_t n = (StagingPool::kChunkBytes + 4096) / sizeof(float);
  return {
      "device_put_into_staged",
      [](const std::vector<Device*>& d) {
        Inputs in;
        in.arrays.push_back(MustPut(Pattern(n, 4), Shape{n}, d[0],
                                    MemoryKind::kDevice, Kind::kOverwritten));
        return in;
      },
      [](Inputs& in, const std::vector<Device*>&) -> Status {
        const Array& into = in.arrays[0].array;
        // A reader that waits for `gate` keeps the old value in use. When
        // no staging memory is left the overwrite waits for that reader
        // instead, so the gate opens once the call returned or the injected
        // failure fired, whichever comes first.
        Event gate = Event::Create();
        testing::EnqueueRead(into, QueueKind::kCompute, gate);
        std::atomic<bool> returned{false};
        std::thread opener([&] {
          while (!returned.load() && AllocationFaults::injected() == 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
          }
          gate.SetReady();
        });
        const std::vector<float> fresh = Pattern(n, 5);
        Result<Array> r = DevicePutInto(
            HostBuffer{fresh.data(), Shape{n}, DType::kFloat32}, into);
        returned = true;
        opener.join();
        if (!r.ok()) return r.status();
        return ExpectValues(*r, fresh, "overwritten array");
      },
      {1, 2},
      "a staging chunk that cannot be allocated is written synchronously "
      "once the old value's readers are done"};
}

// ---- jitted programs -------------------------------------------------------

constexpr int64_t kN = 32;  // the matrices below are kN x kN

std::vector<float> Weights() {
  std::vector<float> w(kN * kN);
  for (int64_t i = 0; i < kN * kN; ++i) w[i] = static_cast<float>((i % 5) == 0);
  return w;
}

// f(x, y) = (x - rowsum(x @ W) + y, to_pinned_host(rowsum(x @ W) * 2)):
// a captured constant W, temporaries (the product and the row sums) and two
// outputs in two memory kinds; the first can take a donated x's storage.
TraceFn AffineTrace() {
  return [](TraceScope& s, const std::vector<Tracer>& a) {
    Tracer w = compiler::constant(s.context(), Weights(), Shape{kN, kN});
    Tracer t = matmul(a[0], w);
    Tracer u = sum(t, {1}, /*keepdims=*/true);
    return std::vector<Tracer>{a[0] - u + a[1],
                               to_memory_kind(u * 2, MemoryKind::kPinnedHost)};
  };
}

Jitted AffineProgram(std::vector<int> donate) {
  return Jitted(AffineTrace(),
                {.name = "affine", .donate_argnums = std::move(donate)});
}

// The reference results of AffineProgram.
std::pair<std::vector<float>, std::vector<float>> AffineReference(
    const std::vector<float>& x, const std::vector<float>& y) {
  const std::vector<float> w = Weights();
  std::vector<float> out0(kN * kN), out1(kN);
  for (int64_t i = 0; i < kN; ++i) {
    std::vector<float> t(kN, 0.f);
    float u = 0;
    for (int64_t j = 0; j < kN; ++j) {
      for (int64_t k = 0; k < kN; ++k) t[j] += x[i * kN + k] * w[k * kN + j];
      u += t[j];
    }
    for (int64_t j = 0; j < kN; ++j) {
      out0[i * kN + j] = x[i * kN + j] - u + y[i * kN + j];
    }
    out1[i] = u * 2;
  }
  return {out0, out1};
}

Inputs AffineInputs(Device* d, Kind x_consumed) {
  Inputs in;
  in.arrays.push_back(MustPut(Pattern(kN * kN, 6), Shape{kN, kN}, d,
                              MemoryKind::kDevice, x_consumed));
  in.arrays.push_back(MustPut(Pattern(kN * kN, 7), Shape{kN, kN}, d));
  return in;
}

Status CheckAffine(const std::vector<Array>& out, const Inputs& in) {
  auto [want0, want1] =
      AffineReference(in.arrays[0].values, in.arrays[1].values);
  if (out.size() != 2 || out[1].memory_kind() != MemoryKind::kPinnedHost) {
    return Internal("affine: wrong outputs");
  }
  BATON_RETURN_IF_ERROR(ExpectValues(out[0], want0, "affine output 0"));
  return ExpectValues(out[1], want1, "affine output 1");
}

enum class Donation { kNone, kByPosition, kAtCallSite };

// Compiles (constant, ...) and runs the affine program in one go.
Scenario AffineScenario(Donation donation) {
  const char* names[] = {"jit_constants_temporaries",
                         "jit_donated_argument",
                         "jit_call_site_donation"};
  return {names[static_cast<int>(donation)],
          [donation](const std::vector<Device*>& d) {
            return AffineInputs(d[0], donation == Donation::kNone
                                          ? Kind::kLive
                                          : Kind::kDonated);
          },
          [donation](Inputs& in, const std::vector<Device*>&) -> Status {
            Jitted f = AffineProgram(
                donation == Donation::kByPosition ? std::vector<int>{0}
                                                  : std::vector<int>{});
            std::vector<Arg> args{in.arrays[0].array, in.arrays[1].array};
            if (donation == Donation::kAtCallSite) {
              BATON_ASSIGN_OR_RETURN(Donated x, TryDonate(in.arrays[0].array));
              args[0] = Arg(std::move(x));
            }
            BATON_ASSIGN_OR_RETURN(std::vector<Array> out,
                                   f.Call(std::move(args)));
            return CheckAffine(out, in);
          }};
}

// A donated argument no output can reuse (sum(x) is a scalar): its storage
// is freed once the call is done -- or given back when the call fails.
Scenario UnusableDonationScenario() {
  return {"jit_unusable_donation",
          [](const std::vector<Device*>& d) {
            Inputs in;
            in.arrays.push_back(MustPut(Pattern(4096, 8), Shape{4096}, d[0],
                                        MemoryKind::kDevice, Kind::kDonated));
            return in;
          },
          [](Inputs& in, const std::vector<Device*>&) -> Status {
            Jitted f([](TraceScope& s, const std::vector<Tracer>& a) {
              Tracer w = compiler::constant(s.context(), Pattern(4096, 15),
                                            Shape{4096});
              return std::vector<Tracer>{sum(a[0] * w)};
            }, {.name = "weighted_sum", .donate_argnums = {0}});
            float want = 0;
            const std::vector<float> w = Pattern(4096, 15);
            for (size_t i = 0; i < w.size(); ++i) {
              want += in.arrays[0].values[i] * w[i];
            }
            BATON_ASSIGN_OR_RETURN(std::vector<Array> out,
                                   f.Call({in.arrays[0].array}));
            return ExpectValues(out[0], {want}, "weighted sum");
          }};
}

// Only the execution: the program is compiled (and its constant stored)
// during setup, so the sites are the call's fresh outputs and arena.
Scenario PrecompiledExecutionScenario() {
  return {"jit_execute_precompiled",
          [](const std::vector<Device*>& d) {
            Inputs in = AffineInputs(d[0], Kind::kLive);
            auto f = std::make_shared<Jitted>(
                AffineTrace(),
                JitOptions{.name = "affine", .donate_argnums = {}});
            testing::ValueOrThrowForTest(
                f->Call({in.arrays[0].array, in.arrays[1].array}));
            in.state = f;
            return in;
          },
          [](Inputs& in, const std::vector<Device*>&) -> Status {
            Jitted& f = *std::static_pointer_cast<Jitted>(in.state);
            BATON_ASSIGN_OR_RETURN(
                std::vector<Array> out,
                f.Call({in.arrays[0].array, in.arrays[1].array}));
            return CheckAffine(out, in);
          }};
}

// ---- loops -----------------------------------------------------------------

constexpr int64_t kLoopN = 3000;
constexpr int kTrips = 4;

std::vector<float> LoopOffsets() { return Pattern(kLoopN, 9); }

// while i < 4: (i, x) = (i + 1, x * 0.5 + w + c), c a constant of the body;
// returns (x, sum(x)).
Jitted WhileProgram(std::vector<int> donate) {
  return Jitted(
      [](TraceScope& s, const std::vector<Tracer>& a) {
        const compiler::ValueType x{Shape{kLoopN}, DType::kFloat32};
        auto cond = cf::Region({cf::I32(), x, x},
                               [](compiler::TraceContext&, const auto& p) {
                                 return std::vector<Tracer>{lt(p[0], kTrips)};
                               });
        auto body = cf::Region(
            {cf::I32(), x, x}, [](compiler::TraceContext& ctx, const auto& p) {
              Tracer c = compiler::constant(ctx, LoopOffsets(), Shape{kLoopN});
              return std::vector<Tracer>{p[0] + 1, p[1] * 0.5f + p[2] + c};
            });
        Tracer i0 = compiler::full(s.context(), Shape{}, 0, DType::kInt32);
        auto r = cf::EmitGroup(s.context(), cf::While(2, cond, body),
                               {i0, a[0], a[1]});
        return std::vector<Tracer>{r[1], sum(r[1])};
      },
      {.name = "while_loop", .donate_argnums = std::move(donate)});
}

Scenario WhileScenario(bool donate_carry) {
  return {donate_carry ? "jit_while_donated_carry" : "jit_while_loop",
          [donate_carry](const std::vector<Device*>& d) {
            Inputs in;
            in.arrays.push_back(
                MustPut(Pattern(kLoopN, 10), Shape{kLoopN}, d[0],
                        MemoryKind::kDevice,
                        donate_carry ? Kind::kDonated : Kind::kLive));
            in.arrays.push_back(
                MustPut(Pattern(kLoopN, 11), Shape{kLoopN}, d[0]));
            return in;
          },
          [donate_carry](Inputs& in, const std::vector<Device*>&) -> Status {
            Jitted f = WhileProgram(donate_carry ? std::vector<int>{0}
                                                 : std::vector<int>{});
            BATON_ASSIGN_OR_RETURN(
                std::vector<Array> out,
                f.Call({in.arrays[0].array, in.arrays[1].array}));
            std::vector<float> x = in.arrays[0].values;
            const std::vector<float>& w = in.arrays[1].values;
            const std::vector<float> c = LoopOffsets();
            float total = 0;
            for (int64_t i = 0; i < kLoopN; ++i) {
              for (int t = 0; t < kTrips; ++t) x[i] = x[i] * 0.5f + w[i] + c[i];
              total += x[i];
            }
            BATON_RETURN_IF_ERROR(ExpectValues(out[0], x, "while result"));
            BATON_ASSIGN_OR_RETURN(std::vector<float> s, ReadFloats(out[1]));
            // The sum's order of additions is the kernel's: compare loosely.
            return std::abs(s[0] - total) <= 1e-3f * std::abs(total)
                       ? OkStatus()
                       : Internal("while: wrong sum");
          }};
}

constexpr int64_t kScanLength = 6, kScanWidth = 500;

// scan over xs[6, 500]: (c, y) = (c + x * 2 + b, c * x), b a constant.
Scenario ScanScenario() {
  return {
      "jit_scan",
      [](const std::vector<Device*>& d) {
        Inputs in;
        in.arrays.push_back(
            MustPut(Pattern(kScanWidth, 12), Shape{kScanWidth}, d[0]));
        in.arrays.push_back(MustPut(Pattern(kScanLength * kScanWidth, 13),
                                    Shape{kScanLength, kScanWidth}, d[0]));
        return in;
      },
      [](Inputs& in, const std::vector<Device*>&) -> Status {
        const compiler::ValueType row{Shape{kScanWidth}, DType::kFloat32};
        Jitted f(
            [&row](TraceScope& s, const std::vector<Tracer>& a) {
              auto body = cf::Region(
                  {row, row}, [](compiler::TraceContext& ctx, const auto& p) {
                    Tracer b = compiler::constant(ctx, Pattern(kScanWidth, 14),
                                                  Shape{kScanWidth});
                    return std::vector<Tracer>{p[0] + p[1] * 2 + b,
                                               p[0] * p[1]};
                  });
              return cf::EmitGroup(s.context(),
                                   cf::Scan(1, 1, kScanLength, body),
                                   {a[0], a[1]});
            },
            {.name = "scan", .donate_argnums = {}});
        BATON_ASSIGN_OR_RETURN(
            std::vector<Array> out,
            f.Call({in.arrays[0].array, in.arrays[1].array}));
        std::vector<float> c = in.arrays[0].values;
        const std::vector<float>& xs = in.arrays[1].values;
        const std::vector<float> b = Pattern(kScanWidth, 14);
        std::vector<float> ys(kScanLength * kScanWidth);
        for (int64_t t = 0; t < kScanLength; ++t) {
          for (int64_t i = 0; i < kScanWidth; ++i) {
            const float x = xs[t * kScanWidth + i];
            ys[t * kScanWidth + i] = c[i] * x;
            c[i] = c[i] + x * 2 + b[i];
          }
        }
        BATON_RETURN_IF_ERROR(ExpectValues(out[0], c, "scan carry"));
        return ExpectValues(out[1], ys, "scan ys");
      }};
}

// ---- several arrays in sequence --------------------------------------------

// Four transfers, a jitted sum of them, the result copied to unpinned host
// memory and a host-kind array filled in: a failure at any step leaves the
// earlier arrays to be dropped.
Scenario SequenceScenario() {
  return {"several_arrays_in_sequence", NoInputs,
          [](Inputs&, const std::vector<Device*>& d) -> Status {
            std::vector<Array> parts;
            std::vector<float> want(1024, 0.f);
            for (int k = 0; k < 4; ++k) {
              const std::vector<float> v = Pattern(1024, 20 + k);
              BATON_ASSIGN_OR_RETURN(Array a, Put(v, Shape{1024}, d[0]));
              parts.push_back(a);
              for (size_t i = 0; i < v.size(); ++i) want[i] += v[i];
            }
            Jitted add4([](TraceScope&, const std::vector<Tracer>& a) {
              return std::vector<Tracer>{a[0] + a[1] + a[2] + a[3]};
            }, {.name = "add4", .donate_argnums = {}});
            BATON_ASSIGN_OR_RETURN(
                std::vector<Array> out,
                add4.Call({parts[0], parts[1], parts[2], parts[3]}));
            BATON_ASSIGN_OR_RETURN(
                Array host, CopyArray(out[0], d[0], MemoryKind::kUnpinnedHost));
            const float one = 1.f;
            BATON_ASSIGN_OR_RETURN(
                Array ones, Full(Shape{1024}, DType::kFloat32, &one, d[0],
                                 MemoryKind::kPinnedHost));
            BATON_RETURN_IF_ERROR(ExpectValues(host, want, "sum of four"));
            return ExpectValues(ones, std::vector<float>(1024, 1.f), "ones");
          }};
}

}  // namespace

Result<std::vector<float>> ReadFloats(const Array& a) {
  if (a.dtype() != DType::kFloat32) return Internal("not a float32 array");
  std::vector<float> out(static_cast<size_t>(a.size()));
  BATON_RETURN_IF_ERROR(CopyToHost(a, out.data(), out.size() * sizeof(float)));
  return out;
}

Status ExpectValues(const Array& a, const std::vector<float>& want,
                    const std::string& what) {
  BATON_ASSIGN_OR_RETURN(std::vector<float> got, ReadFloats(a));
  if (got.size() != want.size()) return Internal(what + ": wrong size");
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] != want[i]) {
      return Internal(what + ": element " + std::to_string(i) + " is " +
                      std::to_string(got[i]) + ", expected " +
                      std::to_string(want[i]));
    }
  }
  return OkStatus();
}

std::vector<std::pair<std::string, compiler::MemoryAnalysis>>
AnalyzeScenarioPrograms(Device* device) {
  std::vector<std::pair<std::string, compiler::MemoryAnalysis>> out;
  auto add = [&](const std::string& name, Jitted f, std::vector<ArgSpec> s) {
    auto exe = f.Lower(s, device);
    if (exe.ok()) out.emplace_back(name, (*exe)->memory_analysis());
  };
  auto spec = [](Shape shape, bool donated) {
    return ArgSpec{std::move(shape), DType::kFloat32, MemoryKind::kDevice,
                   donated};
  };
  const ArgSpec matrix = spec(Shape{kN, kN}, false);
  const ArgSpec vector = spec(Shape{kLoopN}, false);
  add("affine", AffineProgram({}), {matrix, matrix});
  add("affine_donated", AffineProgram({0}),
      {spec(Shape{kN, kN}, true), matrix});
  add("while_loop", WhileProgram({}), {vector, vector});
  add("while_loop_donated", WhileProgram({0}),
      {spec(Shape{kLoopN}, true), vector});
  return out;
}

std::vector<Scenario> AllScenarios() {
  std::vector<Scenario> all;
  for (MemoryKind kind : kAllKinds) all.push_back(DevicePutScenario(kind));
  all.push_back(AsyncDevicePutScenario());
  all.push_back(FullAndEmptyScenario());
  all.push_back(CopyBetweenKindsScenario());
  all.push_back(OverwriteThroughStagingScenario());
  all.push_back(AffineScenario(Donation::kNone));
  all.push_back(AffineScenario(Donation::kByPosition));
  all.push_back(AffineScenario(Donation::kAtCallSite));
  all.push_back(UnusableDonationScenario());
  all.push_back(PrecompiledExecutionScenario());
  all.push_back(WhileScenario(/*donate_carry=*/false));
  all.push_back(WhileScenario(/*donate_carry=*/true));
  all.push_back(ScanScenario());
  all.push_back(SequenceScenario());
  return all;
}

}  // namespace baton::fault_testing
