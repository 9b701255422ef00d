// Helpers for runtime tests: gated work on a queue, host data, stats.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <vector>

#include "baton/runtime/array.h"
#include "baton/runtime/client.h"
#include "baton/runtime/device.h"
#include "baton/runtime/transfer.h"

namespace baton::testing {

template <typename T>
T ValueOrThrowForTest(Result<T> r) {
  if (!r.ok()) throw std::runtime_error(r.status().to_string());
  return std::move(r).value();
}

// Enqueues a read of `a` on `queue` that waits for `gate` (if valid) and then
// runs `fn` on the array's bytes: "a computation still running on an array".
inline Event EnqueueRead(const Array& a, QueueKind queue, Event gate,
                         std::function<void(const void*)> fn = nullptr) {
  UsageHold hold = ValueOrThrowForTest(a.impl()->AcquireRead());
  std::vector<Event> deps = hold.dependencies();
  if (gate.valid()) deps.push_back(gate);
  const void* data = hold.data();
  Event done = a.device()->queue(queue).Enqueue(
      deps, [data, fn = std::move(fn)]() {
        if (fn) fn(data);
        return OkStatus();
      });
  hold.Finish(done);
  return done;
}

inline Array PutFloats(Device* d, const std::vector<float>& v,
                       MemoryKind kind = MemoryKind::kDevice) {
  return ValueOrThrowForTest(DevicePut(
      HostBuffer{v.data(), Shape{static_cast<int64_t>(v.size())},
                 DType::kFloat32},
      d, kind));
}

inline std::vector<float> GetFloats(const Array& a) {
  std::vector<float> out(static_cast<size_t>(a.size()));
  Status s = CopyToHost(a, out.data(), out.size() * sizeof(float));
  if (!s.ok()) throw std::runtime_error(s.to_string());
  return out;
}

inline int64_t InUse(Device* d, MemoryKind kind = MemoryKind::kDevice) {
  return d->memory_space(kind).stats().bytes_in_use;
}

}  // namespace baton::testing
