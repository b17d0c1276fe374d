// kiln/runtime/remote_cache.cpp — Redis through hiredis, failing soft.
#include "runtime/remote_cache.h"

#include "runtime/log.h"

#include <fmt/format.h>
#include <hiredis/hiredis.h>

#include <charconv>
#include <sys/time.h>

namespace kiln::rt {

namespace {

std::string redis_key(const std::string& key) { return "kiln:obj:" + key; }

bool parse_number(std::string_view s, int& out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && p == s.data() + s.size();
}

// A reply that frees itself.
struct Reply {
  redisReply* r;
  explicit Reply(void* p) : r(static_cast<redisReply*>(p)) {}
  ~Reply() {
    if (r) freeReplyObject(r);
  }
  Reply(const Reply&) = delete;
  Reply& operator=(const Reply&) = delete;
};

}  // namespace

std::optional<RedisAddress> parse_redis_url(std::string_view url) {
  constexpr std::string_view scheme = "redis://";
  if (url.substr(0, scheme.size()) != scheme) return std::nullopt;
  url.remove_prefix(scheme.size());
  RedisAddress a;
  const size_t slash = url.find('/');
  std::string_view hostport = url.substr(0, slash);
  if (slash != std::string_view::npos && slash + 1 < url.size() && !parse_number(url.substr(slash + 1), a.db))
    return std::nullopt;
  if (!hostport.empty() && hostport.front() == '[') {  // [::1]:6379
    const size_t close = hostport.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    a.host = std::string(hostport.substr(1, close - 1));
    hostport.remove_prefix(close + 1);
    if (!hostport.empty() && (hostport.front() != ':' || !parse_number(hostport.substr(1), a.port))) return std::nullopt;
    return a;
  }
  const size_t colon = hostport.rfind(':');
  if (colon != std::string_view::npos) {
    if (!parse_number(hostport.substr(colon + 1), a.port)) return std::nullopt;
    hostport = hostport.substr(0, colon);
  }
  if (!hostport.empty()) a.host = std::string(hostport);
  if (a.port <= 0 || a.port > 65535 || a.db < 0) return std::nullopt;
  return a;
}

RemoteCache::RemoteCache(std::string url, std::chrono::milliseconds timeout)
    : url_(std::move(url)), addr_(parse_redis_url(url_)), timeout_(timeout) {
  if (!addr_) {
    warn_once("remote-cache-url", fmt::format("KILN_REMOTE_CACHE='{}' is not redis://host[:port][/db]; the remote "
                                              "compile cache is off", url_));
    down_ = true;
  }
}

RemoteCache::~RemoteCache() {
  if (ctx_) redisFree(ctx_);
}

bool RemoteCache::down() const {
  std::lock_guard<std::mutex> lock(mu_);
  return down_;
}

void RemoteCache::fail(const std::string& what) {
  const std::string why = ctx_ && ctx_->err ? std::string(ctx_->errstr) : std::string("no reply");
  if (ctx_) redisFree(ctx_);
  ctx_ = nullptr;
  down_ = true;
  warn_once("remote-cache-down:" + url_, fmt::format("remote compile cache {}: {} failed ({}); compiling with the local "
                                                     "cache only from now on", url_, what, why));
}

bool RemoteCache::connected() {
  if (down_) return false;
  if (ctx_) return true;
  const timeval tv{static_cast<time_t>(timeout_.count() / 1000), static_cast<suseconds_t>((timeout_.count() % 1000) * 1000)};
  ctx_ = redisConnectWithTimeout(addr_->host.c_str(), addr_->port, tv);
  if (!ctx_ || ctx_->err || redisSetTimeout(ctx_, tv) != REDIS_OK) {
    fail(fmt::format("connecting to {}:{}", addr_->host, addr_->port));
    return false;
  }
  if (addr_->db != 0) {
    Reply r(redisCommand(ctx_, "SELECT %d", addr_->db));
    if (!r.r || r.r->type != REDIS_REPLY_STATUS) {
      fail(fmt::format("SELECT {}", addr_->db));
      return false;
    }
  }
  return true;
}

std::optional<std::string> RemoteCache::get(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!connected()) return std::nullopt;
  const std::string k = redis_key(key);
  Reply r(redisCommand(ctx_, "GET %b", k.data(), k.size()));
  if (!r.r || r.r->type == REDIS_REPLY_ERROR) {
    fail("GET");
    return std::nullopt;
  }
  if (r.r->type != REDIS_REPLY_STRING) {
    KILN_LOG_IF(LogChannel::Cache, "remote miss {}", key.substr(0, 16));
    return std::nullopt;
  }
  KILN_LOG_IF(LogChannel::Cache, "remote hit {} ({} bytes)", key.substr(0, 16), r.r->len);
  return std::string(r.r->str, r.r->len);
}

void RemoteCache::set(const std::string& key, std::string_view bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!connected()) return;
  const std::string k = redis_key(key);
  Reply r(redisCommand(ctx_, "SET %b %b", k.data(), k.size(), bytes.data(), bytes.size()));
  if (!r.r || r.r->type != REDIS_REPLY_STATUS) {
    fail("SET");
    return;
  }
  KILN_LOG_IF(LogChannel::Cache, "remote saved {} ({} bytes)", key.substr(0, 16), bytes.size());
}

void RemoteCache::remove(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!connected()) return;
  const std::string k = redis_key(key);
  Reply r(redisCommand(ctx_, "DEL %b", k.data(), k.size()));
  if (!r.r || r.r->type == REDIS_REPLY_ERROR) fail("DEL");
}

}  // namespace kiln::rt
