// ProcessGroup over Gloo's TCP transport (CMake builds this file only when
// it finds Gloo; gloo_process_group_stub.cc otherwise).
#include "baton/collectives/process_group.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <exception>
#include <functional>

#include "baton/collectives/coordinator.h"

namespace baton::collectives {

namespace {

// Gloo's TCP transport writes to its sockets without MSG_NOSIGNAL: a write to
// a peer that has just left raises SIGPIPE, whose default action kills this
// process before Gloo can return the error the collective would report. So
// joining a group ignores SIGPIPE, unless the program has its own handler
// (then it is left alone); writes to a closed connection then fail with
// EPIPE and the collective fails naming the op. (Python ignores SIGPIPE
// already.) Checked on every Connect, so it holds even if the program reset
// the signal in between.
void IgnoreSigpipeUnlessHandled() {
  struct sigaction current {};
  if (sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
    std::signal(SIGPIPE, SIG_IGN);
  }
}

// The interface address must name an address of this machine before Gloo
// sees it: Gloo's device creation throws on a name that does not resolve,
// and a second attempt after that crashed inside Gloo (issue 36). Resolving
// the name and binding a socket to it (port 0, closed at once) is what
// Gloo will do; here a failure is a FailedPrecondition naming the address
// (this machine has no such interface: bt.distributed's DistributedError).
Status CheckInterfaceAddress(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found); rc != 0) {
    return Status(ErrorCode::kFailedPrecondition,
                  "interface_address '" + host + "' does not resolve (" +
                           gai_strerror(rc) +
                           "); pass an address or host name of this machine's network "
                           "interface that the other processes can reach");
  }
  std::string why;
  bool bound = false;
  for (addrinfo* a = found; a != nullptr && !bound; a = a->ai_next) {
    int fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) {
      why = std::strerror(errno);
      continue;
    }
    bound = bind(fd, a->ai_addr, a->ai_addrlen) == 0;
    if (!bound) why = std::strerror(errno);
    close(fd);
  }
  freeaddrinfo(found);
  if (bound) return OkStatus();
  return Status(ErrorCode::kFailedPrecondition,
                "interface_address '" + host + "' is not an address of this machine (" +
                         why + "); pass the address of one of its network interfaces");
}

class GlooProcessGroup final : public ProcessGroup {
 public:
  ProcessGroupOptions options;
  std::unique_ptr<CoordinatorServer> server;  // process 0 only
  std::shared_ptr<gloo::transport::Device> device;
  std::shared_ptr<gloo::rendezvous::Context> context;
  uint32_t next_tag = 1;

  int rank() const override { return options.process_id; }
  int size() const override { return options.num_processes; }
  const char* backend() const override { return "gloo"; }
  Status DoAllReduce(void* data, size_t count, DType dtype, ReduceOp op) override;
  Status DoAllGather(const void* in, void* out, size_t bytes) override;
  Status DoBroadcast(void* data, size_t bytes, int root) override;
  Status DoBarrier() override;
};

std::string Describe(const ProcessGroupOptions& o) {
  return "process " + std::to_string(o.process_id) + " of " + std::to_string(o.num_processes);
}

constexpr const char* kPeerHint =
    "; a peer process probably died or stopped calling the same collectives";
constexpr const char* kInitHint =
    "; start every process with the same coordinator_address and num_processes, "
    "or raise initialization_timeout";

// Runs one Gloo call; its exceptions become a Status naming the op.
Status Guard(const std::string& op, const ProcessGroupOptions& o, std::chrono::milliseconds timeout,
             const char* hint, const std::function<void()>& fn) {
  try {
    fn();
    return OkStatus();
  } catch (const std::exception& e) {
    return Status(ErrorCode::kFailedPrecondition,
                  op + " failed on " + Describe(o) + " (timeout " +
                      std::to_string(timeout.count()) + " ms): " + e.what() + hint);
  }
}

Status Guard(const std::string& op, const ProcessGroupOptions& o, const std::function<void()>& fn) {
  return Guard(op, o, o.op_timeout, kPeerHint, fn);
}

template <typename T>
gloo::AllreduceOptions::Func ReduceFn(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<T>);
    case ReduceOp::kMax: return static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::max<T>);
    case ReduceOp::kMin: return static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::min<T>);
  }
  return nullptr;
}

template <typename T>
void RunAllReduce(gloo::AllreduceOptions& opts, void* data, size_t count, ReduceOp op) {
  opts.setOutput(static_cast<T*>(data), count);
  opts.setReduceFunction(ReduceFn<T>(op));
  gloo::allreduce(opts);
}

}  // namespace

bool ProcessGroup::GlooAvailable() { return true; }

Result<std::unique_ptr<ProcessGroup>> ProcessGroup::Connect(const ProcessGroupOptions& options) {
  if (options.num_processes < 1) {
    return InvalidArgument("num_processes is " + std::to_string(options.num_processes) +
                           "; it must be at least 1");
  }
  if (options.process_id < 0 || options.process_id >= options.num_processes) {
    return InvalidArgument("process_id is " + std::to_string(options.process_id) +
                           "; it must be in [0, num_processes=" +
                           std::to_string(options.num_processes) + ")");
  }
  Result<HostPort> hp = ParseHostPort(options.coordinator_address);
  if (!hp.ok()) return hp.status();
  if (Status s = CheckInterfaceAddress(options.interface_host); !s.ok()) return s;
  IgnoreSigpipeUnlessHandled();
  auto group = std::make_unique<GlooProcessGroup>();
  group->options = options;
  if (options.process_id == 0) {
    Result<std::unique_ptr<CoordinatorServer>> server =
        CoordinatorServer::Start(options.coordinator_address);
    if (!server.ok()) return server.status();
    group->server = std::move(server).value();
  }
  Status s = Guard("initialize (rendezvous at " + options.coordinator_address + ")", options,
                   options.init_timeout, kInitHint, [&] {
    gloo::transport::tcp::attr attr;
    attr.hostname = options.interface_host;
    group->device = gloo::transport::tcp::CreateDevice(attr);
    CoordinatorClient client(options.coordinator_address, options.init_timeout);
    group->context = std::make_shared<gloo::rendezvous::Context>(options.process_id,
                                                                options.num_processes);
    group->context->setTimeout(options.init_timeout);
    group->context->connectFullMesh(client, group->device);
    group->context->setTimeout(options.op_timeout);
    // Every process has connected once all have said so: process 0 must
    // keep serving the store until the last one has read its addresses.
    client.set("baton/connected/" + std::to_string(options.process_id), {'1'});
    std::vector<std::string> keys;
    for (int i = 0; i < options.num_processes; ++i) keys.push_back("baton/connected/" + std::to_string(i));
    client.wait(keys, options.init_timeout);
  });
  if (!s.ok()) return s;
  return std::unique_ptr<ProcessGroup>(std::move(group));
}

namespace {

Status GlooProcessGroup::DoAllReduce(void* data, size_t count, DType dtype, ReduceOp op) {
  if (count == 0) return OkStatus();
  return Guard("all_reduce", options, [&] {
    gloo::AllreduceOptions opts(context);
    opts.setTag(next_tag++);
    opts.setTimeout(options.op_timeout);
    switch (dtype) {
      case DType::kFloat32: return RunAllReduce<float>(opts, data, count, op);
      case DType::kFloat64: return RunAllReduce<double>(opts, data, count, op);
      case DType::kInt32: return RunAllReduce<int32_t>(opts, data, count, op);
      case DType::kInt64: return RunAllReduce<int64_t>(opts, data, count, op);
      default:
        throw std::invalid_argument("dtype " + std::string(dtype_name(dtype)) +
                                    " is not supported; use float32, float64, int32 or int64");
    }
  });
}

Status GlooProcessGroup::DoAllGather(const void* in, void* out, size_t bytes) {
  if (bytes == 0) return OkStatus();
  return Guard("all_gather", options, [&] {
    gloo::AllgatherOptions opts(context);
    opts.setTag(next_tag++);
    opts.setTimeout(options.op_timeout);
    opts.setInput(const_cast<char*>(static_cast<const char*>(in)), bytes);
    opts.setOutput(static_cast<char*>(out), bytes * static_cast<size_t>(size()));
    gloo::allgather(opts);
  });
}

Status GlooProcessGroup::DoBroadcast(void* data, size_t bytes, int root) {
  if (Status s = CheckBroadcastRoot(root, size()); !s.ok()) return s;
  if (bytes == 0) return OkStatus();
  return Guard("broadcast from process " + std::to_string(root), options, [&] {
    gloo::BroadcastOptions opts(context);
    opts.setTag(next_tag++);
    opts.setTimeout(options.op_timeout);
    opts.setRoot(root);
    opts.setOutput(static_cast<char*>(data), bytes);
    gloo::broadcast(opts);
  });
}

Status GlooProcessGroup::DoBarrier() {
  return Guard("barrier", options, [&] {
    gloo::BarrierOptions opts(context);
    opts.setTag(next_tag++);
    opts.setTimeout(options.op_timeout);
    gloo::barrier(opts);
  });
}

}  // namespace
}  // namespace baton::collectives
