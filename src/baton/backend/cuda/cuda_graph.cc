// A segment of a command list as a CUDA graph (cuda_graph.h).
#include "baton/backend/cuda/cuda_graph.h"

#include <cuda_runtime_api.h>

#include "baton/backend/cuda/cuda_error.h"
#include "baton/backend/cuda/cuda_stream.h"

namespace baton::cuda {

CudaGraph::~CudaGraph() { Destroy(); }

void CudaGraph::Destroy() {
  // Teardown: nothing to report to. A graph exec still running finishes
  // (CUDA defers the release until its launches are done).
  if (exec_ != nullptr) (void)cudaGraphExecDestroy(exec_);
  if (graph_ != nullptr) (void)cudaGraphDestroy(graph_);
  exec_ = nullptr;
  graph_ = nullptr;
  nodes_.clear();
  (void)cudaGetLastError();
}

Status CudaGraph::Capture(const CudaStream& stream, int num_nodes,
                          const std::function<Status(int)>& enqueue) {
  Destroy();
  const std::string doing = what_ + ": capturing a CUDA graph";
  cudaStream_t s = stream.get();
  // Thread-local: other threads' unsafe calls (an allocation on another
  // stream) do not invalidate this capture.
  BATON_RETURN_IF_ERROR(
      CudaError(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal),
                "cudaStreamBeginCapture", doing));
  nodes_.assign(static_cast<size_t>(num_nodes), nullptr);
  Status enqueued = OkStatus();
  for (int i = 0; i < num_nodes && enqueued.ok(); ++i) {
    enqueued = enqueue(i);
    if (!enqueued.ok()) break;
    // The capture's frontier is the node just enqueued (the stream is a
    // chain): keep it when it is exactly one node.
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    const cudaGraphNode_t* deps = nullptr;
    size_t num_deps = 0;
    enqueued = CudaError(cudaStreamGetCaptureInfo(s, &status, nullptr, nullptr,
                                                  &deps, nullptr, &num_deps),
                         "cudaStreamGetCaptureInfo", doing);
    if (enqueued.ok() && status != cudaStreamCaptureStatusActive) {
      enqueued = Internal(doing + ": the capture was invalidated by node " +
                          std::to_string(i));
    }
    if (enqueued.ok() && num_deps == 1) nodes_[static_cast<size_t>(i)] = deps[0];
  }
  // Always ended, so the stream is usable whatever happened.
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(s, &graph);
  graph_ = graph;
  if (!enqueued.ok()) {
    Destroy();
    return enqueued;
  }
  if (Status st = CudaError(ended, "cudaStreamEndCapture", doing); !st.ok()) {
    Destroy();
    return st;
  }
  cudaGraphExec_t exec = nullptr;
  if (Status st = CudaError(cudaGraphInstantiate(&exec, graph_, 0),
                            "cudaGraphInstantiate", doing);
      !st.ok()) {
    Destroy();
    return st;
  }
  exec_ = exec;
  return OkStatus();
}

Status CudaGraph::UpdateKernel(int node, const codegen::KernelArgs& args) {
  const std::string doing =
      what_ + ": updating kernel node " + std::to_string(node);
  if (exec_ == nullptr || node < 0 ||
      node >= static_cast<int>(nodes_.size()) ||
      nodes_[static_cast<size_t>(node)] == nullptr) {
    return Internal(doing + ": no such node in the captured graph");
  }
  cudaGraphNode_t n = nodes_[static_cast<size_t>(node)];
  // The captured node's function, launch shape and item count; the new
  // argument block (the entry is (const KernelArgs, bt::i64 n)).
  cudaKernelNodeParams params{};
  BATON_RETURN_IF_ERROR(CudaError(cudaGraphKernelNodeGetParams(n, &params),
                                  "cudaGraphKernelNodeGetParams", doing));
  if (params.kernelParams == nullptr) {
    return Internal(doing + ": the captured node has no parameter array");
  }
  void* kernel_params[] = {const_cast<codegen::KernelArgs*>(&args),
                           params.kernelParams[1]};
  params.kernelParams = kernel_params;
  params.extra = nullptr;
  return CudaError(cudaGraphExecKernelNodeSetParams(exec_, n, &params),
                   "cudaGraphExecKernelNodeSetParams", doing);
}

Status CudaGraph::UpdateCopy(int node, void* dst, const void* src,
                             int64_t bytes) {
  const std::string doing =
      what_ + ": updating copy node " + std::to_string(node);
  if (exec_ == nullptr || node < 0 ||
      node >= static_cast<int>(nodes_.size()) ||
      nodes_[static_cast<size_t>(node)] == nullptr) {
    return Internal(doing + ": no such node in the captured graph");
  }
  return CudaError(
      cudaGraphExecMemcpyNodeSetParams1D(
          exec_, nodes_[static_cast<size_t>(node)], dst, src,
          static_cast<size_t>(bytes), cudaMemcpyDefault),
      "cudaGraphExecMemcpyNodeSetParams1D", doing);
}

Status CudaGraph::Launch(const CudaStream& stream) const {
  if (exec_ == nullptr) {
    return Internal(what_ + ": launching a CUDA graph never instantiated");
  }
  const cudaError_t error = cudaGraphLaunch(exec_, stream.get());
  if (error == cudaSuccess) return OkStatus();
  return CudaError(error, "cudaGraphLaunch", what_ + ": launching its graph");
}

}  // namespace baton::cuda
