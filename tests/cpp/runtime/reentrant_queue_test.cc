// Work enqueued on a queue by the thread that is running one of that queue's
// tasks (a host callback calling back into baton) runs at once, re-entrantly,
// instead of waiting behind the task that waits for it; what could never run
// is refused with WouldDeadlock instead of hanging (work_queue.h). Every test
// runs under a deadline, so a hang fails it.
#include <gtest/gtest.h>

#include <future>
#include <string>
#include <vector>

#include "baton/runtime/client.h"
#include "baton/runtime/device.h"
#include "baton/runtime/event.h"
#include "baton/runtime/work_queue.h"
#include "runtime/deadline.h"
#include "runtime/runtime_test_util.h"

namespace baton {
namespace {

using testing::RunWithDeadline;

TEST(ReentrantQueueTest, WorkEnqueuedFromATaskOnItsQueueRunsInsideIt) {
  RunWithDeadline([] {
    WorkQueue q("reentry");
    std::vector<std::string> order;
    Event inner_event;
    Status inner_wait = Internal("not run");
    Event outer = q.Enqueue({}, [&] {
      order.push_back("outer begins");
      inner_event = q.Enqueue({}, [&] {
        order.push_back("inner");
        return OkStatus();
      });
      inner_wait = inner_event.Wait();  // ready already: it ran inside
      order.push_back("outer ends");
      return OkStatus();
    });
    ASSERT_TRUE(outer.Wait().ok());
    EXPECT_TRUE(inner_wait.ok()) << inner_wait.to_string();
    EXPECT_EQ(order,
              (std::vector<std::string>{"outer begins", "inner", "outer ends"}));
    // Not part of the queue's order (work_queue.h): an event of no queue.
    EXPECT_EQ(inner_event.queue_id(), kNoQueue);
  });
}

TEST(ReentrantQueueTest, NestsAndWaitsForOtherQueuesFirst) {
  RunWithDeadline([] {
    WorkQueue q("nested"), other("other");
    std::promise<void> release_other;
    std::shared_future<void> released = release_other.get_future().share();
    Event slow = other.Enqueue({}, [released] {
      released.wait();
      return OkStatus();
    });
    int depth2 = 0;
    Event outer = q.Enqueue({}, [&] {
      release_other.set_value();
      // Depends on another queue's work: waits for it, then runs here.
      Event mid = q.Enqueue({slow}, [&] {
        Event deepest = q.Enqueue({}, [&] {
          ++depth2;
          return OkStatus();
        });
        return deepest.Wait();
      });
      return mid.Wait();
    });
    ASSERT_TRUE(outer.Wait().ok());
    EXPECT_EQ(depth2, 1);
    EXPECT_TRUE(slow.IsReady());
  });
}

// Work launched from a task onto another queue does not wait behind that
// queue's earlier work, which may itself wait for the running task (here:
// another thread's read of the task's output).
TEST(ReentrantQueueTest, WorkOnAnotherQueueDoesNotWaitBehindItsQueuedWork) {
  RunWithDeadline([] {
    WorkQueue q("program"), reads("reads");
    std::promise<void> read_queued;
    std::shared_future<void> queued = read_queued.get_future().share();
    Status inner = Internal("not run");
    Event program = q.Enqueue({}, [&] {
      queued.wait();
      inner = reads.Enqueue({}, [] { return OkStatus(); }).Wait();
      return OkStatus();
    });
    // Queued on `reads` before the task's own work, waiting for `program`.
    Event read_of_output = reads.Enqueue({program}, [] { return OkStatus(); });
    read_queued.set_value();
    ASSERT_TRUE(program.Wait().ok());
    EXPECT_TRUE(inner.ok()) << inner.to_string();
    EXPECT_TRUE(read_of_output.Wait().ok());
  });
}

// The outer task waits until a second task is queued behind it; what it then
// does with that second task's event would deadlock, and is refused.
TEST(ReentrantQueueTest, DependingOnWorkQueuedBehindTheRunningTaskFails) {
  RunWithDeadline([] {
    WorkQueue q("behind"), other("other");
    std::promise<Event> behind_promise;
    std::shared_future<Event> behind_future = behind_promise.get_future().share();
    Status reentrant, cross_queue, direct_wait, sync;
    bool ran = false;
    Event outer = q.Enqueue({}, [&] {
      Event behind = behind_future.get();
      reentrant = q.Enqueue({behind}, [&] {
                     ran = true;
                     return OkStatus();
                   }).Wait();
      cross_queue = other.Enqueue({behind}, [&] {
                         ran = true;
                         return OkStatus();
                       }).Wait();
      direct_wait = behind.Wait();
      sync = q.Synchronize();
      return OkStatus();
    });
    Event behind = q.Enqueue({}, [] { return OkStatus(); });
    behind_promise.set_value(behind);
    ASSERT_TRUE(outer.Wait().ok());
    ASSERT_TRUE(behind.Wait().ok());
    EXPECT_FALSE(ran);
    for (const Status* s : {&reentrant, &cross_queue, &direct_wait, &sync}) {
      EXPECT_EQ(s->code(), ErrorCode::kWouldDeadlock) << s->to_string();
      EXPECT_NE(s->message().find("behind"), std::string::npos)
          << s->message();
    }
    EXPECT_NE(reentrant.message().find("host callback"), std::string::npos)
        << reentrant.message();
    // Outside the task the queue is as usable as before.
    EXPECT_TRUE(q.Synchronize().ok());
  });
}

TEST(ReentrantQueueTest, DeviceSynchronizeFromATaskIsRefusedAtOnce) {
  RunWithDeadline([] {
    Device* d = Client::Default().devices()[0];
    Status inside;
    Event e = d->queue(QueueKind::kCompute).Enqueue({}, [&] {
      inside = d->Synchronize();
      return OkStatus();
    });
    ASSERT_TRUE(e.Wait().ok());
    EXPECT_EQ(inside.code(), ErrorCode::kWouldDeadlock) << inside.to_string();
    EXPECT_TRUE(d->Synchronize().ok());
  });
}

// DESIGN R1: memory released to a queue may be reused at once by later work
// on that queue. Work enqueued re-entrantly runs earlier than the tasks that
// released it, so it must get other memory.
TEST(ReentrantQueueTest, ReentrantAllocationsDoNotReuseMemoryPendingOnTheQueue) {
  RunWithDeadline([] {
    Device* d = Client::Default().devices()[0];
    WorkQueue& q = d->queue(QueueKind::kCompute);
    MemorySpace& space = d->memory_space(MemoryKind::kDevice);
    constexpr size_t kBytes = 1 << 16;
    void* block =
        space.Allocate(kBytes, q.id(), AllocationLabel("released")).value();
    std::promise<void> outer_may_go, behind_may_go;
    std::shared_future<void> outer_go = outer_may_go.get_future().share();
    std::shared_future<void> behind_go = behind_may_go.get_future().share();
    void* inside = nullptr;
    Event outer = q.Enqueue({}, [&] {
      outer_go.wait();
      Result<void*> r = space.Allocate(kBytes, q.id(), AllocationLabel("inner"));
      if (r.ok()) {
        inside = r.value();
        space.Free(inside);
      }
      return r.status();
    });
    // The block's last user is queued behind `outer`.
    Event behind = q.Enqueue({}, [behind_go] {
      behind_go.wait();
      return OkStatus();
    });
    space.FreeAfter(block, {behind});
    outer_may_go.set_value();
    ASSERT_TRUE(outer.Wait().ok());
    EXPECT_NE(inside, nullptr);
    EXPECT_NE(inside, block) << "re-entrant work took memory still in use by "
                                "work queued behind the running task";
    // Outside a task, later work on the queue does reuse it (the test would
    // prove nothing otherwise).
    void* later =
        space.Allocate(kBytes, q.id(), AllocationLabel("later")).value();
    EXPECT_EQ(later, block);
    behind_may_go.set_value();
    ASSERT_TRUE(behind.Wait().ok());
    space.FreeAfter(later, {});
  });
}

}  // namespace
}  // namespace baton
