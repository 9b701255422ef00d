#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "baton/runtime/event.h"
#include "baton/runtime/work_queue.h"

namespace baton {
namespace {

TEST(EventTest, CallbacksRunOnceWithStatus) {
  Event e = Event::Create();
  int calls = 0;
  Status seen;
  e.OnReady([&](const Status& s) {
    ++calls;
    seen = s;
  });
  EXPECT_FALSE(e.IsReady());
  e.SetError(Internal("boom"));
  e.SetReady();  // ignored: first completion wins
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(seen.code(), ErrorCode::kInternal);
  // Added after completion: runs at once.
  e.OnReady([&](const Status&) { ++calls; });
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(e.Wait().message(), "boom");
}

TEST(EventTest, JoinCarriesFirstError) {
  Event a = Event::Create(), b = Event::Create();
  Event j = JoinEvents({a, b});
  a.SetReady();
  EXPECT_FALSE(j.IsReady());
  b.SetError(Internal("b failed"));
  ASSERT_TRUE(j.IsReady());
  EXPECT_EQ(j.status().message(), "b failed");
  EXPECT_TRUE(JoinEvents({}).IsReady());
}

TEST(WorkQueueTest, RunsInOrderAfterDependencies) {
  WorkQueue q("test");
  std::vector<int> order;
  Event gate = Event::Create();
  Event e1 = q.Enqueue({gate}, [&] {
    order.push_back(1);
    return OkStatus();
  });
  Event e2 = q.Enqueue({}, [&] {
    order.push_back(2);
    return OkStatus();
  });
  EXPECT_EQ(e1.queue_id(), q.id());
  EXPECT_FALSE(e2.IsReady());  // behind e1, which waits for the gate
  gate.SetReady();
  ASSERT_TRUE(e2.Wait().ok());
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
}

TEST(WorkQueueTest, ProducerErrorReachesEveryConsumer) {
  WorkQueue producer("producer"), consumer("consumer");
  Event p = producer.Enqueue({}, [] { return Internal("kernel failed"); });
  bool ran = false;
  Event c1 = consumer.Enqueue({p}, [&] {
    ran = true;
    return OkStatus();
  });
  Event c2 = consumer.Enqueue({c1}, [] { return OkStatus(); });
  EXPECT_EQ(c1.Wait().message(), "kernel failed");
  EXPECT_EQ(c2.Wait().message(), "kernel failed");
  EXPECT_FALSE(ran);
  // The queue keeps working after an error.
  EXPECT_TRUE(consumer.Enqueue({}, [] { return OkStatus(); }).Wait().ok());
}

TEST(WorkQueueTest, SynchronizeWaitsForAll) {
  WorkQueue q("sync");
  std::atomic<int> n{0};
  for (int i = 0; i < 100; ++i) {
    q.Enqueue({}, [&] {
      n.fetch_add(1);
      return OkStatus();
    });
  }
  EXPECT_TRUE(q.Synchronize().ok());
  EXPECT_EQ(n.load(), 100);
  EXPECT_EQ(q.pending(), 0u);
}

constexpr auto kInline = WorkQueue::Dispatch::kInlineWhenIdle;

TEST(WorkQueueTest, InlineWhenIdleRunsOnTheCallerBeforeReturning) {
  WorkQueue q("inline");
  std::thread::id ran_on;
  Event e = q.Enqueue({Event::Ready()}, [&] {
    ran_on = std::this_thread::get_id();
    return OkStatus();
  }, kInline);
  EXPECT_TRUE(e.IsReady());
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  EXPECT_EQ(q.pending(), 0u);
  // The status of an inline task reaches its event like any other.
  EXPECT_EQ(q.Enqueue({}, [] { return Internal("inline failed"); }, kInline)
                .Wait()
                .message(),
            "inline failed");
}

TEST(WorkQueueTest, InlineIsRefusedWhenTheQueueIsBusyOrADependencyIsPending) {
  WorkQueue q("busy");
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<int> order;
  Event gate = Event::Create();
  q.Enqueue({gate}, [&] {
    order.push_back(1);
    return OkStatus();
  });
  std::thread::id second_on;
  Event e2 = q.Enqueue({}, [&] {
    order.push_back(2);
    second_on = std::this_thread::get_id();
    return OkStatus();
  }, kInline);
  EXPECT_FALSE(e2.IsReady());  // queued behind the gated task, not inline
  gate.SetReady();
  ASSERT_TRUE(e2.Wait().ok());
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  EXPECT_NE(second_on, caller);

  // Idle queue, but a dependency that is not done yet: handed to the worker.
  Event dep = Event::Create();
  std::thread::id third_on;
  Event e3 = q.Enqueue({dep}, [&] {
    third_on = std::this_thread::get_id();
    return OkStatus();
  }, kInline);
  EXPECT_FALSE(e3.IsReady());
  dep.SetReady();
  ASSERT_TRUE(e3.Wait().ok());
  EXPECT_NE(third_on, caller);

  // A failed dependency: not run inline, and its error reaches the event.
  bool ran = false;
  Event e4 = q.Enqueue({Event::Failed(Internal("producer failed"))}, [&] {
    ran = true;
    return OkStatus();
  }, kInline);
  EXPECT_EQ(e4.Wait().message(), "producer failed");
  EXPECT_FALSE(ran);
}

TEST(WorkQueueTest, TasksEnqueuedDuringAnInlineTaskRunAfterIt) {
  WorkQueue q("order");
  std::atomic<bool> inline_started{false};
  std::vector<int> order;  // written by one task at a time (queue order)
  Event later;
  std::thread other([&] {
    while (!inline_started.load()) std::this_thread::yield();
    later = q.Enqueue({}, [&] {
      order.push_back(2);
      return OkStatus();
    });
    EXPECT_TRUE(q.Synchronize().ok());  // waits for the inline task too
    EXPECT_TRUE(later.IsReady());
  });
  Event first = q.Enqueue({}, [&] {
    inline_started.store(true);
    // Give the other thread time to enqueue; the worker must not start it.
    for (int i = 0; i < 50 && q.pending() < 2; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_EQ(q.pending(), 2u);
    order.push_back(1);
    return OkStatus();
  }, kInline);
  EXPECT_TRUE(first.IsReady());
  other.join();
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  EXPECT_EQ(q.pending(), 0u);
}

}  // namespace
}  // namespace baton
