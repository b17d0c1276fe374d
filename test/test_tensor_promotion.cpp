// kiln/test/test_tensor_promotion.cpp — PyTorch's type promotion: the promote_types lattice,
// result_type over tensors, 0-dim tensors and scalars, can_cast, and the dtypes ops produce.
//
// The 10x10 table below was written out by hand from PyTorch's promoteTypes lookup table
// (c10/core/ScalarType.cpp, complex and quantized columns dropped), reordered to kiln's
// dtype order. The result_type cases follow the documented rules of torch.result_type:
// dimensioned tensors outrank 0-dim tensors, which outrank Python-like scalars, and a lower
// group only counts when its category (bool < integral < floating) is higher.
#include "base/error.h"
#include "frontend/ops_factory.h"
#include "frontend/ops.h"
#include "frontend/promotion.h"
#include "test_support/make.h"

#include <gtest/gtest.h>

#include <string>

namespace kiln {
namespace {

using test::make;
using test::values;

constexpr ScalarType b1 = kBool, u1 = kUInt8, i1 = kInt8, i2 = kInt16, i4 = kInt32, i8 = kInt64, f2 = kHalf,
                     bf = kBFloat16, f4 = kFloat, f8 = kDouble;

// A 1-D tensor with two elements, and a 0-dim tensor, of any dtype.
Tensor vec(ScalarType t) { return zeros({2}, t); }
Tensor zero_dim(ScalarType t) { return zeros({}, t); }

// RAII guard for tests that change the default dtype.
struct DefaultDtype {
  explicit DefaultDtype(ScalarType t) : saved(get_default_dtype()) { set_default_dtype(t); }
  ~DefaultDtype() { set_default_dtype(saved); }
  ScalarType saved;
};

TEST(PromoteTypes, FullTableMatchesPyTorch) {
  const ScalarType order[kNumScalarTypes] = {b1, u1, i1, i2, i4, i8, f2, bf, f4, f8};
  // Rows and columns in kiln's order: bool, uint8, int8, int16, int32, int64, f16, bf16, f32, f64.
  const ScalarType table[kNumScalarTypes][kNumScalarTypes] = {
      /* b1 */ {b1, u1, i1, i2, i4, i8, f2, bf, f4, f8},
      /* u1 */ {u1, u1, i2, i2, i4, i8, f2, bf, f4, f8},
      /* i1 */ {i1, i2, i1, i2, i4, i8, f2, bf, f4, f8},
      /* i2 */ {i2, i2, i2, i2, i4, i8, f2, bf, f4, f8},
      /* i4 */ {i4, i4, i4, i4, i4, i8, f2, bf, f4, f8},
      /* i8 */ {i8, i8, i8, i8, i8, i8, f2, bf, f4, f8},
      /* f2 */ {f2, f2, f2, f2, f2, f2, f2, f4, f4, f8},
      /* bf */ {bf, bf, bf, bf, bf, bf, f4, bf, f4, f8},
      /* f4 */ {f4, f4, f4, f4, f4, f4, f4, f4, f4, f8},
      /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8, f8, f8},
  };
  for (int i = 0; i < kNumScalarTypes; ++i) {
    for (int j = 0; j < kNumScalarTypes; ++j) {
      EXPECT_EQ(promote_types(order[i], order[j]), table[i][j])
          << dtype_name(order[i]) << " with " << dtype_name(order[j]);
      // Tensor-tensor result_type of two dimensioned tensors is promote_types.
      EXPECT_EQ(result_type(vec(order[i]), vec(order[j])), table[i][j])
          << dtype_name(order[i]) << " with " << dtype_name(order[j]);
    }
  }
}

TEST(ResultType, TensorAndScalar) {
  EXPECT_EQ(result_type(vec(i1), Scalar(5)), i1);      // int8 + 5 -> int8
  EXPECT_EQ(result_type(vec(i1), Scalar(2.5)), f4);    // int8 + 2.5 -> default float
  EXPECT_EQ(result_type(vec(u1), Scalar(-1)), u1);     // the scalar's value does not matter
  EXPECT_EQ(result_type(vec(b1), Scalar(1)), i8);      // bool + 1 -> int64
  EXPECT_EQ(result_type(vec(b1), Scalar(true)), b1);   // bool + True -> bool
  EXPECT_EQ(result_type(vec(b1), Scalar(2.5)), f4);    // bool + 2.5 -> default float
  EXPECT_EQ(result_type(vec(f2), Scalar(2.5)), f2);    // float16 + 2.5 stays float16
  EXPECT_EQ(result_type(vec(bf), Scalar(1)), bf);
  EXPECT_EQ(result_type(vec(f8), Scalar(1)), f8);
  EXPECT_EQ(result_type(vec(i4), Scalar(true)), i4);
  EXPECT_EQ(result_type(Scalar(3), vec(i2)), i2);      // scalar first
  EXPECT_EQ(result_type(Scalar(0.5), vec(i8)), f4);
}

TEST(ResultType, ZeroDimTensors) {
  EXPECT_EQ(result_type(vec(u1), zero_dim(i1)), u1);    // same category: the dimensioned one wins
  EXPECT_EQ(result_type(vec(i4), zero_dim(f8)), f8);    // higher category: promote_types
  EXPECT_EQ(result_type(vec(f2), zero_dim(f8)), f2);    // floating tensor keeps its dtype
  EXPECT_EQ(result_type(vec(f4), zero_dim(f8)), f4);
  EXPECT_EQ(result_type(vec(i4), zero_dim(f4)), f4);    // 1-dim int + 0-dim float -> that float
  EXPECT_EQ(result_type(vec(i4), zero_dim(f2)), f2);
  EXPECT_EQ(result_type(vec(i8), zero_dim(b1)), i8);
  EXPECT_EQ(result_type(vec(b1), zero_dim(i4)), i4);    // bool dimensioned tensor promotes
  EXPECT_EQ(result_type(zero_dim(i8), zero_dim(f2)), f2);  // two 0-dim: promote_types
  EXPECT_EQ(result_type(zero_dim(i1), zero_dim(i2)), i2);
  EXPECT_EQ(result_type(zero_dim(u1), zero_dim(i1)), i2);
  EXPECT_EQ(result_type(zero_dim(bf), zero_dim(f2)), f4);
  // 0-dim tensors outrank scalars in the same way.
  EXPECT_EQ(result_type(zero_dim(i1), Scalar(1)), i1);
  EXPECT_EQ(result_type(zero_dim(b1), Scalar(1)), i8);
  EXPECT_EQ(result_type(zero_dim(i4), Scalar(1.5)), f4);
  EXPECT_EQ(result_type(zero_dim(f8), Scalar(1.5)), f8);
  // A 1-element tensor with one dim is dimensioned, not 0-dim.
  EXPECT_EQ(result_type(zeros({1}, i4), vec(i1)), i4);
  EXPECT_EQ(result_type(zeros({1}, f8), vec(f4)), f8);
  // A size-0 dimensioned tensor still counts as dimensioned.
  EXPECT_EQ(result_type(zeros({0}, f4), zero_dim(f8)), f4);
}

TEST(ResultType, ScalarsOnly) {
  EXPECT_EQ(result_type(Scalar(1), Scalar(2)), i8);
  EXPECT_EQ(result_type(Scalar(1), Scalar(2.5)), f4);
  EXPECT_EQ(result_type(Scalar(true), Scalar(false)), b1);
  EXPECT_EQ(result_type(Scalar(true), Scalar(3)), i8);
}

TEST(ResultType, ManyOperands) {
  // dim int32, 0-dim f16, scalar 2.5: the 0-dim f16 beats the float scalar, then promotes int32.
  EXPECT_EQ(result_type({vec(i4), zero_dim(f2), Scalar(2.5)}), f2);
  EXPECT_EQ(result_type({vec(u1), vec(i1), Scalar(1)}), i2);
  EXPECT_EQ(result_type({vec(u1), zero_dim(i8), Scalar(1)}), u1);
  EXPECT_EQ(result_type({vec(b1), zero_dim(b1), Scalar(true)}), b1);
  EXPECT_EQ(result_type({vec(b1), zero_dim(u1), Scalar(1.0)}), f4);
  EXPECT_EQ(result_type({Tensor(), vec(i2)}), i2);  // undefined tensors are ignored
  EXPECT_THROW(result_type(std::vector<TensorOrScalar>{}), Error);
}

TEST(ResultType, FloatScalarsFollowTheDefaultDtype) {
  DefaultDtype guard(f8);
  EXPECT_EQ(result_type(vec(i4), Scalar(2.5)), f8);
  EXPECT_EQ(result_type(vec(f4), Scalar(2.5)), f4);
  EXPECT_EQ(result_type(Scalar(1), Scalar(2.5)), f8);
  EXPECT_EQ((vec(i8) / vec(i8)).dtype(), f8);  // true division of integers
  EXPECT_EQ(exp(vec(i4)).dtype(), f8);
}

TEST(CanCast, PyTorchRules) {
  EXPECT_TRUE(can_cast(i8, f4));
  EXPECT_TRUE(can_cast(f8, f2));  // narrowing within a category is allowed
  EXPECT_TRUE(can_cast(u1, i1));
  EXPECT_TRUE(can_cast(b1, f4));
  EXPECT_TRUE(can_cast(b1, b1));
  EXPECT_FALSE(can_cast(f4, i4));  // floating to integral
  EXPECT_FALSE(can_cast(f2, u1));
  EXPECT_TRUE(can_cast(f4, f4));
  EXPECT_FALSE(can_cast(i8, b1));  // non-bool to bool
  EXPECT_FALSE(can_cast(f4, b1));
}

// ---- the dtypes ops produce ------------------------------------------------------------------------

TEST(OpDtypes, ArithmeticWithScalars) {
  EXPECT_EQ((vec(i1) + 5).dtype(), i1);
  EXPECT_EQ((vec(i1) + 2.5).dtype(), f4);
  EXPECT_EQ((vec(b1) + 1).dtype(), i8);
  EXPECT_EQ((vec(b1) + true).dtype(), b1);
  EXPECT_EQ((vec(f2) * 3.0).dtype(), f2);
  EXPECT_EQ((2 * vec(u1)).dtype(), u1);
  EXPECT_EQ((vec(u1) + zero_dim(i8)).dtype(), u1);
  EXPECT_EQ((vec(i4) + zero_dim(f8)).dtype(), f8);
  EXPECT_EQ((vec(f2) + zero_dim(f8)).dtype(), f2);
  EXPECT_EQ((zero_dim(i8) + zero_dim(f2)).dtype(), f2);
  EXPECT_EQ((vec(u1) - vec(i1)).dtype(), i2);
  EXPECT_EQ((vec(bf) * vec(f2)).dtype(), f4);
}

TEST(OpDtypes, ScalarValuesWrapInTheTensorDtype) {
  // int8 100 + 100 stays int8 and wraps; uint8 0 + (-1) wraps to 255.
  EXPECT_EQ(values<int8_t>(make<int8_t>({100}) + 100), std::vector<int8_t>{-56});
  EXPECT_EQ(values<uint8_t>(make<uint8_t>({0}) + (-1)), std::vector<uint8_t>{255});
}

TEST(OpDtypes, Division) {
  EXPECT_EQ((vec(i8) / vec(i8)).dtype(), f4);
  EXPECT_EQ((vec(b1) / 2).dtype(), f4);
  EXPECT_EQ((vec(f2) / 2).dtype(), f2);
  EXPECT_EQ(true_divide(vec(i4), 2).dtype(), f4);
  // Integer division by zero raises (as PyTorch's ZeroDivisionError): divide by ones.
  EXPECT_EQ(div(vec(i4), ones({2}, i4), "floor").dtype(), i4);
  EXPECT_EQ(div(vec(i4), 2, "trunc").dtype(), i4);
  EXPECT_EQ(floor_divide(vec(u1), ones({2}, i1)).dtype(), i2);
  EXPECT_EQ(div(vec(i4), 2.0, "floor").dtype(), f4);
}

TEST(OpDtypes, FloatOnlyMath) {
  EXPECT_EQ(exp(vec(i8)).dtype(), f4);
  EXPECT_EQ(sqrt(vec(b1)).dtype(), f4);
  EXPECT_EQ(sin(vec(f2)).dtype(), f2);
  EXPECT_EQ(sigmoid(vec(bf)).dtype(), bf);
  EXPECT_EQ(log(vec(f8)).dtype(), f8);
  EXPECT_EQ(atan2(vec(i4), vec(i4)).dtype(), f4);
  EXPECT_EQ(hypot(vec(i4), 1.0).dtype(), f4);
  EXPECT_EQ(copysign(vec(f8), vec(i4)).dtype(), f8);
}

TEST(OpDtypes, UnaryKeepsOrChangesDtype) {
  EXPECT_EQ(abs(vec(i1)).dtype(), i1);
  EXPECT_EQ(neg(vec(i2)).dtype(), i2);
  EXPECT_EQ(floor(vec(i4)).dtype(), i4);
  EXPECT_EQ(round(vec(f2)).dtype(), f2);
  EXPECT_EQ(sign(vec(b1)).dtype(), b1);
  EXPECT_EQ(isnan(vec(i4)).dtype(), b1);
  EXPECT_EQ(signbit(vec(f4)).dtype(), b1);
  EXPECT_EQ(logical_not(vec(f4)).dtype(), b1);
  EXPECT_EQ(bitwise_not(vec(u1)).dtype(), u1);
  EXPECT_EQ(relu(vec(i1)).dtype(), i1);
  EXPECT_EQ(square(vec(b1)).dtype(), i8);  // torch.square is pow(x, 2)
  EXPECT_EQ(square(vec(i2)).dtype(), i2);
}

TEST(OpDtypes, PowFollowsResultType) {
  EXPECT_EQ(pow(vec(i4), 2).dtype(), i4);
  EXPECT_EQ(pow(vec(i4), 0.5).dtype(), f4);
  EXPECT_EQ(pow(2, vec(i4)).dtype(), i4);
  EXPECT_EQ(pow(2.5, vec(i4)).dtype(), f4);
  EXPECT_EQ(pow(vec(b1), 2).dtype(), i8);
  EXPECT_EQ(pow(vec(f2), vec(f4)).dtype(), f4);
}

TEST(OpDtypes, ComparisonsLogicalBitwise) {
  EXPECT_EQ((vec(i4) < 1.5).dtype(), b1);
  EXPECT_EQ(eq(vec(f2), vec(i8)).dtype(), b1);
  EXPECT_EQ(logical_and(vec(f4), vec(i8)).dtype(), b1);
  EXPECT_EQ(logical_xor(vec(u1), 2.5).dtype(), b1);
  EXPECT_EQ((vec(u1) & vec(i1)).dtype(), i2);
  EXPECT_EQ((vec(b1) | vec(b1)).dtype(), b1);
  EXPECT_EQ((vec(b1) ^ 1).dtype(), i8);
  EXPECT_EQ((vec(i2) << 1).dtype(), i2);
  EXPECT_EQ(maximum(vec(i4), vec(f2)).dtype(), f2);
  EXPECT_EQ(fmin(vec(u1), zero_dim(i8)).dtype(), u1);
}

TEST(OpDtypes, TernaryOps) {
  Tensor cond = zeros({2}, b1);
  EXPECT_EQ(where(cond, vec(i4), 2.5).dtype(), f4);
  EXPECT_EQ(where(cond, Scalar(1), Scalar(0)).dtype(), i8);
  EXPECT_EQ(where(cond, Scalar(1.0), Scalar(0)).dtype(), f4);
  EXPECT_EQ(where(cond, vec(u1), vec(i1)).dtype(), i2);
  EXPECT_EQ(where(cond, vec(f2), zero_dim(f8)).dtype(), f2);
  EXPECT_EQ(clamp(vec(i1), 0, 10).dtype(), i1);
  EXPECT_EQ(clamp(vec(i4), 0.5).dtype(), f4);
  EXPECT_EQ(clamp(vec(f2), std::optional<Tensor>(vec(f4))).dtype(), f4);
  EXPECT_EQ(clamp(vec(i4), std::optional<Tensor>(zero_dim(i8)), std::optional<Tensor>(zero_dim(i8))).dtype(), i4);
}

TEST(OpDtypes, Reductions) {
  EXPECT_EQ(sum(vec(i1)).dtype(), i8);
  EXPECT_EQ(sum(vec(b1)).dtype(), i8);
  EXPECT_EQ(sum(vec(f2)).dtype(), f2);
  EXPECT_EQ(sum(vec(i4), kFloat64).dtype(), f8);
  EXPECT_EQ(prod(vec(b1)).dtype(), i8);
  EXPECT_EQ(prod(vec(u1), 0, false, kInt16).dtype(), i2);
  EXPECT_EQ(mean(vec(f2)).dtype(), f2);
  EXPECT_EQ(mean(vec(i4), kFloat64).dtype(), f8);
  EXPECT_EQ(amax(vec(u1)).dtype(), u1);
  EXPECT_EQ(argmax(vec(f4)).dtype(), i8);
  EXPECT_EQ(any(vec(f4)).dtype(), b1);
  EXPECT_EQ(all(vec(i4), 0).dtype(), b1);
  EXPECT_EQ(cumsum(vec(i4), 0).dtype(), i8);
  EXPECT_EQ(cumsum(vec(b1), 0).dtype(), i8);
  EXPECT_EQ(cumprod(vec(f2), 0).dtype(), f2);
  EXPECT_EQ(cumsum(vec(i4), 0, kFloat).dtype(), f4);
}

TEST(OpDtypes, JoiningAndInPlace) {
  EXPECT_EQ(cat({vec(i4), vec(f4)}).dtype(), f4);
  EXPECT_EQ(cat({vec(u1), vec(i1)}).dtype(), i2);
  EXPECT_EQ(stack({vec(b1), vec(i8)}).dtype(), i8);
  // In place keeps the destination dtype when the result casts safely.
  Tensor f = vec(f4);
  f.add_(vec(i8));
  EXPECT_EQ(f.dtype(), f4);
  Tensor h = vec(f2);
  h.mul_(zero_dim(f8));
  EXPECT_EQ(h.dtype(), f2);
}

}  // namespace
}  // namespace kiln
