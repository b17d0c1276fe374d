// kiln/test/test_ir_registry.cpp — every op in ir/ops.def has a parsed schema, a shape
// function, and a reference implementation (prims) or a decomposition (every other op) whose
// results agree with it.
//
// Each family gets sample arguments below (a switch with no default, so a new family fails to
// compile until it has samples). Every op is run through infer_types and the interpreter, and
// the interpreter's outputs must have exactly the inferred dtypes and sizes.
#include "base/error.h"
#include "ir/op.h"
#include "ir/shape_fns.h"
#include "frontend/decompositions.h"
#include "runtime/interpreter/interpreter.h"
#include "test_support/make.h"

#include <gtest/gtest.h>

#include <optional>

namespace kiln {
namespace {

using ir::AttrValue;
using ir::Expr;
using ir::OpKind;
using test::make;

struct Sample {
  std::vector<Tensor> inputs;
  std::vector<AttrValue> attrs;
};

Tensor f32(std::vector<int64_t> shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<float> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(0.25f + 0.125f * static_cast<float>(i));
  return make<float>(v, std::move(shape));
}

Tensor i64(std::vector<int64_t> values, std::vector<int64_t> shape) { return make<int64_t>(values, std::move(shape)); }

using v64 = std::vector<int64_t>;

// Samples for the ops whose family has no common form (every composite family's op, and the
// Index, Sort and Norm ops shaped by their decomposition); nullopt for the rest.
std::optional<Sample> sample_for_kind(OpKind k) {
  switch (k) {
      case OpKind::softmax:
      case OpKind::log_softmax: return Sample{{f32({2, 3})}, {int64_t{1}, kFloat}};
      case OpKind::layer_norm: return Sample{{f32({2, 3}), f32({3}), f32({3})}, {std::vector<int64_t>{3}, 1e-5}};
      case OpKind::rms_norm: return Sample{{f32({2, 3}), f32({3})}, {std::vector<int64_t>{3}, 1e-6}};
      case OpKind::gelu: return Sample{{f32({2, 3})}, {std::string("tanh")}};
      case OpKind::silu:
      case OpKind::relu: return Sample{{f32({2, 3})}, {}};
      case OpKind::mean: return Sample{{f32({2, 3})}, {std::vector<int64_t>{1}, false, kFloat}};
      case OpKind::var: return Sample{{f32({2, 3})}, {std::vector<int64_t>{1}, Scalar(int64_t{1}), true}};
      case OpKind::linear: return Sample{{f32({2, 3}), f32({4, 3}), f32({4})}, {}};
      case OpKind::cross_entropy:
        return Sample{{f32({2, 3}), i64({2, 0}, {2})}, {std::string("mean"), int64_t{-100}, 0.1}};
      case OpKind::matmul: return Sample{{f32({2, 1, 3}), f32({2, 3, 4})}, {}};
      case OpKind::elu: return Sample{{f32({2, 3})}, {1.0, 1.0, 1.0}};
      case OpKind::leaky_relu: return Sample{{f32({2, 3})}, {0.01}};
      case OpKind::hardtanh: return Sample{{f32({2, 3})}, {Scalar(-1.0), Scalar(1.0)}};
      case OpKind::hardswish:
      case OpKind::hardsigmoid:
      case OpKind::mish: return Sample{{f32({2, 3})}, {}};
      case OpKind::softplus: return Sample{{f32({2, 3})}, {1.0, 20.0}};
      case OpKind::logsumexp: return Sample{{f32({2, 3})}, {std::vector<int64_t>{1}, false}};
      case OpKind::lerp: return Sample{{f32({2, 3}), f32({2, 3}), f32({2, 3})}, {}};
      case OpKind::addcmul:
      case OpKind::addcdiv: return Sample{{f32({2, 3}), f32({2, 3}), f32({2, 3})}, {Scalar(0.5)}};
      case OpKind::nan_to_num: return Sample{{f32({2, 3})}, {0.0, 1e30, -1e30}};
      case OpKind::tril:
      case OpKind::triu: return Sample{{f32({2, 3})}, {int64_t{0}}};
      case OpKind::addmm: return Sample{{f32({2, 4}), f32({2, 3}), f32({3, 4})}, {Scalar(0.5), Scalar(2.0)}};
      case OpKind::baddbmm:
        return Sample{{f32({2, 2, 4}), f32({2, 2, 3}), f32({2, 3, 4})}, {Scalar(0.5), Scalar(2.0)}};
      case OpKind::addmm_activation: return Sample{{f32({2, 4}), f32({2, 3}), f32({3, 4})}, {std::string("gelu_tanh")}};
      // Core ops shaped by their decomposition.
      case OpKind::max_pool2d_with_indices:
        return Sample{{f32({1, 2, 4, 4})}, {v64{2, 2}, v64{2, 2}, v64{0, 0}, v64{1, 1}, false}};
      case OpKind::max_pool3d_with_indices:
        return Sample{{f32({1, 2, 2, 4, 4})}, {v64{1, 2, 2}, v64{1, 2, 2}, v64{0, 0, 0}, v64{1, 1, 1}, false}};
      case OpKind::avg_pool2d: return Sample{{f32({1, 2, 4, 4})}, {v64{2, 2}, v64{2, 2}, v64{1, 1}, true, false, int64_t{0}}};
      case OpKind::avg_pool3d:
        return Sample{{f32({1, 2, 2, 4, 4})}, {v64{1, 2, 2}, v64{1, 2, 2}, v64{0, 0, 0}, false, true, int64_t{3}}};
      case OpKind::adaptive_avg_pool2d: return Sample{{f32({1, 2, 5, 4})}, {v64{2, 3}}};
      case OpKind::adaptive_avg_pool3d: return Sample{{f32({1, 2, 2, 5, 4})}, {v64{1, 2, 3}}};
      case OpKind::native_layer_norm: return Sample{{f32({2, 3}), f32({3}), f32({3})}, {v64{3}, 1e-5}};
      case OpKind::native_group_norm:
        return Sample{{f32({2, 4, 3}), f32({4}), f32({4})}, {int64_t{2}, int64_t{4}, int64_t{3}, int64_t{2}, 1e-5}};
      case OpKind::no_grad_copy: return Sample{{f32({2, 3}), f32({2, 3})}, {}};
      case OpKind::embedding: return Sample{{f32({4, 3}), i64({3, 0, 1}, {3})}, {int64_t{-1}, false}};
      case OpKind::sort: return Sample{{f32({2, 3})}, {int64_t{1}, true}};
      case OpKind::topk: return Sample{{f32({2, 3})}, {int64_t{2}, int64_t{1}, true, true}};
      case OpKind::grid_sampler_2d: return Sample{{f32({1, 2, 3, 4}), f32({1, 2, 2, 2})}, {int64_t{0}, int64_t{1}, false}};
      case OpKind::col2im:
        return Sample{{f32({1, 8, 4})}, {v64{3, 3}, v64{2, 2}, v64{1, 1}, v64{0, 0}, v64{1, 1}}};
      case OpKind::masked_scatter:
        return Sample{{f32({2, 3}), Tensor(make<bool>({true, false, true, false, false, true}, {2, 3})), f32({4})}, {}};
      case OpKind::slice_scatter: return Sample{{f32({2, 5}), f32({2, 2})}, {int64_t{1}, int64_t{1}, int64_t{5}, int64_t{2}}};
      case OpKind::select_scatter: return Sample{{f32({2, 3}), f32({3})}, {int64_t{0}, int64_t{1}}};
      case OpKind::flip: return Sample{{f32({2, 3})}, {v64{0, 1}}};
      case OpKind::repeat: return Sample{{f32({2, 3})}, {v64{2, 1, 2}}};
      case OpKind::reflection_pad1d:
      case OpKind::replication_pad1d: return Sample{{f32({1, 2, 4})}, {v64{1, 2}}};
      case OpKind::reflection_pad2d:
      case OpKind::replication_pad2d: return Sample{{f32({1, 2, 4, 4})}, {v64{1, 2, 0, 1}}};
      case OpKind::reflection_pad3d:
      case OpKind::replication_pad3d: return Sample{{f32({1, 2, 3, 4, 4})}, {v64{1, 1, 0, 1, 1, 0}}};
      case OpKind::cdist: return Sample{{f32({3, 4}), f32({2, 4})}, {2.0, int64_t{0}}};
      case OpKind::pdist: return Sample{{f32({3, 4})}, {1.0}};
      case OpKind::scaled_dot_product_attention:
        return Sample{{f32({2, 3, 4}), f32({2, 5, 4}), f32({2, 5, 6})}, {false, 0.5}};
      case OpKind::scaled_dot_product_attention_backward:  // grad_out, q, k, v, out of the sample above
        return Sample{{f32({2, 3, 6}), f32({2, 3, 4}), f32({2, 5, 4}), f32({2, 5, 6}), f32({2, 3, 6})}, {false, 0.5}};
      case OpKind::native_batch_norm:
        return Sample{{f32({2, 3, 2}), f32({3}), f32({3}), f32({3}), f32({3})}, {true, 0.1, 1e-5}};
      case OpKind::native_dropout: return Sample{{f32({2, 3})}, {0.5, true, int64_t{7}, int64_t{0}}};
      case OpKind::index: return Sample{{f32({2, 3}), i64({2, 0}, {2})}, {v64{1}}};
      case OpKind::index_put: return Sample{{f32({2, 3}), f32({2, 2}), i64({2, 0}, {2})}, {v64{1}, true}};
      case OpKind::embedding_bag:
        return Sample{{f32({4, 3}), i64({3, 0, 1, 3}, {4}), i64({0, 1}, {2})}, {int64_t{1}, false, int64_t{-1}}};
      case OpKind::upsample_nearest2d: return Sample{{f32({1, 2, 2, 3})}, {v64{3, 5}, 0.0, 0.0}};
      case OpKind::upsample_bilinear2d: return Sample{{f32({1, 2, 2, 3})}, {v64{3, 5}, true, 0.0, 0.0}};
      // The backward ops.
      case OpKind::convolution_backward:  // convolution's sample above: [1, 2, 5] * [3, 2, 2] -> [1, 3, 3]
        return Sample{{f32({1, 3, 3}), f32({1, 2, 5}), f32({3, 2, 2})},
                      {v64{2}, v64{1}, v64{1}, false, v64{0}, int64_t{1}, v64{1, 1, 1}}};
      case OpKind::convolution_backward_weight:  // the same convolution's weight: [3, 2, 2]
        return Sample{{f32({1, 3, 3}), f32({1, 2, 5})}, {v64{2}, v64{2}, v64{1}, v64{1}, false, int64_t{1}}};
      case OpKind::max_pool2d_with_indices_backward:
        return Sample{{f32({1, 2, 2, 2}), f32({1, 2, 4, 4}), i64({0, 2, 8, 15, 1, 3, 9, 14}, {1, 2, 2, 2})},
                      {v64{2, 2}, v64{2, 2}, v64{0, 0}, v64{1, 1}, false}};
      case OpKind::avg_pool2d_backward:
        return Sample{{f32({1, 2, 3, 3}), f32({1, 2, 4, 4})}, {v64{2, 2}, v64{2, 2}, v64{1, 1}, true, false, int64_t{0}}};
      case OpKind::adaptive_avg_pool2d_backward: return Sample{{f32({1, 2, 2, 3}), f32({1, 2, 5, 4})}, {}};
      case OpKind::native_layer_norm_backward:
        return Sample{{f32({2, 3}), f32({2, 3}), f32({2, 1}), f32({2, 1}), f32({3})}, {v64{3}, v64{1, 1, 1}}};
      case OpKind::native_group_norm_backward:
        return Sample{{f32({2, 4, 3}), f32({2, 4, 3}), f32({2, 2}), f32({2, 2}), f32({4})},
                      {int64_t{2}, int64_t{4}, int64_t{3}, int64_t{2}, v64{1, 0, 1}}};
      case OpKind::embedding_dense_backward:
        return Sample{{f32({3, 2}), i64({3, 0, 3}, {3})}, {Expr(5), int64_t{0}, true}};
    default: return std::nullopt;
  }
}

Sample sample_for(const ir::OpInfo& info) {
  if (std::optional<Sample> s = sample_for_kind(info.kind)) return *s;
  const bool int_only = info.has(ir::traits::IntOnly);
  auto operand = [&](std::vector<int64_t> shape) {
    return int_only ? i64(std::vector<int64_t>(static_cast<size_t>(shape[0] * shape[1]), 3), shape) : f32(shape);
  };
  switch (info.family) {
    case ir::OpFamily::Unary: return {{operand({2, 3})}, {}};
    case ir::OpFamily::Binary: {
      std::vector<AttrValue> attrs;
      if (info.kind == OpKind::div) attrs.push_back(std::monostate{});
      return {{operand({2, 3}), operand({2, 3})}, attrs};
    }
    case ir::OpFamily::Ternary:
      if (info.kind == OpKind::where)
        return {{make<bool>({true, false, true, false, true, false}, {2, 3}), f32({2, 3}), f32({2, 3})}, {}};
      return {{f32({2, 3}), f32({2, 3}), f32({2, 3})}, {}};
    case ir::OpFamily::Cast:
      if (info.kind == OpKind::convert_element_type) return {{f32({2, 3})}, {kDouble}};
      return {{f32({2, 3})}, {}};
    case ir::OpFamily::Reduction:
      if (info.kind == OpKind::argmax || info.kind == OpKind::argmin) return {{f32({2, 3})}, {int64_t{1}, false}};
      return {{f32({2, 3})}, {std::vector<int64_t>{1}, false}};
    case ir::OpFamily::Scan: return {{f32({2, 3})}, {int64_t{1}}};
    case ir::OpFamily::View:
      switch (ir::as_view(info.kind)) {
        case ir::ViewOp::reshape: return {{f32({2, 3})}, {ir::to_exprs({3, 2})}};
        case ir::ViewOp::expand: return {{f32({1, 3})}, {ir::to_exprs({2, 3})}};
        case ir::ViewOp::permute: return {{f32({2, 3})}, {std::vector<int64_t>{1, 0}}};
        case ir::ViewOp::slice: return {{f32({2, 3})}, {int64_t{1}, Expr(0), Expr(3), Expr(2)}};
        case ir::ViewOp::squeeze: return {{f32({2, 1, 3})}, {std::vector<int64_t>{1}}};
        case ir::ViewOp::unsqueeze: return {{f32({2, 3})}, {int64_t{0}}};
        case ir::ViewOp::diagonal: return {{f32({2, 3})}, {int64_t{0}, int64_t{0}, int64_t{1}}};
        case ir::ViewOp::as_strided: return {{f32({2, 3})}, {ir::to_exprs({2, 2}), ir::to_exprs({3, 1}), Expr(1)}};
      }
      break;
    case ir::OpFamily::Shape:
      if (info.kind == OpKind::cat) return {{f32({2, 3}), f32({1, 3})}, {int64_t{0}}};
      return {{f32({2, 3})}, {std::vector<int64_t>{1, 2}, Scalar(0.5)}};
    case ir::OpFamily::Index: {
      Tensor idx = i64({0, 2, 1, 0}, {2, 2});
      if (info.kind == OpKind::gather) return {{f32({2, 3}), idx}, {int64_t{1}}};
      if (info.kind == OpKind::index_select) return {{f32({2, 3}), i64({2, 0}, {2})}, {int64_t{1}}};
      if (info.kind == OpKind::scatter_reduce) return {{f32({2, 3}), idx, f32({2, 2})}, {int64_t{1}, std::string("amax"), false}};
      return {{f32({2, 3}), idx, f32({2, 2})}, {int64_t{1}}};
    }
    case ir::OpFamily::Factory:
      if (info.kind == OpKind::iota) return {{}, {Expr(4), Scalar(int64_t{2}), Scalar(int64_t{3}), kLong, Device()}};
      return {{}, {ir::to_exprs({2, 2}), Scalar(1.5), kFloat, Device()}};
    case ir::OpFamily::Random: return {{}, {ir::to_exprs({8}), 0.0, 1.0, int64_t{7}, int64_t{0}, kFloat, Device()}};
    case ir::OpFamily::Matmul:
      if (info.kind == OpKind::mm) return {{f32({2, 3}), f32({3, 4})}, {}};
      return {{f32({2, 2, 3}), f32({2, 3, 4})}, {}};
    case ir::OpFamily::Conv:  // [1, 2, 5] * [3, 2, 2] with a bias, stride 2, padding 1
      return {{f32({1, 2, 5}), f32({3, 2, 2}), f32({3})},
              {std::vector<int64_t>{2}, std::vector<int64_t>{1}, std::vector<int64_t>{1}, false, std::vector<int64_t>{0},
               int64_t{1}}};
    case ir::OpFamily::Sort: return {{f32({2, 3})}, {int64_t{1}, true}};  // argsort (sort, topk: below)
    KILN_CASE_COMPOSITE_FAMILIES: break;  // by kind, in sample_for_kind
    case ir::OpFamily::Custom: break;  // none among the built-in ops
  }
  throw InternalError("no sample for " + std::string(info.name) +
                      ": a new op needs one here (docs/adding_an_op.md, step 'Register')");
}

TEST(Registry, EveryOpHasSchemaShapeFunctionAndReferenceImplementation) {
  ASSERT_GT(ir::kNumOps, 100);
  for (int k = 0; k < ir::kNumOps; ++k) {
    const ir::OpInfo& info = ir::op_info(static_cast<OpKind>(k));
    SCOPED_TRACE(std::string(info.name) + " (the checklist for a new op: docs/adding_an_op.md)");
    EXPECT_EQ(info.schema.name, info.name);
    EXPECT_EQ(ir::op_from_name(info.name), info.kind);
    Sample s = sample_for(info);
    ir::AttrList attrs(s.attrs);
    ASSERT_NO_THROW(ir::check_attrs(info.kind, attrs));
    std::vector<ir::TensorType> in_types;
    for (const Tensor& t : s.inputs) in_types.emplace_back(t.dtype(), ir::to_exprs(t.sizes().vec()));
    std::vector<ir::TensorType> types;
    ASSERT_NO_THROW(types = ir::infer_types(info.kind, in_types, attrs));
    ASSERT_EQ(static_cast<int>(types.size()), info.schema.num_outputs);
    // Non-prims have a decomposition; prims have none (they have a reference implementation).
    EXPECT_EQ(has_decomposition(info.kind), info.level != ir::OpLevel::Prim);
    // The interpreter runs prims directly and composites through their decomposition.
    std::vector<Tensor> outs;
    ASSERT_NO_THROW(outs = rt::interpret_op(info.kind, s.inputs, attrs));
    ASSERT_EQ(outs.size(), types.size());
    for (size_t i = 0; i < outs.size(); ++i) {
      EXPECT_EQ(outs[i].dtype(), types[i].dtype);
      EXPECT_EQ(outs[i].sizes().vec(), types[i].static_sizes());
    }
  }
}

TEST(Registry, FamilyEnumsIndexTheirOps) {
  EXPECT_EQ(ir::as_unary(OpKind::abs), ir::UnaryOp::abs);
  EXPECT_EQ(ir::as_binary(OpKind::bitwise_right_shift), ir::BinaryOp::bitwise_right_shift);
  EXPECT_EQ(ir::as_view(OpKind::as_strided), ir::ViewOp::as_strided);
  EXPECT_EQ(ir::as_matmul(OpKind::bmm), ir::MatmulOp::bmm);
  EXPECT_EQ(ir::as_conv(OpKind::convolution), ir::ConvOp::convolution);
  EXPECT_EQ(ir::op_info(OpKind::div).schema.attr_args.at(0).type, ir::ArgType::OptStr);
  EXPECT_TRUE(ir::op_info(OpKind::cat).schema.variadic());
  EXPECT_EQ(ir::as_linear(OpKind::matmul), ir::LinearOp::matmul);
  EXPECT_EQ(ir::as_softmax(OpKind::log_softmax), ir::SoftmaxOp::log_softmax);
  EXPECT_EQ(ir::as_pool(OpKind::max_pool2d_with_indices), ir::PoolOp::max_pool2d_with_indices);
  EXPECT_EQ(ir::op_info(OpKind::gather).family, ir::OpFamily::Index);
  const ir::OpSchema& ln = ir::op_info(OpKind::layer_norm).schema;
  ASSERT_EQ(ln.tensor_args.size(), 3u);
  EXPECT_FALSE(ln.tensor_args[0].optional);
  EXPECT_TRUE(ln.tensor_args[1].optional && ln.tensor_args[2].optional);
  EXPECT_EQ(ln.min_tensor_args(), 1u);
  EXPECT_TRUE(ln.accepts_tensor_count(1) && ln.accepts_tensor_count(3));
  EXPECT_FALSE(ln.accepts_tensor_count(0) || ln.accepts_tensor_count(4));
  EXPECT_EQ(ir::op_info(OpKind::layer_norm).level, ir::OpLevel::Core);
  EXPECT_EQ(ir::op_info(OpKind::linear).level, ir::OpLevel::Composite);
  EXPECT_EQ(ir::op_info(OpKind::exp).level, ir::OpLevel::Prim);
  EXPECT_FALSE(ir::op_from_name("no_such_op").has_value());
}

}  // namespace
}  // namespace kiln
