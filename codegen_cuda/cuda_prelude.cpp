// kiln/codegen_cuda/cuda_prelude.cpp — the device helpers every generated CUDA kernel starts with.
//
// Generated kernels are plain CUDA C++ compiled by NVRTC, which has no <cstdint>: the prelude
// defines the fixed-width types, then the small __device__ helpers the scalar-op renderer
// (cuda_scalar.cpp) and the kernel emitter (cuda_emitter.cpp) call by name. They implement
// the interpreter's semantics (runtime/interp_*.cpp): integers wrap around (arithmetic goes
// through unsigned 64-bit), Python floor division and remainder, PyTorch's integer pow and
// shifts, NaN-propagating maximum/minimum/clamp, x86-like float -> int conversion; and the
// block reduction (warp shuffles, then one partial per warp in shared memory, combined by
// warp 0 in a fixed order). A failing Check (ir/kernel.h) records a fault for the host
// (kiln_fault_at, ir/kernel_abi.h) and passes on a safe value.
// cuda_fp16.h / cuda_bf16.h are included only by kernels that touch f16 / bf16.
#include "codegen_cuda/cuda_scalar.h"

namespace kiln::cuda::detail {

namespace {

constexpr const char* kTypes = R"(// ---- kiln device prelude ------------------------------------------------------------
typedef signed char kiln_i8;
typedef unsigned char kiln_u8;
typedef short kiln_i16;
typedef int kiln_i32;
typedef long long kiln_i64;
typedef unsigned long long kiln_u64;
#define KILN_D static __device__ __forceinline__
// Generated code leaves helpers and values unused, and instantiates sign tests for unsigned types.
#pragma nv_diag_suppress 177  // declared but never referenced
#pragma nv_diag_suppress 186  // pointless comparison of unsigned integer with zero
)";

constexpr const char* kHelpers = R"(
// Index math: Python floor division and modulo (the divisor is never 0 in index expressions).
KILN_D kiln_i64 kiln_floordiv(kiln_i64 a, kiln_i64 b) {
  const kiln_i64 q = a / b, r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
}
KILN_D kiln_i64 kiln_mod(kiln_i64 a, kiln_i64 b) {
  const kiln_i64 r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
KILN_D kiln_i64 kiln_imin(kiln_i64 a, kiln_i64 b) { return a < b ? a : b; }
// The same in 32 bits, for kernels whose index values all fit (ir::KLaunch::index32).
KILN_D int kiln_floordiv32(int a, int b) {
  const int q = a / b, r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
}
KILN_D int kiln_mod32(int a, int b) {
  const int r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
KILN_D int kiln_imin32(int a, int b) { return a < b ? a : b; }
KILN_D int kiln_imax32(int a, int b) { return a < b ? b : a; }
// Checks (ir/kernel.h): the first failure of the launch claims the record (ir/kernel_abi.h:
// site, value, bound, and the kernel's id for the host), later ones leave it alone.
KILN_D void kiln_fault_at(kiln_i64* f, kiln_i64 kernel, kiln_i64 site, kiln_i64 value, kiln_i64 bound) {
  if (atomicCAS(reinterpret_cast<kiln_u64*>(f), 0ull, (kiln_u64)site) == 0ull) {
    f[1] = value;
    f[2] = bound;
    f[3] = kernel;
  }
}
template <class T> KILN_D T kiln_check_nonzero(T x, kiln_i64* f, kiln_i64 kernel, kiln_i64 site) {
  if (x == T(0)) {
    kiln_fault_at(f, kernel, site, 0, 0);
    return T(1);
  }
  return x;
}
template <class T> KILN_D T kiln_check_bounds(T x, kiln_i64 bound, kiln_i64* f, kiln_i64 kernel, kiln_i64 site) {
  const kiln_i64 w = (kiln_i64)x;
  if (w < 0 || w >= bound) {
    kiln_fault_at(f, kernel, site, w, bound);
    return T(0);
  }
  return x;
}
KILN_D kiln_i64 kiln_imax(kiln_i64 a, kiln_i64 b) { return a < b ? b : a; }

// Float classification by bits (no dependence on the math headers' macros).
KILN_D float kiln_inf(float) { return __int_as_float(0x7f800000); }
KILN_D double kiln_inf(double) { return __longlong_as_double(0x7ff0000000000000LL); }
KILN_D float kiln_qnan(float) { return __int_as_float(0x7fc00000); }
KILN_D double kiln_qnan(double) { return __longlong_as_double(0x7ff8000000000000LL); }
template <class T> KILN_D T kiln_qnan(T) { return T(0); }
template <class T> KILN_D bool kiln_isnan(T) { return false; }
KILN_D bool kiln_isnan(float x) { return x != x; }
KILN_D bool kiln_isnan(double x) { return x != x; }
KILN_D bool kiln_isinf(float x) { return fabsf(x) == kiln_inf(x); }
KILN_D bool kiln_isinf(double x) { return fabs(x) == kiln_inf(x); }
KILN_D bool kiln_isfinite(float x) { return fabsf(x) < kiln_inf(x); }
KILN_D bool kiln_isfinite(double x) { return fabs(x) < kiln_inf(x); }
KILN_D bool kiln_signbit(float x) { return __float_as_int(x) < 0; }
KILN_D bool kiln_signbit(double x) { return __double_as_longlong(x) < 0; }

// Wrapping integer arithmetic (bool: add is or, mul is and); floats are plain IEEE.
template <class T> KILN_D T kiln_wadd(T a, T b) { return (T)((kiln_u64)a + (kiln_u64)b); }
template <class T> KILN_D T kiln_wsub(T a, T b) { return (T)((kiln_u64)a - (kiln_u64)b); }
template <class T> KILN_D T kiln_wmul(T a, T b) { return (T)((kiln_u64)a * (kiln_u64)b); }
template <class T> KILN_D T kiln_wneg(T a) { return (T)(0ULL - (kiln_u64)a); }
KILN_D float kiln_wadd(float a, float b) { return a + b; }
KILN_D double kiln_wadd(double a, double b) { return a + b; }
KILN_D bool kiln_wadd(bool a, bool b) { return a || b; }
KILN_D float kiln_wmul(float a, float b) { return a * b; }
KILN_D double kiln_wmul(double a, double b) { return a * b; }
KILN_D bool kiln_wmul(bool a, bool b) { return a && b; }
template <class T> KILN_D bool kiln_is_signed() { return (T)(-1) < (T)0; }
template <class T> KILN_D bool kiln_negative(T a) { return kiln_is_signed<T>() && a < (T)0; }
template <class T> KILN_D T kiln_iabs(T a) { return kiln_negative(a) ? kiln_wneg(a) : a; }

// Integer division: truncating (INT_MIN / -1 wraps), floor (Python //), remainders.
template <class T> KILN_D T kiln_div_trunc(T a, T b) {
  if (b == (T)0) return (T)0;
  if (kiln_is_signed<T>() && b == (T)(-1)) return kiln_wneg(a);
  return (T)(a / b);
}
template <class T> KILN_D T kiln_rem_trunc(T a, T b) {
  if (b == (T)0) return (T)0;
  if (kiln_is_signed<T>() && b == (T)(-1)) return (T)0;
  return (T)(a % b);
}
template <class T> KILN_D T kiln_div_floor(T a, T b) {
  const T q = kiln_div_trunc(a, b), r = kiln_rem_trunc(a, b);
  return (r != (T)0 && kiln_negative(a) != kiln_negative(b)) ? kiln_wsub(q, (T)1) : q;
}
template <class T> KILN_D T kiln_remainder(T a, T b) {
  T r = kiln_rem_trunc(a, b);
  if (r != (T)0 && kiln_negative(r) != kiln_negative(b)) r = kiln_wadd(r, b);
  return r;
}
// CPython's float_floor_div (as PyTorch): exact-ish quotient, corrected, rounded.
#define KILN_FLOAT_DIVMOD(T, FMOD, FLOOR, COPYSIGN)                       \
  KILN_D T kiln_div_floor(T a, T b) {                                     \
    if (b == (T)0) return a / b;                                          \
    const T m = FMOD(a, b);                                               \
    T d = (a - m) / b;                                                    \
    if (m != (T)0 && ((b < (T)0) != (m < (T)0))) d -= (T)1;               \
    if (d == (T)0) return COPYSIGN((T)0, a / b);                          \
    T f = FLOOR(d);                                                       \
    if (d - f > (T)0.5) f += (T)1;                                        \
    return f;                                                             \
  }                                                                       \
  KILN_D T kiln_remainder(T a, T b) {                                     \
    T m = FMOD(a, b);                                                     \
    if (m != (T)0 && ((b < (T)0) != (m < (T)0))) m += b;                  \
    return m;                                                             \
  }
KILN_FLOAT_DIVMOD(float, fmodf, floorf, copysignf)
KILN_FLOAT_DIVMOD(double, fmod, floor, copysign)

// Integer pow by squaring; negative exponents: 1 for base 1, +-1 for base -1, else 0.
template <class T> KILN_D T kiln_ipow(T a, T b) {
  if (kiln_negative(b)) {
    if (a == (T)1) return (T)1;
    if (kiln_is_signed<T>() && a == (T)(-1)) return (b % (T)2 != (T)0) ? (T)(-1) : (T)1;
    return (T)0;
  }
  T r = (T)1;
  for (kiln_u64 e = (kiln_u64)b; e != 0; e >>= 1) {
    if (e & 1u) r = kiln_wmul(r, a);
    a = kiln_wmul(a, a);
  }
  return r;
}

// Shifts (S: the signed type of T's width): out-of-range amounts shift every bit out.
template <class T, class S> KILN_D T kiln_shl(T a, T b) {
  const S s = (S)b;
  if (s < 0 || (int)s >= (int)(sizeof(T) * 8)) return (T)0;
  return (T)((kiln_u64)a << (int)s);
}
template <class T, class S> KILN_D T kiln_shr(T a, T b) {
  const S s = (S)b;
  const int max_shift = (int)(sizeof(T) * 8) - (kiln_is_signed<T>() ? 1 : 0);
  if (s < 0 || (int)s >= max_shift) return kiln_negative(a) ? (T)(-1) : (T)0;
  return (T)(a >> (int)s);
}

// maximum/minimum/clamp: NaN wins; otherwise std::max/std::min (ties keep the first operand).
template <class T> KILN_D T kiln_maximum(T a, T b) {
  if (kiln_isnan(a) || kiln_isnan(b)) return kiln_qnan(a);
  return (a < b) ? b : a;
}
template <class T> KILN_D T kiln_minimum(T a, T b) {
  if (kiln_isnan(a) || kiln_isnan(b)) return kiln_qnan(a);
  return (b < a) ? b : a;
}
template <class T> KILN_D T kiln_clamp(T x, T lo, T hi) {
  if (kiln_isnan(lo) || kiln_isnan(hi)) return kiln_qnan(x);
  const T m = (x < lo) ? lo : x;
  return (hi < m) ? hi : m;
}
template <class T> KILN_D T kiln_sign(T x) { return (T)((int)((T)0 < x) - (int)(x < (T)0)); }

// Floating -> integer as PyTorch's x86 build: int64 and uint8 through int64 (NaN and
// out-of-range give INT64_MIN), int32, int16 and int8 through int32 (INT32_MIN).
KILN_D kiln_i64 kiln_f2i(double d) {
  return (d >= -9223372036854775808.0 && d < 9223372036854775808.0) ? (kiln_i64)d
                                                                     : (kiln_i64)0x8000000000000000ULL;
}
KILN_D int kiln_f2i32(double d) { return (d >= -2147483648.0 && d < 2147483648.0) ? (int)d : (int)0x80000000U; }

// ---- reductions --------------------------------------------------------------------------
template <class T> struct KilnArg { T v; kiln_i64 i; };  // i < 0: no element yet
// The lanes of a vectorized pointwise kernel, moved as one aligned access of up to 16 bytes.
template <class T, int N> struct alignas(sizeof(T) * N) KilnVec { T v[N]; };
struct KilnSum { template <class T> __device__ T operator()(T a, T b) const { return kiln_wadd(a, b); } };
struct KilnProd { template <class T> __device__ T operator()(T a, T b) const { return kiln_wmul(a, b); } };
struct KilnMax {  // NaN wins and sticks
  template <class T> __device__ T operator()(T a, T b) const {
    if (kiln_isnan(a)) return a;
    if (kiln_isnan(b)) return b;
    return (a < b) ? b : a;
  }
};
struct KilnMin {
  template <class T> __device__ T operator()(T a, T b) const {
    if (kiln_isnan(a)) return a;
    if (kiln_isnan(b)) return b;
    return (b < a) ? b : a;
  }
};
struct KilnAny { __device__ bool operator()(bool a, bool b) const { return a || b; } };
struct KilnAll { __device__ bool operator()(bool a, bool b) const { return a && b; } };
// argmax/argmin (PyTorch): a NaN is the extreme; among equal values the first index wins.
template <bool IsMax> struct KilnArgExt {
  template <class T> __device__ KilnArg<T> operator()(KilnArg<T> a, KilnArg<T> b) const {
    if (b.i < 0) return a;
    if (a.i < 0) return b;
    const bool an = kiln_isnan(a.v), bn = kiln_isnan(b.v);
    if (an || bn) return (an && bn) ? (a.i <= b.i ? a : b) : (an ? a : b);
    if (a.v == b.v) return a.i <= b.i ? a : b;
    return (IsMax ? (b.v > a.v) : (b.v < a.v)) ? b : a;
  }
};
typedef KilnArgExt<true> KilnArgMax;
typedef KilnArgExt<false> KilnArgMin;
// The online softmax (ir::KStage::sum_exp): a row's max m and the sum s of exp(x - m), in one
// pass. Each term's exp is computed in T, as a separate sum stage computes it; the rescaling
// exp(m_old - m_new) in the sum's type A. While the max is -inf, s counts the -inf values, so
// that a nonempty row of them ends with a NaN sum, as exp(-inf - (-inf)) gives in two passes;
// a +inf max makes the sum NaN (exp(inf - inf)); a NaN makes both NaN.
template <class T, class A> struct KilnMaxExp { T m; A s; };
KILN_D float kiln_exp_of(float x) { return expf(x); }
KILN_D double kiln_exp_of(double x) { return exp(x); }
template <class T, class A> KILN_D KilnMaxExp<T, A> kiln_max_exp_add(KilnMaxExp<T, A> a, T x) {
  KilnMaxExp<T, A> r = a;
  if (x > a.m) {
    r.m = x;
    r.s = x == kiln_inf(x) ? kiln_qnan(a.s) : a.s * kiln_exp_of((A)a.m - (A)x) + (A)1;
  } else if (x <= a.m) {
    r.s = a.m == -kiln_inf(x) ? a.s + (A)1 : a.s + (A)kiln_exp_of((T)(x - a.m));
  } else {  // x or the max is NaN
    r.m = kiln_isnan(a.m) ? a.m : x;
    r.s = kiln_qnan(a.s);
  }
  return r;
}
struct KilnMaxExpJoin {
  template <class T, class A> __device__ KilnMaxExp<T, A> operator()(KilnMaxExp<T, A> a, KilnMaxExp<T, A> b) const {
    KilnMaxExp<T, A> r;
    if (kiln_isnan(a.m) || kiln_isnan(b.m)) {
      r.m = kiln_isnan(a.m) ? a.m : b.m;
      r.s = kiln_qnan(a.s);
      return r;
    }
    r.m = a.m < b.m ? b.m : a.m;
    if (r.m == -kiln_inf(r.m)) r.s = a.s + b.s;  // counts of -inf values
    else if (r.m == kiln_inf(r.m)) r.s = kiln_qnan(a.s);
    else r.s = a.s * kiln_exp_of((A)a.m - (A)r.m) + b.s * kiln_exp_of((A)b.m - (A)r.m);
    return r;
  }
};
template <class T, class A> KILN_D A kiln_max_exp_sum(KilnMaxExp<T, A> a) {
  return a.m == -kiln_inf(a.m) && a.s > (A)0 ? kiln_qnan(a.s) : a.s;
}

KILN_D int kiln_shfl(int v, int o) { return __shfl_down_sync(0xffffffffu, v, o); }
KILN_D unsigned kiln_shfl(unsigned v, int o) { return __shfl_down_sync(0xffffffffu, v, o); }
KILN_D kiln_i64 kiln_shfl(kiln_i64 v, int o) { return __shfl_down_sync(0xffffffffu, v, o); }
KILN_D kiln_u64 kiln_shfl(kiln_u64 v, int o) { return __shfl_down_sync(0xffffffffu, v, o); }
KILN_D float kiln_shfl(float v, int o) { return __shfl_down_sync(0xffffffffu, v, o); }
KILN_D double kiln_shfl(double v, int o) { return __shfl_down_sync(0xffffffffu, v, o); }
KILN_D bool kiln_shfl(bool v, int o) { return __shfl_down_sync(0xffffffffu, (int)v, o) != 0; }
KILN_D kiln_i8 kiln_shfl(kiln_i8 v, int o) { return (kiln_i8)__shfl_down_sync(0xffffffffu, (int)v, o); }
KILN_D kiln_u8 kiln_shfl(kiln_u8 v, int o) { return (kiln_u8)__shfl_down_sync(0xffffffffu, (int)v, o); }
KILN_D kiln_i16 kiln_shfl(kiln_i16 v, int o) { return (kiln_i16)__shfl_down_sync(0xffffffffu, (int)v, o); }
template <class T> KILN_D KilnArg<T> kiln_shfl(KilnArg<T> a, int o) {
  a.v = kiln_shfl(a.v, o);
  a.i = kiln_shfl(a.i, o);
  return a;
}
template <class T, class A> KILN_D KilnMaxExp<T, A> kiln_shfl(KilnMaxExp<T, A> a, int o) {
  a.m = kiln_shfl(a.m, o);
  a.s = kiln_shfl(a.s, o);
  return a;
}

// Random draws (ir::KOp::Random): Philox4x32-10 and the element formulas of
// frontend/ops_random.h, the cpu's stream bit for bit. The double steps are explicitly
// rounded (__dmul_rn, __dadd_rn) so that NVRTC never contracts them into an FMA; only log and
// cos (normal) are CUDA's, within 1-2 ulp of glibc's, which a rounding to f32 almost always hides.
struct KilnWords { unsigned int w[4]; };
KILN_D KilnWords kiln_philox(kiln_i64 index, kiln_i64 seed, kiln_i64 offset) {
  unsigned int c0 = (unsigned int)index, c1 = (unsigned int)((kiln_u64)index >> 32);
  unsigned int c2 = (unsigned int)offset, c3 = (unsigned int)((kiln_u64)offset >> 32);
  unsigned int k0 = (unsigned int)seed, k1 = (unsigned int)((kiln_u64)seed >> 32);
  for (int r = 0; r < 10; ++r) {
    if (r > 0) { k0 += 0x9E3779B9u; k1 += 0xBB67AE85u; }
    const unsigned int hi0 = __umulhi(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
    const unsigned int hi1 = __umulhi(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
    c0 = hi1 ^ c1 ^ k0; c1 = lo1; c2 = hi0 ^ c3 ^ k1; c3 = lo0;
  }
  KilnWords out = {{c0, c1, c2, c3}};
  return out;
}
KILN_D kiln_u64 kiln_bits53(unsigned int hi, unsigned int lo) { return (((kiln_u64)hi << 32) | lo) >> 11; }
// uniform before rounding: low + span * u, u from 53 bits (f64) or 24 bits (other dtypes).
KILN_D double kiln_uniform_value(kiln_i64 i, kiln_i64 seed, kiln_i64 off, double low, double span, bool f64) {
  const KilnWords w = kiln_philox(i, seed, off);
  const double u = f64 ? __dmul_rn((double)kiln_bits53(w.w[0], w.w[1]), 1.0 / 9007199254740992.0)
                       : (double)__fmul_rn((float)(w.w[0] >> 8), 1.0f / 16777216.0f);
  return __dadd_rn(low, __dmul_rn(span, u));
}
// normal before rounding: mean + std * sqrt(-2 log u1) cos(2 pi u2).
KILN_D double kiln_normal_value(kiln_i64 i, kiln_i64 seed, kiln_i64 off, double mean, double std) {
  const KilnWords w = kiln_philox(i, seed, off);
  const double u1 = __dmul_rn((double)(kiln_bits53(w.w[0], w.w[1]) + 1), 1.0 / 9007199254740992.0);
  const double u2 = __dmul_rn((double)kiln_bits53(w.w[2], w.w[3]), 1.0 / 9007199254740992.0);
  const double n = __dmul_rn(__dsqrt_rn(__dmul_rn(-2.0, log(u1))), cos(__dmul_rn(6.283185307179586, u2)));
  return __dadd_rn(mean, __dmul_rn(std, n));
}
// The next IEEE pattern below `bits` (a value rounded up to uniform's high goes one step down).
template <class U> KILN_D U kiln_next_down(U bits, U sign) {
  return (bits & (U)~sign) == 0 ? (U)(sign | 1) : (bits & sign) ? (U)(bits + 1) : (U)(bits - 1);
}
KILN_D double kiln_uniform_f64(kiln_i64 i, kiln_i64 seed, kiln_i64 off, double low, double span, double high) {
  const double r = kiln_uniform_value(i, seed, off, low, span, true);
  return high > low && r >= high ? __longlong_as_double((long long)kiln_next_down((kiln_u64)__double_as_longlong(r), 1ULL << 63)) : r;
}
KILN_D float kiln_uniform_f32(kiln_i64 i, kiln_i64 seed, kiln_i64 off, double low, double span, double high) {
  const float r = __double2float_rn(kiln_uniform_value(i, seed, off, low, span, false));
  return high > low && (double)r >= high ? __uint_as_float(kiln_next_down(__float_as_uint(r), 0x80000000u)) : r;
}

// Combines one value per thread; every thread gets the result. blockDim.x must be a multiple
// of 32 (at most 1024). The order is fixed for a given blockDim, so results are deterministic.
template <class T, class F> static __device__ T kiln_block_reduce(T v, F f, T identity) {
  __shared__ T part[33];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
  for (int o = 16; o > 0; o >>= 1) v = f(v, kiln_shfl(v, o));
  __syncthreads();  // earlier users of `part` are done
  if (lane == 0) part[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < nwarps ? part[lane] : identity;
    for (int o = 16; o > 0; o >>= 1) v = f(v, kiln_shfl(v, o));
    if (lane == 0) part[32] = v;
  }
  __syncthreads();
  return part[32];
}
// ---- end of prelude -----------------------------------------------------------------------
)";

// uniform draws of f16 and bf16 (as float values), with the headers that define them.
constexpr const char* kHalfRandom = R"(KILN_D float kiln_uniform_f16(kiln_i64 i, kiln_i64 seed, kiln_i64 off, double low, double span, double high) {
  __half r = __float2half_rn(__double2float_rn(kiln_uniform_value(i, seed, off, low, span, false)));
  if (high > low && (double)__half2float(r) >= high) r = __ushort_as_half(kiln_next_down(__half_as_ushort(r), (unsigned short)0x8000));
  return __half2float(r);
}
)";
constexpr const char* kBFloat16Random = R"(KILN_D float kiln_uniform_bf16(kiln_i64 i, kiln_i64 seed, kiln_i64 off, double low, double span, double high) {
  __nv_bfloat16 r = __float2bfloat16_rn(__double2float_rn(kiln_uniform_value(i, seed, off, low, span, false)));
  if (high > low && (double)__bfloat162float(r) >= high)
    r = __ushort_as_bfloat16(kiln_next_down(__bfloat16_as_ushort(r), (unsigned short)0x8000));
  return __bfloat162float(r);
}
)";

}  // namespace

std::string prelude(bool half, bool bfloat16) {
  std::string s = kTypes;
  if (half) s += "#include <cuda_fp16.h>\n";
  if (bfloat16) s += "#include <cuda_bf16.h>\n";
  s += kHelpers;
  if (half) s += kHalfRandom;
  if (bfloat16) s += kBFloat16Random;
  return s;
}

}  // namespace kiln::cuda::detail
