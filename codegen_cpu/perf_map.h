// kiln/codegen_cpu/perf_map.h — names for generated code in Linux perf's profiles.
//
// perf attributes samples in JIT code through /tmp/perf-<pid>.map, a text file with one line
// per function: "<start address hex> <size hex> <name>". When KILN_PERF_MAP is on, the JIT
// (codegen_cpu/jit.cpp) appends a line for every function it links, named by the caller's
// label ("kiln <function>/<kernel>", the kernel's name in KILN_DEBUG_DIR's plan dumps), so
// `perf report` shows which kernel of which compiled function the time went to instead of a
// bare address. Sizes come from JITLink's graph of each object (PerfMapRecorder), which is
// the only place that knows where a function ends.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include <llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h>

namespace kiln::cpu {

struct LinkedFunction {
  std::string symbol;  // the object's name for it (kiln_k0, ...)
  uint64_t address = 0, size = 0;
};

// A JITLink plugin that records the defined functions of every graph it sees while recording
// is on, with their final addresses, for the linker's caller to take after the link (take()). The JIT links under one
// mutex and in the calling thread, so the functions taken are those of the object just linked.
class PerfMapRecorder : public llvm::orc::ObjectLinkingLayer::Plugin {
 public:
  void modifyPassConfig(llvm::orc::MaterializationResponsibility& mr, llvm::jitlink::LinkGraph& g,
                        llvm::jitlink::PassConfiguration& config) override;
  llvm::Error notifyFailed(llvm::orc::MaterializationResponsibility&) override { return llvm::Error::success(); }
  llvm::Error notifyRemovingResources(llvm::orc::JITDylib&, llvm::orc::ResourceKey) override {
    return llvm::Error::success();
  }
  void notifyTransferringResources(llvm::orc::JITDylib&, llvm::orc::ResourceKey, llvm::orc::ResourceKey) override {}

  // Whether links record their functions (only when the caller will write them to the map).
  void set_recording(bool on) { recording_.store(on); }
  std::vector<LinkedFunction> take();

 private:
  std::atomic<bool> recording_{false};
  std::mutex mu_;
  std::vector<LinkedFunction> linked_;
};

// Appends one line per function to /tmp/perf-<pid>.map: `labels[i]` names the function whose
// symbol is `symbols[i]`; a function with no label keeps its symbol's name. Failures to write
// are ignored (a profile without names, never an error in the program).
void append_perf_map(const std::vector<LinkedFunction>& functions, const std::vector<std::string>& symbols,
                     const std::vector<std::string>& labels);

}  // namespace kiln::cpu
