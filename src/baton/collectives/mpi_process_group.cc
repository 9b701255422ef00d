// ProcessGroup over MPI (CMake builds this file only when it finds MPI;
// mpi_process_group_stub.cc otherwise).
//
// MPI is initialised once per process, on the first ConnectMpi, with
// MPI_THREAD_SERIALIZED (bt.distributed calls collectives from one thread
// at a time), and finalised at process exit; a group is an MPI_Comm_dup of
// MPI_COMM_WORLD, freed with the group, so shutdown() and a new
// initialize() work. Errors return (MPI_ERRORS_RETURN) and become a Status
// with MPI's own message.
// The C API only: Open MPI's and MPICH's mpi.h otherwise pull in their C++
// bindings, which need libmpi_cxx at link time.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <string>

#include "baton/collectives/process_group.h"

namespace baton::collectives {
namespace {

Status MpiError(const std::string& op, int rank, int size, int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  return Status(ErrorCode::kFailedPrecondition,
                op + " failed on process " + std::to_string(rank) + " of " +
                    std::to_string(size) + " (MPI): " + std::string(text, len));
}

void FinalizeAtExit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

// MPI_Init_thread once; its result for every later caller.
Status InitializeMpiOnce() {
  static std::once_flag once;
  static Status status = OkStatus();
  std::call_once(once, [] {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized) return;  // the embedding program did it (and finalises)
    int provided = 0;
    int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    if (rc != MPI_SUCCESS) {
      status = Status(ErrorCode::kFailedPrecondition, "MPI_Init_thread failed");
      return;
    }
    std::atexit(FinalizeAtExit);
    if (provided < MPI_THREAD_SERIALIZED) {
      status = Status(ErrorCode::kFailedPrecondition,
                      "this MPI gives thread level " + std::to_string(provided) +
                          "; baton needs MPI_THREAD_SERIALIZED (calls from one thread at a time, "
                          "any thread)");
    }
  });
  return status;
}

MPI_Datatype MpiType(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return MPI_FLOAT;
    case DType::kFloat64: return MPI_DOUBLE;
    case DType::kInt32: return MPI_INT32_T;
    case DType::kInt64: return MPI_INT64_T;
    default: return MPI_DATATYPE_NULL;
  }
}

MPI_Op MpiOp(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return MPI_SUM;
    case ReduceOp::kMax: return MPI_MAX;
    case ReduceOp::kMin: return MPI_MIN;
  }
  return MPI_OP_NULL;
}

// MPI counts are int: larger buffers go in chunks of at most 1 GiB.
constexpr size_t kMaxChunkBytes = size_t{1} << 30;

class MpiProcessGroup final : public ProcessGroup {
 public:
  explicit MpiProcessGroup(MPI_Comm comm) : comm_(comm) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiProcessGroup() override { MPI_Comm_free(&comm_); }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const char* backend() const override { return "mpi"; }

  Status DoAllReduce(void* data, size_t count, DType dtype, ReduceOp op) override {
    MPI_Datatype type = MpiType(dtype);
    if (type == MPI_DATATYPE_NULL) {
      return InvalidArgument("all_reduce: dtype " + std::string(dtype_name(dtype)) +
                             " is not supported; use float32, float64, int32 or int64");
    }
    const size_t item = dtype_size(dtype);
    const size_t chunk = kMaxChunkBytes / item;
    char* p = static_cast<char*>(data);
    for (size_t done = 0; done < count; done += chunk) {
      const int n = static_cast<int>(std::min(chunk, count - done));
      int rc = MPI_Allreduce(MPI_IN_PLACE, p + done * item, n, type, MpiOp(op), comm_);
      if (rc != MPI_SUCCESS) return MpiError("all_reduce", rank_, size_, rc);
    }
    return OkStatus();
  }

  Status DoAllGather(const void* in, void* out, size_t bytes) override {
    if (bytes == 0) return OkStatus();
    if (bytes > kMaxChunkBytes) {
      return InvalidArgument("all_gather over MPI: " + std::to_string(bytes) +
                             " bytes from each process; at most 1 GiB");
    }
    int rc = MPI_Allgather(in, static_cast<int>(bytes), MPI_BYTE, out, static_cast<int>(bytes),
                           MPI_BYTE, comm_);
    return rc == MPI_SUCCESS ? OkStatus() : MpiError("all_gather", rank_, size_, rc);
  }

  Status DoBroadcast(void* data, size_t bytes, int root) override {
    if (Status s = CheckBroadcastRoot(root, size_); !s.ok()) return s;
    char* p = static_cast<char*>(data);
    for (size_t done = 0; done < bytes; done += kMaxChunkBytes) {
      const int n = static_cast<int>(std::min(kMaxChunkBytes, bytes - done));
      int rc = MPI_Bcast(p + done, n, MPI_BYTE, root, comm_);
      if (rc != MPI_SUCCESS) {
        return MpiError("broadcast from process " + std::to_string(root), rank_, size_, rc);
      }
    }
    return OkStatus();
  }

  Status DoBarrier() override {
    int rc = MPI_Barrier(comm_);
    return rc == MPI_SUCCESS ? OkStatus() : MpiError("barrier", rank_, size_, rc);
  }

 private:
  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

bool ProcessGroup::MpiAvailable() { return true; }

Result<std::unique_ptr<ProcessGroup>> ProcessGroup::ConnectMpi() {
  if (Status s = InitializeMpiOnce(); !s.ok()) return s;
  MPI_Comm comm = MPI_COMM_NULL;
  int rc = MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  if (rc != MPI_SUCCESS) return MpiError("initialize (MPI_Comm_dup)", 0, 1, rc);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  return std::unique_ptr<ProcessGroup>(new MpiProcessGroup(comm));
}

}  // namespace baton::collectives
