// kiln/codegen_cpu/perf_map.cpp — perf's map of JIT code (perf_map.h).
#include "codegen_cpu/perf_map.h"

#include <fmt/format.h>

#include <unistd.h>

#include <cstdio>
#include <mutex>

namespace kiln::cpu {

void append_perf_map(const std::vector<LoadedFunction>& functions, const std::vector<std::string>& symbols,
                     const std::vector<std::string>& labels) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  std::FILE* f = std::fopen(fmt::format("/tmp/perf-{}.map", ::getpid()).c_str(), "a");
  if (!f) return;
  for (const LoadedFunction& fn : functions) {
    if (fn.size == 0) continue;
    std::string name = fn.symbol;
    for (size_t i = 0; i < symbols.size() && i < labels.size(); ++i)
      if (symbols[i] == fn.symbol) name = labels[i];
    std::fputs(fmt::format("{:x} {:x} {}\n", fn.address, fn.size, name).c_str(), f);
  }
  std::fclose(f);
}

}  // namespace kiln::cpu
