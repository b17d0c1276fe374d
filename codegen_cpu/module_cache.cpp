// kiln/codegen_cpu/module_cache.cpp — module keys (SHA-256 of kernels, build and target) and the
// process's table of linked modules.
#include "codegen_cpu/module_cache.h"
#include "codegen_cpu/module_compiler.h"

#include "base/build_id.h"
#include "base/host_cpu.h"
#include "base/sha256.h"
#include "codegen_cpu/jit.h"
#include "codegen_cpu/linked_code.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#ifndef KILN_VERSION_STRING
#define KILN_VERSION_STRING "unknown"
#endif
#ifndef KILN_LLVM_VERSION
#define KILN_LLVM_VERSION "unknown"
#endif

namespace kiln::cpu {

namespace {

// The table refers to linked code without owning it, except for the most recently linked
// modules, which it keeps alive: a program compiled afresh again and again (a function object
// made per call) finds its code here instead of linking it from the disk cache each time.
constexpr size_t kKeepRecentModules = 64;

struct Linked {
  std::shared_mutex mu;
  std::unordered_map<std::string, std::weak_ptr<const LinkedCode>> modules;
  std::deque<std::shared_ptr<const LinkedCode>> recent;  // at most kKeepRecentModules
  size_t sweep_at = 64;  // entries at which expired ones are dropped (doubles with the live ones)
};

Linked& linked() {
  static Linked l;
  return l;
}

}  // namespace

std::string anonymous_text(const ir::Kernel& k) {
  ir::Kernel anonymous = k;
  anonymous.name.clear();
  return anonymous.str();
}

std::string module_key_of_texts(const std::vector<std::string>& texts, const CpuLevel& level) {
  // Positions are the order of the texts: the module names its kernels by them.
  std::string text =
      "kiln " KILN_VERSION_STRING "; " + build_id() + "; " + module_compiler_id() + "\n" + code_target_key(level) + "\n";
  for (const std::string& t : texts) text += t + "\n";
  return sha256_hex(text);
}

std::string code_target_key(const CpuLevel& level) {
  static const std::string base = "llvm " KILN_LLVM_VERSION "; x86_64 ELF; " + std::string(kCodegenSettings) + "; ";
  static const std::string native = base + "cpuid " + host_cpu_key();  // every compile's key
  return level.llvm_cpu.empty() ? native : base + "level " + level.name;
}

std::string module_key(const std::vector<const ir::Kernel*>& kernels) {
  std::vector<std::string> texts;
  for (const ir::Kernel* k : kernels) texts.push_back(anonymous_text(*k));
  return module_key_of_texts(texts);
}

std::shared_ptr<const LinkedCode> linked_module(const std::string& key) {
  Linked& l = linked();
  std::shared_lock lock(l.mu);
  auto it = l.modules.find(key);
  return it == l.modules.end() ? nullptr : it->second.lock();
}

void remember_linked_module(const std::string& key, const std::shared_ptr<const LinkedCode>& code) {
  Linked& l = linked();
  std::unique_lock lock(l.mu);
  l.modules[key] = code;
  l.recent.push_back(code);
  if (l.recent.size() > kKeepRecentModules) l.recent.pop_front();
  if (l.modules.size() < l.sweep_at) return;
  // The table stays proportional to the code that is alive.
  std::erase_if(l.modules, [](const auto& kv) { return kv.second.expired(); });
  l.sweep_at = std::max<size_t>(64, 2 * l.modules.size());
}

void forget_linked_modules_for_testing() {
  Linked& l = linked();
  std::unique_lock lock(l.mu);
  l.modules.clear();
  l.recent.clear();
}

}  // namespace kiln::cpu
