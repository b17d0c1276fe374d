// kiln/test/emulated_cuda/include/cuda_bf16.h — __nv_bfloat16 on the host, for kernels the emulated NVRTC compiles.
//
// Storage and the conversions kiln's CUDA C uses, rounded to nearest even with NaN kept quiet:
// kiln's own (base/half.h).
#pragma once

#include "../../../base/half.h"

struct __nv_bfloat16 {
  unsigned short x;
};

inline float __bfloat162float(__nv_bfloat16 h) { return kiln::detail::bf16_bits_to_float(h.x); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16{kiln::detail::float_to_bf16_bits(f)}; }
inline __nv_bfloat16 __float2bfloat16(float f) { return __float2bfloat16_rn(f); }
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short x) { return __nv_bfloat16{x}; }
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.x; }
