// kiln/runtime/cuda/cuda_matmul.cpp — mm/bmm operands described to cuBLASLt (strides, batch, workspace, stream).
#include "runtime/cuda/cuda_matmul.h"

#include "base/tensor_impl.h"
#include "codegen_cuda/cublaslt.h"
#include "codegen_cuda/driver.h"
#include "runtime/config.h"
#include "runtime/cuda/cuda_device.h"


namespace kiln::rt {

namespace {

// Whether dims (r, c) of `t` are a matrix cuBLASLt can read in place: row-major (unit column
// stride, rows at least a row apart) or transposed (unit row stride, columns at least a
// column apart). An expanded operand (a zero stride) is neither and goes to the host.
bool lt_layout(const TensorImpl& t, size_t r, size_t c) {
  const int64_t rows = t.sizes()[r], cols = t.sizes()[c], rs = t.strides()[r], cs = t.strides()[c];
  const bool row_major = (cols == 1 || cs == 1) && (rows == 1 || rs >= cols);
  const bool col_major = (rows == 1 || rs == 1) && (cols == 1 || cs >= rows);
  return row_major || col_major;
}

}  // namespace

bool cuda_matmul(ir::OpKind op, const Tensor& a, const Tensor& b, const Tensor& out) {
  const bool batched = op == ir::OpKind::bmm;
  cuda::LtMatmul p;
  switch (a.dtype()) {
    case ScalarType::Float: p.dtype = cuda::LtDtype::F32; break;
    case ScalarType::Half: p.dtype = cuda::LtDtype::F16; break;
    case ScalarType::BFloat16: p.dtype = cuda::LtDtype::BF16; break;
    default: return false;  // f64 and integers: the host
  }
  const TensorImpl& ai = *a.impl();
  const TensorImpl& bi = *b.impl();
  const int device = out.device().index;
  void* stream = cuda::current_stream(device).handle();
  const size_t o = batched ? 1 : 0;
  p.batch = batched ? ai.sizes()[0] : 1;
  p.m = ai.sizes()[o];
  p.k = ai.sizes()[o + 1];
  p.n = bi.sizes()[o + 1];
  if (p.m == 0 || p.n == 0 || p.batch == 0) return true;
  if (p.k == 0) {  // an empty sum: zeros
    cuda::memset_d8(device, out.impl()->data(), 0, static_cast<size_t>(out.numel()) * element_size(out.dtype()), stream);
    return true;
  }
  if (!lt_layout(ai, o, o + 1) || !lt_layout(bi, o, o + 1)) return false;
  p.a = ai.data();
  p.a_rs = ai.strides()[o];
  p.a_cs = ai.strides()[o + 1];
  p.b = bi.data();
  p.b_rs = bi.strides()[o];
  p.b_cs = bi.strides()[o + 1];
  if (batched) {
    p.a_bs = ai.sizes()[0] == 1 ? 0 : ai.strides()[0];
    p.b_bs = bi.sizes()[0] == 1 ? 0 : bi.strides()[0];
    if (p.a_bs < 0 || p.b_bs < 0) return false;
    p.c_bs = p.m * p.n;
  }
  p.c = out.impl()->data();
  p.allow_tf32 = config().allow_tf32;
  p.device = device;
  p.stream = stream;
  constexpr size_t kWorkspace = size_t{32} << 20;
  const Storage ws = make_intrusive<StorageImpl>(kWorkspace, out.device());
  p.workspace = ws->data();
  p.workspace_bytes = kWorkspace;
  cuda::use_device(device);
  cuda::cublaslt_matmul(p);
  return true;  // the workspace goes back to this stream's free list: later work on it is ordered after
}

}  // namespace kiln::rt
