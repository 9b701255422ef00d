// Acceptance 8: many threads doing random operations on shared arrays; run
// under ASan+UBSan and TSan in CI. Afterwards every memory space is empty.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <random>
#include <thread>

#include "baton/runtime/host_view.h"
#include "runtime/runtime_test_util.h"

namespace baton {
namespace {

// Every array in this test holds one value in all its elements, so any
// reader can tell a whole value from a torn one.
bool Uniform(const float* f, int64_t n) {
  for (int64_t i = 1; i < n; ++i) {
    if (f[i] != f[0]) return false;
  }
  return true;
}

bool ExpectedFailure(const Status& s) {
  // Another thread may consume an array between our read of the slot and the
  // operation: that is a clean, reported failure, never corruption.
  return s.code() == ErrorCode::kDeletedArray ||
         s.code() == ErrorCode::kDonation ||
         s.code() == ErrorCode::kFailedPrecondition;
}

TEST(StressTest, RandomOperationsFromManyThreads) {
  constexpr int kThreads = 8, kOps = 10000, kSlots = 16;
  Client client(2);
  std::vector<Device*> devs = client.devices();
  std::mutex slot_mu[kSlots];
  Array slots[kSlots];
  std::atomic<int> unexpected{0}, torn{0};

  auto worker = [&](int seed) {
    std::mt19937 rng(seed);
    std::vector<float> host;
    for (int op = 0; op < kOps; ++op) {
      const int s = rng() % kSlots;
      Array a;
      {
        std::lock_guard<std::mutex> lock(slot_mu[s]);
        a = slots[s];
      }
      const int kind = rng() % 8;
      const int64_t n = 1 + rng() % 2048;
      const float value = static_cast<float>(rng() % 1000);
      Status st;
      if (kind == 0 || !a.valid()) {  // put
        host.assign(n, value);
        auto r = DevicePut(HostBuffer{host.data(), Shape{n}, DType::kFloat32},
                           devs[rng() % 2],
                           static_cast<MemoryKind>(rng() % kNumMemoryKinds));
        if (!r.ok()) { unexpected++; continue; }
        std::lock_guard<std::mutex> lock(slot_mu[s]);
        slots[s] = std::move(r).value();
        continue;
      }
      switch (kind) {
        case 1: {  // read
          host.assign(a.size(), -1.f);
          st = CopyToHost(a, host.data(), host.size() * sizeof(float));
          if (st.ok() && !Uniform(host.data(), a.size())) torn++;
          break;
        }
        case 2: {  // view
          auto v = HostView::Acquire(a, false);
          st = v.status();
          if (v.ok() && !Uniform(static_cast<const float*>(v->data()), a.size()))
            torn++;
          break;
        }
        case 3: {  // donate into a "computation" that writes a new value
          auto t = a.impl()->TakeExclusive(
              {ConsumedReason::Kind::kDonated, "stress"});
          st = t.status();
          if (!t.ok()) break;
          float* data = static_cast<float*>(t->buffer->data());
          const int64_t size = a.size();
          Event done = a.device()->queue(QueueKind::kCompute).Enqueue(
              t->wait_for, [data, size, value] {
                for (int64_t i = 0; i < size; ++i) data[i] = value;
                return OkStatus();
              });
          t->buffer->ResetForNewOwner(done);
          Array out(ArrayImpl::Create(a.device(), a.memory_kind(), a.shape(),
                                      a.dtype(), std::move(t->buffer)));
          std::lock_guard<std::mutex> lock(slot_mu[s]);
          slots[s] = out;
          break;
        }
        case 4:  // delete
          a.Delete();
          break;
        case 5: {  // copy to another kind/device
          auto c = CopyArray(a, devs[rng() % 2],
                             static_cast<MemoryKind>(rng() % kNumMemoryKinds));
          st = c.status();
          if (c.ok()) {
            std::lock_guard<std::mutex> lock(slot_mu[(s + 1) % kSlots]);
            slots[(s + 1) % kSlots] = std::move(c).value();
          }
          break;
        }
        case 6: {  // overwrite in place
          host.assign(a.size(), value);
          auto r = DevicePutInto(
              HostBuffer{host.data(), a.shape(), DType::kFloat32}, a);
          st = r.status();
          if (r.ok()) {
            std::lock_guard<std::mutex> lock(slot_mu[s]);
            slots[s] = std::move(r).value();
          }
          break;
        }
        case 7: {  // block, check readiness
          auto e = a.impl()->ReadyEvent();
          st = e.ok() ? e->Wait() : e.status();
          break;
        }
      }
      if (!st.ok() && !ExpectedFailure(st)) {
        unexpected++;
        ADD_FAILURE() << st.to_string();
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, 1000 + t);
  for (auto& t : threads) t.join();
  EXPECT_EQ(unexpected.load(), 0);
  EXPECT_EQ(torn.load(), 0);

  for (auto& a : slots) a = Array();
  // Every device's work done before any device's memory is checked: a copy
  // queued on one device holds its source on another until it is done.
  for (Device* d : devs) EXPECT_TRUE(d->Synchronize().ok());
  for (Device* d : devs) {
    EXPECT_TRUE(d->LiveArrays().empty());
    for (int k = 0; k < kNumMemoryKinds; ++k) {
      EXPECT_EQ(d->memory_space(static_cast<MemoryKind>(k)).stats().bytes_in_use,
                0)
          << d->ToString() << " " << memory_kind_name(static_cast<MemoryKind>(k));
    }
  }
}

}  // namespace
}  // namespace baton
