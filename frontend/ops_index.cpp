// kiln/frontend/ops_index.cpp — indexing conveniences over the prims: masked_fill, index_fill,
// one_hot, embedding, embedding_bag, take_along_dim, take and put; and the data-dependent
// selections nonzero, argwhere and masked_select.
//
// Each records existing prims (where, scatter, index_select, gather, views), as PyTorch's own
// decompositions of these ops do, after PyTorch's checks and with its wording. Index values are
// checked where the prims read them (gather / scatter / index_select raise for an index out of
// range, eagerly and compiled), so a bad class or token id is an error, never a wrong result.
// nonzero and masked_select size their result by the values: they run on eager tensors only
// (traced, they raise DataDependentError and a compiled function runs eagerly). They read the
// count of true elements, then scatter each one's flat position to its rank among them (the
// running count), with existing prims.
#include "base/error.h"
#include "frontend/arg_checks.h"
#include "frontend/decompositions_detail.h"
#include "frontend/dispatch.h"
#include "frontend/ops_factory.h"
#include "frontend/ops.h"
#include "frontend/ops_sort.h"
#include "frontend/symbolic.h"
#include "frontend/tracer.h"
#include "frontend/ops_view.h"
#include "ir/shape_env.h"

#include <vector>

namespace kiln {

namespace {

// masked_fill's checks in PyTorch's order: mask and self broadcast; a tensor value is 0-dim; the
// mask is bool; the value's number fits self's dtype (where it has one: a traced value does not).
void check_masked_fill(const Tensor& self, const Tensor& mask, const Tensor* value) {
  sym_broadcast_shapes("masked_fill", sym_sizes(mask), sym_sizes(self));
  if (value && value->dim() != 0)
    fail("masked_fill", "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {} dimension(s).",
         value->dim());
  if (mask.dtype() != ScalarType::Bool)
    fail("masked_fill", "masked_fill_ only supports boolean masks, but got mask with dtype {}", cpp_type_name(mask.dtype()));
}

Tensor masked_fill_impl(const Tensor& self, const Tensor& mask, const Tensor& value) {
  return where(mask, value.to(self.dtype()), self);
}

// The row-major flat positions (int64 [n]) of the true elements of the bool tensor `mask`.
Tensor true_positions(std::string_view op, const Tensor& mask) {
  if (mask.is_traced() || Tracer::current())
    fail_data_dependent(op, "the size of the result depends on the values of the input, which a traced function does "
                            "not have; compile() runs such a function eagerly");
  const TensorOptions i64 = TensorOptions(ScalarType::Int64).device(mask.device());
  const Tensor flat = mask.reshape({-1});
  const int64_t total = flat.size(0);
  const int64_t n = flat.sum().item<int64_t>();
  // The k-th true element goes to slot k; the false ones all go to a spare slot n.
  const Tensor rank = where(flat, cumsum(flat, 0) - 1, Scalar(n));
  return zeros({n + 1}, i64).scatter(0, rank, arange(total, i64)).narrow(0, 0, n);
}

}  // namespace

Tensor nonzero(const Tensor& self) {
  const Tensor flat = true_positions("nonzero", self.dtype() == ScalarType::Bool ? self : ne(self, 0));
  const int64_t n = flat.size(0);
  std::vector<Tensor> coords;
  const std::vector<int64_t> sizes = self.sizes().vec(), strides = contiguous_strides(sizes);
  for (size_t d = 0; d < sizes.size(); ++d) coords.push_back(remainder(div(flat, Scalar(strides[d]), "floor"), Scalar(sizes[d])));
  if (coords.empty()) return zeros({n, 0}, TensorOptions(ScalarType::Int64).device(self.device()));
  return stack(coords, 1);
}

Tensor argwhere(const Tensor& self) { return nonzero(self); }

Tensor masked_select(const Tensor& self, const Tensor& mask) {
  if (mask.dtype() != ScalarType::Bool)
    fail("masked_select", "masked_select: expected BoolTensor for mask");
  const std::vector<ir::Expr> shape = sym_broadcast_shapes("masked_select", sym_sizes(self), sym_sizes(mask));
  const Tensor positions = true_positions("masked_select", sym_expand(mask, shape));
  return sym_reshape(sym_expand(self, shape), {sym_product(shape)}).index_select(0, positions);
}

Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value) {
  check_masked_fill(self, mask, nullptr);
  check_scalar_fits("masked_fill", value, self.dtype());  // PyTorch: f16 1e10 overflows, uint8 -1 wraps
  return masked_fill_impl(self, mask, wrapped_number(value, self.dtype(), self.device()));
}

// PyTorch fills with value.item(), checked as a Scalar value is; a traced value converts as `to` does.
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value) {
  check_masked_fill(self, mask, &value);
  if (!value.is_traced()) check_scalar_fits("masked_fill", value.item(), self.dtype());
  return masked_fill_impl(self, mask, value);
}

Tensor one_hot(const Tensor& self, int64_t num_classes) {
  if (self.dtype() != ScalarType::Int64) fail("one_hot", "one_hot is only applicable to index tensor of type LongTensor.");
  if (num_classes < -1) fail("one_hot", "num_classes should be positive");
  if (num_classes == -1) {
    if (self.is_traced())
      fail_data_dependent("one_hot", "num_classes=-1 reads the largest class value, which a traced program does not have: pass num_classes");
    if (self.numel() == 0) fail("one_hot", "Can not infer total number of classes from empty tensor.");
    num_classes = max(self).item<int64_t>() + 1;
  }
  std::vector<ir::Expr> out = sym_sizes(self);
  out.push_back(ir::Expr(num_classes));
  // scatter raises for a class value outside [0, num_classes), as PyTorch's one_hot does.
  Tensor zeros_out = sym_full(out, 0, ScalarType::Int64, self.device());
  return scatter(zeros_out, -1, self.unsqueeze(-1), Scalar(int64_t{1}));
}

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool scale_grad_by_freq) {
  if (weight.defined() && weight.dim() == 2) {
    const std::optional<int64_t> rows = sym_size(weight, 0).maybe_const();
    if (padding_idx < -1 || (rows && padding_idx >= *rows))
      fail("embedding", "Padding_idx must be within num_embeddings (-1 for none): got padding_idx={} for a weight of {} rows",
           padding_idx, rows ? std::to_string(*rows) : sym_size(weight, 0).str());
  }
  return dispatch1(ir::OpKind::embedding, {weight, indices}, {padding_idx, scale_grad_by_freq});
}

Tensor embedding_dense_backward(const Tensor& grad_output, const Tensor& indices, int64_t num_weights,
                                int64_t padding_idx, bool scale_grad_by_freq) {
  return sym_embedding_dense_backward(grad_output, indices, ir::Expr(num_weights), padding_idx, scale_grad_by_freq);
}

Tensor sym_embedding_dense_backward(const Tensor& grad_output, const Tensor& indices, const ir::Expr& num_weights,
                                    int64_t padding_idx, bool scale_grad_by_freq) {
  constexpr std::string_view op = "embedding_dense_backward";
  if (indices.dtype() != ScalarType::Int64 && indices.dtype() != ScalarType::Int32)
    fail(op, "Expected tensor for argument #2 'indices' to have one of the following scalar types: Long, Int; but got {} "
             "instead",
         c10_type_name(indices.dtype()));
  if (!is_floating_point(grad_output.dtype()))
    fail(op, "expected a floating grad_output, got {}", c10_type_name(grad_output.dtype()));
  std::vector<ir::Expr> want = sym_sizes(indices);
  if (grad_output.dim() != indices.dim() + 1) want.clear();
  else want.push_back(sym_size(grad_output, -1));
  if (want.empty() || !sym_same_sizes(sym_sizes(grad_output), want))
    fail(op, "expected grad_output of shape [*indices.shape, D] for indices {}, got {}", ir::str(sym_sizes(indices)),
         ir::str(sym_sizes(grad_output)));
  if (ir::sym_lt(num_weights, ir::Expr(0))) fail(op, "expected num_weights >= 0, got {}", num_weights.str());
  return dispatch1(ir::OpKind::embedding_dense_backward, {grad_output, indices},
                   {num_weights, padding_idx, scale_grad_by_freq});
}

namespace decomp {

std::vector<Tensor> embedding(const DecompArgs& a) {
  const Tensor& weight = a.in(0);
  const Tensor& indices = a.in(1);
  if (weight.dim() != 2) fail("embedding", "'weight' must be 2-D");
  if (indices.dtype() != ScalarType::Int64 && indices.dtype() != ScalarType::Int32)
    fail("embedding", "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but "
                      "got {} instead (while checking arguments for embedding)",
         c10_type_name(indices.dtype()));
  std::vector<ir::Expr> out = sym_sizes(indices);
  out.push_back(sym_size(weight, 1));
  Tensor flat = sym_reshape(indices.to(ScalarType::Int64), {sym_numel(indices)});
  return {sym_reshape(weight.index_select(0, flat), out)};
}

// Rows of grad_output added into zeros [num_weights, D] at their indices (index_add, in f32
// for f16/bf16); rows whose index is padding_idx add nothing; scale_grad_by_freq first divides
// each row by how often its index occurs.
std::vector<Tensor> embedding_dense_backward(const DecompArgs& a) {
  const Tensor& grad = a.in(0);
  const ScalarType t = opmath_dtype(grad.dtype());
  const ir::Expr rows = sym_numel(a.in(1)), D = sym_size(grad, -1);
  const Tensor idx = sym_reshape(a.in(1).to(ScalarType::Int64), {rows});
  Tensor g = sym_reshape(grad.to(t), {rows, D});
  const ir::Expr& num_weights = a.attr<ir::Expr>("num_weights");
  if (a.attr<bool>("scale_grad_by_freq")) {
    const Tensor counts = index_add(sym_full({num_weights}, 0, t, grad.device()), 0, idx,
                                    sym_full({rows}, 1, t, grad.device()));
    g = g / counts.index_select(0, idx).unsqueeze(1);
  }
  const int64_t padding_idx = a.attr<int64_t>("padding_idx");
  if (padding_idx >= 0) g = where(ne(idx, Scalar(padding_idx)).unsqueeze(1), g, Scalar(0.0));
  return {index_add(sym_full({num_weights, D}, 0, t, grad.device()), 0, idx, g).to(grad.dtype())};
}

}  // namespace decomp

Tensor embedding_bag(const Tensor& weight, const Tensor& input, const std::optional<Tensor>& offsets, std::string_view mode,
                     const std::optional<Tensor>& per_sample_weights, bool include_last_offset,
                     std::optional<int64_t> padding_idx) {
  const std::string_view op = "embedding_bag";
  if (weight.dim() != 2) fail(op, "weight has to be a 2D Tensor, but got Tensor of dimension {}", weight.dim());
  if (input.dtype() != ScalarType::Int64 && input.dtype() != ScalarType::Int32)
    fail(op, "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got {} "
             "instead (while checking arguments for embedding_bag)",
         c10_type_name(input.dtype()));
  if (mode != "sum" && mode != "mean" && mode != "max") fail(op, "mode has to be one of sum, mean or max");
  const bool weighted = per_sample_weights.has_value() && per_sample_weights->defined();
  if (weighted && mode != "sum")
    fail(op, "embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for mode='sum' (got "
             "mode='{}'). Please open a feature request on GitHub.",
         mode);
  const bool has_offsets = offsets && offsets->defined();
  if (input.dim() == 2 && has_offsets)
    fail(op, "if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed length sequences.");
  if (input.dim() == 1 && !has_offsets) fail(op, "offsets has to be a 1D Tensor but got None");
  if (input.dim() != 1 && input.dim() != 2) fail(op, "input has to be 1D or 2D Tensor, but got Tensor of dimension {}", input.dim());
  if (has_offsets && offsets->dim() != 1) fail(op, "offsets has to be a 1D Tensor");
  if (has_offsets && offsets->dtype() != ScalarType::Int64 && offsets->dtype() != ScalarType::Int32)
    fail(op, "Expected tensor for argument #2 'offsets' to have one of the following scalar types: Long, Int; but got {} "
             "instead (while checking arguments for embedding_bag)",
         c10_type_name(offsets->dtype()));
  if (weighted && !sym_same_sizes(sym_sizes(*per_sample_weights), sym_sizes(input)))
    fail(op, "expected per_sample_weights.shape to be the same as input.shape, but got {} and {}",
         shape_str(per_sample_weights->sizes()), shape_str(input.sizes()));
  int64_t pad = -1;
  if (padding_idx) {  // the rows are counted only here (a negative padding_idx is resolved against them)
    const ir::Expr V = sym_size(weight, 0);
    if (ir::sym_lt(ir::Expr(*padding_idx), -V) || ir::sym_le(V, ir::Expr(*padding_idx)))
      fail(op, "Padding_idx must be within num_embeddings");
    pad = *padding_idx < 0 ? *padding_idx + weight.size(0) : *padding_idx;
  }
  // A 2-D input is B bags of equal length: flat indices with offsets 0, L, 2L, ... (as ATen
  // reads it), so the node sees one form.
  std::vector<Tensor> in{weight};
  bool last_offset = include_last_offset;
  if (input.dim() == 2) {
    in.push_back(input.reshape({-1}));
    in.push_back(sym_iota(sym_size(input, 0), ScalarType::Int64, input.device()) *
                 sym_scalar_tensor(sym_size(input, 1), ScalarType::Int64, input.device()));
    last_offset = false;
  } else {
    in.push_back(input);
    in.push_back(*offsets);
  }
  if (weighted) in.push_back(per_sample_weights->reshape({-1}));
  const int64_t mode_code = mode == "sum" ? 0 : mode == "mean" ? 1 : 2;  // ATen's numbering
  return dispatch1(ir::OpKind::embedding_bag, std::move(in), {mode_code, last_offset, pad});
}

namespace decomp {

std::vector<Tensor> embedding_bag(const DecompArgs& a) {
  const std::string_view op = "embedding_bag";
  const Tensor& weight = a.in(0);
  const int64_t mode = a.attr<int64_t>("mode"), pad = a.attr<int64_t>("padding_idx");
  if (weight.dim() != 2 || a.in(1).dim() != 1 || a.in(2).dim() != 1 || mode < 0 || mode > 2)
    fail(op, "expected a 2-D weight, 1-D indices and offsets and a mode of 0 (sum), 1 (mean) or 2 (max), but got weight "
             "{}, indices {}, offsets {} and mode {}", shape_str(weight.sizes()), shape_str(a.in(1).sizes()),
         shape_str(a.in(2).sizes()), mode);
  // Counts are expressions (frontend/symbolic.h): traced with symbolic sizes, the bags, rows
  // and width stay symbolic instead of being pinned to their trace-time values.
  const Device dev = weight.device();
  const Tensor ids = a.in(1).to(ScalarType::Int64);
  const Tensor off = a.in(2).to(ScalarType::Int64);
  const ir::Expr n = sym_size(ids, 0), D = sym_size(weight, 1);
  const ir::Expr B = sym_size(off, 0) - ir::Expr(a.attr<bool>("include_last_offset") ? 1 : 0);
  if (ir::sym_lt(B, ir::Expr(0))) fail(op, "offsets has to have at least one element when include_last_offset is true");
  // The bag of index i counts the bag starts offsets[1..B) at or before i (the last bag runs
  // to the end of the input, whatever include_last_offset's extra entry holds): the starts
  // marked on [0, n] and summed as they run. padding_idx entries go to an extra bag B,
  // dropped at the end.
  Tensor bag = sym_full({n}, Scalar(int64_t{0}), ScalarType::Int64, dev);
  if (ir::sym_lt(ir::Expr(1), B)) {
    const bool last = a.attr<bool>("include_last_offset");  // offsets[1..B): all but the first (and the extra last)
    const Tensor starts = minimum(clamp_min(off.slice(0, 1, last ? std::optional<int64_t>(-1) : std::nullopt), Scalar(int64_t{0})),
                                  sym_scalar_tensor(n, ScalarType::Int64, dev));
    const Tensor marks = sym_full({n + ir::Expr(1)}, Scalar(int64_t{0}), ScalarType::Int64, dev)
                             .scatter_add(0, starts, sym_full({B - ir::Expr(1)}, Scalar(int64_t{1}), ScalarType::Int64, dev));
    bag = cumsum(marks, 0).slice(0, 0, -1);  // [0, n)
  }
  if (pad >= 0) bag = where(eq(ids, pad), sym_scalar_tensor(B, ScalarType::Int64, dev), bag);
  Tensor rows = weight.index_select(0, ids);  // [n, D]
  if (const Tensor* psw = a.opt(3)) rows = rows * psw->unsqueeze(1);
  const Tensor spread = sym_expand(bag.unsqueeze(1), {n, D});
  const Tensor bins = sym_full({B + ir::Expr(1), D}, Scalar(0.0), weight.dtype(), dev);
  // The bins' last row is padding_idx's extra bag, dropped.
  if (mode == 2) return {scatter_reduce(bins, 0, spread, rows, "amax", /*include_self=*/false).slice(0, 0, -1)};
  const Tensor sums = bins.scatter_add(0, spread, rows.to(weight.dtype())).slice(0, 0, -1);
  if (mode == 0) return {sums};
  const Tensor counts = sym_full({B + ir::Expr(1)}, Scalar(int64_t{0}), ScalarType::Int64, dev)
                            .scatter_add(0, bag, sym_full({n}, Scalar(int64_t{1}), ScalarType::Int64, dev))
                            .slice(0, 0, -1);
  return {sums / clamp_min(counts, 1).unsqueeze(1).to(weight.dtype())};
}

}  // namespace decomp

Tensor take_along_dim(const Tensor& self, const Tensor& indices, std::optional<int64_t> dim) {
  if (indices.dtype() != ScalarType::Int64)
    fail("take_along_dim", "torch.take_along_dim(): dtype of indices should be int64 but got {} instead.",
         c10_type_name(indices.dtype()));
  if (!dim) return sym_reshape(self, {sym_numel(self)}).gather(0, sym_reshape(indices, {sym_numel(indices)}));
  if (self.dim() != indices.dim())
    fail("take_along_dim", "torch.take_along_dim(): input and indices should have the same number of dimensions, but got {} "
                           "dimensions for input, and {} dimensions for indices",
         self.dim(), indices.dim());
  const int64_t d = normalize_dim("take_along_dim", *dim, self.dim());
  // Every dim but `d` broadcasts between the two; along `d` each keeps its own size.
  std::vector<ir::Expr> si = sym_sizes(self), ii = sym_sizes(indices);
  std::vector<ir::Expr> ss = si, is = ii;
  ss[static_cast<size_t>(d)] = ir::Expr(1);
  is[static_cast<size_t>(d)] = ir::Expr(1);
  std::vector<ir::Expr> b = sym_broadcast_shapes("take_along_dim", ss, is);
  std::vector<ir::Expr> self_to = b, idx_to = b;
  self_to[static_cast<size_t>(d)] = si[static_cast<size_t>(d)];
  idx_to[static_cast<size_t>(d)] = ii[static_cast<size_t>(d)];
  return sym_expand(self, self_to).gather(d, sym_expand(indices, idx_to));
}

namespace {

// index_fill's checks before the value's, in PyTorch's order: the index is int64, the dim fits
// (a 0-dim self counts as one element along dim 0), the index is 1-D or 0-dim.
int64_t check_index_fill(const Tensor& self, int64_t dim, const Tensor& index) {
  if (index.dtype() != ScalarType::Int64) fail("index_fill", "index_fill_(): Expected dtype int64 for index.");
  const int64_t d = normalize_dim("index_fill", dim, std::max<int64_t>(self.dim(), 1));
  if (index.dim() > 1) fail("index_fill", "Index has to be a vector/scalar");
  return d;
}

// where(the slices along d that index names, value, self). A negative index counts from the end;
// one below -size stays as it is, so that the scatter reports it as it was given.
Tensor index_fill_impl(const Tensor& self, int64_t d, const Tensor& index, const Tensor& value) {
  const Tensor s = self.dim() == 0 ? self.reshape({1}) : self;
  const int64_t n = s.size(d);
  const Tensor idx = index.reshape({-1});
  const Tensor wrapped = where(logical_and(lt(idx, 0), ge(idx, -n)), add(idx, n), idx);
  const Tensor hit = zeros({n}, TensorOptions(ScalarType::Bool).device(self.device())).scatter(0, wrapped, Scalar(true));
  std::vector<int64_t> shape(static_cast<size_t>(s.dim()), 1);
  shape[static_cast<size_t>(d)] = n;
  const Tensor out = where(hit.reshape(shape), value.to(self.dtype()), s);
  return self.dim() == 0 ? out.reshape({}) : out;
}

}  // namespace

Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  const int64_t d = check_index_fill(self, dim, index);
  check_scalar_fits("index_fill", value, self.dtype());
  return index_fill_impl(self, d, index, wrapped_number(value, self.dtype(), self.device()));
}

// PyTorch fills with value.item(): the value may have any dtype; it is checked as a number where
// it has one (a traced value converts as `to` does) and keeps its gradient.
Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value) {
  if (value.dim() != 0)
    fail("index_fill", "index_fill_ only supports a 0-dimensional value tensor, but got tensor with {} dimension(s).",
         value.dim());
  const int64_t d = check_index_fill(self, dim, index);
  if (!value.is_traced()) check_scalar_fits("index_fill", value.item(), self.dtype());
  return index_fill_impl(self, d, index, value);
}

Tensor take(const Tensor& self, const Tensor& index) {
  if (index.dtype() != ScalarType::Int64)
    fail("take", "take(): Expected a long tensor for index, but got {}", c10_type_name(index.dtype()));
  if (ir::sym_eq(sym_numel(self), ir::Expr(0)) && !ir::sym_eq(sym_numel(index), ir::Expr(0)))
    fail("take", "take(): tried to take from an empty tensor");
  // Advanced indexing of the flattened self: negative positions count from the end, and one out
  // of range is index's error.
  return kiln::index(sym_reshape(self, {sym_numel(self)}), {index});
}

Tensor put(const Tensor& self, const Tensor& index, const Tensor& source, bool accumulate) {
  constexpr std::string_view op = "put";
  if (index.dtype() != ScalarType::Int64)
    fail(op, "put_(): Expected a long tensor for index, but got {}", c10_type_name(index.dtype()));
  if (self.dtype() != source.dtype())
    fail(op, "put_(): self and source expected to have the same dtype, but got self.dtype = {} and source.dtype = {}",
         c10_type_name(self.dtype()), c10_type_name(source.dtype()));
  if (!ir::sym_eq(sym_numel(source), sym_numel(index)))
    fail(op, "put_(): Expected source and index to have the same number of elements, but got source.numel() = {}, "
             "index.numel() = {}",
         source.numel(), index.numel());
  if (ir::sym_eq(sym_numel(self), ir::Expr(0)) && !ir::sym_eq(sym_numel(index), ir::Expr(0)))
    fail(op, "put_(): Tried to put elements into an empty tensor");
  const Tensor flat = sym_reshape(self, {sym_numel(self)});
  const Tensor written = index_put(flat, {sym_reshape(index, {sym_numel(index)})}, sym_reshape(source, {sym_numel(source)}),
                                   accumulate);
  return sym_reshape(written, sym_sizes(self));
}

}  // namespace kiln
