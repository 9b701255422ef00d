// ThreadPool: fork-join splitting, and how many threads it starts.
#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
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

}  // namespace
}  // namespace baton
