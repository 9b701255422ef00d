// Collectives on device memory through NCCL, loaded at run time
// (nccl_process_group.h).
#include "baton/backend/cuda/nccl_process_group.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstring>
#include <functional>

#include "baton/backend/cuda/codegen/toolkit_library.h"
#include "baton/backend/cuda/cuda_error.h"
#ifdef BATON_NCCL_COORDINATOR
#include "baton/collectives/coordinator.h"
#endif

namespace baton::cuda {

// The mapping (nccl_types.cc's values) is NCCL's.
static_assert(ncclInt8 == 0 && ncclUint8 == 1 && ncclInt32 == 2 &&
              ncclUint32 == 3 && ncclInt64 == 4 && ncclFloat16 == 6 &&
              ncclFloat32 == 7 && ncclFloat64 == 8 && ncclBfloat16 == 9);
static_assert(ncclSum == 0 && ncclMax == 2 && ncclMin == 3);

namespace {

// NCCL's entry points, resolved with dlsym (never called through the
// declarations, so nothing links against libnccl).
struct Nccl {
  std::string unavailable_reason;  // "" when every entry point resolved
  decltype(&::ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&::ncclCommInitRank) comm_init_rank = nullptr;
  decltype(&::ncclCommDestroy) comm_destroy = nullptr;
  decltype(&::ncclGetErrorString) error_string = nullptr;
  decltype(&::ncclAllReduce) all_reduce = nullptr;
  decltype(&::ncclAllGather) all_gather = nullptr;
  decltype(&::ncclReduceScatter) reduce_scatter = nullptr;
  decltype(&::ncclBroadcast) broadcast = nullptr;
};

const Nccl& Lib() {
  static const Nccl* nccl = [] {
    auto* n = new Nccl;
    const ToolkitLibrary lib = OpenToolkitLibrary("nccl", {"2"});
    if (lib.handle == nullptr) {
      n->unavailable_reason =
          "NCCL could not be loaded (tried " + lib.tried + "; last error: " +
          lib.last_error +
          "): install NCCL (libnccl2, or the CUDA toolkit's libnccl.so.2) or "
          "add its folder to LD_LIBRARY_PATH";
      return n;
    }
    std::string missing;
    Resolve(lib.handle, "ncclGetUniqueId", &n->get_unique_id, &missing);
    Resolve(lib.handle, "ncclCommInitRank", &n->comm_init_rank, &missing);
    Resolve(lib.handle, "ncclCommDestroy", &n->comm_destroy, &missing);
    Resolve(lib.handle, "ncclGetErrorString", &n->error_string, &missing);
    Resolve(lib.handle, "ncclAllReduce", &n->all_reduce, &missing);
    Resolve(lib.handle, "ncclAllGather", &n->all_gather, &missing);
    Resolve(lib.handle, "ncclReduceScatter", &n->reduce_scatter, &missing);
    Resolve(lib.handle, "ncclBroadcast", &n->broadcast, &missing);
    if (!missing.empty()) {
      n->unavailable_reason = "the NCCL library found (" + lib.loaded +
                              ") lacks " + missing + ": install NCCL 2";
    }
    return n;
  }();
  return *nccl;
}

// NCCL's result as a Status naming what was done.
Status NcclCheck(ncclResult_t r, const char* call, const std::string& doing) {
  if (r == ncclSuccess) return OkStatus();
  return Internal(doing + ": " + call + " failed: " + Lib().error_string(r));
}

}  // namespace

struct NcclProcessGroup::Impl {
  collectives::ProcessGroupOptions options;
  int cuda_device = 0;
  ncclComm_t comm = nullptr;
#ifdef BATON_NCCL_COORDINATOR
  std::unique_ptr<collectives::CoordinatorServer> server;  // process 0
#endif
  std::string what;  // "NCCL group (process 1 of 2, cuda:1)"

  Status Check(ncclResult_t r, const char* call, const std::string& doing) const {
    return NcclCheck(r, call, what + ": " + doing);
  }
};

bool NcclProcessGroup::Built() { return true; }

#ifdef BATON_NCCL_COORDINATOR
namespace {

// Process 0 makes the id and serves it; the others read it.
Status ExchangeId(const collectives::ProcessGroupOptions& o,
                  const std::string& what, ncclUniqueId* id,
                  std::unique_ptr<collectives::CoordinatorServer>* server) {
  const std::string key = "baton/nccl/unique_id";
  try {
    if (o.process_id == 0) {
      BATON_ASSIGN_OR_RETURN(
          *server, collectives::CoordinatorServer::Start(o.coordinator_address));
      BATON_RETURN_IF_ERROR(NcclCheck(Lib().get_unique_id(id),
                                      "ncclGetUniqueId",
                                      what + ": making the group's id"));
      collectives::CoordinatorClient client(o.coordinator_address, o.init_timeout);
      client.set(key, std::vector<char>(id->internal,
                                        id->internal + sizeof(id->internal)));
    } else {
      collectives::CoordinatorClient client(o.coordinator_address, o.init_timeout);
      client.wait({key}, o.init_timeout);
      const std::vector<char> bytes = client.get(key);
      if (bytes.size() != sizeof(id->internal)) {
        return Internal(what + ": the coordinator's NCCL id has " +
                        std::to_string(bytes.size()) + " bytes, not " +
                        std::to_string(sizeof(id->internal)));
      }
      std::memcpy(id->internal, bytes.data(), bytes.size());
    }
  } catch (const std::exception& e) {  // CoordinatorError, Gloo's
    return FailedPrecondition(what + ": exchanging NCCL's id through the "
                              "coordinator at " + o.coordinator_address +
                              " failed: " + e.what());
  }
  return OkStatus();
}

}  // namespace
#endif

const std::string& NcclProcessGroup::UnavailableReason() {
  return Lib().unavailable_reason;
}

NcclProcessGroup::NcclProcessGroup() : impl_(std::make_unique<Impl>()) {}

NcclProcessGroup::~NcclProcessGroup() {
  if (impl_ && impl_->comm != nullptr) {
    // Teardown: the device must be past the work enqueued on the
    // communicator; nothing to report to.
    (void)cudaSetDevice(impl_->cuda_device);
    (void)cudaDeviceSynchronize();
    (void)Lib().comm_destroy(impl_->comm);
    (void)cudaGetLastError();
  }
}

int NcclProcessGroup::rank() const { return impl_->options.process_id; }
int NcclProcessGroup::size() const { return impl_->options.num_processes; }
int NcclProcessGroup::cuda_device() const { return impl_->cuda_device; }

Result<std::unique_ptr<NcclProcessGroup>> NcclProcessGroup::Start(
    const NcclOptions& options,
    const std::function<Status(const std::string& what, void* id, Impl& impl)>&
        make_id) {
  const collectives::ProcessGroupOptions& o = options.group;
  const std::string what = "NCCL group (process " +
                           std::to_string(o.process_id) + " of " +
                           std::to_string(o.num_processes) + ", cuda:" +
                           std::to_string(options.cuda_device) + ")";
  if (o.num_processes < 1 || o.process_id < 0 ||
      o.process_id >= o.num_processes) {
    return InvalidArgument(what + ": process_id must be in [0, "
                           "num_processes) and num_processes at least 1");
  }
  if (const std::string& reason = UnavailableReason(); !reason.empty()) {
    return FailedPrecondition(what + ": " + reason);
  }
  int devices = 0;
  const cudaError_t counted = cudaGetDeviceCount(&devices);
  if (counted != cudaSuccess || devices == 0) {
    (void)cudaGetLastError();
    return FailedPrecondition(
        what + ": NCCL computes on a CUDA device, and this process has none "
        "usable (" +
        (counted != cudaSuccess ? "cudaGetDeviceCount: " + CudaErrorText(counted)
                                : std::string("no CUDA device")) +
        "); run it on a machine with a GPU and its driver");
  }
  if (options.cuda_device < 0 || options.cuda_device >= devices) {
    return InvalidArgument(what + ": there are " + std::to_string(devices) +
                           " CUDA devices");
  }
  std::unique_ptr<NcclProcessGroup> group(new NcclProcessGroup());
  Impl& impl = *group->impl_;
  impl.options = o;
  impl.cuda_device = options.cuda_device;
  impl.what = what;
  BATON_RETURN_IF_ERROR(CudaError(cudaSetDevice(options.cuda_device),
                                  "cudaSetDevice", what));
  ncclUniqueId id{};
  if (o.num_processes == 1) {  // a group of one needs no exchange
    BATON_RETURN_IF_ERROR(impl.Check(Lib().get_unique_id(&id),
                                     "ncclGetUniqueId", "making the group's id"));
  } else {
    BATON_RETURN_IF_ERROR(make_id(what, &id, impl));
  }
  BATON_RETURN_IF_ERROR(impl.Check(
      Lib().comm_init_rank(&impl.comm, o.num_processes, id, o.process_id),
      "ncclCommInitRank", "joining"));
  return group;
}

Result<std::unique_ptr<NcclProcessGroup>> NcclProcessGroup::Connect(
    const NcclOptions& options) {
  // The unique id: made by process 0, exchanged through the coordinator
  // that process 0 serves for it.
  return Start(options, [&](const std::string& what, void* id,
                            Impl& impl) -> Status {
#ifdef BATON_NCCL_COORDINATOR
    return ExchangeId(options.group, what, static_cast<ncclUniqueId*>(id),
                      &impl.server);
#else
    (void)id;
    (void)impl;
    return Unimplemented(what + ": a group of several processes exchanges "
                         "NCCL's id through baton's coordinator, which this "
                         "build lacks (it comes with Gloo: install "
                         "libgloo-dev and rebuild)");
#endif
  });
}

Result<std::unique_ptr<NcclProcessGroup>> NcclProcessGroup::ConnectOver(
    collectives::ProcessGroup& ids, int cuda_device) {
  NcclOptions options;
  options.group.num_processes = ids.size();
  options.group.process_id = ids.rank();
  options.cuda_device = cuda_device;
  return Start(options, [&](const std::string& what, void* raw,
                            Impl&) -> Status {
    auto* id = static_cast<ncclUniqueId*>(raw);
    if (ids.rank() == 0) {
      BATON_RETURN_IF_ERROR(NcclCheck(Lib().get_unique_id(id),
                                      "ncclGetUniqueId",
                                      what + ": making the group's id"));
    }
    Status sent = ids.Broadcast(id->internal, sizeof(id->internal), 0);
    if (!sent.ok()) {
      return FailedPrecondition(what + ": broadcasting NCCL's id through the " +
                                std::string(ids.backend()) +
                                " group failed: " + sent.message());
    }
    return OkStatus();
  });
}

Status NcclProcessGroup::AllReduce(const void* send, void* recv, size_t count,
                                   DType dtype, collectives::ReduceOp op,
                                   CUstream_st* stream) {
  BATON_ASSIGN_OR_RETURN(int type, NcclDataType(dtype));
  return impl_->Check(
      Lib().all_reduce(send, recv, count, static_cast<ncclDataType_t>(type),
                       static_cast<ncclRedOp_t>(NcclRedOp(op)), impl_->comm,
                       stream),
      "ncclAllReduce", "all-reduce of " + std::to_string(count) + " elements");
}

Status NcclProcessGroup::AllGather(const void* send, void* recv, size_t count,
                                   DType dtype, CUstream_st* stream) {
  BATON_ASSIGN_OR_RETURN(int type, NcclDataType(dtype));
  return impl_->Check(
      Lib().all_gather(send, recv, count, static_cast<ncclDataType_t>(type),
                       impl_->comm, stream),
      "ncclAllGather", "all-gather of " + std::to_string(count) + " elements");
}

Status NcclProcessGroup::ReduceScatter(const void* send, void* recv,
                                       size_t recv_count, DType dtype,
                                       collectives::ReduceOp op,
                                       CUstream_st* stream) {
  BATON_ASSIGN_OR_RETURN(int type, NcclDataType(dtype));
  return impl_->Check(
      Lib().reduce_scatter(send, recv, recv_count,
                           static_cast<ncclDataType_t>(type),
                           static_cast<ncclRedOp_t>(NcclRedOp(op)),
                           impl_->comm, stream),
      "ncclReduceScatter",
      "reduce-scatter into " + std::to_string(recv_count) + " elements");
}

Status NcclProcessGroup::Broadcast(const void* send, void* recv, size_t count,
                                   DType dtype, int root,
                                   CUstream_st* stream) {
  BATON_RETURN_IF_ERROR(collectives::CheckBroadcastRoot(root, size()));
  BATON_ASSIGN_OR_RETURN(int type, NcclDataType(dtype));
  return impl_->Check(
      Lib().broadcast(send, recv, count, static_cast<ncclDataType_t>(type),
                      root, impl_->comm, stream),
      "ncclBroadcast", "broadcast of " + std::to_string(count) + " elements");
}

Status NcclProcessGroup::Synchronize(CUstream_st* stream) const {
  return CudaError(cudaStreamSynchronize(stream), "cudaStreamSynchronize",
                   impl_->what + ": waiting for its collectives");
}

}  // namespace baton::cuda
