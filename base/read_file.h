// kiln/base/read_file.h — reading a whole file that anyone may have handed us.
//
// Graph files, repros and inputs are replayed by people who did not write them, and cache
// entries sit in a directory other processes can reach: a path may name a FIFO (an open
// without O_NONBLOCK blocks forever), a device (/dev/zero never ends), a symbolic link, or a
// sparse file of 100 GB. read_regular_file opens without blocking, refuses anything but a
// regular file, and refuses a file larger than `max_bytes` before reading a byte of it.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace kiln {

struct ReadOptions {
  size_t max_bytes = size_t{1} << 30;  // 1 GiB
  bool follow_symlinks = true;         // false: a link is refused (O_NOFOLLOW)
};

// The file's bytes, or kiln::Error "[op] cannot read <path>: <why>" (missing, not a regular
// file, larger than max_bytes, an I/O error).
std::string read_regular_file(const std::string& path, std::string_view op, ReadOptions opts = {});

// A regular file opened with the same checks, read in pieces (checkpoints read each tensor
// straight into its storage). Errors as read_regular_file's.
class RegularFile {
 public:
  RegularFile(const std::string& path, std::string_view op, ReadOptions opts = {});
  ~RegularFile();
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;

  size_t size() const { return size_; }
  const std::string& path() const { return path_; }
  int fd() const { return fd_; }
  // Reads exactly n bytes at `offset` into dst; fails when the file ends first.
  void read_at(size_t offset, void* dst, size_t n) const;
  // Reads up to n bytes at `offset`, fewer where the file ends; returns how many.
  size_t read_upto(size_t offset, void* dst, size_t n) const;

 private:
  std::string path_, op_;
  int fd_ = -1;
  size_t size_ = 0;
};

// A regular file, checked as read_regular_file checks it, mapped read-only: the bytes are the
// page cache's, nothing is copied and nothing is read before it is touched (an exported
// program's weights are tensors over them). A mapping sees the file as it is: a writer that
// truncates the file in place while it is mapped makes a later access fault (SIGBUS), so map
// only files replaced by rename, as export_program and the caches write them.
class MappedFile {
 public:
  static std::shared_ptr<const MappedFile> map(const std::string& path, std::string_view op, ReadOptions opts = {});
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::string_view bytes() const { return {static_cast<const char*>(data_), size_}; }

 private:
  MappedFile() = default;
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace kiln
