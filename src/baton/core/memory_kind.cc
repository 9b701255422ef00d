#include "baton/core/memory_kind.h"

namespace baton {

std::string_view memory_kind_name(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kDevice: return "device";
    case MemoryKind::kPinnedHost: return "pinned_host";
    case MemoryKind::kUnpinnedHost: return "unpinned_host";
  }
  return "?";
}

std::optional<MemoryKind> memory_kind_from_name(std::string_view name) {
  if (name == "device") return MemoryKind::kDevice;
  if (name == "pinned_host") return MemoryKind::kPinnedHost;
  if (name == "unpinned_host") return MemoryKind::kUnpinnedHost;
  return std::nullopt;
}

}  // namespace baton
