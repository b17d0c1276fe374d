// kiln/base/read_file.cpp — read_regular_file: open without blocking, check, then read.
#include "base/read_file.h"

#include "base/error.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kiln {

std::string read_regular_file(const std::string& path, std::string_view op, ReadOptions opts) {
  const int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | (opts.follow_symlinks ? 0 : O_NOFOLLOW);
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) fail(op, "cannot read {}: {}", path, std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail(op, "cannot read {}: {}", path, std::strerror(errno));
  if (!S_ISREG(st.st_mode)) fail(op, "cannot read {}: not a regular file", path);
  if (static_cast<uint64_t>(st.st_size) > opts.max_bytes)
    fail(op, "cannot read {}: it holds {} bytes, more than the {} this reads", path, st.st_size, opts.max_bytes);
  // A regular file never blocks; the flag only kept the open itself from waiting.
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(op, "cannot read {}: {}", path, std::strerror(errno));
    if (n == 0) break;  // shrank while we read: what is there
    got += static_cast<size_t>(n);
  }
  bytes.resize(got);
  return bytes;
}

}  // namespace kiln
