// kiln/test/emulated_cuda/emu_math.h — the C math library's functions for emulated kernels, without <cmath>.
//
// CUDA C calls libm's names in the global namespace (expf, log1p, fmaxf...), and that is all
// emu_device.h needs. <cmath> brings them too, with C++20's overloads and special functions:
// a precompiled emu_device.h of 18 MB that every module compile loads (0.04 s of about 0.1).
// These declare glibc's functions (GCC treats them as its builtins of those names, as it does
// with <cmath>'s), and the emulated NVRTC links libm so that they bind to its current
// versions: an emulated kernel computes exactly what it did with <cmath>.
#pragma once

#define KILN_EMU_MATH(name) double name(double) noexcept; float name##f(float) noexcept;
#define KILN_EMU_MATH2(name) double name(double, double) noexcept; float name##f(float, float) noexcept;
extern "C" {
KILN_EMU_MATH(acos) KILN_EMU_MATH(asin) KILN_EMU_MATH(atan) KILN_EMU_MATH(cos) KILN_EMU_MATH(sin) KILN_EMU_MATH(tan)
KILN_EMU_MATH(acosh) KILN_EMU_MATH(asinh) KILN_EMU_MATH(atanh) KILN_EMU_MATH(cosh) KILN_EMU_MATH(sinh)
KILN_EMU_MATH(tanh) KILN_EMU_MATH(exp) KILN_EMU_MATH(exp2) KILN_EMU_MATH(expm1) KILN_EMU_MATH(log)
KILN_EMU_MATH(log2) KILN_EMU_MATH(log10) KILN_EMU_MATH(log1p) KILN_EMU_MATH(logb) KILN_EMU_MATH(sqrt)
KILN_EMU_MATH(cbrt) KILN_EMU_MATH(erf) KILN_EMU_MATH(erfc) KILN_EMU_MATH(tgamma) KILN_EMU_MATH(lgamma)
KILN_EMU_MATH(ceil) KILN_EMU_MATH(floor) KILN_EMU_MATH(trunc) KILN_EMU_MATH(round) KILN_EMU_MATH(rint)
KILN_EMU_MATH(nearbyint) KILN_EMU_MATH(fabs)
KILN_EMU_MATH2(atan2) KILN_EMU_MATH2(pow) KILN_EMU_MATH2(hypot) KILN_EMU_MATH2(fmod) KILN_EMU_MATH2(remainder)
KILN_EMU_MATH2(copysign) KILN_EMU_MATH2(nextafter) KILN_EMU_MATH2(fdim) KILN_EMU_MATH2(fmax) KILN_EMU_MATH2(fmin)
double fma(double, double, double) noexcept;
float fmaf(float, float, float) noexcept;
double ldexp(double, int) noexcept;
float ldexpf(float, int) noexcept;
double frexp(double, int*) noexcept;
float frexpf(float, int*) noexcept;
double scalbn(double, int) noexcept;
float scalbnf(float, int) noexcept;
int ilogb(double) noexcept;
int ilogbf(float) noexcept;
long long llrint(double) noexcept;
long long llrintf(float) noexcept;
long long llround(double) noexcept;
long long llroundf(float) noexcept;
}
#undef KILN_EMU_MATH
#undef KILN_EMU_MATH2

// Spelled as glibc's <math.h> spells them, so that a later <math.h> redefines them identically.
#define INFINITY (__builtin_inff ())
#define NAN (__builtin_nanf (""))
#define HUGE_VAL (__builtin_huge_val ())
#define HUGE_VALF (__builtin_huge_valf ())
