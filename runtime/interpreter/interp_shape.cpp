// kiln/runtime/interpreter/interp_shape.cpp — reference data movement prims: cat and constant_pad.
//
// Both build a fresh contiguous output and copy input elements into a region of it through
// the inputs' strides (any strides, zero strides included). Inputs of cat share one dtype
// (the shape function checks it), so elements move as raw bytes. As in PyTorch, cat skips
// legacy empty inputs (1-D with zero elements) when the other inputs have another rank.
// constant_pad's `pad` holds (before, after) pairs starting from the last dim; a negative
// amount crops that side.

#include "base/error.h"
#include "runtime/interpreter/interp_kernels.h"
#include "runtime/interpreter/strided_loop.h"

#include <algorithm>
#include <cstring>

namespace kiln::rt::interp {

namespace {

// Copies a `sizes` block of same-dtype elements between two strided layouts.
void copy_block(char* dst, IntArrayRef dst_strides, const char* src, IntArrayRef src_strides, IntArrayRef sizes,
                size_t elsize) {
  for_each_element<2>(sizes, {dst_strides.data(), src_strides.data()}, [&](const std::array<int64_t, 2>& o) {
    std::memcpy(dst + o[0] * static_cast<int64_t>(elsize), src + o[1] * static_cast<int64_t>(elsize), elsize);
  });
}

bool is_legacy_empty(const Tensor& t) { return t.impl()->sizes().size() == 1 && t.impl()->sizes()[0] == 0; }

Tensor cat(const std::vector<Tensor>& inputs, int64_t dim) {
  if (inputs.empty()) internal_fail("cat of no tensors reached the interpreter");
  // The tensor whose shape the output follows: the first one that is not a legacy empty.
  const Tensor* ref = &inputs[0];
  for (const Tensor& t : inputs)
    if (!is_legacy_empty(t)) {
      ref = &t;
      break;
    }
  const IntArrayRef ref_sizes = ref->impl()->sizes();
  const int64_t rank = static_cast<int64_t>(ref_sizes.size());
  if (dim < 0 || dim >= rank) internal_fail("cat dim {} out of range for rank {}", dim, rank);
  const size_t du = static_cast<size_t>(dim);
  auto skipped = [&](const Tensor& t) { return rank != 1 && is_legacy_empty(t); };

  std::vector<int64_t> out_sizes = ref_sizes.vec();
  out_sizes[du] = 0;
  for (const Tensor& t : inputs) {
    if (skipped(t)) continue;
    if (t.dtype() != ref->dtype()) internal_fail("cat inputs of different dtypes reached the interpreter");
    const IntArrayRef sizes = t.impl()->sizes();
    if (sizes.size() != ref_sizes.size()) internal_fail("cat inputs of different ranks reached the interpreter");
    for (size_t d = 0; d < sizes.size(); ++d)
      if (d != du && sizes[d] != ref_sizes[d]) internal_fail("cat inputs differ in size outside dim {}", dim);
    out_sizes[du] += t.impl()->sizes()[du];
  }
  Tensor out = empty_contiguous(out_sizes, ref->dtype());
  const std::vector<int64_t> out_strides = contiguous_strides(out_sizes);
  const size_t elsize = element_size(ref->dtype());
  char* base = static_cast<char*>(out.impl()->data());
  int64_t at = 0;  // position along `dim` where the next input goes
  for (const Tensor& t : inputs) {
    if (skipped(t)) continue;
    const IntArrayRef sizes = t.impl()->sizes();
    if (t.numel() > 0)
      copy_block(base + at * out_strides[du] * static_cast<int64_t>(elsize), out_strides,
                 static_cast<const char*>(t.impl()->data()), t.impl()->strides(), sizes, elsize);
    at += sizes[du];
  }
  return out;
}

Tensor constant_pad(const Tensor& a, const std::vector<int64_t>& pad, const Scalar& value) {
  const IntArrayRef sizes = a.impl()->sizes();
  const size_t rank = sizes.size();
  if (pad.size() % 2 != 0 || pad.size() > 2 * rank) internal_fail("constant_pad: bad pad length {}", pad.size());
  std::vector<int64_t> before(rank, 0), after(rank, 0);
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    before[rank - 1 - i] = pad[2 * i];
    after[rank - 1 - i] = pad[2 * i + 1];
  }
  std::vector<int64_t> out_sizes(rank);
  for (size_t d = 0; d < rank; ++d) {
    out_sizes[d] = sizes[d] + before[d] + after[d];
    if (out_sizes[d] < 0)
      fail("constant_pad",
           "The input size {}, plus negative padding {} and {} resulted in a negative output size, which is invalid. "
           "Check dimension {} of your input.",
           sizes[d], before[d], after[d], d);
  }
  Tensor out = empty_contiguous(out_sizes, a.dtype());
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T fill = value.to<T>();
    T* p = static_cast<T*>(out.impl()->data());
    for (int64_t i = 0, n = out.numel(); i < n; ++i) p[i] = fill;
  });
  // The kept region: per dim, skip what a negative `before` crops, drop what `after` crops.
  const std::vector<int64_t> out_strides = contiguous_strides(out_sizes);
  const IntArrayRef strides = a.impl()->strides();
  const size_t elsize = element_size(a.dtype());
  std::vector<int64_t> block(rank);
  int64_t src_off = 0, dst_off = 0;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t src_start = std::max<int64_t>(0, -before[d]);
    const int64_t dst_start = std::max<int64_t>(0, before[d]);
    block[d] = sizes[d] - src_start - std::max<int64_t>(0, -after[d]);
    if (block[d] <= 0) return out;  // everything cropped: only the fill remains
    src_off += src_start * strides[d];
    dst_off += dst_start * out_strides[d];
  }
  const int64_t es = static_cast<int64_t>(elsize);
  copy_block(static_cast<char*>(out.impl()->data()) + dst_off * es, out_strides,
             static_cast<const char*>(a.impl()->data()) + src_off * es, strides, block, elsize);
  return out;
}

}  // namespace

Tensor shape(ir::ShapeOp op, const std::vector<Tensor>& inputs, const ir::AttrList& attrs) {
  switch (op) {
    case ir::ShapeOp::cat: return cat(inputs, attrs.get<int64_t>(ir::OpKind::cat, "dim"));
    case ir::ShapeOp::constant_pad:
      if (inputs.size() != 1) internal_fail("constant_pad takes one tensor, got {}", inputs.size());
      return constant_pad(inputs[0], attrs.get<std::vector<int64_t>>(ir::OpKind::constant_pad, "pad"),
                          attrs.get<Scalar>(ir::OpKind::constant_pad, "value"));
  }
  internal_fail("bad ShapeOp {}", static_cast<int>(op));
}

}  // namespace kiln::rt::interp
