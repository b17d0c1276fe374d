// kiln/runtime/cache/redis_client.h — one connection to a Redis server, with deadlines and a reply cap.
//
// The shared compile cache (runtime/cache/remote_cache.h) talks to a server it does not control:
// one that answers a byte every 100 ms, declares a 4 GB reply or sends junk must cost a
// bounded wait and bounded memory, never a hang. So the socket is ours: a non-blocking
// connect and non-blocking reads and writes under poll(), all against one deadline per
// command, and at most `max_reply` bytes read for a reply (a bulk reply that declares more is
// refused as soon as its header arrives). hiredis only formats commands and parses replies
// (its reader, fed what we read). A failed command leaves the connection unusable: the caller
// drops it.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::rt {

struct RedisReply {
  enum class Kind { String, Status, Integer, Nil, Error, Array };
  Kind kind = Kind::Nil;
  std::string str;  // String, Status, Error
  int64_t integer = 0;
};

using Deadline = std::chrono::steady_clock::time_point;

class RedisConnection {
 public:
  // Connects to host:port before `deadline`; nothing (with *why set) on failure.
  static std::optional<RedisConnection> open(const std::string& host, int port, Deadline deadline, std::string* why);
  RedisConnection(RedisConnection&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  RedisConnection& operator=(RedisConnection&& o) noexcept;
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;
  ~RedisConnection();

  // Sends the command (binary-safe arguments) and reads one reply before `deadline`, reading
  // at most max_reply bytes; a bulk reply that declares n bytes moves the deadline by n at
  // `bytes_per_second` (0: not at all). A reply arrives as a RedisReply (an error reply too:
  // the server said no, the connection is fine); nothing, with *why set, when the deadline
  // passed, the reply was too large or malformed, or the connection broke.
  std::optional<RedisReply> command(const std::vector<std::string_view>& args, Deadline deadline, size_t max_reply,
                                    std::string* why, double bytes_per_second = 0);

 private:
  explicit RedisConnection(int fd) : fd_(fd) {}
  bool send_all(std::string_view bytes, Deadline deadline, std::string* why);
  int fd_ = -1;
};

}  // namespace kiln::rt
