// ThreadPool: fork-join splitting, and how many threads it starts.
#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "baton/runtime/thread_pool.h"

namespace baton {
namespace {

TEST(ThreadPoolTest, ParallelForCoversEveryIndexOnce) {
  ThreadPool pool(4);
  std::vector<std::atomic<int>> hits(10007);
  pool.ParallelFor(10007, 100, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
  });
  for (auto& h : hits) ASSERT_EQ(h.load(), 1);
  // Nested use from inside a chunk runs serially instead of deadlocking.
  std::atomic<int64_t> total{0};
  pool.ParallelFor(8, 1, [&](int64_t ob, int64_t oe) {
    for (int64_t i = ob; i < oe; ++i) {
      pool.ParallelFor(10, 1, [&](int64_t b, int64_t e) { total += e - b; });
    }
  });
  EXPECT_EQ(total.load(), 80);
}

int CoresInMask() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  return CPU_COUNT(&set);
}

TEST(ThreadPoolTest, DefaultSizeIsTheCoresThisProcessMayRunOn) {
  ThreadPool pool;
  EXPECT_EQ(pool.num_threads(), CoresInMask());
}

TEST(ThreadPoolTest, ARestrictedProcessGetsOneThreadPerCoreItMayUse) {
  // As under `taskset -c <one core>` or a one-core cpuset: the mask of the
  // thread that builds the pool (which its threads inherit) names one core.
  std::thread([] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu() >= 0 ? sched_getcpu() : 0, &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
    ThreadPool pool;
    EXPECT_EQ(pool.num_threads(), 1);
    // It still splits and covers every index (serially).
    std::vector<int> hits(1000);
    pool.ParallelFor(1000, 10, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) ++hits[i];
    });
    for (int h : hits) ASSERT_EQ(h, 1);
  }).join();
}

TEST(ThreadPoolTest, AHelperOnItsCallersCoreMovesOffIt) {
  // thread_pool.cc's KeepOffCpu: a helper that starts a caller's chunks on
  // the caller's own core can only take turns with it. Put the helper there
  // (from inside one of its chunks), then check that its next chunks run on
  // another core, with an affinity that leaves out only the caller's.
  std::thread([] {
    ThreadPool pool(2);  // built unpinned: the helper may use every core
    cpu_set_t start;
    CPU_ZERO(&start);
    ASSERT_EQ(sched_getaffinity(0, sizeof(start), &start), 0);
    if (CPU_COUNT(&start) < 2) GTEST_SKIP() << "one core: nowhere to move";
    const int caller_cpu = sched_getcpu();
    ASSERT_GE(caller_cpu, 0);
    cpu_set_t here;
    CPU_ZERO(&here);
    CPU_SET(caller_cpu, &here);
    ASSERT_EQ(sched_setaffinity(0, sizeof(here), &here), 0);  // the caller stays

    const std::thread::id caller = std::this_thread::get_id();
    // Chunks slow enough that the helper claims some of them.
    auto on_helper = [&](auto&& body) {
      std::atomic<bool> ran{false};
      pool.ParallelFor(16, 1, [&](int64_t, int64_t) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        if (std::this_thread::get_id() != caller) {
          body();
          ran = true;
        }
      });
      return ran.load();
    };
    std::atomic<bool> pinned{false};
    ASSERT_TRUE(on_helper([&] {
      if (!pinned.exchange(true)) {
        ASSERT_EQ(sched_setaffinity(0, sizeof(here), &here), 0);
      }
    }));
    std::mutex mu;
    std::vector<int> cpus;
    cpu_set_t mask;
    CPU_ZERO(&mask);
    ASSERT_TRUE(on_helper([&] {
      std::lock_guard<std::mutex> lock(mu);
      cpus.push_back(sched_getcpu());
      ASSERT_EQ(sched_getaffinity(0, sizeof(mask), &mask), 0);
    }));
    for (int cpu : cpus) EXPECT_NE(cpu, caller_cpu);
    EXPECT_FALSE(CPU_ISSET(caller_cpu, &mask));
    EXPECT_EQ(CPU_COUNT(&mask), CPU_COUNT(&start) - 1);
  }).join();
}

}  // namespace
}  // namespace baton
