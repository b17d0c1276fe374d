// kiln/frontend/custom_op.cpp — registering custom ops and running them eagerly.
#include "frontend/custom_op.h"

#include "base/error.h"
#include "frontend/dispatch.h"
#include "ir/shape_fns.h"

#include <map>
#include <mutex>
#include <shared_mutex>

namespace kiln {

namespace {

struct Kernels {
  std::shared_mutex mu;
  std::map<ir::OpKind, CustomKernelFn> eager;
};
Kernels& kernels() {
  static Kernels* k = new Kernels();
  return *k;
}

// Converts an argument to the schema's type where the conversion is exact (an int for a
// float, a number for a Scalar); anything else is left for check_attrs to report.
ir::AttrValue coerce(ir::AttrValue v, ir::ArgType want) {
  if (want == ir::ArgType::Float) {
    if (const int64_t* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  } else if (want == ir::ArgType::Scalar) {
    if (const int64_t* i = std::get_if<int64_t>(&v)) return Scalar(*i);
    if (const double* d = std::get_if<double>(&v)) return Scalar(*d);
    if (const bool* b = std::get_if<bool>(&v)) return Scalar(*b);
  } else if (want == ir::ArgType::OptInt || want == ir::ArgType::OptStr) {
    return v;
  }
  return v;
}

}  // namespace

CustomOp register_op(std::string_view schema, CustomOpDef def) {
  if (!def.eager) fail("register_op", "'{}' needs an eager implementation (CustomOpDef::eager)", schema);
  const bool decomposes = static_cast<bool>(def.decomposition);
  const ir::OpKind kind =
      ir::register_custom_op(schema, std::move(def.shape), decomposes ? ir::OpLevel::Composite : ir::OpLevel::Prim);
  {
    Kernels& k = kernels();
    std::unique_lock lock(k.mu);
    k.eager.emplace(kind, std::move(def.eager));
  }
  if (decomposes) register_decomposition(kind, std::move(def.decomposition));
  return CustomOp(kind);
}

std::vector<Tensor> CustomOp::call(std::vector<Tensor> inputs, std::vector<ir::AttrValue> attrs) const {
  const ir::OpInfo& info = ir::op_info(kind_);
  if (info.family != ir::OpFamily::Custom) fail("custom op", "this CustomOp was not returned by register_op");
  const std::vector<ir::SchemaArg>& want = info.schema.attr_args;
  for (size_t i = 0; i < attrs.size() && i < want.size(); ++i) attrs[i] = coerce(std::move(attrs[i]), want[i].type);
  if (!info.schema.accepts_tensor_count(inputs.size()))
    fail(info.name, "expected {} tensor argument{} ({}), got {}", info.schema.tensor_args.size(),
         info.schema.tensor_args.size() == 1 ? "" : "s", info.schema_text, inputs.size());
  return dispatch(OpCall{kind_, std::move(inputs), ir::AttrList(std::move(attrs))});
}

std::vector<Tensor> run_custom_op(ir::OpKind op, const std::vector<Tensor>& inputs, const ir::AttrList& attrs) {
  CustomKernelFn fn;
  {
    Kernels& k = kernels();
    std::shared_lock lock(k.mu);
    auto it = k.eager.find(op);
    if (it == k.eager.end()) internal_fail("run_custom_op: {} has no eager implementation", ir::op_name(op));
    fn = it->second;
  }
  const std::string_view name = ir::op_name(op);
  std::vector<Tensor> out = fn(inputs, attrs);
  std::vector<ir::TensorType> in_types;
  for (const Tensor& t : inputs) in_types.emplace_back(t.dtype(), ir::to_exprs(t.sizes().vec()), t.device());
  const std::vector<ir::TensorType> want = ir::infer_types(op, in_types, attrs);
  if (out.size() != want.size())
    fail(name, "the eager implementation returned {} tensors; the schema has {} results", out.size(), want.size());
  for (size_t i = 0; i < out.size(); ++i) {
    if (!out[i].defined()) fail(name, "the eager implementation returned an undefined tensor");
    const ir::TensorType got(out[i].dtype(), ir::to_exprs(out[i].sizes().vec()), out[i].device());
    if (got != want[i])
      fail(name, "the eager implementation returned {} for result {} where the shape function gives {}", got.str(), i,
           want[i].str());
  }
  return out;
}

}  // namespace kiln
