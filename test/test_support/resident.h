// kiln/test/test_support/resident.h — this process's resident memory, for the leak tests
// (test_reliability_leaks.cpp) and bench/leak_probe.cpp.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <fstream>

namespace kiln::test {

// Resident bytes of this process (/proc/self/statm).
inline int64_t resident_bytes() {
  std::ifstream in("/proc/self/statm");
  int64_t total = 0, resident = 0;
  in >> total >> resident;
  return resident * ::sysconf(_SC_PAGESIZE);
}

}  // namespace kiln::test
