// kiln/codegen_cpu/module_cache.cpp — module keys (SHA-256 of kernels, build and target) and the
// process's table of linked modules.
#include "codegen_cpu/module_cache.h"

#include "base/build_id.h"
#include "codegen_cpu/jit.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/SHA256.h>

#include <fmt/format.h>

#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#ifndef KILN_VERSION_STRING
#define KILN_VERSION_STRING "unknown"
#endif

namespace kiln::cpu {

namespace {

struct Linked {
  std::shared_mutex mu;
  std::unordered_map<std::string, std::vector<void*>> modules;
};

Linked& linked() {
  static Linked l;
  return l;
}

}  // namespace

std::string module_key(const std::vector<const ir::Kernel*>& kernels) {
  std::string text = "kiln " KILN_VERSION_STRING "; " + build_id() + "\n" + Jit::instance().target_key() + "\n";
  for (size_t i = 0; i < kernels.size(); ++i) {  // named by position, as in the module
    ir::Kernel k = *kernels[i];
    k.name = fmt::format("kiln_k{}", i);
    text += k.str() + "\n";
  }
  return sha256_hex(text);
}

std::string sha256_hex(std::string_view text) {
  llvm::SHA256 h;
  h.update(llvm::StringRef(text.data(), text.size()));
  std::string hex;
  for (uint8_t b : h.final()) hex += fmt::format("{:02x}", b);
  return hex;
}

std::optional<std::vector<void*>> linked_module(const std::string& key) {
  Linked& l = linked();
  std::shared_lock lock(l.mu);
  auto it = l.modules.find(key);
  if (it == l.modules.end()) return std::nullopt;
  return it->second;
}

void remember_linked_module(const std::string& key, std::vector<void*> addrs) {
  Linked& l = linked();
  std::unique_lock lock(l.mu);
  l.modules.emplace(key, std::move(addrs));
}

void forget_linked_modules_for_testing() {
  Linked& l = linked();
  std::unique_lock lock(l.mu);
  l.modules.clear();
}

}  // namespace kiln::cpu
