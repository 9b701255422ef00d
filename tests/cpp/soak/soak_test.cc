// Soak test (issue 14): eight threads, for a bounded time and a bounded
// number of operations, serve a compiled program on shared parameters while
// others swap new values into those parameters in place, donate them to a
// step function, take host views (read-only everywhere, writable on
// pinned_host) and copy arrays between memory kinds and devices.
//
// Every array holds one value in all its elements, so every reader can tell
// a whole value from a torn one. A handle may be consumed by another thread
// between reading its slot and using it; the resulting deleted-array,
// donation-refused and failed-precondition errors are the documented clean
// failures and are counted apart from real errors. Afterwards: no
// unexpected error, no torn value, and every memory space of every device
// is empty.
//
// BATON_SOAK_SECONDS (default 3) bounds the time; BATON_SOAK_OPS (default
// 25000 per thread, or unbounded when BATON_SOAK_SECONDS is set) the work.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "baton/core/error.h"
#include "baton/jit/jit.h"
#include "baton/runtime/client.h"
#include "baton/runtime/copy_into.h"
#include "baton/runtime/host_view.h"
#include "baton/runtime/transfer.h"

namespace baton {
namespace {

constexpr int kThreads = 8;
constexpr int kSlots = 4;
constexpr int64_t kElems = 1024;

enum Op {
  kServe, kSwap, kDonate, kReadView, kWriteView, kTransfer, kRefresh,
  kNumOps
};
constexpr const char* kOpNames[kNumOps] = {
    "serve", "swap", "donate", "read view", "writable view", "transfer",
    "refresh pinned"};

int64_t EnvOr(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  const long long n = std::atoll(v);
  return n > 0 ? n : fallback;
}

bool Uniform(const float* f, int64_t n) {
  for (int64_t i = 1; i < n; ++i) {
    if (f[i] != f[0]) return false;
  }
  return true;
}

bool ExpectedFailure(const Status& s) {
  return s.code() == ErrorCode::kDeletedArray ||
         s.code() == ErrorCode::kDonation ||
         s.code() == ErrorCode::kFailedPrecondition;
}

// A slot holding an array that threads replace concurrently.
class Slot {
 public:
  Array Get() {
    std::lock_guard<std::mutex> lock(mu_);
    return array_;
  }
  void Set(Array a) {
    std::lock_guard<std::mutex> lock(mu_);
    array_ = std::move(a);
  }

 private:
  std::mutex mu_;
  Array array_;
};

struct Counters {
  std::array<std::atomic<int64_t>, kNumOps> ok{};
  std::array<std::atomic<int64_t>, kNumOps> expected{};
  std::atomic<int64_t> unexpected{0};
  std::atomic<int64_t> torn{0};
};

TEST(SoakTest, ServeSwapDonateViewAndTransferFromEightThreads) {
  const int64_t seconds = EnvOr("BATON_SOAK_SECONDS", 3);
  const int64_t max_ops = EnvOr(
      "BATON_SOAK_OPS", std::getenv("BATON_SOAK_SECONDS") ? INT64_MAX : 25000);
  Client client(2);
  const std::vector<Device*> devs = client.devices();
  Counters c;
  {
    // serve(p, q) = (p * 2 + q, sum(p), sum(q)) over two shared parameters:
    // the three agree only if the call saw each parameter whole.
    Jitted serve([](TraceScope&, const std::vector<Tracer>& a) {
      return std::vector<Tracer>{a[0] * 2 + a[1], sum(a[0]), sum(a[1])};
    }, {.name = "serve", .donate_argnums = {}});
    // step(s) = s + 1 (wrapping past 8000, so that sums of 1024 elements
    // stay exact in float32), consuming s: its storage becomes the next
    // state.
    Jitted step([](TraceScope&, const std::vector<Tracer>& a) {
      return std::vector<Tracer>{where(gt(a[0], 8000), 0, a[0] + 1)};
    }, {.name = "step", .donate_argnums = {0}});

    std::array<Slot, kSlots> params;  // device memory of device 0
    std::array<Slot, kSlots> pinned;  // pinned_host memory of device 0
    auto put = [&](float v, MemoryKind kind) {
      std::vector<float> host(kElems, v);
      return ValueOrThrow(
          DevicePut(HostBuffer{host.data(), Shape{kElems}, DType::kFloat32},
                    devs[0], kind));
    };
    for (int s = 0; s < kSlots; ++s) {
      params[s].Set(put(static_cast<float>(s), MemoryKind::kDevice));
      pinned[s].Set(put(static_cast<float>(s), MemoryKind::kPinnedHost));
    }

    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    auto worker = [&](int seed) {
      std::mt19937 rng(seed);
      std::vector<float> host(kElems);
      auto note = [&](Op op, const Status& st) {
        if (st.ok()) {
          c.ok[op]++;
        } else if (ExpectedFailure(st)) {
          c.expected[op]++;
        } else {
          c.unexpected++;
          ADD_FAILURE() << kOpNames[op] << ": " << st.to_string();
        }
      };
      auto read_whole = [&](const Array& a) -> Status {
        host.assign(static_cast<size_t>(a.size()), -1.f);
        BATON_RETURN_IF_ERROR(
            CopyToHost(a, host.data(), host.size() * sizeof(float)));
        if (!Uniform(host.data(), a.size())) c.torn++;
        return OkStatus();
      };
      for (int64_t n = 0;
           n < max_ops && std::chrono::steady_clock::now() < deadline; ++n) {
        const int s = static_cast<int>(rng() % kSlots);
        const float value = static_cast<float>(rng() % 1000);
        const Op op = static_cast<Op>(rng() % kNumOps);
        Status st;
        switch (op) {
          case kServe: {
            Result<std::vector<Array>> out =
                serve.Call({params[s].Get(), params[(s + 1) % kSlots].Get()});
            st = out.status();
            if (!out.ok()) break;
            float sp = 0, sq = 0;
            st = read_whole((*out)[0]);
            if (st.ok()) st = CopyToHost((*out)[1], &sp, sizeof(float));
            if (st.ok()) st = CopyToHost((*out)[2], &sq, sizeof(float));
            // The sums must be of the same whole values p * 2 + q saw.
            if (st.ok() && host[0] != 2 * (sp / kElems) + sq / kElems) {
              c.torn++;
            }
            break;
          }
          case kSwap: {  // device_put(new values, into=the shared parameter)
            host.assign(kElems, value);
            Result<Array> r = DevicePutInto(
                HostBuffer{host.data(), Shape{kElems}, DType::kFloat32},
                params[s].Get());
            st = r.status();
            if (r.ok()) params[s].Set(std::move(r).value());
            break;
          }
          case kDonate: {  // state = step(donate(state))
            Result<std::vector<Array>> out = step.Call({params[s].Get()});
            st = out.status();
            if (out.ok()) params[s].Set((*out)[0]);
            break;
          }
          case kReadView: {
            Slot& slot = (rng() % 2) ? params[s] : pinned[s];
            Result<HostView> v = HostView::Acquire(slot.Get(), false, "soak");
            st = v.status();
            if (v.ok() &&
                !Uniform(static_cast<const float*>(v->data()), kElems)) {
              c.torn++;
            }
            break;
          }
          case kWriteView: {  // fill pinned memory in place, like a loader
            Result<HostView> v =
                HostView::Acquire(pinned[s].Get(), true, "soak");
            st = v.status();
            if (v.ok()) {
              float* f = static_cast<float*>(v->data());
              for (int64_t i = 0; i < kElems; ++i) f[i] = value;
            }
            break;
          }
          case kTransfer: {  // a copy to another kind or device, read back
            Slot& from = (rng() % 2) ? params[s] : pinned[s];
            Result<Array> copy =
                CopyArray(from.Get(), devs[rng() % devs.size()],
                          static_cast<MemoryKind>(rng() % kNumMemoryKinds));
            st = copy.status();
            if (copy.ok()) st = read_whole(*copy);
            break;
          }
          case kRefresh: {  // device_put(param, into=a pinned copy)
            Slot& to = pinned[rng() % kSlots];
            Result<Array> r = CopyArrayInto(params[s].Get(), to.Get());
            st = r.status();
            if (!r.ok()) break;
            // Only one thread can consume the old pinned array, so the
            // winner replaces it in its slot.
            to.Set(*r);
            st = read_whole(*r);
            break;
          }
          case kNumOps:
            break;
        }
        note(op, st);
      }
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, 7000 + t);
    for (auto& t : threads) t.join();
  }  // slots and programs dropped here

  int64_t bytes_left = 0;
  for (Device* d : devs) {
    EXPECT_TRUE(d->Synchronize().ok());
    EXPECT_TRUE(d->LiveArrays().empty()) << d->ToString();
    for (int k = 0; k < kNumMemoryKinds; ++k) {
      const int64_t left =
          d->memory_space(static_cast<MemoryKind>(k)).stats().bytes_in_use;
      EXPECT_EQ(left, 0) << d->ToString() << " "
                         << memory_kind_name(static_cast<MemoryKind>(k));
      bytes_left += left;
    }
  }
  EXPECT_EQ(c.unexpected.load(), 0);
  EXPECT_EQ(c.torn.load(), 0);

  int64_t total = 0, expected = 0;
  std::printf("soak: %d threads, up to %llds and %lld ops per thread\n",
              kThreads, static_cast<long long>(seconds),
              static_cast<long long>(max_ops == INT64_MAX ? -1 : max_ops));
  for (int op = 0; op < kNumOps; ++op) {
    std::printf("soak: %-15s %8lld ok %8lld expected failures\n",
                kOpNames[op], static_cast<long long>(c.ok[op].load()),
                static_cast<long long>(c.expected[op].load()));
    total += c.ok[op].load() + c.expected[op].load();
    expected += c.expected[op].load();
  }
  std::printf("soak: %lld operations, %lld expected failures, %lld "
              "unexpected errors, %lld torn values, %lld bytes left\n",
              static_cast<long long>(total), static_cast<long long>(expected),
              static_cast<long long>(c.unexpected.load()),
              static_cast<long long>(c.torn.load()),
              static_cast<long long>(bytes_left));
  RecordProperty("operations", static_cast<int>(total));
  RecordProperty("expected_failures", static_cast<int>(expected));
  RecordProperty("bytes_left", static_cast<int>(bytes_left));
}

}  // namespace
}  // namespace baton
