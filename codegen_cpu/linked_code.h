// kiln/codegen_cpu/linked_code.h — compiled modules linked into the process, owned by programs.
//
// The step a cache hit runs instead of LLVM: a module's objects (one, or the parts of a module
// compiled in parallel; codegen_cpu/object_bundle.h) linked by kiln's object loader
// (codegen_cpu/object_loader.h) into a region of their own, the kernels looked up by name.
// No LLVM header is included and no LLVM code runs here.
#pragma once

#include "codegen_cpu/object_loader.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::cpu {

// Object code linked into the process: its kernels stay callable while a LinkedCode exists.
// The last owner's release unmaps the code: a process that compiles a fresh function per
// shape does not grow by each module it no longer runs.
class LinkedCode {
 public:
  explicit LinkedCode(std::unique_ptr<LoadedCode> code);
  ~LinkedCode();
  LinkedCode(const LinkedCode&) = delete;
  LinkedCode& operator=(const LinkedCode&) = delete;
  // The addresses of the names the module was linked for, in order.
  const std::vector<void*>& addrs() const { return code_->addrs(); }

 private:
  std::unique_ptr<LoadedCode> code_;
};

// Links the objects of one module into a region of their own and returns the code, with the
// addresses of `names` (defined by any of the objects) in order. Object code that does not
// link (a damaged cache entry, a missing symbol) gives null and *error says why. perf_labels
// (KILN_PERF_MAP): a name for each of `names` in /tmp/perf-<pid>.map, so that perf's profiles
// name the kernels (codegen_cpu/perf_map.h).
std::shared_ptr<const LinkedCode> link_objects(const std::vector<std::string_view>& objects,
                                               const std::vector<std::string>& names, std::string* error,
                                               const std::vector<std::string>* perf_labels = nullptr);

// Modules of linked code that are still owned (tests of the code's lifetime).
int64_t live_linked_modules();

}  // namespace kiln::cpu
