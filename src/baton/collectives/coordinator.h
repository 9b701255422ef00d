// Coordinator: baton's own rendezvous key-value store over TCP.
//
// Process 0 runs a CoordinatorServer on the user's coordinator_address
// (host:port); every process (process 0 too) talks to it through a
// CoordinatorClient, which is the gloo::rendezvous::Store that Gloo's
// full-mesh connect uses to swap addresses. Every call has a bounded
// timeout; a failure says which address, which key (so which process never
// arrived) and how long it waited. Gloo's calls throw, so the client throws
// CoordinatorError; the baton-facing helpers return Status.
//
// Ownership/threads: a CoordinatorServer owns its socket and one serving
// thread, stopped and joined by its destructor. A CoordinatorClient holds
// only the address and opens one short connection per request; one client
// may be used from one thread at a time (Gloo uses it from the connecting
// thread only).
#pragma once

#include <gloo/rendezvous/store.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "baton/core/status.h"

namespace baton::collectives {

// What a CoordinatorClient throws (Gloo's Store interface cannot return a
// Status); ProcessGroup turns it into one.
class CoordinatorError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "host:port" split; an error names the bad address and the expected form.
struct HostPort {
  std::string host;
  int port = 0;
};
Result<HostPort> ParseHostPort(const std::string& address);

class CoordinatorServer {
 public:
  // Binds host:port (port 0 picks a free one, see port()) and starts serving.
  static Result<std::unique_ptr<CoordinatorServer>> Start(const std::string& address);
  ~CoordinatorServer();
  CoordinatorServer(const CoordinatorServer&) = delete;
  CoordinatorServer& operator=(const CoordinatorServer&) = delete;

  int port() const { return port_; }

 private:
  CoordinatorServer(int fd, int port);
  void Serve();
  void HandleConnection(int fd);

  int listen_fd_;
  int port_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;  // guards values_
  std::map<std::string, std::vector<char>> values_;
  std::thread thread_;
};

class CoordinatorClient : public gloo::rendezvous::Store {
 public:
  // `timeout` bounds every call that has no timeout of its own (get, and
  // wait without one), including waiting for the server to come up.
  CoordinatorClient(std::string address, std::chrono::milliseconds timeout);

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;

 private:
  // One request; false when the key is missing (a get of an unset key).
  bool Request(char op, const std::string& key, const std::vector<char>& data,
               std::vector<char>* reply,
               std::chrono::steady_clock::time_point deadline);
  std::string address_;
  HostPort host_port_;
  std::chrono::milliseconds timeout_;
};

}  // namespace baton::collectives
