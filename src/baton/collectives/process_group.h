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

  // In place over `count` elements of float32/float64/int32/int64.
  virtual Status AllReduce(void* data, size_t count, DType dtype, ReduceOp op) = 0;
  // `out` holds size() * bytes: process i's `bytes` land at out + i*bytes.
  virtual Status AllGather(const void* in, void* out, size_t bytes) = 0;
  // In place: every process ends with root's `bytes`.
  virtual Status Broadcast(void* data, size_t bytes, int root) = 0;
  virtual Status Barrier() = 0;

 protected:
  ProcessGroup() = default;
};

// The argument checks both engines share.
Status CheckBroadcastRoot(int root, int size);

}  // namespace baton::collectives
