// RunGemmOnHost: an Action::kGemm (kernel_emitter.h) done on the host, as
// the GEMM library does it on a GPU -- row-major c[batch][m][n] = a * b,
// each operand read transposed where the action says so. float32 and
// float64 call the BLAS (sgemm/dgemm); float16 and bfloat16 are widened to
// float32, multiplied by sgemm and rounded once, as the CPU backend does.
//
// It is the simulated device's "cuBLAS" (the GPU executable with host
// emulation, gpu_executable.h): the generated kernels run as host code,
// and the matrix products, like cuBLAS on a GPU, run in the library.
//
// Thread-safety: a pure function of its arguments.
#pragma once

#include "baton/backend/cuda/codegen/kernel_emitter.h"
#include "baton/core/status.h"

namespace baton::cuda::codegen {

// `a`, `b` and `c`: host addresses of the action's operands and result.
// InvalidArgument for a dtype that is not a float type.
Status RunGemmOnHost(const Action& gemm, const void* a, const void* b, void* c);

}  // namespace baton::cuda::codegen
