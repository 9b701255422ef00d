#include "baton/jit/jit.h"

#include <algorithm>

#include "baton/compiler/passes.h"
#include "baton/core/config.h"
#include "baton/core/error.h"
#include "baton/jit/jitted_call.h"
#include "baton/runtime/client.h"

namespace baton {

Tracer TraceScope::Capture(const Array& array) {
  for (size_t i = 0; i < captured_.size(); ++i) {
    if (captured_[i].Is(array)) return captured_tracers_[i];
  }
  Tracer t = ctx_->AddParameter(compiler::ValueType{
      array.shape(), array.dtype(), array.memory_kind()});
  captured_.push_back(array);
  captured_tracers_.push_back(t);
  return t;
}

Jitted::Jitted(TraceFn fn, JitOptions options)
    : fn_(std::move(fn)), options_(std::move(options)) {}

size_t Jitted::cache_size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cache_.size();
}

std::string Jitted::DescribeArg(size_t i, const Array& a) const {
  return "argument " + std::to_string(i) + " (" + a.impl()->Describe() + ")";
}

Result<std::shared_ptr<const Jitted::Entry>> Jitted::GetOrCompile(
    const std::vector<ArgSpec>& specs, Device* device) {
  Key key{reinterpret_cast<std::uintptr_t>(device), specs};
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
  }
  // Trace outside the lock: the function may call other jitted functions.
  compiler::TraceContext ctx;
  std::vector<Tracer> params;
  for (const ArgSpec& s : specs) {
    params.push_back(ctx.AddParameter(
        compiler::ValueType{s.shape, s.dtype, s.memory_kind}));
  }
  TraceScope scope(&ctx);
  std::vector<Tracer> outs;
  try {
    outs = fn_(scope, params);
  } catch (const Error& e) {
    return Status(e.code(), options_.name + ": " + e.what());
  }
  compiler::Program traced = ctx.Finish(outs);
  auto program = std::make_shared<const compiler::Program>(
      compiler::Optimize(traced));
  std::vector<bool> donated;
  for (const ArgSpec& s : specs) donated.push_back(s.donated);
  donated.resize(program->num_parameters(), false);  // hidden: never donated
  BATON_ASSIGN_OR_RETURN(
      auto exe, CompileExecutable(program, donated, device, options_.name));
  auto entry = std::make_shared<Entry>(Entry{std::move(exe), scope.captured()});
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = cache_.emplace(std::move(key), entry);
  return it->second;  // a racing compile of the same key: first one wins
}

Result<std::shared_ptr<Executable>> Jitted::Lower(
    const std::vector<ArgSpec>& specs, Device* device) {
  BATON_ASSIGN_OR_RETURN(auto entry, GetOrCompile(specs, device));
  return entry->executable;
}

Result<std::vector<Array>> Jitted::Call(std::vector<Arg> args) {
  Result<std::vector<Array>> result = CallImpl(args);
  if (!result.ok()) {
    // Nothing is consumed by a failed call: call-site donations whose
    // storage was not used go back to their arrays.
    for (Arg& a : args) {
      if (a.is_donated() && a.donated().taken.buffer) {
        a.array().impl()->Untake(std::move(a.donated().taken));
      }
    }
  }
  return result;
}

Result<std::vector<Array>> Jitted::CallImpl(std::vector<Arg>& args) {
  const std::string& fname = options_.name;
  // 1. Validate everything before consuming anything.
  Device* device = nullptr;
  std::vector<ArgSpec> specs;
  specs.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const Array& a = args[i].array();
    if (!a.valid()) {
      return InvalidArgument(fname + ": argument " + std::to_string(i) +
                             " is a null array handle");
    }
    const bool by_position =
        std::find(options_.donate_argnums.begin(), options_.donate_argnums.end(),
                  static_cast<int>(i)) != options_.donate_argnums.end();
    if (!args[i].is_donated() && a.IsDeleted()) {
      return a.impl()->DeletedError();
    }
    if (device == nullptr) device = a.device();
    if (a.device() != device) {
      return InvalidArgument(fname + ": arguments are on different devices (" +
                             DescribeArg(0, args[0].array()) + " on " +
                             device->ToString() + ", " + DescribeArg(i, a) +
                             " on " + a.device()->ToString() +
                             "). Move them with device_put first.");
    }
    specs.push_back(ArgSpec{a.shape(), a.dtype(), a.memory_kind(),
                            by_position || args[i].is_donated()});
  }
  if (device == nullptr) device = Client::Default().devices()[0];

  // 2. Compile (or find) the executable.
  BATON_ASSIGN_OR_RETURN(auto entry, GetOrCompile(specs, device));
  const auto& exe = entry->executable;

  // 3. Refuse, take donated storage, run (jitted_call.h).
  std::vector<JitArgument> call(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    call[i].array = args[i].array();
    call[i].donated = specs[i].donated;
    if (args[i].is_donated()) {
      call[i].taken_already = true;
      call[i].taken = std::move(args[i].donated().taken);
      args[i].donated().taken = {};
    }
  }
  JittedCallHooks hooks;
  hooks.describe = [&](size_t i) { return DescribeArg(i, call[i].array); };
  hooks.name = [](size_t i) { return "argument " + std::to_string(i); };
  hooks.warn = [](const std::string& message) {
    EmitWarning(message);
    return OkStatus();
  };
  return RunJittedCall(*exe, fname, call, entry->captured, hooks);
}

std::vector<Array> Jitted::operator()(std::vector<Arg> args) {
  return ValueOrThrow(Call(std::move(args)));
}

}  // namespace baton
