// kiln/test/emulated_cuda/include/cuda_fp16.h — __half on the host, for kernels the emulated NVRTC compiles.
//
// Storage and the conversions kiln's CUDA C uses, rounded to nearest even as CUDA's are: kiln's
// own (base/half.h), which the interpreter's f16 results are tested with.
#pragma once

#include "../../../base/half.h"

struct __half {
  unsigned short x;
};

inline float __half2float(__half h) { return kiln::detail::half_bits_to_float(h.x); }
inline __half __float2half_rn(float f) { return __half{kiln::detail::float_to_half_bits(f)}; }
inline __half __float2half(float f) { return __float2half_rn(f); }
inline __half __ushort_as_half(unsigned short x) { return __half{x}; }
inline unsigned short __half_as_ushort(__half h) { return h.x; }
