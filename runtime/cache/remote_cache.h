// kiln/runtime/cache/remote_cache.h — the shared compile cache on Redis (KILN_REMOTE_CACHE).
//
// A fleet of workers points KILN_REMOTE_CACHE at one Redis
// (redis://[[user]:password@]host[:port][/db]); each reads a module's entry there before
// compiling it and writes it after, so the fleet compiles each module once. Entries are the
// disk cache's format (runtime/cache/compile_cache.h) sealed with the fleet key
// (runtime/cache/cache_auth.h) under the Redis key "kiln:obj:<module key>": get() returns only
// entries whose seal checks out, so a client that can write to the server but does not hold
// the key cannot make a worker run its code. Without a fleet key there is no RemoteCache
// (compile_cache.cpp warns once and stays local).
//
// The server is not trusted to behave either (runtime/cache/redis_client.h): every command has one
// overall deadline (the timeout, plus time for the bytes it moves at a floor rate) and a reply
// is refused past the largest entry. A failure — refused connection, timeout, junk — never
// fails a compile: the tier backs off (1 s, doubling to a minute) and is tried again after
// that, with one warning for the first outage and KILN_LOG=cache lines for the rest. Commands
// run on pooled connections, so no compile waits on a lock while another one's command is in
// flight.
#pragma once

#include "runtime/cache/redis_client.h"

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::rt {

struct RedisAddress {
  std::string host = "127.0.0.1";
  int port = 6379;
  int db = 0;
  std::string user;      // ACL user; empty: AUTH with the password alone
  std::string password;  // empty: no AUTH
};
// redis://[[user]:password@]host[:port][/db] (an IPv6 host in brackets, %XX escapes in the
// user and password); nothing for anything else.
std::optional<RedisAddress> parse_redis_url(std::string_view url);

struct RemoteCacheOptions {
  std::chrono::milliseconds timeout{250};  // connecting, and every command's base deadline
  double min_bytes_per_second = 32e6;      // a command's deadline grows with its bytes at this rate
  std::chrono::milliseconds first_backoff{1000}, max_backoff{60000};
  size_t max_idle_connections = 4;
};

class RemoteCache {
 public:
  RemoteCache(std::string url, std::string fleet_key, RemoteCacheOptions opts = {});
  RemoteCache(const RemoteCache&) = delete;
  RemoteCache& operator=(const RemoteCache&) = delete;

  // The entry saved under `key` (the disk cache's format) when its seal checks out; a forged
  // or damaged one is logged, deleted and reported as a miss.
  std::optional<std::string> get(const std::string& key);
  void set(const std::string& key, std::string_view entry);  // sealed here
  void remove(const std::string& key);
  // In a back-off window after a failure (no command is sent until it ends).
  bool down() const;

 private:
  // A connection from the pool or a new one (connected, authenticated, database selected).
  std::optional<RedisConnection> checkout(std::string* why);
  void checkin(RedisConnection c);
  // One command on a pooled connection; a failure starts a back-off window.
  std::optional<RedisReply> run(const std::string& what, const std::vector<std::string_view>& args, size_t payload);
  void failed(const std::string& what, const std::string& why);

  std::string url_;
  std::optional<RedisAddress> addr_;
  std::string fleet_key_;
  RemoteCacheOptions opts_;
  size_t max_reply_ = 0;
  mutable std::mutex mu_;  // the pool and the back-off state; never held across I/O
  std::vector<RedisConnection> idle_;
  std::chrono::steady_clock::time_point down_until_{};
  std::chrono::milliseconds backoff_{0};
  int outages_ = 0;
};

}  // namespace kiln::rt
