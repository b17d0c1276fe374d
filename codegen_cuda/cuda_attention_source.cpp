// kiln/codegen_cuda/cuda_attention_source.cpp — the fused attention kernel's text (cuda_attention_source.h).
#include "codegen_cuda/cuda_attention_source.h"

#include "base/error.h"

#include <fmt/format.h>

#include <algorithm>

namespace kiln::cuda {

namespace {

const char* const kKernel =
#include "codegen_cuda/attention_kernels.cuh"
    ;
const char* const kBackwardKernels =
#include "codegen_cuda/attention_backward_kernels.cuh"
    ;

int64_t padded16(int64_t d) { return (d + 15) / 16 * 16; }

}  // namespace

bool attention_kernel_fits(ScalarType dtype, int64_t e, int64_t ev) {
  return (dtype == ScalarType::Half || dtype == ScalarType::BFloat16) && e >= 1 && e <= kMaxAttentionHeadDim &&
         ev >= 1 && ev <= kMaxAttentionHeadDim;
}

int64_t attention_key_tile(int64_t e, int64_t ev) { return padded16(e) > 64 || padded16(ev) > 64 ? 32 : 64; }

int64_t attention_backward_query_tile(int64_t e, int64_t ev) { return attention_key_tile(e, ev); }

int64_t attention_splits(int64_t blocks, int64_t key_tiles, int sms) {
  if (blocks <= 0 || sms <= 0 || blocks >= sms) return 1;
  const int64_t want = (2 * int64_t{sms} + blocks - 1) / blocks;
  const int64_t splits = std::min({want, key_tiles / 2, kMaxAttentionSplits});
  return splits >= 2 ? splits : 1;
}

std::string AttentionModule::str() const {
  return fmt::format("{} {} {}{}", dtype_short_name(dtype), e, ev, backward ? " backward" : "");
}

std::optional<AttentionModule> AttentionModule::parse(std::string_view s) {
  constexpr std::string_view kBackward = " backward";
  const bool backward = s.size() > kBackward.size() && s.substr(s.size() - kBackward.size()) == kBackward;
  if (backward) s.remove_suffix(kBackward.size());
  const size_t a = s.find(' '), b = a == std::string_view::npos ? a : s.find(' ', a + 1);
  if (b == std::string_view::npos) return std::nullopt;
  AttentionModule m;
  const std::optional<ScalarType> dt = dtype_from_short_name(s.substr(0, a));
  auto number = [](std::string_view t, int64_t& out) {
    if (t.empty() || t.size() > 4) return false;
    out = 0;
    for (char c : t) {
      if (c < '0' || c > '9') return false;
      out = out * 10 + (c - '0');
    }
    return true;
  };
  if (!dt || !number(s.substr(a + 1, b - a - 1), m.e) || !number(s.substr(b + 1), m.ev)) return std::nullopt;
  m.dtype = *dt;
  m.backward = backward;
  if (!attention_kernel_fits(m.dtype, m.e, m.ev)) return std::nullopt;
  return m;
}

std::string attention_source(const AttentionModule& m) {
  const auto [dtype, e, ev, backward] = m;
  if (!attention_kernel_fits(dtype, e, ev))
    internal_fail("attention_source: no kernel for {} with head dims {} and {}", dtype_name(dtype), e, ev);
  const bool half = dtype == ScalarType::Half;
  std::string s = backward ? "// kiln's fused attention backward (codegen_cuda/attention_backward_kernels.cuh)\n"
                           : "// kiln's fused attention (codegen_cuda/attention_kernels.cuh)\n";
  if (half)
    s += "#include <cuda_fp16.h>\ntypedef __half KT;\n"
         "#define KILN_TO_F(x) __half2float(x)\n#define KILN_FROM_F(x) __float2half_rn(x)\n"
         "#define KILN_BITS(x) __half_as_ushort(x)\n#define KILN_FROM_BITS(x) __ushort_as_half(x)\n"
         "#define KILN_MMA \"f16\"\n";
  else
    s += "#include <cuda_bf16.h>\ntypedef __nv_bfloat16 KT;\n"
         "#define KILN_TO_F(x) __bfloat162float(x)\n#define KILN_FROM_F(x) __float2bfloat16_rn(x)\n"
         "#define KILN_BITS(x) __bfloat16_as_ushort(x)\n#define KILN_FROM_BITS(x) __ushort_as_bfloat16(x)\n"
         "#define KILN_MMA \"bf16\"\n";
  s += fmt::format("#define KILN_D {}\n#define KILN_DV {}\n", e, ev);
  if (!backward) return s + kKernel;
  return s + "#define KILN_LSE_ONLY 1\n" + kKernel + kBackwardKernels;
}

}  // namespace kiln::cuda
