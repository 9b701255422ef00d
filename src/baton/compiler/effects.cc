#include "baton/compiler/effects.h"

#include <variant>

namespace baton::compiler {

bool HasSideEffect(const OpAttrs& attrs) {
  auto nested = [](const std::shared_ptr<const Program>& p) {
    return p != nullptr && HasSideEffect(*p);
  };
  if (std::holds_alternative<HostCallbackAttrs>(attrs)) return true;
  if (const auto* a = std::get_if<CallAttrs>(&attrs)) {
    // The rules run instead of the body only under transformations, which
    // build new programs from them; the body is what runs otherwise.
    return nested(a->body) || nested(a->rule) || nested(a->rule2);
  }
  if (const auto* a = std::get_if<WhileAttrs>(&attrs)) {
    return nested(a->cond) || nested(a->body);
  }
  if (const auto* a = std::get_if<ScanAttrs>(&attrs)) return nested(a->body);
  if (const auto* a = std::get_if<CaseAttrs>(&attrs)) {
    for (const auto& b : a->branches) {
      if (nested(b)) return true;
    }
  }
  return false;
}

bool HasSideEffect(const Program& program) {
  for (const Instruction& inst : program.instructions()) {
    if (HasSideEffect(inst.attrs)) return true;
  }
  return false;
}

}  // namespace baton::compiler
