// kiln/test/test_ir_shapes.cpp — shape/dtype functions: representative ops of every family.
//
// Each test builds input TensorTypes (some with symbolic sizes), checks the attributes
// against the schema as Graph::create does, and compares infer_types() with hand-derived
// results; the error cases assert the exact messages.
#include "base/error.h"
#include "ir/shape_fns.h"
#include "test_support/check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace kiln::ir {
namespace {

using ::testing::HasSubstr;
using namespace test;

const Expr s0 = Expr::symbol("s0");
const Expr s1 = Expr::symbol("s1");

TensorType T(ScalarType dt, std::vector<Expr> sizes) { return TensorType(dt, std::move(sizes)); }

TensorType infer(OpKind op, const std::vector<TensorType>& in, std::vector<AttrValue> attrs = {}) {
  AttrList a(std::move(attrs));
  check_attrs(op, a);
  std::vector<TensorType> out = infer_types(op, in, a);
  EXPECT_EQ(out.size(), 1u);
  return out.at(0);
}

std::string infer_error(OpKind op, const std::vector<TensorType>& in, std::vector<AttrValue> attrs = {}) {
  return error_of([&] { infer(op, in, std::move(attrs)); });
}

std::vector<Expr> E(std::vector<int64_t> v) { return to_exprs(v); }

// ---- unary ------------------------------------------------------------------------------------

TEST(ShapeFnUnary, KeepsTypeAndSymbolicSizes) {
  EXPECT_EQ(infer(OpKind::exp, {T(kFloat, {2, s0})}), T(kFloat, {2, s0}));
  EXPECT_EQ(infer(OpKind::neg, {T(kInt64, {3})}), T(kInt64, {3}));
  EXPECT_EQ(infer(OpKind::bitwise_not, {T(kBool, {3})}), T(kBool, {3}));
  EXPECT_EQ(infer(OpKind::abs, {T(kHalf, {})}), T(kHalf, {}));
}

TEST(ShapeFnUnary, BoolOut) {
  EXPECT_EQ(infer(OpKind::isnan, {T(kHalf, {4, 5})}), T(kBool, {4, 5}));
  EXPECT_EQ(infer(OpKind::signbit, {T(kInt32, {s0})}), T(kBool, {s0}));
  EXPECT_EQ(infer(OpKind::logical_not, {T(kFloat, {2})}), T(kBool, {2}));
}

TEST(ShapeFnUnary, DtypeTraits) {
  EXPECT_EQ(infer_error(OpKind::exp, {T(kInt64, {2})}), "[exp] expected a floating point tensor, got int64");
  EXPECT_EQ(infer_error(OpKind::sigmoid, {T(kBool, {2})}), "[sigmoid] expected a floating point tensor, got bool");
  EXPECT_EQ(infer_error(OpKind::neg, {T(kBool, {2})}), "[neg] expected a non-bool tensor, got bool");
  EXPECT_EQ(infer_error(OpKind::bitwise_not, {T(kFloat, {2})}),
            "[bitwise_not] expected an integral or bool tensor, got float32");
}

TEST(ShapeFnUnary, InputCount) {
  EXPECT_EQ(infer_error(OpKind::exp, {T(kFloat, {2}), T(kFloat, {2})}), "[exp] expected 1 tensor input, got 2");
}

// ---- binary / ternary -------------------------------------------------------------------------

TEST(ShapeFnBinary, EqualShapesAndDtypes) {
  EXPECT_EQ(infer(OpKind::add, {T(kFloat, {2, 3}), T(kFloat, {2, 3})}), T(kFloat, {2, 3}));
  EXPECT_EQ(infer(OpKind::mul, {T(kInt32, {s0, 3}), T(kInt32, {s0, 3})}), T(kInt32, {s0, 3}));
  EXPECT_EQ(infer(OpKind::lt, {T(kFloat, {4}), T(kFloat, {4})}), T(kBool, {4}));
  EXPECT_EQ(infer(OpKind::logical_and, {T(kInt64, {4}), T(kInt64, {4})}), T(kBool, {4}));
}

TEST(ShapeFnBinary, Errors) {
  EXPECT_EQ(infer_error(OpKind::add, {T(kFloat, {2, 3}), T(kFloat, {3})}),
            "[add] operands must have equal shapes, got [2, 3] and [3]");
  EXPECT_EQ(infer_error(OpKind::add, {T(kFloat, {3}), T(kInt64, {3})}),
            "[add] operands must have equal dtypes, got f32 and i64");
  EXPECT_EQ(infer_error(OpKind::sub, {T(kFloat, {s0}), T(kFloat, {s1})}),
            "[sub] operands must have equal shapes, got [s0] and [s1]");
  EXPECT_EQ(infer_error(OpKind::sub, {T(kBool, {3}), T(kBool, {3})}), "[sub] expected a non-bool tensor, got bool");
  EXPECT_EQ(infer_error(OpKind::bitwise_left_shift, {T(kBool, {3}), T(kBool, {3})}),
            "[bitwise_left_shift] expected an integral (non-bool) tensor, got bool");
  EXPECT_EQ(infer_error(OpKind::atan2, {T(kInt32, {3}), T(kInt32, {3})}),
            "[atan2] expected a floating point tensor, got int32");
  TensorType on_gpu(kFloat, {3}, Device(kCUDA, 0));
  EXPECT_EQ(infer_error(OpKind::add, {T(kFloat, {3}), on_gpu}),
            "[add] expected all tensors to be on the same device, got cpu and cuda:0");
}

TEST(ShapeFnBinary, DivRoundingMode) {
  const TensorType i = T(kInt64, {3});
  EXPECT_EQ(infer(OpKind::div, {T(kFloat, {3}), T(kFloat, {3})}, {std::monostate{}}), T(kFloat, {3}));
  EXPECT_EQ(infer(OpKind::div, {i, i}, {std::string("floor")}), i);
  EXPECT_EQ(infer(OpKind::div, {i, i}, {std::string("trunc")}), i);
  EXPECT_EQ(infer_error(OpKind::div, {i, i}, {std::monostate{}}),
            "[div] true division (rounding_mode none) expects floating point operands, got int64");
  EXPECT_EQ(infer_error(OpKind::div, {i, i}, {std::string("round")}),
            "[div] expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'round'");
}

TEST(ShapeFnTernary, WhereAndClamp) {
  EXPECT_EQ(infer(OpKind::where, {T(kBool, {2, s0}), T(kDouble, {2, s0}), T(kDouble, {2, s0})}), T(kDouble, {2, s0}));
  EXPECT_EQ(infer_error(OpKind::where, {T(kFloat, {2}), T(kFloat, {2}), T(kFloat, {2})}),
            "[where] expected condition to be a boolean tensor, but got a tensor with dtype float32");
  EXPECT_EQ(infer_error(OpKind::where, {T(kBool, {2}), T(kFloat, {2}), T(kInt32, {2})}),
            "[where] operands must have equal dtypes, got f32 and i32");
  EXPECT_EQ(infer_error(OpKind::where, {T(kBool, {3}), T(kFloat, {2}), T(kFloat, {2})}),
            "[where] operands must have equal shapes, got [3] and [2]");
  EXPECT_EQ(infer(OpKind::clamp, {T(kInt32, {4}), T(kInt32, {4}), T(kInt32, {4})}), T(kInt32, {4}));
  EXPECT_EQ(infer_error(OpKind::clamp, {T(kBool, {4}), T(kBool, {4}), T(kBool, {4})}),
            "[clamp] expected a non-bool tensor, got bool");
}

// ---- casts ------------------------------------------------------------------------------------

TEST(ShapeFnCast, ConvertAndClone) {
  EXPECT_EQ(infer(OpKind::convert_element_type, {T(kFloat, {2, s0})}, {kBFloat16}), T(kBFloat16, {2, s0}));
  EXPECT_EQ(infer(OpKind::clone, {T(kUInt8, {7})}), T(kUInt8, {7}));
}

// ---- reductions and scans -----------------------------------------------------------------------

TEST(ShapeFnReduction, DimsAndKeepdim) {
  const TensorType x = T(kFloat, {2, 3, 4});
  EXPECT_EQ(infer(OpKind::sum, {x}, {Ints{1}, false}), T(kFloat, {2, 4}));
  EXPECT_EQ(infer(OpKind::sum, {x}, {Ints{1}, true}), T(kFloat, {2, 1, 4}));
  EXPECT_EQ(infer(OpKind::prod, {x}, {Ints{0, 2}, false}), T(kFloat, {3}));
  EXPECT_EQ(infer(OpKind::amax, {x}, {Ints{0, 1, 2}, false}), T(kFloat, {}));
  EXPECT_EQ(infer(OpKind::sum, {x}, {Ints{}, false}), x);  // [] reduces nothing
  EXPECT_EQ(infer(OpKind::any, {x}, {Ints{2}, true}), T(kBool, {2, 3, 1}));
  EXPECT_EQ(infer(OpKind::all, {T(kInt8, {5})}, {Ints{0}, false}), T(kBool, {}));
  EXPECT_EQ(infer(OpKind::amin, {T(kBool, {5})}, {Ints{0}, false}), T(kBool, {}));
  EXPECT_EQ(infer(OpKind::sum, {T(kFloat, {s0, 8})}, {Ints{1}, false}), T(kFloat, {s0}));
}

TEST(ShapeFnReduction, BadDims) {
  const TensorType x = T(kFloat, {2, 3});
  EXPECT_EQ(infer_error(OpKind::sum, {x}, {Ints{1, 0}, false}),
            "[sum] dims must be normalized (each in [0, 2), sorted, unique), got [1, 0]");
  EXPECT_EQ(infer_error(OpKind::sum, {x}, {Ints{1, 1}, false}),
            "[sum] dims must be normalized (each in [0, 2), sorted, unique), got [1, 1]");
  EXPECT_EQ(infer_error(OpKind::prod, {x}, {Ints{-1}, false}),
            "[prod] dims must be normalized (each in [0, 2), sorted, unique), got [-1]");
  EXPECT_EQ(infer_error(OpKind::amax, {T(kFloat, {2, 0})}, {Ints{1}, false}),
            "[amax] Expected reduction dim 1 to have non-zero size.");
  // sum of an empty dim is fine (0).
  EXPECT_EQ(infer(OpKind::sum, {T(kFloat, {2, 0})}, {Ints{1}, false}), T(kFloat, {2}));
}

TEST(ShapeFnReduction, ArgmaxArgmin) {
  const TensorType x = T(kFloat, {2, 3, 4});
  EXPECT_EQ(infer(OpKind::argmax, {x}, {std::monostate{}, false}), T(kInt64, {}));
  EXPECT_EQ(infer(OpKind::argmax, {x}, {std::monostate{}, true}), T(kInt64, {1, 1, 1}));
  EXPECT_EQ(infer(OpKind::argmin, {x}, {int64_t{1}, false}), T(kInt64, {2, 4}));
  EXPECT_EQ(infer(OpKind::argmin, {x}, {int64_t{2}, true}), T(kInt64, {2, 3, 1}));
  EXPECT_EQ(infer(OpKind::argmax, {T(kFloat, {})}, {int64_t{0}, false}), T(kInt64, {}));
  EXPECT_THAT(infer_error(OpKind::argmax, {T(kBool, {3})}, {int64_t{0}, false}),
              HasSubstr("[argmax] expected a non-bool tensor, got bool"));
  EXPECT_EQ(infer_error(OpKind::argmax, {x}, {int64_t{3}, false}),
            "[argmax] dim 3 out of range for a tensor of rank 3 (IR dims are normalized to [0, 3))");
  EXPECT_EQ(infer_error(OpKind::argmax, {T(kFloat, {0, 2})}, {std::monostate{}, false}),
            "[argmax] Expected reduction dim to be specified for input.numel() == 0.");
}

TEST(ShapeFnScan, CumsumCumprod) {
  EXPECT_EQ(infer(OpKind::cumsum, {T(kInt64, {s0, 3})}, {int64_t{0}}), T(kInt64, {s0, 3}));
  EXPECT_EQ(infer(OpKind::cumprod, {T(kFloat, {})}, {int64_t{0}}), T(kFloat, {}));
  EXPECT_EQ(infer_error(OpKind::cumsum, {T(kFloat, {2, 3})}, {int64_t{2}}),
            "[cumsum] dim 2 out of range for a tensor of rank 2 (IR dims are normalized to [0, 2))");
}

// ---- views ------------------------------------------------------------------------------------

TEST(ShapeFnView, Reshape) {
  EXPECT_EQ(infer(OpKind::reshape, {T(kFloat, {2, 6})}, {E({3, 4})}), T(kFloat, {3, 4}));
  EXPECT_EQ(infer(OpKind::reshape, {T(kFloat, {s0, 4})}, {std::vector<Expr>{s0 * 4}}), T(kFloat, {s0 * 4}));
  EXPECT_EQ(infer(OpKind::reshape, {T(kFloat, {s0 * 4})}, {std::vector<Expr>{s0, 2, 2}}), T(kFloat, {s0, 2, 2}));
  EXPECT_EQ(infer_error(OpKind::reshape, {T(kFloat, {3, 4})}, {E({3, 5})}),
            "[reshape] shape '[3, 5]' is invalid for input of size 12");
  // Symbolic numels are compared where their difference folds to a constant.
  EXPECT_EQ(infer_error(OpKind::reshape, {T(kFloat, {s0, 4})}, {std::vector<Expr>{s0 * 4 + 1}}),
            "[reshape] shape '[" + (s0 * 4 + 1).str() + "]' is invalid for input of size " + (s0 * 4).str());
  EXPECT_EQ(infer_error(OpKind::reshape, {T(kFloat, {12})}, {E({-1, 3})}),
            "[reshape] sizes (with -1 resolved by the frontend) must be non-negative, got -1");
}

TEST(ShapeFnView, Expand) {
  EXPECT_EQ(infer(OpKind::expand, {T(kFloat, {3, 1})}, {E({2, 3, 4})}), T(kFloat, {2, 3, 4}));
  EXPECT_EQ(infer(OpKind::expand, {T(kFloat, {1, s0})}, {std::vector<Expr>{5, s0}}), T(kFloat, {5, s0}));
  EXPECT_EQ(infer(OpKind::expand, {T(kFloat, {1})}, {std::vector<Expr>{s1, s0}}), T(kFloat, {s1, s0}));
  EXPECT_EQ(infer(OpKind::expand, {T(kFloat, {})}, {E({2, 2})}), T(kFloat, {2, 2}));
  EXPECT_EQ(infer_error(OpKind::expand, {T(kFloat, {3, 2})}, {E({3, 4})}),
            "[expand] The expanded size of the tensor (4) must match the existing size (2) at non-singleton "
            "dimension 1.  Target sizes: [3, 4].  Tensor sizes: [3, 2]");
  EXPECT_EQ(infer_error(OpKind::expand, {T(kFloat, {2, 3})}, {E({3})}),
            "[expand] the number of sizes provided (1) must be greater or equal to the number of dimensions in the "
            "tensor (2)");
}

TEST(ShapeFnView, Permute) {
  EXPECT_EQ(infer(OpKind::permute, {T(kFloat, {2, s0, 4})}, {Ints{2, 0, 1}}), T(kFloat, {4, 2, s0}));
  EXPECT_EQ(infer_error(OpKind::permute, {T(kFloat, {2, 3})}, {Ints{0, 0}}),
            "[permute] dims [0, 0] is not a permutation of [0, 2)");
  EXPECT_EQ(infer_error(OpKind::permute, {T(kFloat, {2, 3})}, {Ints{0}}),
            "[permute] dims [0] is not a permutation of [0, 2)");
}

TEST(ShapeFnView, Slice) {
  // [10][1:8:3] -> elements 1, 4, 7.
  EXPECT_EQ(infer(OpKind::slice, {T(kFloat, {10, 2})}, {int64_t{0}, Expr(1), Expr(8), Expr(3)}), T(kFloat, {3, 2}));
  EXPECT_EQ(infer(OpKind::slice, {T(kFloat, {10})}, {int64_t{0}, Expr(4), Expr(4), Expr(1)}), T(kFloat, {0}));
  // Symbolic: x[1:s0:2] has (s0 - 1 + 1) // 2 = s0 // 2 elements.
  EXPECT_EQ(infer(OpKind::slice, {T(kFloat, {3, s0})}, {int64_t{1}, Expr(1), s0, Expr(2)}),
            T(kFloat, {3, floordiv(s0, Expr(2))}));
  EXPECT_EQ(infer(OpKind::slice, {T(kFloat, {s0})}, {int64_t{0}, Expr(0), s0, Expr(1)}), T(kFloat, {s0}));
  // A step larger than the extent keeps one element (or none); no (end - start + step - 1) overflow.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(infer(OpKind::slice, {T(kFloat, {2, 3})}, {int64_t{1}, Expr(0), Expr(3), Expr(kMax)}), T(kFloat, {2, 1}));
  EXPECT_EQ(infer(OpKind::slice, {T(kFloat, {2, 3})}, {int64_t{1}, Expr(3), Expr(3), Expr(kMax)}), T(kFloat, {2, 0}));
  EXPECT_EQ(infer(OpKind::slice, {T(kFloat, {2, 3})}, {int64_t{1}, Expr(2), Expr(3), Expr(kMax)}), T(kFloat, {2, 1}));
  // Symbolic extents: (end - start + step - 1)//step while its constant term fits, else
  // (end - start - 1)//step + 1 (both are 1 for 0 < s0 + 5 <= kMax).
  EXPECT_EQ(infer(OpKind::slice, {T(kFloat, {s0})}, {int64_t{0}, Expr(0), s0, Expr(kMax)}),
            T(kFloat, {floordiv(s0 + Expr(kMax - 1), Expr(kMax))}));
  EXPECT_EQ(infer(OpKind::slice, {T(kFloat, {s0 + 5})}, {int64_t{0}, Expr(0), s0 + 5, Expr(kMax)}),
            T(kFloat, {floordiv(s0 + Expr(4), Expr(kMax)) + Expr(1)}));
  EXPECT_EQ(infer_error(OpKind::slice, {T(kFloat, {4})}, {int64_t{0}, Expr(3), Expr(2), Expr(1)}),
            "[slice] expected 0 <= start <= end <= size (bounds are clamped by the frontend), got start 3, end 2 for "
            "size 4");
  EXPECT_EQ(infer_error(OpKind::slice, {T(kFloat, {s0})}, {int64_t{0}, Expr(0), s0 + 1, Expr(1)}),
            "[slice] expected 0 <= start <= end <= size (bounds are clamped by the frontend), got start 0, end s0 + 1 "
            "for size s0");
  EXPECT_EQ(infer_error(OpKind::slice, {T(kFloat, {4})}, {int64_t{0}, Expr(0), Expr(2), Expr(0)}),
            "[slice] slice step must be positive, got 0");
  EXPECT_EQ(infer_error(OpKind::slice, {T(kFloat, {})}, {int64_t{0}, Expr(0), Expr(0), Expr(1)}),
            "[slice] slice() cannot be applied to a 0-dim tensor.");
}

TEST(ShapeFnView, SqueezeUnsqueeze) {
  EXPECT_EQ(infer(OpKind::squeeze, {T(kFloat, {1, s0, 1})}, {Ints{0, 2}}), T(kFloat, {s0}));
  EXPECT_EQ(infer(OpKind::squeeze, {T(kFloat, {1, 3})}, {Ints{}}), T(kFloat, {1, 3}));
  EXPECT_EQ(infer_error(OpKind::squeeze, {T(kFloat, {1, 3})}, {Ints{1}}),
            "[squeeze] dimension 1 has size 3; only dimensions of size 1 can be squeezed");
  EXPECT_EQ(infer_error(OpKind::squeeze, {T(kFloat, {s0})}, {Ints{0}}),
            "[squeeze] dimension 0 has size s0; only dimensions of size 1 can be squeezed");
  EXPECT_EQ(infer(OpKind::unsqueeze, {T(kFloat, {2, s0})}, {int64_t{2}}), T(kFloat, {2, s0, 1}));
  EXPECT_EQ(infer(OpKind::unsqueeze, {T(kFloat, {})}, {int64_t{0}}), T(kFloat, {1}));
  EXPECT_EQ(infer_error(OpKind::unsqueeze, {T(kFloat, {2})}, {int64_t{2}}),
            "[unsqueeze] dim 2 out of range for a tensor of rank 1 (IR dims are normalized to [0, 1])");
}

TEST(ShapeFnView, Diagonal) {
  EXPECT_EQ(infer(OpKind::diagonal, {T(kFloat, {3, 4})}, {int64_t{0}, int64_t{0}, int64_t{1}}), T(kFloat, {3}));
  EXPECT_EQ(infer(OpKind::diagonal, {T(kFloat, {3, 4})}, {int64_t{1}, int64_t{0}, int64_t{1}}), T(kFloat, {3}));
  EXPECT_EQ(infer(OpKind::diagonal, {T(kFloat, {3, 4})}, {int64_t{2}, int64_t{0}, int64_t{1}}), T(kFloat, {2}));
  EXPECT_EQ(infer(OpKind::diagonal, {T(kFloat, {3, 4})}, {int64_t{-2}, int64_t{0}, int64_t{1}}), T(kFloat, {1}));
  EXPECT_EQ(infer(OpKind::diagonal, {T(kFloat, {3, 4})}, {int64_t{7}, int64_t{0}, int64_t{1}}), T(kFloat, {0}));
  EXPECT_EQ(infer(OpKind::diagonal, {T(kFloat, {2, 3, 4})}, {int64_t{0}, int64_t{0}, int64_t{2}}), T(kFloat, {3, 2}));
  EXPECT_EQ(infer(OpKind::diagonal, {T(kFloat, {s0, 5})}, {int64_t{1}, int64_t{0}, int64_t{1}}),
            T(kFloat, {max(min(s0, Expr(4)), Expr(0))}));
  EXPECT_EQ(infer_error(OpKind::diagonal, {T(kFloat, {3, 3})}, {int64_t{0}, int64_t{1}, int64_t{1}}),
            "[diagonal] diagonal dimensions cannot be identical 1, 1");
}

TEST(ShapeFnView, AsStrided) {
  EXPECT_EQ(infer(OpKind::as_strided, {T(kFloat, {9})}, {E({2, 2}), E({3, 1}), Expr(1)}), T(kFloat, {2, 2}));
  EXPECT_EQ(infer_error(OpKind::as_strided, {T(kFloat, {9})}, {E({2, 2}), E({3}), Expr(0)}),
            "[as_strided] mismatch in length of strides and shape: 2 sizes and 1 strides");
  EXPECT_EQ(infer_error(OpKind::as_strided, {T(kFloat, {9})}, {E({2}), E({-1}), Expr(0)}),
            "[as_strided] Negative strides are not supported at the moment, got strides: [-1]");
}

// ---- data movement and indexing ------------------------------------------------------------------

TEST(ShapeFnShape, Cat) {
  EXPECT_EQ(infer(OpKind::cat, {T(kFloat, {2, 3}), T(kFloat, {2, 5})}, {int64_t{1}}), T(kFloat, {2, 8}));
  EXPECT_EQ(infer(OpKind::cat, {T(kFloat, {s0, 3}), T(kFloat, {s1, 3}), T(kFloat, {1, 3})}, {int64_t{0}}),
            T(kFloat, {s0 + s1 + 1, 3}));
  EXPECT_EQ(infer_error(OpKind::cat, {T(kFloat, {2, 3}), T(kFloat, {3, 3})}, {int64_t{1}}),
            "[cat] Sizes of tensors must match except in dimension 1. Expected size 2 but got size 3 for tensor number "
            "1 in the list.");
  EXPECT_THAT(infer_error(OpKind::cat, {T(kFloat, {2}), T(kInt64, {2})}, {int64_t{0}}),
              HasSubstr("[cat] expected all tensors to have the same dtype"));
  EXPECT_EQ(infer_error(OpKind::cat, {T(kFloat, {2}), T(kFloat, {2, 1})}, {int64_t{0}}),
            "[cat] Tensors must have same number of dimensions: got 1 and 2");
  EXPECT_EQ(infer_error(OpKind::cat, {T(kFloat, {})}, {int64_t{0}}),
            "[cat] zero-dimensional tensor (at position 0) cannot be concatenated");
  EXPECT_EQ(infer_error(OpKind::cat, {}, {int64_t{0}}), "[cat] expected a non-empty list of tensors");
}

TEST(ShapeFnShape, ConstantPad) {
  EXPECT_EQ(infer(OpKind::constant_pad, {T(kFloat, {2, 3})}, {Ints{1, 2}, Scalar(0.0)}), T(kFloat, {2, 6}));
  EXPECT_EQ(infer(OpKind::constant_pad, {T(kFloat, {2, 3})}, {Ints{1, 1, -1, 0}, Scalar(1)}), T(kFloat, {1, 5}));
  EXPECT_EQ(infer(OpKind::constant_pad, {T(kFloat, {s0})}, {Ints{2, 0}, Scalar(1)}), T(kFloat, {s0 + 2}));
  EXPECT_EQ(infer_error(OpKind::constant_pad, {T(kFloat, {2, 2})}, {Ints{-3, 0}, Scalar(0)}),
            "[constant_pad] The input size 2, plus negative padding -3 and 0 resulted in a negative output size, which "
            "is invalid. Check dimension 1 of your input.");
  EXPECT_EQ(infer_error(OpKind::constant_pad, {T(kFloat, {2, 2})}, {Ints{1, 2, 3}, Scalar(0)}),
            "[constant_pad] Length of pad must be even but instead it equals 3");
}

TEST(ShapeFnIndex, Gather) {
  EXPECT_EQ(infer(OpKind::gather, {T(kHalf, {3, 4}), T(kInt64, {2, 4})}, {int64_t{0}}), T(kHalf, {2, 4}));
  EXPECT_EQ(infer(OpKind::gather, {T(kFloat, {3, 4}), T(kInt64, {3, 9})}, {int64_t{1}}), T(kFloat, {3, 9}));
  EXPECT_EQ(infer(OpKind::gather, {T(kFloat, {3, 4}), T(kInt32, {2, 4})}, {int64_t{0}}), T(kFloat, {2, 4}));
  EXPECT_EQ(infer_error(OpKind::gather, {T(kFloat, {3, 4}), T(kInt16, {2, 4})}, {int64_t{0}}),
            "[gather] gather(): Expected dtype int32/int64 for index, got int16");
  EXPECT_EQ(infer_error(OpKind::gather, {T(kFloat, {3, 4}), T(kInt64, {2})}, {int64_t{0}}),
            "[gather] Index tensor must have the same number of dimensions as input tensor");
  EXPECT_EQ(infer_error(OpKind::gather, {T(kFloat, {3, 4}), T(kInt64, {2, 5})}, {int64_t{0}}),
            "[gather] Size does not match at dimension 1 expected index [2, 5] to be no larger than self [3, 4] apart "
            "from dimension 0");
}

TEST(ShapeFnIndex, ScatterAndIndexSelect) {
  const TensorType self = T(kFloat, {3, 4});
  EXPECT_EQ(infer(OpKind::scatter, {self, T(kInt64, {2, 4}), T(kFloat, {2, 5})}, {int64_t{0}}), self);
  EXPECT_EQ(infer(OpKind::scatter_add, {self, T(kInt64, {3, 2}), T(kFloat, {3, 2})}, {int64_t{1}}), self);
  EXPECT_EQ(infer_error(OpKind::scatter, {self, T(kInt64, {2, 4}), T(kDouble, {2, 4})}, {int64_t{0}}),
            "[scatter] Expected self.dtype to be equal to src.dtype, got f32 and f64");
  EXPECT_EQ(infer_error(OpKind::scatter_add, {self, T(kInt64, {2, 4}), T(kFloat, {2, 3})}, {int64_t{0}}),
            "[scatter_add] Expected index [2, 4] to be no larger than self [3, 4] apart from dimension 0 and to be "
            "no larger size than src [2, 3]");
  EXPECT_EQ(infer(OpKind::index_select, {self, T(kInt64, {5})}, {int64_t{1}}), T(kFloat, {3, 5}));
  EXPECT_EQ(infer(OpKind::index_select, {T(kFloat, {s0, 2}), T(kInt64, {s1})}, {int64_t{0}}), T(kFloat, {s1, 2}));
  EXPECT_EQ(infer(OpKind::index_select, {self, T(kInt64, {})}, {int64_t{0}}), T(kFloat, {1, 4}));
  EXPECT_EQ(infer_error(OpKind::index_select, {self, T(kInt64, {2, 2})}, {int64_t{0}}),
            "[index_select] Index is supposed to be a vector, got a tensor of rank 2");
}

// ---- factories, random, matmul -------------------------------------------------------------------

TEST(ShapeFnFactory, IotaFull) {
  EXPECT_EQ(infer(OpKind::iota, {}, {s0, Scalar(0), Scalar(2), kInt64, Device()}), T(kInt64, {s0}));
  EXPECT_EQ(infer(OpKind::full, {}, {E({2, 3}), Scalar(1.5), kDouble, Device(kCUDA, 1)}),
            TensorType(kDouble, {2, 3}, Device(kCUDA, 1)));
  EXPECT_EQ(infer_error(OpKind::full, {}, {E({2, -3}), Scalar(1.5), kDouble, Device()}),
            "[full] sizes must be non-negative, got -3");
}

TEST(ShapeFnRandom, UniformNormal) {
  EXPECT_EQ(infer(OpKind::uniform, {}, {E({4}), 0.0, 1.0, int64_t{7}, int64_t{0}, kFloat, Device()}), T(kFloat, {4}));
  EXPECT_EQ(infer(OpKind::normal, {}, {std::vector<Expr>{s0}, 0.0, 2.0, int64_t{7}, int64_t{0}, kHalf, Device()}),
            T(kHalf, {s0}));
  EXPECT_EQ(infer_error(OpKind::uniform, {}, {E({4}), 0.0, 1.0, int64_t{7}, int64_t{0}, kInt64, Device()}),
            "[uniform] expected a floating point dtype, got int64");
  EXPECT_EQ(infer_error(OpKind::normal, {}, {E({4}), 0.0, -1.0, int64_t{7}, int64_t{0}, kFloat, Device()}),
            "[normal] expects std >= 0.0, but found std -1");
}

TEST(ShapeFnMatmul, MmBmm) {
  EXPECT_EQ(infer(OpKind::mm, {T(kFloat, {2, 3}), T(kFloat, {3, 5})}), T(kFloat, {2, 5}));
  EXPECT_EQ(infer(OpKind::mm, {T(kFloat, {s0, 3}), T(kFloat, {3, s1})}), T(kFloat, {s0, s1}));
  EXPECT_EQ(infer_error(OpKind::mm, {T(kFloat, {2, 3}), T(kFloat, {4, 5})}),
            "[mm] shapes [2, 3] and [4, 5] cannot be multiplied");
  EXPECT_EQ(infer_error(OpKind::mm, {T(kFloat, {2, 3}), T(kDouble, {3, 5})}),
            "[mm] operands must have equal dtypes, got f32 and f64");
  EXPECT_EQ(infer_error(OpKind::mm, {T(kFloat, {2, 3, 1}), T(kFloat, {3, 5})}),
            "[mm] expected 2-D tensors, got 3-D and 2-D");
  EXPECT_EQ(infer(OpKind::bmm, {T(kInt64, {4, 2, 3}), T(kInt64, {4, 3, 5})}), T(kInt64, {4, 2, 5}));
  EXPECT_EQ(infer_error(OpKind::bmm, {T(kFloat, {4, 2, 3}), T(kFloat, {5, 3, 5})}),
            "[bmm] batch sizes must be equal, got 4 and 5");
  EXPECT_EQ(infer_error(OpKind::bmm, {T(kFloat, {4, 2, 3}), T(kFloat, {4, 2, 5})}),
            "[bmm] shapes [4, 2, 3] and [4, 2, 5] cannot be multiplied");
}

// ---- attributes -------------------------------------------------------------------------------

TEST(ShapeFnAttrs, CountAndTypes) {
  EXPECT_NO_THROW(check_attrs(OpKind::sum, AttrList({Ints{0}, true})));
  EXPECT_EQ(error_of([] { check_attrs(OpKind::sum, AttrList({Ints{0}})); }), "[sum] expected 2 attributes, got 1");
  EXPECT_EQ(error_of([] {
              check_attrs(OpKind::sum, AttrList({Ints{0}, int64_t{1}}));
            }),
            "[sum] attribute 'keepdim' expects bool, got int 1");
  EXPECT_EQ(error_of([] {
              check_attrs(OpKind::slice, AttrList({int64_t{0}, int64_t{0}, Expr(1), Expr(1)}));
            }),
            "[slice] attribute 'start' expects SymInt, got int 0");
  EXPECT_EQ(error_of([] { check_attrs(OpKind::exp, AttrList({true})); }), "[exp] expected 0 attributes, got 1");
  EXPECT_NO_THROW(check_attrs(OpKind::argmax, AttrList({std::monostate{}, false})));
}

}  // namespace
}  // namespace kiln::ir
