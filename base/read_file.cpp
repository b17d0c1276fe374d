// kiln/base/read_file.cpp — read_regular_file: open without blocking, check, then read.
#include "base/read_file.h"

#include "base/error.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kiln {

RegularFile::RegularFile(const std::string& path, std::string_view op, ReadOptions opts) : path_(path), op_(op) {
  const int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | (opts.follow_symlinks ? 0 : O_NOFOLLOW);
  fd_ = ::open(path.c_str(), flags);
  if (fd_ < 0) fail(op, "cannot read {}: {}", path, std::strerror(errno));
  struct stat st {};
  const bool stat_ok = ::fstat(fd_, &st) == 0;
  std::string why = !stat_ok                   ? std::string(std::strerror(errno))
                    : !S_ISREG(st.st_mode)     ? std::string("not a regular file")
                    : static_cast<uint64_t>(st.st_size) > opts.max_bytes
                        ? fmt::format("it holds {} bytes, more than the {} this reads", st.st_size, opts.max_bytes)
                        : std::string();
  if (!why.empty()) {
    ::close(fd_);
    fail(op, "cannot read {}: {}", path, why);
  }
  // A regular file never blocks; the flag only kept the open itself from waiting.
  size_ = static_cast<size_t>(st.st_size);
}

RegularFile::~RegularFile() { ::close(fd_); }

size_t RegularFile::read_upto(size_t offset, void* dst, size_t n) const {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd_, static_cast<char*>(dst) + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) fail(op_, "cannot read {}: {}", path_, std::strerror(errno));
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  return got;
}

void RegularFile::read_at(size_t offset, void* dst, size_t n) const {
  const size_t got = read_upto(offset, dst, n);
  if (got < n)
    fail(op_, "cannot read {}: it ends at byte {}, before the {} bytes at offset {} (truncated?)", path_, offset + got,
         n, offset);
}

std::string read_regular_file(const std::string& path, std::string_view op, ReadOptions opts) {
  const RegularFile f(path, op, opts);
  std::string bytes(f.size(), '\0');
  bytes.resize(f.read_upto(0, bytes.data(), bytes.size()));  // a file that shrank meanwhile: what is there
  return bytes;
}

std::shared_ptr<const MappedFile> MappedFile::map(const std::string& path, std::string_view op, ReadOptions opts) {
  const RegularFile f(path, op, opts);
  std::shared_ptr<MappedFile> m(new MappedFile());
  if (f.size() == 0) return m;  // mmap refuses a length of zero; the view is empty
  void* data = ::mmap(nullptr, f.size(), PROT_READ, MAP_PRIVATE, f.fd(), 0);
  if (data == MAP_FAILED) fail(op, "cannot map {}: {}", path, std::strerror(errno));
  m->data_ = data;
  m->size_ = f.size();
  return m;
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(data_, size_);
}

}  // namespace kiln
