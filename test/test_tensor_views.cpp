// kiln/test/test_tensor_views.cpp — view operations on eager tensors, and under tracing.
//
// For every view op: the sizes, strides and storage offset it produces (contiguous and
// non-contiguous inputs, negative dims, size-0 and size-1 dims, 0-dim tensors), writes
// through a view reaching the base, reshape copying only when the strides cannot express
// the new shape, and PyTorch's error messages for bad dims, shapes and broadcasts; sizes,
// steps, strides and offsets near INT64_MAX (overflow-checked, never wrapped into a wrong
// answer); as_strided over the storage eagerly and over the input's elements when traced.
// Expected strides were derived by hand from PyTorch's rules (computeStride, inferExpandGeometry).
#include "base/error.h"
#include "frontend/ops.h"
#include "frontend/tracer.h"
#include "frontend/ops_view.h"
#include "runtime/interpreter/interpreter.h"
#include "test_support/check.h"
#include "test_support/make.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <numeric>
#include <string>

namespace kiln {
namespace {

using namespace test;
using ::testing::HasSubstr;

// A contiguous float tensor holding 0, 1, 2, ... in row-major order.
Tensor arange_f(Ints shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  Floats v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0.f);
  return make<float>(v, std::move(shape));
}

::testing::AssertionResult has_meta(const Tensor& t, const Ints& sizes, const Ints& strides, int64_t offset) {
  const Ints sz = t.impl()->sizes().vec();
  const Ints st = t.impl()->strides().vec();
  const int64_t off = t.impl()->storage_offset();
  if (sz == sizes && st == strides && off == offset) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got sizes " << shape_str(sz) << " strides " << shape_str(st) << " offset "
                                       << off << "; expected sizes " << shape_str(sizes) << " strides "
                                       << shape_str(strides) << " offset " << offset;
}

// ---- metadata helpers ---------------------------------------------------------------------------

TEST(ViewHelpers, NormalizeDim) {
  EXPECT_EQ(normalize_dim("x", -1, 3), 2);
  EXPECT_EQ(normalize_dim("x", 2, 3), 2);
  EXPECT_EQ(normalize_dim("x", -1, 0), 0);  // a 0-dim tensor accepts -1 and 0
  EXPECT_EQ(error_of([] { normalize_dim("squeeze", 5, 2); }),
            "[squeeze] Dimension out of range (expected to be in range of [-2, 1], but got 5)");
  EXPECT_EQ(error_of([] { normalize_dim("x", -4, 3); }),
            "[x] Dimension out of range (expected to be in range of [-3, 2], but got -4)");
  EXPECT_EQ(error_of([] { normalize_dim("x", 1, 0); }),
            "[x] Dimension out of range (expected to be in range of [-1, 0], but got 1)");
  EXPECT_EQ(error_of([] { normalize_dim("size", 0, 0, false); }),
            "[size] Dimension specified as 0 but tensor has no dimensions");
}

TEST(ViewHelpers, InferSize) {
  EXPECT_EQ(infer_size("view", {-1, 4}, 12), (Ints{3, 4}));
  EXPECT_EQ(infer_size("view", {2, -1, 2}, 12), (Ints{2, 3, 2}));
  EXPECT_EQ(infer_size("view", {3, 0}, 0), (Ints{3, 0}));
  EXPECT_EQ(infer_size("view", {-1, 3}, 0), (Ints{0, 3}));
  EXPECT_EQ(error_of([] { infer_size("view", {3, 5}, 12); }), "[view] shape '[3, 5]' is invalid for input of size 12");
  EXPECT_EQ(error_of([] {
              infer_size("view", {-1, 5}, 12);
            }),
            "[view] shape '[-1, 5]' is invalid for input of size 12");
  EXPECT_EQ(error_of([] { infer_size("view", {-1, -1}, 12); }), "[view] only one dimension can be inferred");
  EXPECT_EQ(error_of([] { infer_size("view", {-2, 6}, 12); }), "[view] invalid shape dimension -2");
  EXPECT_EQ(error_of([] {
              infer_size("view", {-1, 0}, 0);
            }),
            "[view] cannot reshape tensor of 0 elements into shape [-1, 0] because the unspecified dimension size -1 "
            "can be any value and is ambiguous");
}

TEST(ViewHelpers, ComputeViewStrides) {
  // Contiguous dims merge and split freely.
  EXPECT_EQ(compute_view_strides({2, 3, 4}, {12, 4, 1}, {6, 4}), (Ints{4, 1}));
  EXPECT_EQ(compute_view_strides({2, 3, 4}, {12, 4, 1}, {24}), (Ints{1}));
  // Columns 0:3 of a [4, 6] matrix: two chunks; each can be split but not merged.
  EXPECT_EQ(compute_view_strides({4, 3}, {6, 1}, {2, 2, 3}), (Ints{12, 6, 1}));
  EXPECT_EQ(compute_view_strides({4, 3}, {6, 1}, {12}), std::nullopt);
  EXPECT_EQ(compute_view_strides({4, 3}, {6, 1}, {3, 4}), std::nullopt);
  // A transpose: size-1 dims can be added anywhere.
  EXPECT_EQ(compute_view_strides({4, 3}, {1, 4}, {4, 3, 1}), (Ints{1, 4, 4}));
  EXPECT_EQ(compute_view_strides({4, 3}, {1, 4}, {1, 4, 3}), (Ints{4, 1, 4}));
  // Size-1 dims of the input are ignored whatever their stride.
  EXPECT_EQ(compute_view_strides({3, 1, 4}, {4, 100, 1}, {12}), (Ints{1}));
  // 0-dim input; zero elements (same shape keeps strides, else contiguous-like).
  EXPECT_EQ(compute_view_strides({}, {}, {1, 1}), (Ints{1, 1}));
  EXPECT_EQ(compute_view_strides({0, 3}, {1, 7}, {0, 3}), (Ints{1, 7}));
  EXPECT_EQ(compute_view_strides({0, 3}, {3, 1}, {3, 0}), (Ints{1, 1}));
  EXPECT_EQ(compute_view_strides({0, 3}, {3, 1}, {3, 0, 2}), (Ints{2, 2, 1}));
}

TEST(ViewHelpers, BroadcastShapes) {
  EXPECT_EQ(broadcast_shapes("add", {2, 3}, {3}), (Ints{2, 3}));
  EXPECT_EQ(broadcast_shapes("add", {5, 1, 4}, {3, 1}), (Ints{5, 3, 4}));
  EXPECT_EQ(broadcast_shapes("add", {0}, {1}), (Ints{0}));
  EXPECT_EQ(broadcast_shapes("add", {}, {2, 1}), (Ints{2, 1}));
  EXPECT_EQ(error_of([] {
              broadcast_shapes("add", {2, 3}, {2, 4});
            }),
            "[add] The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1");
  EXPECT_EQ(error_of([] {
              broadcast_shapes("mul", {3, 1}, {2, 4});
            }),
            "[mul] The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0");
  EXPECT_EQ(error_of([] { broadcast_shapes("add", {0}, {2}); }),
            "[add] The size of tensor a (0) must match the size of tensor b (2) at non-singleton dimension 0");
}

// ---- view / reshape / flatten ------------------------------------------------------------------

// Sizes and strides live inline up to six dims (base/dim_vector.h) and on the heap beyond:
// rank 8 views, copies and reductions keep their metadata and values across the boundary.
TEST(Views, HighRankTensorsKeepTheirMetadata) {
  const Tensor a = arange_f({2, 1, 3, 1, 2, 1, 2, 3});
  EXPECT_TRUE(has_meta(a, {2, 1, 3, 1, 2, 1, 2, 3}, {36, 36, 12, 12, 6, 6, 3, 1}, 0));
  const Tensor p = a.permute({7, 6, 5, 4, 3, 2, 1, 0});
  EXPECT_TRUE(has_meta(p, {3, 2, 1, 2, 1, 3, 1, 2}, {1, 3, 6, 6, 12, 12, 36, 36}, 0));
  const Tensor six = a.reshape({2, 3, 2, 2, 3, 1});  // back to inline storage
  EXPECT_TRUE(has_meta(six, {2, 3, 2, 2, 3, 1}, {36, 12, 6, 3, 1, 1}, 0));
  Tensor copy = p;  // shares the impl
  copy = p.contiguous();
  EXPECT_TRUE(has_meta(copy, {3, 2, 1, 2, 1, 3, 1, 2}, {24, 12, 12, 6, 6, 2, 2, 1}, 0));
  EXPECT_TRUE(allclose(copy.permute({7, 6, 5, 4, 3, 2, 1, 0}), a, 0, 0));
  EXPECT_EQ(p.sum().item<float>(), 71.0f * 72.0f / 2.0f);
  EXPECT_TRUE(allclose(p.sum({0, 2, 4, 6}), a.sum({7, 5, 3, 1}).permute({3, 2, 1, 0}), 0, 0));
}

TEST(Views, ViewOfContiguous) {
  Tensor x = arange_f({3, 4});
  Tensor v = view(x, {4, 3});
  EXPECT_TRUE(has_meta(v, {4, 3}, {3, 1}, 0));
  EXPECT_TRUE(v.is_alias_of(x));
  EXPECT_TRUE(has_meta(view(x, {-1, 6}), {2, 6}, {6, 1}, 0));
  EXPECT_TRUE(has_meta(view(x, {2, -1, 2}), {2, 3, 2}, {6, 2, 1}, 0));
  EXPECT_TRUE(has_meta(view(x, {12}), {12}, {1}, 0));
  // Writes through the view reach the base.
  v.data_ptr<float>()[4] = 100.f;
  EXPECT_EQ(values<float>(x)[4], 100.f);
}

TEST(Views, ViewOfNonContiguous) {
  Tensor x = arange_f({3, 4});
  Tensor xt = transpose(x, 0, 1);
  EXPECT_TRUE(has_meta(view(xt, {4, 3, 1}), {4, 3, 1}, {1, 4, 4}, 0));
  EXPECT_EQ(error_of([&] { view(xt, {12}); }),
            "[view] view size is not compatible with input tensor's size and stride (at least one dimension spans "
            "across two contiguous subspaces). Use .reshape(...) instead.");
  // A slice keeps an offset through view.
  Tensor s = slice(arange_f({4, 6}), 1, 2, 5);  // sizes [4, 3], strides [6, 1], offset 2
  EXPECT_TRUE(has_meta(view(s, {2, 2, 3}), {2, 2, 3}, {12, 6, 1}, 2));
  EXPECT_EQ(error_of([&] { view(x, {5, 3}); }), "[view] shape '[5, 3]' is invalid for input of size 12");
}

TEST(Views, ReshapeViewsWhenPossibleAndCopiesOtherwise) {
  Tensor x = arange_f({3, 4});
  Tensor r = reshape(x, {6, 2});
  EXPECT_TRUE(r.is_alias_of(x));
  EXPECT_TRUE(has_meta(r, {6, 2}, {2, 1}, 0));

  Tensor xt = transpose(x, 0, 1);
  Tensor c = reshape(xt, {12});
  EXPECT_FALSE(c.is_alias_of(x));
  EXPECT_TRUE(has_meta(c, {12}, {1}, 0));
  EXPECT_EQ(values<float>(c), (Floats{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  // The copy is independent of the base.
  c.data_ptr<float>()[0] = -1.f;
  EXPECT_EQ(values<float>(x)[0], 0.f);

  // A reshape the strides can express stays a view even of a non-contiguous tensor.
  Tensor v = reshape(xt, {4, 1, 3});
  EXPECT_TRUE(v.is_alias_of(x));
  EXPECT_TRUE(has_meta(v, {4, 1, 3}, {1, 12, 4}, 0));
  EXPECT_EQ(error_of([&] { reshape(x, {-1, 5}); }), "[reshape] shape '[-1, 5]' is invalid for input of size 12");
}

TEST(Views, ZeroSizeAndZeroDim) {
  Tensor e = make<float>({}, {0, 3});
  EXPECT_TRUE(has_meta(view(e, {3, 0}), {3, 0}, {1, 1}, 0));
  EXPECT_TRUE(has_meta(view(e, {-1, 3}), {0, 3}, {3, 1}, 0));
  EXPECT_EQ(error_of([&] {
              view(e, {-1, 0});
            }),
            "[view] cannot reshape tensor of 0 elements into shape [-1, 0] because the unspecified dimension size -1 "
            "can be any value and is ambiguous");

  Tensor s = make<float>({5.f}, {});
  EXPECT_TRUE(has_meta(view(s, {1, 1}), {1, 1}, {1, 1}, 0));
  EXPECT_TRUE(has_meta(reshape(s, {-1}), {1}, {1}, 0));
  EXPECT_TRUE(has_meta(unsqueeze(s, 0), {1}, {1}, 0));
  EXPECT_TRUE(has_meta(unsqueeze(s, -1), {1}, {1}, 0));
  EXPECT_TRUE(has_meta(squeeze(s), {}, {}, 0));
  EXPECT_TRUE(has_meta(squeeze(s, -1), {}, {}, 0));
  EXPECT_TRUE(has_meta(transpose(s, 0, -1), {}, {}, 0));
  EXPECT_TRUE(has_meta(t(s), {}, {}, 0));
  EXPECT_TRUE(has_meta(flatten(s), {1}, {1}, 0));
  EXPECT_TRUE(has_meta(expand(s, {2, 3}), {2, 3}, {0, 0}, 0));
  EXPECT_TRUE(has_meta(permute(s, {}), {}, {}, 0));
  EXPECT_EQ(error_of([&] { select(s, 0, 0); }), "[select] select() cannot be applied to a 0-dim tensor.");
  EXPECT_EQ(error_of([&] { slice(s, 0, 0, 1); }), "[slice] slice() cannot be applied to a 0-dim tensor.");
  EXPECT_EQ(error_of([&] { unbind(s); }), "[unbind] Dimension specified as 0 but tensor has no dimensions");
  EXPECT_EQ(values<float>(expand(s, {2, 2})), (Floats{5, 5, 5, 5}));
}

TEST(Views, FlattenUnflatten) {
  Tensor x = arange_f({2, 3, 4});
  EXPECT_TRUE(has_meta(flatten(x), {24}, {1}, 0));
  EXPECT_TRUE(has_meta(flatten(x, 1), {2, 12}, {12, 1}, 0));
  EXPECT_TRUE(has_meta(flatten(x, 0, 1), {6, 4}, {4, 1}, 0));
  EXPECT_TRUE(has_meta(flatten(x, -2, -2), {2, 3, 4}, {12, 4, 1}, 0));
  EXPECT_TRUE(flatten(x).is_alias_of(x));
  Tensor xt = transpose(x, 0, 2);  // [4, 3, 2], strides [1, 4, 12]: flattening must copy
  Tensor f = flatten(xt);
  EXPECT_FALSE(f.is_alias_of(x));
  EXPECT_EQ(values<float>(f), values<float>(xt));
  EXPECT_EQ(error_of([&] { flatten(x, 2, 1); }),
            "[flatten] flatten() has invalid args: start_dim cannot come after end_dim");

  EXPECT_TRUE(has_meta(unflatten(x, 2, {2, 2}), {2, 3, 2, 2}, {12, 4, 2, 1}, 0));
  EXPECT_TRUE(has_meta(unflatten(x, -1, {-1, 2}), {2, 3, 2, 2}, {12, 4, 2, 1}, 0));
  EXPECT_TRUE(has_meta(unflatten(xt, 0, {2, 2}), {2, 2, 3, 2}, {2, 1, 4, 12}, 0));
  EXPECT_EQ(error_of([&] {
              unflatten(x, 2, {3, 5});
            }),
            "[unflatten] Provided sizes [3, 5] don't multiply up to the size of dim 2 (4) in the input tensor");
  EXPECT_EQ(error_of([&] { unflatten(x, 2, {-1, -1}); }), "[unflatten] only one dimension can be inferred");
}

// ---- permutations and expand ---------------------------------------------------------------------

TEST(Views, PermuteTransposeMovedim) {
  Tensor x = arange_f({2, 3, 4});
  EXPECT_TRUE(has_meta(permute(x, {2, 0, 1}), {4, 2, 3}, {1, 12, 4}, 0));
  EXPECT_TRUE(has_meta(permute(x, {-1, 0, -2}), {4, 2, 3}, {1, 12, 4}, 0));
  EXPECT_TRUE(has_meta(transpose(x, 0, 2), {4, 3, 2}, {1, 4, 12}, 0));
  EXPECT_TRUE(has_meta(transpose(x, -1, 1), {2, 4, 3}, {12, 1, 4}, 0));
  EXPECT_TRUE(has_meta(transpose(x, 1, 1), {2, 3, 4}, {12, 4, 1}, 0));
  EXPECT_TRUE(has_meta(movedim(x, 0, 2), {3, 4, 2}, {4, 1, 12}, 0));
  EXPECT_TRUE(has_meta(movedim(x, -1, 0), {4, 2, 3}, {1, 12, 4}, 0));
  // Permuting a slice keeps its offset.
  Tensor s = slice(x, 2, 1);  // [2, 3, 3], offset 1
  EXPECT_TRUE(has_meta(permute(s, {1, 2, 0}), {3, 3, 2}, {4, 1, 12}, 1));
  EXPECT_EQ(values<float>(transpose(arange_f({2, 3}), 0, 1)), (Floats{0, 3, 1, 4, 2, 5}));

  EXPECT_EQ(error_of([&] { permute(x, {0, 0, 1}); }), "[permute] duplicate dims are not allowed.");
  EXPECT_EQ(error_of([&] {
              permute(x, {0, 1});
            }),
            "[permute] number of dimensions in the tensor input does not match the length of the desired ordering of "
            "dimensions i.e. input.dim() = 3 is not equal to len(dims) = 2");
  EXPECT_EQ(error_of([&] { transpose(x, 0, 3); }),
            "[transpose] Dimension out of range (expected to be in range of [-3, 2], but got 3)");
}

TEST(Views, T) {
  Tensor m = arange_f({3, 4});
  EXPECT_TRUE(has_meta(t(m), {4, 3}, {1, 4}, 0));
  Tensor v = arange_f({5});
  EXPECT_TRUE(has_meta(t(v), {5}, {1}, 0));
  EXPECT_EQ(error_of([] { t(arange_f({2, 2, 2})); }), "[t] t() expects a tensor with <= 2 dimensions, but self is 3D");
}

TEST(Views, Expand) {
  Tensor x = arange_f({3, 1});
  Tensor e = expand(x, {2, 3, 4});
  EXPECT_TRUE(has_meta(e, {2, 3, 4}, {0, 1, 0}, 0));
  EXPECT_TRUE(e.is_alias_of(x));
  EXPECT_EQ(values<float>(expand(x, {3, 2})), (Floats{0, 0, 1, 1, 2, 2}));
  EXPECT_TRUE(has_meta(expand(x, {-1, 5}), {3, 5}, {1, 0}, 0));
  EXPECT_TRUE(has_meta(expand(x, {1, 3, 1}), {1, 3, 1}, {3, 1, 1}, 0));
  // Expanding a slice keeps its offset and strides.
  Tensor col = slice(arange_f({3, 4}), 1, 2, 3);  // [3, 1], strides [4, 1], offset 2
  EXPECT_TRUE(has_meta(expand(col, {3, 5}), {3, 5}, {4, 0}, 2));
  EXPECT_EQ(values<float>(expand(col, {3, 2})), (Floats{2, 2, 6, 6, 10, 10}));

  EXPECT_EQ(error_of([] {
              expand(arange_f({3, 2}), {3, 4});
            }),
            "[expand] The expanded size of the tensor (4) must match the existing size (2) at non-singleton dimension "
            "1.  Target sizes: [3, 4].  Tensor sizes: [3, 2]");
  EXPECT_EQ(error_of([&] { expand(x, {3}); }),
            "[expand] the number of sizes provided (1) must be greater or equal to the number of dimensions in the "
            "tensor (2)");
  EXPECT_EQ(error_of([&] {
              expand(x, {-1, 3, 1});
            }),
            "[expand] The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension 0");
}

TEST(Views, BroadcastTensors) {
  Tensor a = arange_f({3, 1});
  Tensor b = arange_f({4});
  std::vector<Tensor> out = broadcast_tensors({a, b});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(has_meta(out[0], {3, 4}, {1, 0}, 0));
  EXPECT_TRUE(has_meta(out[1], {3, 4}, {0, 1}, 0));
  EXPECT_EQ(error_of([] {
              broadcast_tensors({arange_f({3}), arange_f({4})});
            }),
            "[broadcast_tensors] The size of tensor a (3) must match the size of tensor b (4) at non-singleton "
            "dimension 0");
}

// ---- squeeze / unsqueeze -------------------------------------------------------------------------

TEST(Views, SqueezeUnsqueeze) {
  Tensor x = arange_f({1, 3, 1, 2});  // strides [6, 2, 2, 1]
  EXPECT_TRUE(has_meta(squeeze(x), {3, 2}, {2, 1}, 0));
  EXPECT_TRUE(has_meta(squeeze(x, 2), {1, 3, 2}, {6, 2, 1}, 0));
  EXPECT_TRUE(has_meta(squeeze(x, -2), {1, 3, 2}, {6, 2, 1}, 0));
  Tensor same = squeeze(x, 1);  // not size 1: a no-op view
  EXPECT_TRUE(has_meta(same, {1, 3, 1, 2}, {6, 2, 2, 1}, 0));
  EXPECT_TRUE(same.is_alias_of(x));
  EXPECT_EQ(error_of([&] { squeeze(x, 4); }),
            "[squeeze] Dimension out of range (expected to be in range of [-4, 3], but got 4)");
  EXPECT_EQ(error_of([] {
              squeeze(arange_f({2, 3}), 5);
            }),
            "[squeeze] Dimension out of range (expected to be in range of [-2, 1], but got 5)");

  Tensor m = arange_f({2, 3});
  EXPECT_TRUE(has_meta(unsqueeze(m, 0), {1, 2, 3}, {6, 3, 1}, 0));
  EXPECT_TRUE(has_meta(unsqueeze(m, 1), {2, 1, 3}, {3, 3, 1}, 0));
  EXPECT_TRUE(has_meta(unsqueeze(m, 2), {2, 3, 1}, {3, 1, 1}, 0));
  EXPECT_TRUE(has_meta(unsqueeze(m, -1), {2, 3, 1}, {3, 1, 1}, 0));
  EXPECT_TRUE(has_meta(unsqueeze(m, -3), {1, 2, 3}, {6, 3, 1}, 0));
  EXPECT_TRUE(has_meta(unsqueeze(transpose(m, 0, 1), 1), {3, 1, 2}, {1, 6, 3}, 0));
  EXPECT_EQ(error_of([&] { unsqueeze(m, 3); }),
            "[unsqueeze] Dimension out of range (expected to be in range of [-3, 2], but got 3)");
}

// ---- slicing ------------------------------------------------------------------------------------

TEST(Views, Slice) {
  Tensor x = arange_f({10});
  Tensor s = slice(x, 0, 2, 8, 3);
  EXPECT_TRUE(has_meta(s, {2}, {3}, 2));
  EXPECT_EQ(values<float>(s), (Floats{2, 5}));
  EXPECT_TRUE(has_meta(slice(x, 0, -3), {3}, {1}, 7));
  EXPECT_TRUE(has_meta(slice(x, 0, 5, 100), {5}, {1}, 5));
  EXPECT_TRUE(has_meta(slice(x, 0, std::nullopt, -2), {8}, {1}, 0));
  EXPECT_TRUE(has_meta(slice(x, 0, -100, 2), {2}, {1}, 0));
  EXPECT_TRUE(has_meta(slice(x, 0, 7, 3), {0}, {1}, 7));  // end < start: empty
  EXPECT_TRUE(has_meta(slice(x, 0, 20), {0}, {1}, 10));   // start clamped to the size
  EXPECT_TRUE(has_meta(slice(x, 0, 0, 10, 4), {3}, {4}, 0));
  EXPECT_EQ(error_of([&] { slice(x, 0, 0, 5, 0); }), "[slice] slice step must be positive");
  EXPECT_EQ(error_of([&] { slice(x, 0, 0, 5, -1); }), "[slice] slice step must be positive");

  Tensor y = arange_f({3, 4});
  EXPECT_TRUE(has_meta(slice(y, 1, 1, 4, 2), {3, 2}, {4, 2}, 1));
  EXPECT_TRUE(has_meta(slice(y, -1, 1, 4, 2), {3, 2}, {4, 2}, 1));
  EXPECT_EQ(values<float>(slice(y, -1, 1, 4, 2)), (Floats{1, 3, 5, 7, 9, 11}));
  // A slice of a transpose, and a slice of a slice.
  Tensor yt = t(y);  // [4, 3], strides [1, 4]
  EXPECT_TRUE(has_meta(slice(yt, 0, 1, 3), {2, 3}, {1, 4}, 1));
  EXPECT_TRUE(has_meta(slice(slice(y, 0, 1), 1, 2), {2, 2}, {4, 1}, 6));
  EXPECT_EQ(error_of([&] { slice(y, 2); }),
            "[slice] Dimension out of range (expected to be in range of [-2, 1], but got 2)");
  // Writes through a strided slice.
  Tensor every_other = slice(x, 0, 1, std::nullopt, 2);  // 1, 3, 5, 7, 9
  every_other.data_ptr<float>()[every_other.impl()->strides()[0] * 2] = -5.f;
  EXPECT_EQ(values<float>(x)[5], -5.f);
}

TEST(Views, Select) {
  Tensor y = arange_f({3, 4});
  Tensor r = select(y, 0, 1);
  EXPECT_TRUE(has_meta(r, {4}, {1}, 4));
  EXPECT_EQ(values<float>(r), (Floats{4, 5, 6, 7}));
  Tensor c = select(y, 1, -1);
  EXPECT_TRUE(has_meta(c, {3}, {4}, 3));
  EXPECT_EQ(values<float>(c), (Floats{3, 7, 11}));
  EXPECT_TRUE(has_meta(select(arange_f({5}), 0, 3), {}, {}, 3));
  EXPECT_EQ(values<float>(select(arange_f({5}), 0, -1)), (Floats{4}));
  EXPECT_TRUE(has_meta(select(t(y), 0, 2), {3}, {4}, 2));
  EXPECT_EQ(error_of([&] { select(y, 0, 5); }),
            "[select] index 5 out of range for tensor of size [3, 4] at dimension 0");
  EXPECT_EQ(error_of([&] { select(y, -1, -5); }),
            "[select] index -5 out of range for tensor of size [3, 4] at dimension 1");
  // Writing column 2 through the view.
  Tensor col = select(y, 1, 2);
  float* p = col.data_ptr<float>();
  for (int64_t i = 0; i < 3; ++i) p[i * col.impl()->strides()[0]] = -1.f;
  EXPECT_EQ(values<float>(y), (Floats{0, 1, -1, 3, 4, 5, -1, 7, 8, 9, -1, 11}));
}

TEST(Views, Narrow) {
  Tensor y = arange_f({3, 4});
  EXPECT_TRUE(has_meta(narrow(y, 1, 1, 2), {3, 2}, {4, 1}, 1));
  EXPECT_TRUE(has_meta(narrow(y, 0, -2, 2), {2, 4}, {4, 1}, 4));
  EXPECT_TRUE(has_meta(narrow(y, 0, 3, 0), {0, 4}, {4, 1}, 12));
  EXPECT_EQ(error_of([&] { narrow(y, 0, 2, 2); }), "[narrow] start (2) + length (2) exceeds dimension size (3).");
  EXPECT_EQ(error_of([&] { narrow(y, 0, 4, 0); }),
            "[narrow] start out of range (expected to be in range of [-3, 3], but got 4)");
  EXPECT_EQ(error_of([&] { narrow(y, 0, 0, -1); }), "[narrow] narrow(): length must be non-negative.");
}

TEST(Views, Diagonal) {
  Tensor m = arange_f({3, 4});
  EXPECT_TRUE(has_meta(diagonal(m), {3}, {5}, 0));
  EXPECT_EQ(values<float>(diagonal(m)), (Floats{0, 5, 10}));
  EXPECT_TRUE(has_meta(diagonal(m, 1), {3}, {5}, 1));
  EXPECT_EQ(values<float>(diagonal(m, 1)), (Floats{1, 6, 11}));
  EXPECT_TRUE(has_meta(diagonal(m, -1), {2}, {5}, 4));
  EXPECT_EQ(values<float>(diagonal(m, -1)), (Floats{4, 9}));
  EXPECT_TRUE(has_meta(diagonal(m, 5), {0}, {5}, 0));
  EXPECT_TRUE(has_meta(diagonal(m, 0, 1, 0), {3}, {5}, 0));
  Tensor z = arange_f({2, 3, 4});  // strides [12, 4, 1]
  EXPECT_TRUE(has_meta(diagonal(z, 0, 1, 2), {2, 3}, {12, 5}, 0));
  EXPECT_TRUE(has_meta(diagonal(z, 0, -1, 0), {3, 2}, {4, 13}, 0));
  EXPECT_TRUE(has_meta(diagonal(z, 1, 0, 1), {4, 2}, {1, 16}, 4));
  EXPECT_EQ(error_of([&] { diagonal(z, 0, 0, -3); }), "[diagonal] diagonal dimensions cannot be identical 0, -3");
  EXPECT_EQ(error_of([] { diagonal(arange_f({3})); }),
            "[diagonal] Dimension out of range (expected to be in range of [-1, 0], but got 1)");
  // Zero the main diagonal through the view.
  Tensor d = diagonal(m);
  for (int64_t i = 0; i < 3; ++i) d.data_ptr<float>()[i * d.impl()->strides()[0]] = 0.f;
  EXPECT_EQ(values<float>(m), (Floats{0, 1, 2, 3, 4, 0, 6, 7, 8, 9, 0, 11}));
}

TEST(Views, AsStrided) {
  Tensor x = arange_f({9});
  Tensor a = as_strided(x, {2, 2}, {3, 1}, 1);
  EXPECT_TRUE(has_meta(a, {2, 2}, {3, 1}, 1));
  EXPECT_EQ(values<float>(a), (Floats{1, 2, 4, 5}));
  // The default offset is the input's own (absolute in the storage).
  Tensor s = slice(x, 0, 2);
  EXPECT_TRUE(has_meta(as_strided(s, {2}, {2}), {2}, {2}, 2));
  EXPECT_EQ(values<float>(as_strided(s, {2}, {2})), (Floats{2, 4}));
  EXPECT_TRUE(has_meta(as_strided(x, {3, 3}, {0, 1}), {3, 3}, {0, 1}, 0));
  EXPECT_TRUE(has_meta(as_strided(x, {0}, {1}, 100), {0}, {1}, 100));  // empty: nothing to reach
  EXPECT_EQ(error_of([&] {
              as_strided(x, {3, 3}, {3, 1}, 1);
            }),
            "[as_strided] setStorage: sizes [3, 3], strides [3, 1], storage offset 1, and itemsize 4 requiring a "
            "storage size of 40 are out of bounds for storage of size 36");
  EXPECT_EQ(error_of([&] { as_strided(x, {2}, {-1}); }),
            "[as_strided] Negative strides are not supported at the moment, got strides: [-1]");
  EXPECT_EQ(error_of([&] {
              as_strided(x, {2, 2}, {1});
            }),
            "[as_strided] mismatch in length of strides and shape: 2 sizes and 1 strides");
  a.data_ptr<float>()[3] = 40.f;  // element [1, 0] of the view is x[4]
  EXPECT_EQ(values<float>(x)[4], 40.f);
}

// ---- splitting -----------------------------------------------------------------------------------

TEST(Views, Split) {
  Tensor x = arange_f({10});
  std::vector<Tensor> p = split(x, 3);
  ASSERT_EQ(p.size(), 4u);
  EXPECT_TRUE(has_meta(p[0], {3}, {1}, 0));
  EXPECT_TRUE(has_meta(p[2], {3}, {1}, 6));
  EXPECT_TRUE(has_meta(p[3], {1}, {1}, 9));
  EXPECT_EQ(split(x, 20).size(), 1u);
  std::vector<Tensor> q = split_with_sizes(x, {2, 0, 8});
  ASSERT_EQ(q.size(), 3u);
  EXPECT_TRUE(has_meta(q[1], {0}, {1}, 2));
  EXPECT_TRUE(has_meta(q[2], {8}, {1}, 2));
  Tensor y = arange_f({3, 4});
  std::vector<Tensor> cols = split(y, 3, -1);
  ASSERT_EQ(cols.size(), 2u);
  EXPECT_TRUE(has_meta(cols[0], {3, 3}, {4, 1}, 0));
  EXPECT_TRUE(has_meta(cols[1], {3, 1}, {4, 1}, 3));
  EXPECT_EQ(error_of([&] {
              split_with_sizes(x, {2, 3});
            }),
            "[split_with_sizes] split_with_sizes expects split_sizes to sum exactly to 10 (input tensor's size at "
            "dimension 0), but got split_sizes=[2, 3]");
  EXPECT_EQ(error_of([&] { split(x, 0); }),
            "[split] split_size can only be 0 if dimension size is 0, but got dimension size of 10");
}

TEST(Views, Chunk) {
  auto sizes_of = [](const std::vector<Tensor>& v) {
    Ints out;
    for (const Tensor& t : v) out.push_back(t.impl()->sizes()[0]);
    return out;
  };
  EXPECT_EQ(sizes_of(chunk(arange_f({10}), 3)), (Ints{4, 4, 2}));
  EXPECT_EQ(sizes_of(chunk(arange_f({10}), 4)), (Ints{3, 3, 3, 1}));
  EXPECT_EQ(sizes_of(chunk(arange_f({6}), 4)), (Ints{2, 2, 2}));  // torch returns fewer chunks here
  EXPECT_EQ(sizes_of(chunk(make<float>({}, {0}), 3)), (Ints{0, 0, 0}));
  std::vector<Tensor> c = chunk(arange_f({2, 5}), 2, 1);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_TRUE(has_meta(c[1], {2, 2}, {5, 1}, 3));
  EXPECT_EQ(error_of([] { chunk(arange_f({4}), 0); }), "[chunk] chunk expects `chunks` to be greater than 0, got: 0");
}

TEST(Views, Unbind) {
  Tensor y = arange_f({3, 4});
  std::vector<Tensor> rows = unbind(y);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_TRUE(has_meta(rows[2], {4}, {1}, 8));
  std::vector<Tensor> cols = unbind(y, 1);
  ASSERT_EQ(cols.size(), 4u);
  EXPECT_TRUE(has_meta(cols[1], {3}, {4}, 1));
  EXPECT_EQ(values<float>(cols[1]), (Floats{1, 5, 9}));
}

// ---- other dtypes and tracing -------------------------------------------------------------------

TEST(Views, KeepDtypeAndShareStorage) {
  Tensor b = make<int64_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor v = select(transpose(b, 0, 1), 0, 2);
  EXPECT_EQ(v.dtype(), kInt64);
  EXPECT_EQ(values<int64_t>(v), (std::vector<int64_t>{3, 6}));
  v.data_ptr<int64_t>()[0] = 30;
  EXPECT_EQ(values<int64_t>(b), (std::vector<int64_t>{1, 2, 30, 4, 5, 6}));
}

TEST(Views, MethodFormsForward) {
  Tensor x = arange_f({2, 3, 4});
  EXPECT_TRUE(has_meta(x.view({6, 4}), {6, 4}, {4, 1}, 0));
  EXPECT_TRUE(has_meta(x.transpose(0, 1).select(2, 1), {3, 2}, {4, 12}, 1));
  EXPECT_TRUE(has_meta(x.mT(), {2, 4, 3}, {12, 1, 4}, 0));
  EXPECT_TRUE(has_meta(x.unsqueeze(0).squeeze(0), {2, 3, 4}, {12, 4, 1}, 0));
  EXPECT_TRUE(has_meta(x[1], {3, 4}, {4, 1}, 12));
  EXPECT_EQ(x.chunk(2, -1).size(), 2u);
}

TEST(Views, TracedViewsRecordPrimsAndRun) {
  Tensor x = arange_f({3, 4});
  auto fn = [](const std::vector<Tensor>& in) {
    // view() of a transpose cannot be a view eagerly; traced, it records a reshape.
    Tensor flat = view(transpose(in[0], 0, 1), {12});
    return std::vector<Tensor>{flat, select(in[0], 1, -1), expand(slice(in[0], 0, 0, 1), {2, 4})};
  };
  TracedProgram p = trace(fn, {x});
  std::vector<ir::OpKind> ops;
  for (ir::Node* n : p.graph->nodes()) ops.push_back(n->op());
  using K = ir::OpKind;
  EXPECT_EQ(ops, (std::vector<K>{K::permute, K::reshape, K::slice, K::squeeze, K::slice, K::expand}));
  ASSERT_EQ(p.graph->outputs().size(), 3u);
  EXPECT_EQ(p.graph->outputs()[0]->type().str(), "f32[12]");
  EXPECT_EQ(p.graph->outputs()[1]->type().str(), "f32[3]");
  EXPECT_EQ(p.graph->outputs()[2]->type().str(), "f32[2, 4]");
  std::vector<Tensor> out = rt::interpret(*p.graph, {x});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(values<float>(out[0]), (Floats{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  EXPECT_EQ(values<float>(out[1]), (Floats{3, 7, 11}));
  EXPECT_EQ(values<float>(out[2]), (Floats{0, 1, 2, 3, 0, 1, 2, 3}));
}


// ---- int64 overflow in sizes, strides and offsets --------------------------------------------------

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
// P * M == 2^64 - 1, which wraps to -1: unchecked, [P, M, P, M, 6] "has" 6 elements.
constexpr int64_t P = (int64_t{1} << 32) + 1;
constexpr int64_t M = (int64_t{1} << 32) - 1;

TEST(ViewOverflow, CheckedNumel) {
  EXPECT_EQ(checked_numel("x", {2, 3, 4}), 24);
  EXPECT_EQ(checked_numel("x", {}), 1);
  EXPECT_EQ(checked_numel("x", {0, P, M, P, M}), 0);
  // The running product must fit (as TensorImpl checks it), even when a 0 comes later.
  EXPECT_EQ(error_of([] { checked_numel("x", {P, M, 0}); }),
            "[x] the number of elements of a tensor of shape [4294967297, 4294967295, 0] overflows int64");
  EXPECT_EQ(checked_numel("x", {int64_t{1} << 62, 1}), int64_t{1} << 62);
  EXPECT_EQ(error_of([] { checked_numel("empty", {int64_t{1} << 62, 4}); }),
            "[empty] the number of elements of a tensor of shape [4611686018427387904, 4] overflows int64");
  EXPECT_EQ(error_of([] { checked_numel("empty", {P, M, P, M, 6}); }),
            "[empty] the number of elements of a tensor of shape [4294967297, 4294967295, 4294967297, 4294967295, 6] "
            "overflows int64");
  EXPECT_EQ(error_of([] { checked_numel("empty", {2, -3}); }),
            "[empty] Trying to create tensor with negative dimension -3: [2, -3]");
}

TEST(ViewOverflow, ReshapeViewUnflattenExpandFlatten) {
  Tensor x = arange_f({6});
  EXPECT_EQ(error_of([&] { reshape(x, {P, M, P, M, 6}); }),
            "[reshape] the number of elements of a tensor of shape [4294967297, 4294967295, 4294967297, 4294967295, "
            "6] overflows int64");
  EXPECT_EQ(error_of([&] { view(x, {-1, P, M, P, M, 6}); }),
            "[view] the number of elements of a tensor of shape [-1, 4294967297, 4294967295, 4294967297, "
            "4294967295, 6] overflows int64");
  EXPECT_EQ(error_of([&] { unflatten(x, 0, {P, M, P, M, 6}); }),
            "[unflatten] the number of elements of a tensor of shape [4294967297, 4294967295, 4294967297, "
            "4294967295, 6] overflows int64");
  EXPECT_EQ(error_of([] { expand(arange_f({1, 1}), {int64_t{1} << 62, 4}); }),
            "[expand] the number of elements of a tensor of shape [4611686018427387904, 4] overflows int64");
  // With a leading size-0 dim the expanded tensor is valid (no elements), but flattening the
  // two huge dims into one cannot be expressed.
  Tensor e = expand(make<float>({}, {0, 1, 1}), {0, int64_t{1} << 62, 4});
  EXPECT_EQ(e.impl()->sizes(), (Ints{0, int64_t{1} << 62, 4}));
  EXPECT_EQ(error_of([&] { flatten(e, 1, 2); }),
            "[flatten] the number of elements of a tensor of shape [4611686018427387904, 4] overflows int64");
  EXPECT_TRUE(has_meta(reshape(e, {0}), {0}, {1}, 0));
}

TEST(ViewOverflow, AsStridedBounds) {
  Tensor x = arange_f({6});
  const std::string overflowed = "[as_strided] Storage size calculation overflowed with sizes=";
  EXPECT_EQ(error_of([&] { as_strided(x, {2}, {2}, kMax); }), overflowed + "[2] and strides=[2]");
  EXPECT_EQ(error_of([&] { as_strided(x, {3}, {kMax}, 0); }), overflowed + "[3] and strides=[9223372036854775807]");
  EXPECT_EQ(error_of([&] { as_strided(x, {2, 2}, {int64_t{1} << 62, int64_t{1} << 62}, 0); }),
            overflowed + "[2, 2] and strides=[4611686018427387904, 4611686018427387904]");
  // Offset + span fits int64 but the byte count does not.
  EXPECT_EQ(error_of([&] { as_strided(x, {1}, {1}, int64_t{1} << 62); }), overflowed + "[1] and strides=[1]");
  EXPECT_EQ(error_of([&] { as_strided(x, {2, -1}, {1, 1}); }),
            "[as_strided] Trying to create tensor with negative dimension -1: [2, -1]");
  EXPECT_EQ(error_of([&] { as_strided(x, {2}, {1}, -1); }), "[as_strided] Tensor: invalid storage offset -1");
  // A dim of size 1 or 0 reaches nothing beyond its first element, whatever its stride.
  EXPECT_TRUE(has_meta(as_strided(x, {1, 2}, {kMax, 1}, 4), {1, 2}, {kMax, 1}, 4));
  EXPECT_EQ(values<float>(as_strided(x, {1, 2}, {kMax, 1}, 4)), (Floats{4, 5}));
  EXPECT_TRUE(has_meta(as_strided(x, {3, 0}, {kMax, kMax}, kMax), {3, 0}, {kMax, kMax}, kMax));
}

TEST(ViewOverflow, SliceWithHugeStep) {
  Tensor y = arange_f({2, 3});
  Tensor a = slice(y, 1, 0, std::nullopt, kMax);
  EXPECT_TRUE(has_meta(a, {2, 1}, {3, kMax}, 0));
  EXPECT_EQ(values<float>(a), (Floats{0, 3}));
  // 3 * (2^63 - 1) wraps to 2^63 - 3, as in PyTorch; the dim holds one element, so it is unused.
  Tensor b = slice(y, 0, 1, std::nullopt, kMax);
  EXPECT_TRUE(has_meta(b, {1, 3}, {kMax - 2, 1}, 3));
  EXPECT_EQ(values<float>(b), (Floats{3, 4, 5}));
  EXPECT_TRUE(has_meta(slice(y, 1, 3, std::nullopt, kMax), {2, 0}, {3, kMax}, 3));
  TracedProgram p = trace([](const std::vector<Tensor>& in) { return std::vector<Tensor>{slice(in[0], 1, 1, 3, kMax)}; },
                          {y});
  EXPECT_EQ(p.graph->outputs()[0]->type().str(), "f32[2, 1]");
  EXPECT_EQ(values<float>(rt::interpret(*p.graph, {y})[0]), (Floats{1, 4}));
}

TEST(ViewOverflow, SplitAndChunkWithHugeSizes) {
  Tensor a = arange_f({2, 3});
  // The entries sum to 3 modulo 2^64: unchecked, the sum test passes.
  EXPECT_EQ(error_of([&] { split_with_sizes(a, {kMax, kMax, 5}, 1); }),
            "[split_with_sizes] split_with_sizes expects split_sizes to sum exactly to 3 (input tensor's size at "
            "dimension 1), but got split_sizes=[9223372036854775807, 9223372036854775807, 5]");
  std::vector<Tensor> c = chunk(a, kMax, 1);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_TRUE(has_meta(c[2], {2, 1}, {3, 1}, 2));
  std::vector<Tensor> s = split(a, kMax, 1);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_TRUE(has_meta(s[0], {2, 3}, {3, 1}, 0));
  std::vector<Tensor> s2 = split(a, kMax - 1, 0);
  ASSERT_EQ(s2.size(), 1u);
  EXPECT_TRUE(has_meta(s2[0], {2, 3}, {3, 1}, 0));
}

// ---- as_strided: storage semantics eagerly, the input's elements under tracing ----------------

// repeat is never a view of its input (PyTorch copies): an eager reshape of the expansion was
// one where a repeated dim had size 1, with a 0 stride, so an in-place write refused it.
TEST(Views, RepeatNeverSharesItsInputsMemory) {
  for (const std::vector<int64_t>& reps : {std::vector<int64_t>{5, 1}, std::vector<int64_t>{1, 1}}) {
    const Tensor x = tensor(std::vector<float>{1, 2, 3}).reshape({1, 3});
    Tensor r = x.repeat(reps);
    EXPECT_FALSE(r.is_alias_of(x));
    r.add_(1);
    expect_exact(x, kFloat, {1, 2, 3});
    expect_exact(r.select(0, 0), kFloat, {2, 3, 4});
  }
  const Tensor y = tensor(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}).reshape({2, 1, 4});
  Tensor r = y.repeat({1, 3, 1});
  EXPECT_FALSE(r.is_alias_of(y));
  r.add_(1);
  expect_exact(y.flatten(), kFloat, {1, 2, 3, 4, 5, 6, 7, 8});
}

TEST(Views, AsStridedEagerAddressesStorageTracedAddressesElements) {
  Tensor x = arange_f({10});
  Tensor s = slice(x, 0, 5);
  Tensor e = as_strided(s, {2}, {1});  // default offset: s's own, 5
  EXPECT_TRUE(has_meta(e, {2}, {1}, 5));
  EXPECT_EQ(values<float>(e), (Floats{5, 6}));
  EXPECT_EQ(values<float>(as_strided(s, {2}, {1}, 0)), (Floats{0, 1}));  // storage, not s's elements
  // Eagerly the layout of self is irrelevant: strides address the storage [0, 1, ..., 5].
  Tensor t = transpose(arange_f({2, 3}), 0, 1);
  EXPECT_EQ(values<float>(as_strided(t, {3}, {2}, 1)), (Floats{1, 3, 5}));
  // Eagerly, s may reach its whole storage (10 floats); traced, only its 5 elements.
  EXPECT_EQ(values<float>(as_strided(s, {3}, {2}, 1)), (Floats{1, 3, 5}));

  TracedProgram p = trace(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{as_strided(in[0], {2}, {1}), as_strided(in[0], {2}, {2}, 1)};
      },
      {s});
  ASSERT_EQ(p.graph->nodes().size(), 2u);
  std::vector<Tensor> out = rt::interpret(*p.graph, {s});
  EXPECT_EQ(values<float>(out[0]), (Floats{5, 6}));
  EXPECT_EQ(values<float>(out[1]), (Floats{6, 8}));
  out[0].data_ptr<float>()[1] = 60.f;  // a contiguous input is viewed, not copied
  EXPECT_EQ(values<float>(x)[6], 60.f);
  x.data_ptr<float>()[6] = 6.f;

  // A non-contiguous input is viewed through its row-major elements [0, 3, 1, 4, 2, 5].
  TracedProgram q = trace(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{as_strided(in[0], {3}, {2}, 1)}; }, {t});
  EXPECT_EQ(values<float>(rt::interpret(*q.graph, {t})[0]), (Floats{3, 4, 5}));

  TracedProgram r = trace(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{as_strided(in[0], {3}, {2}, 1)}; }, {s});
  EXPECT_EQ(error_of([&] { rt::interpret(*r.graph, {s}); }),
            "[as_strided] setStorage: sizes [3], strides [2], storage offset 1, and itemsize 4 requiring a storage "
            "size of 24 are out of bounds for storage of size 20");
  TracedProgram big = trace(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{as_strided(in[0], {2}, {2}, kMax)}; }, {s});
  EXPECT_EQ(error_of([&] { rt::interpret(*big.graph, {s}); }),
            "[as_strided] Storage size calculation overflowed with sizes=[2] and strides=[2]");
}

}  // namespace
}  // namespace kiln
