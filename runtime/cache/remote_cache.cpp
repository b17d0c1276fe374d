// kiln/runtime/cache/remote_cache.cpp — the shared compile cache: pooled connections, seals, back-off.
#include "runtime/cache/remote_cache.h"

#include "runtime/cache/cache_auth.h"
#include "runtime/cache/compile_cache.h"
#include "runtime/log.h"

#include <fmt/format.h>

#include <charconv>

namespace kiln::rt {

namespace {

using Clock = std::chrono::steady_clock;

std::string redis_key(const std::string& key) { return "kiln:obj:" + key; }

bool parse_number(std::string_view s, int& out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && p == s.data() + s.size();
}

// %XX escapes of a URL's user or password; nothing for a malformed escape.
std::optional<std::string> percent_decode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    int v = 0;
    if (i + 2 >= s.size()) return std::nullopt;
    auto [p, ec] = std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16);
    if (ec != std::errc() || p != s.data() + i + 3) return std::nullopt;
    out += static_cast<char>(v);
    i += 2;
  }
  return out;
}

std::string short_key(const std::string& key) { return key.substr(0, 16); }

// The URL without its password, for messages.
std::string redacted(const std::string& url) {
  const size_t at = url.rfind('@');
  const size_t scheme = url.find("://");
  if (at == std::string::npos || scheme == std::string::npos) return url;
  const size_t colon = url.find(':', scheme + 3);
  if (colon == std::string::npos || colon > at) return url;
  return url.substr(0, colon + 1) + "***" + url.substr(at);
}

}  // namespace

std::optional<RedisAddress> parse_redis_url(std::string_view url) {
  constexpr std::string_view scheme = "redis://";
  if (url.substr(0, scheme.size()) != scheme) return std::nullopt;
  url.remove_prefix(scheme.size());
  RedisAddress a;
  if (const size_t at = url.rfind('@'); at != std::string_view::npos) {
    const std::string_view userinfo = url.substr(0, at);
    url.remove_prefix(at + 1);
    const size_t colon = userinfo.find(':');
    std::optional<std::string> user = percent_decode(userinfo.substr(0, colon));
    std::optional<std::string> pass =
        colon == std::string_view::npos ? std::optional<std::string>("") : percent_decode(userinfo.substr(colon + 1));
    if (!user || !pass) return std::nullopt;
    if (colon == std::string_view::npos) {  // redis://secret@host: a password alone
      a.password = *user;
    } else {
      a.user = *user;
      a.password = *pass;
    }
  }
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
    if (a.port <= 0 || a.port > 65535 || a.db < 0) return std::nullopt;
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

RemoteCache::RemoteCache(std::string url, std::string fleet_key, RemoteCacheOptions opts)
    : url_(std::move(url)), addr_(parse_redis_url(url_)), fleet_key_(std::move(fleet_key)), opts_(opts) {
  // A sealed entry: the seal's 40 bytes, the entry's header and key, the largest object.
  max_reply_ = 64 + max_cache_entry_bytes(64) + 256;
  if (!addr_) {
    warn_once("remote-cache-url", fmt::format("KILN_REMOTE_CACHE='{}' is not redis://[[user]:password@]host[:port][/db]; "
                                              "the remote compile cache is off", redacted(url_)));
    down_until_ = Clock::time_point::max();
  }
}

bool RemoteCache::down() const {
  std::lock_guard<std::mutex> lock(mu_);
  return Clock::now() < down_until_;
}

void RemoteCache::failed(const std::string& what, const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  idle_.clear();  // the server went away or misbehaves: start afresh after the back-off
  backoff_ = backoff_.count() == 0 ? opts_.first_backoff : std::min(opts_.max_backoff, backoff_ * 2);
  down_until_ = Clock::now() + backoff_;
  const std::string msg = fmt::format("remote compile cache {}: {} failed ({}); compiling with the local cache only "
                                      "until it answers again (next try in {} ms)",
                                      redacted(url_), what, why, backoff_.count());
  if (outages_++ == 0)
    warn_once("remote-cache-down:" + url_, msg);
  else
    KILN_LOG_IF(LogChannel::Cache, "{}", msg);
}

std::optional<RedisConnection> RemoteCache::checkout(std::string* why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (Clock::now() < down_until_) {
      *why = "backing off";
      return std::nullopt;
    }
    if (!idle_.empty()) {
      RedisConnection c = std::move(idle_.back());
      idle_.pop_back();
      return c;
    }
  }
  const Clock::time_point deadline = Clock::now() + opts_.timeout;
  std::optional<RedisConnection> c = RedisConnection::open(addr_->host, addr_->port, deadline, why);
  if (!c) {
    failed(fmt::format("connecting to {}:{}", addr_->host, addr_->port), *why);
    return std::nullopt;
  }
  auto setup = [&](const std::string& what, const std::vector<std::string_view>& args) {
    std::optional<RedisReply> r = c->command(args, Clock::now() + opts_.timeout, 4096, why);
    if (r && r->kind == RedisReply::Kind::Error) *why = "the server replied: " + r->str;
    if (!r || r->kind == RedisReply::Kind::Error) {
      failed(what, *why);
      return false;
    }
    return true;
  };
  if (!addr_->password.empty()) {
    std::vector<std::string_view> auth = {"AUTH"};
    if (!addr_->user.empty()) auth.push_back(addr_->user);
    auth.push_back(addr_->password);
    if (!setup(addr_->user.empty() ? "AUTH" : fmt::format("AUTH as {}", addr_->user), auth)) return std::nullopt;
  }
  if (addr_->db != 0) {
    const std::string db = std::to_string(addr_->db);
    if (!setup("SELECT " + db, {"SELECT", db})) return std::nullopt;
  }
  return c;
}

void RemoteCache::checkin(RedisConnection c) {
  std::lock_guard<std::mutex> lock(mu_);
  backoff_ = std::chrono::milliseconds(0);  // it answered: the next outage starts a fresh back-off
  if (idle_.size() < opts_.max_idle_connections) idle_.push_back(std::move(c));
}

std::optional<RedisReply> RemoteCache::run(const std::string& what, const std::vector<std::string_view>& args,
                                           size_t payload) {
  std::string why;
  std::optional<RedisConnection> c = checkout(&why);
  if (!c) return std::nullopt;
  const auto budget = std::chrono::duration<double>(static_cast<double>(payload) / opts_.min_bytes_per_second);
  const Clock::time_point deadline =
      Clock::now() + opts_.timeout + std::chrono::duration_cast<Clock::duration>(budget);
  std::optional<RedisReply> r = c->command(args, deadline, max_reply_, &why, opts_.min_bytes_per_second);
  if (!r) {
    failed(what, why);
    return std::nullopt;
  }
  checkin(std::move(*c));
  return r;
}

std::optional<std::string> RemoteCache::get(const std::string& key) {
  const std::string k = redis_key(key);
  std::optional<RedisReply> r = run("GET", {"GET", k}, 0);
  if (!r) return std::nullopt;
  switch (r->kind) {
    case RedisReply::Kind::Nil:
      KILN_LOG_IF(LogChannel::Cache, "remote miss {}", short_key(key));
      return std::nullopt;
    case RedisReply::Kind::String: break;
    case RedisReply::Kind::Error:
      warn_once("remote-cache-reply:" + url_, fmt::format("remote compile cache {}: GET {} was refused by the server: "
                                                          "{}; treated as a miss",
                                                          redacted(url_), k, r->str));
      return std::nullopt;
    case RedisReply::Kind::Status:
    case RedisReply::Kind::Integer:
    case RedisReply::Kind::Array:
      warn_once("remote-cache-reply:" + url_,
                fmt::format("remote compile cache {}: GET {} gave a reply that is not a string; treated as a miss",
                            redacted(url_), k));
      return std::nullopt;
  }
  std::string why;
  std::optional<std::string> entry = open_remote_entry(fleet_key_, k, r->str, &why);
  if (!entry) {
    warn_once("remote-cache-forged:" + url_, fmt::format("remote compile cache {}: entry {} failed authentication "
                                                         "({}); it is ignored, deleted and rebuilt",
                                                         redacted(url_), k, why));
    KILN_LOG_IF(LogChannel::Cache, "remote entry {} failed authentication ({})", short_key(key), why);
    remove(key);
    return std::nullopt;
  }
  KILN_LOG_IF(LogChannel::Cache, "remote hit {} ({} bytes)", short_key(key), entry->size());
  return entry;
}

void RemoteCache::set(const std::string& key, std::string_view entry) {
  const std::string k = redis_key(key);
  const std::string sealed = seal_remote_entry(fleet_key_, k, entry);
  std::optional<RedisReply> r = run("SET", {"SET", k, sealed}, sealed.size());
  if (!r) return;
  if (r->kind != RedisReply::Kind::Status) {
    warn_once("remote-cache-reply:" + url_, fmt::format("remote compile cache {}: SET {} was refused by the server: {}",
                                                        redacted(url_), k, r->kind == RedisReply::Kind::Error ? r->str : "an unexpected reply"));
    return;
  }
  KILN_LOG_IF(LogChannel::Cache, "remote saved {} ({} bytes)", short_key(key), sealed.size());
}

void RemoteCache::remove(const std::string& key) {
  const std::string k = redis_key(key);
  (void)run("DEL", {"DEL", k}, 0);
}

}  // namespace kiln::rt
