// CudaStream: the CUDA stream one run of a GPU executable's command list
// enqueues on (gpu_executable.h, Target::kCuda), with the byte moves that
// command list needs besides kernels and GEMMs: device-to-device copies,
// reads back to the host and writes from it (steps run on the host, a while
// loop's condition, a case's index). It is the RegionMemory
// (backend/region_step.h) of the control-flow steps the run contains, and
// the `context` their regions' RunOnCaller receive.
//
// No CUDA header here (gpu_executable.cc includes this and is built
// without CUDA's): the stream is CUstream_st*, which is cudaStream_t.
// Built only with the CUDA backend (cuda_stream.cc); without it
// cuda_program_stub.cc defines these methods to fail (nothing constructs
// a CudaStream there).
//
// Ownership: refers to a stream it does not own (the CudaBackend's); lives
// on the stack of one run (CudaProgram::Launch).
// Thread-safety: used by the one thread that enqueues the run.
#pragma once

#include <cstdint>
#include <string>

#include "baton/backend/region_step.h"
#include "baton/core/status.h"

struct CUstream_st;  // cudaStream_t is CUstream_st*

namespace baton::cuda {

class CudaStream final : public RegionMemory {
 public:
  // Stream `stream` of CUDA device `ordinal` (current on the calling
  // thread).
  CudaStream(int ordinal, CUstream_st* stream);

  int ordinal() const { return ordinal_; }
  CUstream_st* get() const { return stream_; }

  // Enqueues copying `bytes` from `src` to `dst` (any memory CUDA knows,
  // cudaMemcpyDefault) behind the work on the stream; returns at once.
  Status Copy(void* dst, const void* src, int64_t bytes) const override;
  // Copies `bytes` at `src` into host memory `dst` behind the work on the
  // stream and waits until they are there.
  Status Read(void* dst, const void* src, int64_t bytes) const override;
  // Copies `bytes` of host memory `src` to `dst` behind the work on the
  // stream and waits until they are there (`src` may be reused then).
  Status Write(void* dst, const void* src, int64_t bytes) const;
  // Waits until every piece of work enqueued on the stream is done.
  Status Synchronize() const;

 private:
  // "cuda:0: <what>" for errors.
  std::string Doing(const std::string& what) const;

  int ordinal_;
  CUstream_st* stream_;
};

}  // namespace baton::cuda
