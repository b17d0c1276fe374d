// kiln/runtime/remote_cache.h — the shared compile cache on Redis (KILN_REMOTE_CACHE).
//
// A fleet of workers points KILN_REMOTE_CACHE at one Redis (redis://host[:port][/db]); each
// reads a module's entry there before compiling it and writes it after, so the fleet
// compiles each module once. Entries are the disk cache's format (runtime/compile_cache.h)
// under the key "kiln:obj:<module key>", validated on read. The client is hiredis, with a
// short timeout on connecting and on every command: a refused connection, a timeout or any
// other failure never fails a compile. The first one turns the remote cache off for the rest
// of the process (local only) with one warning; KILN_LOG=cache logs every get and set.
#pragma once

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

struct redisContext;

namespace kiln::rt {

struct RedisAddress {
  std::string host = "127.0.0.1";
  int port = 6379;
  int db = 0;
};
// redis://host[:port][/db] (an IPv6 host in brackets); nothing for anything else.
std::optional<RedisAddress> parse_redis_url(std::string_view url);

class RemoteCache {
 public:
  explicit RemoteCache(std::string url, std::chrono::milliseconds timeout = std::chrono::milliseconds(250));
  ~RemoteCache();
  RemoteCache(const RemoteCache&) = delete;
  RemoteCache& operator=(const RemoteCache&) = delete;

  std::optional<std::string> get(const std::string& key);  // the entry's bytes
  void set(const std::string& key, std::string_view bytes);
  void remove(const std::string& key);
  bool down() const;  // turned off after a failure

 private:
  bool connected();  // under mu_
  void fail(const std::string& what);  // under mu_

  std::string url_;
  std::optional<RedisAddress> addr_;
  std::chrono::milliseconds timeout_;
  mutable std::mutex mu_;
  redisContext* ctx_ = nullptr;
  bool down_ = false;
};

}  // namespace kiln::rt
