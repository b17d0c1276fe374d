// kiln/codegen_cpu/module_cache.h — the cache key of a generated module, and the modules this
// process has linked, by key.
//
// The key is the hex SHA-256 of the module's unoptimized LLVM IR (kernels named by position,
// so that it does not depend on which compilation asked), of Jit::target_key (LLVM's
// version, the target CPU and features, the code generation settings) and of kiln's
// version. Equal keys mean equal object code: whatever kiln version changes in how kernels
// are lowered or emitted changes the IR, and so the key. No LLVM header is included here.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace llvm {
class Module;
}  // namespace llvm

namespace kiln::cpu {

std::string module_key(const llvm::Module& m);

// The addresses of a module's kernels when this process already linked it.
std::optional<std::vector<void*>> linked_module(const std::string& key);
void remember_linked_module(const std::string& key, std::vector<void*> addrs);
// Tests: the next compile of any module looks past this process (its code stays linked).
void forget_linked_modules_for_testing();

}  // namespace kiln::cpu
