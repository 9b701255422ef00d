// CudaGraph: one segment of a GPU executable's command list captured as a
// CUDA graph on the compute stream (what a LaunchPlan's kCapture,
// kRecapture, kUpdate and kReplay mean on a CUDA device, launch_plan.h).
//
// Capture: cudaStreamBeginCapture (thread-local mode) on the run's stream,
// the segment's nodes enqueued as plain launches (cudaLaunchKernel,
// cudaMemcpyAsync, cuBLASLt's matmul), cudaStreamEndCapture,
// cudaGraphInstantiate. After each node is enqueued the capture's current
// dependencies (cudaStreamGetCaptureInfo) are its graph node, kept so that
// kernel and copy nodes can be updated in place later
// (cudaGraphExecKernelNodeSetParams with the node's function and launch
// shape and new argument block; cudaGraphExecMemcpyNodeSetParams1D). A
// GEMM is cuBLASLt's choice of one or more kernels whose parameter blocks
// baton does not know: its addresses change only by a new capture (the
// LaunchPlan recaptures for that), and its node handle is not kept.
// Launch: cudaGraphLaunch on the stream.
//
// Any failure (capture refused by something the segment called, an update
// the driver rejects) is returned as a Status; the caller then drops the
// plan and runs the segment directly. An invalidated capture is always
// ended (the stream is left usable).
//
// No CUDA header here (gpu_executable.cc includes it and builds without
// CUDA's). Built with the CUDA backend (cuda_graph.cc); without it
// cuda_program_stub.cc defines the methods to fail (none is ever made).
//
// Ownership: owns its cudaGraph_t and cudaGraphExec_t (destroyed by the
// destructor, or by the next Capture). The owner keeps it alive until the
// device is past every launch of it (the executable's runs hold the
// executable).
// Thread-safety: none; the owner serialises use (one mutex per segment).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "baton/backend/cuda/codegen/kernel_emitter.h"
#include "baton/core/status.h"

struct CUgraph_st;      // cudaGraph_t
struct CUgraphExec_st;  // cudaGraphExec_t
struct CUgraphNode_st;  // cudaGraphNode_t

namespace baton::cuda {

class CudaStream;  // cuda_stream.h

class CudaGraph {
 public:
  explicit CudaGraph(std::string what) : what_(std::move(what)) {}
  ~CudaGraph();
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;

  // Replaces the graph with what `enqueue(i)`, called for i in
  // [0, num_nodes), enqueues on `stream` under capture, instantiated.
  // Does not launch it.
  Status Capture(const CudaStream& stream, int num_nodes,
                 const std::function<Status(int)>& enqueue);
  // Node `node` (a kernel launch) now takes `args`.
  Status UpdateKernel(int node, const codegen::KernelArgs& args);
  // Node `node` (a copy) now copies `bytes` from `src` to `dst`.
  Status UpdateCopy(int node, void* dst, const void* src, int64_t bytes);
  // Enqueues the instantiated graph on `stream`.
  Status Launch(const CudaStream& stream) const;

  bool instantiated() const { return exec_ != nullptr; }

 private:
  void Destroy();

  std::string what_;
  CUgraph_st* graph_ = nullptr;
  CUgraphExec_st* exec_ = nullptr;
  std::vector<CUgraphNode_st*> nodes_;  // per node; null: not updatable
};

}  // namespace baton::cuda
