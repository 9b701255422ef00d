// The BLAS kernel check (backend/cpu/blas_info.h): OpenBLAS's kernel
// families map to the vector ISA they use, and the linked library reports a
// kernel that fits this CPU (a generic SSE kernel on an AVX2/AVX-512 CPU is
// what the check exists to catch).
#include <gtest/gtest.h>

#include "baton/backend/cpu/blas_info.h"

namespace baton::cpu {
namespace {

TEST(BlasInfoTest, KernelFamiliesMapToTheirVectorIsa) {
  EXPECT_EQ(KernelIsa("Prescott"), "sse");
  EXPECT_EQ(KernelIsa("Core2"), "sse");
  EXPECT_EQ(KernelIsa("Sandybridge"), "avx");
  EXPECT_EQ(KernelIsa("Haswell"), "avx2");
  EXPECT_EQ(KernelIsa("Zen"), "avx2");
  EXPECT_EQ(KernelIsa("SkylakeX"), "avx512");
  EXPECT_EQ(KernelIsa("COOPERLAKE"), "avx512");
  EXPECT_EQ(KernelIsa("SapphireRapids"), "avx512");
  EXPECT_EQ(KernelIsa("SomeFutureCore"), "");
}

TEST(BlasInfoTest, TheLinkedLibraryChoseAKernelThatFitsThisCpu) {
  const BlasInfo info = QueryBlasInfo();
  EXPECT_NE(info.config.find("OpenBLAS"), std::string::npos) << info.config;
  EXPECT_FALSE(info.corename.empty());
  EXPECT_FALSE(info.cpu_isa.empty());
  EXPECT_EQ(info.kernel_fits_cpu, info.advice.empty()) << info.advice;
  EXPECT_TRUE(info.kernel_fits_cpu)
      << info.corename << " on a CPU with " << info.cpu_isa << ": " << info.advice;
}

}  // namespace
}  // namespace baton::cpu
