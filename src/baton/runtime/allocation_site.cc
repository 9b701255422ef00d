#include "baton/runtime/allocation_site.h"

namespace baton {
namespace {
thread_local AllocationSite* current_site = nullptr;
}  // namespace

const char* allocation_kind_name(AllocationKind kind) {
  switch (kind) {
    case AllocationKind::kArray:
      return "array";
    case AllocationKind::kConstant:
      return "constant";
    case AllocationKind::kTemporary:
      return "temporary";
    case AllocationKind::kStaging:
      return "staging";
  }
  return "array";
}

AllocationSite::AllocationSite(std::shared_ptr<const CallStack> stack,
                               StackId stack_id)
    : stack_(std::move(stack)), stack_id_(stack_id), outer_(current_site) {
  current_site = this;
}

AllocationSite::~AllocationSite() { current_site = outer_; }

std::shared_ptr<const CallStack> AllocationSite::Current() {
  return current_site ? current_site->stack_ : nullptr;
}

StackId AllocationSite::CurrentStackId() {
  return current_site ? current_site->stack_id_ : 0;
}

}  // namespace baton
