// kiln/frontend/ops_view.h — view operations: new sizes/strides/offset over the same storage.
//
// View metadata is computed here once (ViewMeta) and used both by eager views and by the
// interpreter's view prims, so the two cannot drift apart. Arguments are validated with
// errors naming the op: "[view] shape [3, 5] is invalid for input of size 12".
#pragma once

#include "base/storage.h"

#include "frontend/tensor.h"

#include <optional>
#include <vector>

namespace kiln {

struct ViewMeta {
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  int64_t offset = 0;
};

// Normalizes a possibly negative dim against `rank` (rank 0 accepts -1 and 0 when
// allow_scalar); throws "[op] Dimension out of range (expected to be in range of [-2, 1], but got 5)".
int64_t normalize_dim(std::string_view op, int64_t dim, int64_t rank, bool allow_scalar = true);
// checked_numel (base/storage.h): the element count of a shape; "[op] the number of elements
// of a tensor of shape [..] overflows int64" when the running product (left to right, as
// TensorImpl checks it) leaves int64, and PyTorch's error for a negative size.
// Checks that a view (size, stride, offset) of elements of `itemsize` bytes reaches only the
// first `available_bytes` bytes of its storage (nothing when it has no elements): PyTorch's
// setStorage / computeStorageNbytes errors, "[as_strided] ...", with the arithmetic
// overflow-checked. Arguments must already be checked non-negative and of equal lengths.
void check_as_strided_bounds(IntArrayRef size, IntArrayRef stride, int64_t offset, int64_t itemsize,
                             int64_t available_bytes);
// Sizes after resolving one -1 entry against numel; throws for invalid shapes.
std::vector<int64_t> infer_size(std::string_view op, IntArrayRef shape, int64_t numel);
// Strides for viewing (sizes, strides) as `new_sizes`, or nullopt when the strides cannot
// express it (torch's computeStride).
std::optional<std::vector<int64_t>> compute_view_strides(IntArrayRef sizes, IntArrayRef strides, IntArrayRef new_sizes);
// Broadcast shape of two shapes (NumPy rules); throws "[op] The size of tensor a (3) must
// match the size of tensor b (4) at non-singleton dimension 1".
std::vector<int64_t> broadcast_shapes(std::string_view op, IntArrayRef a, IntArrayRef b);

// Metadata of each view prim applied to (sizes, strides, offset); arguments already normalized.
namespace view_meta {
ViewMeta reshape_view(const ViewMeta& in, IntArrayRef size);  // throws when not viewable
ViewMeta expand(const ViewMeta& in, IntArrayRef size);
ViewMeta permute(const ViewMeta& in, IntArrayRef dims);
ViewMeta slice(const ViewMeta& in, int64_t dim, int64_t start, int64_t end, int64_t step);
ViewMeta squeeze(const ViewMeta& in, IntArrayRef dims);
ViewMeta unsqueeze(const ViewMeta& in, int64_t dim);
ViewMeta diagonal(const ViewMeta& in, int64_t offset, int64_t dim1, int64_t dim2);
}  // namespace view_meta

// Free-function forms of the view methods (torch::transpose(x, 0, 1), ...).
Tensor view(const Tensor& self, IntArrayRef size);
Tensor reshape(const Tensor& self, IntArrayRef size);
Tensor permute(const Tensor& self, IntArrayRef dims);
Tensor transpose(const Tensor& self, int64_t d0, int64_t d1);
Tensor t(const Tensor& self);
Tensor movedim(const Tensor& self, int64_t src, int64_t dst);
Tensor expand(const Tensor& self, IntArrayRef size);
Tensor squeeze(const Tensor& self);
Tensor squeeze(const Tensor& self, int64_t dim);
Tensor unsqueeze(const Tensor& self, int64_t dim);
Tensor flatten(const Tensor& self, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor unflatten(const Tensor& self, int64_t dim, IntArrayRef sizes);
Tensor slice(const Tensor& self, int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
             std::optional<int64_t> end = std::nullopt, int64_t step = 1);
Tensor select(const Tensor& self, int64_t dim, int64_t index);
Tensor narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length);
Tensor diagonal(const Tensor& self, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);
// Eagerly PyTorch's as_strided: offset and strides address the underlying storage, the
// offset defaulting to self's. A traced tensor has no storage: the recorded prim addresses
// the row-major elements of its input value, with the offset defaulting to 0.
Tensor as_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride, std::optional<int64_t> storage_offset = std::nullopt);
// at::alias: a new tensor viewing the same elements with the same sizes and strides.
Tensor alias(const Tensor& self);
std::vector<Tensor> split(const Tensor& self, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> split_with_sizes(const Tensor& self, IntArrayRef split_sizes, int64_t dim = 0);
std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim = 0);
std::vector<Tensor> unbind(const Tensor& self, int64_t dim = 0);
std::vector<Tensor> broadcast_tensors(const std::vector<Tensor>& tensors);

// Views spelled through other views (frontend/ops_view_aliases.cpp). swapaxes, swapdims:
// transpose. moveaxis: movedim; with lists, each source dim goes to its destination and the
// others keep their order. tensor_split: `sections` pieces (the first size % sections one
// longer), or the pieces between `indices` (negative from the end, clamped; a piece may be empty).
Tensor swapaxes(const Tensor& self, int64_t axis0, int64_t axis1);
Tensor swapdims(const Tensor& self, int64_t dim0, int64_t dim1);
Tensor moveaxis(const Tensor& self, int64_t source, int64_t destination);
Tensor movedim(const Tensor& self, IntArrayRef source, IntArrayRef destination);
Tensor moveaxis(const Tensor& self, IntArrayRef source, IntArrayRef destination);
std::vector<Tensor> tensor_split(const Tensor& self, int64_t sections, int64_t dim = 0);
std::vector<Tensor> tensor_split(const Tensor& self, IntArrayRef indices, int64_t dim = 0);
// ravel: reshape(-1); broadcast_to: expand.
Tensor ravel(const Tensor& self);
Tensor broadcast_to(const Tensor& self, IntArrayRef size);
// NumPy's splits, tensor_split along dim 1 (dim 0 of a 1-D tensor), 0 and 2: a section count
// must divide the size (checked with PyTorch's wording), indices as tensor_split's.
std::vector<Tensor> hsplit(const Tensor& self, int64_t sections);
std::vector<Tensor> hsplit(const Tensor& self, IntArrayRef indices);
std::vector<Tensor> vsplit(const Tensor& self, int64_t sections);
std::vector<Tensor> vsplit(const Tensor& self, IntArrayRef indices);
std::vector<Tensor> dsplit(const Tensor& self, int64_t sections);
std::vector<Tensor> dsplit(const Tensor& self, IntArrayRef indices);
// At least 1, 2 or 3 dims, as NumPy adds them: a 0-dim tensor becomes [1], [1, 1], [1, 1, 1];
// a 1-D [n] becomes [1, n] and [1, n, 1]; a 2-D [m, n] becomes [m, n, 1]; views.
Tensor atleast_1d(const Tensor& self);
Tensor atleast_2d(const Tensor& self);
Tensor atleast_3d(const Tensor& self);
std::vector<Tensor> atleast_1d(const std::vector<Tensor>& tensors);
std::vector<Tensor> atleast_2d(const std::vector<Tensor>& tensors);
std::vector<Tensor> atleast_3d(const std::vector<Tensor>& tensors);

}  // namespace kiln
