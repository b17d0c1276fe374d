// kiln/base/host_cpu.cpp — CPUID without LLVM (host_cpu.h).
#include "base/host_cpu.h"

#include <cpuid.h>
#include <fmt/format.h>

#include <cstdint>

namespace kiln {

namespace {

struct Regs {
  uint32_t a = 0, b = 0, c = 0, d = 0;
};

Regs cpuid(uint32_t leaf, uint32_t sub = 0) {
  Regs r;
  __cpuid_count(leaf, sub, r.a, r.b, r.c, r.d);
  return r;
}

uint64_t xcr0() {
  if (!(cpuid(1).c & (1u << 27))) return 0;  // OSXSAVE: the OS uses XSAVE, XGETBV is allowed
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t{hi} << 32) | lo;
}

bool bit(uint32_t word, int b) { return (word >> b) & 1u; }

}  // namespace

const std::string& host_cpu_key() {
  static const std::string key = [] {
    const uint32_t max_leaf = cpuid(0).a;
    const uint32_t max_ext = cpuid(0x80000000u).a;
    std::string k;
    auto add = [&](const char* name, uint32_t leaf, uint32_t sub, bool with_b) {
      const Regs r = cpuid(leaf, sub);
      k += fmt::format("{}:{:08x}.{:08x}.{:08x}.{:08x} ", name, r.a, with_b ? r.b : 0u, r.c, r.d);
    };
    add("0", 0, 0, true);  // vendor and the highest leaf
    add("1", 1, 0, false);  // family, model, stepping; features (EBX: APIC id, left out)
    if (max_leaf >= 7) {
      add("7.0", 7, 0, true);
      add("7.1", 7, 1, true);
    }
    if (max_leaf >= 0xd) {
      add("d.0", 0xd, 0, false);  // EBX: the XSAVE area of the features enabled now
      add("d.1", 0xd, 1, false);
    }
    if (max_leaf >= 0x14) add("14.0", 0x14, 0, true);
    if (max_leaf >= 0x19) add("19", 0x19, 0, true);
    if (max_leaf >= 0x24) add("24.0", 0x24, 0, true);
    for (uint32_t leaf : {0x80000001u, 0x80000008u})
      if (max_ext >= leaf) add(leaf == 0x80000001u ? "e1" : "e8", leaf, 0, true);
    k += fmt::format("xcr0:{:x}", xcr0());
    return k;
  }();
  return key;
}

bool host_has_avx2() {
  static const bool yes = [] {
    const Regs l1 = cpuid(1), l7 = cpuid(0).a >= 7 ? cpuid(7, 0) : Regs{};
    return bit(l1.c, 12) && bit(l1.c, 28) && bit(l7.b, 5) && (xcr0() & 0x6) == 0x6;  // FMA, AVX, AVX2; XMM+YMM state
  }();
  return yes;
}

bool host_has_avx512() {
  static const bool yes = [] {
    const Regs l7 = cpuid(0).a >= 7 ? cpuid(7, 0) : Regs{};
    // F, DQ, BW, VL; opmask, ZMM upper halves and ZMM16-31 state (XCR0 bits 5-7).
    return host_has_avx2() && bit(l7.b, 16) && bit(l7.b, 17) && bit(l7.b, 30) && bit(l7.b, 31) && (xcr0() & 0xe0) == 0xe0;
  }();
  return yes;
}

int host_vector_bits() { return host_has_avx512() ? 512 : host_has_avx2() ? 256 : 128; }

}  // namespace kiln
