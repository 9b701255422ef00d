#include "baton/jit/jitted_call.h"

#include <unordered_map>
#include <utility>

#include "baton/core/config.h"
#include "baton/jit/donation.h"

namespace baton {

namespace {

// Gives every storage taken (call-site donations included) back.
void GiveBack(std::vector<CallArgument>& call) {
  for (CallArgument& a : call) {
    if (a.donated && a.taken.buffer) a.array.impl()->Untake(std::move(a.taken));
  }
}

// Call-site donations not yet moved into `call` (an early refusal).
void GiveBackUnclaimed(std::vector<JitArgument>& args) {
  for (JitArgument& a : args) {
    if (a.taken_already && a.taken.buffer) {
      a.array.impl()->Untake(std::move(a.taken));
      a.taken = ArrayImpl::Taken{};
    }
  }
}

// Step 1: "" when the call may go on, else the refusal.
Status Refusals(Executable& exe, const std::string& name,
                std::vector<JitArgument>& args,
                const std::vector<Array>& captured,
                const JittedCallHooks& hooks, std::string* unusable_warning) {
  const size_t n = args.size();
  bool any_donated = false;
  for (const JitArgument& a : args) any_donated |= a.donated;
  if (any_donated) {
    // Each array once: a donated one may appear nowhere else (another
    // argument, donated or not, or a captured array). Linear in n.
    auto refuse = [&](size_t i, const std::string& other) {
      return DonationRefused(
          name + ": " + hooks.describe(i) + " " + other +
          ". A donated buffer is overwritten by the call, so it cannot be "
          "read elsewhere in it. Pass a copy. Nothing was consumed.");
    };
    std::unordered_map<const ArrayImpl*, size_t> first_use;
    first_use.reserve(n);
    for (size_t j = 0; j < n; ++j) {
      const JitArgument& a = args[j];
      if (a.fresh) continue;
      auto [it, inserted] = first_use.emplace(a.array.impl(), j);
      if (inserted) continue;
      const size_t i = it->second;
      if (!args[i].donated && !a.donated) continue;  // read twice: fine
      if (args[i].donated) {
        return refuse(i, a.donated ? "is donated twice (also as " +
                                         hooks.name(j) + ")"
                                   : "is donated and also passed undonated "
                                     "as " + hooks.name(j));
      }
      return refuse(j, "is donated and also passed undonated as " +
                           hooks.name(i));
    }
    for (const Array& c : captured) {
      auto it = first_use.find(c.impl());
      if (it != first_use.end() && args[it->second].donated) {
        return refuse(it->second,
                      "is donated but the function also reads it as a "
                      "captured (closed-over) array");
      }
    }
    std::vector<std::string> unusable;
    for (int p : exe.unusable_donations()) {
      if (p >= static_cast<int>(n) || args[p].fresh) continue;
      unusable.push_back(hooks.describe(static_cast<size_t>(p)));
    }
    if (!unusable.empty()) {
      const bool refused = donation_mode() == DonationMode::kError;
      std::string msg = UnusableDonationMessage(name, unusable,
                                                /*per_device=*/false, refused);
      if (refused) return DonationRefused(std::move(msg));
      *unusable_warning = std::move(msg);
    }
  }
  for (const Array& c : captured) {
    if (!c.IsDeleted()) continue;
    const Status s = c.impl()->DeletedError();
    return Status(s.code(),
                  name + ": an array the function captured (closes over), " +
                      c.impl()->Describe() + ", was consumed after it was "
                      "traced: " + s.message() +
                      " Call bt.clear_caches() (or re-create the jitted "
                      "function) to trace it with the new array.");
  }
  return OkStatus();
}

}  // namespace

Result<std::vector<Array>> RunJittedCall(Executable& exe,
                                         const std::string& name,
                                         std::vector<JitArgument>& args,
                                         const std::vector<Array>& captured,
                                         const JittedCallHooks& hooks,
                                         int* failed_donation) {
  if (failed_donation != nullptr) *failed_donation = -1;
  std::string unusable_warning;
  if (Status s = Refusals(exe, name, args, captured, hooks, &unusable_warning);
      !s.ok()) {
    GiveBackUnclaimed(args);
    return s;
  }

  // 2. Take donated storage; give it all back if any take fails.
  const size_t n = args.size();
  std::vector<CallArgument> call(n + captured.size());
  for (size_t i = 0; i < n; ++i) {
    call[i].array = args[i].array;
    if (args[i].taken_already) {
      call[i].donated = true;
      call[i].taken = std::move(args[i].taken);
      args[i].taken = ArrayImpl::Taken{};
    }
  }
  for (size_t k = 0; k < captured.size(); ++k) call[n + k].array = captured[k];
  for (size_t i = 0; i < n; ++i) {
    if (!args[i].donated || args[i].taken_already) continue;
    Result<ArrayImpl::Taken> taken = args[i].array.impl()->TakeExclusive(
        {ConsumedReason::Kind::kDonated, name});
    if (!taken.ok()) {
      GiveBack(call);
      if (failed_donation != nullptr) *failed_donation = static_cast<int>(i);
      return Status(taken.status().code(),
                    name + ": cannot donate " + hooks.describe(i) + ": " +
                        taken.status().message());
    }
    call[i].donated = true;
    call[i].taken = std::move(taken).value();
  }

  // 3. Every donation is taken: the warning about freeing them is true.
  if (!unusable_warning.empty()) {
    if (Status s = hooks.warn(unusable_warning); !s.ok()) {
      GiveBack(call);  // warnings turned into errors: nothing consumed
      return s;
    }
  }
  // Call-site donations' arrays name this function in their errors.
  for (size_t i = 0; i < n; ++i) {
    if (args[i].taken_already) args[i].array.impl()->SetDonationTarget(name);
  }
  // 4. Run. On failure Execute gives every donated buffer back.
  return exe.Execute(call);
}

}  // namespace baton
