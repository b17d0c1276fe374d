// kiln/base/host_cpu.cpp — CPUID without LLVM (host_cpu.h).
#include "base/host_cpu.h"

#include <cpuid.h>
#if __has_include(<sys/platform/x86.h>) && __has_include(<bits/platform/x86.h>)  // (glibc 2.33 lacks the second)
#include <sys/platform/x86.h>
#define KILN_GLIBC_CPUID 1
#else
#define KILN_GLIBC_CPUID 0
#endif
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

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

// The leaves the feature tests read, once per process. CPUID traps to the hypervisor in a VM
// (about 8 us a leaf on the development VM), and glibc has already read these leaves while the
// process started (its ifunc resolvers choose memcpy and friends from them), so they are taken
// from glibc where it says (<sys/platform/x86.h>, glibc 2.34 on): its cpuid_array holds each
// leaf's registers as the instruction returned them, zero for a leaf past the CPU's highest
// (its `active` bits, which GLIBC_TUNABLES=glibc.cpu.hwcaps changes, are not used: the leaves
// say what the CPU has, as CPUID does).
// test_cpu_host_features.cpp checks that they equal the instruction's.
struct Leaves {
  Regs l1, l7, l71, e1;
  uint64_t xcr0 = 0;
};

Leaves leaves_from_cpuid() {
  Leaves r;
  const uint32_t max_leaf = cpuid(0).a, max_ext = cpuid(0x80000000u).a;
  r.l1 = cpuid(1);
  if (max_leaf >= 7) r.l7 = cpuid(7, 0), r.l71 = cpuid(7, 1);
  if (max_ext >= 0x80000001u) r.e1 = cpuid(0x80000001u);
  return r;
}

const Leaves& leaves() {
  static const Leaves l = [] {
#if KILN_GLIBC_CPUID
    auto leaf = [](unsigned index) {
      const cpuid_feature* f = __x86_get_cpuid_feature_leaf(index);
      return Regs{f->cpuid_array[0], f->cpuid_array[1], f->cpuid_array[2], f->cpuid_array[3]};
    };
    Leaves r;
    r.l1 = leaf(CPUID_INDEX_1);
    r.l7 = leaf(CPUID_INDEX_7);
    r.l71 = leaf(CPUID_INDEX_7_ECX_1);
    r.e1 = leaf(CPUID_INDEX_80000001);
    // glibc reads leaf 1 and the extended leaves only for the vendors it knows (Intel, AMD,
    // Hygon, Zhaoxin); leaf 1's EAX (family, model, stepping) is never 0 on a real CPU.
    if (r.l1.a == 0) r = leaves_from_cpuid();
#else
    Leaves r = leaves_from_cpuid();
#endif
    if (r.l1.c & (1u << 27)) {  // OSXSAVE: the OS uses XSAVE, XGETBV is allowed
      uint32_t lo = 0, hi = 0;
      __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
      r.xcr0 = (uint64_t{hi} << 32) | lo;
    }
    return r;
  }();
  return l;
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
    k += fmt::format("xcr0:{:x}", leaves().xcr0);
    return k;
  }();
  return key;
}

bool host_has_avx2() {
  const Leaves& l = leaves();
  return bit(l.l1.c, 12) && bit(l.l1.c, 28) && bit(l.l7.b, 5) && (l.xcr0 & 0x6) == 0x6;  // FMA, AVX, AVX2; XMM+YMM state
}

bool host_has_avx512() {
  const Leaves& l = leaves();
  // F, DQ, BW, VL; opmask, ZMM upper halves and ZMM16-31 state (XCR0 bits 5-7).
  return host_has_avx2() && bit(l.l7.b, 16) && bit(l.l7.b, 17) && bit(l.l7.b, 30) && bit(l.l7.b, 31) && (l.xcr0 & 0xe0) == 0xe0;
}

bool host_has_avx512_clmul() {
  const Leaves& l = leaves();
  return host_has_avx512() && bit(l.l1.c, 1) && bit(l.l7.c, 10);  // PCLMULQDQ, VPCLMULQDQ
}

int host_vector_bits() { return host_has_avx512() ? 512 : host_has_avx2() ? 256 : 128; }

namespace {

// One word of feature bits: its name in host_feature_words and its value on this host.
struct FeatureWord {
  const char* name;
  uint64_t value;
};

std::vector<FeatureWord> feature_words() {
  const Leaves& l = leaves();
  // Leaf 1 EDX bit 28 (HTT) and ECX bit 27 (OSXSAVE) describe the machine's setup, not what
  // code may use.
  return {{"1c", l.l1.c & ~(1u << 27)}, {"1d", l.l1.d & ~(1u << 28)}, {"7b", l.l7.b}, {"7c", l.l7.c}, {"7d", l.l7.d},
          {"71a", l.l71.a}, {"e1c", l.e1.c}, {"e1d", l.e1.d}, {"xcr0", l.xcr0}};
}

// Names of the bits code generators use most (CPUID leaf, register, bit).
std::string bit_name(const std::string& word, int b) {
  static const std::map<std::pair<std::string, int>, const char*> names = {
      {{"1c", 0}, "sse3"},       {{"1c", 9}, "ssse3"},        {{"1c", 12}, "fma"},       {{"1c", 19}, "sse4.1"},
      {{"1c", 20}, "sse4.2"},    {{"1c", 22}, "movbe"},       {{"1c", 23}, "popcnt"},    {{"1c", 28}, "avx"},
      {{"1c", 29}, "f16c"},      {{"7b", 3}, "bmi1"},         {{"7b", 5}, "avx2"},       {{"7b", 8}, "bmi2"},
      {{"7b", 16}, "avx512f"},   {{"7b", 17}, "avx512dq"},    {{"7b", 21}, "avx512ifma"}, {{"7b", 28}, "avx512cd"},
      {{"7b", 30}, "avx512bw"},  {{"7b", 31}, "avx512vl"},    {{"7c", 1}, "avx512vbmi"}, {{"7c", 6}, "avx512vbmi2"},
      {{"7c", 11}, "avx512vnni"}, {{"7c", 12}, "avx512bitalg"}, {{"7c", 14}, "avx512vpopcntdq"},
      {{"7d", 23}, "avx512fp16"}, {{"7d", 22}, "amx-bf16"},   {{"7d", 24}, "amx-tile"},  {{"7d", 25}, "amx-int8"},
      {{"71a", 4}, "avxvnni"},   {{"71a", 5}, "avx512bf16"},  {{"e1c", 5}, "lzcnt"},     {{"xcr0", 1}, "sse state"},
      {{"xcr0", 2}, "avx state"}, {{"xcr0", 5}, "avx-512 opmask state"}, {{"xcr0", 6}, "avx-512 zmm state"},
      {{"xcr0", 7}, "avx-512 upper zmm state"}, {{"xcr0", 17}, "amx tile config state"}, {{"xcr0", 18}, "amx tile state"},
  };
  auto it = names.find({word, b});
  return it != names.end() ? std::string(it->second) : fmt::format("cpuid {} bit {}", word, b);
}

}  // namespace

bool host_cpu_leaves_from_glibc() { return KILN_GLIBC_CPUID != 0 && leaves().l1.a != 0; }

std::string cpuid_feature_words_for_testing() {
  const Leaves saved = leaves(), direct = [&] {
    Leaves r = leaves_from_cpuid();
    r.xcr0 = saved.xcr0;
    return r;
  }();
  auto words = [](const Leaves& l) {
    return fmt::format("{:x}.{:x}.{:x}.{:x} {:x}.{:x}.{:x}.{:x} {:x}.{:x}.{:x}.{:x} {:x}.{:x}.{:x}.{:x}", l.l1.a, l.l1.b & 0x00ffffffu,
                       l.l1.c, l.l1.d, l.l7.a, l.l7.b, l.l7.c, l.l7.d, l.l71.a, l.l71.b, l.l71.c, l.l71.d, l.e1.a, l.e1.b, l.e1.c,
                       l.e1.d);
  };
  return words(saved) == words(direct) ? "" : "glibc's leaves " + words(saved) + " differ from CPUID's " + words(direct);
}

std::string host_feature_words() {
  std::string s;
  for (const FeatureWord& w : feature_words()) s += fmt::format("{}{}:{:x}", s.empty() ? "" : " ", w.name, w.value);
  return s;
}

std::string missing_host_features(const std::string& words) {
  const std::vector<FeatureWord> here = feature_words();
  std::istringstream in(words);
  std::string item, missing;
  size_t seen = 0;
  while (in >> item) {
    const size_t colon = item.find(':');
    if (colon == std::string::npos) return fmt::format("a malformed feature word '{}'", item);
    const std::string name = item.substr(0, colon);
    uint64_t need = 0;
    const char* first = item.data() + colon + 1;
    auto [p, ec] = std::from_chars(first, item.data() + item.size(), need, 16);
    if (ec != std::errc() || p != item.data() + item.size() || first == p) return fmt::format("a malformed feature word '{}'", item);
    auto w = std::find_if(here.begin(), here.end(), [&](const FeatureWord& f) { return name == f.name; });
    if (w == here.end()) return fmt::format("an unknown feature word '{}'", name);
    ++seen;
    for (int b = 0; b < 64; ++b)
      if (((need >> b) & 1u) && !((w->value >> b) & 1u)) missing += (missing.empty() ? "" : ", ") + bit_name(name, b);
  }
  if (seen == 0) return "no feature words";
  return missing;
}

}  // namespace kiln
