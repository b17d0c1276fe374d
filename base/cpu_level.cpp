// kiln/base/cpu_level.cpp — the x86-64 feature levels (cpu_level.h).
#include "base/cpu_level.h"

#include "base/host_cpu.h"

namespace kiln {

namespace {

// The CPUID bits each level needs (leaf 1 ECX/EDX, leaf 7 EBX, extended leaf 1 ECX) and the
// register state the OS must save (XCR0: x87, SSE, AVX, and AVX-512's opmask and zmm halves).
// Bit numbers are Intel's (SDM vol. 2A, CPUID); the sets are the psABI's levels.
//   v2: 1c sse3 0, ssse3 9, cx16 13, sse4.1 19, sse4.2 20, popcnt 23; 1d fpu 0, cx8 8, cmov 15,
//       mmx 23, fxsr 24, sse 25, sse2 26; e1c lahf 0
//   v3: 1c fma 12, movbe 22, avx 28, f16c 29; 7b bmi1 3, avx2 5, bmi2 8; e1c lzcnt 5
//   v4: 7b avx512f 16, avx512dq 17, avx512cd 28, avx512bw 30, avx512vl 31
const std::vector<CpuLevel>& levels() {
  static const std::vector<CpuLevel> all = {
      {"x86-64-v2", "1c:982201 1d:7808101 e1c:1 xcr0:3", 128, "x86-64-v2"},
      {"x86-64-v3", "1c:30d83201 1d:7808101 7b:128 e1c:21 xcr0:7", 256, "x86-64-v3"},
      {"x86-64-v4", "1c:30d83201 1d:7808101 7b:d0030128 e1c:21 xcr0:e7", 512, "x86-64-v4"},
  };
  return all;
}

}  // namespace

const CpuLevel& native_cpu_level() {
  static const CpuLevel native{"native", host_feature_words(), host_vector_bits(), ""};
  return native;
}

std::optional<CpuLevel> find_cpu_level(std::string_view name) {
  if (name == "native") return native_cpu_level();
  for (const CpuLevel& l : levels())
    if (l.name == name) return l;
  return std::nullopt;
}

const std::vector<std::string>& cpu_level_names() {
  static const std::vector<std::string> names = {"native", "x86-64-v2", "x86-64-v3", "x86-64-v4"};
  return names;
}

}  // namespace kiln
