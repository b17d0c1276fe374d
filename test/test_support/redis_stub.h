// kiln/test/test_support/redis_stub.h — a hostile "Redis" on a loopback port, for the remote
// cache's reliability tests: each accepted connection is handed to a scripted behaviour (drip
// a reply a byte at a time, declare a 4 GB reply, send junk, hang up), run on its own thread.
// The server stops, and joins its threads, when the object dies.
#pragma once

#include "test_support/local_redis.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace kiln::test {

class RedisStub {
 public:
  // Called with the connection's socket and its index (0 for the first connection).
  using Behaviour = std::function<void(int fd, int connection)>;

  explicit RedisStub(Behaviour b) : behaviour_(std::move(b)) {
    listen_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    const int one = 1;
    ::setsockopt(listen_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(listen_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(listen_, 16) != 0 ||
        ::getsockname(listen_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      throw std::runtime_error("RedisStub: cannot listen on loopback");
    port_ = ntohs(a.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~RedisStub() {
    stop_ = true;
    acceptor_.join();
    ::close(listen_);
    for (std::thread& t : workers_) t.join();
  }
  RedisStub(const RedisStub&) = delete;
  RedisStub& operator=(const RedisStub&) = delete;

  int port() const { return port_; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  int connections() const { return accepted_.load(); }
  bool stopping() const { return stop_.load(); }

  // Reads one command (what the client sent so far, up to a short pause); "" when it hung up.
  static std::string read_command(int fd) {
    std::string got;
    char buf[4096];
    for (;;) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, got.empty() ? 2000 : 20) <= 0) return got;
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) return got;
      got.append(buf, static_cast<size_t>(n));
    }
  }
  static bool send_all(int fd, std::string_view s) {
    while (!s.empty()) {
      const ssize_t n = ::send(fd, s.data(), s.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      s.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

 private:
  void accept_loop() {
    while (!stop_) {
      pollfd p{listen_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int fd = ::accept(listen_, nullptr, nullptr);
      if (fd < 0) continue;
      const int index = accepted_++;
      std::lock_guard<std::mutex> lock(mu_);
      workers_.emplace_back([this, fd, index] {
        behaviour_(fd, index);
        ::close(fd);
      });
    }
  }

  Behaviour behaviour_;
  int listen_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::mutex mu_;
  std::vector<std::thread> workers_;
  std::thread acceptor_;
};

}  // namespace kiln::test
