// kiln/base/atomic_file.h — writing a file so that readers see the old one or the whole new one.
//
// The bytes go to a fresh temporary file beside the destination (same directory, so the
// rename cannot cross file systems); commit() flushes it to disk, renames it over the
// destination and flushes the directory. A crash or an error before commit leaves the old
// file as it was, and the destructor removes the temporary file. Checkpoints use it, so no
// reader ever meets a torn one.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kiln {

class AtomicFile {
 public:
  // Errors are kiln::Error "[op] cannot write <path>: <why>".
  AtomicFile(const std::string& path, std::string_view op);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t n);
  void write(std::string_view bytes) { write(bytes.data(), bytes.size()); }
  void commit();

 private:
  [[noreturn]] void failed(const std::string& why);

  std::string path_, tmp_, op_;
  int fd_ = -1;
  bool committed_ = false;
};

}  // namespace kiln
