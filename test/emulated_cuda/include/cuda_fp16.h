// kiln/test/emulated_cuda/include/cuda_fp16.h — __half on the host, for kernels the emulated NVRTC compiles.
//
// Storage and the conversions kiln's CUDA C uses: f32 <-> f16 rounded to nearest even,
// subnormals, infinities and NaN as IEEE binary16 has them.
#pragma once

#include <cstdint>
#include <cstring>

struct __half {
  unsigned short x;
};

inline float __half2float(__half h) {
  const uint32_t sign = static_cast<uint32_t>(h.x & 0x8000u) << 16, exp = (h.x >> 10) & 0x1fu, man = h.x & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  } else if (man == 0) {
    bits = sign;
  } else {  // subnormal: normalize
    int e = -1;
    uint32_t m = man;
    do {
      ++e;
      m <<= 1;
    } while ((m & 0x400u) == 0);
    bits = sign | (static_cast<uint32_t>(112 - e) << 23) | ((m & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline __half __float2half_rn(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  const uint32_t sign = (b >> 16) & 0x8000u;
  const uint32_t abs = b & 0x7fffffffu;
  __half h;
  if (abs > 0x7f800000u) {  // NaN: quiet, keep the top payload bits
    h.x = static_cast<unsigned short>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));
    return h;
  }
  if (abs >= 0x477ff000u) {  // rounds to infinity (>= 65520)
    h.x = static_cast<unsigned short>(sign | 0x7c00u);
    return h;
  }
  if (abs < 0x38800000u) {  // below the smallest normal (2^-14): subnormal or zero
    if (abs < 0x33000000u) {  // below half the smallest subnormal (2^-25): zero (2^-25 itself ties to even: 0)
      h.x = static_cast<unsigned short>(sign);
      return h;
    }
    const uint32_t exp = abs >> 23, man = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - exp;  // 14 + (112 - (exp - 127 + 127 - 113)) ... mantissa to 10 bits at 2^-24
    const uint32_t q = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
    const uint32_t r = q + (rem > half || (rem == half && (q & 1u)));
    h.x = static_cast<unsigned short>(sign | r);
    return h;
  }
  const uint32_t q = (abs - 0x38000000u) >> 13, rem = abs & 0x1fffu;
  const uint32_t r = q + (rem > 0x1000u || (rem == 0x1000u && (q & 1u)));
  h.x = static_cast<unsigned short>(sign | r);
  return h;
}

inline __half __ushort_as_half(unsigned short x) { return __half{x}; }
inline unsigned short __half_as_ushort(__half h) { return h.x; }
inline __half __float2half(float f) { return __float2half_rn(f); }
