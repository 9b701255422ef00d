// The GPU executable's device side in a build without the CUDA backend
// (cuda_program.h, cuda_stream.h): Open says the backend is not built, and
// nothing else is reachable (no CudaProgram, CudaStream or CudaGraph is
// ever made).
#include "baton/backend/cuda/cuda_graph.h"
#include "baton/backend/cuda/cuda_platform.h"
#include "baton/backend/cuda/cuda_program.h"
#include "baton/backend/cuda/cuda_stream.h"

namespace baton::cuda {
namespace {

Status NotBuilt() { return Unimplemented(UnavailableReason()); }

}  // namespace

struct CudaProgram::Impl {};

Result<std::unique_ptr<CudaProgram>> CudaProgram::Open(
    Device* device, const std::string& name) {
  return Unimplemented(name + ": " + device->ToString() +
                       " is not a CUDA device of this build: " +
                       UnavailableReason());
}

CudaProgram::~CudaProgram() = default;

Status CudaProgram::Load(const codegen::EmittedProgram&) { return NotBuilt(); }

const std::string& CudaProgram::arch() const {
  static const std::string none;
  return none;
}

Event CudaProgram::Launch(const std::string&,
                          const std::function<Status(const CudaStream&)>&,
                          std::shared_ptr<const void>) const {
  return Event::Failed(NotBuilt());
}

Status CudaProgram::LaunchKernel(const codegen::Action&,
                                 const codegen::KernelArgs&,
                                 const CudaStream&) const {
  return NotBuilt();
}

Status CudaProgram::Gemm(const codegen::Action&, const void*, const void*,
                         void*, const CudaStream&) const {
  return NotBuilt();
}

CudaStream::CudaStream(int ordinal, CUstream_st* stream)
    : ordinal_(ordinal), stream_(stream) {}
std::string CudaStream::Doing(const std::string& what) const { return what; }
Status CudaStream::Copy(void*, const void*, int64_t) const { return NotBuilt(); }
Status CudaStream::Read(void*, const void*, int64_t) const { return NotBuilt(); }
Status CudaStream::Write(void*, const void*, int64_t) const {
  return NotBuilt();
}
Status CudaStream::Synchronize() const { return NotBuilt(); }

CudaGraph::~CudaGraph() = default;
void CudaGraph::Destroy() {}
Status CudaGraph::Capture(const CudaStream&, int,
                          const std::function<Status(int)>&) {
  return NotBuilt();
}
Status CudaGraph::UpdateKernel(int, const codegen::KernelArgs&) {
  return NotBuilt();
}
Status CudaGraph::UpdateCopy(int, void*, const void*, int64_t) {
  return NotBuilt();
}
Status CudaGraph::Launch(const CudaStream&) const { return NotBuilt(); }

}  // namespace baton::cuda
