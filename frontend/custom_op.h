// kiln/frontend/custom_op.h — ops defined at run time from a schema string.
//
//   kiln::CustomOp softclip = kiln::register_op("mylib::softclip(Tensor x, float t) -> Tensor", {
//       .eager = [](const std::vector<Tensor>& in, const ir::AttrList& a) {
//         const double t = a.get<double>(0);
//         return std::vector<Tensor>{kiln::tanh(in[0] / t) * t}; },
//       .decomposition = ... });              // optional
//   Tensor y = softclip(x, 0.5);              // eager, or one node when x is traced
//
// The op runs its eager implementation on cpu tensors, records one node (printed and parsed
// as "mylib::softclip") when an input is traced, and, compiled, either decomposes (when it
// has a decomposition and the backend's level is below it) or runs as an extern call of its
// eager implementation (no decomposition: cpu plans call it, the interpreter calls it, user
// backends receive the node). The shape function gives output types from input types, with
// symbolic sizes under dynamic shapes; without one, each output has the first input's type.
// Arguments are checked against the schema, and errors name the op.
#pragma once

#include "frontend/decompositions.h"
#include "frontend/tensor.h"
#include "ir/attr.h"
#include "ir/custom_ops.h"
#include "ir/op.h"

#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace kiln {

using CustomKernelFn = std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs, const ir::AttrList& attrs)>;

struct CustomOpDef {
  CustomKernelFn eager{};           // required: the op on cpu tensors
  ir::CustomShapeFn shape{};        // optional: output types (default: the first input's)
  DecompositionFn decomposition{};  // optional: the op written with other ops
};

class CustomOp {
 public:
  CustomOp() = default;
  explicit CustomOp(ir::OpKind kind) : kind_(kind) {}
  ir::OpKind kind() const { return kind_; }
  std::string_view name() const { return ir::op_name(kind_); }

  // The tensors of the schema's tensor arguments, then its other arguments in order
  // (integers, doubles, bools, strings, int lists, ScalarType, Scalar).
  template <typename... A> Tensor operator()(A&&... args) const {
    std::vector<Tensor> ts;
    std::vector<ir::AttrValue> as;
    (collect(ts, as, std::forward<A>(args)), ...);
    std::vector<Tensor> out = call(std::move(ts), std::move(as));
    return std::move(out.at(0));
  }
  // All results; checks the arguments against the schema.
  std::vector<Tensor> call(std::vector<Tensor> inputs, std::vector<ir::AttrValue> attrs) const;

 private:
  template <typename T> static void collect(std::vector<Tensor>& ts, std::vector<ir::AttrValue>& as, T&& v) {
    using D = std::decay_t<T>;
    if constexpr (std::is_same_v<D, Tensor>) ts.push_back(std::forward<T>(v));
    else if constexpr (std::is_same_v<D, bool>) as.emplace_back(v);
    else if constexpr (std::is_integral_v<D>) as.emplace_back(static_cast<int64_t>(v));
    else if constexpr (std::is_floating_point_v<D>) as.emplace_back(static_cast<double>(v));
    else if constexpr (std::is_convertible_v<D, std::string_view>) as.emplace_back(std::string(std::string_view(v)));
    else as.emplace_back(std::forward<T>(v));
  }
  ir::OpKind kind_ = ir::OpKind{};
};

// Registers the op; throws kiln::Error for a malformed schema ("[schema] ... at column N"),
// a name without a namespace or already taken, or a missing eager implementation.
CustomOp register_op(std::string_view schema, CustomOpDef def);

// The eager implementation of custom op `op` on cpu tensors, its results checked against
// the shape function (dispatch's eager path, the interpreter, cpu extern steps).
std::vector<Tensor> run_custom_op(ir::OpKind op, const std::vector<Tensor>& inputs, const ir::AttrList& attrs);

}  // namespace kiln
