// kiln/base/crc32c.cpp — CRC-32C with the SSE4.2 crc32 instruction (crc32c.h).
//
// The instruction has a latency of three cycles and a throughput of one, so one chain of it
// runs at a third of what the core can do. Long inputs go through in blocks of three lanes of
// kLane bytes, each lane its own chain (the first continuing the running value, the others
// starting from zero), and the three register values are then joined: a lane's register
// value, carried across n more bytes, is that value times x^(8n) modulo the polynomial
// (zlib's crc32_combine, done on the raw register, which needs no pre- or post-conditioning).
// The multiplications take about a hundred cycles per block of 3 * kLane bytes.
//
// On AVX-512 hosts with VPCLMULQDQ, runs of 256 bytes are folded instead, 16 lanes of 16 bytes
// at a time (the method of Intel's "Fast CRC Computation for Generic Polynomials Using
// PCLMULQDQ"): a lane's value carried 256 bytes further is its two 64-bit halves carry-less
// multiplied by x^(8*256+32) and x^(8*256-32) modulo the polynomial (bit-reflected, shifted
// left by one), XORed into the lane's data there. At the end the 16 lanes fold into one 16-byte
// value with the same CRC as the whole run, which two crc32 instructions finish. The running
// value enters as the first four bytes XORed with it. The crc32 chains are bound by the
// instruction (about 16 GB/s here); the folds by memory.
#include "base/crc32c.h"

#include "base/host_cpu.h"

#include <immintrin.h>
#include <nmmintrin.h>

#include <cstring>

namespace kiln {

namespace {

constexpr uint32_t kPoly = 0x82f63b78u;  // CRC-32C, bit-reflected
constexpr size_t kLane = 8192;

// a * b modulo the polynomial, bit-reflected (the x^0 coefficient is the top bit).
constexpr uint32_t mul_mod(uint32_t a, uint32_t b) {
  uint32_t product = 0;
  for (uint32_t m = 1u << 31; m != 0; m >>= 1) {
    if (a & m) product ^= b;
    b = b & 1 ? (b >> 1) ^ kPoly : b >> 1;
  }
  return product;
}

// x^(8n) modulo the polynomial, by squaring.
constexpr uint32_t x_pow_bytes(uint64_t n) {
  uint32_t result = 1u << 31, square = 1u << 30;  // x^0, x^1
  for (uint64_t bits = 8 * n; bits != 0; bits >>= 1) {
    if (bits & 1) result = mul_mod(result, square);
    square = mul_mod(square, square);
  }
  return result;
}

constexpr uint32_t kShift1 = x_pow_bytes(kLane), kShift2 = x_pow_bytes(2 * kLane);
static_assert(mul_mod(1u << 31, 0x12345678u) == 0x12345678u, "x^0 is the unit");

// x^e modulo the polynomial, bit-reflected.
constexpr uint32_t x_pow_bits(uint64_t e) {
  uint32_t result = 1u << 31, square = 1u << 30;
  for (; e != 0; e >>= 1) {
    if (e & 1) result = mul_mod(result, square);
    square = mul_mod(square, square);
  }
  return result;
}

// The constants that carry a 16-byte lane n bytes further: for its low and its high half.
struct Fold {
  uint64_t low, high;
};
constexpr Fold fold_by(uint64_t n) { return {uint64_t{x_pow_bits(8 * n + 32)} << 1, uint64_t{x_pow_bits(8 * n - 32)} << 1}; }
static_assert(fold_by(64).low == 0x740eef02u && fold_by(64).high == 0x9e4addf8u, "CRC-32C's fold-by-64 constants");
constexpr Fold kFold256 = fold_by(256), kFold192 = fold_by(192), kFold128 = fold_by(128), kFold64 = fold_by(64),
               kFold48 = fold_by(48), kFold32 = fold_by(32), kFold16 = fold_by(16);

__attribute__((target("avx512f,avx512dq,vpclmulqdq"))) __m512i fold_lanes(__m512i x, __m512i k, __m512i data) {
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00), _mm512_clmulepi64_epi128(x, k, 0x11), data, 0x96);
}

__attribute__((target("avx512f,avx512dq,vpclmulqdq"))) __m512i constants(Fold a, Fold b, Fold c, Fold d) {
  return _mm512_set_epi64(static_cast<long long>(d.high), static_cast<long long>(d.low), static_cast<long long>(c.high),
                          static_cast<long long>(c.low), static_cast<long long>(b.high), static_cast<long long>(b.low),
                          static_cast<long long>(a.high), static_cast<long long>(a.low));
}

// The crc32 register after `n` bytes (a multiple of 256, at least 256) from register value `crc`.
__attribute__((target("avx512f,avx512dq,vpclmulqdq,sse4.2"))) uint32_t fold_runs(const char* p, size_t n, uint32_t crc) {
  __m512i x0 = _mm512_loadu_si512(p), x1 = _mm512_loadu_si512(p + 64), x2 = _mm512_loadu_si512(p + 128),
          x3 = _mm512_loadu_si512(p + 192);
  x0 = _mm512_xor_si512(x0, _mm512_zextsi128_si512(_mm_cvtsi32_si128(static_cast<int>(crc))));
  const __m512i k256 = constants(kFold256, kFold256, kFold256, kFold256);
  for (p += 256, n -= 256; n != 0; p += 256, n -= 256) {
    x0 = fold_lanes(x0, k256, _mm512_loadu_si512(p));
    x1 = fold_lanes(x1, k256, _mm512_loadu_si512(p + 64));
    x2 = fold_lanes(x2, k256, _mm512_loadu_si512(p + 128));
    x3 = fold_lanes(x3, k256, _mm512_loadu_si512(p + 192));
  }
  // Lanes 0-3, 4-7 and 8-11 carried onto lanes 12-15, then those onto the last.
  const __m512i zero = _mm512_setzero_si512();
  __m512i x = fold_lanes(x0, constants(kFold192, kFold192, kFold192, kFold192), x3);
  x = _mm512_xor_si512(x, fold_lanes(x1, constants(kFold128, kFold128, kFold128, kFold128), zero));
  x = _mm512_xor_si512(x, fold_lanes(x2, constants(kFold64, kFold64, kFold64, kFold64), zero));
  const __m512i y = fold_lanes(x, constants(kFold48, kFold32, kFold16, Fold{0, 0}), zero);
  __m128i last = _mm512_extracti64x2_epi64(x, 3);
  last = _mm_xor_si128(last, _mm512_extracti64x2_epi64(y, 0));
  last = _mm_xor_si128(last, _mm512_extracti64x2_epi64(y, 1));
  last = _mm_xor_si128(last, _mm512_extracti64x2_epi64(y, 2));
  uint64_t r = _mm_crc32_u64(0, static_cast<uint64_t>(_mm_cvtsi128_si64(last)));
  r = _mm_crc32_u64(r, static_cast<uint64_t>(_mm_extract_epi64(last, 1)));
  return static_cast<uint32_t>(r);
}

uint64_t word_at(const char* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}

}  // namespace

namespace {

__attribute__((target("sse4.2"))) uint32_t crc32c_with(std::string_view bytes, bool fold) {
  uint64_t crc = 0xffffffffu;
  const char* p = bytes.data();
  size_t n = bytes.size();
  if (fold && n >= 256) {
    const size_t runs = n & ~size_t{255};
    crc = fold_runs(p, runs, static_cast<uint32_t>(crc));
    p += runs;
    n -= runs;
  }
  for (; n >= 3 * kLane; p += 3 * kLane, n -= 3 * kLane) {
    uint64_t a = crc, b = 0, c = 0;
    for (size_t i = 0; i < kLane; i += 8) {
      a = _mm_crc32_u64(a, word_at(p + i));
      b = _mm_crc32_u64(b, word_at(p + kLane + i));
      c = _mm_crc32_u64(c, word_at(p + 2 * kLane + i));
    }
    crc = mul_mod(kShift2, static_cast<uint32_t>(a)) ^ mul_mod(kShift1, static_cast<uint32_t>(b)) ^ static_cast<uint32_t>(c);
  }
  for (; n >= 8; p += 8, n -= 8) crc = _mm_crc32_u64(crc, word_at(p));
  uint32_t c = static_cast<uint32_t>(crc);
  for (; n > 0; ++p, --n) c = _mm_crc32_u8(c, static_cast<unsigned char>(*p));
  return c ^ 0xffffffffu;
}

}  // namespace

uint32_t crc32c(std::string_view bytes) {
  static const bool fold = host_has_avx512_clmul();
  return crc32c_with(bytes, fold);
}

uint32_t crc32c_for_testing(std::string_view bytes, bool fold) { return crc32c_with(bytes, fold && host_has_avx512_clmul()); }

uint32_t crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t length_b) {
  // The pre- and post-conditioning cancel: carrying A's final value across B's length and adding
  // B's final value gives the final value of both (each is linear in the message plus a constant
  // that depends on the length only).
  return mul_mod(x_pow_bytes(length_b), crc_a) ^ crc_b;
}

}  // namespace kiln
