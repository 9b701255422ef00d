// libFuzzer target: the runtime's public calls in random order -- transfers
// of every semantics and memory kind, copies between devices and platforms,
// in-place overwrites, deletes, reads, fills, device synchronisation,
// memory statistics, profiler recordings started and stopped at any point,
// and collectives between two processes' groups (ranks as threads here),
// sometimes called differently on the two ranks.
//
// The devices: two CPU devices and two devices of the simulated
// accelerator in slow-device mode (asynchronous streams with random delays,
// freed device memory poisoned: simulated_backend.h), so a missing
// dependency shows up as a wrong value. Invariants, checked as the calls go:
//  - a call either succeeds or fails with a message; a failed call changes
//    nothing the model can see (the array it would consume is still
//    readable with its old value);
//  - every read returns the bytes the model says the array holds;
//  - a collective called the same way on both ranks returns the sum (or
//    gather, or broadcast) of both ranks' data; called differently, both
//    ranks fail with InvalidArgument -- never a hang or an abort;
//  - a recording's memory events carry non-negative in-use counts;
//  - at the end of each input, after every array is deleted and every
//    device synchronised, every memory space's bytes_in_use is back where it
//    started (deterministic release, R1).
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "baton/backend/simulated/simulated_backend.h"
#include "baton/collectives/coordinator.h"
#include "baton/collectives/process_group.h"
#include "baton/runtime/client.h"
#include "baton/runtime/copy_into.h"
#include "baton/runtime/trace_recorder.h"
#include "baton/runtime/transfer.h"
#include "fuzz_input.h"

namespace baton::fuzz {
namespace {

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "fuzz invariant violated: %s\n", what.c_str());
  std::abort();
}

void ExpectFailureHasMessage(const Status& s, const char* call) {
  if (!s.ok() && s.message().empty()) {
    Fail(std::string(call) + " failed without a message");
  }
}

// One rank of a two-process group, as a thread that runs the collective it
// is handed.
class Rank {
 public:
  explicit Rank(std::unique_ptr<collectives::ProcessGroup> group)
      : group_(std::move(group)), thread_([this] { Loop(); }) {}
  ~Rank() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void Start(std::function<Status(collectives::ProcessGroup&)> job) {
    std::lock_guard<std::mutex> lock(mu_);
    job_ = std::move(job);
    result_.reset();
    cv_.notify_all();
  }
  Status Finish() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return result_.has_value(); });
    return *result_;
  }

 private:
  void Loop() {
    for (;;) {
      std::function<Status(collectives::ProcessGroup&)> job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stopping_ || job_ != nullptr; });
        if (stopping_) return;
        job = std::move(job_);
        job_ = nullptr;
      }
      Status s = job(*group_);
      std::lock_guard<std::mutex> lock(mu_);
      result_ = std::move(s);
      cv_.notify_all();
    }
  }
  std::unique_ptr<collectives::ProcessGroup> group_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::function<Status(collectives::ProcessGroup&)> job_;  // guarded by mu_
  std::optional<Status> result_;                           // guarded by mu_
  bool stopping_ = false;                                  // guarded by mu_
  std::thread thread_;
};

struct World {
  std::unique_ptr<Client> cpu;
  std::unique_ptr<Client> sim;
  std::vector<Device*> devices;
  std::vector<std::unique_ptr<Rank>> ranks;  // empty without Gloo
};

World& TheWorld() {
  static World* world = [] {
    auto* w = new World;
    w->cpu = std::make_unique<Client>(2);
    SimulatedBackend::Options slow;
    slow.slow = true;
    slow.seed = 1;
    slow.max_delay_us = 30;
    w->sim = std::make_unique<Client>(
        2, std::make_shared<SimulatedBackend>(slow));
    for (Device* d : w->cpu->devices()) w->devices.push_back(d);
    for (Device* d : w->sim->devices()) w->devices.push_back(d);
    if (collectives::ProcessGroup::GlooAvailable()) {
      auto server = collectives::CoordinatorServer::Start("127.0.0.1:0");
      const int port = server.ok() ? (*server)->port() : 0;
      if (server.ok()) server->reset();  // frees the port for process 0
      std::vector<Result<std::unique_ptr<collectives::ProcessGroup>>> groups;
      groups.emplace_back(Internal("not connected"));
      groups.emplace_back(Internal("not connected"));
      std::vector<std::thread> joiners;
      for (int r = 0; r < 2; ++r) {
        joiners.emplace_back([&, r] {
          collectives::ProcessGroupOptions o;
          o.coordinator_address = "127.0.0.1:" + std::to_string(port);
          o.num_processes = 2;
          o.process_id = r;
          o.init_timeout = std::chrono::milliseconds(20000);
          o.op_timeout = std::chrono::milliseconds(20000);
          groups[r] = collectives::ProcessGroup::Connect(o);
        });
      }
      for (std::thread& t : joiners) t.join();
      if (groups[0].ok() && groups[1].ok()) {
        for (auto& g : groups) {
          w->ranks.push_back(std::make_unique<Rank>(std::move(g).value()));
        }
        std::fprintf(stderr,
                     "fuzz_runtime_calls: collectives between 2 ranks\n");
      } else {
        std::fprintf(stderr, "fuzz_runtime_calls: no collectives: %s\n",
                     (groups[0].ok() ? groups[1] : groups[0])
                         .status()
                         .to_string()
                         .c_str());
      }
    }
    return w;
  }();
  return *world;
}

struct Slot {
  Array array;
  std::vector<uint8_t> bytes;  // what the array holds
};

constexpr MemoryKind kKinds[] = {MemoryKind::kDevice, MemoryKind::kPinnedHost,
                                 MemoryKind::kUnpinnedHost};

std::vector<uint8_t> RandomBytes(FuzzInput& in, size_t n) {
  std::vector<uint8_t> v(n);
  uint8_t x = in.Byte();
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(x + 37 * i);
  return v;
}

void CheckRead(const Slot& s, const char* after) {
  std::vector<uint8_t> got(s.bytes.size());
  Status st = CopyToHost(s.array, got.data(), got.size());
  if (!st.ok()) Fail(std::string("reading an array failed: ") + st.to_string());
  if (got != s.bytes) {
    Fail(std::string("an array read back other bytes than it holds, after ") +
         after + " on " + s.array.device()->ToString());
  }
}

// A collective on both ranks, the same call or (now and then) a different
// one on rank 1.
void Collective(World& w, FuzzInput& in) {
  const int kind0 = in.Int(0, 3);
  const int kind1 = in.Int(0, 15) == 0 ? in.Int(0, 3) : kind0;
  const size_t count0 = static_cast<size_t>(in.Int(0, 64));
  const size_t count1 = in.Int(0, 15) == 0 ? in.Int(0, 64) : count0;
  std::vector<std::vector<float>> data(2);
  std::vector<std::vector<float>> gathered(2);
  const int kinds[2] = {kind0, kind1};
  const size_t counts[2] = {count0, count1};
  for (int r = 0; r < 2; ++r) {
    data[r].resize(counts[r]);
    for (size_t i = 0; i < counts[r]; ++i) data[r][i] = float(r * 100 + i);
    gathered[r].resize(2 * counts[r]);
    w.ranks[r]->Start([&, r](collectives::ProcessGroup& g) -> Status {
      switch (kinds[r]) {
        case 0:
          return g.AllReduce(data[r].data(), counts[r], DType::kFloat32,
                             collectives::ReduceOp::kSum);
        case 1:
          return g.AllGather(data[r].data(), gathered[r].data(),
                             counts[r] * sizeof(float));
        case 2:
          return g.Broadcast(data[r].data(), counts[r] * sizeof(float), 0);
        default:
          return g.Barrier();
      }
    });
  }
  const Status s0 = w.ranks[0]->Finish();
  const Status s1 = w.ranks[1]->Finish();
  const bool same = kind0 == kind1 && (kind0 == 3 || count0 == count1);
  if (!same) {
    if (s0.code() != ErrorCode::kInvalidArgument ||
        s1.code() != ErrorCode::kInvalidArgument) {
      Fail("collectives called differently did not both fail with "
           "InvalidArgument: " + s0.to_string() + " / " + s1.to_string());
    }
    return;
  }
  if (!s0.ok() || !s1.ok()) {
    Fail("a collective called the same way failed: " + s0.to_string() +
         " / " + s1.to_string());
  }
  for (int r = 0; r < 2; ++r) {
    for (size_t i = 0; i < count0; ++i) {
      float want = 0;
      if (kind0 == 0) want = float(i) + float(100 + i);
      if (kind0 == 2) want = float(i);  // rank 0's
      if (kind0 == 1) {
        if (gathered[r][i] != float(i) ||
            gathered[r][count0 + i] != float(100 + i)) {
          Fail("all_gather gathered wrong values");
        }
        continue;
      }
      if (kind0 != 3 && data[r][i] != want) Fail("a collective's result is wrong");
    }
  }
}

}  // namespace
}  // namespace baton::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace baton;
  using namespace baton::fuzz;
  World& w = TheWorld();
  FuzzInput in(data, size);
  const int n_devices = static_cast<int>(w.devices.size());
  std::vector<int64_t> baseline;
  for (Device* d : w.devices) {
    for (MemoryKind k : kKinds) {
      baseline.push_back(d->memory_space(k).stats().bytes_in_use);
    }
  }
  std::vector<Slot> slots(6);
  std::optional<uint64_t> recording;
  // BATON_FUZZ_VERBOSE=1: print each call (to read a finding's sequence).
  static const bool verbose = std::getenv("BATON_FUZZ_VERBOSE") != nullptr;
  int steps = in.Int(1, 40);
  for (int step = 0; step < steps && !in.empty(); ++step) {
    const int slot_index = in.Int(0, static_cast<int>(slots.size()) - 1);
    Slot& s = slots[slot_index];
    Device* dev = w.devices[in.Int(0, n_devices - 1)];
    const MemoryKind kind = kKinds[in.Int(0, 2)];
    const int call = in.Int(0, 10);
    if (verbose) {
      std::fprintf(stderr, "step %d: call %d slot %d (%s) -> %s %s\n", step,
                   call, slot_index,
                   s.array.valid() ? s.array.device()->ToString().c_str()
                                   : "empty",
                   dev->ToString().c_str(), memory_kind_name(kind).data());
    }
    switch (call) {
      case 0: {  // device_put, any semantics
        const size_t n = 4 * static_cast<size_t>(in.Int(0, 300));
        auto bytes = std::make_shared<std::vector<uint8_t>>(RandomBytes(in, n));
        const auto semantics = static_cast<HostBufferSemantics>(in.Int(0, 2));
        Result<Array> a = DevicePut(
            HostBuffer{bytes->data(), Shape{int64_t(n / 4)}, DType::kFloat32},
            dev, kind, semantics, [bytes] {});
        ExpectFailureHasMessage(a.status(), "device_put");
        if (semantics == HostBufferSemantics::kZeroCopy &&
            !dev->host_addressable(kind) && a.ok()) {
          Fail("a zero-copy put of memory the host cannot address succeeded");
        }
        if (a.ok()) s = Slot{*a, *bytes};
        break;
      }
      case 1: {  // copy to any device and kind
        if (!s.array.valid()) break;
        Result<Array> a = CopyArray(s.array, dev, kind);
        ExpectFailureHasMessage(a.status(), "CopyArray");
        if (a.ok()) {
          Slot& t = slots[in.Int(0, static_cast<int>(slots.size()) - 1)];
          t = Slot{*a, s.bytes};
        }
        break;
      }
      case 2: {  // device_put(into=)
        if (!s.array.valid()) break;
        std::vector<uint8_t> bytes = RandomBytes(in, s.bytes.size());
        Result<Array> a = DevicePutInto(
            HostBuffer{bytes.data(), s.array.shape(), DType::kFloat32},
            s.array);
        ExpectFailureHasMessage(a.status(), "device_put(into=)");
        if (a.ok()) {
          s = Slot{*a, bytes};
        } else {
          CheckRead(s, "a refused device_put(into=)");
        }
        break;
      }
      case 3: {  // copy into another array
        Slot& t = slots[in.Int(0, static_cast<int>(slots.size()) - 1)];
        if (!s.array.valid() || !t.array.valid()) break;
        Result<Array> a = CopyArrayInto(s.array, t.array);
        ExpectFailureHasMessage(a.status(), "CopyArrayInto");
        if (a.ok()) {
          const std::vector<uint8_t> bytes = s.bytes;
          t = Slot{*a, bytes};
        } else if (!t.array.IsDeleted()) {
          CheckRead(t, "a refused copy into it");
        }
        break;
      }
      case 4:  // delete
        if (s.array.valid()) s.array.Delete();
        s = Slot{};
        break;
      case 5:  // read
        if (s.array.valid()) CheckRead(s, "random calls");
        break;
      case 6: {  // fill
        const int64_t n = in.Int(0, 200);
        const float value = static_cast<float>(in.Int(-8, 8)) * 0.5f;
        Result<Array> a = Full(Shape{n}, DType::kFloat32, &value, dev, kind);
        ExpectFailureHasMessage(a.status(), "Full");
        if (a.ok()) {
          std::vector<uint8_t> bytes(static_cast<size_t>(n) * 4);
          for (int64_t i = 0; i < n; ++i) {
            std::memcpy(bytes.data() + 4 * i, &value, 4);
          }
          s = Slot{*a, bytes};
        }
        break;
      }
      case 7:  // synchronise a device
        if (Status st = dev->Synchronize(); !st.ok()) {
          Fail("Synchronize failed: " + st.to_string());
        }
        break;
      case 8: {  // the profiler: start or stop a recording
        TraceRecorder& rec = TraceRecorder::Global();
        if (recording) {
          for (const TraceRecord& r : rec.Stop(*recording)) {
            if (IsMemoryEvent(r.kind) && r.bytes_in_use < -1) {
              Fail("a memory event with a negative in-use count");
            }
          }
          recording.reset();
        } else {
          recording = rec.Start(in.Bool() ? TraceRecorder::Filter::kAll
                                           : TraceRecorder::Filter::kMemory);
        }
        break;
      }
      case 9: {  // memory statistics are consistent
        const MemoryStats st = dev->memory_space(kind).stats();
        if (st.bytes_in_use < 0 || st.peak_bytes_in_use < st.bytes_in_use) {
          Fail("memory statistics out of order on " + dev->ToString());
        }
        break;
      }
      case 10:  // collectives between the two ranks
        if (!w.ranks.empty()) Collective(w, in);
        break;
    }
  }
  if (recording) (void)TraceRecorder::Global().Stop(*recording);
  for (Slot& s : slots) {
    if (s.array.valid() && !s.array.IsDeleted()) CheckRead(s, "the last call");
    if (s.array.valid()) s.array.Delete();
  }
  slots.clear();
  size_t i = 0;
  for (Device* d : w.devices) {
    if (Status st = d->Synchronize(); !st.ok()) {
      Fail("Synchronize failed: " + st.to_string());
    }
  }
  for (Device* d : w.devices) {
    for (MemoryKind k : kKinds) {
      const int64_t now = d->memory_space(k).stats().bytes_in_use;
      if (now != baseline[i]) {
        Fail("after every array was deleted, " + d->ToString() + " " +
             std::string(memory_kind_name(k)) + " memory holds " + std::to_string(now) +
             " bytes in use, not " + std::to_string(baseline[i]));
      }
      ++i;
    }
  }
  return 0;
}
