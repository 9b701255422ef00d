// CublasLtGemms: the GEMM actions (Action::kGemm, codegen/kernel_emitter.h)
// of one GPU executable, run on a CUDA stream by cuBLASLt.
//
// Loading: cuBLASLt is loaded with dlopen on first use, as NVRTC is
// (codegen/nvrtc_compiler.h), not linked: a machine without it gets an
// error that says so (CublasLtUnavailableReason) when a program with a
// GEMM is compiled for a CUDA device, not a binary that fails to start.
// The names tried, in order: ${BATON_CUDA_LIB_DIR}/libcublasLt.so.13 and
// .so.12 (when CMake defines BATON_CUDA_LIB_DIR), then libcublasLt.so.13,
// .so.12 and .so on the loader's path. cublasLt.h is included (by the .cc)
// for its types and the entry points' signatures only.
//
// Semantics: the row-major action as cuBLASLt's column-major problem
// (codegen/gemm_layout.h: c^T = b^T a^T, strided batches through
// CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT / STRIDED_BATCH_OFFSET), alpha 1,
// beta 0. float32 computes with CUBLAS_COMPUTE_32F -- IEEE float32
// products and sums, never TF32; float64 with CUBLAS_COMPUTE_64F; float16
// and bfloat16 are read and written as themselves and accumulate in
// float32 (CUBLAS_COMPUTE_32F, float scale). No workspace: the emitter
// reserves no scratch for a GEMM, and 0 bytes is a valid cuBLASLt
// workspace (the algorithms that need one are left out).
//
// Plans: per (dtype, batch, m, n, k, trans_a, trans_b, and the alignment
// of the three pointers, 256 bytes or less) the matmul descriptor, the
// layouts and the algorithm cublasLtMatmulAlgoGetHeuristic picks, made on
// the first run of that shape and kept for the object's life. The
// alignment is part of the key because cuBLASLt's default preference
// assumes 256-byte aligned matrices, and a scan's slices or a temporary
// may be less aligned; a batch stride that breaks the alignment of later
// matrices lowers it too.
//
// Handles: one cuBLASLt handle per device ordinal for the process, made
// on first use with that device current, never destroyed (like NVRTC, it
// lives as long as the process may call it).
//
// Ownership: owns its plans' descriptors. The caller keeps it alive until
// the device is past every GEMM it enqueued (the GPU executable's runs
// hold it).
// Thread-safety: Run may be called from any thread, concurrently (plans
// are made under a mutex and never changed; a cuBLASLt handle takes the
// stream per call).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#include "baton/backend/cuda/codegen/kernel_emitter.h"
#include "baton/core/status.h"

struct CUstream_st;  // cudaStream_t

namespace baton::cuda {

// "" when cuBLASLt is loaded, else one sentence saying which libraries were
// tried, why loading failed and what to do. Loads it on first call.
const std::string& CublasLtUnavailableReason();

class CublasLtGemms {
 public:
  // The GEMMs of one executable on CUDA device `ordinal`; `what` ("f on
  // cuda:0") names them in errors. Makes no CUDA or cuBLASLt call.
  CublasLtGemms(int ordinal, std::string what);
  ~CublasLtGemms();
  CublasLtGemms(const CublasLtGemms&) = delete;
  CublasLtGemms& operator=(const CublasLtGemms&) = delete;

  // Enqueues `gemm` (Action::kGemm, float dtype, m, n, k >= 1) on
  // `stream`, whose device (this object's ordinal) is current: `a`, `b`,
  // `c` are the device addresses of the action's operands and result.
  // FailedPrecondition without cuBLASLt; InvalidArgument for a dtype it
  // does not take; Internal, with cuBLASLt's status, when it refuses.
  Status Run(const codegen::Action& gemm, const void* a, const void* b,
             void* c, CUstream_st* stream);

 private:
  struct Plan;  // cublaslt_gemm.cc
  // dtype, batch, m, n, k, trans_a, trans_b, alignment of A, B, C/D.
  using Key = std::tuple<int, int64_t, int64_t, int64_t, int64_t, bool, bool,
                         uint32_t, uint32_t, uint32_t>;
  Result<const Plan*> PlanFor(const codegen::Action& gemm, const Key& key);

  const int ordinal_;
  const std::string what_;
  std::mutex mu_;
  std::map<Key, std::unique_ptr<Plan>> plans_;  // guarded by mu_
};

}  // namespace baton::cuda
