// kiln/runtime/cuda/cuda_eager.cpp — eager prims on cuda tensors that no generated kernel computes.
//
// runtime/eager/eager.cpp runs pointwise prims, casts, reductions, scans, random draws and
// factories on cuda tensors as generated kernels (full as a memset first: cuda_fill); it hands
// every other prim here (installed by runtime/wiring.cpp).
#include "runtime/cuda/cuda_eager.h"
#include "runtime/wiring.h"

#include "base/error.h"
#include "base/tensor_impl.h"
#include "codegen_cuda/driver.h"
#include "frontend/decompositions.h"
#include "frontend/ops_factory.h"
#include "frontend/ops_view.h"
#include "ir/shape_fns.h"
#include "runtime/cuda/cuda_attention.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/cuda_conv.h"
#include "runtime/cuda/cuda_sort.h"
#include "runtime/cuda/cuda_matmul.h"
#include "runtime/eager/eager.h"
#include "runtime/interpreter/interp_kernels.h"

#include <cstring>

namespace kiln::rt {

// A prim on cuda tensors that no generated kernel computes: mm/bmm through cuBLASLt, floating
// convolutions through cuDNN, argsort on kiln's sort kernels; views as
// metadata (a reshape or as_strided that must copy copies on the device first); anything else
// on the host — the inputs copied to the cpu (a factory's device attribute set to the cpu), the
// cpu's eager op, the results copied back — which is correct and slow (indexing the
// sizes keep out of a kernel, integer convolutions). Scans, random draws and the index
// prims' duck-sized programs are generated kernels (runtime/eager/eager.cpp).
std::vector<Tensor> cuda_eager(ir::OpKind op, const std::vector<Tensor>& inputs, const ir::AttrList& attrs,
                                     Device d) {
  const ir::OpInfo& info = ir::op_info(op);
  if (inputs.empty()) {  // a factory: the device must exist (an input on it proves it does)
    std::string why;
    if (!cuda::driver_available(&why))
      fail(info.name, "cannot create a tensor on {}: CUDA is not available: {}", d.str(), why);
    if (d.index >= cuda::driver_device_count())
      fail(info.name, "cannot create a tensor on {}: device index {} is out of range (this machine has {} CUDA device(s))",
           d.str(), d.index, cuda::driver_device_count());
  }
  if (info.family == ir::OpFamily::View) {
    std::vector<Tensor> in = inputs;
    const TensorImpl& t = *in.at(0).impl();
    const bool copies =
        (op == ir::OpKind::reshape &&
         !compute_view_strides(t.sizes(), t.strides(), ir::to_ints(attrs.get<std::vector<ir::Expr>>(op, "size")))) ||
        (op == ir::OpKind::as_strided && !t.is_contiguous());
    if (copies) in[0] = in[0].clone();
    return {interp::view(ir::as_view(op), in[0], attrs)};
  }
  if (op == ir::OpKind::mm || op == ir::OpKind::bmm) {
    std::vector<ir::TensorType> types;
    for (const Tensor& t : inputs) types.emplace_back(t.dtype(), ir::to_exprs(t.sizes().vec()), t.device());
    const Tensor r = empty(ir::to_ints(ir::infer_types(op, types, attrs).at(0).sizes),
                           TensorOptions(inputs[0].dtype()).device(d));
    if (cuda_matmul(op, inputs[0], inputs[1], r)) return {r};
  }
  if (op == ir::OpKind::convolution && cudnn_convolution_dtype(inputs.at(0).dtype())) {
    std::vector<ir::TensorType> types;
    for (const Tensor& t : inputs) types.emplace_back(t.dtype(), ir::to_exprs(t.sizes().vec()), t.device());
    const Tensor r = empty(ir::to_ints(ir::infer_types(op, types, attrs).at(0).sizes),
                           TensorOptions(inputs[0].dtype()).device(d));
    if (cuda_convolution(inputs, attrs, r)) return {r};
  }
  if (op == ir::OpKind::argsort) {
    const Tensor r = empty(inputs.at(0).sizes().vec(), TensorOptions(ScalarType::Int64).device(d));
    if (cuda_argsort(inputs[0], attrs.get<int64_t>(op, "dim"), attrs.get<bool>(op, "descending"), r)) return {r};
  }
  if (op == ir::OpKind::scaled_dot_product_attention) {  // f16 and bf16 on the fused kernel
    std::vector<ir::TensorType> types;
    for (const Tensor& t : inputs) types.emplace_back(t.dtype(), ir::to_exprs(t.sizes().vec()), t.device());
    const Tensor r = empty(ir::to_ints(ir::infer_types(op, types, attrs).at(0).sizes),
                           TensorOptions(inputs[0].dtype()).device(d));
    if (cuda_attention(inputs, attrs.get<bool>(op, "is_causal"), attrs.get<double>(op, "scale"), r)) return {r};
  }
  if (op == ir::OpKind::scaled_dot_product_attention_backward) {  // and its backward
    // dq, dk, dv: the query's, key's and value's last two dims under the output's batch dims.
    const Tensor &q = inputs.at(1), &k = inputs.at(2), &v = inputs.at(3), &out = inputs.at(4);
    std::vector<int64_t> batch(out.sizes().begin(), out.sizes().end() - 2);
    auto grad = [&](int64_t rows, int64_t cols) {
      std::vector<int64_t> s = batch;
      s.push_back(rows);
      s.push_back(cols);
      return empty(s, TensorOptions(q.dtype()).device(d));
    };
    const std::vector<Tensor> r{grad(q.size(-2), q.size(-1)), grad(k.size(-2), k.size(-1)), grad(k.size(-2), v.size(-1))};
    if (cuda_attention_backward(inputs, attrs.get<bool>(op, "is_causal"), attrs.get<double>(op, "scale"), r)) return r;
  }
  // An op above prim level that reaches here (attention, which the cpu records whole for its
  // library kernel) runs its decomposition, each op of it on the device, not on the host: an
  // eager [8, 16, 2048, 64] f16 attention took 409 ms staged through the host (H200).
  if (info.level != ir::OpLevel::Prim && info.family != ir::OpFamily::Custom && has_decomposition(op))
    return run_decomposition(op, inputs, attrs);
  std::vector<Tensor> host;
  for (const Tensor& t : inputs) host.push_back(t.to(Device()));
  ir::AttrList host_attrs = attrs;
  for (ir::AttrValue& v : host_attrs.values())
    if (std::holds_alternative<Device>(v)) v = Device();
  std::vector<Tensor> out = eager_execute(op, host, host_attrs);
  for (Tensor& t : out) t = t.to(d);
  return out;
}

FillPattern fill_pattern(const Scalar& value, ScalarType dtype) {
  unsigned char bytes[8] = {};
  const size_t es = element_size(dtype);
  dispatch_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    const T v = value.to<T>();
    static_assert(sizeof(T) <= sizeof(bytes));
    std::memcpy(bytes, &v, sizeof(T));
  });
  uint32_t lo = 0, hi = 0;
  std::memcpy(&lo, bytes, 4);
  std::memcpy(&hi, bytes + 4, 4);
  if (es == 8 && lo != hi) return FillPattern{8, lo, hi};
  return FillPattern{es >= 4 ? 4 : static_cast<int>(es), es >= 4 ? lo : es == 2 ? (lo & 0xffffu) : (lo & 0xffu), 0};
}

bool cuda_fill(const Tensor& out, const Scalar& value) {
  const FillPattern p = fill_pattern(value, out.dtype());
  const int device = out.device().index;
  const size_t bytes = static_cast<size_t>(out.numel()) * element_size(out.dtype());
  void* stream = cuda::current_stream(device).handle();
  void* data = out.impl()->data();
  if (p.width == 1) {
    cuda::memset_d8(device, data, static_cast<unsigned char>(p.bits), bytes, stream);
  } else if (p.width == 2) {
    cuda::memset_d16(device, data, static_cast<uint16_t>(p.bits), bytes / 2, stream);
  } else if (p.width == 4) {
    cuda::memset_d32(device, data, p.bits, bytes / 4, stream);
  } else {  // each 8-byte element's low half, then its high half
    cuda::memset_d2d32(device, data, 8, p.bits, 1, bytes / 8, stream);
    cuda::memset_d2d32(device, static_cast<char*>(data) + 4, 8, p.high, 1, bytes / 8, stream);
  }
  return true;
}

}  // namespace kiln::rt

namespace kiln::rt {

void wire_cuda_eager() {
  install_device_eager(&cuda_eager);
  install_device_fill(&cuda_fill);
}

}  // namespace kiln::rt
