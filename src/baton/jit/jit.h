// jit: trace a function once per argument signature, compile it, and call it
// (DESIGN section 3, C++ form). It compiles through CompileExecutable and
// runs through the Executable interface (backend/executable.h): the
// arguments' device picks the backend, and nothing here names one (nor in
// python/src, whose bt.jit compiles and runs through the same interface).
//
//   Jitted step([](TraceScope& s, const std::vector<Tracer>& a) {
//     return std::vector<Tracer>{a[0] - a[1] * 0.1};
//   }, {.name = "step", .donate_argnums = {0}});
//   std::vector<Array> out = step({params, grads});   // params donated
//   out = step({donate(out[0]), grads});             // or at the call site
//
// Donation follows R4: a donated argument's storage becomes an output of the
// same byte size, dtype and memory kind; storage no output can use is freed
// when the call is done and reported (warning, or DonationError before
// anything runs in "error" mode). A call that fails before running consumes
// nothing. Refused with DonationError, nothing consumed: the same array
// donated twice, or donated and also passed undonated. Deleted arguments:
// DeletedArrayError. Arguments on different devices: InvalidArgument.
//
// Device arrays captured while tracing (TraceScope::Capture) become hidden
// arguments of the executable, never constants; host data captured with
// compiler::constant(...) is snapshotted and shared by content.
//
// Ownership: a Jitted owns its compile cache (executables and captured
// arrays); dropping it drops them. Thread-safety: calls may come from any
// thread concurrently.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <variant>
#include <vector>

#include "baton/backend/executable.h"
#include "baton/compiler/tracer.h"
#include "baton/jit/donation.h"
#include "baton/runtime/array.h"

namespace baton {

using compiler::Tracer;

// Handed to the traced function: the trace context plus capture of arrays.
class TraceScope {
 public:
  explicit TraceScope(compiler::TraceContext* ctx) : ctx_(ctx) {}
  compiler::TraceContext& context() { return *ctx_; }
  // A device array used inside the function: passed as a hidden argument.
  Tracer Capture(const Array& array);
  const std::vector<Array>& captured() const { return captured_; }

 private:
  compiler::TraceContext* ctx_;  // not owned
  std::vector<Array> captured_;
  std::vector<Tracer> captured_tracers_;
};

using TraceFn =
    std::function<std::vector<Tracer>(TraceScope&, const std::vector<Tracer>&)>;

struct JitOptions {
  std::string name = "jitted function";
  std::vector<int> donate_argnums;
};

// One argument: an array (donated if its position is in donate_argnums) or a
// call-site donation.
class Arg {
 public:
  Arg(Array a) : v_(std::move(a)) {}      // NOLINT: implicit by design
  Arg(Donated d) : v_(std::move(d)) {}    // NOLINT
  bool is_donated() const { return std::holds_alternative<Donated>(v_); }
  const Array& array() const {
    return is_donated() ? std::get<Donated>(v_).array : std::get<Array>(v_);
  }
  Donated& donated() { return std::get<Donated>(v_); }

 private:
  std::variant<Array, Donated> v_;
};

// The part of an argument a compiled program depends on.
struct ArgSpec {
  Shape shape;
  DType dtype = DType::kFloat32;
  MemoryKind memory_kind = MemoryKind::kDevice;
  bool donated = false;
  auto operator<=>(const ArgSpec& o) const {
    if (auto c = shape.dims() <=> o.shape.dims(); c != 0) return c;
    if (auto c = dtype <=> o.dtype; c != 0) return c;
    if (auto c = memory_kind <=> o.memory_kind; c != 0) return c;
    return donated <=> o.donated;
  }
  bool operator==(const ArgSpec&) const = default;
};

class Jitted {
 public:
  Jitted(TraceFn fn, JitOptions options);

  // Calls the function (compiling on first use of a signature).
  Result<std::vector<Array>> Call(std::vector<Arg> args);
  std::vector<Array> operator()(std::vector<Arg> args);  // throws

  // Traces and compiles for `specs` on `device` without running or
  // consuming anything (for memory_analysis() and as_text()).
  Result<std::shared_ptr<Executable>> Lower(
      const std::vector<ArgSpec>& specs, Device* device);

  const std::string& name() const { return options_.name; }
  // Distinct compiled signatures so far.
  size_t cache_size() const;

 private:
  struct Entry {
    std::shared_ptr<Executable> executable;
    std::vector<Array> captured;  // hidden arguments, in order
  };
  // The device (its address: ids are per platform, so the simulated device
  // 0 and CPU device 0 share one) and the argument specs.
  using Key = std::pair<std::uintptr_t, std::vector<ArgSpec>>;
  Result<std::shared_ptr<const Entry>> GetOrCompile(
      const std::vector<ArgSpec>& specs, Device* device);
  std::string DescribeArg(size_t i, const Array& a) const;
  Result<std::vector<Array>> CallImpl(std::vector<Arg>& args);

  TraceFn fn_;
  JitOptions options_;
  mutable std::mutex mu_;
  std::map<Key, std::shared_ptr<const Entry>> cache_;  // guarded by mu_
};

}  // namespace baton
