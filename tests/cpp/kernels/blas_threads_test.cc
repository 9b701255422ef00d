// OpenBLAS's workers are kept off the core of the thread that calls a GEMM
// (backend/cpu/blas_threads.h KeepBlasWorkersOffCallersCore): woken onto the
// caller's core, a worker takes turns with a caller that spins for it.
#include <gtest/gtest.h>

#include <sched.h>

#include <thread>
#include <vector>

#include "baton/backend/cpu/blas_threads.h"
#include "baton/backend/cpu/kernels/dot.h"
#include "run_dot.h"

namespace baton::cpu {
namespace {

using testing::RunDot;

// A 256^3 float32 matmul: big enough for OpenBLAS to use its workers.
void Gemm() {
  const Shape s{256, 256};
  std::vector<float> a(256 * 256, 0.5f), b(256 * 256, 0.25f), c(256 * 256);
  RunDot(DType::kFloat32, a.data(), s, b.data(), s,
         DotDimensions{{}, {}, {1}, {0}}, c.data());
  ASSERT_EQ(c[0], 256 * 0.125f);
}

TEST(BlasThreadsTest, WorkersAreKeptOffTheCallersCore) {
  cpu_set_t process;
  ASSERT_EQ(sched_getaffinity(0, sizeof(process), &process), 0);
  cpu_set_t worker;
  if (CPU_COUNT(&process) < 2 || !BlasWorkerAffinity(0, &worker)) {
    GTEST_SKIP() << "one core, one BLAS thread a call, or no "
                    "openblas_getaffinity: nothing to keep apart";
  }
  std::vector<int> cores;
  for (int c = 0; c < CPU_SETSIZE && cores.size() < 2; ++c) {
    if (CPU_ISSET(c, &process)) cores.push_back(c);
  }
  // Call from each of two cores in turn (twice, so that moving back is
  // seen too): the workers may then run anywhere but there.
  for (int round = 0; round < 4; ++round) {
    const int core = cores[round % 2], other = cores[1 - round % 2];
    std::thread caller([&] {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(core, &one);
      ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
      ASSERT_EQ(sched_getcpu(), core);
      Gemm();
    });
    caller.join();
    ASSERT_TRUE(BlasWorkerAffinity(0, &worker));
    EXPECT_FALSE(CPU_ISSET(core, &worker)) << "round " << round << ", core " << core;
    EXPECT_TRUE(CPU_ISSET(other, &worker)) << "round " << round << ", core " << other;
    EXPECT_EQ(CPU_COUNT(&worker), CPU_COUNT(&process) - 1) << "round " << round;
  }
}

}  // namespace
}  // namespace baton::cpu
