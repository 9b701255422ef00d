// DESIGN 5.5: the runtime's event log -- independent recordings, the memory
// history ring, and what memory spaces record of each allocation (its kind,
// label, API function, call stack, id) for profiles, traces and snapshots.
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "baton/runtime/trace_recorder.h"
#include "runtime/runtime_test_util.h"

namespace baton {
namespace {

using testing::EnqueueRead;
using testing::PutFloats;

TraceRecord Memory(TraceRecord::Kind kind, int64_t bytes) {
  TraceRecord r;
  r.kind = kind;
  r.bytes = bytes;
  return r;
}

std::vector<int64_t> Bytes(const std::vector<TraceRecord>& records) {
  std::vector<int64_t> out;
  for (const TraceRecord& r : records) out.push_back(r.bytes);
  return out;
}

TEST(TraceRecorderTest, RecordingsAreIndependentAndFiltered) {
  TraceRecorder rec;
  EXPECT_FALSE(rec.enabled());
  rec.Record(Memory(TraceRecord::Kind::kAlloc, 1));  // nobody listens
  const uint64_t all = rec.Start(TraceRecorder::Filter::kAll);
  EXPECT_TRUE(rec.enabled());
  rec.Record(Memory(TraceRecord::Kind::kAlloc, 2));
  const uint64_t memory = rec.Start(TraceRecorder::Filter::kMemory);
  rec.Record(Memory(TraceRecord::Kind::kExecute, 3));
  rec.Record(Memory(TraceRecord::Kind::kDonate, 4));
  EXPECT_EQ(Bytes(rec.Stop(memory)), (std::vector<int64_t>{4}));
  rec.Record(Memory(TraceRecord::Kind::kTransfer, 5));
  EXPECT_EQ(Bytes(rec.Stop(all)), (std::vector<int64_t>{2, 3, 4, 5}));
  EXPECT_FALSE(rec.enabled());
  EXPECT_TRUE(rec.Stop(all).empty());  // a token ends once
  EXPECT_TRUE(rec.Stop(12345).empty());
}

TEST(TraceRecorderTest, HistoryKeepsTheLastEntriesOfMemoryEvents) {
  TraceRecorder rec;
  rec.SetHistory(true, 3);
  EXPECT_TRUE(rec.enabled());
  for (int i = 1; i <= 5; ++i) rec.Record(Memory(TraceRecord::Kind::kAlloc, i));
  rec.Record(Memory(TraceRecord::Kind::kExecute, 99));  // not a memory event
  EXPECT_EQ(Bytes(rec.History()), (std::vector<int64_t>{3, 4, 5}));
  rec.SetHistory(false, 0);  // stops, keeps what it has
  EXPECT_FALSE(rec.enabled());
  rec.Record(Memory(TraceRecord::Kind::kFree, 6));
  EXPECT_EQ(Bytes(rec.History()), (std::vector<int64_t>{3, 4, 5}));
  rec.SetHistory(true, 10);  // a new history
  rec.Record(Memory(TraceRecord::Kind::kFree, 7));
  EXPECT_EQ(Bytes(rec.History()), (std::vector<int64_t>{7}));
  rec.SetHistory(true, 0);  // zero entries: records nothing
  rec.Record(Memory(TraceRecord::Kind::kFree, 8));
  EXPECT_TRUE(rec.History().empty());
  rec.SetHistory(false, 0);
}

TEST(TraceRecorderTest, AllocationSitesNestPerThread) {
  EXPECT_EQ(AllocationSite::Current(), nullptr);
  auto outer = std::make_shared<CallStack>(CallStack{{"outer", "a.py", 1}});
  auto inner = std::make_shared<CallStack>(CallStack{{"inner", "b.py", 2}});
  {
    AllocationSite a(outer, 7);
    EXPECT_EQ(AllocationSite::Current(), outer);
    EXPECT_EQ(AllocationSite::CurrentStackId(), 7u);
    {
      AllocationSite b(inner);
      EXPECT_EQ(AllocationSite::Current(), inner);
      EXPECT_EQ(AllocationSite::CurrentStackId(), 0u);
      std::thread([] {
        EXPECT_EQ(AllocationSite::Current(), nullptr);
        EXPECT_EQ(AllocationSite::CurrentStackId(), 0u);
      }).join();
    }
    EXPECT_EQ(AllocationSite::Current(), outer);
    EXPECT_EQ(AllocationSite::CurrentStackId(), 7u);
  }
  EXPECT_EQ(AllocationSite::Current(), nullptr);
  EXPECT_EQ(AllocationSite::CurrentStackId(), 0u);
}

TEST(TraceRecorderTest, AllocationsRecordKindLabelStackAndBytesInUse) {
  Client client(1);
  Device* dev = client.devices()[0];
  MemorySpace& space = dev->memory_space(MemoryKind::kDevice);
  auto& rec = TraceRecorder::Global();
  const uint64_t token = rec.Start(TraceRecorder::Filter::kMemory);
  auto stack = std::make_shared<CallStack>(CallStack{{"make_it", "m.py", 7}});
  void* p = nullptr;
  {
    AllocationSite site(stack);
    p = space
            .Allocate(1000, kNoQueue,
                      AllocationLabel("scratch", AllocationKind::kTemporary,
                                      "test::Make"))
            .value();
  }
  const std::vector<LiveAllocation> live = space.LiveAllocations();
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].bytes, 1024);  // rounded to the 256-byte granularity
  EXPECT_EQ(live[0].kind, AllocationKind::kTemporary);
  EXPECT_EQ(live[0].label, "scratch");
  EXPECT_STREQ(live[0].api, "test::Make");
  EXPECT_EQ(live[0].stack, stack);
  EXPECT_EQ(live[0].address, reinterpret_cast<uint64_t>(p));
  space.Free(p);
  EXPECT_TRUE(space.LiveAllocations().empty());
  const std::vector<TraceRecord> events = rec.Stop(token);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, TraceRecord::Kind::kAlloc);
  EXPECT_EQ(events[0].bytes_in_use, 1024);
  EXPECT_EQ(events[0].stack, stack);
  EXPECT_EQ(events[1].kind, TraceRecord::Kind::kFree);
  EXPECT_EQ(events[1].bytes_in_use, 0);
  EXPECT_EQ(events[0].allocation_id, events[1].allocation_id);
  EXPECT_EQ(events[1].label, "scratch");
}

// The interned stack id is kept always (the front end symbolizes it when a
// profile is written); the full stack and the time only while recording.
TEST(TraceRecorderTest, WithoutARecordingOnlyTheStackIdIsKept) {
  Client client(1);
  Device* dev = client.devices()[0];
  auto stack = std::make_shared<CallStack>(CallStack{{"f", "f.py", 1}});
  AllocationSite site(stack, 42);
  Array a = PutFloats(dev, std::vector<float>(64, 1.f));
  const auto live = dev->memory_space(MemoryKind::kDevice).LiveAllocations();
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].stack_id, 42u);
  EXPECT_EQ(live[0].stack, nullptr);
  EXPECT_EQ(live[0].time_ns, 0);
  EXPECT_STREQ(live[0].api, "baton::DevicePut");
  EXPECT_EQ(live[0].label, "float32(64,)");
}

TEST(TraceRecorderTest, PendingFreeIsRecordedWhenItsBytesStopCounting) {
  Client client(1);
  Device* dev = client.devices()[0];
  auto& rec = TraceRecorder::Global();
  Array a = PutFloats(dev, std::vector<float>(1024, 1.f));
  const uint64_t token = rec.Start(TraceRecorder::Filter::kMemory);
  Event gate = Event::Create();
  Event read = EnqueueRead(a, QueueKind::kCompute, gate);
  a = Array();  // last handle: freed once the read ends
  EXPECT_TRUE(dev->memory_space(MemoryKind::kDevice).LiveAllocations().empty());
  EXPECT_EQ(testing::InUse(dev), 4096);  // still counted
  gate.SetReady();
  ASSERT_TRUE(read.Wait().ok());
  EXPECT_TRUE(dev->Synchronize().ok());
  const std::vector<TraceRecord> events = rec.Stop(token);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, TraceRecord::Kind::kFreeRequested);
  EXPECT_EQ(events[0].bytes_in_use, 4096);  // the read still runs
  EXPECT_EQ(events[1].kind, TraceRecord::Kind::kFree);
  EXPECT_EQ(events[1].allocation_id, events[0].allocation_id);
  EXPECT_EQ(events[1].bytes, 4096);
  EXPECT_EQ(events[1].bytes_in_use, 0);
  EXPECT_EQ(events[1].label, "float32(1024,)");
}

TEST(TraceRecorderTest, OverwriteNamesTheAllocationItReplaces) {
  Client client(1);
  Device* dev = client.devices()[0];
  Array a = PutFloats(dev, std::vector<float>(256, 1.f));
  const uint64_t id =
      dev->memory_space(MemoryKind::kDevice).LiveAllocations().at(0).id;
  auto& rec = TraceRecorder::Global();
  const uint64_t token = rec.Start(TraceRecorder::Filter::kAll);
  std::vector<float> host(256, 2.f);
  Array b = DevicePutInto(
                HostBuffer{host.data(), Shape{256}, DType::kFloat32}, a)
                .value();
  b.BlockUntilReady();
  const std::vector<TraceRecord> events = rec.Stop(token);
  bool overwrite = false;
  for (const TraceRecord& r : events) {
    if (r.kind != TraceRecord::Kind::kOverwrite) continue;
    overwrite = true;
    EXPECT_EQ(r.allocation_id, id);
    EXPECT_EQ(r.bytes, 1024);
    EXPECT_NE(r.label.find("device_put(into=)"), std::string::npos);
  }
  EXPECT_TRUE(overwrite);
  EXPECT_EQ(testing::GetFloats(b)[0], 2.f);
}

TEST(TraceRecorderTest, SegmentsPartitionRegionsAndNameLiveBlocks) {
  Client client(1);
  Device* dev = client.devices()[0];
  MemorySpace& space = dev->memory_space(MemoryKind::kDevice);
  Array a = PutFloats(dev, std::vector<float>(1000, 1.f));
  Array b = PutFloats(dev, std::vector<float>(3000, 1.f));
  std::set<uint64_t> live_ids;
  for (const LiveAllocation& l : space.LiveAllocations()) live_ids.insert(l.id);
  ASSERT_EQ(live_ids.size(), 2u);
  std::set<uint64_t> seen;
  int64_t live_bytes = 0;
  for (const SegmentInfo& seg : space.Segments()) {
    int64_t offset = 0;
    for (const SegmentInfo::Block& blk : seg.blocks) {
      EXPECT_EQ(blk.offset, offset);  // contiguous, in address order
      offset += blk.size;
      if (blk.state == SegmentInfo::Block::State::kLive) {
        seen.insert(blk.allocation_id);
        live_bytes += blk.size;
      } else {
        EXPECT_EQ(blk.allocation_id, 0u);
      }
    }
    EXPECT_EQ(offset, seg.size);
  }
  EXPECT_EQ(seen, live_ids);
  EXPECT_EQ(live_bytes, space.stats().bytes_in_use);
}

TEST(TraceRecorderTest, ConcurrentAllocationsAreAllRecorded) {
  Client client(1);
  Device* dev = client.devices()[0];
  auto& rec = TraceRecorder::Global();
  const uint64_t token = rec.Start(TraceRecorder::Filter::kMemory);
  rec.SetHistory(true, 1000);
  constexpr int kThreads = 4, kPerThread = 50;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([dev] {
      for (int i = 0; i < kPerThread; ++i) {
        Array a = PutFloats(dev, std::vector<float>(64, 1.f));
      }
    });
  }
  for (auto& t : threads) t.join();
  const std::vector<TraceRecord> events = rec.Stop(token);
  const std::vector<TraceRecord> history = TraceRecorder::Global().History();
  rec.SetHistory(false, 0);
  EXPECT_EQ(events.size(), size_t{2 * kThreads * kPerThread});
  EXPECT_EQ(history.size(), events.size());
  std::set<uint64_t> ids;
  for (const TraceRecord& r : events) {
    if (r.kind == TraceRecord::Kind::kAlloc) ids.insert(r.allocation_id);
  }
  EXPECT_EQ(ids.size(), size_t{kThreads * kPerThread});  // ids are unique
  EXPECT_EQ(events.back().bytes_in_use, 0);
}

}  // namespace
}  // namespace baton
