// kiln/ir/shape_fns.cpp — infer_types(): the one entry point to every op's shape function.
//
// It checks what all families share — the number of tensor inputs the schema names and the
// dtype traits of ir/ops.def (FloatOnly, IntOnly, NoBool) — and then switches on the op's
// family to the family's function, ir/shape_fns_<family>.cpp (ir/shape_fns_detail.h). check_attrs()
// validates an attribute list against the schema. Errors name the op: "[exp] ...".
#include "ir/shape_fns.h"

#include "ir/custom_ops.h"

#include "base/error.h"
#include "ir/shape_fns_detail.h"

#include <string>
#include <type_traits>

namespace kiln::ir {

namespace {

using namespace shape_detail;

// Enforces the dtype traits of ops.def (FloatOnly, IntOnly, NoBool) on one input.
void check_dtype_traits(const OpInfo& info, const TensorType& t) {
  const ScalarType dt = t.dtype;
  if (info.has(traits::FloatOnly) && !is_floating_point(dt))
    fail(info.name, "expected a floating point tensor, got {}", dtype_name(dt));
  if (info.has(traits::IntOnly) && info.has(traits::NoBool)) {
    if (!is_integral(dt, /*include_bool=*/false))
      fail(info.name, "expected an integral (non-bool) tensor, got {}", dtype_name(dt));
    return;
  }
  if (info.has(traits::IntOnly) && !is_integral(dt, /*include_bool=*/true))
    fail(info.name, "expected an integral or bool tensor, got {}", dtype_name(dt));
  if (info.has(traits::NoBool) && dt == ScalarType::Bool) fail(info.name, "expected a non-bool tensor, got bool");
}

void check_input_count(const OpInfo& info, const std::vector<TensorType>& inputs) {
  const OpSchema& s = info.schema;
  if (s.variadic()) {
    if (inputs.empty()) fail(info.name, "expected a non-empty list of tensors");
    return;
  }
  if (s.accepts_tensor_count(inputs.size())) return;
  if (s.min_tensor_args() != s.tensor_args.size())
    fail(info.name, "expected {} to {} tensor inputs, got {}", s.min_tensor_args(), s.tensor_args.size(), inputs.size());
  fail(info.name, "expected {} tensor input{}, got {}", s.tensor_args.size(), s.tensor_args.size() == 1 ? "" : "s",
       inputs.size());
}

// "int 3", "none", "str \"x\"": what a mismatched attribute holds, for error messages.
std::string describe(const AttrValue& v) {
  return std::visit(
      [&](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        std::string kind;
        if constexpr (std::is_same_v<T, std::monostate>)
          return "none";
        else if constexpr (std::is_same_v<T, int64_t>)
          kind = "int";
        else if constexpr (std::is_same_v<T, double>)
          kind = "float";
        else if constexpr (std::is_same_v<T, bool>)
          kind = "bool";
        else if constexpr (std::is_same_v<T, std::string>)
          kind = "str";
        else if constexpr (std::is_same_v<T, std::vector<int64_t>>)
          kind = "int[]";
        else if constexpr (std::is_same_v<T, ScalarType>)
          kind = "ScalarType";
        else if constexpr (std::is_same_v<T, Scalar>)
          kind = "Scalar";
        else if constexpr (std::is_same_v<T, Expr>)
          kind = "SymInt";
        else if constexpr (std::is_same_v<T, std::vector<Expr>>)
          kind = "SymInt[]";
        else if constexpr (std::is_same_v<T, Device>)
          kind = "Device";
        else
          static_assert(!sizeof(T), "describe: unhandled attribute type");
        return kind + " " + attr_str(v);
      },
      v);
}

TensorType infer_one(OpKind op, const OpInfo& info, const std::vector<TensorType>& in, const AttrList& attrs) {
  switch (info.family) {
    case OpFamily::Unary: return infer_unary(op, in, attrs);
    case OpFamily::Binary: return infer_binary(op, in, attrs);
    case OpFamily::Ternary: return infer_ternary(op, in, attrs);
    case OpFamily::Cast: return infer_cast(op, in, attrs);
    case OpFamily::Reduction: return infer_reduction(op, in, attrs);
    case OpFamily::Scan: return infer_scan(op, in, attrs);
    case OpFamily::View: return infer_view(op, in, attrs);
    case OpFamily::Shape: return infer_shape(op, in, attrs);
    case OpFamily::Index: return infer_index(op, in, attrs);
    case OpFamily::Factory: return infer_factory(op, in, attrs);
    case OpFamily::Random: return infer_random(op, in, attrs);
    case OpFamily::Matmul: return infer_matmul(op, in, attrs);
    case OpFamily::Conv: return infer_conv(op, in, attrs);
    case OpFamily::Sort: return infer_sort(op, in, attrs);
    case OpFamily::Activation: return infer_activation(op, in, attrs);
    case OpFamily::Softmax: return infer_softmax(op, in, attrs);
    case OpFamily::Moments: return infer_moments(op, in, attrs);
    case OpFamily::Norm: return infer_norm(op, in, attrs);
    case OpFamily::Linear: return infer_linear(op, in, attrs);
    case OpFamily::Pointwise: return infer_pointwise(op, in, attrs);
    case OpFamily::Pool:
    case OpFamily::Resample:
    case OpFamily::Attention:
    case OpFamily::Dropout:
    case OpFamily::Rearrange: break;  // every op shaped by its decomposition (infer_types)
    case OpFamily::Custom: break;  // infer_custom
  }
  internal_fail("infer_types: op {} has an unknown family", info.name);
}

// A custom op's author-given shape function (or: each output like the first input).
std::vector<TensorType> infer_custom(OpKind op, const OpInfo& info, const std::vector<TensorType>& in,
                                     const AttrList& attrs) {
  const CustomShapeFn& fn = custom_shape_fn(op);
  if (!fn) return std::vector<TensorType>(static_cast<size_t>(info.schema.num_outputs), in.at(0));
  std::vector<TensorType> out = fn(in, attrs);
  if (out.size() != static_cast<size_t>(info.schema.num_outputs))
    fail(info.name, "the shape function returned {} types for {} results", out.size(), info.schema.num_outputs);
  return out;
}

}  // namespace

namespace {
DecompositionShapes g_decomposition_shapes = nullptr;
}  // namespace

void install_decomposition_shapes(DecompositionShapes fn) { g_decomposition_shapes = fn; }

std::vector<TensorType> infer_types(OpKind op, const std::vector<TensorType>& inputs, const AttrList& attrs) {
  const OpInfo& info = op_info(op);
  check_input_count(info, inputs);
  for (const TensorType& t : inputs) {
    check_dtype_traits(info, t);
    for (const Expr& s : t.sizes) check_size_nonneg(op, s, "sizes");
  }
  if (info.family == OpFamily::Custom) return infer_custom(op, info, inputs, attrs);
  if (info.has(traits::ShapeByDecomposition)) {
    if (!g_decomposition_shapes) internal_fail("{}: no decomposition shape function is installed", info.name);
    std::vector<TensorType> out = g_decomposition_shapes(op, inputs, attrs);
    if (out.size() != static_cast<size_t>(info.schema.num_outputs))
      internal_fail("{}: the decomposition gives {} results for {}", info.name, out.size(), info.schema.num_outputs);
    return out;
  }
  TensorType out = infer_one(op, info, inputs, attrs);
  if (info.has(traits::BoolOut)) out.dtype = ScalarType::Bool;
  return {std::move(out)};
}

void check_attrs(OpKind op, const AttrList& attrs) {
  const OpInfo& info = op_info(op);
  const std::vector<SchemaArg>& args = info.schema.attr_args;
  if (attrs.size() != args.size())
    fail(info.name, "expected {} attribute{}, got {}", args.size(), args.size() == 1 ? "" : "s", attrs.size());
  for (size_t i = 0; i < args.size(); ++i)
    if (!attr_matches(attrs[i], args[i].type))
      fail(info.name, "attribute '{}' expects {}, got {}", args[i].name, arg_type_name(args[i].type),
           describe(attrs[i]));
}

}  // namespace kiln::ir
