// kiln/frontend/ops_view_aliases.cpp — libtorch's views spelled through other views
// (frontend/ops_view.h): swapaxes and swapdims (transpose), moveaxis and movedim with dim lists
// (permute), tensor_split (narrow) and NumPy's hsplit, vsplit and dsplit over it, ravel
// (reshape), broadcast_to (expand), and atleast_1d/2d/3d (reshape, unsqueeze).
//
// Checks and wording are PyTorch 2.15's (measured): movedim refuses a repeated dim and lists of
// different lengths; tensor_split takes a section count (the first size % sections pieces one
// longer) or split indices, each piece from one index to the next as a slice takes them
// (negative from the end, clamped into the dim; [5:3] is empty). Sizes are read as integers (a
// symbolic size is pinned by a guard).
#include "base/error.h"
#include "frontend/ops_view.h"

#include <algorithm>
#include <vector>

namespace kiln {

Tensor swapaxes(const Tensor& self, int64_t axis0, int64_t axis1) { return transpose(self, axis0, axis1); }
Tensor swapdims(const Tensor& self, int64_t dim0, int64_t dim1) { return transpose(self, dim0, dim1); }
Tensor moveaxis(const Tensor& self, int64_t source, int64_t destination) { return movedim(self, source, destination); }

Tensor movedim(const Tensor& self, IntArrayRef source, IntArrayRef destination) {
  constexpr std::string_view op = "movedim";
  if (source.size() != destination.size())
    fail(op, "movedim: Invalid source or destination dims: source ({} dims) should contain the same number of dims as "
             "destination ({} dims)",
         shape_str(source), shape_str(destination));
  const int64_t n = self.dim();
  std::vector<int64_t> src, dst;
  for (int64_t d : source) src.push_back(normalize_dim(op, d, n));
  for (int64_t d : destination) dst.push_back(normalize_dim(op, d, n));
  auto repeated = [](std::vector<int64_t> v) {
    std::sort(v.begin(), v.end());
    return std::adjacent_find(v.begin(), v.end()) != v.end();
  };
  if (repeated(src)) fail(op, "movedim: repeated dim in `source` ({})", shape_str(source));
  if (repeated(dst)) fail(op, "movedim: repeated dim in `destination` ({})", shape_str(destination));
  if (n == 0) return alias(self);  // a 0-dim tensor: dim 0 (or -1) to itself
  // The moved dims take their destinations; the others fill the free places in their order.
  std::vector<int64_t> perm(static_cast<size_t>(n), -1);
  for (size_t i = 0; i < src.size(); ++i) perm[static_cast<size_t>(dst[i])] = src[i];
  std::vector<int64_t> rest;
  for (int64_t d = 0; d < n; ++d)
    if (std::find(src.begin(), src.end(), d) == src.end()) rest.push_back(d);
  auto next = rest.begin();
  for (int64_t& p : perm)
    if (p < 0) p = *next++;
  return permute(self, perm);
}

Tensor moveaxis(const Tensor& self, IntArrayRef source, IntArrayRef destination) {
  return movedim(self, source, destination);
}

std::vector<Tensor> tensor_split(const Tensor& self, int64_t sections, int64_t dim) {
  constexpr std::string_view op = "tensor_split";
  if (self.dim() == 0)
    fail(op, "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims");
  const int64_t d = normalize_dim(op, dim, self.dim());
  if (sections <= 0) fail(op, "number of sections must be larger than 0, got {}", sections);
  const int64_t size = self.size(d), base = size / sections, longer = size % sections;
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t i = 0; i < sections; ++i) {
    const int64_t length = base + (i < longer ? 1 : 0);
    out.push_back(narrow(self, d, start, length));
    start += length;
  }
  return out;
}

std::vector<Tensor> tensor_split(const Tensor& self, IntArrayRef indices, int64_t dim) {
  constexpr std::string_view op = "tensor_split";
  if (self.dim() == 0)
    fail(op, "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims");
  const int64_t d = normalize_dim(op, dim, self.dim());
  const int64_t size = self.size(d);
  auto place = [size](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + size : i, 0, size); };
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t index : indices) {
    const int64_t end = place(index);
    out.push_back(narrow(self, d, start, std::max<int64_t>(end - start, 0)));  // [5:3] is empty
    start = end;
  }
  out.push_back(narrow(self, d, start, size - start));
  return out;
}

Tensor ravel(const Tensor& self) { return reshape(self, {-1}); }
Tensor broadcast_to(const Tensor& self, IntArrayRef size) { return expand(self, size); }

namespace {

// torch.hsplit / vsplit / dsplit: at least `min_dim` dims, and a section count dividing the size.
int64_t numpy_split_dim(const char* op, const Tensor& self, int64_t min_dim, int64_t dim) {
  if (self.dim() < min_dim)
    fail(op, "torch.{} requires a tensor with at least {} dimension, but got a tensor with {} dimensions!", op, min_dim,
         self.dim());
  return dim;
}

std::vector<Tensor> numpy_split(const char* op, const Tensor& self, int64_t min_dim, int64_t dim, int64_t sections) {
  numpy_split_dim(op, self, min_dim, dim);
  const int64_t size = self.size(dim);
  if (sections == 0 || size % sections != 0)
    fail(op, "torch.{} attempted to split along dimension {}, but the size of the dimension {} is not divisible by the split_size {}!",
         op, dim, size, sections);
  return tensor_split(self, sections, dim);
}

}  // namespace

std::vector<Tensor> hsplit(const Tensor& self, int64_t sections) {
  return numpy_split("hsplit", self, 1, self.dim() == 1 ? 0 : 1, sections);
}
std::vector<Tensor> hsplit(const Tensor& self, IntArrayRef indices) {
  return tensor_split(self, indices, numpy_split_dim("hsplit", self, 1, self.dim() == 1 ? 0 : 1));
}
std::vector<Tensor> vsplit(const Tensor& self, int64_t sections) { return numpy_split("vsplit", self, 2, 0, sections); }
std::vector<Tensor> vsplit(const Tensor& self, IntArrayRef indices) {
  return tensor_split(self, indices, numpy_split_dim("vsplit", self, 2, 0));
}
std::vector<Tensor> dsplit(const Tensor& self, int64_t sections) { return numpy_split("dsplit", self, 3, 2, sections); }
std::vector<Tensor> dsplit(const Tensor& self, IntArrayRef indices) {
  return tensor_split(self, indices, numpy_split_dim("dsplit", self, 3, 2));
}

Tensor atleast_1d(const Tensor& self) { return self.dim() == 0 ? self.reshape({1}) : self; }

Tensor atleast_2d(const Tensor& self) {
  if (self.dim() == 0) return self.reshape({1, 1});
  return self.dim() == 1 ? self.unsqueeze(0) : self;
}

Tensor atleast_3d(const Tensor& self) {
  if (self.dim() == 0) return self.reshape({1, 1, 1});
  if (self.dim() == 1) return self.unsqueeze(0).unsqueeze(-1);
  return self.dim() == 2 ? self.unsqueeze(-1) : self;
}

namespace {
template <typename F> std::vector<Tensor> each(const std::vector<Tensor>& tensors, F f) {
  std::vector<Tensor> out;
  out.reserve(tensors.size());
  for (const Tensor& t : tensors) out.push_back(f(t));
  return out;
}
}  // namespace

std::vector<Tensor> atleast_1d(const std::vector<Tensor>& t) { return each(t, [](const Tensor& x) { return atleast_1d(x); }); }
std::vector<Tensor> atleast_2d(const std::vector<Tensor>& t) { return each(t, [](const Tensor& x) { return atleast_2d(x); }); }
std::vector<Tensor> atleast_3d(const std::vector<Tensor>& t) { return each(t, [](const Tensor& x) { return atleast_3d(x); }); }

}  // namespace kiln
