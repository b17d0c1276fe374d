// kiln/ir/op.h — op kinds, families, traits and parsed schemas, generated from ir/ops.def.
//
// OpKind names every op. Each family also gets its own enum (UnaryOp, BinaryOp, ...) so that
// per-family tables can switch with no `default` and the compiler reports a missing case.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::ir {

enum class OpKind : uint16_t {
#define KILN_OP(name, family, level, traits, schema) name,
#include "ir/ops.def"
};

// Prim families first (Index and Sort also hold the Core ops of their topic, defined by a
// decomposition), then the families whose ops all decompose (frontend/decompositions.h), at
// level Core or Composite, then Custom: an op defined at run time from a schema string
// (ir/custom_ops.h), whose kind is kNumOps or above.
enum class OpFamily : uint8_t {
  Unary, Binary, Ternary, Cast, Reduction, Scan, View, Shape, Index, Factory, Random, Matmul, Conv, Sort,
  Activation, Softmax, Moments, Norm, Linear, Pointwise, Pool, Resample, Attention, Dropout, Rearrange,
  Custom
};
// The families whose ops all decompose (Activation ... Rearrange).
constexpr bool is_composite_family(OpFamily f) { return f >= OpFamily::Activation && f <= OpFamily::Rearrange; }
// The case labels of every composite family, for switches over OpFamily that treat them alike.
#define KILN_CASE_COMPOSITE_FAMILIES                                                              \
  case ::kiln::ir::OpFamily::Activation: case ::kiln::ir::OpFamily::Softmax:                   \
  case ::kiln::ir::OpFamily::Moments: case ::kiln::ir::OpFamily::Norm:                         \
  case ::kiln::ir::OpFamily::Linear: case ::kiln::ir::OpFamily::Pointwise:                     \
  case ::kiln::ir::OpFamily::Pool: case ::kiln::ir::OpFamily::Resample:                        \
  case ::kiln::ir::OpFamily::Attention: case ::kiln::ir::OpFamily::Dropout:                    \
  case ::kiln::ir::OpFamily::Rearrange
enum class OpLevel : uint8_t { Composite, Core, Prim };

// Per-family enums, in ops.def order.
enum class UnaryOp : uint16_t {
#define KILN_UNARY_OP(name, level, traits, schema) name,
#include "ir/ops.def"
};
enum class BinaryOp : uint16_t {
#define KILN_BINARY_OP(name, level, traits, schema) name,
#include "ir/ops.def"
};
enum class TernaryOp : uint16_t {
#define KILN_TERNARY_OP(name, level, traits, schema) name,
#include "ir/ops.def"
};
enum class CastOp : uint16_t {
#define KILN_CAST_OP(name, level, traits, schema) name,
#include "ir/ops.def"
};
enum class ReductionOp : uint16_t {
#define KILN_REDUCTION_OP(name, level, traits, schema) name,
#include "ir/ops.def"
};
enum class ScanOp : uint16_t {
#define KILN_SCAN_OP(name, level, traits, schema) name,
#include "ir/ops.def"
};
enum class ViewOp : uint16_t {
#define KILN_VIEW_OP(name, level, traits, schema) name,
#include "ir/ops.def"
};
enum class ShapeOp : uint16_t {
#define KILN_SHAPE_OP(name, level, traits, schema) name,
#include "ir/ops.def"
};
enum class IndexOp : uint16_t {
#define KILN_INDEX_OP(name, level, traits, schema) name,
#include "ir/ops.def"
};
enum class FactoryOp : uint16_t {
#define KILN_FACTORY_OP(name, level, traits, schema) name,
#include "ir/ops.def"
};
enum class RandomOp : uint16_t {
#define KILN_RANDOM_OP(name, level, traits, schema) name,
#include "ir/ops.def"
};
enum class MatmulOp : uint16_t {
#define KILN_MATMUL_OP(name, level, traits, schema) name,
#include "ir/ops.def"
};
enum class ConvOp : uint16_t {
#define KILN_CONV_OP(name, level, traits, schema) name,
#include "ir/ops.def"
};
enum class SortOp : uint16_t {
#define KILN_SORT_OP(name, level, traits, schema) name,
#include "ir/ops.def"
};
enum class ActivationOp : uint16_t {
#define KILN_ACTIVATION_OP(name, level, traits, schema) name,
#include "ir/ops.def"
};
enum class SoftmaxOp : uint16_t {
#define KILN_SOFTMAX_OP(name, level, traits, schema) name,
#include "ir/ops.def"
};
enum class MomentsOp : uint16_t {
#define KILN_MOMENTS_OP(name, level, traits, schema) name,
#include "ir/ops.def"
};
enum class NormOp : uint16_t {
#define KILN_NORM_OP(name, level, traits, schema) name,
#include "ir/ops.def"
};
enum class LinearOp : uint16_t {
#define KILN_LINEAR_OP(name, level, traits, schema) name,
#include "ir/ops.def"
};
enum class PointwiseOp : uint16_t {
#define KILN_POINTWISE_OP(name, level, traits, schema) name,
#include "ir/ops.def"
};
enum class PoolOp : uint16_t {
#define KILN_POOL_OP(name, level, traits, schema) name,
#include "ir/ops.def"
};
enum class ResampleOp : uint16_t {
#define KILN_RESAMPLE_OP(name, level, traits, schema) name,
#include "ir/ops.def"
};
enum class AttentionOp : uint16_t {
#define KILN_ATTENTION_OP(name, level, traits, schema) name,
#include "ir/ops.def"
};
enum class DropoutOp : uint16_t {
#define KILN_DROPOUT_OP(name, level, traits, schema) name,
#include "ir/ops.def"
};
enum class RearrangeOp : uint16_t {
#define KILN_REARRANGE_OP(name, level, traits, schema) name,
#include "ir/ops.def"
};

// Trait flags (combine with |).
namespace traits {
// Each output element is a function of the inputs' elements at the same (broadcast) index
// alone, wherever it sits: the eager dispatcher may run the op on its inputs' dims in any order
// (frontend/elementwise_layout.h). tril and triu read the index, so they are not.
inline constexpr uint32_t Elementwise = 1u << 0;
inline constexpr uint32_t Commutative = 1u << 1;
inline constexpr uint32_t Reduction = 1u << 2;
inline constexpr uint32_t View = 1u << 3;
inline constexpr uint32_t Random = 1u << 4;
inline constexpr uint32_t Extern = 1u << 5;
inline constexpr uint32_t FloatOnly = 1u << 6;
inline constexpr uint32_t IntOnly = 1u << 7;
inline constexpr uint32_t NoBool = 1u << 8;
inline constexpr uint32_t BoolOut = 1u << 9;
// A Core op defined by its decomposition: its result types are those the decomposition gives
// when traced on the input types (ir/shape_fns.h, install_decomposition_shapes).
inline constexpr uint32_t ShapeByDecomposition = 1u << 10;
// A floating result whose last bits depend on the implementation: the transcendental functions
// (libm, glibc's libmvec, kiln's own f32 code and CUDA's math library differ by a few ulp), and
// rsqrt (CUDA's rsqrt is not correctly rounded; the cpu's 1/sqrt is exact).
// Constant folding leaves such a node to the kernels (runtime/pipeline.cpp), so that a program
// computes each function one way.
inline constexpr uint32_t Approximate = 1u << 11;
}  // namespace traits

enum class ArgType : uint8_t {
  Tensor,
  TensorList,
  Int,
  OptInt,
  IntList,
  Float,
  Bool,
  Str,
  OptStr,
  ScalarType,
  Scalar,
  SymInt,
  SymIntList,
  Device,
};
std::string_view arg_type_name(ArgType t);

struct SchemaArg {
  std::string name;
  ArgType type;
  bool optional = false;  // "Tensor?": the node may omit it (only trailing optional tensors)
  bool is_tensor() const { return type == ArgType::Tensor || type == ArgType::TensorList; }
};

// A parsed schema string: "add(Tensor self, Tensor other) -> Tensor".
struct OpSchema {
  std::string name;
  std::vector<SchemaArg> tensor_args;  // in order; a TensorList, if any, is the only one
  std::vector<SchemaArg> attr_args;    // non-tensor arguments, in order
  int num_outputs = 1;
  bool variadic() const { return tensor_args.size() == 1 && tensor_args[0].type == ArgType::TensorList; }
  // Tensor inputs a node must have: those before the first Tensor? argument.
  size_t min_tensor_args() const;
  // Whether a (non-variadic) node may have `n` tensor inputs: from min_tensor_args() to all.
  bool accepts_tensor_count(size_t n) const { return n >= min_tensor_args() && n <= tensor_args.size(); }
  // Index of the attribute called `name` in attr_args, or -1.
  int attr_index(std::string_view name) const;
};

struct OpInfo {
  OpKind kind;
  std::string_view name;
  OpFamily family;
  OpLevel level;
  uint32_t traits;
  std::string_view schema_text;
  OpSchema schema;      // parsed from schema_text on the op's first op_info()
  uint16_t family_index;  // position inside its family's enum
  bool has(uint32_t t) const { return (traits & t) == t; }
};

inline constexpr int kNumOps = 0
#define KILN_OP(name, family, level, traits, schema) +1
#include "ir/ops.def"
    ;

// The info of a built-in op or of a registered custom op (ir/custom_ops.h).
const OpInfo& op_info(OpKind k);
inline std::string_view op_name(OpKind k) { return op_info(k).name; }
// A built-in op's kind, or a custom op's by its qualified name ("mylib::softclip").
std::optional<OpKind> op_from_name(std::string_view name);
// The built-in op at position `index` of `family` (OpInfo::family_index), found without parsing
// a schema (op_info parses the schema of each op it is asked for).
std::optional<OpKind> family_member(OpFamily family, uint16_t index);
inline bool is_custom(OpKind k) { return static_cast<int>(k) >= kNumOps; }

// Parses a schema string: "name(Tensor a, float t) -> Tensor". A malformed one throws
// kiln::Error "[schema] ... at column N" (columns from 1).
OpSchema parse_schema(std::string_view text);
std::string_view family_name(OpFamily f);
std::string_view level_name(OpLevel l);

// Family enum accessors: valid only when op_info(k).family matches.
inline UnaryOp as_unary(OpKind k) { return static_cast<UnaryOp>(op_info(k).family_index); }
inline BinaryOp as_binary(OpKind k) { return static_cast<BinaryOp>(op_info(k).family_index); }
inline TernaryOp as_ternary(OpKind k) { return static_cast<TernaryOp>(op_info(k).family_index); }
inline CastOp as_cast(OpKind k) { return static_cast<CastOp>(op_info(k).family_index); }
inline ReductionOp as_reduction(OpKind k) { return static_cast<ReductionOp>(op_info(k).family_index); }
inline ScanOp as_scan(OpKind k) { return static_cast<ScanOp>(op_info(k).family_index); }
inline ViewOp as_view(OpKind k) { return static_cast<ViewOp>(op_info(k).family_index); }
inline ShapeOp as_shape(OpKind k) { return static_cast<ShapeOp>(op_info(k).family_index); }
inline IndexOp as_index(OpKind k) { return static_cast<IndexOp>(op_info(k).family_index); }
inline FactoryOp as_factory(OpKind k) { return static_cast<FactoryOp>(op_info(k).family_index); }
inline RandomOp as_random(OpKind k) { return static_cast<RandomOp>(op_info(k).family_index); }
inline MatmulOp as_matmul(OpKind k) { return static_cast<MatmulOp>(op_info(k).family_index); }
inline ConvOp as_conv(OpKind k) { return static_cast<ConvOp>(op_info(k).family_index); }
inline SortOp as_sort(OpKind k) { return static_cast<SortOp>(op_info(k).family_index); }
inline ActivationOp as_activation(OpKind k) { return static_cast<ActivationOp>(op_info(k).family_index); }
inline SoftmaxOp as_softmax(OpKind k) { return static_cast<SoftmaxOp>(op_info(k).family_index); }
inline MomentsOp as_moments(OpKind k) { return static_cast<MomentsOp>(op_info(k).family_index); }
inline NormOp as_norm(OpKind k) { return static_cast<NormOp>(op_info(k).family_index); }
inline LinearOp as_linear(OpKind k) { return static_cast<LinearOp>(op_info(k).family_index); }
inline PointwiseOp as_pointwise(OpKind k) { return static_cast<PointwiseOp>(op_info(k).family_index); }
inline PoolOp as_pool(OpKind k) { return static_cast<PoolOp>(op_info(k).family_index); }
inline ResampleOp as_resample(OpKind k) { return static_cast<ResampleOp>(op_info(k).family_index); }
inline AttentionOp as_attention(OpKind k) { return static_cast<AttentionOp>(op_info(k).family_index); }
inline DropoutOp as_dropout(OpKind k) { return static_cast<DropoutOp>(op_info(k).family_index); }
inline RearrangeOp as_rearrange(OpKind k) { return static_cast<RearrangeOp>(op_info(k).family_index); }

}  // namespace kiln::ir
