// kiln/codegen_cpu/module_cache.h — the cache key of a generated module, and the modules this
// process has linked, by key.
//
// The key is the hex SHA-256 of the module's kernels in their exact text form (ir/kernel_text.h:
// parse(print(k)) == k, so the text holds every field the emitter reads), of the build of
// kiln that emits them (kiln's version and base/build_id.h: a rebuilt emitter gets fresh
// keys) and of code_target_key (LLVM's version, the code generation settings and the host
// CPU's identification words, base/host_cpu.h). Equal keys mean equal object code. The key
// needs no LLVM: a cache hit builds no LLVM IR, starts no LLVM and reads the CPU with CPUID
// (the hash is base/sha256.h's). No LLVM header is included here.
#pragma once

#include "codegen_cpu/linked_code.h"
#include "base/cpu_level.h"
#include "ir/kernel.h"

#include <memory>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::cpu {

// Kernels in module order. Their names do not count: the module names them kiln_k0,
// kiln_k1, ... by position, so that equal kernels of different compilations share a key.
std::string module_key(const std::vector<const ir::Kernel*>& kernels);
// Everything besides the kernels and kiln's build that the object code depends on: LLVM's
// version (from the build), the target (x86-64 ELF), the code generation settings
// (codegen_cpu/jit.h kCodegenSettings) and host_cpu_key(), the CPUID words LLVM's host
// detection reads, so that two hosts with equal keys are one target to LLVM. Code for one of
// the x86-64 levels (base/cpu_level.h) names the level instead of the host.
std::string code_target_key(const CpuLevel& level = native_cpu_level());
// A kernel's text without its name (what the key hashes, and what tells identical kernels).
std::string anonymous_text(const ir::Kernel& k);
// module_key from the kernels' anonymous texts, in module order, for code of `level`.
std::string module_key_of_texts(const std::vector<std::string>& texts, const CpuLevel& level = native_cpu_level());

// A module this process linked and some compiled program still owns (or one of the 64 it
// linked last), by key. Code nothing runs any more and no longer among the recent is
// unmapped, and linked again from the compile cache when asked for.
std::shared_ptr<const LinkedCode> linked_module(const std::string& key);
void remember_linked_module(const std::string& key, const std::shared_ptr<const LinkedCode>& code);
// Tests: the next compile of any module looks past this process (its code stays linked).
void forget_linked_modules_for_testing();

}  // namespace kiln::cpu
