// What the NVRTC tests share: the architectures they compile for and the
// skip that names why NVRTC could not be loaded.
#pragma once

#include <gtest/gtest.h>

#include "baton/backend/cuda/codegen/nvrtc_compiler.h"

namespace baton::testing {

inline constexpr char kVirtualArch[] = "compute_90";
inline constexpr char kRealArch[] = "sm_90";

}  // namespace baton::testing

#define BATON_SKIP_WITHOUT_NVRTC()                                        \
  do {                                                                    \
    if (!::baton::cuda::NvrtcUnavailableReason().empty()) {               \
      GTEST_SKIP() << "NVRTC unavailable: "                               \
                   << ::baton::cuda::NvrtcUnavailableReason();            \
    }                                                                     \
  } while (0)
