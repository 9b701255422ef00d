// Memory kinds: every device has one memory space of each kind (DESIGN R8).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace baton {

enum class MemoryKind : uint8_t {
  kDevice = 0,        // the accelerator's own memory (host RAM on the CPU backend)
  kPinnedHost = 1,    // page-locked host memory the device can DMA from/to
  kUnpinnedHost = 2,  // ordinary pageable host memory
};
inline constexpr int kNumMemoryKinds = 3;

// "device", "pinned_host", "unpinned_host".
std::string_view memory_kind_name(MemoryKind kind);
std::optional<MemoryKind> memory_kind_from_name(std::string_view name);
// Host kinds (pinned/unpinned) are host RAM on every platform.
inline bool is_host_kind(MemoryKind k) { return k != MemoryKind::kDevice; }

}  // namespace baton
