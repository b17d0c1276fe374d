// kiln/base/object_store.h — where compiled code persists between processes, and where a
// compilation's code came from.
//
// Shared vocabulary of the code generators and the runtime (the CUDA backend will store its
// cubins the same way). compile_kernels (codegen_cpu/kernel_codegen.h) keys every module by a hash of its
// kernels' text and of everything else its object code depends on (codegen_cpu/module_cache.h:
// the build of kiln, code_target_key). Before running LLVM it looks the key up: first among the modules this
// process already linked, then in an ObjectStore, which the runtime implements (the disk
// cache and the shared Redis cache, runtime/cache/compile_cache.h). After compiling it hands the
// object code to the store. A store validates what it returns (the key it was saved under,
// a checksum); object code that still fails to link is reported with discard().
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kiln {

// Where a module's code came from.
enum class CodeSource : uint8_t {
  Compiled,  // LLVM optimized and generated it now
  Memory,    // this process linked the same module before
  Disk,      // the persistent cache directory
  Remote,    // the shared cache (Redis)
};
std::string_view code_source_name(CodeSource s);

class ObjectStore {
 public:
  virtual ~ObjectStore() = default;
  // The object code saved under `key` and where it came from, or nothing. Never throws.
  virtual std::optional<std::string> load(const std::string& key, CodeSource& from) = 0;
  // Saves object code under `key` (best effort: a failure is logged, never thrown).
  virtual void save(const std::string& key, std::string_view object) = 0;
  // Object code load() returned did not link: forget it.
  virtual void discard(const std::string& key, const std::string& why) = 0;
};

}  // namespace kiln
