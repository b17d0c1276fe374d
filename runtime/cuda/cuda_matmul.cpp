// kiln/runtime/cuda/cuda_matmul.cpp — mm, bmm and addmm_activation operands described to cuBLASLt (strides, batch, bias, epilogue, workspace, stream).
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
// column apart). An expanded operand (a zero stride) is neither: lt_readable copies it.
bool lt_layout(const TensorImpl& t, size_t r, size_t c) {
  const int64_t rows = t.sizes()[r], cols = t.sizes()[c], rs = t.strides()[r], cs = t.strides()[c];
  const bool row_major = (cols == 1 || cs == 1) && (rows == 1 || rs >= cols);
  const bool col_major = (rows == 1 || rs == 1) && (cols == 1 || cs >= rows);
  return row_major || col_major;
}

// cuBLASLt's dtype for t, or false.
bool lt_dtype(ScalarType t, cuda::LtDtype& d) {
  switch (t) {
    case ScalarType::Float: d = cuda::LtDtype::F32; return true;
    case ScalarType::Half: d = cuda::LtDtype::F16; return true;
    case ScalarType::BFloat16: d = cuda::LtDtype::BF16; return true;
    case ScalarType::Double: d = cuda::LtDtype::F64; return true;
    default: return false;  // integers: a generated kernel (compiled), or the host
  }
}

// The operands of a @ b (dims o, o + 1 the matrices; batched: dim 0 the batch) into p, whose
// sizes are set and positive; false when cuBLASLt cannot read them in place.
bool lt_operands(const TensorImpl& ai, const TensorImpl& bi, size_t o, cuda::LtMatmul& p) {
  if (!lt_layout(ai, o, o + 1) || !lt_layout(bi, o, o + 1)) return false;
  p.a = ai.data();
  p.a_rs = ai.strides()[o];
  p.a_cs = ai.strides()[o + 1];
  p.b = bi.data();
  p.b_rs = bi.strides()[o];
  p.b_cs = bi.strides()[o + 1];
  if (o == 1) {
    p.a_bs = ai.sizes()[0] == 1 ? 0 : ai.strides()[0];
    p.b_bs = bi.sizes()[0] == 1 ? 0 : bi.strides()[0];
    if (p.a_bs < 0 || p.b_bs < 0) return false;
    p.c_bs = p.m * p.n;
  }
  return true;
}

// `t`, or a contiguous copy of it made on its device when cuBLASLt cannot read its matrices
// (dims o, o + 1) in place: an expanded operand (a zero stride) or a negative batch stride. The
// copy's memory returns to the stream's free list after the call, ordered before later work.
Tensor lt_readable(const Tensor& t, size_t o) {
  const TensorImpl& i = *t.impl();
  const bool batch = o == 0 || i.sizes()[0] == 1 || i.strides()[0] >= 0;
  return batch && lt_layout(i, o, o + 1) ? t : t.contiguous();
}

// Runs p into out (contiguous) on its device's current stream, with a workspace from the
// caching allocator (it returns to this stream's free list: later work on it is ordered after).
void run_lt(cuda::LtMatmul& p, const Tensor& out) {
  const int device = out.device().index;
  p.c = out.impl()->data();
  p.allow_tf32 = config().allow_tf32;
  p.device = device;
  p.stream = cuda::current_stream(device).handle();
  constexpr size_t kWorkspace = size_t{32} << 20;
  const Storage ws = make_intrusive<StorageImpl>(kWorkspace, out.device());
  p.workspace = ws->data();
  p.workspace_bytes = kWorkspace;
  cuda::use_device(device);
  cuda::cublaslt_matmul(p);
}

}  // namespace

bool cuda_matmul(ir::OpKind op, const Tensor& a, const Tensor& b, const Tensor& out) {
  const bool batched = op == ir::OpKind::bmm;
  cuda::LtMatmul p;
  if (!lt_dtype(a.dtype(), p.dtype)) return false;
  const TensorImpl& ai = *a.impl();
  const TensorImpl& bi = *b.impl();
  const size_t o = batched ? 1 : 0;
  p.batch = batched ? ai.sizes()[0] : 1;
  p.m = ai.sizes()[o];
  p.k = ai.sizes()[o + 1];
  p.n = bi.sizes()[o + 1];
  if (p.m == 0 || p.n == 0 || p.batch == 0) return true;
  if (p.k == 0) {  // an empty sum: zeros
    const int device = out.device().index;
    cuda::memset_d8(device, out.impl()->data(), 0, static_cast<size_t>(out.numel()) * element_size(out.dtype()),
                    cuda::current_stream(device).handle());
    return true;
  }
  const Tensor ar = lt_readable(a, o), br = lt_readable(b, o);
  if (!lt_operands(*ar.impl(), *br.impl(), o, p)) return false;
  run_lt(p, out);
  return true;
}

bool cuda_addmm_activation(const Tensor& self, const Tensor& a, const Tensor& b, const std::string& act,
                           const Tensor& out) {
  cuda::LtMatmul p;
  if (!lt_dtype(a.dtype(), p.dtype) || p.dtype == cuda::LtDtype::F64 || self.dtype() != a.dtype()) return false;
  const TensorImpl& si = *self.impl();
  const TensorImpl& ai = *a.impl();
  const TensorImpl& bi = *b.impl();
  p.m = ai.sizes()[0];
  p.k = ai.sizes()[1];
  p.n = bi.sizes()[1];
  if (p.m == 0 || p.n == 0) return true;
  if (p.k == 0) return false;  // act(self): the parts
  // self is one bias row: [n] (what the fold gives), or [m, n] broadcast from one with strides [0, 1].
  const size_t r = si.sizes().size();
  if (r < 1 || r > 2 || si.sizes()[r - 1] != p.n || (p.n > 1 && si.strides()[r - 1] != 1)) return false;
  if (r == 2 && p.m > 1 && si.strides()[0] != 0) return false;
  const Tensor ar = lt_readable(a, 0), br = lt_readable(b, 0);
  if (!lt_operands(*ar.impl(), *br.impl(), 0, p)) return false;
  p.bias = si.data();
  // relu by parts: cuBLASLt's RELU epilogue gives 0 for a NaN, where the op gives NaN.
  if (act == "gelu_tanh") p.epilogue = cuda::LtEpilogue::GeluTanh;
  else if (act != "none") return false;
  run_lt(p, out);
  return true;
}

}  // namespace kiln::rt
