#include "baton/collectives/coordinator.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <cstdint>

namespace baton::collectives {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPollStep = std::chrono::milliseconds(10);
// A request is a few bytes; a peer that stalls mid-request this long is gone.
constexpr int kIoTimeoutMs = 2000;

long long MsLeft(Clock::time_point deadline) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
}

// Reads/writes exactly n bytes, each wait bounded by timeout_ms.
bool IoAll(int fd, char* p, size_t n, bool write, int timeout_ms) {
  while (n > 0) {
    pollfd pfd{fd, static_cast<short>(write ? POLLOUT : POLLIN), 0};
    if (poll(&pfd, 1, timeout_ms) <= 0) return false;
    ssize_t k = write ? ::send(fd, p, n, MSG_NOSIGNAL) : ::recv(fd, p, n, 0);
    if (k <= 0) {
      if (k < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      return false;
    }
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

bool WriteBlob(int fd, const char* p, uint32_t n, int t) {
  uint32_t be = htonl(n);
  return IoAll(fd, reinterpret_cast<char*>(&be), 4, true, t) &&
         IoAll(fd, const_cast<char*>(p), n, true, t);
}

bool ReadBlob(int fd, std::vector<char>* out, int t) {
  uint32_t be = 0;
  if (!IoAll(fd, reinterpret_cast<char*>(&be), 4, false, t)) return false;
  uint32_t n = ntohl(be);
  if (n > (64u << 20)) return false;  // no rendezvous value is this big
  out->resize(n);
  return IoAll(fd, out->data(), n, false, t);
}

Result<sockaddr_in> Resolve(const HostPort& hp) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(hp.host.c_str(), nullptr, &hints, &res);
  if (rc != 0 || res == nullptr) {
    return InvalidArgument("coordinator host '" + hp.host + "' does not resolve (" +
                           gai_strerror(rc) + "); give an IPv4 address or host name");
  }
  sockaddr_in addr = *reinterpret_cast<sockaddr_in*>(res->ai_addr);
  freeaddrinfo(res);
  addr.sin_port = htons(static_cast<uint16_t>(hp.port));
  return addr;
}

// Who sets a key: Gloo's full-mesh connect keys are the rank ("3"), baton's
// own end with it ("baton/connected/3").
std::string Setter(const std::string& key) {
  size_t start = key.find_last_of('/') + 1;  // npos + 1 == 0
  bool digits = start < key.size() &&
                key.find_first_not_of("0123456789", start) == std::string::npos;
  return digits ? "process " + key.substr(start) + " never arrived"
                : "the process that sets it never arrived";
}

}  // namespace

Result<HostPort> ParseHostPort(const std::string& address) {
  size_t colon = address.rfind(':');
  HostPort hp;
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size()) {
    return InvalidArgument("coordinator_address '" + address +
                           "' is not host:port; give e.g. '127.0.0.1:12345'");
  }
  hp.host = address.substr(0, colon);
  std::string port = address.substr(colon + 1);
  char* end = nullptr;
  long v = std::strtol(port.c_str(), &end, 10);
  if (*end != '\0' || v < 0 || v > 65535) {
    return InvalidArgument("coordinator_address '" + address + "' has port '" + port +
                           "', not a number in [0, 65535]");
  }
  hp.port = static_cast<int>(v);
  return hp;
}

Result<std::unique_ptr<CoordinatorServer>> CoordinatorServer::Start(const std::string& address) {
  Result<HostPort> hp = ParseHostPort(address);
  if (!hp.ok()) return hp.status();
  Result<sockaddr_in> addr = Resolve(*hp);
  if (!addr.ok()) return addr.status();
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Internal(std::string("coordinator: socket() failed: ") + std::strerror(errno));
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&*addr), sizeof(*addr)) != 0 ||
      ::listen(fd, 128) != 0) {
    std::string why = std::strerror(errno);
    ::close(fd);
    return FailedPrecondition("coordinator: cannot listen on " + address + " (" + why +
                              "); pick a free port on an address of this machine");
  }
  sockaddr_in bound{};
  socklen_t len = sizeof(bound);
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  return std::unique_ptr<CoordinatorServer>(new CoordinatorServer(fd, ntohs(bound.sin_port)));
}

CoordinatorServer::CoordinatorServer(int fd, int port)
    : listen_fd_(fd), port_(port), thread_([this] { Serve(); }) {}

CoordinatorServer::~CoordinatorServer() {
  stop_.store(true);
  thread_.join();
  ::close(listen_fd_);
}

void CoordinatorServer::Serve() {
  while (!stop_.load()) {
    pollfd pfd{listen_fd_, POLLIN, 0};
    if (poll(&pfd, 1, 50) <= 0) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    HandleConnection(fd);
    ::close(fd);
  }
}

// Request: op byte ('S' set, 'G' get), key blob, [value blob for 'S'].
// Reply: one byte (1 found/done, 0 missing), [value blob for a found 'G'].
void CoordinatorServer::HandleConnection(int fd) {
  char op = 0;
  std::vector<char> key, value;
  if (!IoAll(fd, &op, 1, false, kIoTimeoutMs) || !ReadBlob(fd, &key, kIoTimeoutMs)) return;
  std::string k(key.begin(), key.end());
  char found = 1;
  if (op == 'S') {
    if (!ReadBlob(fd, &value, kIoTimeoutMs)) return;
    std::lock_guard<std::mutex> lock(mu_);
    values_[k] = std::move(value);
  } else {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = values_.find(k);
    found = it != values_.end();
    if (found) value = it->second;
  }
  if (!IoAll(fd, &found, 1, true, kIoTimeoutMs)) return;
  if (op == 'G' && found) WriteBlob(fd, value.data(), static_cast<uint32_t>(value.size()), kIoTimeoutMs);
}

CoordinatorClient::CoordinatorClient(std::string address, std::chrono::milliseconds timeout)
    : address_(std::move(address)), timeout_(timeout) {
  Result<HostPort> hp = ParseHostPort(address_);
  if (!hp.ok()) throw CoordinatorError(hp.status().message());
  host_port_ = *hp;
}

bool CoordinatorClient::Request(char op, const std::string& key, const std::vector<char>& data,
                                std::vector<char>* reply, Clock::time_point deadline) {
  Result<sockaddr_in> addr = Resolve(host_port_);
  if (!addr.ok()) throw CoordinatorError(addr.status().message());
  std::string last_error = "no attempt";
  // Retries the connection until the deadline: process 0 may not serve yet.
  while (true) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw CoordinatorError(std::string("coordinator: socket() failed: ") + std::strerror(errno));
    bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&*addr), sizeof(*addr)) == 0;
    if (!ok) last_error = std::strerror(errno);
    char found = 0;
    if (ok) {
      ok = IoAll(fd, &op, 1, true, kIoTimeoutMs) &&
           WriteBlob(fd, key.data(), static_cast<uint32_t>(key.size()), kIoTimeoutMs) &&
           (op != 'S' || WriteBlob(fd, data.data(), static_cast<uint32_t>(data.size()), kIoTimeoutMs)) &&
           IoAll(fd, &found, 1, false, kIoTimeoutMs) &&
           (op != 'G' || !found || ReadBlob(fd, reply, kIoTimeoutMs));
      if (!ok) last_error = "the connection broke mid-request";
    }
    ::close(fd);
    if (ok) return found != 0;
    if (MsLeft(deadline) <= 0) {
      throw CoordinatorError("coordinator at " + address_ + " did not answer (" + last_error +
                             ") within " + std::to_string(timeout_.count()) +
                             " ms; is process 0 running and the address right?");
    }
    std::this_thread::sleep_for(kPollStep);
  }
}

void CoordinatorClient::set(const std::string& key, const std::vector<char>& data) {
  Request('S', key, data, nullptr, Clock::now() + timeout_);
}

std::vector<char> CoordinatorClient::get(const std::string& key) {
  wait({key}, timeout_);
  std::vector<char> value;
  Request('G', key, {}, &value, Clock::now() + timeout_);
  return value;
}

void CoordinatorClient::wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }

void CoordinatorClient::wait(const std::vector<std::string>& keys,
                             const std::chrono::milliseconds& timeout) {
  auto start = Clock::now();
  auto deadline = start + timeout;
  std::vector<char> ignored;
  for (const std::string& key : keys) {
    while (!Request('G', key, {}, &ignored, deadline)) {
      if (MsLeft(deadline) <= 0) {
        throw CoordinatorError("coordinator at " + address_ + ": key '" + key +
                               "' was not set within " + std::to_string(timeout.count()) +
                               " ms (" + Setter(key) + ")");
      }
      std::this_thread::sleep_for(kPollStep);
    }
  }
}

}  // namespace baton::collectives
