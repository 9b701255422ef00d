// ProcessGroup: several baton processes joined by Gloo over TCP.
//
// Connect() rendezvouses through the coordinator (coordinator.h; process 0
// serves it) and builds a Gloo full-mesh context over the TCP transport on
// the given interface address. The collectives work on host memory, in
// place or into a caller buffer; each is bounded by op_timeout: a peer that
// died or hangs gives a Status naming the op (and the rank when Gloo says),
// never a hang or a crash.
//
// Built without Gloo (CMake found no libgloo-dev), Connect() returns
// kUnimplemented "baton was built without Gloo" (process_group_stub.cc).
//
// Ownership/threads: a ProcessGroup owns its Gloo context (and, in process
// 0, the coordinator server). Its collectives must be called from one
// thread at a time (each takes the next message tag; bt.distributed holds a
// lock around them) and in the same order on every process; several groups
// may live in one process (the tests run ranks as threads).
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
  static bool Available();

  // Joins the group; fails after init_timeout with which process never came.
  static Result<std::unique_ptr<ProcessGroup>> Connect(const ProcessGroupOptions& options);
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const;
  int size() const;

  // In place over `count` elements of float32/float64/int32/int64.
  Status AllReduce(void* data, size_t count, DType dtype, ReduceOp op);
  // `out` holds size() * bytes: process i's `bytes` land at out + i*bytes.
  Status AllGather(const void* in, void* out, size_t bytes);
  // In place: every process ends with root's `bytes`.
  Status Broadcast(void* data, size_t bytes, int root);
  Status Barrier();

  struct Impl;

 private:
  explicit ProcessGroup(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace baton::collectives
