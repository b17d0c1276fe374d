// kiln/codegen_cpu/perf_map.cpp — perf's map of JIT code (perf_map.h).
#include "codegen_cpu/perf_map.h"

#include <llvm/ExecutionEngine/JITLink/JITLink.h>

#include <fmt/format.h>

#include <unistd.h>

#include <cstdio>

namespace kiln::cpu {

void PerfMapRecorder::modifyPassConfig(llvm::orc::MaterializationResponsibility&, llvm::jitlink::LinkGraph&,
                                       llvm::jitlink::PassConfiguration& config) {
  // After fixups every symbol has its final address.
  config.PostFixupPasses.push_back([this](llvm::jitlink::LinkGraph& g) {
    if (!recording_.load()) return llvm::Error::success();
    std::lock_guard<std::mutex> lock(mu_);
    for (llvm::jitlink::Symbol* s : g.defined_symbols())
      if (s->isCallable() && s->hasName() && s->getSize() > 0)
        linked_.push_back({s->getName().str(), s->getAddress().getValue(), s->getSize()});
    return llvm::Error::success();
  });
}

std::vector<LinkedFunction> PerfMapRecorder::take() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::exchange(linked_, {});
}

void append_perf_map(const std::vector<LinkedFunction>& functions, const std::vector<std::string>& symbols,
                     const std::vector<std::string>& labels) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  std::FILE* f = std::fopen(fmt::format("/tmp/perf-{}.map", ::getpid()).c_str(), "a");
  if (!f) return;
  for (const LinkedFunction& fn : functions) {
    std::string name = fn.symbol;
    for (size_t i = 0; i < symbols.size() && i < labels.size(); ++i)
      if (symbols[i] == fn.symbol) name = labels[i];
    std::fputs(fmt::format("{:x} {:x} {}\n", fn.address, fn.size, name).c_str(), f);
  }
  std::fclose(f);
}

}  // namespace kiln::cpu
