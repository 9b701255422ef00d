#include "baton/jit/jit.h"

#include <algorithm>

#include "baton/compiler/passes.h"
#include "baton/core/config.h"
#include "baton/core/error.h"
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
  Key key{device->id(), specs};
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
  for (size_t i = 0; i < args.size(); ++i) {
    if (!specs[i].donated) continue;
    for (size_t j = 0; j < args.size(); ++j) {
      if (i == j || !args[i].array().Is(args[j].array())) continue;
      return DonationRefused(
          fname + ": " + DescribeArg(i, args[i].array()) +
          (specs[j].donated ? " is donated twice (also as argument "
                            : " is donated and also passed undonated as "
                              "argument ") +
          std::to_string(j) +
          "). A donated buffer is overwritten by the call, so it cannot be "
          "read elsewhere in it. Pass a copy. Nothing was consumed.");
    }
  }
  if (device == nullptr) device = Client::Default().devices()[0];

  // 2. Compile (or find) the executable.
  BATON_ASSIGN_OR_RETURN(auto entry, GetOrCompile(specs, device));
  const auto& exe = entry->executable;

  // 3. Unusable donations: reported, or refused before anything runs.
  if (!exe->unusable_donations().empty()) {
    std::string what;
    for (int p : exe->unusable_donations()) {
      if (!what.empty()) what += "; ";
      what += DescribeArg(static_cast<size_t>(p), args[p].array());
    }
    const std::string msg =
        fname + ": donated buffers no output can reuse (reuse needs an "
                "output of the same byte size, dtype and memory kind, computed "
                "after the program's last read of the buffer): " +
        what + ". They are freed when the call is done.";
    if (donation_mode() == DonationMode::kError) {
      return DonationRefused(msg + " Nothing was consumed (donation mode is "
                                   "\"error\").");
    }
    EmitWarning(msg);
  }

  // 4. Take donated storage; give it all back if any take fails.
  std::vector<CallArgument> call(args.size() + entry->captured.size());
  for (size_t i = 0; i < args.size(); ++i) {
    call[i].array = args[i].array();
    if (args[i].is_donated()) {
      call[i].donated = true;
      call[i].taken = std::move(args[i].donated().taken);
      args[i].array().impl()->SetDonationTarget(fname);
    } else if (specs[i].donated) {
      Result<ArrayImpl::Taken> taken = args[i].array().impl()->TakeExclusive(
          {ConsumedReason::Kind::kDonated, fname});
      if (!taken.ok()) {
        for (size_t j = 0; j < i; ++j) {
          if (call[j].donated) {
            call[j].array.impl()->Untake(std::move(call[j].taken));
          }
        }
        return Status(taken.status().code(),
                      fname + ": cannot donate " + DescribeArg(i, call[i].array) +
                          ": " + taken.status().message());
      }
      call[i].donated = true;
      call[i].taken = std::move(taken).value();
    }
  }
  for (size_t k = 0; k < entry->captured.size(); ++k) {
    call[args.size() + k].array = entry->captured[k];
  }
  // 5. Run. On failure Execute gives every donated buffer back to its array.
  Result<std::vector<Array>> out = exe->Execute(call);
  if (!out.ok()) {
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i].is_donated()) args[i].donated().taken = {};  // given back
    }
  }
  return out;
}

std::vector<Array> Jitted::operator()(std::vector<Arg> args) {
  return ValueOrThrow(Call(std::move(args)));
}

}  // namespace baton
