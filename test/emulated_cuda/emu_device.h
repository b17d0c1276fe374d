// kiln/test/emulated_cuda/emu_device.h — CUDA's built-ins for kernels compiled as host C++ by the emulated NVRTC.
//
// Included before every module the emulated NVRTC compiles (fake_nvrtc.cpp). It maps the CUDA
// C that kiln generates (codegen_cuda/) and writes (sort_kernels.cuh) onto the host:
//  - qualifiers: __global__ and __device__ functions are ordinary functions; a __shared__
//    variable is a function-local static, which is one block's shared memory because the
//    emulated driver runs one block at a time on one host thread (fake_cuda.cpp);
//  - threadIdx, blockIdx, blockDim and gridDim read the running fiber's coordinates;
//  - __syncthreads, warp shuffles and votes are rendezvous in the driver's scheduler, which
//    reports a barrier that some threads of a block never reach;
//  - the bit casts, correctly rounded operations and math functions CUDA offers, with IEEE
//    semantics (the module is compiled with -ffp-contract=off, so no FMA appears that
//    NVRTC would not make either; NVRTC's own contractions are not reproduced);
//  - atomics are plain read-modify-writes: only one thread runs at a time.
// What is not here fails to compile, and the emulated NVRTC returns the compiler's log.
#pragma once

#include "emu_api.h"
#include "emu_math.h"

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

namespace kiln_emu {
inline const Api* g_api = nullptr;
inline Thread& me() { return **g_api->current; }
}  // namespace kiln_emu

// Defined once per module: emu_device.h is included by the one translation unit a module is.
extern "C" void kiln_emu_bind(const kiln_emu::Api* api) { kiln_emu::g_api = api; }

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __shared__ static
#define __constant__ static

using dim3 = kiln_emu::Dim3;
#define threadIdx (kiln_emu::me().thread_idx)
#define blockIdx (kiln_emu::me().block_idx)
#define blockDim (kiln_emu::me().block_dim)
#define gridDim (kiln_emu::me().grid_dim)
static constexpr int warpSize = 32;
inline unsigned char* kiln_emu_dynamic_shared() { return kiln_emu::me().dynamic_shared; }

inline void __syncthreads() { kiln_emu::g_api->syncthreads(); }
inline void __syncwarp(unsigned = 0xffffffffu) { kiln_emu::g_api->syncwarp(); }
inline void __trap() { kiln_emu::g_api->trap("__trap()"); }

namespace kiln_emu {
inline int lane() { return static_cast<int>(me().thread_idx.x & 31u); }
template <class T> T exchange(T v, int src) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>, "a shuffled value is at most 8 bytes");
  T out;
  g_api->exchange(&v, &out, sizeof(T), src);
  return out;
}
inline void full_mask(unsigned mask, const char* what) {
  if (mask != 0xffffffffu) g_api->trap(what);  // kiln's kernels shuffle whole warps only
}
}  // namespace kiln_emu

template <class T> T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  kiln_emu::full_mask(mask, "__shfl_down_sync with a partial mask");
  const int l = kiln_emu::lane(), seg = l & ~(width - 1), d = static_cast<int>(delta);
  return kiln_emu::exchange(v, l - seg + d < width ? l + d : l);
}
template <class T> T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  kiln_emu::full_mask(mask, "__shfl_up_sync with a partial mask");
  const int l = kiln_emu::lane(), seg = l & ~(width - 1);
  return kiln_emu::exchange(v, l - seg >= static_cast<int>(delta) ? l - static_cast<int>(delta) : l);
}
template <class T> T __shfl_xor_sync(unsigned mask, T v, int m, int width = 32) {
  kiln_emu::full_mask(mask, "__shfl_xor_sync with a partial mask");
  // A lane may read an earlier group of `width` lanes, not a later one (CUDA's rule).
  const int l = kiln_emu::lane(), seg = l & ~(width - 1), src = l ^ m;
  return kiln_emu::exchange(v, (src & ~(width - 1)) > seg ? l : src);
}
template <class T> T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
  kiln_emu::full_mask(mask, "__shfl_sync with a partial mask");
  const int l = kiln_emu::lane(), seg = l & ~(width - 1);
  return kiln_emu::exchange(v, seg + (src & (width - 1)));
}
inline unsigned __ballot_sync(unsigned mask, int vote) {
  kiln_emu::full_mask(mask, "__ballot_sync with a partial mask");
  return kiln_emu::g_api->ballot(vote);
}
inline int __any_sync(unsigned mask, int vote) { return __ballot_sync(mask, vote) != 0; }
inline int __all_sync(unsigned mask, int vote) { return __ballot_sync(mask, !vote) == 0; }  // a partial warp too

// ---- bit casts, integer intrinsics --------------------------------------------------------
namespace kiln_emu {
template <class To, class From> To bits(From f) {
  static_assert(sizeof(To) == sizeof(From));
  To t;
  std::memcpy(&t, &f, sizeof t);
  return t;
}
}  // namespace kiln_emu
inline float __int_as_float(int x) { return kiln_emu::bits<float>(x); }
inline int __float_as_int(float x) { return kiln_emu::bits<int>(x); }
inline float __uint_as_float(unsigned x) { return kiln_emu::bits<float>(x); }
inline unsigned __float_as_uint(float x) { return kiln_emu::bits<unsigned>(x); }
inline double __longlong_as_double(long long x) { return kiln_emu::bits<double>(x); }
inline long long __double_as_longlong(double x) { return kiln_emu::bits<long long>(x); }
inline unsigned __umulhi(unsigned a, unsigned b) { return static_cast<unsigned>((static_cast<uint64_t>(a) * b) >> 32); }
inline int __mulhi(int a, int b) { return static_cast<int>((static_cast<int64_t>(a) * b) >> 32); }
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return static_cast<unsigned long long>((static_cast<unsigned __int128>(a) * b) >> 64);
}
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x)); }
inline int __ffs(int x) { return __builtin_ffs(x); }
template <class T> T __ldg(const T* p) { return *p; }

// Correctly rounded operations (round to nearest: the host's default mode).
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fsqrt_rn(float a) { return sqrtf(a); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline double __dsqrt_rn(double a) { return sqrt(a); }
inline float __double2float_rn(double a) { return static_cast<float>(a); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __saturatef(float x) { return x != x ? 0.0f : x < 0 ? 0.0f : x > 1 ? 1.0f : x; }

// ---- math: what libm lacks ------------------------------------------------------------------
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
// The inverse of erf: an initial guess (Giles, "Approximating the erfinv function", 2010) and
// two Newton steps in double.
inline double erfinv(double y) {
  if (!(y > -1.0 && y < 1.0)) return y == 1.0 ? INFINITY : y == -1.0 ? -INFINITY : NAN;
  double w = -log((1.0 - y) * (1.0 + y)), x;
  if (w < 5.0) {
    w -= 2.5;
    double p = 2.81022636e-08;
    for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164,
                     0.246640727, 1.50140941})
      p = c + p * w;
    x = p * y;
  } else {
    w = sqrt(w) - 3.0;
    double p = -0.000200214257;
    for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047,
                     1.00167406, 2.83297682})
      p = c + p * w;
    x = p * y;
  }
  for (int i = 0; i < 2; ++i) x -= (erf(x) - y) / (1.1283791670955126 * exp(-x * x));
  return x;
}
inline float erfinvf(float y) { return static_cast<float>(erfinv(y)); }
template <class T> constexpr const T& min(const T& a, const T& b) { return b < a ? b : a; }  // std::min's
template <class T> constexpr const T& max(const T& a, const T& b) { return a < b ? b : a; }  // std::max's
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a < b ? b : a; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a < b ? b : a; }

// ---- atomics: one thread runs at a time -----------------------------------------------------
template <class T> T atomicCAS(T* p, T cmp, T val) {
  const T old = *p;
  if (old == cmp) *p = val;
  return old;
}
template <class T> T atomicAdd(T* p, T v) {
  const T old = *p;
  *p = old + v;
  return old;
}
template <class T> T atomicExch(T* p, T v) {
  const T old = *p;
  *p = v;
  return old;
}
template <class T> T atomicMax(T* p, T v) {
  const T old = *p;
  if (old < v) *p = v;
  return old;
}
template <class T> T atomicMin(T* p, T v) {
  const T old = *p;
  if (v < old) *p = v;
  return old;
}
inline void __threadfence() {}
inline void __threadfence_block() {}

// ---- entry points: the driver passes a launch's kernelParams (one pointer per argument) ----
namespace kiln_emu {
template <class... A, size_t... I> void invoke(void (*f)(A...), void** p, std::index_sequence<I...>) {
  f(*static_cast<std::remove_cv_t<std::remove_reference_t<A>>*>(p[I])...);
}
template <class... A> void invoke(void (*f)(A...), void** p) { invoke(f, p, std::index_sequence_for<A...>{}); }
// Each parameter's size, for a launch a stream capture records (its arguments copied by size).
template <class... A> void param_sizes(void (*)(A...), size_t* sizes, size_t* count) {
  *count = sizeof...(A);
  if (sizeof...(A) > kMaxParams) return;  // the driver refuses the capture
  size_t i = 0;
  ((sizes[i++] = sizeof(std::remove_cv_t<std::remove_reference_t<A>>)), ...);
}
}  // namespace kiln_emu
