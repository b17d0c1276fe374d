// kiln/runtime/interpreter/interp_conv.cpp — the reference convolution (aten.convolution semantics): the
// direct loops of runtime/interpreter/conv_loops.h over contiguous copies of the operands.
#include "base/error.h"
#include "runtime/interpreter/conv_loops.h"
#include "runtime/interpreter/interp_kernels.h"

#include <type_traits>
#include <vector>

namespace kiln::rt::interp {

Tensor conv(ir::ConvOp op, const std::vector<Tensor>& inputs, const ir::AttrList& attrs) {
  switch (op) {
    case ir::ConvOp::convolution: break;
    case ir::ConvOp::convolution_backward:  // Core ops: the interpreter runs their decompositions
    case ir::ConvOp::convolution_backward_weight:
      internal_fail("interp: a convolution backward node reached the reference kernels (it runs its decomposition)");
  }
  if (inputs.size() < 2 || inputs.size() > 3) internal_fail("convolution takes 2 or 3 tensors, got {}", inputs.size());
  const Tensor x = inputs[0].contiguous(), w = inputs[1].contiguous();
  const Tensor bias = inputs.size() > 2 ? inputs[2].contiguous() : Tensor();
  std::vector<int64_t> out_sizes;
  const ConvParams p = conv_params(x.sizes().vec(), w.sizes().vec(), attrs, &out_sizes);
  Tensor y = empty_contiguous(out_sizes, x.dtype());
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      conv_loops<T>(p, static_cast<const T*>(x.impl()->data()), static_cast<const T*>(w.impl()->data()),
                    bias.defined() ? static_cast<const T*>(bias.impl()->data()) : nullptr,
                    static_cast<T*>(y.impl()->data()));
    } else {
      internal_fail("convolution of {} reached the interpreter", dtype_name(x.dtype()));
    }
  });
  return y;
}

}  // namespace kiln::rt::interp
