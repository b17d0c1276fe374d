// kiln/base/cpu_level.h — the x86-64 feature levels compiled code targets: "native" (this
// host, what compile() uses) and the psABI's microarchitecture levels x86-64-v2, -v3 and -v4,
// which an exported program carries code for so that it runs on any host of a level.
//
//   x86-64-v2  SSE4.2, SSSE3, POPCNT, CX16                     128-bit vectors
//   x86-64-v3  v2 + AVX, AVX2, FMA, BMI1/2, F16C, LZCNT, MOVBE  256-bit vectors
//   x86-64-v4  v3 + AVX-512 F, BW, CD, DQ, VL                   512-bit vectors
//
// A level says what code compiled for it needs from a host, in host_feature_words' form
// (base/host_cpu.h), so missing_host_features answers whether a host runs it; the widest
// vector registers its kernels are scheduled for; and the CPU name LLVM compiles it for.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

struct CpuLevel {
  std::string name;           // "x86-64-v3", or "native"
  std::string feature_words;  // what a host needs to run the level's code (host_feature_words form)
  int vector_bits = 0;        // 128, 256 or 512
  std::string llvm_cpu;       // LLVM's CPU name; empty for native (the host's CPU and features)
};

// This host: its own feature words and vector registers.
const CpuLevel& native_cpu_level();
// The level named `name` ("native", "x86-64-v2", "x86-64-v3", "x86-64-v4"), or nullopt.
std::optional<CpuLevel> find_cpu_level(std::string_view name);
// The names find_cpu_level knows, for error messages.
const std::vector<std::string>& cpu_level_names();

}  // namespace kiln
