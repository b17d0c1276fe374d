// kiln/runtime/cpu/extern_random.cpp — the random prims (uniform, normal) as library calls.
//
// Element i of a call with (seed, offset) is uniform_element / normal_element of
// frontend/ops_random.h at counter i: a pure function of its index, so chunks of the output are
// drawn in parallel and the result equals the interpreter's, element for element, whatever
// the thread count. A compiled program passes each call a fresh (seed, offset) from the
// default generator (runtime/program.cpp), as the eager op draws.
#include "runtime/cpu/extern_kernels.h"

#include "base/error.h"
#include "base/tensor_impl.h"
#include "frontend/ops_random.h"
#include "runtime/thread_pool.h"

#include <type_traits>

namespace kiln::rt {

void extern_random(ir::OpKind op, const std::vector<Tensor>&, const ir::AttrList& attrs, const Tensor& out) {
  const bool uniform = ir::as_random(op) == ir::RandomOp::uniform;
  const double a = attrs.get<double>(op, uniform ? "low" : "mean"), b = attrs.get<double>(op, uniform ? "high" : "std");
  if (uniform && !(a <= b)) fail("uniform", "expects to return a [from, to) range, but found from={} > to={}", a, b);
  if (!uniform && !(b >= 0.0)) fail("normal", "expects std >= 0.0, but found std {}", b);
  const uint64_t seed = static_cast<uint64_t>(attrs.get<int64_t>(op, "seed"));
  const uint64_t offset = static_cast<uint64_t>(attrs.get<int64_t>(op, "offset"));
  const int64_t n = out.numel();
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      T* p = static_cast<T*>(out.data_ptr());
      parallel_for(n, 4096, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i)
          p[i] = uniform ? uniform_element<T>(a, b, seed, offset, static_cast<uint64_t>(i))
                         : normal_element<T>(a, b, seed, offset, static_cast<uint64_t>(i));
      });
    } else {
      fail(ir::op_name(op), "expected a floating point dtype, got {}", dtype_name(out.dtype()));
    }
    return 0;
  });
}

}  // namespace kiln::rt
