// kiln/runtime/cpu/onednn_conv.cpp — libkiln_onednn: oneDNN's convolution, weight-gradient and
// SGEMM kernels behind runtime/cpu/onednn.h, the only file that includes oneDNN's headers.
//
// Built as a library of its own, which links libkiln and oneDNN, and opened by libkiln the
// first time a kernel needs it (onednn.h says why). The primitives are created with format
// `any` so that oneDNN picks its blocked layouts; the user's strided tensors are reordered in
// and out. Primitives are cached by everything that shapes them (dims, strides, dtype,
// attributes and the thread count), so a warm call only executes.
#include "runtime/cpu/onednn.h"

#include "base/error.h"
#include "base/tensor_impl.h"
#include "frontend/ops_factory.h"
#include "runtime/cpu/parallel_gemm.h"
#include "runtime/thread_pool.h"

#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace kiln::rt {

namespace {

using dnnl::memory;

memory::dims dims_of(IntArrayRef v) { return memory::dims(v.begin(), v.end()); }

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

// A created primitive and the layouts it wants, for one shape of the problem.
struct OneDnnConv {
  dnnl::primitive prim;
  memory::desc src, weights, dst;  // what the primitive reads and writes
  memory::desc user_src, user_weights, user_dst, bias;
  bool has_bias;
};

// The weight as oneDNN sees it: [G, OC/G, IC/G, *k] (no G dim when groups == 1), over the
// strides of PyTorch's [OC, IC/G, *k] (transposed: [IC, OC/G, *k]).
memory::desc weight_desc(const Tensor& w, const ConvArgs& a) {
  const auto& s = w.impl()->sizes();
  const auto& st = w.impl()->strides();
  const int64_t g = a.groups;
  memory::dims dims, strides;
  if (g > 1) {
    dims.push_back(g);
    strides.push_back(s[0] / g * st[0]);
  }
  if (a.transposed) {  // [IC, OC/G, k]: o is dim 1, i is dim 0
    dims.push_back(s[1]);
    strides.push_back(st[1]);
    dims.push_back(s[0] / g);
    strides.push_back(st[0]);
  } else {
    dims.push_back(s[0] / g);
    strides.push_back(st[0]);
    dims.push_back(s[1]);
    strides.push_back(st[1]);
  }
  for (size_t d = 2; d < s.size(); ++d) {
    dims.push_back(s[d]);
    strides.push_back(st[d]);
  }
  return memory::desc(dims, memory::data_type::f32, strides);
}

memory::desc strided_desc(const Tensor& t) {
  return memory::desc(dims_of(t.impl()->sizes()), memory::data_type::f32, dims_of(t.impl()->strides()));
}

// A primitive is created for a thread count (oneDNN sizes its scratchpad by it), so the count is
// part of the key: after set_num_threads() a convolution gets a primitive of its own.
std::string cache_key(const Tensor& x, const Tensor& w, const Tensor* bias, const Tensor& y, const ConvArgs& a) {
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", num_threads(), fmt::join(x.impl()->sizes(), ","),
                     fmt::join(x.impl()->strides(), ","), fmt::join(w.impl()->sizes(), ","),
                     fmt::join(w.impl()->strides(), ","), bias ? bias->impl()->strides()[0] : -1,
                     fmt::join(y.impl()->sizes(), ","), fmt::join(y.impl()->strides(), ","), fmt::join(a.stride, ","),
                     fmt::join(a.padding, ","), fmt::join(a.dilation, ","), fmt::join(a.output_padding, ","),
                     a.transposed, a.groups);
}

std::shared_ptr<const OneDnnConv> make_primitive(const Tensor& x, const Tensor& w, const Tensor* bias, const Tensor& y,
                                                 const ConvArgs& a) {
  auto c = std::make_shared<OneDnnConv>();
  c->user_src = strided_desc(x);
  c->user_dst = strided_desc(y);
  c->user_weights = weight_desc(w, a);
  c->has_bias = bias != nullptr;
  if (bias) c->bias = strided_desc(*bias);
  const memory::desc any_src(c->user_src.dims(), memory::data_type::f32, memory::format_tag::any);
  const memory::desc any_dst(c->user_dst.dims(), memory::data_type::f32, memory::format_tag::any);
  const memory::desc any_w(c->user_weights.dims(), memory::data_type::f32, memory::format_tag::any);
  memory::dims strides = dims_of(a.stride), dilates, pad_l = dims_of(a.padding), pad_r = dims_of(a.padding);
  for (int64_t d : a.dilation) dilates.push_back(d - 1);  // oneDNN counts the holes
  for (size_t i = 0; i < pad_r.size(); ++i) pad_r[i] -= a.output_padding[i];  // >= 0: the caller splits otherwise
  const auto fwd = dnnl::prop_kind::forward_inference;
  if (a.transposed) {
    auto d = bias ? dnnl::deconvolution_forward::desc(fwd, dnnl::algorithm::deconvolution_direct, any_src, any_w,
                                                      c->bias, any_dst, strides, dilates, pad_l, pad_r)
                  : dnnl::deconvolution_forward::desc(fwd, dnnl::algorithm::deconvolution_direct, any_src, any_w,
                                                      any_dst, strides, dilates, pad_l, pad_r);
    dnnl::deconvolution_forward::primitive_desc pd(d, engine());
    c->src = pd.src_desc();
    c->weights = pd.weights_desc();
    c->dst = pd.dst_desc();
    c->prim = dnnl::deconvolution_forward(pd);
  } else {
    auto d = bias ? dnnl::convolution_forward::desc(fwd, dnnl::algorithm::convolution_direct, any_src, any_w, c->bias,
                                                    any_dst, strides, dilates, pad_l, pad_r)
                  : dnnl::convolution_forward::desc(fwd, dnnl::algorithm::convolution_direct, any_src, any_w, any_dst,
                                                    strides, dilates, pad_l, pad_r);
    dnnl::convolution_forward::primitive_desc pd(d, engine());
    c->src = pd.src_desc();
    c->weights = pd.weights_desc();
    c->dst = pd.dst_desc();
    c->prim = dnnl::convolution_forward(pd);
  }
  return c;
}

// The primitive cached under `key` (every shape and attribute that shapes it), made by `make`
// on a miss. One cache per primitive type T.
template <typename T, typename Make>
std::shared_ptr<const T> cached_primitive(const std::string& key, const Make& make) {
  static std::mutex mu;
  static auto* cache = new std::unordered_map<std::string, std::shared_ptr<const T>>();
  {
    std::lock_guard lock(mu);
    auto it = cache->find(key);
    if (it != cache->end()) return it->second;
  }
  std::shared_ptr<const T> c = make();
  std::lock_guard lock(mu);
  if (cache->size() > 256) cache->clear();  // shapes churn: start again rather than grow without bound
  return cache->emplace(key, c).first->second;
}

std::shared_ptr<const OneDnnConv> primitive_for(const Tensor& x, const Tensor& w, const Tensor* bias, const Tensor& y,
                                                const ConvArgs& a) {
  return cached_primitive<OneDnnConv>(cache_key(x, w, bias, y, a), [&] { return make_primitive(x, w, bias, y, a); });
}

// oneDNN memory of layout `d` over a block of kiln's caching allocator, kept alive by `hold`:
// oneDNN's own allocation would map a large block afresh, and page fault it, on every call.
memory cached_memory(const memory::desc& d, std::vector<Tensor>& hold) {
  hold.push_back(empty({static_cast<int64_t>((d.get_size() + sizeof(float) - 1) / sizeof(float))}, TensorOptions(kFloat)));
  return memory(d, engine(), hold.back().data_ptr());
}

// Reads `user` into the layout `want` (a copy only when they differ).
memory in_layout(dnnl::stream& s, const memory::desc& want, const memory::desc& user_desc, void* data,
                 std::vector<Tensor>& hold) {
  memory user(user_desc, engine(), data);
  if (want == user_desc) return user;
  memory m = cached_memory(want, hold);
  dnnl::reorder(user, m).execute(s, user, m);
  return m;
}

void onednn_conv(const Tensor& x, const Tensor& w, const Tensor* bias, const Tensor& y, const ConvArgs& a) {
  const LibraryTeam team(num_threads());  // created and run on kiln's thread count
  const std::shared_ptr<const OneDnnConv> c = primitive_for(x, w, bias, y, a);
  dnnl::stream s(engine());
  std::vector<Tensor> hold;
  memory src = in_layout(s, c->src, c->user_src, x.data_ptr(), hold);
  memory wei = in_layout(s, c->weights, c->user_weights, w.data_ptr(), hold);
  memory user_dst(c->user_dst, engine(), y.data_ptr());
  memory dst = c->dst == c->user_dst ? user_dst : cached_memory(c->dst, hold);
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}};
  if (bias) args.emplace(DNNL_ARG_BIAS, memory(c->bias, engine(), bias->data_ptr()));
  c->prim.execute(s, args);
  if (!(c->dst == c->user_dst)) dnnl::reorder(dst, user_dst).execute(s, dst, user_dst);
  s.wait();
}

// ---- the weight's gradient (convolution_backward_weight), oneDNN (f32) ---------------------------

// The weight's gradient of a convolution from `src` to `dst` (for a transposed convolution:
// from its output gradient back to its input), as oneDNN's backward-weights primitive.
struct OneDnnWeightGrad {
  dnnl::primitive prim;
  memory::desc src, diff_dst, diff_weights;  // what the primitive reads and writes
  memory::desc user_src, user_diff_dst, user_diff_weights;
};

std::shared_ptr<const OneDnnWeightGrad> make_weight_grad(const Tensor& src, const Tensor& diff_dst, const Tensor& dw,
                                                         const ConvArgs& a) {
  auto c = std::make_shared<OneDnnWeightGrad>();
  c->user_src = strided_desc(src);
  c->user_diff_dst = strided_desc(diff_dst);
  c->user_diff_weights = weight_desc(dw, a);
  const memory::desc any_src(c->user_src.dims(), memory::data_type::f32, memory::format_tag::any);
  const memory::desc any_dst(c->user_diff_dst.dims(), memory::data_type::f32, memory::format_tag::any);
  const memory::desc any_w(c->user_diff_weights.dims(), memory::data_type::f32, memory::format_tag::any);
  memory::dims strides = dims_of(a.stride), dilates, pad = dims_of(a.padding);
  for (int64_t d : a.dilation) dilates.push_back(d - 1);
  const auto alg = dnnl::algorithm::convolution_direct;
  // oneDNN's backward primitives are created with the forward one as a hint.
  dnnl::convolution_forward::primitive_desc hint(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, alg, any_src, any_w, any_dst, strides, dilates,
                                      pad, pad),
      engine());
  dnnl::convolution_backward_weights::primitive_desc pd(
      dnnl::convolution_backward_weights::desc(alg, any_src, any_w, any_dst, strides, dilates, pad, pad), engine(), hint);
  c->src = pd.src_desc();
  c->diff_dst = pd.diff_dst_desc();
  c->diff_weights = pd.diff_weights_desc();
  c->prim = dnnl::convolution_backward_weights(pd);
  return c;
}

std::shared_ptr<const OneDnnWeightGrad> weight_grad_for(const Tensor& src, const Tensor& diff_dst, const Tensor& dw,
                                                        const ConvArgs& a) {
  return cached_primitive<OneDnnWeightGrad>(cache_key(src, dw, nullptr, diff_dst, a),
                                            [&] { return make_weight_grad(src, diff_dst, dw, a); });
}

void onednn_weight_grad(const Tensor& src, const Tensor& diff_dst, const Tensor& dw, const ConvArgs& a) {
  const LibraryTeam team(num_threads());
  const std::shared_ptr<const OneDnnWeightGrad> c = weight_grad_for(src, diff_dst, dw, a);
  dnnl::stream s(engine());
  std::vector<Tensor> hold;
  memory src_m = in_layout(s, c->src, c->user_src, src.data_ptr(), hold);
  memory dst_m = in_layout(s, c->diff_dst, c->user_diff_dst, diff_dst.data_ptr(), hold);
  memory user_dw(c->user_diff_weights, engine(), dw.data_ptr());
  memory dw_m = c->diff_weights == c->user_diff_weights ? user_dw : cached_memory(c->diff_weights, hold);
  c->prim.execute(s, {{DNNL_ARG_SRC, src_m}, {DNNL_ARG_DIFF_DST, dst_m}, {DNNL_ARG_DIFF_WEIGHTS, dw_m}});
  if (!(c->diff_weights == c->user_diff_weights)) dnnl::reorder(dw_m, user_dw).execute(s, dw_m, user_dw);
  s.wait();
}

int sgemm(char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
          int64_t ldb, float beta, float* c, int64_t ldc) {
  const dnnl_status_t st = dnnl_sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  return st == dnnl_success ? 0 : static_cast<int>(st);
}

}  // namespace

}  // namespace kiln::rt

extern "C" const kiln::rt::OneDnn* kiln_onednn_entry() {
  static const kiln::rt::OneDnn table{kiln::rt::onednn_conv, kiln::rt::onednn_weight_grad, kiln::rt::sgemm};
  return &table;
}
