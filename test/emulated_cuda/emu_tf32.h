// kiln/test/emulated_cuda/emu_tf32.h — an f32 value as a tensor core reads it in TF32, for the cuBLASLt and cuDNN stand-ins.
#pragma once

#include <cstdint>
#include <cstring>

namespace kiln_emu {

// 10 mantissa bits, rounded to nearest even; infinities and NaNs unchanged.
inline double tf32(double v) {
  float f = static_cast<float>(v);
  uint32_t b;
  std::memcpy(&b, &f, 4);
  if ((b & 0x7f800000u) != 0x7f800000u) b = (b + 0xfffu + ((b >> 13) & 1u)) & 0xffffe000u;
  std::memcpy(&f, &b, 4);
  return f;
}

}  // namespace kiln_emu
