// kiln/base/host_cpu.h — what this x86-64 CPU is, from CPUID, without LLVM.
//
// Two uses. The compile cache's key must name everything the object code depends on, and a
// process whose kernels are all cached must compute it without loading LLVM: host_cpu_key()
// is the raw CPUID words LLVM's host detection reads (vendor, family and model, every feature
// leaf, the extended leaves and the register state the OS enables), so two hosts with equal
// keys are the same target to LLVM. The scheduler asks which vector registers the host has
// (host_vector_bits): AVX-512 and AVX2 only where the OS saves their registers too (XCR0).
#pragma once

#include <string>

namespace kiln {

// The CPUID leaves and XCR0 as hex words (leaf 1's EBX, which holds the core's APIC id, left
// out): equal on every core of a machine and on identical machines.
const std::string& host_cpu_key();

// Whether the host can run AVX2 (and FMA) code, and AVX-512 (F, BW, DQ, VL) code, with the OS
// saving the registers.
bool host_has_avx2();
bool host_has_avx512();
// AVX-512 (above) with VPCLMULQDQ (carry-less products on zmm registers).
bool host_has_avx512_clmul();

// The widest vector registers kernels use on this host: 512, 256 or 128 bits.
int host_vector_bits();

// The host's instruction-set features as hex words ("1c:... 1d:... 7b:... 7c:... 7d:...
// 71a:... e1c:... e1d:... xcr0:..."): CPUID's feature bits and the register state the OS
// saves. Code compiled for this host runs on another whose words hold every bit of these.
std::string host_feature_words();
// The features `words` (host_feature_words of another machine) names that this host lacks,
// named where known ("avx512f, leaf 7 ecx bit 14"), or "" when it has them all; a malformed
// text is reported as such.
std::string missing_host_features(const std::string& words);

// Tests only: "" when the leaves the feature words come from (glibc's copy where it has one)
// equal what the CPUID instruction returns now, else both (leaf 1's APIC id left out).
std::string cpuid_feature_words_for_testing();
// Tests only: whether the leaves came from glibc's copy (else from the instruction).
bool host_cpu_leaves_from_glibc();

}  // namespace kiln
