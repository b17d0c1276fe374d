// kiln/test/test_support/local_redis.h — a redis-server of our own on a free loopback port,
// without persistence, stopped when the object dies: the remote compile cache tests
// (test_cache_remote.cpp) and kiln_bench_cache never assume a server is running.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace kiln::test {

// A loopback port nothing listens on right now (bound to 0, read back, closed).
inline int free_loopback_port() {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  const bool ok = s >= 0 && ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                  ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) == 0;
  if (s >= 0) ::close(s);
  if (!ok) throw std::runtime_error("no free loopback port");
  return ntohs(a.sin_port);
}

// Whether something accepts connections on the loopback port.
inline bool loopback_listening(int port) {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = s >= 0 && ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  if (s >= 0) ::close(s);
  return ok;
}

class LocalRedis {
 public:
  LocalRedis() = default;
  LocalRedis(const LocalRedis&) = delete;
  LocalRedis& operator=(const LocalRedis&) = delete;
  ~LocalRedis() { stop(); }

  static std::optional<std::string> binary() {
    for (const char* p : {"/usr/bin/redis-server", "/usr/local/bin/redis-server"})
      if (std::filesystem::exists(p)) return std::string(p);
    return std::nullopt;
  }

  // Starts the server (DEBUG allowed from loopback, its log to /dev/null, `extra` appended to
  // its arguments: "--requirepass", "secret") and waits until it accepts connections; "" on
  // success, else why not.
  std::string start(const std::vector<std::string>& extra = {}) {
    const std::optional<std::string> bin = binary();
    if (!bin) return "redis-server is not installed (scripts/deps.sh --test installs it)";
    port_ = free_loopback_port();
    std::vector<std::string> args = {*bin,         "--port", std::to_string(port_), "--bind", "127.0.0.1", "--save", "",
                                     "--appendonly", "no",   "--enable-debug-command", "local", "--loglevel", "warning"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t quiet;
    posix_spawn_file_actions_init(&quiet);
    posix_spawn_file_actions_addopen(&quiet, 1, "/dev/null", O_WRONLY, 0);
    const int rc = ::posix_spawn(&pid_, argv[0], &quiet, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&quiet);
    if (rc != 0) return "posix_spawn of redis-server failed";
    for (auto t0 = std::chrono::steady_clock::now(); std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10);) {
      if (loopback_listening(port_)) return "";
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    stop();
    return "redis-server did not start on port " + std::to_string(port_);
  }
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  int port() const { return port_; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }

 private:
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace kiln::test
