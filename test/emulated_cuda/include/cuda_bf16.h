// kiln/test/emulated_cuda/include/cuda_bf16.h — __nv_bfloat16 on the host, for kernels the emulated NVRTC compiles.
//
// Storage and the conversions kiln's CUDA C uses: f32 <-> bf16 rounded to nearest even, NaN
// kept quiet.
#pragma once

#include <cstdint>
#include <cstring>

struct __nv_bfloat16 {
  unsigned short x;
};

inline float __bfloat162float(__nv_bfloat16 h) {
  const uint32_t bits = static_cast<uint32_t>(h.x) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline __nv_bfloat16 __float2bfloat16_rn(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  if ((b & 0x7fffffffu) > 0x7f800000u) return __nv_bfloat16{static_cast<unsigned short>((b >> 16) | 0x40u)};
  const uint32_t r = b + 0x7fffu + ((b >> 16) & 1u);
  return __nv_bfloat16{static_cast<unsigned short>(r >> 16)};
}

inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short x) { return __nv_bfloat16{x}; }
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.x; }
inline __nv_bfloat16 __float2bfloat16(float f) { return __float2bfloat16_rn(f); }
