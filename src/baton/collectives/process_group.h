// ProcessGroup: several baton processes joined for collectives, on an
// existing engine: Gloo over TCP, or MPI when the processes were started by
// mpirun. baton calls them; it has no transport of its own.
//
// Connect() (Gloo, gloo_process_group.cc) rendezvouses through the
// coordinator (coordinator.h; process 0 serves it) and builds a Gloo
// full-mesh context over the TCP transport on the given interface address.
// Each collective is bounded by op_timeout: a peer that died or hangs gives a
// Status naming the op (and the rank when Gloo says), never a hang.
// Connect sets SIGPIPE to be ignored when it has its default action (a
// write to a peer that left would otherwise kill the process instead of
// failing the collective); a handler the program installed is kept.
//
// ConnectMpi() (mpi_process_group.cc) joins MPI_COMM_WORLD of a job started
// by mpirun (MPI_Init_thread once per process, MPI_Finalize at exit) on a
// communicator of its own. MPI has no per-operation timeout: a dead peer is
// handled by mpirun, which ends the whole job.
//
// Built without Gloo or MPI (CMake found no libgloo-dev / libopenmpi-dev),
// the matching Connect returns kUnimplemented saying so (the *_stub.cc
// files), and GlooAvailable()/MpiAvailable() say false.
//
// The collectives work on host memory, in place or into a caller buffer.
//
// Ownership/threads: a ProcessGroup owns its Gloo context (and, in process
// 0, the coordinator server) or its MPI communicator. Its collectives must
// be called from one thread at a time (bt.distributed holds a lock around
// them) and in the same order on every process; several Gloo groups may live
// in one process (the tests run ranks as threads).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "baton/core/dtype.h"
#include "baton/core/status.h"

namespace baton::collectives {

enum class ReduceOp { kSum, kMax, kMin };

struct ProcessGroupOptions {
  std::string coordinator_address;  // host:port that process 0 serves
  int num_processes = 1;
  int process_id = 0;
  // Address whose interface Gloo binds for its peer connections.
  std::string interface_host = "127.0.0.1";
  std::chrono::milliseconds init_timeout{60000};
  std::chrono::milliseconds op_timeout{60000};
};

class ProcessGroup {
 public:
  // Whether baton was built with Gloo (false: Connect always fails).
  static bool GlooAvailable();
  // Joins the group over Gloo; fails after init_timeout with which process
  // never came.
  static Result<std::unique_ptr<ProcessGroup>> Connect(const ProcessGroupOptions& options);

  // Whether baton was built with MPI (false: ConnectMpi always fails).
  static bool MpiAvailable();
  // Joins the MPI job this process was started in (by mpirun).
  static Result<std::unique_ptr<ProcessGroup>> ConnectMpi();

  virtual ~ProcessGroup() = default;
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // "gloo" or "mpi".
  virtual const char* backend() const = 0;

  // The collectives. Each first agrees with every process on what is called
  // (which collective, dtype, element or byte count, op, root), through a
  // small all-gather: processes that called different collectives (psum on
  // one, pmax on another; float32 here, int32 there; different lengths)
  // all get the same InvalidArgument naming every process's call, instead of
  // reinterpreted bits, mixed ops or an abort inside the engine.
  //
  // In place over `count` elements of float32/float64/int32/int64.
  Status AllReduce(void* data, size_t count, DType dtype, ReduceOp op);
  // `out` holds size() * bytes: process i's `bytes` land at out + i*bytes.
  Status AllGather(const void* in, void* out, size_t bytes);
  // In place: every process ends with root's `bytes`.
  Status Broadcast(void* data, size_t bytes, int root);
  Status Barrier();

 protected:
  ProcessGroup() = default;
  // The engine's collectives, called once every process agreed on the call.
  virtual Status DoAllReduce(void* data, size_t count, DType dtype, ReduceOp op) = 0;
  virtual Status DoAllGather(const void* in, void* out, size_t bytes) = 0;
  virtual Status DoBroadcast(void* data, size_t bytes, int root) = 0;
  virtual Status DoBarrier() = 0;

 private:
  // What one process called, as every process sends it before the call.
  struct CallHeader {
    uint32_t collective = 0;  // 1 all_reduce, 2 all_gather, 3 broadcast, 4 barrier
    uint32_t dtype = 0;       // DType (all_reduce), else 0
    uint64_t count = 0;       // elements (all_reduce) or bytes
    int64_t detail = 0;       // ReduceOp (all_reduce), root (broadcast)
  };
  Status Agree(const CallHeader& mine);
};

// The argument checks both engines share.
Status CheckBroadcastRoot(int root, int size);

}  // namespace baton::collectives
