// GEMM actions through cuBLASLt, loaded with dlopen (cublaslt_gemm.h).
#include "baton/backend/cuda/cublaslt_gemm.h"

#include "baton/backend/cuda/codegen/toolkit_library.h"

#include <cublasLt.h>
#include <dlfcn.h>

#include <type_traits>
#include <utility>
#include <vector>

#include "baton/backend/cuda/codegen/gemm_layout.h"
#include "baton/core/dtype.h"

namespace baton::cuda {
namespace {

// The entry points used, with the signatures cublasLt.h declares (they are
// resolved with dlsym, never called through the declarations).
struct CublasLt {
  std::string unavailable_reason;  // "" when every entry point resolved
  decltype(&::cublasLtCreate) create = nullptr;
  decltype(&::cublasLtGetStatusName) status_name = nullptr;
  decltype(&::cublasLtGetStatusString) status_string = nullptr;
  decltype(&::cublasLtMatmul) matmul = nullptr;
  decltype(&::cublasLtMatmulDescCreate) desc_create = nullptr;
  decltype(&::cublasLtMatmulDescDestroy) desc_destroy = nullptr;
  decltype(&::cublasLtMatmulDescSetAttribute) desc_set = nullptr;
  decltype(&::cublasLtMatrixLayoutCreate) layout_create = nullptr;
  decltype(&::cublasLtMatrixLayoutDestroy) layout_destroy = nullptr;
  decltype(&::cublasLtMatrixLayoutSetAttribute) layout_set = nullptr;
  decltype(&::cublasLtMatmulPreferenceCreate) pref_create = nullptr;
  decltype(&::cublasLtMatmulPreferenceDestroy) pref_destroy = nullptr;
  decltype(&::cublasLtMatmulPreferenceSetAttribute) pref_set = nullptr;
  decltype(&::cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;
};

// Loaded once; never destroyed (the library is never dlclose'd).
const CublasLt& Lt() {
  static const CublasLt* lt = [] {
    auto* l = new CublasLt;
    const ToolkitLibrary lib = OpenToolkitLibrary("cublasLt");
    void* library = lib.handle;
    if (library == nullptr) {
      l->unavailable_reason =
          "cuBLASLt could not be loaded (tried " + lib.tried +
          "; last error: " + lib.last_error +
          "): install the CUDA toolkit's cuBLAS (libcublasLt.so.13) or add "
          "its folder to LD_LIBRARY_PATH";
      return l;
    }
    std::string missing;
    Resolve(library, "cublasLtCreate", &l->create, &missing);
    Resolve(library, "cublasLtGetStatusName", &l->status_name, &missing);
    Resolve(library, "cublasLtGetStatusString", &l->status_string, &missing);
    Resolve(library, "cublasLtMatmul", &l->matmul, &missing);
    Resolve(library, "cublasLtMatmulDescCreate", &l->desc_create, &missing);
    Resolve(library, "cublasLtMatmulDescDestroy", &l->desc_destroy, &missing);
    Resolve(library, "cublasLtMatmulDescSetAttribute", &l->desc_set,
            &missing);
    Resolve(library, "cublasLtMatrixLayoutCreate", &l->layout_create,
            &missing);
    Resolve(library, "cublasLtMatrixLayoutDestroy", &l->layout_destroy,
            &missing);
    Resolve(library, "cublasLtMatrixLayoutSetAttribute", &l->layout_set,
            &missing);
    Resolve(library, "cublasLtMatmulPreferenceCreate", &l->pref_create,
            &missing);
    Resolve(library, "cublasLtMatmulPreferenceDestroy", &l->pref_destroy,
            &missing);
    Resolve(library, "cublasLtMatmulPreferenceSetAttribute", &l->pref_set,
            &missing);
    Resolve(library, "cublasLtMatmulAlgoGetHeuristic", &l->heuristic,
            &missing);
    if (!missing.empty()) {
      l->unavailable_reason =
          "the cuBLASLt library found lacks " + missing +
          ": install the CUDA 13 toolkit's cuBLAS";
    }
    return l;
  }();
  return *lt;
}

// "CUBLAS_STATUS_NOT_SUPPORTED (the functionality requested is not
// supported)".
std::string StatusText(cublasStatus_t status) {
  const CublasLt& lt = Lt();
  return std::string(lt.status_name(status)) + " (" +
         lt.status_string(status) + ")";
}

Status Check(cublasStatus_t status, const char* call, const std::string& what) {
  if (status == CUBLAS_STATUS_SUCCESS) return OkStatus();
  return Internal(what + " failed: " + call + " returned " +
                  StatusText(status));
}

// The process's handle for device `ordinal` (current on this thread).
Result<cublasLtHandle_t> HandleFor(int ordinal, const std::string& what) {
  static std::mutex mu;
  static auto* handles = new std::map<int, cublasLtHandle_t>;
  std::lock_guard<std::mutex> lock(mu);
  auto it = handles->find(ordinal);
  if (it != handles->end()) return it->second;
  cublasLtHandle_t handle = nullptr;
  BATON_RETURN_IF_ERROR(Check(Lt().create(&handle), "cublasLtCreate",
                              what + ": creating the cuBLASLt handle"));
  handles->emplace(ordinal, handle);
  return handle;
}

// The largest power of two up to 256 that divides `address` and, when the
// batch has several matrices, the byte distance between them.
uint32_t Alignment(const void* address, int64_t batch, int64_t stride_bytes) {
  uint64_t bits = reinterpret_cast<uintptr_t>(address) | 256u;
  if (batch > 1) bits |= static_cast<uint64_t>(stride_bytes);
  return static_cast<uint32_t>(bits & (~bits + 1));
}

struct Types {
  cudaDataType_t data;
  cublasComputeType_t compute;
  cudaDataType_t scale;
};

Result<Types> TypesOf(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return Types{CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F};
    case DType::kFloat64:
      return Types{CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F};
    case DType::kFloat16:
      return Types{CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F};
    case DType::kBFloat16:
      return Types{CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F};
    default:
      return InvalidArgument("cuBLASLt GEMM of " +
                             std::string(dtype_name(dtype)) +
                             ": only float16, bfloat16, float32 and float64");
  }
}

}  // namespace

const std::string& CublasLtUnavailableReason() {
  return Lt().unavailable_reason;
}

// A shape's descriptors and algorithm (cublaslt_gemm.h).
struct CublasLtGemms::Plan {
  cublasLtHandle_t handle = nullptr;  // the device's (HandleFor)
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  bool double_scale = false;
  ~Plan() {
    const CublasLt& lt = Lt();
    if (op != nullptr) (void)lt.desc_destroy(op);
    for (cublasLtMatrixLayout_t layout : {a, b, d}) {
      if (layout != nullptr) (void)lt.layout_destroy(layout);
    }
  }
};

CublasLtGemms::CublasLtGemms(int ordinal, std::string what)
    : ordinal_(ordinal), what_(std::move(what)) {}

CublasLtGemms::~CublasLtGemms() = default;

Result<const CublasLtGemms::Plan*> CublasLtGemms::PlanFor(
    const codegen::Action& gemm, const Key& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = plans_.find(key);
  if (it != plans_.end()) return it->second.get();
  const CublasLt& lt = Lt();
  const std::string what =
      what_ + ": planning a " + std::string(dtype_name(gemm.dtype)) +
      " GEMM [" + std::to_string(gemm.batch) + "] " + std::to_string(gemm.m) +
      "x" + std::to_string(gemm.k) + (gemm.trans_a ? "^T" : "") + " * " +
      std::to_string(gemm.k) + "x" + std::to_string(gemm.n) +
      (gemm.trans_b ? "^T" : "");
  BATON_ASSIGN_OR_RETURN(const Types types, TypesOf(gemm.dtype));
  BATON_ASSIGN_OR_RETURN(cublasLtHandle_t handle, HandleFor(ordinal_, what_));
  if (gemm.batch > INT32_MAX) {
    return InvalidArgument(what + ": cuBLASLt takes at most 2^31-1 matrices "
                                  "in a batch");
  }
  const codegen::ColumnMajorGemm cm = codegen::ToColumnMajor(gemm);
  auto plan = std::make_unique<Plan>();
  plan->handle = handle;
  plan->double_scale = types.scale == CUDA_R_64F;
  BATON_RETURN_IF_ERROR(Check(
      lt.desc_create(&plan->op, types.compute, types.scale),
      "cublasLtMatmulDescCreate", what));
  const int32_t op_a = cm.a.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int32_t op_b = cm.b.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  BATON_RETURN_IF_ERROR(Check(lt.desc_set(plan->op, CUBLASLT_MATMUL_DESC_TRANSA,
                                          &op_a, sizeof(op_a)),
                              "cublasLtMatmulDescSetAttribute", what));
  BATON_RETURN_IF_ERROR(Check(lt.desc_set(plan->op, CUBLASLT_MATMUL_DESC_TRANSB,
                                          &op_b, sizeof(op_b)),
                              "cublasLtMatmulDescSetAttribute", what));
  const int32_t batch = static_cast<int32_t>(cm.batch);
  auto layout = [&](const codegen::ColumnMajorOperand& o,
                    cublasLtMatrixLayout_t* out) -> Status {
    BATON_RETURN_IF_ERROR(Check(
        lt.layout_create(out, types.data, static_cast<uint64_t>(o.rows),
                         static_cast<uint64_t>(o.cols), o.ld),
        "cublasLtMatrixLayoutCreate", what));
    if (batch <= 1) return OkStatus();
    BATON_RETURN_IF_ERROR(Check(
        lt.layout_set(*out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
                      sizeof(batch)),
        "cublasLtMatrixLayoutSetAttribute", what));
    const int64_t stride = o.batch_stride;
    return Check(lt.layout_set(*out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                               &stride, sizeof(stride)),
                 "cublasLtMatrixLayoutSetAttribute", what);
  };
  BATON_RETURN_IF_ERROR(layout(cm.a, &plan->a));
  BATON_RETURN_IF_ERROR(layout(cm.b, &plan->b));
  BATON_RETURN_IF_ERROR(layout(cm.d, &plan->d));

  cublasLtMatmulPreference_t pref = nullptr;
  BATON_RETURN_IF_ERROR(Check(lt.pref_create(&pref),
                              "cublasLtMatmulPreferenceCreate", what));
  std::unique_ptr<std::remove_pointer_t<cublasLtMatmulPreference_t>,
                  decltype(lt.pref_destroy)>
      pref_owner(pref, lt.pref_destroy);
  const uint64_t workspace = 0;
  BATON_RETURN_IF_ERROR(Check(
      lt.pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                  sizeof(workspace)),
      "cublasLtMatmulPreferenceSetAttribute", what));
  const uint32_t align_a = std::get<7>(key), align_b = std::get<8>(key),
                 align_d = std::get<9>(key);
  const std::pair<cublasLtMatmulPreferenceAttributes_t, uint32_t> aligns[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, align_a},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, align_b},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, align_d},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, align_d}};
  for (const auto& [attr, bytes] : aligns) {
    BATON_RETURN_IF_ERROR(Check(lt.pref_set(pref, attr, &bytes, sizeof(bytes)),
                                "cublasLtMatmulPreferenceSetAttribute", what));
  }
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  BATON_RETURN_IF_ERROR(Check(
      lt.heuristic(handle, plan->op, plan->a, plan->b, plan->d, plan->d, pref,
                   1, &result, &found),
      "cublasLtMatmulAlgoGetHeuristic", what));
  if (found < 1 || result.state != CUBLAS_STATUS_SUCCESS) {
    return Internal(what + ": cuBLASLt has no algorithm for it without "
                           "workspace at alignments " +
                    std::to_string(align_a) + "/" + std::to_string(align_b) +
                    "/" + std::to_string(align_d) + " bytes");
  }
  plan->algo = result.algo;
  const Plan* made = plan.get();
  plans_.emplace(key, std::move(plan));
  return made;
}

Status CublasLtGemms::Run(const codegen::Action& gemm, const void* a,
                          const void* b, void* c, CUstream_st* stream) {
  if (const std::string& reason = CublasLtUnavailableReason(); !reason.empty()) {
    return FailedPrecondition(what_ + ": " + reason);
  }
  if (gemm.m <= 0 || gemm.n <= 0 || gemm.k <= 0 || gemm.batch <= 0) {
    return Internal(what_ + ": an empty GEMM reached cuBLASLt");
  }
  const int64_t elem = static_cast<int64_t>(dtype_size(gemm.dtype));
  // cuBLASLt's A is the action's b, its B the action's a
  // (codegen/gemm_layout.h).
  const Key key{static_cast<int>(gemm.dtype),
                gemm.batch,
                gemm.m,
                gemm.n,
                gemm.k,
                gemm.trans_a,
                gemm.trans_b,
                Alignment(b, gemm.batch, gemm.k * gemm.n * elem),
                Alignment(a, gemm.batch, gemm.m * gemm.k * elem),
                Alignment(c, gemm.batch, gemm.m * gemm.n * elem)};
  BATON_ASSIGN_OR_RETURN(const Plan* plan, PlanFor(gemm, key));
  const float one_f = 1.0f, zero_f = 0.0f;
  const double one_d = 1.0, zero_d = 0.0;
  const void* alpha = plan->double_scale ? static_cast<const void*>(&one_d)
                                         : static_cast<const void*>(&one_f);
  const void* beta = plan->double_scale ? static_cast<const void*>(&zero_d)
                                        : static_cast<const void*>(&zero_f);
  const cublasStatus_t status =
      Lt().matmul(plan->handle, plan->op, alpha, b, plan->a, a, plan->b, beta, c,
                  plan->d, c, plan->d, &plan->algo, nullptr, 0, stream);
  if (status == CUBLAS_STATUS_SUCCESS) return OkStatus();
  return Check(status, "cublasLtMatmul",
               what_ + ": a " + std::string(dtype_name(gemm.dtype)) +
                   " GEMM of " + std::to_string(gemm.batch) + " x " +
                   std::to_string(gemm.m) + "x" + std::to_string(gemm.n) +
                   "x" + std::to_string(gemm.k));
}

}  // namespace baton::cuda
