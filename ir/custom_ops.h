// kiln/ir/custom_ops.h — ops defined at run time from a schema string.
//
// A custom op ("mylib::softclip(Tensor x, float t) -> Tensor") gets an OpKind past the
// built-in ones, an OpInfo of family Custom and the shape function its author gives, so
// graphs hold it as one node that prints and parses by its qualified name like any op.
// Its level says what a backend sees: Composite when it has a decomposition (the decompose
// pass expands it unless the backend lowers it itself), Prim with the Extern trait when it
// has none (every backend receives it; the built-in ones call its eager implementation).
// The eager implementation and the decomposition are frontend code and registered there
// (frontend/custom_op.h); this table holds what the IR needs. Registration is thread-safe;
// an op is never unregistered, so OpInfo references stay valid.
#pragma once

#include "ir/attr.h"
#include "ir/op.h"
#include "ir/tensor_type.h"

#include <functional>
#include <optional>
#include <string_view>
#include <vector>

namespace kiln::ir {

// Output types from input types (symbolic sizes allowed) and attributes; throw kiln::Error
// naming the op for bad input. Empty: every output has the type of the first tensor input.
using CustomShapeFn = std::function<std::vector<TensorType>(const std::vector<TensorType>&, const AttrList&)>;

// Registers a custom op; throws kiln::Error "[schema] ... at column N" for a malformed schema
// and "[register_op] ..." for a name without a namespace ("mylib::"), a name already taken, or an op with
// no tensor argument.
OpKind register_custom_op(std::string_view schema, CustomShapeFn shape, OpLevel level);

// nullptr / nullopt when `k` / `name` is not a registered custom op.
const OpInfo* custom_op_info(OpKind k);
std::optional<OpKind> custom_op_from_name(std::string_view name);
const CustomShapeFn& custom_shape_fn(OpKind k);

}  // namespace kiln::ir
