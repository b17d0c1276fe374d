// kiln/runtime/cache/redis_client.cpp — a Redis connection on a socket of our own (poll, deadlines, caps).
#include "runtime/cache/redis_client.h"

#include <fmt/format.h>
#include <hiredis/hiredis.h>

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <memory>

namespace kiln::rt {

namespace {

using Clock = std::chrono::steady_clock;

// Milliseconds left before the deadline (0 when it passed), for poll().
int ms_left(Deadline deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<int64_t>(left, 1 << 30));
}

// Waits until fd is ready for `events` or the deadline passes; false on timeout or error.
bool wait_for(int fd, short events, Deadline deadline, std::string* why) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int ms = ms_left(deadline);
    if (ms == 0) {
      *why = "timed out";
      return false;
    }
    const int n = ::poll(&p, 1, ms);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *why = std::strerror(errno);
      return false;
    }
    if (n == 0) {
      *why = "timed out";
      return false;
    }
    if (p.revents & (events | POLLHUP | POLLERR)) return true;
  }
}

struct ReaderDeleter {
  void operator()(redisReader* r) const { redisReaderFree(r); }
};
struct ReplyDeleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};

// The length a bulk reply declares in its header line "$<n>\r\n", once the line is complete.
std::optional<int64_t> declared_bulk(std::string_view head) {
  if (head.empty() || head.front() != '$') return std::nullopt;
  const size_t eol = head.find("\r\n");
  if (eol == std::string_view::npos) return std::nullopt;
  int64_t n = 0;
  auto [p, ec] = std::from_chars(head.data() + 1, head.data() + eol, n);
  if (ec != std::errc() || p != head.data() + eol) return std::nullopt;
  return n;
}

}  // namespace

RedisConnection& RedisConnection::operator=(RedisConnection&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

RedisConnection::~RedisConnection() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<RedisConnection> RedisConnection::open(const std::string& host, int port, Deadline deadline,
                                                     std::string* why) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    *why = fmt::format("cannot resolve {}: {}", host, ::gai_strerror(rc));
    return std::nullopt;
  }
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> list(found, ::freeaddrinfo);
  *why = "no address";
  for (const addrinfo* a = found; a; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      *why = std::strerror(errno);
      continue;
    }
    RedisConnection c(fd);
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      if (errno != EINPROGRESS) {
        *why = std::strerror(errno);
        continue;
      }
      if (!wait_for(fd, POLLOUT, deadline, why)) return std::nullopt;
      int err = 0;
      socklen_t len = sizeof err;
      if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
        *why = std::strerror(err ? err : errno);
        continue;
      }
    }
    return c;
  }
  return std::nullopt;
}

bool RedisConnection::send_all(std::string_view bytes, Deadline deadline, std::string* why) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n > 0) {
      bytes.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_for(fd_, POLLOUT, deadline, why)) return false;
      continue;
    }
    *why = n < 0 ? std::strerror(errno) : "connection closed";
    return false;
  }
  return true;
}

std::optional<RedisReply> RedisConnection::command(const std::vector<std::string_view>& args, Deadline deadline,
                                                   size_t max_reply, std::string* why, double bytes_per_second) {
  if (fd_ < 0) {
    *why = "not connected";
    return std::nullopt;
  }
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  for (std::string_view a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  char* cmd = nullptr;
  const int len = redisFormatCommandArgv(&cmd, static_cast<int>(args.size()), argv.data(), lens.data());
  if (len < 0) {
    *why = "cannot format the command";
    return std::nullopt;
  }
  const bool sent = send_all(std::string_view(cmd, static_cast<size_t>(len)), deadline, why);
  redisFreeCommand(cmd);
  if (!sent) return std::nullopt;

  std::unique_ptr<redisReader, ReaderDeleter> reader(redisReaderCreate());
  if (!reader) {
    *why = "out of memory";
    return std::nullopt;
  }
  std::string head;  // the reply's first bytes, until its header line is complete
  bool sized = false;  // the bulk length was seen
  size_t total = 0;
  char buf[64 * 1024];
  for (;;) {
    void* raw = nullptr;
    if (redisReaderGetReply(reader.get(), &raw) != REDIS_OK) {
      *why = fmt::format("malformed reply ({})", reader->errstr);
      return std::nullopt;
    }
    if (raw) {
      std::unique_ptr<redisReply, ReplyDeleter> r(static_cast<redisReply*>(raw));
      RedisReply out;
      switch (r->type) {
        case REDIS_REPLY_STRING: out.kind = RedisReply::Kind::String; break;
        case REDIS_REPLY_STATUS: out.kind = RedisReply::Kind::Status; break;
        case REDIS_REPLY_ERROR: out.kind = RedisReply::Kind::Error; break;
        case REDIS_REPLY_INTEGER: out.kind = RedisReply::Kind::Integer; break;
        case REDIS_REPLY_ARRAY: out.kind = RedisReply::Kind::Array; break;
        default: out.kind = RedisReply::Kind::Nil; break;
      }
      if (r->str) out.str.assign(r->str, r->len);
      out.integer = r->integer;
      return out;
    }
    if (!wait_for(fd_, POLLIN, deadline, why)) return std::nullopt;
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n <= 0) {
      *why = n < 0 ? std::strerror(errno) : "connection closed by the server";
      return std::nullopt;
    }
    total += static_cast<size_t>(n);
    if (!sized && head.size() < 64) {
      head.append(buf, std::min<size_t>(static_cast<size_t>(n), 64 - head.size()));
      if (std::optional<int64_t> bulk = declared_bulk(head)) {
        sized = true;
        if (*bulk > static_cast<int64_t>(max_reply)) {
          *why = fmt::format("the reply declares {} bytes, more than the {} an entry can hold", *bulk, max_reply);
          return std::nullopt;
        }
        if (bytes_per_second > 0 && *bulk > 0)
          deadline += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(*bulk / bytes_per_second));
      }
    }
    if (total > max_reply + 64) {
      *why = fmt::format("the reply exceeds {} bytes", max_reply);
      return std::nullopt;
    }
    if (redisReaderFeed(reader.get(), buf, static_cast<size_t>(n)) != REDIS_OK) {
      *why = "malformed reply";
      return std::nullopt;
    }
  }
}

}  // namespace kiln::rt
