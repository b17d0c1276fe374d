// kiln/runtime/cpu/extern_shape.cpp — cat of many inputs as a library copy.
//
// A cat of a few inputs is computed inline where it is read, and one of up to a few hundred
// by generated copy kernels (ir/fusion.h's Concat group); past that (the cpu backend's
// choice) LLVM would spend about a millisecond on each input's copy loop, so the library
// copies each input into its slice of the output instead: linear in the inputs, no code
// generated. Inputs the cat skips (empty along `dim`, or legacy empty 1-D ones) are skipped.
#include "runtime/cpu/extern_kernels.h"

#include "base/tensor_impl.h"
#include "runtime/interpreter/interp_kernels.h"
#include "runtime/thread_pool.h"

#include <vector>

namespace kiln::rt {

void extern_cat(ir::OpKind op, const std::vector<Tensor>& ins, const ir::AttrList& attrs, const Tensor& out) {
  const int64_t dim = attrs.get<int64_t>(op, "dim");
  struct Piece {
    const Tensor* in;
    int64_t offset;
  };
  std::vector<Piece> pieces;
  int64_t offset = 0;
  for (const Tensor& t : ins) {
    if (t.dim() != out.dim() || t.size(dim) == 0) continue;
    pieces.push_back({&t, offset});
    offset += t.size(dim);
  }
  const int64_t per_piece = pieces.empty() ? 1 : out.numel() / static_cast<int64_t>(pieces.size()) + 1;
  parallel_for(static_cast<int64_t>(pieces.size()), std::max<int64_t>(1, (int64_t{1} << 14) / per_piece),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t i = lo; i < hi; ++i) {
                   const Piece& p = pieces[static_cast<size_t>(i)];
                   interp::copy_into(out.narrow(dim, p.offset, p.in->size(dim)), *p.in);
                 }
               });
}

}  // namespace kiln::rt
